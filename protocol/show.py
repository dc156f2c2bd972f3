"""``pedina show``: a position drawn with its square numbers, from the command line or a game."""

from __future__ import annotations

import click

from pedina.board import Board
from pedina.pdn import move_label
from pedina.protocol.analyze import load_subjects


@click.command()
@click.argument("target")
@click.option("--game", "game_number", type=click.IntRange(1), default=None,
              help="The game of a PDN file (or position of a file of positions), counted from 1; default 1.")
@click.option("--ply", type=click.IntRange(0), default=None,
              help="The position after this many plies of the game (0: its start); default: its end.")
@click.option("--flip", is_flag=True, help="Draw the board from Black's side.")
def show(target: str, game_number: int | None, ply: int | None, flip: bool) -> None:
    """Draw TARGET with the square numbers: a FEN or Hub position, or a position of a game of a
    PDN file (or of a file of FEN lines; - reads standard input).

    \b
    Examples:
      pedina show "W:W21-32:B1-12"
      pedina show match.pdn --game 3 --ply 20
    """
    _, subjects = load_subjects(target, game_number)
    subject = subjects[0]
    board = subject.board
    plies = len(board.moves)
    if ply is None:
        ply = plies
    elif ply > plies:
        raise click.BadParameter(f"there is no ply {ply}: the game has {plies}", param_hint="--ply")
    if subject.title:
        click.echo(subject.title + (f", {subject.result}" if subject.result else ""))
    marked: tuple[int, ...] = ()
    if ply:
        move = board.moves[ply - 1]
        marked = (move.start, move.end)
        played = Board(board.positions[ply - 1]).pdn(move)
        click.echo(f"after {move_label(ply - 1, board.start.white_to_move)} {played} (ply {ply} of {plies})")
    position = board.positions[ply]
    click.echo(position.diagram(flip, marked))
    click.echo(f"{'White' if position.white_to_move else 'Black'} to move.  FEN {position.fen()}")
