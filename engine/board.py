"""The game record: a start position, the moves played, and the game's end."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pedina.move import IllegalMoveError, Move, format_pdn, legal_moves, parse_move
from pedina.position import Position
from pedina.squares import SQUARE_BIT


class Termination(enum.Enum):
    """Why a game ended by the rules; the value is the PDN ``Termination`` tag."""

    #: The side to move has no legal move (no pieces, or all blocked): it loses.
    NO_MOVES = "normal"
    #: The same position with the same side to move occurred the set number of times.
    REPETITION = "repetition"
    #: The set number of plies passed without a man move or a capture (the 40-move rule).
    MOVE_COUNT = "40-move rule"

    def __str__(self) -> str:
        return _TERMINATION_TEXT[self]


_TERMINATION_TEXT = {Termination.NO_MOVES: "no moves", Termination.REPETITION: "repetition",
                     Termination.MOVE_COUNT: "40-move rule"}


@dataclass(frozen=True)
class Outcome:
    """How a game ended. ``winner`` is ``True`` for White, ``False`` for Black, ``None`` for a draw."""

    termination: Termination
    winner: bool | None

    def result(self) -> str:
        """PDN result text: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner else "0-1"


class Board:
    """A game from a start position, with the moves played so far.

    The game starts from ``start``: a :class:`Position`, a FEN or Hub string,
    or ``None`` for the initial position (the ``start`` attribute is always a
    :class:`Position`). ``moves`` are the moves played and ``positions`` the
    positions they led through (``start`` first, the current one last).

    Knows repetitions (the same position with the same side to move) and the
    40-move count (plies without a man move or a capture). Both thresholds are
    settings: ``repetitions`` occurrences draw (3 under FID rules) and
    ``draw_plies`` plies draw (80; ``quiet_plies`` is its old name, deprecated).

    ``str()`` draws the current position (:meth:`Position.diagram`), ``repr()``
    gives its FEN, e.g. ``Board('W:W21,22,...:B1,2,...')``.
    """

    def __init__(self, start: Position | str | None = None, *, repetitions: int = 3,
                 draw_plies: int = 80, quiet_plies: int | None = None) -> None:
        if start is None:
            start = Position.start()
        elif isinstance(start, str):
            start = Position.parse(start)
        self.start = start
        self.repetitions = repetitions
        self.draw_plies = draw_plies if quiet_plies is None else quiet_plies
        self.moves: list[Move] = []
        self.positions: list[Position] = [start]
        self._reversible: list[int] = [0]  # plies without man move or capture, per position

    @property
    def position(self) -> Position:
        """The current position."""
        return self.positions[-1]

    @property
    def reversible_plies(self) -> int:
        """Plies since the last man move or capture (the 40-move count in plies)."""
        return self._reversible[-1]

    @property
    def quiet_plies(self) -> int:
        """Deprecated: the old name of :attr:`draw_plies`."""
        return self.draw_plies

    def copy(self) -> Board:
        """An independent copy: pushing to or popping from it leaves this board alone."""
        board = Board(self.start, repetitions=self.repetitions, draw_plies=self.draw_plies)
        board.moves = list(self.moves)
        board.positions = list(self.positions)
        board._reversible = list(self._reversible)
        return board

    def legal_moves(self) -> list[Move]:
        """The legal moves of the current position."""
        return legal_moves(self.position)

    def parse_move(self, text: str) -> Move:
        """Resolve move text (Hub, PDN or full path) in the current position."""
        return parse_move(self.position, text)

    def pdn(self, move: Move) -> str:
        """PDN text of a legal move of the current position: ``23-19``, ``22x13``, or
        every landing square when another legal capture shares start and end.

        Raises :class:`IllegalMoveError` when ``move`` is not legal here.
        """
        moves = self.legal_moves()
        if move not in moves:
            raise IllegalMoveError(f"illegal move {move.hub()} in position {self.position.fen()}")
        return format_pdn(move, moves)

    def push(self, move: Move) -> None:
        """Play a legal move of the current position.

        Raises :class:`IllegalMoveError` when it is not one.
        """
        position = self.position
        self.positions.append(position.play(move))
        self.moves.append(move)
        reversible = not move.captured and bool(SQUARE_BIT[move.start] & position.kings)
        self._reversible.append(self._reversible[-1] + 1 if reversible else 0)

    def push_text(self, text: str) -> Move:
        """Parse and play a move text; returns the move."""
        move = self.parse_move(text)
        self.push(move)
        return move

    def pop(self) -> Move:
        """Take back the last move."""
        if not self.moves:
            raise IndexError("no move to take back")
        self.positions.pop()
        self._reversible.pop()
        return self.moves.pop()

    def repetition_count(self) -> int:
        """How many times the current position has occurred, this time included.

        Only positions since the last irreversible move can repeat.
        """
        current = self.position
        window = self._reversible[-1]
        count = 0
        for position in self.positions[len(self.positions) - 1 - window:]:
            if position == current:
                count += 1
        return count

    def outcome(self) -> Outcome | None:
        """The end of the game if it has ended, else ``None``."""
        position = self.position
        if position.count_moves() == 0:
            return Outcome(Termination.NO_MOVES, not position.white_to_move)
        if self.repetition_count() >= self.repetitions:
            return Outcome(Termination.REPETITION, None)
        if self.reversible_plies >= self.draw_plies:
            return Outcome(Termination.MOVE_COUNT, None)
        return None

    def result(self) -> str:
        """``1-0``, ``0-1``, ``1/2-1/2``, or ``*`` while the game goes on."""
        outcome = self.outcome()
        return outcome.result() if outcome else "*"

    def is_game_over(self) -> bool:
        """Whether the game has ended (see :meth:`outcome`)."""
        return self.outcome() is not None

    def __str__(self) -> str:
        return str(self.position)

    def __repr__(self) -> str:
        return f"Board({self.position.fen()!r})"
