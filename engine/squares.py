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


def _bit_index(square: int) -> int:
    """Bit position of FID ``square`` (1..32) in the ghost layout."""
    i = square - 1
    row, pos = divmod(i, 4)
    pair, odd = divmod(row, 2)
    return 9 * pair + 5 * odd + pos


#: ``SQUARE_BIT[n]`` is the bitboard of square ``n``; index 0 is unused.
SQUARE_BIT: tuple[int, ...] = (0,) + tuple(1 << _bit_index(n) for n in range(1, 33))
#: All 32 playable squares.
BOARD: int = sum(SQUARE_BIT)
#: Bit value -> square number, for single-bit ints.
BIT_SQUARE: dict[int, int] = {SQUARE_BIT[n]: n for n in range(1, 33)}

#: Rows where a man is promoted: White reaches 1-4, Black reaches 29-32.
WHITE_PROMOTION: int = sum(SQUARE_BIT[n] for n in range(1, 5))
BLACK_PROMOTION: int = sum(SQUARE_BIT[n] for n in range(29, 33))


def squares_of(bits: int) -> list[int]:
    """Square numbers in ``bits``, ascending."""
    out = []
    while bits:
        low = bits & -bits
        out.append(BIT_SQUARE[low])
        bits ^= low
    out.sort()
    return out
