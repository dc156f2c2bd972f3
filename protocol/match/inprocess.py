"""Games between searchers in this process: one game, and a small match over paired openings.

This is what the strength script, the self-play data generator and the slow
strength tests share; ``pedina match`` plays engines as separate processes
instead. Both score with :mod:`pedina.protocol.match.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from pedina.board import Board
from pedina.move import Move
from pedina.position import Position
from pedina.protocol.match.stats import EloEstimate, elo_estimate
from pedina.session import Session
from pedina.timeman import Limits


@dataclass
class Player:
    """A search session with the limits it plays each move under."""

    engine: Session
    limits: Limits
    name: str = "player"


def choose_move(player: Player, board: Board) -> Move:
    """The move ``player`` plays in ``board``, whose game is not over."""
    move = player.engine.think(board, player.limits).move
    if move is None:  # cannot happen while the side to move has a legal move
        raise RuntimeError(f"no move found in {board.position.fen()}")
    return move


def play_searcher_game(white: Player, black: Player, opening: list[Move], max_plies: int = 200,
                       start: Position | None = None,
                       on_move: Callable[[Board, Move], None] | None = None) -> tuple[float, Board]:
    """Play one game after the ``opening`` moves; returns (White's score 1/0.5/0, board).

    The game ends by :meth:`Board.outcome`, or as a draw after ``max_plies``.
    ``on_move`` is called after each move the players choose.
    """
    board = Board(start)
    for move in opening:
        board.push(move)
    white.engine.new_game()
    black.engine.new_game()
    while True:
        outcome = board.outcome()
        if outcome is not None:
            return (0.5 if outcome.winner is None else float(outcome.winner)), board
        if len(board.moves) >= max_plies:
            return 0.5, board
        move = choose_move(white if board.position.white_to_move else black, board)
        board.push(move)
        if on_move is not None:
            on_move(board, move)


def play_searcher_match(first: Player, second: Player, opening_list: list[list[Move]], max_plies: int = 200,
                        on_game: Callable[[int, float, Board], None] | None = None) -> EloEstimate:
    """Each opening twice, colours swapped; ``first``'s wins, draws and losses with their Elo.

    ``on_game`` is called after each game with its number (from 1), ``first``'s score and the board.
    """
    counts = [0, 0, 0]  # first's wins, draws, losses
    for opening in opening_list:
        for first_is_white in (True, False):
            white, black = (first, second) if first_is_white else (second, first)
            white_score, board = play_searcher_game(white, black, opening, max_plies)
            score = white_score if first_is_white else 1.0 - white_score
            counts[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
            if on_game is not None:
                on_game(sum(counts), score, board)
    wins, draws, losses = counts
    return elo_estimate(wins, draws, losses)
