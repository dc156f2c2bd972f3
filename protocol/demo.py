"""``pedina demo``: the engine plays a short game against itself, drawn move by move."""

from __future__ import annotations

import sys
import time

import click

from pedina.board import Board
from pedina.pdn import move_label, write_game
from pedina.session import Session
from pedina.settings import EngineSettings
from pedina.timeman import Limits
from pedina.protocol.analyze import pdn_line
from pedina.protocol.cli import FiniteRange
from pedina.protocol.engine_options import engine_options
from pedina.protocol.pdnfile import PdnOut
from pedina.scores import for_white, men


#: What the words of a move's line mean, printed once before the game.
LEGEND = """\
Each move's line: the move, then the engine's view of the position before it:
  score  in men (a man is 1.00) from White's side: + is good for White, - for Black
  depth  how many plies (moves of one side) the search looked ahead
  book   the move came from the opening book, without a search
  forced the only legal move (captures are compulsory), played after a short search
  pv     the line the engine expects: this move and the best replies it sees"""

#: Seconds each move stays on a terminal's screen at least, unless told (``--pause``).
WATCHING_PAUSE = 0.8


@click.command()
@click.option("--time", "move_time", type=FiniteRange(0.01, 60), default=0.25, show_default=True,
              help="Longest search a move, in seconds (book and forced moves take less).")
@click.option("--depth", type=click.IntRange(1, 60), default=None, help="Fixed depth per move instead of a time.")
@click.option("--plies", type=click.IntRange(1, 1000), default=200, show_default=True,
              help="Stop after this many plies if the game has not ended.")
@click.option("--board/--no-board", "show_board", default=True, show_default=True,
              help="Draw the board after each move.")
@click.option("--pause", type=FiniteRange(0, 10), default=None,
              help=f"Seconds each move stays shown at least [default: {WATCHING_PAUSE:g} on a terminal, where the "
                   "board is redrawn in place; 0 otherwise].")
@click.option("--pdnout", "pdn_path", type=click.Path(dir_okay=False), default=None,
              help="Append the game to this PDN file when it ends (or is stopped).")
@engine_options()
def demo(move_time: float, depth: int | None, plies: int, show_board: bool, pause: float | None,
         pdn_path: str | None, settings: EngineSettings) -> None:
    """Watch Pedina play a short game against itself."""
    pdnout = PdnOut.open_option(pdn_path)
    board = Board()
    session = Session(settings)
    limits = Limits(depth=depth) if depth is not None else Limits(move_time=move_time)
    live = sys.stdout.isatty()
    per_move = f"to depth {depth}" if depth is not None else f"up to {move_time:g} s"
    heading = f"Pedina plays itself, {per_move} a move (at most {plies} plies; Ctrl-C stops it)."
    screen = _Screen(heading, show_board, live)
    try:
        _play(board, session, limits, plies, screen, pause if pause is not None else WATCHING_PAUSE if live else 0.0)
    except KeyboardInterrupt:
        click.echo(f"Interrupted after {len(board.moves)} plies.")
    finally:
        session.close()
        if pdnout is not None:
            pdnout.write(write_game(board, {"Event": "pedina demo", "Date": time.strftime("%Y.%m.%d"),
                                            "White": "Pedina", "Black": "Pedina"}))
            pdnout.close()
            click.echo(f"Game appended to {pdn_path}.")


class _Screen:
    """What the demo shows: on a terminal, the heading, the legend, the last moves and the board
    redrawn in place after each move; elsewhere (a file, a pipe) every move's line and board in turn."""

    def __init__(self, heading: str, show_board: bool, live: bool) -> None:
        self.heading = heading
        self.show_board = show_board
        self.live = live
        self.lines: list[str] = []
        if not live:
            click.echo(heading)
            click.echo(LEGEND)

    def show(self, board: Board, line: str | None, marked: tuple[int, ...] = ()) -> None:
        if line is not None:
            self.lines.append(line)
        if self.live:
            click.clear()
            click.echo(self.heading)
            click.echo(LEGEND)
            click.echo()
            for earlier in self.lines[-_SHOWN_MOVES:]:
                click.echo(earlier)
        elif line is not None:
            click.echo(line)
        if self.show_board:
            click.echo(board.position.diagram(marked=marked))
            click.echo()


#: The moves a live screen keeps above the board.
_SHOWN_MOVES = 8


def _play(board: Board, session: Session, limits: Limits, plies: int, screen: _Screen, pause: float) -> None:
    """The game, move by move, and how it ended."""
    started = time.perf_counter()
    screen.show(board, None)
    while board.outcome() is None and len(board.moves) < plies:
        shown = time.perf_counter()
        position = board.position
        forced = position.count_moves() == 1
        answer = session.think(board, limits)
        move, result = answer.move, answer.result
        assert move is not None  # the game goes on, so there is a move
        label = move_label(len(board.moves), board.start.white_to_move)
        text = board.pdn(move)
        detail = "forced" if forced else ""
        if result is not None:
            white = for_white(result.score, position.white_to_move)
            pv = pdn_line(position, list(result.pv) or [move])
            note = result.scored().for_white(position.white_to_move).note("White", "Black")
            depth = "book    " if answer.book else f"depth {result.depth:>2}"
            detail = (f"{'forced, ' if forced else ''}score {men(white)}"
                      f"{', ' + note if note else ''}  {depth}  pv {' '.join(pv)}")
        # The move waits out the pause before it is shown: a fast search is then as easy to follow.
        time.sleep(max(0.0, pause - (time.perf_counter() - shown)))
        board.push(move)
        screen.show(board, f"{label:<6} {text:<10} {detail}", (move.start, move.end))
    outcome = board.outcome()
    elapsed = time.perf_counter() - started
    if outcome is None:
        click.echo(f"Stopped after {len(board.moves)} plies ({elapsed:.1f} s): no result (*).")
    elif outcome.winner is None:
        click.echo(f"Draw by {outcome.termination} after {len(board.moves)} plies: {outcome.result()}")
    else:
        winner, loser = ("White", "Black") if outcome.winner else ("Black", "White")
        click.echo(f"{winner} wins after {len(board.moves)} plies ({loser} cannot move): {outcome.result()}")
