"""Pedina: an Italian draughts (Dama italiana) engine.

The rules core is :class:`Position` (pieces and side to move), :class:`Move`
(a legal move with its path and captures) and :class:`Board` (a game record),
with :func:`legal_moves`, :func:`parse_move` and the PDN functions
(:func:`read_games`, :func:`write_game`).
"""

from engine.board import Board, Outcome
from engine.move import AmbiguousMoveError, IllegalMoveError, Move, MoveError, format_pdn, legal_moves, parse_move
from engine.pdn import PdnError, PdnGame, read_game, read_games, write_game
from engine.perft import perft
from engine.position import START_FEN, START_HUB, Position, PositionError

__version__ = "0.1.0"

__all__ = [
    "AmbiguousMoveError", "Board", "IllegalMoveError", "Move", "MoveError", "Outcome", "Position",
    "PdnError", "PdnGame", "PositionError", "START_FEN", "START_HUB", "format_pdn", "legal_moves",
    "parse_move", "perft", "read_game", "read_games", "write_game",
]
