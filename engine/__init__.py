"""Pedina: an Italian draughts (Dama italiana) engine.

The rules are those of the Italian federation (FID), written out in the
project's ``docs/rules.md``::

    import pedina

    board = pedina.Board()               # or pedina.Board("W:W21-32:B1-12")
    board.push_text("23-19")
    print(board)                         # the board, with the square numbers
    result = pedina.Searcher().search(board, pedina.Limits(depth=8))
    print(board.pdn(result.best), result.score)

:class:`Position` is a position (pieces and side to move), :class:`Move` a move
as a value, :class:`Board` a game record that knows its end (:meth:`Board.outcome`,
an :class:`Outcome` with its :class:`Termination`). :func:`legal_moves` and
:func:`parse_move` give a position's moves, :func:`read_game`, :func:`read_games`
and :func:`write_game` read and write PDN, :func:`perft` counts move trees, and
:class:`Searcher` searches under :class:`Limits`, reporting :class:`Info` on the
way and a :class:`Result` at the end, with the user's :class:`EngineSettings` (hash
size, threads, lines, skill, endgame tables, book); a :class:`Session` runs searches on a
thread with one :class:`Answer` each, on time (what the adapters use). Bad input raises a :class:`ValueError`
subclass that says what is wrong: :class:`PositionError`, :class:`MoveError`
(:class:`IllegalMoveError`, :class:`AmbiguousMoveError`) or :class:`PdnError`.
"""

import importlib
import importlib.machinery
import importlib.util
import typing

from pedina.board import Board, Outcome, Termination
from pedina.move import AmbiguousMoveError, IllegalMoveError, Move, MoveError, format_pdn, legal_moves, parse_move
from pedina.pdn import PdnError, PdnGame, read_game, read_games, write_game
from pedina.perft import perft
from pedina.position import START_FEN, START_HUB, Position, PositionError
from pedina.timeman import Limits

if typing.TYPE_CHECKING:
    from pedina.search import Info, Result, Searcher
    from pedina.session import Answer, Session
    from pedina.settings import EngineSettings

#: Names whose modules load on first use, so that a rules script or a Hub client never loads the search.
_LAZY = {"Info": "pedina.search", "Result": "pedina.search", "Searcher": "pedina.search",
         "Answer": "pedina.session", "Session": "pedina.session", "EngineSettings": "pedina.settings"}


def build_flavour() -> str:
    """``"compiled"`` when the engine's hot modules run as mypyc-compiled extensions, else ``"pure"``."""
    spec = importlib.util.find_spec("pedina.search")
    origin = spec.origin if spec is not None else None
    return "compiled" if origin and origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)) else "pure"


def __getattr__(name: str) -> typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pedina' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

#: The package version.
__version__ = "0.2.0"

__all__ = [
    "AmbiguousMoveError", "Answer", "Board", "EngineSettings", "IllegalMoveError", "Info", "Limits", "Move", "MoveError", "Outcome",
    "PdnError", "PdnGame", "Position", "PositionError", "Result", "START_FEN", "START_HUB", "Searcher", "Session",
    "Termination", "build_flavour", "format_pdn", "legal_moves", "parse_move", "perft", "read_game", "read_games",
    "write_game",
]
