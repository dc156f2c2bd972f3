"""Positions: pieces and side to move, PDN FEN and Hub strings, the board diagram."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pedina.move import IllegalMoveError, Move
from pedina.movegen import RawMove, count_moves, generate
from pedina.squares import (
    BLACK_PROMOTION,
    SQUARE_BIT,
    WHITE_PROMOTION,
    squares_of,
)

#: Most pieces a side can have (the twelve it starts with).
MAX_PIECES = 12
#: The initial position as a Hub string.
START_HUB = "Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww"
#: The initial position as a PDN FEN.
START_FEN = "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"

#: How :meth:`Position.diagram` draws the Hub letters.
_DIAGRAM_PIECES = {"w": "w", "W": "W", "b": "b", "B": "B", "e": "."}


class PositionError(ValueError):
    """A position text (FEN or Hub string) or a piece placement is invalid."""


class Position:
    """An immutable position: the pieces of both sides and the side to move.

    ``white``, ``black`` and ``kings`` are bitboards in the layout of
    :mod:`pedina.squares` (the constructor takes them unchecked; build positions
    with :meth:`start`, :meth:`parse`, :meth:`from_fen`, :meth:`from_hub` or
    :meth:`from_squares`). ``str()`` draws the board (:meth:`diagram`),
    ``repr()`` gives the FEN.
    """

    __slots__ = ("white", "black", "kings", "white_to_move")

    def __init__(self, white: int, black: int, kings: int, white_to_move: bool) -> None:
        self.white = white
        self.black = black
        self.kings = kings
        self.white_to_move = white_to_move

    # -- construction -------------------------------------------------------------

    @classmethod
    def start(cls) -> Position:
        """The initial position: Black men on 1-12, White men on 21-32, White to move."""
        return cls.from_hub(START_HUB)

    @classmethod
    def from_squares(
        cls,
        white_men: list[int] | tuple[int, ...] = (),
        white_kings: list[int] | tuple[int, ...] = (),
        black_men: list[int] | tuple[int, ...] = (),
        black_kings: list[int] | tuple[int, ...] = (),
        white_to_move: bool = True,
    ) -> Position:
        """Build a position from square numbers, checking that it is a valid one.

        Raises :class:`PositionError` for a square outside 1..32, a square used
        twice, more than 12 pieces a side, or a man on its own promotion row.
        """
        groups = (("white man", white_men), ("white king", white_kings),
                  ("black man", black_men), ("black king", black_kings))
        bits = [0, 0, 0, 0]
        owner: dict[int, str] = {}
        for index, (label, squares) in enumerate(groups):
            for square in squares:
                if not isinstance(square, int) or not 1 <= square <= 32:
                    raise PositionError(f"square {square!r} is not between 1 and 32")
                if square in owner:
                    raise PositionError(f"square {square} is given twice ({owner[square]} and {label})")
                owner[square] = label
                bits[index] |= SQUARE_BIT[square]
        white_men_bits, white_king_bits, black_men_bits, black_king_bits = bits
        for side, count in (("White", len(white_men) + len(white_kings)),
                            ("Black", len(black_men) + len(black_kings))):
            if count > MAX_PIECES:
                raise PositionError(f"{side} has {count} pieces, more than {MAX_PIECES}")
        if white_men_bits & WHITE_PROMOTION:
            raise PositionError(f"white man on square {squares_of(white_men_bits & WHITE_PROMOTION)[0]}, "
                                "its promotion row (1-4)")
        if black_men_bits & BLACK_PROMOTION:
            raise PositionError(f"black man on square {squares_of(black_men_bits & BLACK_PROMOTION)[0]}, "
                                "its promotion row (29-32)")
        return cls(white_men_bits | white_king_bits, black_men_bits | black_king_bits,
                   white_king_bits | black_king_bits, white_to_move)

    @classmethod
    def from_hub(cls, text: str) -> Position:
        """Parse a 33-character Hub position, e.g. ``Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww``."""
        text = text.strip()
        if len(text) != 33:
            hint = " (a 10x10 position?)" if len(text) == 51 else ""
            raise PositionError(f"Hub position must have 33 characters, got {len(text)}{hint}")
        if text[0] not in "WB":
            raise PositionError(f"Hub position must start with W or B (side to move), got {text[0]!r}")
        groups: dict[str, list[int]] = {"w": [], "W": [], "b": [], "B": []}
        for square, char in enumerate(text[1:], start=1):
            if char in groups:
                groups[char].append(square)
            elif char != "e":
                raise PositionError(f"unknown character {char!r} for square {square} in Hub position "
                                    "(expected w, W, b, B or e)")
        return cls.from_squares(groups["w"], groups["W"], groups["b"], groups["B"], text[0] == "W")

    @classmethod
    def from_fen(cls, text: str) -> Position:
        """Parse a PDN FEN such as ``W:W21-32:B1-12`` or ``B:W18,K3:BK5,9``.

        Kings carry a ``K`` prefix and ranges ``a-b`` are allowed. A trailing
        period and surrounding quotes or blanks are ignored.
        """
        raw = text.strip().strip('"').strip().rstrip(".")
        fields = [field.strip() for field in raw.split(":")]
        if len(fields) < 2 or fields[0].upper() not in ("W", "B"):
            raise PositionError(f"FEN must look like 'W:W21,22:B1,2' (side to move first), got {text!r}")
        squares: dict[str, list[int]] = {"W": [], "WK": [], "B": [], "BK": []}
        seen_colours: set[str] = set()
        for field in fields[1:]:
            if not field:
                continue
            colour = field[0].upper()
            if colour not in "WB":
                raise PositionError(f"FEN piece list must start with W or B, got {field!r}")
            if colour in seen_colours:
                raise PositionError(f"FEN lists the {'white' if colour == 'W' else 'black'} pieces twice")
            seen_colours.add(colour)
            for item in field[1:].split(","):
                item = item.strip()
                if not item:
                    continue
                match = re.fullmatch(r"(K?)(\d+)(?:-(K?)(\d+))?", item, re.IGNORECASE)
                if not match:
                    raise PositionError(f"bad FEN square {item!r} (expected e.g. 21, K5 or 1-12)")
                king = colour + ("K" if match.group(1) else "")
                ends = [match.group(2), match.group(4) or match.group(2)]
                for end in ends:
                    # Checked on the digits, before expanding the range or converting: a text
                    # like "1-10000000" must not cost memory (nor a 5,000-digit one int()'s limit).
                    if len(end) > 2 or not 1 <= int(end) <= 32:
                        raise PositionError(f"FEN square {end} is not between 1 and 32 (in {item!r})")
                first, last = int(ends[0]), int(ends[1])
                if last < first:
                    raise PositionError(f"bad FEN range {item!r}: {last} comes before {first}")
                squares[king].extend(range(first, last + 1))
        return cls.from_squares(squares["W"], squares["WK"], squares["B"], squares["BK"],
                                fields[0].upper() == "W")

    @classmethod
    def parse(cls, text: str) -> Position:
        """Parse either a Hub position string or a PDN FEN.

        Text with a colon is read as a FEN, 33 characters or text of Hub letters
        (``W``/``B``, then ``wWbBe``) as a Hub string; anything else raises
        :class:`PositionError` saying what was expected.
        """
        stripped = text.strip()
        if ":" in stripped:
            return cls.from_fen(stripped)
        if len(stripped) == 33 or re.fullmatch(r"[WB][wWbBe]*", stripped):
            return cls.from_hub(stripped)
        raise PositionError(f"{stripped[:40]!r} is neither a FEN (such as 'W:W21-32:B1-12') nor a 33-character "
                            "Hub position ('W' or 'B', then one of w, W, b, B, e per square)")

    # -- output -------------------------------------------------------------------

    def hub(self) -> str:
        """The 33-character Hub position."""
        chars = ["W" if self.white_to_move else "B"]
        for square in range(1, 33):
            bit = SQUARE_BIT[square]
            king = bit & self.kings
            if bit & self.white:
                chars.append("W" if king else "w")
            elif bit & self.black:
                chars.append("B" if king else "b")
            else:
                chars.append("e")
        return "".join(chars)

    def fen(self) -> str:
        """PDN FEN with plain comma lists (``K`` before kings), which every reader accepts."""
        parts = ["W" if self.white_to_move else "B"]
        for colour, bits in (("W", self.white), ("B", self.black)):
            items = [("K" if SQUARE_BIT[s] & self.kings else "") + str(s) for s in squares_of(bits)]
            parts.append(colour + ",".join(items))
        return ":".join(parts)

    def diagram(self, flipped: bool = False, marked: Iterable[int] = ()) -> str:
        """The board as text, seen from White (from Black when ``flipped``).

        Files a-h and ranks 1-8 frame the board; each dark square shows its
        piece and its number, so square 1 is top left (a8) and 32 bottom right
        (h1) from White's side. Pieces are ``w``/``W`` (white man/king) and
        ``b``/``B`` (black); ``.`` is an empty square. Squares in ``marked``
        (e.g. the last move's) are bracketed.
        """
        pieces = self.hub()
        marks = set(marked)
        order = range(7, -1, -1) if flipped else range(8)
        files = "   " + "".join(f"   {chr(ord('a') + column)}  " for column in order).rstrip()
        border = "   +" + "-" * 48 + "+"
        lines = [files, border]
        for row in order:
            cells = []
            for column in order:
                if (row + column) % 2:  # light squares are never played on
                    cells.append("      ")
                    continue
                square = row * 4 + column // 2 + 1
                text = f"{_DIAGRAM_PIECES[pieces[square]]}{square:>3}"
                cells.append(f"[{text}]" if square in marks else f" {text} ")
            rank = 8 - row
            lines.append(f" {rank} |" + "".join(cells) + f"| {rank}")
        lines += [border, files]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.diagram()

    def __repr__(self) -> str:
        return f"Position.from_fen({self.fen()!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Position) and self.white == other.white and self.black == other.black
                and self.kings == other.kings and self.white_to_move == other.white_to_move)

    def __hash__(self) -> int:
        return hash((self.white, self.black, self.kings, self.white_to_move))

    # -- queries ------------------------------------------------------------------

    def piece_at(self, square: int) -> str:
        """``w``/``W`` white man/king, ``b``/``B`` black man/king, ``e`` empty (Hub letters)."""
        return self.hub()[square] if 1 <= square <= 32 else "e"

    def _raw_moves(self) -> list[RawMove]:
        """Legal moves as movegen tuples (see :mod:`pedina.movegen`)."""
        if self.white_to_move:
            return generate(self.white, self.black, self.kings, True)
        return generate(self.black, self.white, self.kings, False)

    def count_moves(self) -> int:
        """Number of legal moves."""
        if self.white_to_move:
            return count_moves(self.white, self.black, self.kings, True)
        return count_moves(self.black, self.white, self.kings, False)

    def play(self, move: Move) -> Position:
        """The position after ``move``.

        Raises :class:`IllegalMoveError` when ``move`` is not a legal move of
        this position (one of another position, say).
        """
        frm, to = SQUARE_BIT[move.start], SQUARE_BIT[move.end]
        taken = 0
        for square in move.captured:
            taken |= SQUARE_BIT[square]
        for raw in self._raw_moves():
            if raw[0] == frm and raw[1] == to and raw[2] == taken:
                toggle = raw[3]
                if self.white_to_move:
                    return Position(self.white ^ frm ^ to, self.black ^ taken, self.kings ^ toggle, False)
                return Position(self.white ^ taken, self.black ^ frm ^ to, self.kings ^ toggle, True)
        raise IllegalMoveError(f"illegal move {move.hub()} in position {self.fen()}")

    def piece_count(self) -> tuple[int, int, int, int]:
        """(white men, white kings, black men, black kings)."""
        return ((self.white & ~self.kings).bit_count(), (self.white & self.kings).bit_count(),
                (self.black & ~self.kings).bit_count(), (self.black & self.kings).bit_count())


__all__ = ["MAX_PIECES", "Position", "PositionError", "START_FEN", "START_HUB"]
