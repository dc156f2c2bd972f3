"""``pedina bench movegen``: perft speed, Pedina against pydraughts on the same work.

For each published perft position, Pedina's perft runs at a depth deep enough
to time well, and at a shallow depth both Pedina and pydraughts (variant
``italian``) run the same perft, so the two speeds and their ratio come from
one run on one machine. pydraughts is an optional test dependency; without it
only Pedina is timed.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import click

from pedina.perft import perft
from pedina.position import START_FEN, Position

#: (name, FEN, Pedina's deep depth, shallow depth that pydraughts also runs).
POSITIONS: tuple[tuple[str, str, int, int], ...] = (
    ("start", START_FEN, 10, 5),
    ("published 1", "W:W30,26,27,22,23,24,17,18,20:B14,15,16,9,11,5,6,1,3", 10, 8),
    ("published 2", "B:W30,21,22,17,20,K6:B25,28,9,5,1,3", 9, 5),
)
#: Smaller depths for a quick look (and the CLI test).
QUICK: dict[str, tuple[int, int]] = {"start": (7, 3), "published 1": (8, 5), "published 2": (6, 3)}
#: Pedina's shallow runs are repeated until they take this long, to time them well.
MIN_SECONDS = 0.5


@dataclass
class Row:
    """One line of the table: the same perft by Pedina and (maybe) pydraughts."""

    position: str
    depth: int
    leaves: int
    seconds: float
    their_leaves: int | None = None
    their_seconds: float | None = None

    @property
    def speed(self) -> float:
        return self.leaves / self.seconds

    @property
    def their_speed(self) -> float | None:
        if self.their_leaves is None or not self.their_seconds:
            return None
        return self.their_leaves / self.their_seconds

    @property
    def ratio(self) -> float | None:
        theirs = self.their_speed
        return self.speed / theirs if theirs else None


def time_perft(position: Position, depth: int, min_seconds: float = 0.0) -> tuple[int, float]:
    """(leaves, seconds per run), repeating the run until ``min_seconds`` have passed."""
    runs = 0
    started = time.perf_counter()
    while True:
        leaves = perft(position, depth)
        runs += 1
        elapsed = time.perf_counter() - started
        if elapsed >= min_seconds:
            return leaves, elapsed / runs


def load_pydraughts() -> Any | None:
    """The ``draughts`` module (pydraughts), or ``None`` when it is not installed."""
    try:
        return importlib.import_module("draughts")
    except ImportError:
        return None


def pydraughts_perft(draughts: Any, fen: str, depth: int) -> int:
    """Perft with pydraughts' game object (its fastest make/unmake path).

    Capture paths with the same start, end and captured pieces are counted once,
    as in Pedina, so the leaf counts agree.
    """
    game = draughts.Board("italian", fen)._game

    def count(plies: int) -> int:
        moves, captures = game.legal_moves()
        distinct: dict[tuple[int, int, frozenset[int]], Any] = {}
        for move, captured in zip(moves, captures):
            key = (move[0][0], move[-1][1], frozenset(c for c in captured if c is not None))
            distinct.setdefault(key, move)
        if plies == 1:
            return len(distinct)
        total = 0
        for move in distinct.values():
            game.push(move)
            total += count(plies - 1)
            game.pop()
        return total

    return count(depth) if depth > 0 else 1


def run_movegen_bench(quick: bool = False, use_pydraughts: bool = True,
              progress: Callable[[str], None] | None = None, min_seconds: float = MIN_SECONDS) -> list[Row]:
    """Time every position; returns the table rows (Pedina's deep run, then the shared one)."""
    say = progress or (lambda text: None)
    draughts = load_pydraughts() if use_pydraughts else None
    rows = []
    for name, fen, deep, shallow in POSITIONS:
        if quick:
            deep, shallow = QUICK[name]
        position = Position.from_fen(fen)
        say(f"{name}: Pedina perft {deep} ...")
        rows.append(Row(name, deep, *time_perft(position, deep)))
        say(f"{name}: Pedina perft {shallow} (repeated for {min_seconds} s) ...")
        row = Row(name, shallow, *time_perft(position, shallow, min_seconds))
        if draughts is not None:
            say(f"{name}: pydraughts perft {shallow} ...")
            started = time.perf_counter()
            row.their_leaves = pydraughts_perft(draughts, fen, shallow)
            row.their_seconds = time.perf_counter() - started
        rows.append(row)
    return rows


def format_table(rows: list[Row]) -> list[str]:
    """The rows as aligned text lines, with a header."""
    lines = [f"{'position':<12} {'depth':>5} {'leaves':>12} {'Pedina s':>9} {'leaves/s':>11} "
             f"{'pydraughts s':>12} {'leaves/s':>9} {'ratio':>7}"]
    for row in rows:
        line = (f"{row.position:<12} {row.depth:>5} {row.leaves:>12,} {row.seconds:>9.3f} "
                f"{row.speed:>11,.0f}")
        if row.their_seconds is not None and row.their_leaves is not None:
            line += f" {row.their_seconds:>12.2f} {row.their_leaves / row.their_seconds:>9,.0f} {row.ratio:>6,.0f}x"
            if row.their_leaves != row.leaves:
                line += f"  (pydraughts counted {row.their_leaves:,})"
        lines.append(line)
    return lines


@click.command()
@click.option("--quick", is_flag=True, help="Small depths: a few seconds instead of about a minute.")
@click.option("--pydraughts/--no-pydraughts", "use_pydraughts", default=True, show_default=True,
              help="Also time pydraughts on the shallow perfts.")
def bench_movegen(quick: bool, use_pydraughts: bool) -> None:
    """Time perft from the published positions, Pedina against pydraughts."""
    if use_pydraughts and load_pydraughts() is None:
        click.echo("note: pydraughts is not installed (pip install pydraughts==0.6.7); timing Pedina only")
        use_pydraughts = False
    rows = run_movegen_bench(quick, use_pydraughts, progress=lambda text: click.echo(text, err=True))
    for line in format_table(rows):
        click.echo(line)
    ratios = [row.ratio for row in rows if row.ratio is not None]
    start = next(row for row in rows if row.position == "start")
    click.echo(f"start position perft {start.depth}: {start.speed:,.0f} leaves/s")
    if ratios:
        click.echo(f"Pedina / pydraughts speed: {min(ratios):,.0f}x to {max(ratios):,.0f}x")
