"""The opening book: the file format, lookups and choices, the shipped book, its use in play
(session, Hub, match) and in analysis, and ``pedina book build`` with its resume."""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dataclasses import replace
from pedina import START_HUB, Board, Limits, Position, Session
from pedina.settings import EngineSettings
from pedina.book import (BOOK_HEADER, MAX_VARIETY, Book, BookEntry, BookError, BookMove, build_book,
                         opening_positions, parse_entry, shipped_book)
from pedina.move import legal_moves
from pedina.search import Info, Result
from pedina.session import BOOK_DEPTH
from pedina.protocol.hub import HubServer
from pedina.protocol.match.game import Seats, Settings, EngineSpec, TimeControl
from stub_searchers import ScriptedSearcher
from test_cluster import cluster  # noqa: F401  (the fixture: a local Dask cluster of 2 workers)
from timing import HANG

PEDINA = shutil.which("pedina")


def entry_of(position: Position, values: list[int], depth: int = 5) -> BookEntry:
    """An entry giving the legal moves of ``position`` the ``values``, in move generation order."""
    moves = legal_moves(position)
    return BookEntry(position, depth, tuple(BookMove(move, value) for move, value in zip(moves, values)))


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert PEDINA is not None, "the pedina console script is not installed"
    return subprocess.run([PEDINA, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          stdin=subprocess.DEVNULL)


# -- the format ---------------------------------------------------------------------------------


def test_a_book_survives_its_text_and_keeps_moves_best_first() -> None:
    start = Position.start()
    after = start.play(legal_moves(start)[2])
    book = Book([entry_of(start, [5, -3, 12, 0, 0, -40, 7]), entry_of(after, list(range(len(legal_moves(after)))))])
    text = book.text()
    assert text.splitlines()[0] == BOOK_HEADER
    assert text.splitlines()[1].startswith(f"{start.white:09x} {start.black:09x} {start.kings:09x} w 5 ")
    again = Book.from_text(text)
    assert [entry for entry in again] == [entry for entry in book] and len(again) == 2
    values = [choice.value for choice in again.moves(start)]
    assert values == [12, 7, 5, 0, 0, -3, -40]
    assert again.moves(start)[3].move == legal_moves(start)[3]  # equal values keep the order given
    assert again.text() == text


def test_backing_up_values_through_the_book() -> None:
    start = Position.start()
    first, second = legal_moves(start)[0], legal_moves(start)[1]
    after = start.play(second)
    deeper = after.play(legal_moves(after)[0])
    win = 9990  # a proof: 10 plies
    lost = [entry_of(start, [50, 40, 0, 0, 0, 0, 0]), entry_of(after, [-20] + [-90] * (len(legal_moves(after)) - 1)),
            entry_of(deeper, [-win] * len(legal_moves(deeper)))]
    # deeper is lost for its mover in 10 plies: after's first move wins in 11, so start's second
    # move loses in 12, below the first move's searched value, which no book position changes.
    backed = Book(lost).backed_up()
    assert backed.moves(after)[0] == BookMove(legal_moves(after)[0], win - 1)
    assert backed.moves(start)[0] == BookMove(first, 50) == backed.choose(start)
    assert backed.moves(start)[-1] == BookMove(second, -(win - 2))
    assert [entry.position for entry in backed] == [start, after, deeper]  # in the order given
    assert Book(lost).moves(start)[1] == BookMove(second, 40)  # the book itself keeps its values
    assert backed.backed_up().text() == backed.text()  # a finished book stays as it is

    won = Book(lost[:2] + [entry_of(deeper, [win] * len(legal_moves(deeper)))]).backed_up()
    assert won.moves(after)[0] == BookMove(legal_moves(after)[1], -90)  # its first move now loses
    assert won.moves(start)[0] == BookMove(second, 90)
    assert won.moves(start)[3].move == legal_moves(start)[3]  # equal values keep the order given


def test_a_later_line_of_a_position_replaces_the_earlier_one() -> None:
    start = Position.start()
    first, second = entry_of(start, [1] * 7), entry_of(start, [2] * 7, depth=9)
    book = Book.from_text("\n".join([BOOK_HEADER, "# a comment", "", first.line(), second.line()]))
    assert len(book) == 1 and book.get(start) == second


@pytest.mark.parametrize("line, words", [
    ("f7f800000 000001fef 000000000 w 6", "has no value"),
    ("f7f800000 000001fef 000000000 x 6 23-19=+1", "w or b"),
    ("f7f800000 000001fzz 000000000 w 6 23-19=+1", "hexadecimal"),
    ("f7f800000 000001fef 000000000 w six 23-19=+1", "depth must be an integer"),
    ("f7f800000 f7f800000 000000000 w 6 23-19=+1", "overlap"),
    ("f7f800000 000001fef 000000000 w 6 23-18=+1", "not a legal move"),
    ("f7f800000 000001fef 000000000 w 6 23-19=+1 23-19=+1", "given twice"),
    ("f7f800000 000001fef 000000000 w 6 23-19=one", "must be an integer"),
    ("f7f800000 000001fef", "expected the white"),
])
def test_a_malformed_line_says_where_and_what(line: str, words: str) -> None:
    with pytest.raises(BookError, match=words):
        parse_entry(line, "here")
    with pytest.raises(BookError, match="my.book, line 2"):  # at load (the position's fields) or lookup
        list(Book.from_text(f"{BOOK_HEADER}\n{line}\n", "my.book"))


def test_files_that_are_no_books_are_refused(tmp_path: Path) -> None:
    with pytest.raises(BookError, match="not a Pedina opening book"):
        Book.from_text("W:W21-32:B1-12\n")
    with pytest.raises(BookError, match="cannot read the book"):
        Book.read(tmp_path / "missing.txt")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(BookError, match="cannot read the book"):
        Book.read(tmp_path / "binary.txt")


# -- lookups and choices --------------------------------------------------------------------------


def test_lookup_by_board_or_position() -> None:
    start = Position.start()
    book = Book([entry_of(start, [0, 1, 2, 3, 4, 5, 6])])
    board = Board()
    assert board in book and start in book and book.get(board) == book.get(start)
    board.push(board.legal_moves()[0])
    assert board not in book and book.get(board) is None and book.moves(board) == []
    assert book.choose(board) is None
    assert "not a position" not in book


def test_variety_zero_plays_the_best_and_more_stays_within_the_margin() -> None:
    start = Position.start()
    book = Book([entry_of(start, [30, 28, 25, 10, 29, -50, 30])])
    assert {book.choose(start, 0, random.Random(seed)) for seed in range(50)} == {book.moves(start)[0]}
    for variety in (1, 5, 20, MAX_VARIETY):
        chosen = [book.choose(start, variety, random.Random(seed)) for seed in range(200)]
        values = {choice.value for choice in chosen if choice is not None}
        assert min(values) >= 30 - variety
    assert {choice.value for choice in (book.choose(start, 5, random.Random(s)) for s in range(200))
            if choice is not None} == {30, 29, 28, 25}
    same = [book.choose(start, 20, random.Random(7)) for _ in range(3)]
    assert same[0] == same[1] == same[2]  # a seed repeats its draw
    for bad in (-1, MAX_VARIETY + 1):
        with pytest.raises(ValueError, match="variety"):
            book.choose(start, bad)


# -- the shipped book -----------------------------------------------------------------------------


def test_the_shipped_book_covers_every_position_of_the_3_move_openings_with_every_legal_move() -> None:
    book = shipped_book()
    for position in opening_positions(3):
        assert position in book, position.fen()
    depths = set()
    for entry in book:  # every line parses: its moves are exactly the legal ones, each once
        assert {choice.move for choice in entry.moves} == set(legal_moves(entry.position))
        depths.add(entry.depth)
    assert len(depths) == 1 and len(book) >= 20_000


def test_the_shipped_book_is_finished() -> None:
    book = shipped_book()
    assert book.backed_up().text() == book.text()  # every value already backed up: play reads it as stored


def test_the_opening_positions_are_those_of_the_3_move_openings() -> None:
    counts = [len(opening_positions(plies)) for plies in range(4)]
    assert counts == [1, 8, 57, 273]  # 1 + 7 + 49 + 216 distinct positions


# -- play: the session ---------------------------------------------------------------------------


class CountingSearcher(ScriptedSearcher):
    """The first legal move at once, counting its searches."""

    searches = 0

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        CountingSearcher.searches += 1
        return super().script(board, limits, on_info)


def test_a_session_plays_a_book_move_at_once_for_play_only() -> None:
    CountingSearcher.searches = 0
    session = Session(settings=EngineSettings(hash_mb=1), searcher_factory=CountingSearcher)
    board = Board()
    best = shipped_book().moves(board)[0]
    infos: list[Info] = []
    answer = session.think(board, Limits(move_time=5.0), infos.append)
    assert answer.book and answer.move == best.move and CountingSearcher.searches == 0
    assert answer.result is not None and answer.result.score == best.value and answer.result.depth == BOOK_DEPTH
    assert len(infos) == 1 and infos[0].depth == BOOK_DEPTH and infos[0].pv[0] == best.move
    after = board.copy()
    after.push(best.move)
    assert answer.ponder == shipped_book().moves(after)[0].move
    for limits in (Limits(depth=3, analysis=True), Limits(infinite=True), Limits(move_time=0.05, ponder=True)):
        session.go(board, limits)
        session.stop()
        assert session.wait_idle(HANG)
    assert CountingSearcher.searches == 3  # analysis, infinite and ponder searches never use the book
    session.configure(replace(session.settings, skill=10))
    assert not session.think(board, Limits(depth=1)).book
    session.configure(replace(session.settings, skill=20, book=False))
    assert not session.think(board, Limits(depth=1)).book
    assert CountingSearcher.searches == 5


def test_a_session_plays_from_a_book_of_its_own_and_survives_a_broken_one(tmp_path: Path) -> None:
    start = Position.start()
    notes: list[str] = []
    own = tmp_path / "own.txt"
    own.write_text(Book([entry_of(start, [0, 0, 0, 0, 0, 0, 90])]).text(), encoding="utf-8")
    session = Session(settings=EngineSettings(hash_mb=1, book_path=str(own)), searcher_factory=CountingSearcher,
                      report=notes.append)
    assert session.think(Board(), Limits(depth=1)).move == legal_moves(start)[6]
    session.configure(replace(session.settings, book_variety=MAX_VARIETY, seed=3))
    played = {session.think(Board(), Limits(depth=1)).move for _ in range(40)}
    assert len(played) > 1 and played <= set(legal_moves(start))
    broken = tmp_path / "broken.txt"
    broken.write_text(f"{BOOK_HEADER}\n{start.white:09x} {start.black:09x} {start.kings:09x} w 5 23-19=+1\n",
                      encoding="utf-8")
    session.configure(replace(session.settings, book_path=str(broken)))
    answer = session.think(Board(), Limits(depth=1))
    assert not answer.book and answer.move in legal_moves(start)
    assert any("opening book failed" in note for note in notes)


# -- play: the Hub ---------------------------------------------------------------------------------


def hub_lines(lines: list[str]) -> list[str]:
    output = io.StringIO()
    HubServer(output, searcher_factory=CountingSearcher).run(lines)
    return output.getvalue().splitlines()


def test_the_hub_declares_the_book_parameters_and_marks_a_book_move() -> None:
    CountingSearcher.searches = 0
    out = hub_lines(["hub", "init", f"pos pos={START_HUB}", "level move-time=1", "go think"])
    assert "param name=book value=true type=bool" in out
    assert f"param name=book-variety value=0 type=int min=0 max={MAX_VARIETY}" in out
    info, done = out[-2:]
    best = shipped_book().moves(Board())[0]
    assert info.startswith("info depth=0 ") and "book=true" in info and f'pv="{best.move.hub()} ' in info
    assert done.startswith(f"done move={best.move.hub()} ponder=") and CountingSearcher.searches == 0


def test_the_hub_book_parameters_turn_it_off_and_vary_it() -> None:
    CountingSearcher.searches = 0
    out = hub_lines(["set-param name=book value=false", f"pos pos={START_HUB}", "level depth=2", "go think",
                     "set-param name=book-variety value=201", "set-param name=book value=maybe"])
    assert CountingSearcher.searches == 1 and "book=true" not in out[0]
    assert [line.split()[0] for line in out] == ["done", "error", "error"]
    moves = set()
    for seed in range(12):
        out = hub_lines([f"set-param name=seed value={seed}", f"set-param name=book-variety value={MAX_VARIETY}",
                         f"pos pos={START_HUB}", "level depth=2", "go think"])
        assert "book=true" in out[0]
        moves.add(out[-1].split()[1])
    assert len(moves) > 1 and CountingSearcher.searches == 1



def test_the_hub_plays_from_the_book_file_it_is_given_and_refuses_a_bad_one(tmp_path: Path) -> None:
    start = Position.start()
    own = tmp_path / "own.txt"
    own.write_text(Book([entry_of(start, [0, 0, 0, 0, 0, 0, 90])]).text(), encoding="utf-8")
    CountingSearcher.searches = 0
    out = hub_lines(["hub", f"set-param name=book-file value={tmp_path / 'missing.txt'}",
                     f"set-param name=book-file value={own}", f"set-param name=book-file value={tmp_path}",
                     f"pos pos={START_HUB}", "level move-time=1", "go think"])
    assert 'param name=book-file value="" type=string' in out
    errors = [line for line in out if line.startswith("error ")]
    assert len(errors) == 2 and all("book-file" in line and "cannot read the book" in line for line in errors)
    assert out[-1].startswith(f"done move={legal_moves(start)[6].hub()}") and CountingSearcher.searches == 0

# -- the match ---------------------------------------------------------------------------------


@pytest.mark.parametrize("book", [True, False])
def test_match_no_book_sets_engines_that_declare_it(book: bool) -> None:
    assert PEDINA is not None
    spec = EngineSpec("pedina", f"{PEDINA} hub", tc=TimeControl(depth=2))
    seats = Seats([spec], Settings(book=book))
    try:
        engine = seats.get(0)
        report = engine.finish_search(engine.start_search(START_HUB, [], {"depth": 2}), timeout=30.0)
        assert report.book is book and (report.depth == 0) is book
    finally:
        seats.close_all()


# -- analysis -----------------------------------------------------------------------------------------


def test_analyze_marks_the_played_book_moves(tmp_path: Path) -> None:
    board = Board()
    first = shipped_book().moves(board)[-1].move  # in the book, however bad
    board.push(first)
    reply = board.legal_moves()[0]
    game = tmp_path / "game.pdn"
    game.write_text(f'[Event "t"]\n[GameType "22"]\n\n1. {Board().pdn(first)} {board.pdn(reply)} *\n')
    found = run("analyze", str(game), "--depth", "1", "--jsonl")
    assert found.returncode == 0, found.stderr
    rows = [json.loads(line) for line in found.stdout.splitlines()][1:]
    assert rows[0]["book"] is True and rows[2]["book"] is False
    assert rows[1]["book"] is (reply in [choice.move for choice in shipped_book().moves(board)])
    table = run("analyze", str(game), "--depth", "1")
    assert "(book)" in table.stdout.splitlines()[1]
    annotated = tmp_path / "out.pdn"
    assert run("analyze", str(game), "--depth", "1", "--annotate", str(annotated)).returncode == 0
    assert "{book " in annotated.read_text()
    plain = run("analyze", str(game), "--depth", "1", "--jsonl", "--no-book")
    assert all(json.loads(line).get("book") in (None, False) for line in plain.stdout.splitlines())


# -- building -----------------------------------------------------------------------------------------


def test_a_tiny_build_covers_the_first_plies_then_expands_best_first(tmp_path: Path) -> None:
    path = tmp_path / "book.txt"
    counts: list[int] = []
    book = build_book(path, 2, 20, plies=1, settings=EngineSettings(hash_mb=1), progress=counts.append)
    assert counts == list(range(21)) and len(book) == 20
    assert Book.read(path).text().splitlines()[1:] == [entry.line() for entry in book]
    assert all(position in book for position in opening_positions(1))
    assert all(entry.depth == 2 for entry in book)
    # Beyond ply 1 the cheapest first: a best reply of a ply-1 position comes before its worst.
    ply1 = opening_positions(1)[1]
    searched = book.get(ply1)
    assert searched is not None and ply1.play(searched.moves[0].move) in book


def test_an_interrupted_build_resumes_to_the_book_of_one_run(tmp_path: Path) -> None:
    whole = tmp_path / "whole.txt"
    build_book(whole, 2, 16, plies=1, settings=EngineSettings(hash_mb=1))
    part = tmp_path / "part.txt"

    def interrupt(count: int) -> None:
        if count == 11:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_book(part, 2, 16, plies=1, settings=EngineSettings(hash_mb=1), progress=interrupt)
    assert len(Book.read(part)) == 11  # every position searched was kept
    with open(part, "a", encoding="utf-8") as handle:
        handle.write("f7f800000 000001fef 0000")  # a line cut short by the interruption
    with pytest.raises(BookError, match="already exists"):
        build_book(part, 2, 16, plies=1, settings=EngineSettings(hash_mb=1))
    with pytest.raises(BookError, match="depth 2, not 3"):
        build_book(part, 3, 16, plies=1, settings=EngineSettings(hash_mb=1), resume=True)
    build_book(part, 2, 16, plies=1, settings=EngineSettings(hash_mb=1), resume=True)
    assert part.read_text() == whole.read_text()


def book_lines(path: Path) -> list[str]:
    """The book's position lines in a fixed order: a parallel build writes them as searches end."""
    return sorted(entry.line() for entry in Book.read(path))


def test_a_batched_build_is_one_book_for_any_workers_and_after_a_resume(tmp_path: Path) -> None:
    settings = EngineSettings(hash_mb=1)
    alone, pooled, resumed = tmp_path / "alone.txt", tmp_path / "pooled.txt", tmp_path / "resumed.txt"
    build_book(alone, 2, 24, plies=1, settings=settings, batch=4)
    build_book(pooled, 2, 24, plies=1, settings=settings, batch=4, workers=2)
    assert len(book_lines(alone)) == 24 and book_lines(pooled) == book_lines(alone)

    def interrupt(count: int) -> None:
        if count == 15:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # in the middle of a batch, the pool shut down
        build_book(resumed, 2, 24, plies=1, settings=settings, batch=4, workers=2, progress=interrupt)
    assert len(Book.read(resumed)) == 15
    build_book(resumed, 2, 24, plies=1, settings=settings, batch=4, resume=True)
    assert book_lines(resumed) == book_lines(alone)


def test_a_cluster_builds_the_book_of_one_process(cluster: str, tmp_path: Path) -> None:
    alone = tmp_path / "alone.txt"
    build_book(alone, 2, 20, plies=1, settings=EngineSettings(hash_mb=1), batch=5)
    built = run("book", "build", "--out", "clustered.txt", "--depth", "2", "--positions", "20", "--plies", "1",
                "--hash", "1", "--batch", "5", "--cluster", cluster, cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert f"on Dask cluster {cluster}" in built.stderr and "20 positions (20 searched now" in built.stdout
    assert book_lines(tmp_path / "clustered.txt") == book_lines(alone)
    both = run("book", "build", "--out", "x.txt", "--cluster", cluster, "--workers", "2", cwd=tmp_path)
    assert both.returncode == 1 and both.stderr.strip().splitlines() == [
        "Error: --workers is for this machine; on a cluster, each worker's threads are its own"]


def test_the_book_command_builds_resumes_and_lists(tmp_path: Path) -> None:
    built = run("book", "build", "--out", "b.txt", "--depth", "2", "--positions", "10", "--plies", "1",
                "--hash", "1", cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    assert "10 positions (10 searched now, depth 2)" in built.stdout and "--threads" not in built.stderr
    shared = run("book", "build", "--out", "shared.txt", "--depth", "2", "--positions", "3", "--plies", "1",
                 "--hash", "1", "--threads", "2", cwd=tmp_path)
    assert shared.returncode == 0 and "3 positions (3 searched now, depth 2)" in shared.stdout
    assert "Warning: with --threads 2 each search ends where" in shared.stderr
    again = run("book", "build", "--out", "b.txt", "--depth", "2", "--positions", "10", cwd=tmp_path)
    assert again.returncode == 1 and again.stderr.strip().splitlines()[-1].startswith("Error: b.txt already exists")
    more = run("book", "build", "--out", "b.txt", "--depth", "2", "--positions", "12", "--plies", "1",
               "--hash", "1", "--resume", cwd=tmp_path)
    assert more.returncode == 0 and "12 positions (2 searched now" in more.stdout
    listed = run("book", "moves", "--book", str(tmp_path / "b.txt"))
    assert listed.returncode == 0 and len(listed.stdout.splitlines()) == 1 + 7
    finished = run("book", "finish", "b.txt", "--out", "finished.txt", cwd=tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert finished.stdout.startswith("finished.txt: 12 positions, ")
    raw = Book.read(tmp_path / "b.txt")
    text = (tmp_path / "finished.txt").read_text(encoding="utf-8")
    assert Book.from_text(text).text() == raw.backed_up().text() != raw.text()
    assert text.splitlines()[1] == (tmp_path / "b.txt").read_text(encoding="utf-8").splitlines()[1]  # how built
    kept = (tmp_path / "b.txt").read_bytes()
    again = run("book", "finish", "b.txt", "--out", "b.txt", cwd=tmp_path)
    assert again.returncode == 1 and again.stderr.count("\n") == 1 and "already exists" in again.stderr
    assert (tmp_path / "b.txt").read_bytes() == kept  # the build's own file is never overwritten
    missing = run("book", "moves", "B:W21:B1", "--book", str(tmp_path / "b.txt"))
    assert missing.returncode == 0 and "not in the book" in missing.stdout  # an answer, not a failure
    bad = run("book", "moves", "--book", str(tmp_path))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_the_coverage_script_counts_each_players_book_moves(tmp_path: Path) -> None:
    games = tmp_path / "games.pdn"
    games.write_text('[White "first"]\n[Black "second"]\n[Result "*"]\n\n'
                     "1. 22-18 {book 0.001s} 10-14 {book 0.002s} 2. 23-19 {-0.12/5 0.050s} *\n\n"
                     '[White "second"]\n[Black "first"]\n[FEN "B:W21-32:B1-12"]\n[Result "*"]\n\n'
                     "1... 10-14 {book 0.001s} 2. 22-18 {+0.03/5 0.040s} 11-15 {book 0.001s} *\n",
                     encoding="utf-8")
    script = Path(__file__).parent.parent / "scripts" / "book_coverage.py"
    done = subprocess.run([sys.executable, str(script), "--games", str(games)], capture_output=True, text=True,
                          timeout=HANG)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"{len(shipped_book()):,} positions; 302 openings of 3 plies, 302 ending in a book position"
    assert lines[-2:] == ["first: 3 book moves in 2 games, 1.50 a game", "second: 1 book moves in 2 games, 0.50 a game"]
