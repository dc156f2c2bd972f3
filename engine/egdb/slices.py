"""Slices of the endgame database and the index of every position in its slice.

A *signature* ``(men, kings, other men, other kings)`` counts the pieces of the
side to move and of the other side. Every table holds positions with **White to
move**: a position with Black to move is looked up as its colour flip (the board
turned half a turn, the colours swapped), a position with White to move of the
signature ``(other men, other kings, men, kings)``. So the table of signature
``(wm, wk, bm, bk)`` is the slice "wm white men, wk white kings, bm black men,
bk black kings, White to move", and the same slice with Black to move is the table
``(bm, bk, wm, wk)``.

Turning the board half a turn takes square ``n`` to ``33 - n``, and in the ghost
layout of :mod:`pedina.squares` bit ``i`` to bit ``35 - i``: :func:`flip_bits`.

The index of a position in its table is a mixed-radix number of four
combination ranks, most significant first: White's men among squares 5-32,
Black's men among squares 1-28, White's kings among all 32 squares, Black's
kings among all 32 (:class:`SliceIndex`). A rank is the colex rank
``sum(C(p_i, i + 1))`` of the pieces' places ``p_0 < p_1 < ...`` in their region.
Each kind of piece is ranked on its own, so an index where two pieces share a
square is no position: such indices are *holes*, which nothing counts or probes
(:meth:`SliceIndex.validity` tells them apart).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations
from math import comb

from pedina.squares import BLACK_PROMOTION, BOARD, SQUARE_BIT, WHITE_PROMOTION

#: (men, kings, other men, other kings) of a table; the side to move is White.
Signature = tuple[int, int, int, int]
#: The tables solved together (:func:`build_jobs`): a signature and its colour flip, or one alone.
Job = tuple[Signature, ...]

#: Every square's bit, square 1 first (bits ascend with the square numbers).
_SQUARE_BITS: tuple[int, ...] = SQUARE_BIT[1:]
#: Where White's men can stand (not on its promotion row 1-4), and Black's (not on 29-32).
WHITE_MEN_REGION: int = BOARD & ~WHITE_PROMOTION
BLACK_MEN_REGION: int = BOARD & ~BLACK_PROMOTION
#: ``_BINOMIAL[i][p]`` is C(p, i), for the ranks.
_BINOMIAL: tuple[tuple[int, ...], ...] = tuple(tuple(comb(p, i) for p in range(33)) for i in range(13))


def _reversed_12() -> tuple[int, ...]:
    return tuple(int(f"{value:012b}"[::-1], 2) for value in range(4096))


_REVERSED_12 = _reversed_12()


def flip_bits(bits: int) -> int:
    """``bits`` with the board turned half a turn: square ``n`` goes to ``33 - n``."""
    table = _REVERSED_12
    return table[bits & 4095] << 24 | table[(bits >> 12) & 4095] << 12 | table[bits >> 24]


def flipped_signature(signature: Signature) -> Signature:
    """The signature of the colour flip: the other side's pieces first."""
    men, kings, other_men, other_kings = signature
    return other_men, other_kings, men, kings


def signature_of(us: int, them: int, kings: int) -> Signature:
    """The signature of a position given by the mover's pieces, the other side's and the kings."""
    return ((us & ~kings).bit_count(), (us & kings).bit_count(),
            (them & ~kings).bit_count(), (them & kings).bit_count())


def slice_name(signature: Signature) -> str:
    """The file stem of a table, ``slice-WM-WK-BM-BK`` (e.g. ``slice-0-2-0-1``)."""
    return "slice-" + "-".join(str(count) for count in signature)


def all_signatures(pieces: int) -> list[Signature]:
    """Every signature with at most ``pieces`` pieces and at least one a side, in build
    order: fewer pieces first, then fewer men (a promotion turns a man into a king,
    so a table only needs tables that come before it or its own colour flip)."""
    found = []
    for total in range(2, pieces + 1):
        for men in range(total + 1):
            for white_men in range(min(men, 12) + 1):
                black_men = men - white_men
                for white_kings in range(total - men + 1):
                    black_kings = total - men - white_kings
                    if (white_men + white_kings and black_men + black_kings and white_men + white_kings <= 12
                            and black_men + black_kings <= 12):
                        found.append((white_men, white_kings, black_men, black_kings))
    return found


def build_jobs(pieces: int) -> list[Job]:
    """The tables up to ``pieces`` pieces grouped as they are solved: a signature with
    its colour flip (the positions after a quiet move), or alone when it is its own
    flip. Jobs of the same piece and man count are independent of each other."""
    jobs: list[Job] = []
    for signature in all_signatures(pieces):
        flipped = flipped_signature(signature)
        if flipped == signature:
            jobs.append((signature,))
        elif signature < flipped:
            jobs.append((signature, flipped))
    return jobs


def dependencies(signature: Signature) -> list[Signature]:
    """The tables a table's exits lead into: after a capture or a promotion, the other
    side is to move, so each is the flip of the position after the move.

    A capture takes any non-empty subset of the other side's men and kings (a man
    that captures may be promoted); a quiet move may promote a man. Signatures with
    a side left without pieces are not tables (that side has lost) and are left out.
    """
    men, kings, other_men, other_kings = signature
    movers = [(men, kings)] + ([(men - 1, kings + 1)] if men else [])
    found: set[Signature] = set()
    for mover_men, mover_kings in movers:
        for left_men in range(other_men + 1):
            for left_kings in range(other_kings + 1):
                if left_men + left_kings == 0:
                    continue
                if (left_men, left_kings) == (other_men, other_kings) and (mover_men, mover_kings) == (men, kings):
                    continue  # not an exit: a quiet move inside the job
                found.add((left_men, left_kings, mover_men, mover_kings))
    return sorted(found)


def job_dependencies(job: Job) -> list[Signature]:
    """The tables a job reads: its tables' exits (:func:`dependencies`), none of them in the job
    (an exit changes the material), so a job can be solved once these are built."""
    return sorted({signature for member in job for signature in dependencies(member)})


def _rank(bits: int, region: int) -> int:
    """Colex rank of the set ``bits`` among the squares of ``region`` (which holds it)."""
    rank = 0
    order = 0
    while bits:
        low = bits & -bits
        bits ^= low
        order += 1
        rank += _BINOMIAL[order][((low - 1) & region).bit_count()]
    return rank


class Combinations:
    """The ``count``-square subsets of a region: ``sets[rank]`` is a subset's bitboard,
    ``rank[bits]`` its rank; ``turned`` and ``turned_rank`` the same seen from the other side. Shared (:func:`combinations_of`), never changed."""

    def __init__(self, region: int, count: int) -> None:
        squares = [bit for bit in _SQUARE_BITS if bit & region]
        self.sets = [0] * comb(len(squares), count)
        self.rank: dict[int, int] = {}
        for chosen in combinations(squares, count):
            bits = sum(chosen)
            rank = _rank(bits, region)
            self.sets[rank] = bits
            self.rank[bits] = rank
        #: ``turned[rank]``: the subset with the board turned half a turn (:func:`flip_bits`),
        #: ``turned_rank[bits]`` the rank of ``bits`` turned.
        self.turned = [flip_bits(bits) for bits in self.sets]
        self.turned_rank = {turned: rank for rank, turned in enumerate(self.turned)}


_COMBINATIONS: dict[tuple[int, int], Combinations] = {}


def combinations_of(region: int, count: int) -> Combinations:
    """The (cached) :class:`Combinations` of ``count`` squares of ``region``."""
    found = _COMBINATIONS.get((region, count))
    if found is None:
        found = _COMBINATIONS[(region, count)] = Combinations(region, count)
    return found


class SliceIndex:
    """The positions of one table (White to move) and their indices, 0 .. ``size - 1``.

    ``index = white_men_rank * white_men_stride + black_men_rank * black_men_stride
    + white_kings_rank * white_kings_stride + black_kings_rank``: each kind of piece
    is ranked among all the squares it may stand on, so moving one piece changes one
    rank, and the index by one stride.
    """

    def __init__(self, signature: Signature) -> None:
        white_men, white_kings, black_men, black_kings = signature
        self.signature = signature
        self.white_men = combinations_of(WHITE_MEN_REGION, white_men)
        self.black_men = combinations_of(BLACK_MEN_REGION, black_men)
        self.white_kings = combinations_of(BOARD, white_kings)
        self.black_kings = combinations_of(BOARD, black_kings)
        self.white_kings_stride = len(self.black_kings.sets)
        self.black_men_stride = self.white_kings_stride * len(self.white_kings.sets)
        self.white_men_stride = self.black_men_stride * len(self.black_men.sets)
        self.size = self.white_men_stride * len(self.white_men.sets)
        self._positions_count = -1

    @property
    def positions_count(self) -> int:
        """Indices that are positions (the four kinds of pieces on different squares). Counted
        on first use: a million pairs of men's placements at 5 pieces, which a probe never needs."""
        if self._positions_count < 0:
            white_men, white_kings, black_men, black_kings = self.signature
            apart = sum(1 for men in self.white_men.sets for others in self.black_men.sets if not men & others)
            free = 32 - white_men - black_men
            self._positions_count = apart * comb(free, white_kings) * comb(free - white_kings, black_kings)
        return self._positions_count

    def index(self, white: int, black: int, kings: int) -> int:
        """Index of a position of this table (White to move; not checked)."""
        return (self.white_men.rank[white & ~kings] * self.white_men_stride
                + self.black_men.rank[black & ~kings] * self.black_men_stride
                + self.white_kings.rank[white & kings] * self.white_kings_stride
                + self.black_kings.rank[black & kings])

    def turned_index(self, white: int, black: int, kings: int) -> int:
        """Index of the position ``(flip_bits(white), flip_bits(black), flip_bits(kings))``:
        the table's position seen from the other side, e.g. the colour flip of a
        position with Black (owning ``white`` here) to move."""
        return (self.white_men.turned_rank[white & ~kings] * self.white_men_stride
                + self.black_men.turned_rank[black & ~kings] * self.black_men_stride
                + self.white_kings.turned_rank[white & kings] * self.white_kings_stride
                + self.black_kings.turned_rank[black & kings])

    def position(self, index: int, turned: bool = False) -> tuple[int, int, int]:
        """(white, black, kings) of the position at ``index`` (not a hole); ``turned``:
        each of them with the board turned half a turn (:func:`flip_bits`)."""
        white_men, rest = divmod(index, self.white_men_stride)
        black_men, rest = divmod(rest, self.black_men_stride)
        white_kings, black_kings = divmod(rest, self.white_kings_stride)
        if turned:
            white_king_bits = self.white_kings.turned[white_kings]
            black_king_bits = self.black_kings.turned[black_kings]
            white_men_bits = self.white_men.turned[white_men]
            black_men_bits = self.black_men.turned[black_men]
        else:
            white_king_bits = self.white_kings.sets[white_kings]
            black_king_bits = self.black_kings.sets[black_kings]
            white_men_bits = self.white_men.sets[white_men]
            black_men_bits = self.black_men.sets[black_men]
        return white_men_bits | white_king_bits, black_men_bits | black_king_bits, white_king_bits | black_king_bits

    def positions(self) -> Iterator[tuple[int, int, int, int]]:
        """(index, white, black, kings) of every position of the table, in index order."""
        black_men_stride = self.black_men_stride
        white_kings_stride = self.white_kings_stride
        white_king_sets = self.white_kings.sets
        black_king_sets = self.black_kings.sets
        base = 0
        for white_men in self.white_men.sets:
            for black_men in self.black_men.sets:
                if not white_men & black_men:
                    men = white_men | black_men
                    index = base
                    for white_kings in white_king_sets:
                        if not white_kings & men:
                            white = white_men | white_kings
                            taken = men | white_kings
                            rank = index
                            for black_kings in black_king_sets:
                                if not black_kings & taken:
                                    yield rank, white, black_men | black_kings, white_kings | black_kings
                                rank += 1
                        index += white_kings_stride
                base += black_men_stride

    def validity(self) -> bytearray:
        """One byte an index: 1 for a position, 0 for a hole."""
        # Black kings' placements are the innermost run of indices: for each square, the
        # run's bytes that place a king there, as one int, so a run is a few big-int ors,
        # written in place (a run of its own object each, or a cache of runs by the squares
        # taken, held gigabytes where black has no king and runs are one index long).
        black_king_sets = self.black_kings.sets
        run = len(black_king_sets)
        on_square = {bit: int.from_bytes(bytes([1 if kings & bit else 0 for kings in black_king_sets]), "little")
                     for bit in _SQUARE_BITS}
        every = int.from_bytes(b"\x01" * run, "little")
        out = bytearray(self.size)
        start = 0
        for white_men in self.white_men.sets:
            for black_men in self.black_men.sets:
                if white_men & black_men:
                    start += self.black_men_stride
                    continue
                men = white_men | black_men
                for white_kings in self.white_kings.sets:
                    if not white_kings & men:
                        taken = men | white_kings
                        blocked = 0
                        while taken:
                            low = taken & -taken
                            taken ^= low
                            blocked |= on_square[low]
                        out[start:start + run] = (every ^ blocked).to_bytes(run, "little")
                    start += run
        return out

