"""The game record: repetitions, the 40-move count, results, takebacks, legality of pushed moves."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pedina import Board, IllegalMoveError, Move, Position, Termination

# Two kings, each with one square to shuffle to and back.
KINGS = "W:WK1:BK32"
SHUFFLE = ["1-5", "32-28", "5-1", "28-32"]


def test_repetition_count_and_draw() -> None:
    board = Board(KINGS)
    counts = []
    for text in SHUFFLE * 2:
        assert board.outcome() is None
        board.push_text(text)
        counts.append(board.repetition_count())
    assert counts == [1, 1, 1, 2, 2, 2, 2, 3]
    outcome = board.outcome()
    assert outcome is not None and (outcome.termination, outcome.winner) == (Termination.REPETITION, None)
    assert board.result() == "1/2-1/2" and board.is_game_over()


def test_repetition_threshold_is_a_setting() -> None:
    board = Board(KINGS, repetitions=4)
    for text in SHUFFLE * 2:
        board.push_text(text)
    assert board.repetition_count() == 3 and board.outcome() is None
    for text in SHUFFLE:
        board.push_text(text)
    assert board.repetition_count() == 4 and board.result() == "1/2-1/2"
    board = Board(KINGS, repetitions=2)
    for text in SHUFFLE:
        board.push_text(text)
    assert board.result() == "1/2-1/2"


def test_same_pieces_other_side_to_move_is_no_repetition() -> None:
    board = Board("W:WK1,K6:BK32")
    for text in ("1-5", "32-28", "5-1", "28-32", "6-2"):
        board.push_text(text)
    # White's king went 1-5-1 and 6-2; no position recurs with the same side to move.
    assert board.repetition_count() == 1


def test_forty_move_count() -> None:
    board = Board(KINGS, repetitions=1000)
    for ply in range(80):
        assert board.reversible_plies == ply and board.outcome() is None
        board.push_text(SHUFFLE[ply % 4])
    assert board.reversible_plies == 80
    outcome = board.outcome()
    assert outcome is not None and outcome.termination is Termination.MOVE_COUNT and outcome.winner is None
    assert board.result() == "1/2-1/2"
    board.pop()
    assert board.reversible_plies == 79 and board.outcome() is None


def test_forty_move_threshold_is_a_setting() -> None:
    board = Board(KINGS, repetitions=1000, draw_plies=6)
    for text in SHUFFLE + SHUFFLE[:2]:
        board.push_text(text)
    outcome = board.outcome()
    assert outcome is not None and outcome.termination is Termination.MOVE_COUNT


def test_the_old_name_of_the_draw_threshold_still_works() -> None:
    board = Board(KINGS, quiet_plies=6)  # documented before draw_plies, kept as a deprecated alias
    assert board.draw_plies == board.quiet_plies == 6 and board.copy().draw_plies == 6
    assert Board().draw_plies == 80


def test_man_moves_and_captures_reset_the_count() -> None:
    board = Board("W:WK4,22:BK32,10")
    board.push_text("4-8")
    board.push_text("32-28")
    assert board.reversible_plies == 2
    board.push_text("22-18")  # a man move
    assert board.reversible_plies == 0
    board.push_text("28-32")
    board.push_text("8-4")
    assert board.reversible_plies == 2
    board.push_text("10-14")  # Black's man steps next to White's...
    assert board.reversible_plies == 0
    board.push_text("18x11")  # ...and is captured
    assert board.reversible_plies == 0 and board.repetition_count() == 1


@pytest.mark.parametrize(("fen", "winner", "result"), [
    ("W:W29,30:BK25,K26,K27", False, "0-1"),  # White blocked: loses
    ("B:WK1:B", True, "1-0"),  # Black has no piece left
    ("B:W31,32:B28", True, "1-0"),  # Black blocked by men it cannot jump (off the board)
])
def test_no_legal_move_loses(fen: str, winner: bool, result: str) -> None:
    board = Board(fen)
    outcome = board.outcome()
    assert outcome is not None
    assert (outcome.termination, outcome.winner, outcome.result(), board.result()) == (
        Termination.NO_MOVES, winner, result, result)


def test_game_goes_on() -> None:
    board = Board()
    assert board.outcome() is None and board.result() == "*" and not board.is_game_over()


def test_push_pop_restores_everything(random_games: Callable[..., list[Board]]) -> None:
    for game in random_games(20, 41):
        board = Board()
        seen = [(board.position, board.reversible_plies, board.repetition_count())]
        for move in game.moves:
            board.push(move)
            seen.append((board.position, board.reversible_plies, board.repetition_count()))
        assert board.position == game.position and board.moves == game.moves
        copy = board.copy()
        while board.moves:
            played = board.moves[-1]
            assert board.pop() == played
            seen.pop()
            assert (board.position, board.reversible_plies, board.repetition_count()) == seen[-1]
        assert board.position == Position.start() and len(board.positions) == 1
        # The copy is independent of the board it came from.
        assert copy.position == game.position and len(copy.moves) == len(game.moves)
    with pytest.raises(IndexError, match="no move to take back"):
        Board().pop()


def test_start_can_be_text_or_position() -> None:
    fen = "B:W30,21,22,17,20,K6:B25,28,9,5,1,3"
    assert Board(fen).position == Board(Position.from_fen(fen)).position == Board(Position.from_fen(fen).hub()).start


def test_push_refuses_an_illegal_move_and_keeps_the_board() -> None:
    board = Board()
    board.push_text("23-19")
    with pytest.raises(IllegalMoveError, match=r"illegal move 22-18 in position B:"):
        board.push(Move(22, (18,)))  # White's move, but Black is to move
    assert len(board.moves) == len(board.positions) - 1 == 1 and board.reversible_plies == 0
    # Any value equal to a legal move plays it: here a king's ring run the other way round.
    ring = Board("W:WK26:B13,14,21,22")
    (legal,) = ring.legal_moves()
    ring.push(Move(26, tuple(reversed(legal.path[:-1])) + (26,)))
    assert ring.position == Position.from_fen("B:WK26:B") and ring.reversible_plies == 0
