"""``pedina analyze``: evaluation and principal variation of a position or of every move of a game.

The target is a FEN or Hub position, or a PDN file (one of its games, the first
unless ``--game`` says otherwise: every position before a move, and the final
one). Text output is a table, printed row by row as the work goes; ``--json``
prints one JSON document for scripts.
Scores are in men: ``score`` from the side to move's point of view, ``white``
from White's; a proven win in N plies shows as ``100 - N/100`` (``99.97``).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

import click

from pedina.board import Board
from pedina.move import Move
from pedina.pdn import PdnError, read_game
from pedina.position import Position, PositionError
from pedina.search import WIN_THRESHOLD, Info
from pedina.session import Session
from pedina.timeman import Limits


@dataclass
class Line:
    """One analysed line: its rank, score (side to move's view), depth, work and moves."""

    multipv: int
    score: int
    depth: int
    nodes: int
    time: float
    pv: list[Move]


def pdn_line(position: Position, moves: list[Move]) -> list[str]:
    """The moves of a line from ``position`` in PDN text."""
    texts = []
    board = Board(position)
    for move in moves:
        texts.append(board.pdn(move))
        board.push(move)
    return texts


def analyse(session: Session, board: Board, limits: Limits) -> list[Line]:
    """The best lines of ``board``'s position (as many as ``session.multipv``), best first."""
    latest: dict[int, Info] = {}

    def on_info(info: Info) -> None:
        latest[info.multipv] = info

    result = session.think(board, limits, on_info).result
    lines = [Line(i.multipv, i.score, i.depth, i.nodes, i.time, list(i.pv)) for _, i in sorted(latest.items())]
    if result is not None and result.best is not None and (not lines or lines[0].pv[:1] != [result.best]):
        # The result is the authority for the main line (e.g. a search stopped mid-iteration).
        main = Line(1, result.score, result.depth, result.nodes, result.time, list(result.pv) or [result.best])
        lines = [main] + [line for line in lines if line.multipv != 1]
    return lines


def move_label(ply: int, start_white: bool) -> str:
    """``12.`` before White's move, ``12...`` before Black's, counting from the start position."""
    white_to_move = (ply % 2 == 0) == start_white
    number = (ply + (0 if start_white else 1)) // 2 + 1
    return f"{number}." if white_to_move else f"{number}..."


def score_men(score: int) -> str:
    return f"{score / 100:+.2f}"


def win_note(score: int) -> str:
    """``win in N`` / ``loss in N`` plies for proven scores, else empty."""
    if abs(score) < WIN_THRESHOLD:
        return ""
    plies = 10000 - abs(score)
    return f"win in {plies}" if score > 0 else f"loss in {plies}"


def line_json(position: Position, line: Line) -> dict[str, object]:
    white_score = line.score if position.white_to_move else -line.score
    pv = pdn_line(position, line.pv)
    return {"multipv": line.multipv, "move": pv[0] if pv else None, "score": round(line.score / 100, 2),
            "white": round(white_score / 100, 2), "proven": win_note(line.score) or None, "depth": line.depth,
            "nodes": line.nodes, "time": round(line.time, 3), "pv": pv}


def load_target(target: str, game_number: int = 1) -> tuple[Board, dict[str, str], str | None]:
    """A board to analyse (game ``game_number``'s record, or one position), the PDN tags, and the result.

    Raises :class:`click.BadParameter` when ``target`` is neither a readable PDN
    file nor a FEN or Hub position.
    """
    if os.path.isfile(target):
        try:
            with open(target, encoding="utf-8", errors="replace") as handle:
                game = read_game(handle.read(), game_number)
        except (OSError, PdnError) as error:
            raise click.BadParameter(f"{target}: {error}", param_hint="TARGET") from None
        return game.board, dict(game.headers), game.result
    try:
        return Board(Position.parse(target)), {}, None
    except PositionError as error:
        raise click.BadParameter(f"{target!r} is not a PDN file, FEN or Hub position ({error})",
                                 param_hint="TARGET") from None


def _row(ply: str, played: str, position: Position, line: Line | None) -> str:
    if line is None:
        mover = "White" if position.white_to_move else "Black"
        return f"{ply:>5}  {played:<12} {'':>7} {'':>5}  (no legal moves: {mover} loses)"
    white = line.score if position.white_to_move else -line.score
    pv = pdn_line(position, line.pv)
    note = win_note(line.score)
    return (f"{ply:>5}  {played:<12} {score_men(white):>7} {line.depth:>5}  {pv[0] if pv else '-':<12} "
            f"{' '.join(pv)}{'  (' + note + ')' if note else ''}")


def run_analysis(target: str, limits: Limits, multipv: int, as_json: bool, hash_mb: int,
                 game_number: int = 1) -> None:
    game, headers, result = load_target(target, game_number)
    session = Session(hash_mb=hash_mb)
    session.configure(multipv=multipv)
    is_game = result is not None
    plies = range(len(game.moves) + 1)  # every position before a move, and the last one
    board = Board(game.start)  # replayed move by move, so the search sees the game's history
    reports: list[dict[str, object]] = []
    if not as_json:
        click.echo(f"{'ply':>5}  {'played':<12} {'white':>7} {'depth':>5}  {'best':<12} pv")
    for ply in plies:
        position = board.position
        lines = analyse(session, board, limits) if position.count_moves() else []
        played = ""
        if ply < len(game.moves):
            played = board.pdn(game.moves[ply])
        label = move_label(ply, game.start.white_to_move)
        if as_json:
            reports.append({"ply": ply, "fen": position.fen(), "hub": position.hub(),
                            "to_move": "white" if position.white_to_move else "black",
                            "played": played or None, "lines": [line_json(position, line) for line in lines]})
            if sys.stderr.isatty():
                click.echo(f"\ranalysed {ply + 1}/{len(plies)}", nl=False, err=True)
        else:
            click.echo(_row(label, played, position, lines[0] if lines else None))
            for line in lines[1:]:
                click.echo(_row("", f"  #{line.multipv}", position, line))
        if ply < len(game.moves):
            board.push(game.moves[ply])
    if as_json:
        if sys.stderr.isatty():
            click.echo(err=True)
        document: dict[str, object] = {"limits": {"depth": limits.depth, "time": limits.move_time},
                                       "multipv": multipv}
        if is_game:
            document.update({"headers": headers, "result": result, "positions": reports})
        else:
            document.update(reports[0])
        click.echo(json.dumps(document, indent=2))
    elif is_game:
        click.echo(f"result {result}")


@click.command()
@click.argument("target")
@click.option("--depth", type=click.IntRange(1, 60), default=None, help="Search depth per position.")
@click.option("--time", "move_time", type=click.FloatRange(0.01, 3600), default=None,
              help="Seconds per position (default 1 when no depth is given).")
@click.option("--multipv", type=click.IntRange(1, 32), default=1, show_default=True,
              help="How many best lines to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--game", "game_number", type=click.IntRange(1), default=1, show_default=True,
              help="Which game of a PDN file to analyse (counted from 1).")
@click.option("--hash", "hash_mb", type=click.IntRange(1, 4096), default=32, show_default=True,
              help="Hash table size in MB.")
def analyze(target: str, depth: int | None, move_time: float | None, multipv: int, as_json: bool,
            game_number: int, hash_mb: int) -> None:
    """Evaluate TARGET: a FEN or Hub position, or every move of a game of a PDN file.

    \b
    Examples:
      pedina analyze "W:W21-32:B1-12" --depth 8 --multipv 3
      pedina analyze game.pdn --time 0.5 --json
      pedina analyze match.pdn --game 17 --depth 6
    """
    if depth is not None and move_time is not None:
        raise click.UsageError("give --depth or --time, not both")
    limits = Limits(depth=depth) if depth is not None else Limits(move_time=move_time or 1.0)
    run_analysis(target, limits, multipv, as_json, hash_mb, game_number)
