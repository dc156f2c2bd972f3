"""``pedina demo``: the engine plays a short game against itself, drawn move by move."""

from __future__ import annotations

import time

import click

from pedina.board import Board
from pedina.session import Session
from pedina.timeman import Limits
from pedina.protocol.analyze import move_label, pdn_line


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
def demo(move_time: float, depth: int | None, plies: int, show_board: bool, pause: float) -> None:
    """Watch Pedina play a short game against itself."""
    board = Board()
    engine = Session(hash_mb=16)
    limits = Limits(depth=depth) if depth is not None else Limits(move_time=move_time)
    per_move = f"depth {depth}" if depth is not None else f"{move_time:g} s"
    click.echo(f"Pedina plays itself, {per_move} a move (at most {plies} plies).")
    if show_board:
        click.echo(board.position.diagram())
    started = time.perf_counter()
    while board.outcome() is None and len(board.moves) < plies:
        position = board.position
        forced = position.count_moves() == 1
        answer = engine.think(board, limits)
        move, result = answer.move, answer.result
        assert move is not None  # the game goes on, so there is a move
        label = move_label(len(board.moves), board.start.white_to_move)
        text = board.pdn(move)
        if forced or result is None:
            detail = "forced" if forced else ""
        else:
            white = result.score if position.white_to_move else -result.score
            pv = pdn_line(position, list(result.pv) or [move])
            detail = f"score {white / 100:+.2f} (White's view)  depth {result.depth:>2}  pv {' '.join(pv)}"
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
