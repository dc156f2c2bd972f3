"""Games between searchers in this process: one game, a small match over paired openings, and
the self-play games of the tuning data.

This is what the strength script, the self-play data generator and the slow
strength tests share; ``pedina match`` plays engines as separate processes
instead. Both score with :mod:`pedina.protocol.match.stats`. A self-play game
depends only on its seed and number (:func:`numbered_selfplay_game`), so it can
be played anywhere, e.g. as a task on a Dask worker that has Pedina installed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from pedina.board import Board
from pedina.evaluate import Evaluator, default_evaluator
from pedina.settings import EngineSettings
from pedina.move import Move
from pedina.movegen import generate_captures
from pedina.position import Position
from pedina.protocol.match.stats import EloEstimate, elo_estimate
from pedina.search import Searcher
from pedina.session import Session
from pedina.squares import BOARD
from pedina.timeman import Limits

#: Self-play games still going after this many plies are draws.
SELFPLAY_MAX_PLIES = 200


@dataclass
class Player:
    """A search session with the limits it plays each move under."""

    session: Session
    limits: Limits
    name: str = "player"


def choose_move(player: Player, board: Board) -> Move:
    """The move ``player`` plays in ``board``, whose game is not over."""
    move = player.session.think(board, player.limits).move
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
    white.session.new_game()
    black.session.new_game()
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


def is_quiet(board: Board) -> bool:
    """Neither side has a capture."""
    p = board.position
    empty = BOARD ^ p.white ^ p.black
    return not (generate_captures(p.white, p.black, p.kings, True, empty)
                or generate_captures(p.black, p.white, p.kings, False, empty))


def selfplay_game(rng: random.Random, player: Player) -> tuple[list[str], float]:
    """One game of ``player`` against itself; returns (quiet FENs from ply 8 on, White's score).

    The game starts with 4 to 8 random moves drawn from ``rng``, which also gives a 5% chance
    of a random move in each of the first 30 plies; it ends by the rules or as a draw after
    :data:`SELFPLAY_MAX_PLIES` plies.
    """
    board = Board()
    player.session.new_game()
    for _ in range(rng.randint(4, 8)):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))
    fens: list[str] = []
    while True:
        outcome = board.outcome()
        if outcome is not None:
            score = 0.5 if outcome.winner is None else float(outcome.winner)
            break
        if len(board.moves) >= SELFPLAY_MAX_PLIES:
            score = 0.5
            break
        if len(board.moves) >= 8 and is_quiet(board):
            fens.append(board.position.fen())
        moves = board.legal_moves()
        if len(board.moves) < 30 and rng.random() < 0.05:
            board.push(rng.choice(moves))
        else:
            board.push(choose_move(player, board))
    return fens, score


def numbered_selfplay_game(seed: int, number: int, depth: int, shipped: bool = False) -> tuple[list[str], float]:
    """Game ``number`` of the self-play run ``seed``: :func:`selfplay_game` with its own random
    generator (seeded by ``seed`` and ``number``) and a fresh searcher to ``depth`` with the
    hand-set evaluation (``shipped``: the evaluation the engine plays with) and no opening book,
    so the game is the same wherever and in whatever order it is played."""
    evaluator = default_evaluator() if shipped else Evaluator()
    settings = EngineSettings(hash_mb=16, egdb_path="", book=False)
    session = Session(settings, searcher_factory=lambda chosen: Searcher(chosen, evaluator=evaluator))
    player = Player(session, Limits(depth=depth))
    return selfplay_game(random.Random(f"selfplay {seed} {number}"), player)
