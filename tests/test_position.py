"""Positions: FEN and Hub text both ways, validation, equality and hashing, playing moves."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable

import pytest

from pedina import START_FEN, START_HUB, Board, IllegalMoveError, Move, Position, PositionError, legal_moves


def test_start_position_texts() -> None:
    start = Position.start()
    assert start.hub() == START_HUB
    assert start.fen() == START_FEN
    assert Position.from_fen("W:W21-32:B1-12") == start
    assert Position.parse(START_FEN) == Position.parse(START_HUB) == start
    assert start.piece_count() == (12, 0, 12, 0)


def test_fen_with_kings_ranges_and_decoration() -> None:
    position = Position.from_fen(' "B:W18,K3,21-23:BK5,9,k30." ')
    assert not position.white_to_move
    assert position.piece_count() == (4, 1, 1, 2)
    assert position.fen() == "B:WK3,18,21,22,23:BK5,9,K30"
    assert position.hub() == "B" + "eeWeBeeeb" + "e" * 8 + "w" + "ee" + "www" + "e" * 6 + "Bee"
    assert position.piece_at(3) == "W" and position.piece_at(5) == "B" and position.piece_at(4) == "e"


def test_empty_side_is_allowed() -> None:
    # A lost position (no white pieces) is still a position: its side to move has no moves.
    position = Position.from_fen("W:W:B1,2")
    assert position.count_moves() == 0
    assert Position.from_hub(position.hub()) == position


def test_round_trips_of_random_positions(random_positions: Callable[..., list[Position]]) -> None:
    for position in random_positions(3000, 21):
        fen, hub = position.fen(), position.hub()
        again = Position.from_fen(fen)
        assert again == position and hash(again) == hash(position)
        assert Position.from_hub(hub) == position
        assert Position.parse(fen).hub() == hub
        assert Position.parse(hub).fen() == fen


@pytest.mark.parametrize(("text", "message"), [
    ("Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwww", "33 characters, got 32"),
    ("Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwwww", "33 characters, got 34"),
    ("W" + "e" * 50, "got 51 (a 10x10 position?)"),
    ("Xbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww", "must start with W or B"),
    ("Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwwx", "unknown character 'x' for square 32"),
    ("W" + "b" * 13 + "e" * 7 + "w" * 12, "Black has 13 pieces, more than 12"),
    ("Wwbbbbbbbbbbbeeeeeeeewwwwwwwwwwwe", "white man on square 1"),
    ("Wbbbbbbbbbbbeeeeeeeeewwwwwwwwwwwb", "black man on square 32"),
    ("W:W21-33:B1-12", "square 33 is not between 1 and 32"),
    ("W:W0,21:B1", "square 0 is not between 1 and 32"),
    ("W:W21-32:B1-13", "Black has 13 pieces, more than 12"),
    ("W:W20-32:B1-5", "White has 13 pieces, more than 12"),
    ("W:W21,21:B1", "square 21 is given twice"),
    ("W:W21,K5:B5", "square 5 is given twice (white king and black man)"),
    ("W:W3:B10", "white man on square 3, its promotion row (1-4)"),
    ("B:W10:B30", "black man on square 30, its promotion row (29-32)"),
    ("X:W21:B1", "side to move first"),
    ("W:W21:Q1", "must start with W or B"),
    ("W:W21:W22", "lists the white pieces twice"),
    ("W:W2a:B1", "bad FEN square '2a'"),
    ("W:W25-21:B1", "bad FEN range '25-21'"),
    ("W21-32 B1-12", "neither a FEN (such as 'W:W21-32:B1-12') nor a 33-character Hub position"),
    ("nosuch.pdn", "neither a FEN"),
])
def test_malformed_input_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(PositionError) as error:
        Position.parse(text)
    assert message in str(error.value)


@pytest.mark.parametrize("fen", ["W:W1-10000000:B1", "W:WK5-10000000:B1",
                                 "W:W21:B1-" + "9" * 5000])
def test_a_huge_fen_range_is_refused_before_it_is_expanded(fen: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(PositionError, match="is not between 1 and 32"):
            Position.from_fen(fen)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_from_squares_validates() -> None:
    with pytest.raises(PositionError, match="twice"):
        Position.from_squares(white_men=[21], black_kings=[21])
    with pytest.raises(PositionError, match="more than 12"):
        Position.from_squares(white_kings=list(range(1, 14)))


def test_play_gives_the_positions_of_random_games(random_games: Callable[..., list[Board]]) -> None:
    starts = [None] + [Position.from_fen(f) for f in ("B:W30,21,22,17,20,K6:B25,28,9,5,1,3",
                                                       "W:WK1,K7,K15:BK3,5,K13,K14,K18,20,21,K22,K23,K31")]
    seen: set[Position] = set()
    for index, start in enumerate(starts):
        for board in random_games(20, 50 + index, start):
            position = board.start
            for move, after in zip(board.moves, board.positions[1:]):
                position = position.play(move)
                assert position == after, after.fen()
            seen.update(board.positions)
    # Hashing tells a few thousand positions apart and agrees with equality.
    assert len(seen) > 2000
    assert len({hash(p) for p in seen}) == len(seen)
    assert all(Position.from_hub(p.hub()) in seen for p in list(seen)[:200])


def test_play_refuses_a_move_of_another_position() -> None:
    start = Position.start()
    for move in (Move(18, (14,)), Move(22, (26,)), Move(22, (15,))):  # no piece, backwards, nothing to jump
        with pytest.raises(IllegalMoveError, match=rf"illegal move {move.hub()} in position W:W21,22"):
            start.play(move)
    # Start, end and captured squares agree, but the captured piece is a king here and
    # a man there: the move of the other position must not carry its piece over.
    (capture,) = legal_moves(Position.from_fen("W:WK19:B15"))
    after = Position.from_fen("W:WK19:BK15").play(capture)
    assert after == Position.from_fen("B:WK12:B")


def test_side_to_move_changes_equality_and_hash() -> None:
    white = Position.from_fen("W:W21:B1")
    black = Position.from_fen("B:W21:B1")
    assert white != black and hash(white) != hash(black)
