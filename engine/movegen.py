"""Legal move generation on bitboards (the hot core of perft and search).

A position is three bitboards in the layout of :mod:`engine.squares` (White's
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

from engine.squares import (
    BLACK_PROMOTION,
    BOARD,
    WHITE_PROMOTION,
)

RawMove = tuple[int, int, int, int, tuple[int, ...]]


def generate(us: int, them: int, kings: int, white: bool) -> list[RawMove]:
    """All legal moves for the side owning ``us``; ``white`` tells its colour.

    Captures are compulsory and filtered by the precedence rules; when there is
    none, the steps of men (forward only) and kings (any diagonal).
    """
    empty = BOARD & ~(us | them)
    moves = generate_captures(us, them, kings, white, empty)
    if moves:
        return moves
    king_bits = us & kings
    promotion = WHITE_PROMOTION if white else BLACK_PROMOTION
    # Sources and targets of one direction are the same bits shifted, so their
    # lowest bits pair up and no per-move shift is needed.
    men = us & ~kings
    for step in (4, 5):
        if white:
            targets = (men >> step) & empty
            sources = targets << step
        else:
            targets = (men << step) & empty
            sources = targets >> step
        while targets:
            to = targets & -targets
            frm = sources & -sources
            targets ^= to
            sources ^= frm
            moves.append((frm, to, 0, to & promotion, ()))
    if king_bits:
        for step in (-4, -5, 4, 5):
            if step > 0:
                targets = (king_bits << step) & empty
                sources = targets >> step
            else:
                targets = (king_bits >> -step) & empty
                sources = targets << -step
            while targets:
                to = targets & -targets
                frm = sources & -sources
                targets ^= to
                sources ^= frm
                moves.append((frm, to, 0, frm | to, ()))
    return moves


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


def generate_captures(us: int, them: int, kings: int, white: bool, empty: int) -> list[RawMove]:
    """Legal captures only (empty list when none), after the precedence rules."""
    men = us & ~kings
    their_men = them & ~kings
    king_bits = us & kings
    # First jumps of men by direction: victims, landing squares, and how far
    # (in bits) a landing lies from its source, signed the way the men go.
    if white:
        victims4 = (men >> 4) & their_men & (empty << 4)
        victims5 = (men >> 5) & their_men & (empty << 5)
        landings4, landings5, back4, back5 = victims4 >> 4, victims5 >> 5, 8, 10
        promotion = WHITE_PROMOTION
    else:
        victims4 = (men << 4) & their_men & (empty >> 4)
        victims5 = (men << 5) & their_men & (empty >> 5)
        landings4, landings5, back4, back5 = victims4 << 4, victims5 << 5, -8, -10
        promotion = BLACK_PROMOTION
    king_jumps = bool(king_bits) and _kings_can_capture(king_bits, them, empty)
    if not (victims4 or victims5 or king_jumps):
        return []
    rejump = _rejump_squares(empty, their_men, white) & ~promotion
    first_jumps = ((victims4, landings4, back4), (victims5, landings5, back5))
    men_moves = _men_captures(first_jumps, their_men, empty, promotion, rejump, white) if victims4 or victims5 else []
    if not king_jumps:
        return men_moves
    # Men take no kings, so the order of their victims does not matter to _select.
    sequences = [(frm, False, _single_bits(taken), path) for frm, _, taken, _, path in men_moves]
    for step in (-4, -5, 4, 5):
        if step > 0:
            sources = (((empty >> step) & them) >> step) & king_bits
        else:
            sources = (((empty << -step) & them) << -step) & king_bits
        while sources:
            frm = sources & -sources
            sources ^= frm
            _king_sequences(frm, frm, them, empty | frm, 0, (), (), sequences)
    return _select(sequences, kings, promotion)


def _single_bits(bits: int) -> tuple[int, ...]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low)
        bits ^= low
    return tuple(out)


def _men_captures(first_jumps: tuple[tuple[int, int, int], ...], their_men: int, empty: int,
                  promotion: int, rejump: int, white: bool) -> list[RawMove]:
    """The captures of men: their longest sequences, all legal among themselves.

    Men take only men, so criteria 2-4 cannot decide between them; and a man's
    victims lie on ever further rows, so no piece can be jumped twice and two
    sequences with one start and one captured set are the same path. A first
    jump landing outside ``rejump`` ends there (the common case).
    """
    singles: list[RawMove] = []
    found: list[tuple[int, int, tuple[int, ...]]] = []
    for victims, landings, back in first_jumps:
        sources = landings << back if back > 0 else landings >> -back
        while victims:
            victim = victims & -victims
            to = landings & -landings
            frm = sources & -sources
            victims ^= victim
            landings ^= to
            sources ^= frm
            if to & rejump:
                _man_sequences(frm, to, victim, (to,), their_men, empty, promotion, white, found)
            else:
                singles.append((frm, to, victim, to & promotion, (to,)))
    if not found:
        return singles
    longest = max([len(path) for _, _, path in found])
    moves = [(frm, path[-1], taken, path[-1] & promotion, path)
             for frm, taken, path in found if len(path) == longest]
    return moves + singles if longest == 1 else moves


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


def _king_sequences(
    start: int,
    here: int,
    them: int,
    empty: int,
    taken: int,
    captured: tuple[int, ...],
    path: tuple[int, ...],
    out: list[tuple[int, bool, tuple[int, ...], tuple[int, ...]]],
) -> None:
    """Depth-first search of every complete capture sequence of a king now on ``here``.

    Captured pieces stay on the board until the move ends, so they block landing
    squares and cannot be jumped again; ``start`` counts as empty (``empty``
    includes it), so a king may pass over or end on its own start square.
    """
    extended = False
    free = them & ~taken
    down4, down5, up4, up5 = (here << 4) & free, (here << 5) & free, (here >> 4) & free, (here >> 5) & free
    for victim, landing in ((up4, (up4 >> 4) & empty), (up5, (up5 >> 5) & empty),
                            (down4, (down4 << 4) & empty), (down5, (down5 << 5) & empty)):
        if landing:
            extended = True
            _king_sequences(start, landing, them, empty, taken | victim, captured + (victim,),
                            path + (landing,), out)
    if not extended and captured:
        out.append((start, True, captured, path))


def _select(
    sequences: list[tuple[int, bool, tuple[int, ...], tuple[int, ...]]],
    kings: int,
    promotion: int,
) -> list[RawMove]:
    """Apply the precedence criteria, then merge sequences giving the same move."""
    best: tuple[int, bool, int, tuple[int, ...]] | None = None
    chosen: list[tuple[int, bool, tuple[int, ...], tuple[int, ...]]] = []
    for sequence in sequences:
        start, is_king, captured, _ = sequence
        king_jumps = tuple(-i for i, victim in enumerate(captured) if victim & kings) if kings else ()
        # Criteria 1-4 as one ordered key: count, capturer is a king, kings taken,
        # then the jump indices of the kings (earlier is better, so negated).
        key = (len(captured), is_king, len(king_jumps), king_jumps)
        if best is None or key > best:
            best = key
            chosen = [sequence]
        elif key == best:
            chosen.append(sequence)
    moves: list[RawMove] = []
    seen: set[tuple[int, int, int]] = set()
    for start, is_king, captured, path in chosen:
        end = path[-1]
        taken = 0
        for victim in captured:
            taken |= victim
        identity = (start, end, taken)
        if identity in seen:
            continue
        seen.add(identity)
        if is_king:
            toggle = (start ^ end) | (taken & kings)
        else:
            toggle = (end & promotion) | (taken & kings)
        moves.append((start, end, taken, toggle, path))
    return moves
