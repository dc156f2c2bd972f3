"""Static evaluation: a linear function of board features and of local patterns, plus
endgame knowledge.

The score is in hundredths of a man from the side to move's point of view. It is
linear in the weights: :func:`features` gives the vector that the weights of
:data:`FEATURES` multiply, and :func:`pattern_indices` the pattern weights that
are added, so ``scripts/tune.py`` (the features alone) and
``scripts/fit_patterns.py`` (both) fit them by logistic regression on game results.

Features are White minus Black. "Phased" features have two weights, one for
the opening (all 24 pieces) and one for the bare endgame, blended by the number
of pieces left: a king is worth well under two men early and more later, men
matter for their rows early and for promotion late. The other features have a
single weight.

Patterns, as Scan has them for 10x10 draughts: the board is covered by
:data:`PATTERN_REGIONS` overlapping blocks of 4 rows by 4 columns (rows and
columns 0-3, 2-5 and 4-7), each holding 8 dark squares, and every configuration
of a block's men (each square empty, a man of the side to move, or one of its
opponent's: 3**8 = :data:`PATTERN_CONFIGS`) has its own weight. Kings count as
empty squares there: they are few, and the features price them. The board is
seen from the side to move, turned half a turn when that is Black, so a
position and its colour-mirror image (colours swapped, board turned, the other
side to move) read the same weights; they are not antisymmetric, so a pattern
may be good for whichever side has the move, as tempo is in draughts.

Speed is the point of the layout: material and every square-based feature fold
into piece-square values, summed through 12-bit chunk tables of the bitboards,
and the mg/eg pair of each value is packed into one int so one sum carries both.
The 8 squares of every block sit at the same bit offsets from the block's lowest
bit in the ghost layout of :mod:`pedina.squares`, and turning the board reverses
the 36 bits, so a block's configuration is two lookups, in one table for the
mover's men and one for the opponent's, of the bitboards shifted and masked.
"""

from __future__ import annotations

import array
import importlib.resources
import json
import sys
import zlib
from collections.abc import Sequence
from typing import Final

from pedina.scores import KNOWN_WIN, NO_MOVES
from pedina.squares import BIT_SLOTS, BLACK_PROMOTION, BOARD, SQUARE_BIT, WHITE_PROMOTION, popcount

#: Features with an opening and an endgame weight (names get ``_mg``/``_eg``).
PHASED: Final[tuple[str, ...]] = (
    "man", "king", "row1", "row2", "row3", "row4", "row5", "row6",
    "edge", "file1", "file2", "king_centre",
)
#: Features with one weight.
PLAIN: Final[tuple[str, ...]] = (
    "men_mobility", "king_mobility", "trapped_king", "runaway1", "runaway2", "tempo", "back_guard",
)
#: Every weight name, in the order of :func:`features`.
FEATURES: Final[tuple[str, ...]] = tuple(f"{n}_{p}" for n in PHASED for p in ("mg", "eg")) + PLAIN

#: Hand-set starting weights (the untuned evaluation; tuning starts here).
DEFAULT_WEIGHTS: Final[dict[str, int]] = {
    "man_mg": 100, "man_eg": 100, "king_mg": 150, "king_eg": 250,
    "row1_mg": 0, "row1_eg": 2, "row2_mg": 2, "row2_eg": 5, "row3_mg": 4, "row3_eg": 10,
    "row4_mg": 6, "row4_eg": 15, "row5_mg": 8, "row5_eg": 20, "row6_mg": 10, "row6_eg": 30,
    "edge_mg": -4, "edge_eg": -2, "file1_mg": 0, "file1_eg": 0, "file2_mg": 3, "file2_eg": 1,
    "king_centre_mg": 3, "king_centre_eg": 3,
    "men_mobility": 2, "king_mobility": 2, "trapped_king": -30, "runaway1": 30, "runaway2": 15,
    "tempo": 5, "back_guard": 6,
}

PIECES: Final = 24


#: The fitted weights shipped in the package (read as a resource: a compiled module's
#: ``__file__`` does not name the package's folder).
WEIGHTS_RESOURCE: Final = "weights.json"
#: The fitted pattern weights: zlib-compressed little-endian 16-bit integers, region by region.
PATTERNS_RESOURCE: Final = "patterns.bin"

#: Blocks of 4 rows by 4 columns, by the bit of their top left dark square: rows 0-3, 2-5
#: and 4-7 (a row pair takes 9 bits), columns 0-3, 2-5 and 4-7 (the next dark square).
_REGION_SHIFTS: Final[tuple[int, ...]] = (0, 1, 2, 9, 10, 11, 18, 19, 20)
#: The block's squares, from its top left one: two adjacent squares in each of 4 rows.
_REGION_OFFSETS: Final[tuple[int, ...]] = (0, 1, 5, 6, 9, 10, 14, 15)
_REGION_MASK: Final = sum(1 << offset for offset in _REGION_OFFSETS)
_REGION_SPAN: Final = _REGION_OFFSETS[-1]
PATTERN_REGIONS: Final = len(_REGION_SHIFTS)
PATTERN_CONFIGS: Final = 3 ** len(_REGION_OFFSETS)
#: Number of pattern weights: one per configuration of every region.
PATTERN_WEIGHTS: Final = PATTERN_REGIONS * PATTERN_CONFIGS


def _square_geometry() -> list[tuple[int, int, int]]:
    """(bit index, row from the top, column) for squares 1..32."""
    out = []
    for n in range(1, 33):
        row, i = divmod(n - 1, 4)
        column = 2 * i + (row & 1)
        out.append((SQUARE_BIT[n].bit_length() - 1, row, column))
    return out


_GEOMETRY: Final = _square_geometry()
#: White's back row squares that matter most as guards (29 .. 32 is the row;
#: 30 and 31 stop the most promotions), and Black's mirror images.
_WHITE_GUARD: Final = SQUARE_BIT[30] | SQUARE_BIT[31] | SQUARE_BIT[29]
_BLACK_GUARD: Final = SQUARE_BIT[3] | SQUARE_BIT[2] | SQUARE_BIT[4]
#: Men one or two steps from promotion: only they can be runaways.
_WHITE_RUNNERS: Final = sum(SQUARE_BIT[n] for n in range(5, 13))
_BLACK_RUNNERS: Final = sum(SQUARE_BIT[n] for n in range(21, 29))


def _men_counts(row: int, column: int) -> dict[str, int]:
    """Phased feature counts of one White man on (row, column); rows relative to White."""
    relative = 7 - row
    edge_distance = min(column, 7 - column)
    counts = {"man": 1}
    if 1 <= relative <= 6:
        counts[f"row{relative}"] = 1
    if edge_distance == 0:
        counts["edge"] = 1
    elif edge_distance < 3:
        counts[f"file{edge_distance}"] = 1
    return counts


def _king_counts(row: int, column: int) -> dict[str, int]:
    centre = min(row, 7 - row) + min(column, 7 - column)
    return {"king": 1, "king_centre": centre}


def _square_counts() -> tuple[list[dict[str, int]], list[dict[str, int]]]:
    """Per bit index: phased counts of a White man / White king standing there."""
    men: list[dict[str, int]] = [{} for _ in range(36)]
    kings: list[dict[str, int]] = [{} for _ in range(36)]
    for index, row, column in _GEOMETRY:
        men[index] = _men_counts(row, column)
        kings[index] = _king_counts(row, column)
    return men, kings


_MEN_COUNTS, _KING_COUNTS = _square_counts()


def _mirror_bits(bits: int) -> int:
    """Board turned half a turn (square n <-> 33 - n): Black's view as White's."""
    out = 0
    for n in range(1, 33):
        if bits & SQUARE_BIT[n]:
            out |= SQUARE_BIT[33 - n]
    return out


def _chunk_tables(values: list[int]) -> tuple[list[int], list[int], list[int]]:
    """Three 4096-entry tables: sum of ``values[bit]`` over the set bits of a 12-bit chunk."""
    tables = []
    for chunk in range(3):
        table = [0] * 4096
        for x in range(1, 4096):
            low = x & -x
            table[x] = table[x ^ low] + values[12 * chunk + low.bit_length() - 1]
        tables.append(table)
    return tables[0], tables[1], tables[2]


def _digit_table(offsets: Sequence[int], digit: int) -> list[int]:
    """By the bits of a block shifted down and masked: the base-3 number with ``digit`` in
    place ``3**k`` when the block's k-th square (bit ``offsets[k]``) is set, 0 elsewhere."""
    table = [0] * (_REGION_MASK + 1)
    for x in range(1 << len(offsets)):
        bits = value = 0
        for k, offset in enumerate(offsets):
            if x >> k & 1:
                bits |= 1 << offset
                value += digit * 3 ** k
        table[bits] = value
    return table


#: With Black to move the board is turned, which reverses the 36 bits: the block at
#: shift s of Black's view is the real board's block at shift 35 - span - s, its
#: k-th square at the reversed offset.
_TURNED_SHIFTS: Final = tuple(35 - _REGION_SPAN - shift for shift in _REGION_SHIFTS)
_TURNED_OFFSETS: Final = tuple(_REGION_SPAN - offset for offset in _REGION_OFFSETS)
#: Configuration digits of the mover's men (1) and its opponent's (2), by block bits.
_US: Final = _digit_table(_REGION_OFFSETS, 1)
_THEM: Final = _digit_table(_REGION_OFFSETS, 2)
_US_TURNED: Final = _digit_table(_TURNED_OFFSETS, 1)
_THEM_TURNED: Final = _digit_table(_TURNED_OFFSETS, 2)


def _neighbours(bits: int) -> int:
    return ((bits >> 4) | (bits >> 5) | (bits << 4) | (bits << 5)) & BOARD


def _by_slot(values: dict[int, int]) -> list[int]:
    """A table by square bit as a list by the bit's slot (``bit % BIT_SLOTS``), cheaper to read."""
    table = [0] * BIT_SLOTS
    for bit, value in values.items():
        table[bit % BIT_SLOTS] = value
    return table


#: Diagonal neighbours by square bit's slot.
_NEIGHBOURS: Final = _by_slot({SQUARE_BIT[n]: _neighbours(SQUARE_BIT[n]) for n in range(1, 33)})


class Evaluator:
    """The evaluation for one set of weights (missing names take the defaults) and of
    pattern weights (:data:`PATTERN_WEIGHTS` integers indexed as :func:`pattern_indices`
    gives them; none: no patterns)."""

    def __init__(self, weights: dict[str, float] | None = None, patterns: Sequence[int] | None = None) -> None:
        merged: dict[str, float] = dict(DEFAULT_WEIGHTS)
        if weights:
            unknown = set(weights) - set(FEATURES)
            if unknown:
                raise ValueError(f"unknown evaluation weights: {', '.join(sorted(unknown))}")
            merged.update(weights)
        self.weights: dict[str, int] = {name: int(round(merged[name])) for name in FEATURES}
        w = self.weights
        pairs = []
        for index in range(36):
            # The back-row guard is a plain (unphased) square feature: the same
            # weight in both halves of the packed value blends to itself.
            guard = w["back_guard"] if (1 << index) & _WHITE_GUARD else 0
            pairs.append((sum(w[f"{k}_mg"] * c for k, c in _MEN_COUNTS[index].items()) + guard,
                          sum(w[f"{k}_eg"] * c for k, c in _MEN_COUNTS[index].items()) + guard,
                          sum(w[f"{k}_mg"] * c for k, c in _KING_COUNTS[index].items()),
                          sum(w[f"{k}_eg"] * c for k, c in _KING_COUNTS[index].items())))
        # Each half of a packed sum must hold the largest sum of 24 pieces' values;
        # with the usual weights both halves fit in one 30-bit digit of a Python
        # int, whose arithmetic CPython does on a fast path.
        largest = PIECES * max(abs(value) for pair in pairs for value in pair)
        self._shift = shift = max(15, largest.bit_length() + 1)
        self._half = 1 << (shift - 1)
        self._low = (1 << shift) - 1
        white_men = [mg_m + (eg_m << shift) for mg_m, eg_m, _, _ in pairs]
        white_kings = [mg_k + (eg_k << shift) for _, _, mg_k, eg_k in pairs]
        black_men = [0] * 36
        # Black's value on a square is White's on the mirrored square, negated.
        for n in range(1, 33):
            index = SQUARE_BIT[n].bit_length() - 1
            mirror = SQUARE_BIT[33 - n].bit_length() - 1
            black_men[index] = -white_men[mirror]
        self._wm = _chunk_tables(white_men)
        self._bm = _chunk_tables(black_men)
        #: Packed value of a king by its square bit's slot, for each colour (Black's is
        #: White's on the half-turn mirror square, negated).
        self._white_king_values = _by_slot({1 << i: white_kings[i] for i in range(36)})
        self._black_king_values = _by_slot({
            SQUARE_BIT[n]: -white_kings[SQUARE_BIT[33 - n].bit_length() - 1] for n in range(1, 33)})
        self._men_mobility = w["men_mobility"]
        self._king_mobility = w["king_mobility"]
        self._trapped_king = w["trapped_king"]
        self._runaway1 = w["runaway1"]
        self._runaway2 = w["runaway2"]
        self._tempo = w["tempo"]
        if patterns is not None and len(patterns) != PATTERN_WEIGHTS:
            raise ValueError(f"expected {PATTERN_WEIGHTS} pattern weights, not {len(patterns)}")
        self.patterns: list[int] = [int(value) for value in patterns] if patterns is not None else []
        self._has_patterns = any(self.patterns)
        regions = [self.patterns[r * PATTERN_CONFIGS:(r + 1) * PATTERN_CONFIGS] for r in range(PATTERN_REGIONS)]
        #: Pattern weights by block, in the order of the real board's shifts: the turned
        #: board's blocks come in reverse.
        self._white_patterns = regions
        self._black_patterns = regions[::-1]

    @classmethod
    def from_file(cls, path: str) -> Evaluator:
        """Load weights from a JSON object ``{name: value}`` (a ``weights`` key is also accepted)."""
        with open(path, encoding="utf-8") as handle:
            return cls(_weights_of_json(handle.read(), path))

    def evaluate(self, us: int, them: int, kings: int, white: bool) -> int:
        """Score for the side owning ``us`` (``white`` is its colour), which must have
        no capture: a position with a capture is not quiet, its static score means
        nothing, and a side whose only moves are captures would be taken for one
        without moves. The search keeps this precondition (it evaluates only in
        the quiescence search, once every capture is played out).

        Returns :data:`NO_MOVES` when that side cannot move; known endings get
        0 (dead draw) or about :data:`KNOWN_WIN` (an estimate, never a proof).
        """
        if white:
            w, b = us, them
        else:
            w, b = them, us
        if kings:
            wm = w & ~kings
            bm = b & ~kings
        else:
            wm, bm = w, b
        empty = BOARD ^ w ^ b
        w0, w1, w2 = self._wm
        b0, b1, b2 = self._bm
        packed = (w0[wm & 4095] + w1[(wm >> 12) & 4095] + w2[wm >> 24]
                  + b0[bm & 4095] + b1[(bm >> 12) & 4095] + b2[bm >> 24])
        w_steps = ((wm >> 4) | (wm >> 5)) & empty
        b_steps = ((bm << 4) | (bm << 5)) & empty
        plain = (popcount(w_steps) - popcount(b_steps)) * self._men_mobility
        mobile_w = w_steps
        mobile_b = b_steps
        if kings:
            # Kings are few: one at a time is cheaper than whole-board masks.
            white_values = self._white_king_values
            black_values = self._black_king_values
            mobility = 0
            trapped = 0
            bits = w & kings
            while bits:
                low = bits & -bits
                bits ^= low
                slot = low % BIT_SLOTS
                packed += white_values[slot]
                moves = _NEIGHBOURS[slot] & empty
                if moves:
                    mobility += popcount(moves)
                    mobile_w |= moves
                else:
                    trapped += 1
            bits = b & kings
            while bits:
                low = bits & -bits
                bits ^= low
                slot = low % BIT_SLOTS
                packed += black_values[slot]
                moves = _NEIGHBOURS[slot] & empty
                if moves:
                    mobility -= popcount(moves)
                    mobile_b |= moves
                else:
                    trapped -= 1
            plain += mobility * self._king_mobility + trapped * self._trapped_king
        if not (mobile_w if white else mobile_b):
            return NO_MOVES
        if wm & _WHITE_RUNNERS or bm & _BLACK_RUNNERS:
            free_w = empty & WHITE_PROMOTION
            free_b = empty & BLACK_PROMOTION
            below_w = (free_w << 4) | (free_w << 5)
            below_b = (free_b >> 4) | (free_b >> 5)
            step_w = below_w & empty
            step_b = below_b & empty
            plain += ((popcount(below_w & wm) - popcount(below_b & bm)) * self._runaway1
                      + (popcount(((step_w << 4) | (step_w << 5)) & wm)
                         - popcount(((step_b >> 4) | (step_b >> 5)) & bm)) * self._runaway2)
        n = popcount(w | b)
        half = self._half
        t = packed + half
        blended = ((t & self._low) - half) * n + (t >> self._shift) * (PIECES - n)
        # Divide on the mover's side of zero so both colours round alike.
        if white:
            score = blended // PIECES + plain + self._tempo
        else:
            score = -blended // PIECES - plain + self._tempo
        if self._has_patterns:
            if white:
                u, t, mine, theirs, patterns = wm, bm, _US, _THEM, self._white_patterns
            else:
                u, t, mine, theirs, patterns = bm, wm, _US_TURNED, _THEM_TURNED, self._black_patterns
            p0, p1, p2, p3, p4, p5, p6, p7, p8 = patterns
            m = _REGION_MASK
            # Unrolled over _REGION_SHIFTS: a loop costs more than the lookups.
            score += (p0[mine[u & m] + theirs[t & m]]
                      + p1[mine[(u >> 1) & m] + theirs[(t >> 1) & m]]
                      + p2[mine[(u >> 2) & m] + theirs[(t >> 2) & m]]
                      + p3[mine[(u >> 9) & m] + theirs[(t >> 9) & m]]
                      + p4[mine[(u >> 10) & m] + theirs[(t >> 10) & m]]
                      + p5[mine[(u >> 11) & m] + theirs[(t >> 11) & m]]
                      + p6[mine[(u >> 18) & m] + theirs[(t >> 18) & m]]
                      + p7[mine[(u >> 19) & m] + theirs[(t >> 19) & m]]
                      + p8[mine[(u >> 20) & m] + theirs[(t >> 20) & m]])
        if n <= 6:
            return _endgame(score, us & ~kings, us & kings, them & ~kings, them & kings)
        return score


def _endgame(score: int, men: int, kings: int, their_men: int, their_kings: int) -> int:
    """Small-ending knowledge on top of the linear score (mover's view)."""
    mine = popcount(men | kings)
    theirs = popcount(their_men | their_kings)
    if not (men or their_men):
        if mine == theirs and mine <= 2:
            return 0  # 1 king v 1 king, 2 v 2: no way to force anything
    if theirs == 1 and popcount(kings) >= 2:
        return KNOWN_WIN + 10 * mine - _mop_up(kings, their_men | their_kings)
    if mine == 1 and popcount(their_kings) >= 2:
        return -(KNOWN_WIN + 10 * theirs - _mop_up(their_kings, men | kings))
    if not (men or their_men) and abs(mine - theirs) <= 1 and min(mine, theirs) >= 2:
        return score // 4 if score >= 0 else -(-score // 4)  # even king endings are drawish
    return score


#: (row, column) by square bit.
_PLACE: Final[dict[int, tuple[int, int]]] = {1 << index: (row, column) for index, row, column in _GEOMETRY}


def _mop_up(hunters: int, prey: int) -> int:
    """Penalty steering a won king ending: the lone piece in the centre and far
    from the hunting kings scores worse, so the search drives it to the edge
    and closes in (the win itself is usually beyond the horizon)."""
    total = 0
    while prey:
        low = prey & -prey
        prey ^= low
        row, column = _PLACE[low]
        total += 5 * (min(row, 7 - row) + min(column, 7 - column))
        bits = hunters
        while bits:
            hunter = bits & -bits
            bits ^= hunter
            h_row, h_column = _PLACE[hunter]
            total += 3 * max(abs(h_row - row), abs(h_column - column))
    return total


def features(us: int, them: int, kings: int, white: bool) -> list[float]:
    """The feature vector, in the order of :data:`FEATURES`, from the side to move's view.

    ``Evaluator(w, patterns).evaluate(...)`` equals ``sum(w[f] * x)`` over this vector
    up to rounding, plus ``patterns[i]`` for each ``i`` of :func:`pattern_indices`,
    except for the endgame-knowledge overrides and the no-move case.
    """
    w, b = (us, them) if white else (them, us)
    wk = w & kings
    bk = b & kings
    wm = w ^ wk
    bm = b ^ bk
    empty = BOARD ^ w ^ b
    n = (w | b).bit_count()
    phased: dict[str, int] = {name: 0 for name in PHASED}
    mirror_bm = _mirror_bits(bm)
    mirror_bk = _mirror_bits(bk)
    for index in range(36):
        bit = 1 << index
        for bits, table, sign in ((wm, _MEN_COUNTS, 1), (mirror_bm, _MEN_COUNTS, -1),
                                  (wk, _KING_COUNTS, 1), (mirror_bk, _KING_COUNTS, -1)):
            if bits & bit:
                for name, count in table[index].items():
                    phased[name] += sign * count
    free = _neighbours(empty)
    free_w = empty & WHITE_PROMOTION
    free_b = empty & BLACK_PROMOTION
    step_w = ((free_w << 4) | (free_w << 5)) & empty
    step_b = ((free_b >> 4) | (free_b >> 5)) & empty
    plain = {
        "men_mobility": (((wm >> 4) | (wm >> 5)) & empty).bit_count() - (((bm << 4) | (bm << 5)) & empty).bit_count(),
        "king_mobility": _king_moves(wk, empty) - _king_moves(bk, empty),
        "trapped_king": (wk & ~free).bit_count() - (bk & ~free).bit_count(),
        "runaway1": (((free_w << 4) | (free_w << 5)) & wm).bit_count() - (((free_b >> 4) | (free_b >> 5)) & bm).bit_count(),
        "runaway2": (((step_w << 4) | (step_w << 5)) & wm).bit_count() - (((step_b >> 4) | (step_b >> 5)) & bm).bit_count(),
        "tempo": 0,
        "back_guard": (wm & _WHITE_GUARD).bit_count() - (bm & _BLACK_GUARD).bit_count(),
    }
    sign = 1 if white else -1
    vector: list[float] = []
    for name in PHASED:
        vector.append(sign * phased[name] * n / PIECES)
        vector.append(sign * phased[name] * (PIECES - n) / PIECES)
    for name in PLAIN:
        vector.append(1.0 if name == "tempo" else float(sign * plain[name]))
    return vector


def pattern_indices(us: int, them: int, kings: int, white: bool) -> list[int]:
    """The pattern weights the position adds, one per region: ``region * PATTERN_CONFIGS``
    plus the region's configuration, the base-3 number whose k-th digit (place ``3**k``)
    tells what stands on the region's k-th square, counted in FID order on the board seen
    by the side to move (turned when that is Black): 0 nothing or a king, 1 a man of the
    side to move, 2 a man of its opponent. Regions are numbered from the top left block,
    across then down."""
    u = us & ~kings
    t = them & ~kings
    if white:
        mine, theirs, shifts = _US, _THEM, _REGION_SHIFTS
    else:
        mine, theirs, shifts = _US_TURNED, _THEM_TURNED, _TURNED_SHIFTS
    return [region * PATTERN_CONFIGS + mine[(u >> shift) & _REGION_MASK] + theirs[(t >> shift) & _REGION_MASK]
            for region, shift in enumerate(shifts)]


def _king_moves(kings: int, empty: int) -> int:
    """Steps open to the kings, counted per king."""
    return sum((_NEIGHBOURS[SQUARE_BIT[n] % BIT_SLOTS] & empty).bit_count() for n in range(1, 33) if kings & SQUARE_BIT[n])


def _weights_of_json(text: str, origin: str) -> dict[str, float]:
    data = json.loads(text)
    if isinstance(data, dict) and isinstance(data.get("weights"), dict):
        data = data["weights"]
    if not isinstance(data, dict):
        raise ValueError(f"{origin}: expected a JSON object of weights")
    return {str(k): float(v) for k, v in data.items()}


def shipped_weights() -> dict[str, float]:
    """The tuned weights that ship with the package (``pedina/weights.json``)."""
    text = importlib.resources.files("pedina").joinpath(WEIGHTS_RESOURCE).read_text(encoding="utf-8")
    return _weights_of_json(text, f"pedina/{WEIGHTS_RESOURCE}")


def encode_patterns(patterns: Sequence[int]) -> bytes:
    """Pattern weights as :data:`PATTERNS_RESOURCE` holds them (each within 16 bits)."""
    values = array.array("h", patterns)
    if sys.byteorder == "big":
        values.byteswap()
    return zlib.compress(values.tobytes(), 9)


def decode_patterns(data: bytes, origin: str) -> list[int]:
    """The pattern weights of :func:`encode_patterns`'s ``data`` (``origin`` names it in errors)."""
    values = array.array("h")
    try:
        values.frombytes(zlib.decompress(data))
    except (zlib.error, ValueError) as error:
        raise ValueError(f"{origin}: not a pattern weights file ({error})") from None
    if len(values) != PATTERN_WEIGHTS:
        raise ValueError(f"{origin}: {len(values)} pattern weights, expected {PATTERN_WEIGHTS}")
    if sys.byteorder == "big":
        values.byteswap()
    return values.tolist()


def shipped_patterns() -> list[int]:
    """The fitted pattern weights that ship with the package (``pedina/patterns.bin``)."""
    data = importlib.resources.files("pedina").joinpath(PATTERNS_RESOURCE).read_bytes()
    return decode_patterns(data, f"pedina/{PATTERNS_RESOURCE}")


def default_evaluator() -> Evaluator:
    """The evaluation with the shipped (tuned) weights and pattern weights."""
    return Evaluator(shipped_weights(), shipped_patterns())
