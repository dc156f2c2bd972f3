"""Perft: count the leaves of the legal-move tree, the standard move generator test."""

from __future__ import annotations

from pedina.movegen import count_moves, generate
from pedina.position import Position


def perft_bits(white: int, black: int, kings: int, white_to_move: bool, depth: int) -> int:
    """Leaves at ``depth`` plies below the position given as bitboards.

    The last ply is counted in bulk (:func:`pedina.movegen.count_moves`).
    """
    if white_to_move:
        if depth == 1:
            return count_moves(white, black, kings, True)
        moves = generate(white, black, kings, True)
        if depth == 2:
            return sum([count_moves(black ^ taken, white ^ frm ^ to, kings ^ toggle, False)
                        for frm, to, taken, toggle, _ in moves])
        return sum([perft_bits(white ^ frm ^ to, black ^ taken, kings ^ toggle, False, depth - 1)
                    for frm, to, taken, toggle, _ in moves])
    if depth == 1:
        return count_moves(black, white, kings, False)
    moves = generate(black, white, kings, False)
    if depth == 2:
        return sum([count_moves(white ^ taken, black ^ frm ^ to, kings ^ toggle, True)
                    for frm, to, taken, toggle, _ in moves])
    return sum([perft_bits(white ^ taken, black ^ frm ^ to, kings ^ toggle, True, depth - 1)
                for frm, to, taken, toggle, _ in moves])


def perft(position: Position, depth: int) -> int:
    """Number of leaf nodes ``depth`` plies below ``position`` (1 at depth 0)."""
    if depth <= 0:
        return 1
    return perft_bits(position.white, position.black, position.kings, position.white_to_move, depth)
