"""Moves as values, and their text forms: Hub, PDN and full path.

- Hub text: ``23-19`` for a step; ``22x15x19`` for a capture, start ``x`` end, then
  every captured square (ascending on output, any order on input).
- PDN text: ``23-19`` / ``22x13``; the landing squares are written only when another
  legal move shares start and end (``22x13x6x15x22`` style, see :func:`format_pdn`).
- Path text: every landing square, ``22x13x6``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from pedina.movegen import RawMove
from pedina.squares import BIT_SQUARE, SQUARE_BIT

if TYPE_CHECKING:
    from pedina.position import Position


class MoveError(ValueError):
    """A move text cannot be read, or a move or move text is no legal move of its position."""


class IllegalMoveError(MoveError):
    """The move, or the well-formed move text, matches no legal move of the position."""


class AmbiguousMoveError(MoveError):
    """The move text matches more than one legal move."""


class Move:
    """A move as a value: the start square and the landing squares, in order.

    ``Move(22, (15,))`` is the step or jump from 22 to 15 (a jump when the squares
    are two diagonal steps apart), ``Move(31, (24, 15, 8))`` a capture sequence.
    ``start`` and ``end`` are square numbers (equal for a ring capture by a
    king), ``path`` the landing squares (``(end,)`` for a step) and ``captured``
    the jumped squares in the order they were jumped (empty for a step).

    A move does not know its position: :func:`legal_moves`, :func:`parse_move`
    and :meth:`pedina.Board.parse_move` give the legal ones, and
    :meth:`pedina.Position.play` refuses the others. Moves compare equal when
    start, end and the set of captured squares agree, because those give the
    same position whatever the order of the jumps.

    Raises :class:`ValueError` when a square is not between 1 and 32 or the
    path is neither one diagonal step nor a chain of diagonal jumps.
    """

    __slots__ = ("start", "end", "path", "captured")

    def __init__(self, start: int, path: Iterable[int]) -> None:
        landings = tuple(path)
        if not landings:
            raise ValueError(f"a move from {start!r} needs at least one landing square")
        for square in (start, *landings):
            if not isinstance(square, int) or not 1 <= square <= 32:
                raise ValueError(f"square {square!r} is not between 1 and 32")
        if len(landings) == 1 and _is_step(start, landings[0]):
            captured: tuple[int, ...] = ()
        else:
            jumped = _jumped(start, landings)
            if jumped is None:
                hops = "x".join(str(square) for square in (start, *landings))
                raise ValueError(f"{hops} is neither a diagonal step nor a chain of diagonal jumps")
            captured = jumped
        self.start = start
        self.end = landings[-1]
        self.path = landings
        self.captured = captured

    @classmethod
    def _from_raw(cls, raw: RawMove) -> Move:
        """The move a movegen tuple makes (the search works on those)."""
        frm, to, _, _, path = raw
        return cls(BIT_SQUARE[frm], [BIT_SQUARE[bit] for bit in path] if path else (BIT_SQUARE[to],))

    @property
    def is_capture(self) -> bool:
        """Whether the move jumps at least one piece."""
        return bool(self.captured)

    def hub(self) -> str:
        """Hub text: ``23-19`` or ``22x15x19`` (captured squares ascending)."""
        if not self.captured:
            return f"{self.start}-{self.end}"
        return "x".join(str(s) for s in (self.start, self.end, *sorted(self.captured)))

    def full_path(self) -> str:
        """Text with every landing square: ``23-19`` or ``22x13x6``."""
        if not self.captured:
            return f"{self.start}-{self.end}"
        return "x".join(str(s) for s in (self.start, *self.path))

    def _identity(self) -> tuple[int, int, frozenset[int]]:
        return (self.start, self.end, frozenset(self.captured))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Move) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __str__(self) -> str:
        return self.hub()

    def __repr__(self) -> str:
        return f"Move({self.start}, {self.path!r})"


def _is_step(start: int, end: int) -> bool:
    """Whether ``end`` is a diagonal neighbour of ``start`` (in the ghost layout of
    :mod:`pedina.squares`, a shift of 4 or 5 bits between two squares)."""
    return abs(SQUARE_BIT[end].bit_length() - SQUARE_BIT[start].bit_length()) in (4, 5)


def _jumped(start: int, landings: Sequence[int]) -> tuple[int, ...] | None:
    """Squares jumped by a chain of landing squares, in order, or ``None`` if a hop
    is not a jump (two steps in one direction, over a square of the board)."""
    jumped = []
    here = SQUARE_BIT[start]
    for square in landings:
        landing = SQUARE_BIT[square]
        distance = landing.bit_length() - here.bit_length()
        if abs(distance) not in (8, 10):
            return None
        victim = here << distance // 2 if distance > 0 else here >> -distance // 2
        if victim not in BIT_SQUARE:
            return None
        jumped.append(BIT_SQUARE[victim])
        here = landing
    return tuple(jumped)


def legal_moves(position: Position) -> list[Move]:
    """All legal moves of ``position``, in move generation order."""
    return [Move._from_raw(raw) for raw in position._raw_moves()]


def format_pdn(move: Move, moves: list[Move]) -> str:
    """PDN text of ``move`` among the legal ``moves`` of its position: the landing
    squares are written only when another of them shares start and end.

    :meth:`pedina.Board.pdn` does this for the current position of a game.
    """
    if move.captured and any(other.start == move.start and other.end == move.end and other != move
                             for other in moves):
        return move.full_path()
    return move.hub() if not move.captured else f"{move.start}x{move.end}"


_MOVE_TEXT = re.compile(r"\s*(\d{1,2})((?:\s*[-x:]\s*\d{1,2})+)\s*[!?+#*]*\s*", re.IGNORECASE)


def parse_move(position: Position, text: str, moves: list[Move] | None = None) -> Move:
    """Resolve a move text (Hub, PDN or full path) against the legal moves of
    ``position`` (or ``moves``, when the caller has them already).

    Raises :class:`MoveError` (with the reason) when the text is malformed,
    :class:`IllegalMoveError` when it names no legal move and
    :class:`AmbiguousMoveError` when it could be several.
    """
    match = _MOVE_TEXT.fullmatch(text)
    if not match:
        raise MoveError(f"cannot read move {text!r} (expected e.g. 23-19, 22x13, or 22x13x6 with every landing square)")
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    if any(not 1 <= n <= 32 for n in numbers):
        raise MoveError(f"move {text!r} names a square outside 1..32")
    legal = legal_moves(position) if moves is None else moves
    start, rest = numbers[0], numbers[1:]
    # ``x`` claims a capture; ``-`` and ``:`` are accepted for either kind.
    capture = "x" in text.lower()
    path = _jumped(start, rest)
    jumped = None if path is None else frozenset(path)
    found = []
    for move in legal:
        if move.start != start or (capture and not move.captured):
            continue
        if len(rest) == 1:
            hit = move.end == rest[0]
        else:
            # A path names the move whatever way round it runs (a ring, say).
            hit = (move.end == rest[-1] and jumped == frozenset(move.captured)) or (
                move.end == rest[0] and sorted(move.captured) == sorted(rest[1:]))
        if hit:
            found.append(move)
    if not found:
        raise IllegalMoveError(f"illegal move {text.strip()!r} in position {position.fen()}")
    if len(found) > 1:
        options = ", ".join(m.hub() for m in found)
        raise AmbiguousMoveError(f"ambiguous move {text.strip()!r}: it could be {options}")
    return found[0]


__all__ = ["AmbiguousMoveError", "IllegalMoveError", "Move", "MoveError", "format_pdn", "legal_moves", "parse_move"]
