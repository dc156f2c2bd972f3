"""PDN games: writing, tolerant reading, errors, and pydraughts reading our output."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Callable

import draughts
import pytest
from draughts.PDN import PDNReader, PDNWriter

from conftest import random_game
from pedina import Board, Move, Outcome, Position, Termination, legal_moves
from pedina.pdn import (MoveNote, PdnError, PdnGame, Variation, comment_notes, decode_pdn, read_fen_lines, read_game,
                        read_games, variation_text, write_game)

SECOND_FEN = "B:W30,21,22,17,20,K6:B25,28,9,5,1,3"


def _starts() -> list[Position | None]:
    return [None, Position.from_fen(SECOND_FEN), Position.from_fen("W:WK1,K7,22,23:BK30,5,6,10")]


def test_write_format() -> None:
    board = Board()
    for text in ("23-19", "10-14", "19x10", "5x14"):
        board.push_text(text)
    text = write_game(board, {"Event": "Test", "White": "Pedina", "Black": 'The "other" one', "Result": "?"})
    assert text == (
        '[Event "Test"]\n[White "Pedina"]\n[Black "The \\"other\\" one"]\n[Result "*"]\n[GameType "22"]\n\n'
        "1. 23-19 10-14 2. 19x10 5x14 *\n")
    assert write_game(board, result="1/2-1/2").endswith("2. 19x10 5x14 1/2-1/2\n")


def test_write_black_start_and_full_paths() -> None:
    board = Board("B:W26,29,30:B13,14,21,22,4")
    board.push_text("4-8")
    board.push_text("26x10x14x22")
    text = write_game(board, {"Event": "Diamond"})
    assert text == ('[Event "Diamond"]\n[GameType "22"]\n[SetUp "1"]\n[FEN "B:W26,29,30:B4,13,14,21,22"]\n'
                    '[Result "*"]\n\n1... 4-8 2. 26x19x10 *\n')
    game = read_game(text)
    assert game.board.moves == board.moves and game.board.position == board.position


def test_write_wraps_lines_and_states_the_result() -> None:
    board = random_game(random.Random(7))
    assert len(board.moves) > 30 and board.is_game_over()
    text = write_game(board)
    assert all(len(line) <= 79 for line in text.splitlines())
    assert text.rstrip().endswith(board.result()) and f'[Result "{board.result()}"]' in text


def test_write_rejects_bad_result_and_tag() -> None:
    with pytest.raises(PdnError, match="bad result"):
        write_game(Board(), result="1-2")
    with pytest.raises(PdnError, match="bad PDN tag name"):
        write_game(Board(), {"Bad Name": "x"})


def test_round_trips_of_random_games() -> None:
    rng = random.Random(61)
    boards = [random_game(rng, _starts()[i % 3]) for i in range(60)]
    headers = {"Event": "Round trip", "Round": "1"}
    text = "\n".join(write_game(board, headers) for board in boards)
    games = read_games(text)
    assert len(games) == len(boards)
    for board, game in zip(boards, games):
        assert isinstance(game, PdnGame)
        assert game.board.start == board.start
        assert game.board.moves == board.moves and [m.path for m in game.board.moves] == [
            m.path for m in board.moves]
        assert game.board.position == board.position
        assert game.result == board.result() == game.headers["Result"]
        assert list(game.headers)[:2] == ["Event", "Round"] and game.headers["GameType"] == "22"
        assert ("FEN" in game.headers) == (board.start != Position.start())


def test_tolerant_reading() -> None:
    text = """% an escape line, for another program
[Event "Tolerance"]
[Result "1-0"]

1. 21-17 {a comment (with a parenthesis} 10-13 ; a line comment 1-0
2. 17x10! $3 6x13?! (2... 5x14 3. 22-18 (3. 23-19 14x23) 14x21 {nested}) 3. 24-20 3... 13-17!?
4.22-18 11-15 5. 20x11 1-0
[Event "Second"] [FEN "B:W18:B10,K30"]
1... 10-14 2. 18x11 2-0
21-17 9-13 *
"""
    first, second, third = read_games(text)
    assert first.headers == {"Event": "Tolerance", "Result": "1-0"} and first.result == "1-0"
    assert [m.hub() for m in first.board.moves] == [
        "21-17", "10-13", "17x10x13", "6x13x10", "24-20", "13-17", "22-18", "11-15", "20x11x15"]
    assert second.result == "1-0" and second.board.start == Position.from_fen("B:W18:B10,K30")
    assert [m.hub() for m in second.board.moves] == ["10-14", "18x11x14"]
    assert third.headers == {} and third.result == "*" and len(third.board.moves) == 2
    assert read_game(text).headers["Event"] == "Tolerance"
    assert read_game(text, 2).board.moves == second.board.moves
    with pytest.raises(PdnError, match="there is no game 4: the PDN text has 3 games"):
        read_game(text, 4)


TAGS = '[Event "Torneo di Forlì"]\n[White "Niccolò"]\n[Black "Müller – “Sr”"]\n[GameType "22"]\n\n1. 23-19 10-14 *\n'


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf" + TAGS.encode("utf-8"),      # UTF-8 with a byte-order mark
    TAGS.encode("utf-8"),
    TAGS.encode("cp1252"),                       # what CheckerBoard writes
    TAGS.encode("utf-16"),                       # with its byte-order mark
])
def test_byte_order_marks_and_windows_encodings_are_read(data: bytes) -> None:
    game = read_game(decode_pdn(data))
    assert game.headers["Event"] == "Torneo di Forlì" and game.headers["White"] == "Niccolò"
    assert game.headers["Black"] == "Müller – “Sr”" and len(game.board.moves) == 2


def test_latin1_bytes_that_windows_1252_lacks_are_read_as_latin1() -> None:
    data = TAGS.replace("–", "-").replace("“", '\\"').replace("”", '\\"').encode("latin-1") + b"{\x81}"
    game = read_game(decode_pdn(data))
    assert game.headers["White"] == "Niccolò" and game.headers["Black"] == 'Müller - "Sr"'


def test_a_byte_order_mark_in_text_is_blank() -> None:
    assert read_game("\ufeff" + TAGS).headers["White"] == "Niccolò"
    assert read_fen_lines("\ufeffW:W21-32:B1-12\n# comment\n\nBbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww\n") == [
        Position.start(), Position.from_hub("Bbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww")]
    assert read_fen_lines(TAGS) is None
    with pytest.raises(PdnError, match="line 4 is not a position"):
        read_fen_lines("W:W21-32:B1-12\n# comment\n\nW:W1-10000:B2\n")


def test_annotations_are_written_and_read_back_by_us_and_pydraughts() -> None:
    board = Board()
    for text in ("23-19", "10-14", "19x10", "5x14", "22-18", "14-19", "18-14"):
        board.push_text(text)
    better = Board()
    better.push_text("23-19")
    variation = tuple(better.parse_move(text) for text in ("11-15",))
    better.push(variation[0])
    variation += (better.parse_move("22-18"),)
    notes = [MoveNote(comment="+0.10/8"), MoveNote((2,), "-0.60/8 a {brace}", variation, "+0.05/8"), None,
             MoveNote((4,), "+1.00/8")]
    text = write_game(board, {"Event": "Notes"}, "*", notes)
    assert ("1. 23-19 {+0.10/8} 10-14 $2 {-0.60/8 a (brace)} (1... 11-15 {+0.05/8} 2. 22-18) 2. 19x10 5x14 $4 "
            "{+1.00/8} 3. 22-18 14-19 4. 18-14 *") in " ".join(text.split("\n"))
    assert read_game(text).board.moves == board.moves
    (game,) = PDNReader(pdn_text=text).games
    replay = draughts.Board("italian", "startpos")
    for move in game.moves:
        replay.push(draughts.Move(replay, pdn_move=move))
    assert len(game.moves) == len(board.moves) and Position.from_fen(replay.fen) == board.position


def test_games_without_result_tokens_are_told_apart() -> None:
    games = read_games('[Event "a"]\n1. 22-18\n[Event "b"]\n[Event "c"]\n1. 23-19 10-14')
    assert [g.headers["Event"] for g in games] == ["a", "b", "c"]
    assert [len(g.board.moves) for g in games] == [1, 0, 2] and all(g.result == "*" for g in games)


def test_result_from_the_tag_when_movetext_has_none() -> None:
    game = read_game('[Result "0-1"]\n1. 22-18')
    assert game.result == "0-1"
    assert read_game("1. 22-18").result == "*"
    assert read_game("1. 22-18 1-1").result == "1/2-1/2"


def test_moves_in_hub_and_path_text_are_read() -> None:
    game = read_game('[FEN "W:W26:B13,14,21,22"] 1. 26x10x13x21')
    assert game.board.moves[0].full_path() == "26x17x10"


@pytest.mark.parametrize(("text", "message"), [
    ("[Event \"x\"]\n1. 22-18 10-15", "game 1 (line 2), move 1... 10-15: illegal move '10-15'"),
    ("1. 22-18 *\n\n1. 22-18 12-16 2. 18-14 16-20", "game 2 (line 3), move 2... 16-20: illegal move"),
    ('[FEN "W:W26:B13,14,21,22"]\n1. 26x10', "move 1. 26x10: ambiguous move '26x10'"),
    ('[FEN "W:W1:B2"]\n1. 1-5', "bad FEN tag: white man on square 1"),
    ("1. 22-18 (10-14", "variation '(' not closed"),
    ("1. 22-18 )", "')' without a variation to close"),
    ("1. 22-18 {no end", "comment not closed"),
    ('[GameType "20"]\n1. 32-28', "GameType '20' is not Italian draughts (22)"),
    ("1. 22-18\nhello", "game 1 (line 2): unexpected text 'hello'"),
    ('[Event "x\n\n"]\n[Site "y', "game 1 (line 4): tag Site not closed"),
    ('[Event "x\\"]', "game 1 (line 1): tag Event not closed"),
    ("", "no game found"),
])
def test_errors_say_where_and_why(text: str, message: str) -> None:
    with pytest.raises(PdnError) as error:
        read_games(text) if "game 2" in message else read_game(text)
    assert message in str(error.value)


LONG = 200_000


@pytest.mark.parametrize("text", [
    '[Event "' + "x" * LONG + '"]\n1. 22-18 *',
    '[Event "' + '\\"' * (LONG // 2) + '"]\n1. 22-18 *',
    "1. 22-18 {" + "x" * LONG + "} *",
    "1. 22-18 ;" + "x" * LONG + "\n*",
    "1. " + "-".join(["22", "18"] * (LONG // 6)) + " *",
    "1. 22-18 " + "hello " * (LONG // 6),
])
def test_long_tags_comments_and_moves_are_read_in_linear_memory(text: str) -> None:
    tracemalloc.start()
    try:
        try:
            read_games(text)
        except PdnError:
            pass  # the long move and the unexpected text: what matters is what finding so cost
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(text)


def test_an_escaped_long_tag_keeps_its_value() -> None:
    value = 'a \\"quoted\\" ' * 10_000
    (game,) = read_games(f'[Event "{value}"]\n1. 22-18 *')
    assert game.headers["Event"] == value.replace("\\", "")


def test_a_game_stops_at_its_end_by_repetition() -> None:
    shuffle = ["29-25", "1-5", "25-29", "5-1"] * 2_500  # repeated from ply 8 on, 10,000 plies
    text = '[FEN "W:WK29,K32:BK1,K4"]\n' + " ".join(shuffle) + " *"
    with pytest.raises(PdnError) as error:
        read_games(text)
    assert str(error.value) == "game 1 (line 2), move 5. 29-25: the game ended after ply 8 (repetition, 1/2-1/2)"
    (game,) = read_games('[FEN "W:WK29,K32:BK1,K4"]\n' + " ".join(shuffle[:8]) + " 1/2-1/2")
    assert game.board.outcome() is not None and len(game.board.moves) == 8


def test_a_game_stops_at_its_end_by_the_40_move_count() -> None:
    def walk(board: Board, move: Move) -> tuple[bool, int]:
        """A king move's cost: whether it offers a capture, then how often its position was seen."""
        after = board.position.play(move)
        return any(reply.captured for reply in legal_moves(after)), board.positions.count(after)

    board = Board("W:WK29:BK4")
    while board.reversible_plies < 80:
        board.push(min(board.legal_moves(), key=lambda move: walk(board, move)))
    assert board.outcome() == Outcome(Termination.MOVE_COUNT, None)
    text = write_game(board, result="1/2-1/2")
    assert read_games(text)[0].board.moves == board.moves
    board.push(board.legal_moves()[0])
    with pytest.raises(PdnError, match=r"move 41\. .*: the game ended after ply 80 \(40-move rule, 1/2-1/2\)"):
        read_games(write_game(board, result="*"))


def test_read_game_checks_only_the_first_game() -> None:
    assert len(read_game("1. 22-18 *\n1. 99-98 *").board.moves) == 1
    with pytest.raises(PdnError, match="game 2"):
        read_games("1. 22-18 *\n1. 22-17 *")


def _pydraughts_replay(text: str) -> tuple[dict[str, str], list[str], str, Position]:
    (game,) = PDNReader(pdn_text=text).games
    assert game.variant == "italian"
    board = draughts.Board("italian", game.tags.get("FEN", "startpos"))
    for move in game.moves:
        board.push(draughts.Move(board, pdn_move=move))
    return game.tags, game.moves, game.game_ending, Position.from_fen(board.fen)


def test_pydraughts_reads_our_games(random_games: Callable[..., list[Board]]) -> None:
    boards = random_games(15, 71) + random_games(10, 72, Position.from_fen("W:WK1,K7,22,23:BK30,5,6,10"))
    assert any(any(len(m.path) > 1 for m in b.moves) for b in boards)  # multi-captures included
    for board in boards:
        text = write_game(board, {"Event": "pydraughts", "White": "A", "Black": "B"})
        tags, moves, ending, final = _pydraughts_replay(text)
        assert tags["Event"] == "pydraughts" and tags["GameType"] == "22"
        assert len(moves) == len(board.moves) and ending == board.result()
        assert final == board.position, text


def test_pydraughts_reads_black_to_move_games_but_repeats_the_first_move() -> None:
    # pydraughts 0.6.7's reader puts the first move of a Black-to-move game in
    # its move list twice (PDN.py: clean_moves starts with it, then list_moves
    # adds it again); apart from that it reads our movetext move for move.
    rng = random.Random(73)
    for _ in range(10):
        board = random_game(rng, Position.from_fen(SECOND_FEN))
        text = write_game(board)
        (game,) = PDNReader(pdn_text=text).games
        ours = [line for line in text.splitlines() if line and not line.startswith("[")]
        assert ours[0].startswith("1... ")
        expected = [m for m in " ".join(ours).split() if not m.endswith(".")][:-1]
        assert game.moves == expected[:1] + expected
        assert Position.from_fen(game.tags["FEN"]) == board.start and game.game_ending == board.result()


def test_we_read_pydraughts_games() -> None:
    rng = random.Random(81)
    for fen in ("startpos", SECOND_FEN, "startpos"):
        board = draughts.Board("italian", fen)
        for _ in range(rng.randint(20, 60)):
            moves = board.legal_moves()
            if not moves:
                break
            board.push(rng.choice(moves))
        text = PDNWriter("", board=board, game_ending="*").pdn_text
        game = read_game(text)
        assert len(game.board.moves) == len(board.move_stack)
        assert game.board.position == Position.from_fen(board.fen), text


#: A game with comments, variations (two after one move), a variation in a variation, and
#: comments in both; a comment before the game and a ``;`` one, which are not kept.
VARIATIONS = ('[Event "Lines"]\n{before the game} 1. 22-18 {main} (1. 21-17 {instead} 10-14 (1... 9-13 {deeper} '
              '2. 22-18 {deepest}) 2. 24-20) 10-14 ; to the end of the line\n(1... 12-16 {black} 2. 23-19) '
              '2. 23-19 (2. 21-17) (2. 24-20 {a second one}) *\n')


def _hubs(variations: dict[int, list[Variation]]) -> dict[int, list[tuple[list[str], list[str], object]]]:
    """Variations as move and comment texts, nested ones in the same shape."""
    return {ply: [([move.hub() for move in line.moves], line.comments, _hubs(line.variations)) for line in lines]
            for ply, lines in variations.items()}


def test_variations_and_their_comments_are_read_written_and_read_again() -> None:
    # On 7585fe0 the reader skipped every variation and comment: read back, the game had neither.
    game = read_game(VARIATIONS)
    assert [move.hub() for move in game.board.moves] == ["22-18", "10-14", "23-19"]
    assert game.comments == ["main", "", ""]
    assert _hubs(game.variations) == {
        0: [(["21-17", "10-14", "24-20"], ["instead", "", ""], {1: [(["9-13", "22-18"], ["deeper", "deepest"], {})]})],
        1: [(["12-16", "23-19"], ["black", ""], {})],
        2: [(["21-17"], [""], {}), (["24-20"], ["a second one"], {})]}
    text = write_game(game.board, game.headers, game.result, comment_notes(game.comments), game.variations)
    assert ("1. 22-18 {main} (1. 21-17 {instead} 10-14 (1... 9-13 {deeper} 2. 22-18 {deepest}) 2. 24-20) 10-14 "
            "(1... 12-16 {black} 2. 23-19) 2. 23-19 (2. 21-17) (2. 24-20 {a second one}) *") in " ".join(text.split())
    again = read_game(text)
    assert again.board.moves == game.board.moves and again.result == game.result
    assert again.comments == game.comments and again.variations == game.variations
    rewritten = write_game(again.board, again.headers, again.result, comment_notes(again.comments), again.variations)
    assert rewritten.split("\n\n")[1] == text.split("\n\n")[1]  # the movetext again, to the byte
    assert variation_text(game.board.positions[2], 2, True, game.variations[2][1]) == "(2. 24-20 {a second one})"
    (theirs,) = PDNReader(pdn_text=text).games  # pydraughts reads nested variations too
    assert theirs.moves == ["22-18", "10-14", "23-19"]


def test_the_comments_after_each_main_line_move_of_each_game() -> None:
    text = ('[Event "one"]\n{before the game} 1. 22-18 {+0.35/12 0.5s} {again} 10-14 (1... 11-15 {in a line})\n'
            '; to the end of the line\n2. 23-19 *\n\n'
            '[Event "two"]\n[White "A"]\n1. 21-17 {book 0.001s}\n[Event "three"]\n1. 22-18 1-0\n')
    games = read_games(text)
    assert [game.comments for game in games] == [["+0.35/12 0.5s again", "", ""], ["book 0.001s"], [""]]
    assert games[0].variations[1][0].comments == ["in a line"]


def test_a_bad_move_in_a_variation_is_named_or_cuts_only_that_variation() -> None:
    # On 7585fe0 a variation was never read, so a bad move in one went unseen.
    text = VARIATIONS.replace("2. 22-18 {deepest}", "2. 22-18 {deepest} 11-99")
    with pytest.raises(PdnError, match=r"game 1 \(line 2\), variation move 2\.\.\. 11-99: "):
        read_game(text)
    with pytest.raises(PdnError, match="variation move 2... 11-99"):
        read_games(text)
    errors: list[PdnError] = []
    (game,) = read_games(text, on_error=errors.append)
    assert len(errors) == 1 and "variation move 2... 11-99" in str(errors[0]) and "kept up to it" in str(errors[0])
    assert not game.error and game.result == "*" and len(game.board.moves) == 3
    assert _hubs(game.variations) == _hubs(read_game(VARIATIONS).variations)  # cut at the bad move
    assert read_game(text, on_error=errors.append).variations == game.variations and len(errors) == 2
    captured = read_game('[FEN "W:W18:B14"]\n1. 18x11 (1. 18-15 {a capture is compulsory}) *', on_error=errors.append)
    assert captured.variations == {} and len(captured.board.moves) == 1 and "variation move 1. 18-15" in str(errors[-1])
