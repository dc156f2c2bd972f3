"""Legal move generation on bitboards (the hot core of perft and search).

A position is three bitboards in the layout of :mod:`pedina.squares` (White's
pieces, Black's pieces, kings of either colour) and the side to move. Moves come
out as *raw moves*, plain tuples that make a move in three xors::

    (from_bit, to_bit, captured_bits, king_toggle, path)

    white' = white ^ from_bit ^ to_bit      (the mover's side)
    black' = black ^ captured_bits          (the other side)
    kings' = kings ^ king_toggle

``king_toggle`` already folds in the mover being a king, a promotion and the
captured kings. ``path`` is the landing squares of a capture as bits, end
included, and ``()`` for a step. A ring capture has ``from_bit == to_bit``.
"""

from __future__ import annotations

from typing import Final, cast

from pedina.squares import (
    BIT_SLOTS,
    BLACK_PROMOTION,
    BOARD,
    SQUARE_BIT,
    WHITE_PROMOTION,
)

RawMove = tuple[int, int, int, int, tuple[int, ...]]


def _shifted(bits: int, shift: int) -> int:
    """``bits`` moved ``shift`` places towards square 32 (negative: towards square 1)."""
    return bits << shift if shift > 0 else bits >> -shift


#: What a table by square holds where no move ends (its from square is none).
_NO_MOVE: Final[RawMove] = (0, 0, 0, 0, ())


def _step_moves(shift: int, promotion: int, king: bool) -> list[object]:
    """Every non-capturing step ``shift`` bits towards square 32 (negative: towards square 1),
    by its target bit's slot (``to % BIT_SLOTS``); for men (promoted on ``promotion``) or
    for kings."""
    table: list[object] = [_NO_MOVE] * BIT_SLOTS
    for frm in SQUARE_BIT[1:]:
        to = _shifted(frm, shift)
        if to & BOARD:
            table[to % BIT_SLOTS] = (frm, to, 0, frm | to if king else to & promotion, ())
    return table


# Steps are built once and shared: generating one is a lookup, not a new tuple. The tables and
# the lists of steps hold them as objects: compiled, a RawMove read from a list is unpacked, and
# storing it packs it into a new tuple, where the shared one is what the search hashes and compares.
_WHITE_MAN_STEPS: Final = (_step_moves(-4, WHITE_PROMOTION, False), _step_moves(-5, WHITE_PROMOTION, False))
_BLACK_MAN_STEPS: Final = (_step_moves(4, BLACK_PROMOTION, False), _step_moves(5, BLACK_PROMOTION, False))
_KING_STEPS_UP: Final = (_step_moves(-4, 0, True), _step_moves(-5, 0, True))
_KING_STEPS_DOWN: Final = (_step_moves(4, 0, True), _step_moves(5, 0, True))


def generate(us: int, them: int, kings: int, white: bool) -> list[RawMove]:
    """All legal moves for the side owning ``us``; ``white`` tells its colour.

    Captures are compulsory and filtered by the precedence rules; when there is
    none, the steps of men (forward only) and kings (any diagonal).
    """
    empty = BOARD & ~(us | them)
    return generate_captures(us, them, kings, white, empty) or generate_non_captures(us, kings, white, empty)


def generate_non_captures(us: int, kings: int, white: bool, empty: int) -> list[RawMove]:
    """The steps of men (forward only) and kings (any diagonal) of the side owning
    ``us``: its legal moves when it has no capture."""
    moves: list[object] = []
    men = us & ~kings
    if white:
        _add_steps(moves, _WHITE_MAN_STEPS[0], (men >> 4) & empty)
        _add_steps(moves, _WHITE_MAN_STEPS[1], (men >> 5) & empty)
    else:
        _add_steps(moves, _BLACK_MAN_STEPS[0], (men << 4) & empty)
        _add_steps(moves, _BLACK_MAN_STEPS[1], (men << 5) & empty)
    king_bits = us & kings
    if king_bits:
        _add_steps(moves, _KING_STEPS_UP[0], (king_bits >> 4) & empty)
        _add_steps(moves, _KING_STEPS_UP[1], (king_bits >> 5) & empty)
        _add_steps(moves, _KING_STEPS_DOWN[0], (king_bits << 4) & empty)
        _add_steps(moves, _KING_STEPS_DOWN[1], (king_bits << 5) & empty)
    return cast("list[RawMove]", moves)


def _add_steps(moves: list[object], table: list[object], targets: int) -> None:
    """Append the step of ``table`` to each target bit in ``targets``, lowest first."""
    while targets:
        to = targets & -targets
        targets ^= to
        moves.append(table[to % BIT_SLOTS])


def step_move(us: int, kings: int, white: bool, empty: int, frm: int, to: int) -> RawMove | None:
    """The step from square bit ``frm`` to ``to`` when the side owning ``us`` may make it with
    no capture due (its piece, an empty target, a man going forward), else ``None``."""
    if not frm & us or not to & empty:
        return None
    if frm & kings:
        tables = _KING_STEPS_UP if to < frm else _KING_STEPS_DOWN
    else:
        tables = _WHITE_MAN_STEPS if white else _BLACK_MAN_STEPS
    for table in tables:
        move = table[to % BIT_SLOTS]
        if cast(RawMove, move)[0] == frm:
            return cast("RawMove | None", move)
    return None


def count_moves(us: int, them: int, kings: int, white: bool) -> int:
    """Number of legal moves, without building them in the usual cases.

    This is perft's bulk count of the last ply, so it is written flat, with the
    shifts spelled out for each colour (men go up for White, down for Black).
    When every capture is a single jump by a man, they all tie on the
    precedence criteria and a popcount gives their number.
    """
    empty = BOARD & ~(us | them)
    if kings:
        king_bits = us & kings
        if king_bits and _kings_can_capture(king_bits, them, empty):
            return len(generate_captures(us, them, kings, white, empty))
        men = us ^ king_bits
        their_men = them & ~kings
    else:
        king_bits, men, their_men = 0, us, them
    if white:
        jumps4 = (men >> 4) & their_men & (empty << 4)
        jumps5 = (men >> 5) & their_men & (empty << 5)
        if jumps4 or jumps5:
            if ((jumps4 >> 4) | (jumps5 >> 5)) & _rejump_squares(empty, their_men, True) & ~WHITE_PROMOTION:
                return len(generate_captures(us, them, kings, white, empty))
            return jumps4.bit_count() + jumps5.bit_count()
        moves = ((us >> 4) & empty).bit_count() + ((us >> 5) & empty).bit_count()
        if king_bits:
            moves += ((king_bits << 4) & empty).bit_count() + ((king_bits << 5) & empty).bit_count()
        return moves
    jumps4 = (men << 4) & their_men & (empty >> 4)
    jumps5 = (men << 5) & their_men & (empty >> 5)
    if jumps4 or jumps5:
        if ((jumps4 << 4) | (jumps5 << 5)) & _rejump_squares(empty, their_men, False) & ~BLACK_PROMOTION:
            return len(generate_captures(us, them, kings, white, empty))
        return jumps4.bit_count() + jumps5.bit_count()
    moves = ((us << 4) & empty).bit_count() + ((us << 5) & empty).bit_count()
    if king_bits:
        moves += ((king_bits >> 4) & empty).bit_count() + ((king_bits >> 5) & empty).bit_count()
    return moves


#: What :func:`generate_captures` gives a position with no capture: one list, never changed by
#: its callers, so that the search's quiet nodes (most of its nodes) make no list of their own.
_NO_CAPTURES: Final[list[RawMove]] = []


def generate_captures(us: int, them: int, kings: int, white: bool, empty: int) -> list[RawMove]:
    """Legal captures only, after the precedence rules; when there are none, an empty list
    that is shared: read it, never change it."""
    if kings:
        men = us & ~kings
        their_men = them & ~kings
        king_bits = us & kings
    else:
        men, their_men, king_bits = us, them, 0
    # Landing squares of the men's first jumps, by direction.
    if white:
        landings4 = (((men >> 4) & their_men) >> 4) & empty
        landings5 = (((men >> 5) & their_men) >> 5) & empty
    else:
        landings4 = (((men << 4) & their_men) << 4) & empty
        landings5 = (((men << 5) & their_men) << 5) & empty
    men_moves = _men_captures(landings4, landings5, their_men, empty, white) if landings4 or landings5 else _NO_CAPTURES
    if not king_bits:
        return men_moves
    # Kings are few, so each one's sequences are searched from its square.
    sequences: list[tuple[int, tuple[int, ...], tuple[int, ...], int]] = []
    while king_bits:
        king = king_bits & -king_bits
        king_bits ^= king
        _king_sequences(king, king, them, empty | king, 0, (), (), sequences)
    return _select(men_moves, sequences, kings) if sequences else men_moves


def _jump_moves(shift: int, promotion: int) -> list[object]:
    """Every single jump of a man two steps of ``shift`` bits (negative: towards
    square 1), by its landing bit's slot (``to % BIT_SLOTS``); held as the steps are."""
    table: list[object] = [_NO_MOVE] * BIT_SLOTS
    for frm in SQUARE_BIT[1:]:
        victim = _shifted(frm, shift)
        to = _shifted(victim, shift)
        if victim & BOARD and to & BOARD:
            table[to % BIT_SLOTS] = (frm, to, victim, to & promotion, (to,))
    return table


_WHITE_JUMPS: Final = (_jump_moves(-4, WHITE_PROMOTION), _jump_moves(-5, WHITE_PROMOTION))
_BLACK_JUMPS: Final = (_jump_moves(4, BLACK_PROMOTION), _jump_moves(5, BLACK_PROMOTION))


def _men_captures(landings4: int, landings5: int, their_men: int, empty: int, white: bool) -> list[RawMove]:
    """The captures of men: their longest sequences, all legal among themselves.

    Men take only men, so criteria 2-4 cannot decide between them; and a man's
    victims lie on ever further rows, so no piece can be jumped twice and two
    sequences with one start and one captured set are the same path. A first
    jump landing where no further jump can start ends there (the common case); one landing
    where a further jump can start goes on, so such sequences outrank every single jump.
    """
    if white:
        promotion = WHITE_PROMOTION
        tables = _WHITE_JUMPS
    else:
        promotion = BLACK_PROMOTION
        tables = _BLACK_JUMPS
    rejump = _rejump_squares(empty, their_men, white) & ~promotion
    singles: list[object] = []
    found: list[tuple[int, int, tuple[int, ...]]] = []
    for direction in (0, 1):
        table = tables[direction]
        landings = landings5 if direction else landings4
        while landings:
            to = landings & -landings
            landings ^= to
            jump = table[to % BIT_SLOTS]
            if to & rejump:
                frm, _, victim, _, _ = cast(RawMove, jump)
                _man_sequences(frm, to, victim, (to,), their_men, empty, promotion, white, found)
            else:
                singles.append(jump)
    if not found:
        return cast("list[RawMove]", singles)
    longest = max([len(path) for _, _, path in found])
    moves = [(frm, path[-1], taken, path[-1] & promotion, path)
             for frm, taken, path in found if len(path) == longest]
    return moves


def _man_sequences(start: int, here: int, taken: int, path: tuple[int, ...], their_men: int, empty: int,
                   promotion: int, white: bool, out: list[tuple[int, int, tuple[int, ...]]]) -> None:
    """Every complete sequence of a man that started on ``start`` and has landed on ``here``."""
    if not here & promotion:
        if white:
            victim4 = (here >> 4) & their_men
            victim5 = (here >> 5) & their_men
            landing4 = (victim4 >> 4) & empty
            landing5 = (victim5 >> 5) & empty
        else:
            victim4 = (here << 4) & their_men
            victim5 = (here << 5) & their_men
            landing4 = (victim4 << 4) & empty
            landing5 = (victim5 << 5) & empty
        if landing4 or landing5:
            if landing4:
                _man_sequences(start, landing4, taken | victim4, path + (landing4,), their_men, empty,
                               promotion, white, out)
            if landing5:
                _man_sequences(start, landing5, taken | victim5, path + (landing5,), their_men, empty,
                               promotion, white, out)
            return
    out.append((start, taken, path))


def _rejump_squares(empty: int, their_men: int, white: bool) -> int:
    """Squares from which a man could jump (a man's later jumps depend only on the
    squares ahead of it, so this settles whether a first jump can go on)."""
    if white:
        return ((empty << 4) & their_men) << 4 | ((empty << 5) & their_men) << 5
    return ((empty >> 4) & their_men) >> 4 | ((empty >> 5) & their_men) >> 5


def _kings_can_capture(king_bits: int, them: int, empty: int) -> bool:
    return bool(((((king_bits >> 4) & them) >> 4) | (((king_bits >> 5) & them) >> 5)
                 | (((king_bits << 4) & them) << 4) | (((king_bits << 5) & them) << 5)) & empty)


def _king_jumps(here: int) -> tuple[tuple[int, int], ...]:
    """(victim, landing) of a king's jump from ``here``, in every direction that
    stays on the board: up 4, up 5, down 4, down 5 (the order moves come out in)."""
    pairs = []
    for shift in (-4, -5, 4, 5):
        victim = _shifted(here, shift)
        landing = _shifted(victim, shift)
        if victim & BOARD and landing & BOARD:
            pairs.append((victim, landing))
    return tuple(pairs)


def _king_jumps_by_slot() -> list[tuple[tuple[int, int], ...]]:
    """Each square's :func:`_king_jumps`, by its bit's slot (``bit % BIT_SLOTS``)."""
    table: list[tuple[tuple[int, int], ...]] = [()] * BIT_SLOTS
    for bit in SQUARE_BIT[1:]:
        table[bit % BIT_SLOTS] = _king_jumps(bit)
    return table


_KING_JUMPS: Final = _king_jumps_by_slot()


def _king_sequences(
    start: int,
    here: int,
    them: int,
    empty: int,
    taken: int,
    captured: tuple[int, ...],
    path: tuple[int, ...],
    out: list[tuple[int, tuple[int, ...], tuple[int, ...], int]],
) -> None:
    """Depth-first search of every complete capture sequence of a king now on ``here``.

    Captured pieces stay on the board until the move ends, so they block landing
    squares and cannot be jumped again; ``start`` counts as empty (``empty``
    includes it), so a king may pass over or end on its own start square.
    """
    extended = False
    free = them ^ taken
    for victim, landing in _KING_JUMPS[here % BIT_SLOTS]:
        if victim & free and landing & empty:
            extended = True
            _king_sequences(start, landing, them, empty, taken | victim, captured + (victim,),
                            path + (landing,), out)
    if not extended and captured:
        out.append((start, captured, path, taken))


def _select(men_moves: list[RawMove], sequences: list[tuple[int, tuple[int, ...], tuple[int, ...], int]],
            kings: int) -> list[RawMove]:
    """Apply the precedence criteria to the men's moves and the kings' sequences
    (start, captured in order, path, captured set), then merge sequences giving
    the same move."""
    # Criteria 1, 3 and 4 as one ordered key: count, kings taken, then the jump
    # indices of the kings (earlier is better, so negated). Criterion 2 (a king
    # before a man) is settled below, against the men's moves.
    best: tuple[int, int, tuple[int, ...]] | None = None
    chosen: list[tuple[int, tuple[int, ...], tuple[int, ...], int]] = []
    for sequence in sequences:
        captured = sequence[1]
        if sequence[3] & kings:
            king_jumps = tuple([-i for i, victim in enumerate(captured) if victim & kings])
            key = (len(captured), len(king_jumps), king_jumps)
        else:
            key = (len(captured), 0, ())
        if best is None or key > best:
            best = key
            chosen = [sequence]
        elif key == best:
            chosen.append(sequence)
    # The men's captures stand only when longer (criterion 1): at equal length
    # a king's goes first (criterion 2).
    if men_moves and best is not None and len(men_moves[0][4]) > best[0]:
        return men_moves
    moves: list[RawMove] = []
    seen: set[tuple[int, int, int]] = set()
    for start, _, path, taken in chosen:
        end = path[-1]
        identity = (start, end, taken)
        if identity not in seen:
            seen.add(identity)
            moves.append((start, end, taken, (start ^ end) | (taken & kings), path))
    return moves
