"""Pedina: an Italian draughts (Dama italiana) engine.

The rules core is :class:`Position` (pieces and side to move), :class:`Move`
(a legal move with its path and captures) and :class:`Board` (a game record),
with :func:`legal_moves`, :func:`parse_move` and the PDN functions
(:func:`read_games`, :func:`write_game`).
"""

from pedina.board import Board, Outcome, Termination
from pedina.move import AmbiguousMoveError, IllegalMoveError, Move, MoveError, format_pdn, legal_moves, parse_move
from pedina.pdn import PdnError, PdnGame, read_game, read_games, write_game
from pedina.perft import perft
from pedina.position import START_FEN, START_HUB, Position, PositionError

__version__ = "0.2.0"

__all__ = [
    "AmbiguousMoveError", "Board", "IllegalMoveError", "Move", "MoveError", "Outcome", "Position",
    "PdnError", "PdnGame", "PositionError", "START_FEN", "Termination", "START_HUB", "format_pdn", "legal_moves",
    "parse_move", "perft", "read_game", "read_games", "write_game",
]
