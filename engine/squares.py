"""Board geometry: FID square numbers and the internal bitboard layout.

Squares are numbered 1..32 as in ``docs/rules.md`` (1 = a8, 32 = h1, seen
from White). Internally every set of squares is an ``int`` in a 36-bit "ghost"
layout: each pair of rows takes nine bits, the fifth of which is a ghost square
that no piece can stand on. In that layout every diagonal step is a shift by a
constant (4 or 5 bits, up = towards square 1 = right shift), so a step off the
board lands on a ghost bit or outside the board and is masked away, with no
per-row masks.
"""

from __future__ import annotations

from typing import Final


def _bit_index(square: int) -> int:
    """Bit position of FID ``square`` (1..32) in the ghost layout."""
    i = square - 1
    row, pos = divmod(i, 4)
    pair, odd = divmod(row, 2)
    return 9 * pair + 5 * odd + pos


#: ``SQUARE_BIT[n]`` is the bitboard of square ``n``; index 0 is unused.
SQUARE_BIT: Final[tuple[int, ...]] = (0,) + tuple(1 << _bit_index(n) for n in range(1, 33))
#: All 32 playable squares.
BOARD: Final[int] = sum(SQUARE_BIT)
#: Bit value -> square number, for single-bit ints.
BIT_SQUARE: Final[dict[int, int]] = {SQUARE_BIT[n]: n for n in range(1, 33)}

#: ``bit % BIT_SLOTS`` numbers a single bit of the layout (2 is a primitive root of 37, so
#: the 36 powers of two below 2**36 leave 36 different remainders): tables by square are
#: then lists, cheaper to read than dicts keyed by bit.
BIT_SLOTS: Final = 37

#: Rows where a man is promoted: White reaches 1-4, Black reaches 29-32.
WHITE_PROMOTION: Final[int] = sum(SQUARE_BIT[n] for n in range(1, 5))
BLACK_PROMOTION: Final[int] = sum(SQUARE_BIT[n] for n in range(29, 33))


def popcount(bits: int) -> int:
    """Number of set bits of a board-sized ``bits`` (below 2**40)."""
    # Compiled, int.bit_count is a call through the interpreter's method lookup, several
    # times the cost of these native shifts and adds; plain Python takes the method itself
    # (below), as a function of its own there would cost the call on top.
    bits -= (bits >> 1) & 0x5555555555
    bits = (bits & 0x3333333333) + ((bits >> 2) & 0x3333333333)
    bits = (bits + (bits >> 4)) & 0x0F0F0F0F0F
    bits += bits >> 8
    bits += bits >> 16
    return (bits + (bits >> 32)) & 0x7F


if __file__.endswith(".py"):  # plain Python: modules that import popcount get the method
    globals()["popcount"] = int.bit_count


def squares_of(bits: int) -> list[int]:
    """Square numbers in ``bits``, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(BIT_SQUARE[low])
        bits ^= low
    out.sort()
    return out
