"""Legal-move sets against pydraughts (variant "italian"), an independent implementation.

Moves are compared as sets of (start, end, captured squares), since pydraughts
lists every capture path while Pedina merges paths that give the same position.
pydraughts applies precedence criterion 4 to the first captured king only, so
where several kings are taken it can return extra moves; every disagreement
must be exactly that (see :func:`explain`), anything else fails.
"""

from __future__ import annotations

from collections.abc import Callable

import draughts
import pytest

from conftest import CI
from pedina import Move, Position, legal_moves
from pedina.squares import SQUARE_BIT

Identity = tuple[int, int, frozenset[int]]

# Positions where pydraughts' first-king-only criterion 4 shows (found by random search).
KNOWN_DIFFERENCES = [
    "W:WK2,K16,K20,K31:BK3,K5,K6,K11,K12,19,K24,K26,K27,K29,K30",
    "W:WK9,K13,K17,K21:B1,2,K4,6,K11,K15,16,K18,K19,K26,27",
    "W:WK1,K7,K15:BK3,5,K13,K14,K18,20,21,K22,K23,K31",
]


def _coordinates(square: int) -> tuple[int, int]:
    row = (square - 1) // 4
    return row, 2 * ((square - 1) % 4) + row % 2


def _jumped(frm: int, to: int) -> int:
    """The square between the ends of a jump."""
    (row_a, col_a), (row_b, col_b) = _coordinates(frm), _coordinates(to)
    assert abs(row_a - row_b) == 2 and abs(col_a - col_b) == 2, (frm, to)
    return (row_a + row_b) // 2 * 4 + (col_a + col_b) // 4 + 1


def theirs(position: Position) -> dict[Identity, list[tuple[int, ...]]]:
    """pydraughts' legal moves: identity -> the capture orders of its paths."""
    board = draughts.Board("italian", position.fen())
    moves: dict[Identity, list[tuple[int, ...]]] = {}
    for move in board.legal_moves():
        steps = move.board_move
        captured = tuple(_jumped(a, b) for a, b in steps) if move.captures else ()
        # pydraughts' own capture list agrees with its path.
        assert sorted(captured) == sorted(move.captures), (position.fen(), steps, move.captures)
        moves.setdefault((steps[0][0], steps[-1][1], frozenset(captured)), []).append(captured)
    return moves


def ours(position: Position) -> dict[Identity, Move]:
    return {(m.start, m.end, frozenset(m.captured)): m for m in legal_moves(position)}


def _precedence(position: Position, start: int, captured: tuple[int, ...]) -> tuple[int, bool, int, tuple[int, ...]]:
    """Criteria 1-4 of a capture: count, capturer is a king, kings taken, jump indices of the kings."""
    kings = tuple(i for i, square in enumerate(captured) if SQUARE_BIT[square] & position.kings)
    return len(captured), bool(SQUARE_BIT[start] & position.kings), len(kings), kings


def explain(position: Position, mine: dict[Identity, Move], other: dict[Identity, list[tuple[int, ...]]]) -> str:
    """Why the sets differ, if it is pydraughts' first-king-only criterion 4; else AssertionError.

    Then our moves are a subset of pydraughts', all ours tie on criteria 1-4,
    and every extra pydraughts move ties with ours on criteria 1-3 and on the
    index of the first king taken, but takes a later king later than ours does.
    """
    where = f"{position.fen()}: ours {sorted(m.hub() for m in mine.values())}, pydraughts {sorted(map(str, other))}"
    assert mine and set(mine) < set(other), f"not a first-king-only difference: {where}"
    keys = {_precedence(position, m.start, m.captured) for m in mine.values()}
    assert len(keys) == 1, f"our moves do not tie on criteria 1-4: {where}"
    (best,) = keys
    count, by_king, king_count, king_jumps = best
    assert count and king_count >= 2, f"not a several-kings capture: {where}"
    for identity in set(other) - set(mine):
        # Several paths of one pydraughts move: the most favourable decides.
        extra = min((_precedence(position, identity[0], order) for order in other[identity]),
                    key=lambda key: key[3])
        assert extra[:3] == best[:3], f"extra move {identity} differs on criteria 1-3: {where}"
        assert extra[3][0] == king_jumps[0], f"extra move {identity} differs on the first king: {where}"
        assert extra[3] > king_jumps, f"extra move {identity} is not worse on a later king: {where}"
    extras = sorted(min(_precedence(position, i[0], order)[3] for order in other[i]) for i in set(other) - set(mine))
    return f"criterion 4 beyond the first king: kings taken at jumps {king_jumps} beat {extras}"


def _cross_check(positions: list[Position]) -> dict[str, int]:
    stats = {"positions": 0, "agree": 0, "criterion 4": 0, "captures": 0, "kings both sides": 0,
             "men both sides": 0, "black to move": 0, "no moves": 0}
    for position in positions:
        mine, other = ours(position), theirs(position)
        stats["positions"] += 1
        if set(mine) == set(other):
            stats["agree"] += 1
        else:
            explain(position, mine, other)
            stats["criterion 4"] += 1
        white_men, white_kings, black_men, black_kings = position.piece_count()
        stats["captures"] += any(m.captured for m in mine.values())
        stats["kings both sides"] += bool(white_kings and black_kings)
        stats["men both sides"] += bool(white_men and black_men)
        stats["black to move"] += not position.white_to_move
        stats["no moves"] += not mine
    return stats


def test_known_differences_are_criterion_4() -> None:
    for fen in KNOWN_DIFFERENCES:
        position = Position.from_fen(fen)
        mine, other = ours(position), theirs(position)
        assert set(mine) != set(other)
        assert explain(position, mine, other).startswith("criterion 4")


def test_explain_rejects_other_differences() -> None:
    # Fake pydraughts answers for the first known position (ours: 16x23 taking
    # kings 12 and 11 at jumps 0 and 1, then 19) must not pass as criterion 4.
    position = Position.from_fen(KNOWN_DIFFERENCES[0])
    mine, other = ours(position), theirs(position)
    missing = {identity: orders for identity, orders in other.items() if identity not in mine}
    with pytest.raises(AssertionError, match="not a first-king-only difference"):
        explain(position, mine, missing)
    for order, message in [((27, 19), "criteria 1-3"),  # fewer pieces
                           ((19, 27, 12), "first king"),  # first king later
                           ((27, 12, 19), "not worse on a later king")]:  # as good as ours
        fake = dict(mine_orders(mine))
        fake[(31, 8, frozenset(order))] = [order]
        with pytest.raises(AssertionError, match=message):
            explain(position, mine, fake)


def mine_orders(mine: dict[Identity, Move]) -> dict[Identity, list[tuple[int, ...]]]:
    return {identity: [move.captured] for identity, move in mine.items()}


def test_against_pydraughts(random_positions: Callable[..., list[Position]]) -> None:
    stats = _cross_check(random_positions(2400, 51))
    # The sample covers what it should: captures, kings and men of both sides, both sides to move.
    assert stats["positions"] == 2400
    assert stats["captures"] >= 600
    assert stats["kings both sides"] >= 600 and stats["men both sides"] >= 1000
    assert 800 <= stats["black to move"] <= 1600
    assert stats["agree"] + stats["criterion 4"] == 2400


@pytest.mark.slow
def test_against_pydraughts_many_kings(random_positions: Callable[..., list[Position]]) -> None:
    count = 5000 if CI else 30000
    stats = _cross_check(random_positions(count, 52, "kings"))
    assert stats["agree"] + stats["criterion 4"] == count
    # Several-kings captures are where the known difference shows; the full sample meets
    # it, the CI-size sample may not (the known positions above cover it there).
    assert stats["criterion 4"] >= (0 if CI else 1)
