"""Moves as values, and their text forms: Hub, PDN and full path.

- Hub text: ``23-19`` for a step; ``22x15x19`` for a capture, start ``x`` end, then
  every captured square (ascending on output, any order on input).
- PDN text: ``23-19`` / ``22x13``; the landing squares are written only when another
  legal move shares start and end (``22x13x6x15x22`` style, see :func:`format_pdn`).
- Path text: every landing square, ``22x13x6``.
"""

from __future__ import annotations

import re

from pedina.movegen import RawMove
from pedina.position import Position
from pedina.squares import BIT_SQUARE, SQUARE_BIT


class MoveError(ValueError):
    """A move text does not denote a legal move of the position."""


class IllegalMoveError(MoveError):
    """The text is well formed but matches no legal move."""


class AmbiguousMoveError(MoveError):
    """The text matches more than one legal move."""


class Move:
    """A legal move of a given position.

    ``start`` and ``end`` are square numbers (equal for a ring capture by a king),
    ``path`` the landing squares in order (``(end,)`` for a step), ``captured`` the
    captured squares in the order they were jumped (empty for a step). ``raw`` is
    the movegen tuple that plays it. Moves compare equal when start, end and the
    set of captured squares agree, because those give the same position.
    """

    __slots__ = ("start", "end", "path", "captured", "raw")

    def __init__(self, raw: RawMove) -> None:
        frm, to, _, _, path = raw
        self.raw = raw
        self.start = BIT_SQUARE[frm]
        self.end = BIT_SQUARE[to]
        self.path: tuple[int, ...] = tuple(BIT_SQUARE[bit] for bit in path) if path else (self.end,)
        self.captured: tuple[int, ...] = _captured_in_order(frm, path)

    @property
    def is_capture(self) -> bool:
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
        return f"Move({self.hub()!r})"


def _captured_in_order(frm: int, path: tuple[int, ...]) -> tuple[int, ...]:
    """Captured squares from the landing squares: each jumped piece sits midway."""
    captured = []
    here = frm
    for landing in path:
        # Two steps in one direction: the victim is one step from ``here``, i.e.
        # the bit whose distance to both ends is the same shift.
        distance = landing.bit_length() - here.bit_length()
        step = distance // 2
        victim = here << step if step > 0 else here >> -step
        captured.append(BIT_SQUARE[victim])
        here = landing
    return tuple(captured)


def legal_moves(position: Position) -> list[Move]:
    """All legal moves of ``position`` as :class:`Move` values."""
    return [Move(raw) for raw in position.raw_moves()]


def format_pdn(move: Move, moves: list[Move]) -> str:
    """PDN text of ``move`` among the legal ``moves``: the full path only when needed."""
    if move.captured and any(other.start == move.start and other.end == move.end and other != move
                             for other in moves):
        return move.full_path()
    return move.hub() if not move.captured else f"{move.start}x{move.end}"


_MOVE_TEXT = re.compile(r"\s*(\d{1,2})((?:\s*[-x:]\s*\d{1,2})+)\s*[!?+#*]*\s*", re.IGNORECASE)


def _jumped(start: int, landings: list[int]) -> frozenset[int] | None:
    """Squares jumped by a path of landing squares, or ``None`` if a hop is not a jump."""
    jumped = set()
    here = SQUARE_BIT[start]
    for square in landings:
        landing = SQUARE_BIT[square]
        distance = landing.bit_length() - here.bit_length()
        if abs(distance) not in (8, 10):
            return None
        victim = here << distance // 2 if distance > 0 else here >> -distance // 2
        if victim not in BIT_SQUARE:
            return None
        jumped.add(BIT_SQUARE[victim])
        here = landing
    return frozenset(jumped)


def parse_move(position: Position, text: str, moves: list[Move] | None = None) -> Move:
    """Resolve a move text (Hub, PDN or full path) against the legal moves.

    Raises :class:`MoveError` (with the reason) when the text is malformed,
    illegal in the position, or ambiguous.
    """
    match = _MOVE_TEXT.fullmatch(text)
    if not match:
        raise MoveError(f"cannot read move {text!r} (expected e.g. 23-19, 22x15 or 22x15x19)")
    numbers = [int(n) for n in re.findall(r"\d+", text)]
    if any(not 1 <= n <= 32 for n in numbers):
        raise MoveError(f"move {text!r} names a square outside 1..32")
    legal = legal_moves(position) if moves is None else moves
    start, rest = numbers[0], numbers[1:]
    # ``x`` claims a capture; ``-`` and ``:`` are accepted for either kind.
    capture = "x" in text.lower()
    jumped = _jumped(start, rest)
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
