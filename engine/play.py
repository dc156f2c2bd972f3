"""Games between searchers in one process: openings, one game, a small match.

This is what the strength script, the self-play data generator and the slow
strength tests share; the Hub match runner (``pedina match``) plays engines as
separate processes instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from pedina.board import Board
from pedina.move import Move
from pedina.position import Position
from pedina.search import Limits, Searcher


def openings(plies: int = 3, start: Position | None = None) -> list[list[Move]]:
    """Every move sequence of ``plies`` plies from ``start`` (default: the initial
    position), in move generation order, stopping early at a game end."""
    board = Board(start)
    out: list[list[Move]] = []

    def walk(depth: int) -> None:
        moves = board.legal_moves()
        if depth == 0 or not moves:
            out.append(list(board.moves))
            return
        for move in moves:
            board.push(move)
            walk(depth - 1)
            board.pop()

    walk(plies)
    return out


@dataclass
class Player:
    """A searcher with the limits it plays each move under."""

    searcher: Searcher
    limits: Limits
    name: str = "player"


def play_game(white: Player, black: Player, opening: list[Move], max_plies: int = 200,
              start: Position | None = None,
              on_move: Callable[[Board, Move], None] | None = None) -> tuple[float, Board]:
    """Play one game after the ``opening`` moves; returns (White's score 1/0.5/0, board).

    The game ends by :meth:`Board.outcome`, or as a draw after ``max_plies``.
    """
    board = Board(start)
    for move in opening:
        board.push(move)
    white.searcher.new_game()
    black.searcher.new_game()
    while True:
        outcome = board.outcome()
        if outcome is not None:
            return (0.5 if outcome.winner is None else float(outcome.winner)), board
        if len(board.moves) >= max_plies:
            return 0.5, board
        player = white if board.position.white_to_move else black
        result = player.searcher.search(board, player.limits)
        if result.best is None:  # cannot happen when outcome() said the game goes on
            raise RuntimeError(f"no move found in {board.position.fen()}")
        board.push(result.best)
        if on_move is not None:
            on_move(board, result.best)


@dataclass
class MatchResult:
    """Games from the first player's point of view."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    scores: list[float] = field(default_factory=list)

    @property
    def games(self) -> int:
        return len(self.scores)

    @property
    def score(self) -> float:
        """Mean score per game, 0..1."""
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def error(self) -> float:
        """Half-width of the 95% confidence interval of :attr:`score` (normal approximation)."""
        n = len(self.scores)
        if n < 2:
            return 1.0
        mean = self.score
        variance = sum((s - mean) ** 2 for s in self.scores) / (n - 1)
        return 1.96 * math.sqrt(variance / n)

    def elo(self) -> tuple[float, float, float]:
        """Elo difference with its 95% interval (clamped away from 0% and 100%)."""
        def to_elo(p: float) -> float:
            p = min(max(p, 0.001), 0.999)
            return -400.0 * math.log10(1.0 / p - 1.0)
        return to_elo(self.score), to_elo(self.score - self.error), to_elo(self.score + self.error)

    def add(self, score: float) -> None:
        self.scores.append(score)
        if score == 1.0:
            self.wins += 1
        elif score == 0.0:
            self.losses += 1
        else:
            self.draws += 1

    def summary(self) -> str:
        elo, low, high = self.elo()
        return (f"{self.games} games  +{self.wins} ={self.draws} -{self.losses}  "
                f"score {100 * self.score:.1f}% +- {100 * self.error:.1f}%  "
                f"Elo {elo:+.0f} [{low:+.0f}, {high:+.0f}]")


def play_match(first: Player, second: Player, opening_list: list[list[Move]], max_plies: int = 200,
               on_game: Callable[[int, float, Board], None] | None = None) -> MatchResult:
    """Each opening twice, colours swapped; scores are ``first``'s."""
    result = MatchResult()
    for opening in opening_list:
        for first_is_white in (True, False):
            white, black = (first, second) if first_is_white else (second, first)
            white_score, board = play_game(white, black, opening, max_plies)
            score = white_score if first_is_white else 1.0 - white_score
            result.add(score)
            if on_game is not None:
                on_game(result.games, score, board)
    return result
