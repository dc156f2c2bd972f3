"""Move text: Hub, PDN and full-path forms, both ways, and the errors for bad text."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pedina import (
    AmbiguousMoveError,
    IllegalMoveError,
    Move,
    MoveError,
    Position,
    format_pdn,
    legal_moves,
    parse_move,
)

# A white man with two different double captures from 26 to 10 (over 21, 13 or
# over 22, 14): PDN must write the landing squares.
DIAMOND = "W:W26:B13,14,21,22"
# A king capturing the same four pieces round a ring, back to its start square.
RING = "W:WK26:B13,14,21,22"

FIXED = [
    DIAMOND, RING, "B:W30,21,22,17,20,K6:B25,28,9,5,1,3",
    "W:W30,26,27,22,23,24,17,18,20:B14,15,16,9,11,5,6,1,3",
    "W:WK1,K7,K15:BK3,5,K13,K14,K18,20,21,K22,K23,K31", "B:BK19:W15,14,22,23,K10,K11",
]


def _check_round_trips(position: Position) -> int:
    """Every legal move reads back from each of its texts; returns how many
    moves needed the full path in PDN."""
    moves = legal_moves(position)
    pdn_texts = [format_pdn(move, moves) for move in moves]
    assert len(set(pdn_texts)) == len(moves), position.fen()
    assert len({move.hub() for move in moves}) == len(moves), position.fen()
    full = 0
    mover = "wW" if position.white_to_move else "bB"
    for move, pdn in zip(moves, pdn_texts):
        # The value rebuilt from its start and path is the same move, jumping the same pieces.
        again = Move(move.start, move.path)
        assert (again, again.captured, eval(repr(move))) == (move, move.captured, move)
        assert len(move.path) == max(1, len(move.captured))
        after = position.play(move)
        assert position.piece_at(move.start) in mover and after.piece_at(move.end) in mover
        assert all(position.piece_at(s) not in mover + "e" and after.piece_at(s) == "e" for s in move.captured)
        for text in (move.hub(), pdn, move.full_path(), str(move)):
            assert parse_move(position, text, moves) == move, (position.fen(), text)
        if pdn.count("x") > 1:
            assert pdn == move.full_path()
            full += 1
    return full


def test_round_trips_for_every_legal_move(random_positions: Callable[..., list[Position]]) -> None:
    positions = [Position.from_fen(fen) for fen in FIXED] + random_positions(3000, 31)
    moves = sum(len(legal_moves(p)) for p in positions)
    assert moves > 5000
    full_paths = sum(_check_round_trips(position) for position in positions)
    assert full_paths >= 2  # the diamond's two captures


def test_texts_of_a_capture() -> None:
    position = Position.from_fen("W:W31:B12,20,28")
    (move,) = legal_moves(position)
    assert (move.start, move.end, move.path, move.captured) == (31, 8, (24, 15, 8), (28, 20, 12))
    assert (move.hub(), move.full_path(), format_pdn(move, [move])) == ("31x8x12x20x28", "31x24x15x8", "31x8")
    assert move.is_capture and repr(move) == "Move(31, (24, 15, 8))" and str(move) == "31x8x12x20x28"
    # Captured squares may come in any order in Hub text; ':' is accepted as separator.
    for text in ("31x8x28x12x20", "31X8", "31:24:15:8", " 31x8! ", "31-8"):
        assert parse_move(position, text) == move
    # A path with a hop that is not a jump, or landing elsewhere, is no move.
    for text in ("31x24x16x8", "31x24x15x6", "31x8x12x20"):
        with pytest.raises(IllegalMoveError):
            parse_move(position, text)


def test_diamond_needs_the_full_path() -> None:
    position = Position.from_fen(DIAMOND)
    moves = legal_moves(position)
    assert sorted(format_pdn(m, moves) for m in moves) == ["26x17x10", "26x19x10"]
    assert sorted(m.hub() for m in moves) == ["26x10x13x21", "26x10x14x22"]
    with pytest.raises(AmbiguousMoveError, match="ambiguous move '26x10': it could be"):
        parse_move(position, "26x10")
    assert parse_move(position, "26x10x14x22").full_path() == "26x19x10"


def test_ring_capture_is_one_move() -> None:
    position = Position.from_fen(RING)
    moves = legal_moves(position)
    # The ring can be run either way round; both give the same position, so one move.
    assert [m.hub() for m in moves] == ["26x26x13x14x21x22"]
    assert format_pdn(moves[0], moves) == "26x26"
    assert parse_move(position, "26x19x10x17x26") == parse_move(position, "26x17x10x19x26") == moves[0]


def test_move_equality_ignores_the_path() -> None:
    (ring,) = legal_moves(Position.from_fen(RING))
    other_way = Move(26, tuple(reversed(ring.path[:-1])) + (26,))
    assert other_way.path != ring.path and other_way.captured != ring.captured
    assert other_way == ring and hash(other_way) == hash(ring) and other_way != "26x26"
    assert Move(22, (18,)) != Move(22, (19,)) and Move(22, (15,)) != Move(22, (13, 6))


@pytest.mark.parametrize(("start", "path", "message"), [
    (22, (), "needs at least one landing square"),
    (0, (5,), "square 0 is not between 1 and 32"),
    (22, (33,), "square 33 is not between 1 and 32"),
    (22, (17,), "22x17 is neither a diagonal step nor a chain of diagonal jumps"),
    (22, (18, 14), "22x18x14 is neither"),
    (22, (13, 6, 14), "22x13x6x14 is neither"),
    (1, (8,), "1x8 is neither"),  # as far apart as a jump, but across the board's edge
])
def test_move_values_are_checked(start: int, path: tuple[int, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Move(start, path)


def test_a_square_that_is_not_a_number_is_refused() -> None:
    # Plain Python says which square is wrong; the compiled flavour refuses the type first.
    with pytest.raises((ValueError, TypeError), match=r"square '18' is not between 1 and 32|int object expected"):
        Move(22, ("18",))  # type: ignore[arg-type]


def test_move_value_fields() -> None:
    step, jump, chain = Move(22, (18,)), Move(22, (15,)), Move(22, [13, 6])
    assert (step.end, step.path, step.captured, step.is_capture) == (18, (18,), (), False)
    assert (jump.end, jump.captured, jump.is_capture) == (15, (19,), True)
    assert (chain.end, chain.path, chain.captured) == (6, (13, 6), (18, 10))


@pytest.mark.parametrize(("text", "error", "message"), [
    ("23-18", IllegalMoveError, "illegal move '23-18'"),
    ("22x13", IllegalMoveError, "illegal move"),
    ("23x19", IllegalMoveError, "illegal move"),
    ("33-29", MoveError, "outside 1..32"),
    ("0-4", MoveError, "outside 1..32"),
    ("e3-d4", MoveError, "cannot read move"),
    ("23", MoveError, "cannot read move"),
    ("", MoveError, "cannot read move"),
    ("23-19 24-20", MoveError, "cannot read move"),
])
def test_bad_move_text(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_move(Position.start(), text)


def test_step_texts() -> None:
    start = Position.start()
    move = parse_move(start, "23-19")
    assert (move.hub(), move.full_path(), format_pdn(move, legal_moves(start))) == ("23-19",) * 3
    assert move.path == (19,) and move.captured == () and not move.is_capture
