"""``pedina demo``: the engine plays a short game against itself, drawn move by move."""

from __future__ import annotations

import time

import click

from pedina.board import Board
from pedina.pdn import move_label, write_game
from pedina.session import Session
from pedina.timeman import Limits
from pedina.protocol.analyze import pdn_line
from pedina.protocol.egdb_command import egdb_option, open_egdb
from pedina.protocol.pdnfile import PdnOut
from pedina.scores import Score, for_white, men


@click.command()
@click.option("--time", "move_time", type=click.FloatRange(0.01, 60), default=0.25, show_default=True,
              help="Seconds per move.")
@click.option("--depth", type=click.IntRange(1, 60), default=None, help="Fixed depth per move instead of a time.")
@click.option("--plies", type=click.IntRange(1, 1000), default=200, show_default=True,
              help="Stop after this many plies if the game has not ended.")
@click.option("--board/--no-board", "show_board", default=True, show_default=True,
              help="Draw the board after each move.")
@click.option("--pause", type=click.FloatRange(0, 10), default=0.0, show_default=True,
              help="Extra seconds to wait after each move, to watch.")
@click.option("--pdnout", "pdn_path", type=click.Path(dir_okay=False), default=None,
              help="Append the game to this PDN file when it ends (or is stopped).")
@egdb_option
def demo(move_time: float, depth: int | None, plies: int, show_board: bool, pause: float,
         pdn_path: str | None, egdb_dir: str | None, no_egdb: bool) -> None:
    """Watch Pedina play a short game against itself."""
    egdb = open_egdb(egdb_dir, no_egdb)
    pdnout = PdnOut.open_option(pdn_path)
    board = Board()
    engine = Session(hash_mb=16)
    engine.use_database(egdb)
    limits = Limits(depth=depth) if depth is not None else Limits(move_time=move_time)
    per_move = f"depth {depth}" if depth is not None else f"{move_time:g} s"
    click.echo(f"Pedina plays itself, {per_move} a move (at most {plies} plies).")
    if show_board:
        click.echo(board.position.diagram())
    try:
        _play(board, engine, limits, plies, show_board, pause)
    except KeyboardInterrupt:
        click.echo(f"Interrupted after {len(board.moves)} plies.")
    finally:
        if pdnout is not None:
            pdnout.write(write_game(board, {"Event": "pedina demo", "Date": time.strftime("%Y.%m.%d"),
                                            "White": "Pedina", "Black": "Pedina"}))
            pdnout.close()
            click.echo(f"Game appended to {pdn_path}.")


def _play(board: Board, engine: Session, limits: Limits, plies: int, show_board: bool, pause: float) -> None:
    """The game, move by move, and how it ended."""
    started = time.perf_counter()
    while board.outcome() is None and len(board.moves) < plies:
        position = board.position
        forced = position.count_moves() == 1
        answer = engine.think(board, limits)
        move, result = answer.move, answer.result
        assert move is not None  # the game goes on, so there is a move
        label = move_label(len(board.moves), board.start.white_to_move)
        text = board.pdn(move)
        detail = "forced" if forced else ""
        if result is not None:
            white = for_white(result.score, position.white_to_move)
            pv = pdn_line(position, list(result.pv) or [move])
            note = Score.of(white).note("White", "Black")
            depth = "book    " if answer.book else f"depth {result.depth:>2}"
            detail = (f"{'forced, ' if forced else ''}score {men(white)} (White's view)"
                      f"{', ' + note if note else ''}  {depth}  pv {' '.join(pv)}")
        board.push(move)
        click.echo(f"{label:<6} {text:<10} {detail}")
        if show_board:
            click.echo(board.position.diagram(marked=(move.start, move.end)))
            click.echo()
        if pause:
            time.sleep(pause)
    outcome = board.outcome()
    elapsed = time.perf_counter() - started
    if outcome is None:
        click.echo(f"Stopped after {len(board.moves)} plies ({elapsed:.1f} s): no result (*).")
    elif outcome.winner is None:
        click.echo(f"Draw by {outcome.termination} after {len(board.moves)} plies: {outcome.result()}")
    else:
        winner, loser = ("White", "Black") if outcome.winner else ("Black", "White")
        click.echo(f"{winner} wins after {len(board.moves)} plies ({loser} cannot move): {outcome.result()}")
