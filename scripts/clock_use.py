"""How much of its clock each engine of a match used: ``python scripts/clock_use.py games.pdn``.

Reads the games a ``pedina match --pdnout`` wrote: the ``TimeControl`` tag (``10+0.1``, or
``40/60+1`` for 60 s every 40 moves; a game at a time a move or a depth is left out) and the
time that ends each move's comment (``{+0.11/11 0.122s}``, ``{book 0.001s}``).
A move with no time (the opening's) is not the engine's and is left out. For each engine: its
games, its timed moves a game, its time a move, and the share of its clock left when the game
ended (every session's base and every increment it was given, less what it used), on average and at the
least: what the time manager is tuned on (see ``pedina/timeman.py``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import click

from pedina.pdn import PdnError, read_games
from pedina.protocol.match.options import MatchError, parse_tc

_MOVE_TIME = re.compile(r"(\d+(?:\.\d+)?)s$")


@dataclass
class ClockUse:
    """One engine's moves and time over the games read, and the share of its clock left at the
    end of each."""

    games: int = 0
    moves: int = 0
    used: float = 0.0
    left: list[float] = field(default_factory=list)


def clock_use(text: str) -> dict[str, ClockUse]:
    """Each engine's :class:`ClockUse` over the games of ``text`` that were played on a clock."""
    engines: dict[str, ClockUse] = {}
    for game in read_games(text):
        try:
            base, inc, session = parse_tc(game.headers.get("TimeControl", ""))
        except MatchError:
            continue
        names = {True: game.headers.get("White", "White"), False: game.headers.get("Black", "Black")}
        moves = {True: 0, False: 0}
        used = {True: 0.0, False: 0.0}

        for ply, comment in enumerate(game.comments):
            spent = _MOVE_TIME.search(comment.strip("{} "))
            if spent is not None:
                white = game.board.positions[ply].white_to_move
                moves[white] += 1
                used[white] += float(spent.group(1))

        for white, name in names.items():
            if moves[white] == 0:
                continue
            use = engines.setdefault(name, ClockUse())
            given = base * (math.ceil(moves[white] / session) if session else 1) + inc * moves[white]
            use.games += 1
            use.moves += moves[white]
            use.used += used[white]
            use.left.append(max(0.0, given - used[white]) / given)
    return engines


@click.command()
@click.argument("pdn", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def main(pdn: Path) -> None:
    """Print each engine's use of its clock over the games of PDN."""
    try:
        engines = clock_use(pdn.read_text(encoding="utf-8", errors="replace"))
    except PdnError as error:
        raise click.ClickException(f"{pdn}: {error}") from None
    if not engines:
        raise click.ClickException(f"{pdn}: no game on a clock (a TimeControl tag such as 10+0.1) with move times")
    click.echo(f"{'engine':<20} {'games':>6} {'moves a game':>13} {'time a move':>12} {'clock left':>11} {'least':>7}")
    for name, use in engines.items():
        click.echo(f"{name:<20} {use.games:>6} {use.moves / use.games:>13.1f} {use.used / use.moves:>11.3f}s"
                   f" {100 * sum(use.left) / len(use.left):>10.1f}% {100 * min(use.left):>6.1f}%")


if __name__ == "__main__":
    main()
