"""Endgame databases: indexing, the file format, the retrograde build against the rules,
the counts table of docs/egdb.md, verification, probing, resuming, and ``pedina egdb``.

The fast tests build every table of up to 3 pieces (a few seconds); the slow ones
build and verify every table of up to 4 pieces and check 1,000 random positions
against a deep search.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pedina.settings import EngineSettings
from pedina import Board, Info, Limits, Position, Searcher, legal_moves
from pedina.egdb import (
    SHIPPED_PIECES,
    DatabaseValue,
    EndgameDatabase,
    SliceIndex,
    SliceReport,
    TableFile,
    TableFileError,
    VerifyReport,
    all_signatures,
    build_databases,
    build_job,
    build_jobs,
    dependencies,
    installed_database,
    job_positions,
    shipped_database,
    shipped_directory,
    slice_name,
    table_path,
    verify_databases,
    verify_table,
)
from pedina.egdb.build import built_report
from pedina.egdb.slices import Signature, flip_bits, flipped_signature, signature_of
from pedina.egdb.store import code_distance, filled_holes, loss_code, win_code, write_table
from pedina.movegen import generate
from pedina.protocol.dxp.follower import DxpFollower
from pedina.protocol.hub import HubServer
from pedina.protocol.hubline import parse_line
from pedina.scores import DATABASE_WIN, WIN, Score, database_result, proven_plies
from pedina.squares import SQUARE_BIT, squares_of
from timing import HANG, allowed

DOCS = Path(__file__).resolve().parent.parent / "docs" / "egdb.md"
PEDINA = shutil.which("pedina")


def documented_counts() -> dict[Signature, tuple[int, tuple[int, int, int], tuple[int, int, int]]]:
    """The counts table of docs/egdb.md (its section "Counts"): slice -> (positions, White
    to move (wins, losses, draws), Black to move (wins, losses, draws))."""
    table = {}
    section = DOCS.read_text(encoding="utf-8").split("\n## Counts\n")[1].split("\n## ")[0]
    for line in section.splitlines():
        match = re.fullmatch(r"\| slice-(\d+)-(\d+)-(\d+)-(\d+) \|(.*)\|", line.strip())
        if match:
            men, kings, other_men, other_kings = (int(group) for group in match.groups()[:4])
            cells = [int(cell.strip().replace(",", "")) for cell in match.group(5).split("|")[:7]]
            table[(men, kings, other_men, other_kings)] = (cells[0], (cells[1], cells[2], cells[3]),
                                                           (cells[4], cells[5], cells[6]))
    return table


def check_documented_counts(directory: str, pieces: int) -> None:
    """Every slice of up to ``pieces`` pieces built in ``directory`` has the documented counts."""
    documented = documented_counts()
    database = EndgameDatabase(directory)
    for signature in all_signatures(pieces):
        positions, white_counts, black_counts = documented[signature]
        white_table = database.table(signature)[1]
        black_table = database.table(flipped_signature(signature))[1]
        assert (positions, white_counts, black_counts) == (
            SliceIndex(signature).positions_count, white_table.counts, black_table.counts), slice_name(signature)
    database.close()


@pytest.fixture(scope="module")
def three(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder with every table of up to 3 pieces."""
    directory = str(tmp_path_factory.mktemp("egdb3"))
    build_databases(directory, 3)
    return directory


def bits_position(white: int, black: int, kings: int) -> Position:
    """The position with White to move of a table's bitboards."""
    return Position.from_squares(squares_of(white & ~kings), squares_of(white & kings), squares_of(black & ~kings),
                                 squares_of(black & kings), True)


def random_position(rng: random.Random, pieces: int) -> Position:
    """A random position with 2..``pieces`` pieces, at least one a side (men never on
    their promotion row), either side to move."""
    while True:
        count = rng.randint(2, pieces)
        squares = rng.sample(range(1, 33), count)
        split = rng.randint(1, count - 1)
        groups: list[list[int]] = [[], [], [], []]
        for number, square in enumerate(squares):
            white = number < split
            king = rng.random() < 0.5
            if not king and (square <= 4 if white else square >= 29):
                king = True
            groups[(0 if white else 2) + king].append(square)
        return Position.from_squares(groups[0], groups[1], groups[2], groups[3], rng.random() < 0.5)


def successor_value(database: EndgameDatabase, position: Position) -> DatabaseValue:
    """A position's value from its successors' probes, with the public API only."""
    moves = legal_moves(position)
    if not moves:
        return DatabaseValue(-1, 0)
    outcomes = []
    for move in moves:
        after = position.play(move)
        value = database.probe(after)
        if value is None:  # the mover took the last piece
            assert not (after.white if after.white_to_move else after.black)
            value = DatabaseValue(-1, 0)
        zeroing = move.is_capture or not SQUARE_BIT[move.start] & position.kings
        if value.result and not zeroing:
            assert value.distance is not None
            outcomes.append((-value.result, 1 + value.distance))
        else:
            outcomes.append((-value.result, 1))
    best = max(result for result, _ in outcomes)
    if best == 0:
        return DatabaseValue(0, None)
    plies = [distance for result, distance in outcomes if result == best]
    return DatabaseValue(best, min(plies) if best > 0 else max(plies))


# -- slices and indices ---------------------------------------------------------------


def test_flip_turns_the_board_half_a_turn() -> None:
    for square in range(1, 33):
        assert flip_bits(SQUARE_BIT[square]) == SQUARE_BIT[33 - square]
    assert flip_bits(flip_bits(0xF0F0F0F0F)) == 0xF0F0F0F0F & sum(SQUARE_BIT)


@pytest.mark.parametrize("signature", [(0, 1, 0, 1), (1, 0, 1, 0), (0, 2, 0, 1), (1, 1, 1, 0), (2, 0, 0, 1)])
def test_every_position_of_a_table_has_its_own_index(signature: Signature) -> None:
    index = SliceIndex(signature)
    seen = set()
    validity = index.validity()
    for number, white, black, kings in index.positions():
        assert index.index(white, black, kings) == number
        assert index.position(number) == (white, black, kings)
        assert index.position(number, turned=True) == (flip_bits(white), flip_bits(black), flip_bits(kings))
        assert index.turned_index(flip_bits(white), flip_bits(black), flip_bits(kings)) == number
        assert signature_of(white, black, kings) == signature and not white & black
        assert validity[number] == 1
        seen.add((white, black, kings))
    assert len(seen) == index.positions_count == validity.count(1)
    assert len(validity) == index.size


def test_positions_count_is_every_legal_placement() -> None:
    # 1 white man (28 squares), 1 black king (31 left) and 1 black man (27 of its 28 left, less the king's).
    kings_men = sum(1 for man in range(5, 33) for other in range(1, 29) if other != man) * 30
    assert SliceIndex((1, 0, 1, 1)).positions_count == kings_men
    assert SliceIndex((0, 2, 0, 2)).positions_count == 32 * 31 // 2 * (30 * 29 // 2)


def test_dependencies_hold_every_exit() -> None:
    """Every capture or promotion of every 3-piece position leads into a listed table."""
    for signature in all_signatures(3):
        needed = set(dependencies(signature))
        for _, white, black, kings in SliceIndex(signature).positions():
            for frm, to, taken, toggle, _ in generate(white, black, kings, True):
                promotes = toggle and not frm & kings
                if (taken or promotes) and black ^ taken:
                    after = signature_of(black ^ taken, white ^ frm ^ to, kings ^ toggle)
                    assert after in needed, (slice_name(signature), after)


def test_jobs_come_after_what_they_need() -> None:
    built: set[Signature] = set()
    for job in build_jobs(5):
        for signature in job:
            assert set(dependencies(signature)) <= built, slice_name(signature)
        built.update(job)
        assert all(flipped_signature(signature) in job for signature in job)
    assert built == set(all_signatures(5))


# -- the file format ------------------------------------------------------------------


@pytest.mark.parametrize("distances", [False, True])
def test_table_file_round_trip(tmp_path: Path, distances: bool) -> None:
    rng = random.Random(7)
    codes = bytes(rng.choice([0, 1, 2] if not distances else [0, 3, 4, 9, 200, 255]) for _ in range(70_001))
    path = str(tmp_path / "slice-0-1-0-1.egdb")
    size = write_table(path, (0, 1, 0, 1), codes, distances, (1, 2, 3))
    table = TableFile(path)
    assert os.path.getsize(path) == size == table.compressed_size
    assert (table.signature, table.size, table.distances, table.counts) == ((0, 1, 0, 1), len(codes), distances,
                                                                          (1, 2, 3))
    assert table.codes() == codes
    for index in rng.sample(range(len(codes)), 2000) + [0, len(codes) - 1]:
        assert table.code(index) == codes[index]
    table.close()


def test_codes_hold_their_distances() -> None:
    assert [code_distance(win_code(d)) for d in (1, 2, 127)] == [1, 2, 127]
    assert [code_distance(loss_code(d)) for d in (0, 1, 125)] == [0, 1, 125]
    assert code_distance(0) is None and code_distance(1) is None and code_distance(2) is None
    assert DatabaseValue.from_code(win_code(5)) == DatabaseValue(1, 5)
    assert DatabaseValue.from_code(loss_code(0)) == DatabaseValue(-1, 0)
    assert DatabaseValue.from_code(0) == DatabaseValue(0, None)


def test_holes_are_filled_with_the_most_common_code() -> None:
    assert filled_holes(bytes([5, 0, 5, 7, 0]), bytes([1, 0, 1, 1, 0])) == bytes([5, 5, 5, 7, 5])
    # Over several of the chunks it fills at a time, against the whole table at once.
    rng = random.Random(7)
    size = 10_000_019
    codes = rng.randbytes(size).translate(bytes(code % 3 for code in range(256)))
    validity = rng.randbytes(size).translate(bytes(code & 1 for code in range(256)))
    fill = max(range(3), key=codes.count)
    keep = int.from_bytes(validity.translate(bytes([0, 255]) + bytes(254)), "little")
    whole = int.from_bytes(codes, "little") & keep | int.from_bytes(bytes([fill]) * size, "little") & ~keep
    assert filled_holes(codes, validity) == whole.to_bytes(size, "little")


@pytest.mark.parametrize("damage", ["truncate", "magic", "block"])
def test_damaged_table_files_are_refused(tmp_path: Path, damage: str) -> None:
    path = str(tmp_path / "slice-0-1-0-1.egdb")
    write_table(path, (0, 1, 0, 1), bytes(range(3)) * 5000, True, (0, 0, 0))
    data = bytearray(Path(path).read_bytes())
    if damage == "truncate":
        data = data[:-10]
    elif damage == "magic":
        data[0] ^= 1
    else:
        data[-20] ^= 0xFF
    Path(path).write_bytes(bytes(data))
    with pytest.raises(TableFileError):
        TableFile(path).codes()


# -- the build against the rules ------------------------------------------------------


def test_small_tables_match_the_documented_counts(three: str) -> None:
    check_documented_counts(three, 3)


def test_documented_table_lists_every_slice_up_to_4_pieces() -> None:
    assert set(documented_counts()) == set(all_signatures(4))


def test_verify_passes_on_a_built_database(three: str) -> None:
    reports = verify_databases(three)
    assert len(reports) == len(all_signatures(3))
    assert all(report.ok for report in reports), [report.examples for report in reports if not report.ok]


def test_verify_finds_a_wrong_value(three: str, tmp_path: Path) -> None:
    for name in os.listdir(three):
        shutil.copy(os.path.join(three, name), tmp_path / name)
    signature = (1, 1, 0, 1)
    path = table_path(str(tmp_path), signature)
    table = TableFile(path)
    codes = bytearray(table.codes())
    counts = table.counts
    table.close()
    wrong, white, black, kings = next(SliceIndex(signature).positions())
    right = codes[wrong]
    codes[wrong] = 0 if right else win_code(1)
    write_table(path, signature, codes, True, counts)
    report = [report for report in verify_databases(str(tmp_path)) if report.signature == signature][0]
    assert report.errors == 1 and not report.counts_match and not report.ok
    fen = bits_position(white, black, kings).fen()
    assert report.examples == [f"{fen}: stored {codes[wrong]}, expected {right}"]


def test_probes_agree_with_the_successors_through_the_public_api(three: str) -> None:
    database = EndgameDatabase(three)
    rng = random.Random(12)
    for _ in range(1500):
        position = random_position(rng, 3)
        assert database.probe(position) == successor_value(database, position), position.fen()
    database.close()


def test_known_endings(three: str) -> None:
    database = EndgameDatabase(three)
    # Two kings against one win from almost everywhere; a lone man against a king mostly loses.
    assert database.probe(Position.from_fen("W:WK1,K5:BK30")) == DatabaseValue(1, 27)
    assert database.probe(Position.from_fen("B:WK1,K5:BK30")) == DatabaseValue(-1, 32)
    value = database.probe(Position.from_fen("W:WK14:BK10"))  # a king takes the king next to it
    assert value is not None and value.result == 1 and value.distance == 1
    assert database.probe(Position.from_fen("W:W21,22:B1,2,3")) is None  # 5 pieces: no table
    assert database.probe(Position.from_fen("W:W21:B")) is None  # Black has lost already
    assert database.pieces == 3
    database.close()


def test_a_won_ending_follows_the_distances_to_the_end(three: str) -> None:
    """Winner nearest, loser farthest: each ply takes one off the distance, a capture or
    man move starts a new count, and the game ends with the winner's win."""
    database = EndgameDatabase(three)
    board = Board(Position.from_fen("W:WK1,K5:BK30"))
    winner = True
    value = database.probe(board.position)
    while value is not None and board.legal_moves():
        assert value.distance is not None
        best = None
        for move in board.legal_moves():
            after = database.probe(board.position.play(move))
            key = (-1, 0) if after is None else (after.result, after.distance or 0)
            if best is None or (key < best[0] if board.position.white_to_move == winner else key > best[0]):
                best = (key, move)
        assert best is not None
        move = best[1]
        zeroing = move.is_capture or not SQUARE_BIT[move.start] & board.position.kings
        board.push(move)
        after_value = database.probe(board.position)
        if after_value is not None and not zeroing:
            assert after_value.distance == value.distance - 1
        value = after_value
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is True
    database.close()


# -- the search with a database ------------------------------------------------------


def test_the_search_takes_the_database_value_and_plays_the_nearest_win(three: str) -> None:
    database = EndgameDatabase(three)
    searcher = Searcher(EngineSettings(hash_mb=4, egdb_path=three))
    board = Board("W:WK1,K5:BK30")
    infos: list[Info] = []
    result = searcher.search(board, Limits(depth=10), infos.append)
    after = database.probe(board.position.play(result.best)) if result.best is not None else None
    assert after == DatabaseValue(-1, 26)  # the root's distance is 27: one less after the best move
    assert result.depth == 1 and result.score == DATABASE_WIN - 26 and database_result(result.score) == 1
    assert proven_plies(result.score) is None  # exact, but not a win in a number of plies
    assert [database_result(info.score) for info in infos] == [1]
    lost = searcher.search(Board("B:WK1,K5:BK30"), Limits(depth=10))
    assert database_result(lost.score) == -1 and lost.score == -(DATABASE_WIN - 31)
    database.close()


def test_a_win_the_40_move_count_takes_away_is_a_draw(three: str) -> None:
    database = EndgameDatabase(three)
    searcher = Searcher(EngineSettings(hash_mb=4, egdb_path=three))
    assert database.probe(Position.from_fen("W:WK1,K2:BK13")) == DatabaseValue(1, 33)
    short = searcher.search(Board("W:WK1,K2:BK13", draw_plies=30), Limits(depth=4))
    assert short.score == 0
    enough = searcher.search(Board("W:WK1,K2:BK13", draw_plies=34), Limits(depth=4))
    assert database_result(enough.score) == 1
    database.close()


def played_out(database: EndgameDatabase, start: Position) -> Board:
    """The game from a won ``start``, the engine against itself at 0.1 s a move, both with
    the database, played under the 40-move count (and stopped at 200 plies)."""
    expected = database.probe(start)
    assert expected is not None and expected.result == 1
    board = Board(start)
    sides = [Searcher(EngineSettings(hash_mb=4, egdb_path=database.directory)) for _ in range(2)]
    while board.outcome() is None and len(board.moves) < 200:
        move = sides[board.position.white_to_move].search(board, Limits(move_time=0.1)).best
        assert move is not None
        board.push(move)
    return board


@pytest.mark.parametrize("fen", ["W:WK1,K2:BK13", "W:WK1,25:BK21", "B:WK3:BK28,K32"])
def test_won_endings_are_played_out_by_the_engine(three: str, fen: str) -> None:
    """Two kings against one, a king and a man against a king (the longest wins of their
    tables), and a win with Black to move: the winner wins."""
    start = Position.from_fen(fen)
    board = played_out(EndgameDatabase(three), start)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner == start.white_to_move, board.moves


@pytest.fixture(scope="module")
def three_without_distances(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Every table of up to 3 pieces, those of 3 pieces without distances (as 5-piece tables are)."""
    directory = str(tmp_path_factory.mktemp("egdb3-wld"))
    build_databases(directory, 3, distance_pieces=2)
    return directory


@pytest.mark.parametrize("depth", [6, 8])
def test_a_win_without_distances_is_searched_on_and_played_out(three_without_distances: str, depth: int) -> None:
    """The database only says who wins: the search goes on and the evaluation finds the way.
    A king and a man against a king: the engine without the database repeats at depth 6,
    and so did the engine that scored every such win the same."""
    database = EndgameDatabase(three_without_distances)
    start = Position.from_fen("W:WK1,25:BK21")
    found = database.probe(start)
    assert found is not None and found.result == 1 and found.distance is None
    board = Board(start)
    sides = [Searcher(EngineSettings(hash_mb=4, egdb_path=database.directory)) for _ in range(2)]
    scores = []
    while board.outcome() is None and len(board.moves) < 200:
        result = sides[board.position.white_to_move].search(board, Limits(depth=depth))
        assert result.best is not None
        scores.append(result.score)
        if len(scores) == 1:
            assert result.depth == depth  # not the one ply of a position whose table has distances
        board.push(result.best)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is True, board.moves
    assert database_result(scores[0]) == 1 and proven_plies(scores[0]) is None
    database.close()


def test_without_a_database_the_search_estimates(three: str) -> None:
    result = Searcher(EngineSettings(hash_mb=4, egdb_path="")).search(Board("W:WK1,K5:BK30"), Limits(depth=3))
    assert result.depth == 3 and database_result(result.score) == 0


def test_hub_engine_probes_the_egdb_path(three: str) -> None:
    output = io.StringIO()
    HubServer(output).run([f"set-param name=egdb-path value={three}",
                           f"pos pos={Position.from_fen('W:WK1,K5:BK30').hub()}", "level depth=8", "go think",
                           "set-param name=egdb-path value=/no/such/folder", "go think",
                           'set-param name=egdb-path value=""', "go think"])
    lines = output.getvalue().splitlines()
    infos = [dict(parse_line(line)[1]) for line in lines if line.startswith("info ")]
    errors = [line for line in lines if line.startswith("error ")]
    assert infos[0]["egdb"] == "win" and infos[0]["depth"] == "1"
    assert len(errors) == 1 and "/no/such/folder" in errors[0]
    assert [info.get("egdb") for info in infos if info["depth"] == "1"] == ["win", "win", None]
    assert sum(line.startswith("done move=") for line in lines) == 3


def test_the_hub_engine_probes_the_shipped_tables_until_told_otherwise() -> None:
    output = io.StringIO()
    HubServer(output).run(["hub", "init", f"pos pos={Position.from_fen('W:WK1,K5:BK30').hub()}", "level depth=8",
                           "go think"])
    lines = output.getvalue().splitlines()
    declared = [dict(parse_line(line)[1]) for line in lines if line.startswith("param name=egdb-path ")]
    infos = [dict(parse_line(line)[1]) for line in lines if line.startswith("info ")]
    assert [param["value"] for param in declared] == [shipped_directory()]
    assert infos[0]["egdb"] == "win" and infos[0]["depth"] == "1"


def test_the_shipped_tables_are_every_table_of_up_to_5_pieces_as_a_build_makes_them(three: str) -> None:
    """The package ships every table of up to 5 pieces; the small ones are byte for byte
    those a build makes here (the 4-piece ones in the slow tests)."""
    shipped = shipped_database()
    assert shipped is not None and shipped.pieces == SHIPPED_PIECES == 5
    assert shipped.signatures == set(all_signatures(SHIPPED_PIECES))
    for signature in all_signatures(3):
        name = slice_name(signature) + ".egdb"
        assert Path(shipped_directory(), name).read_bytes() == Path(three, name).read_bytes(), name
    shipped.close()


def test_every_shipped_table_has_distances_so_a_long_5_piece_win_is_played_within_the_count() -> None:
    """Every shipped table, 5-piece ones included, stores distances: the 3 kings against 2
    the 5-piece tables without distances let the engine draw by the 40-move count is a win
    in 48 plies to the next capture."""
    for signature in all_signatures(SHIPPED_PIECES):
        table = TableFile(str(Path(shipped_directory(), slice_name(signature) + ".egdb")))
        assert table.distances, slice_name(signature)
        table.close()
    shipped = shipped_database()
    assert shipped is not None
    assert shipped.probe(Position.from_fen("W:WK1,K3,K4:BK10,K11")) == DatabaseValue(1, 48)
    shipped.close()


def test_proven_note_names_the_database() -> None:
    assert Score.of(DATABASE_WIN - 5).note("White", "Black") == "White wins (endgame database)"
    assert Score.of(-(DATABASE_WIN - 5)).note("White", "Black") == "Black wins (endgame database)"
    assert Score.of(WIN - 5).note("White", "Black") == "White wins in 5 plies"


# -- resuming and the command ---------------------------------------------------------


def test_an_interrupted_build_resumes_with_the_missing_table(three: str, tmp_path: Path) -> None:
    for name in os.listdir(three):
        shutil.copy(os.path.join(three, name), tmp_path / name)
    missing = (0, 2, 0, 1)
    before = Path(table_path(three, missing)).read_bytes()
    os.remove(table_path(str(tmp_path), missing))
    Path(table_path(str(tmp_path), missing) + ".part").write_bytes(b"half a table")
    progress: list[int] = []
    reports = build_databases(str(tmp_path), 3, progress=progress.append)
    rebuilt = {report.signature for report in reports if report.seconds is not None}
    assert rebuilt == {missing, flipped_signature(missing)}
    assert Path(table_path(str(tmp_path), missing)).read_bytes() == before
    assert sum(progress) == 2 * sum(job_positions(job) for job in build_jobs(3))  # the bar's length


def test_reports_pickle_for_worker_processes_and_cluster_tasks() -> None:
    report = SliceReport((0, 2, 0, 1), 14_880, (14_846, 0, 34), 5_229, 1.5, 1.25, 40_000_000)
    back = pickle.loads(pickle.dumps(report))
    assert (back.signature, back.positions, back.counts, back.file_bytes, back.seconds, back.cpu_seconds,
            back.peak_bytes) == ((0, 2, 0, 1), 14_880, (14_846, 0, 34), 5_229, 1.5, 1.25, 40_000_000)
    checked = pickle.loads(pickle.dumps(VerifyReport((0, 2, 0, 1), 14_880, 1, ["W:WK1,K2:BK13: ..."], True)))
    assert (checked.signature, checked.errors, checked.examples, checked.ok) == (
        (0, 2, 0, 1), 1, ["W:WK1,K2:BK13: ..."], False)


def test_a_build_copies_the_shipped_tables_where_they_are_what_it_would_write(
        three_without_distances: str, tmp_path: Path) -> None:
    copies = build_databases(str(tmp_path / "copies"), 3, copy_from=shipped_directory())
    assert all(report.copied and report.seconds is None for report in copies)
    for report in copies:
        name = slice_name(report.signature) + ".egdb"
        assert (tmp_path / "copies" / name).read_bytes() == Path(shipped_directory(), name).read_bytes()
    # The shipped 3-piece tables have distances, so a build without them solves those.
    mixed = build_databases(str(tmp_path / "mixed"), 3, distance_pieces=2, copy_from=shipped_directory())
    assert {report.copied for report in mixed if sum(report.signature) == 2} == {True}
    assert {report.copied for report in mixed if sum(report.signature) == 3} == {False}
    for report in mixed:
        name = slice_name(report.signature) + ".egdb"
        assert (tmp_path / "mixed" / name).read_bytes() == Path(three_without_distances, name).read_bytes()


def test_the_engine_probes_the_users_tables_where_they_go_further_than_the_shipped_ones(
        three: str, tmp_path: Path) -> None:
    two = str(tmp_path / "two")
    build_databases(two, 2)
    chosen = installed_database(user_folder=three, shipped_folder=two)
    assert chosen is not None and (chosen.directory, chosen.pieces) == (three, 3)
    chosen = installed_database(user_folder=two, shipped_folder=three)
    assert chosen is not None and chosen.directory == three
    chosen = installed_database(user_folder=str(tmp_path / "none"), shipped_folder=two)
    assert chosen is not None and chosen.directory == two
    assert installed_database(user_folder=str(tmp_path / "none"), shipped_folder=str(tmp_path / "none")) is None


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="the peak is a job's own only on Linux")
def test_a_jobs_peak_memory_is_its_own_not_its_processes_earlier_work(tmp_path: Path) -> None:
    earlier = bytearray(600 * 2**20)
    earlier[::4096] = b"x" * len(earlier[::4096])  # every page touched: resident
    del earlier
    (report, *_) = build_job(str(tmp_path), build_jobs(2)[0], True)
    assert report.peak_bytes is not None and 0 < report.peak_bytes < 400 * 2**20
    assert report.cpu_seconds is not None and report.seconds is not None and 0 <= report.cpu_seconds


def processes_of_session(session: int) -> list[int]:
    """The processes still alive in the session ``session`` (whose leader is that pid)."""
    alive = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getsid(int(name)) == session:
                    alive.append(int(name))
            except OSError:
                pass  # gone while listed
    return alive


@pytest.mark.slow
def test_ctrl_c_ends_a_build_and_its_workers_at_once_keeping_the_tables_it_finished(tmp_path: Path) -> None:
    """Deep in a compiled job a worker sees no interrupt before the job ends (seconds to hours):
    the build ends its workers itself. Ctrl-C goes, as from a terminal, to the process group."""
    assert PEDINA is not None
    build = subprocess.Popen([PEDINA, "egdb", "build", "--pieces", "5", "--distances", "4", "--workers", "2",
                              "--dir", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    assert build.stdout is not None and build.stderr is not None
    # Tables of up to 4 pieces are copied; once a solved 5-piece job has ended, the workers
    # have others of several seconds each.
    for line in build.stdout:
        if " wall " in line:
            break
    interrupted = time.monotonic()
    os.killpg(build.pid, signal.SIGINT)
    assert build.wait(timeout=HANG) == 130
    assert time.monotonic() - interrupted < allowed(0.3)
    assert "interrupted:" in build.stderr.read()
    assert processes_of_session(build.pid) == []
    kept = [name for name in os.listdir(tmp_path) if name.endswith(".egdb")]
    assert len(kept) > len(all_signatures(4))
    for name in kept:
        found = re.fullmatch(r"slice-(\d+)-(\d+)-(\d+)-(\d+)\.egdb", name)
        assert found is not None
        men, kings, other_men, other_kings = (int(number) for number in found.groups())
        assert built_report(str(tmp_path), (men, kings, other_men, other_kings)) is not None, name  # written whole


def test_a_build_in_two_processes_writes_the_same_files(three: str, tmp_path: Path) -> None:
    progress: list[int] = []
    reports = build_databases(str(tmp_path), 3, workers=2, progress=progress.append)
    assert [report.signature for report in reports] == [signature for job in build_jobs(3) for signature in job]
    assert sorted(os.listdir(tmp_path)) == sorted(os.listdir(three))
    for name in os.listdir(three):
        assert (tmp_path / name).read_bytes() == Path(three, name).read_bytes(), name
    assert sum(progress) == 2 * sum(job_positions(job) for job in build_jobs(3))


def run_pedina(*args: str) -> subprocess.CompletedProcess[str]:
    assert PEDINA is not None
    return subprocess.run([PEDINA, *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_command_builds_probes_and_verifies(tmp_path: Path) -> None:
    folder = str(tmp_path / "db")
    built = run_pedina("egdb", "build", "--pieces", "2", "--dir", folder, "--distances", "0")  # not as shipped
    assert built.returncode == 0, built.stderr
    lines = built.stdout.rstrip().splitlines()
    jobs = len(build_jobs(2))
    assert lines[-2].startswith("4 tables") and lines[-1].startswith(f"{jobs} jobs solved:"), lines
    assert all(re.search(r"wall +[\d.]+ s  cpu +[\d.]+ s  peak +[\d,]+ MB$", line) for line in lines[:4]), lines
    again = run_pedina("egdb", "build", "--pieces", "2", "--dir", folder, "--distances", "0")
    assert again.stdout.count("already built") == 4 and "jobs solved" not in again.stdout
    copies = str(tmp_path / "copies")
    copied = run_pedina("egdb", "build", "--pieces", "2", "--dir", copies)
    assert copied.returncode == 0 and copied.stdout.count("copied from the shipped tables") == 4, copied.stdout
    probed = run_pedina("egdb", "probe", "W:WK14:BK10", "--dir", copies, "--moves")
    assert probed.returncode == 0, probed.stderr
    assert probed.stdout.splitlines() == [
        "W:WK14:BK10  White to move: win (1 plies to the next capture or man move, or the end)",
        "  14x5         then Black has no piece left: a loss"]
    verified = run_pedina("egdb", "verify", "--dir", folder, "--workers", "2")
    assert verified.returncode == 0 and verified.stdout.rstrip().endswith("all correct")
    three_pieces = run_pedina("egdb", "verify", "--dir", copies, "--pieces", "3")
    assert three_pieces.returncode != 0 and "no tables of 3 pieces" in three_pieces.stderr
    two_pieces = run_pedina("egdb", "verify", "--dir", copies, "--pieces", "2", "--workers", "2")
    assert two_pieces.stdout.splitlines()[-1].startswith("4 tables, 3,488 positions"), two_pieces.stdout


def test_probe_reads_a_table_the_users_folder_lacks_from_the_shipped_ones(tmp_path: Path) -> None:
    import os

    environment = {**os.environ, "XDG_DATA_HOME": str(tmp_path)}
    folder = tmp_path / "pedina" / "egdb"
    built = subprocess.run([str(PEDINA), "egdb", "build", "--pieces", "2"], capture_output=True, text=True,
                           env=environment, timeout=300)
    assert built.returncode == 0 and len(list(folder.glob("*.egdb"))) == 4, built.stderr
    probed = subprocess.run([str(PEDINA), "egdb", "probe", "W:WK1,K5,K9:BK30,K26", "--moves"], capture_output=True,
                            text=True, env=environment, timeout=300)
    assert probed.returncode == 0, probed.stderr
    assert probed.stdout.startswith("W:WK1,K5,K9:BK26,K30  White to move: ")


def test_a_position_not_in_the_book_is_an_answer() -> None:
    result = run_pedina("book", "moves", "W:WK1,K5,K9:BK26,K30")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"W:\S+ is not in the book \([\d,]+ positions\)\.", result.stdout.strip()), result.stdout


def test_analyze_reports_database_results(three: str) -> None:
    table = run_pedina("analyze", "W:WK1,K5:BK30", "--depth", "6", "--egdb", three)
    assert table.returncode == 0, table.stderr
    row = table.stdout.splitlines()[1].split()
    assert row[1:5] == ["+94.62", "1", "5-10", "5-10"] and table.stdout.rstrip().endswith("(White wins (endgame database))")
    document = run_pedina("analyze", "B:WK1,K5:BK30", "--depth", "6", "--egdb", three, "--json")
    line = json.loads(document.stdout)["lines"][0]
    assert (line["white"], line["proven"], line["database"]) == (94.57, None, {"winner": "white"})
    shipped = json.loads(run_pedina("analyze", "B:WK1,K5:BK30", "--depth", "2", "--json").stdout)["lines"][0]
    assert shipped["database"] == {"winner": "white"}  # the shipped tables, probed by default
    plain = json.loads(run_pedina("analyze", "B:WK1,K5:BK30", "--depth", "2", "--json", "--no-egdb").stdout)["lines"][0]
    assert plain["database"] is None and plain["depth"] == 2
    both = run_pedina("analyze", "B:WK1,K5:BK30", "--egdb", three, "--no-egdb")
    assert both.returncode != 0 and "contradict" in both.stderr


@pytest.mark.parametrize("args, message", [
    (("egdb", "probe", "W:W1:B2"), "square 1"),
    (("egdb", "probe", "W:WK1,K2,K3:BK10,K11", "--dir", "{folder}"), "no table"),
    (("egdb", "verify", "--dir", "{folder}/none"), "no such folder"),
    (("egdb", "verify", "--dir", "{folder}"), "no tables"),
    (("egdb", "probe", "W:WK1:BK30", "--dir", "{folder}/none"), "no such folder"),
    (("egdb", "build", "--pieces", "1"), "--pieces"),
    (("play", "--egdb", "{folder}"), "no complete set of tables"),
    (("analyze", "W:WK1:BK30", "--egdb", "{folder}"), "no complete set of tables"),
    (("demo", "--egdb", "{folder}"), "no complete set of tables"),
    (("bench", "--egdb", "{folder}"), "no complete set of tables"),
    (("dxp", "--egdb", "{folder}", "--port", "0"), "no complete set of tables"),
])
def test_command_errors_are_one_line(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    folder = str(tmp_path)
    result = run_pedina(*[arg.format(folder=folder) for arg in args])
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and message in errors[0], result.stderr


def bench_rows(output: str) -> dict[str, tuple[str, int]]:
    """``pedina bench``'s rows: label -> (best move, score)."""
    rows = {}
    for line in output.splitlines():
        match = re.fullmatch(r"\s*\d+ (.+?) +(\S+) +score +(-?\d+) .*", line)
        if match:
            rows[match.group(1)] = (match.group(2), int(match.group(3)))
    return rows


def test_bench_probes_the_database_only_with_egdb(three: str) -> None:
    plain = run_pedina("bench", "--depth", "2")
    probed = run_pedina("bench", "--depth", "2", "--egdb", three)
    assert plain.returncode == 0 and probed.returncode == 0, plain.stderr + probed.stderr
    assert "endgame database" not in plain.stdout
    assert f"endgame database {three} (up to 3 pieces)" in probed.stdout.splitlines()[0]
    rows, probed_rows = bench_rows(plain.stdout), bench_rows(probed.stdout)
    assert len(rows) == len(probed_rows) == 22
    assert database_result(rows["2 kings v king"][1]) == 0          # an estimate without the database
    assert database_result(probed_rows["2 kings v king"][1]) == 1   # exact with it
    for label in ("start", "opening 1", "opening 2", "opening 3"):  # far from 3 pieces: the same search
        assert rows[label] == probed_rows[label]


def test_demo_plays_with_the_database(three: str) -> None:
    result = run_pedina("demo", "--depth", "1", "--plies", "2", "--no-board", "--egdb", three)
    assert result.returncode == 0, result.stderr
    assert "Stopped after 2 plies" in result.stdout.splitlines()[-1]


def test_dxp_follower_plays_the_nearest_database_win(three: str) -> None:
    from test_dxp import engine_move, follower_client, gamereq

    database = EndgameDatabase(three)
    follower = DxpFollower(EngineSettings(hash_mb=1, egdb_path=database.directory), log=io.StringIO(), move_time=0.2,
                           message_gap=0.0)
    board = Board("W:WK1,K5:BK30")
    with follower_client(follower) as client:
        client.send(gamereq(follower_white=True, position=board.position))
        client.expect("A")
        engine_move(client, board)
    assert database.probe(board.position) == DatabaseValue(-1, 26)  # the root's distance is 27
    database.close()


def test_verify_command_fails_on_a_damaged_table(three: str, tmp_path: Path) -> None:
    for name in os.listdir(three):
        shutil.copy(os.path.join(three, name), tmp_path / name)
    path = Path(table_path(str(tmp_path), (0, 1, 0, 2)))
    data = bytearray(path.read_bytes())
    data[-5] ^= 0xFF
    path.write_bytes(bytes(data))
    result = run_pedina("egdb", "verify", "--dir", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("Error: ") and "corrupt" in result.stderr


def copied_tables(three: str, folder: Path) -> str:
    for name in os.listdir(three):
        shutil.copy(os.path.join(three, name), folder / name)
    return str(folder)


def test_a_table_whose_header_is_another_slices_is_refused(three: str, tmp_path: Path) -> None:
    folder = copied_tables(three, tmp_path)
    first, second = table_path(folder, (0, 2, 0, 1)), table_path(folder, (0, 1, 0, 2))
    os.replace(first, first + ".swap")
    os.replace(second, first)
    os.replace(first + ".swap", second)
    database = EndgameDatabase(folder)
    with pytest.raises(TableFileError, match=r"slice-0-2-0-1.egdb: its header is of slice-0-1-0-2"):
        database.table((0, 2, 0, 1))
    with pytest.raises(TableFileError, match="its header is of"):
        database.open_all()
    assert database.lookup(SQUARE_BIT[1] | SQUARE_BIT[5], SQUARE_BIT[30], SQUARE_BIT[1] | SQUARE_BIT[5] | SQUARE_BIT[30],
                           True) is None
    assert database.take_errors() == [f"endgame table dropped: {first}: its header is of slice-0-1-0-2 (15872 "
                                      "positions), not of slice-0-2-0-1 (15872)"]
    assert database.take_errors() == []
    result = run_pedina("analyze", "W:WK1,K5:BK30", "--depth", "4", "--egdb", folder)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "Black wins" not in result.stdout  # the swapped table's values, read as this slice's
    warnings = result.stderr.splitlines()
    assert len(warnings) == 2 and all(line.startswith("Warning: endgame table dropped: ") for line in warnings)


@pytest.mark.parametrize("damage", ["truncated", "empty", "zeroed", "blocks"])
def test_analyze_goes_on_without_a_broken_table(three: str, tmp_path: Path, damage: str) -> None:
    folder = copied_tables(three, tmp_path)
    path = Path(table_path(folder, (0, 2, 0, 1)))
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "zeroed":
        path.write_bytes(bytes(len(data)))
    else:  # the header and block index intact, every block zeroed: found only when the search reads one
        blocks = TableFile(str(path))._offsets[0]
        path.write_bytes(data[:blocks] + bytes(len(data) - blocks))
    result = run_pedina("analyze", "W:WK1,K5:BK30", "--depth", "4", "--egdb", folder)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines() == [line for line in result.stderr.splitlines()
                                          if line.startswith(f"Warning: endgame table dropped: {path}: ")]
    assert len(result.stderr.splitlines()) == 1
    row = result.stdout.splitlines()[1].split()
    assert row[0] == "1." and row[2] == "4" and "(no line)" not in result.stdout  # searched on, to its depth


# -- up to 4 pieces (slow: CI runs them) ----------------------------------------------


@pytest.fixture(scope="module")
def four(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    directory = str(tmp_path_factory.mktemp("egdb4"))
    build_databases(directory, 4, workers=2)
    yield directory


@pytest.mark.slow
def test_four_piece_tables_match_the_documented_counts_and_verify(four: str) -> None:
    check_documented_counts(four, 4)
    reports = verify_databases(four, workers=2)
    assert len(reports) == len(all_signatures(4))
    assert all(report.ok for report in reports), [report.examples for report in reports if not report.ok]


@pytest.mark.slow
def test_the_shipped_four_piece_tables_are_those_a_build_makes(four: str) -> None:
    for signature in all_signatures(4):
        name = slice_name(signature) + ".egdb"
        assert Path(shipped_directory(), name).read_bytes() == Path(four, name).read_bytes(), name


@pytest.mark.slow
def test_the_smallest_shipped_five_piece_table_verifies() -> None:
    """Every value of a 5-piece table against its successors (docs/egdb.md: the whole set
    verified with `pedina egdb verify`; this one in CI)."""
    database = shipped_database()
    assert database is not None
    five = [signature for signature in all_signatures(5) if sum(signature) == 5]
    smallest = min(five, key=lambda signature: SliceIndex(signature).positions_count)
    report = verify_table(database, smallest)
    assert report.ok and report.positions > 100_000, report.examples
    database.close()


@pytest.mark.slow
def test_a_deep_search_never_contradicts_the_database(four: str) -> None:
    """1,000 random positions of up to 4 pieces (400 in CI): where the search proves a win or
    a loss, the database says the same."""
    database = EndgameDatabase(four)
    rng = random.Random(2024)
    searcher = Searcher(EngineSettings(hash_mb=16, egdb_path=""))
    count = 400 if os.environ.get("PEDINA_CI") == "1" else 1000
    proven = 0
    for _ in range(count):
        position = random_position(rng, 4)
        if not legal_moves(position):
            continue
        value = database.probe(position)
        assert value is not None
        searcher.new_game()
        score = searcher.search(Board(position), Limits(depth=14, nodes=40_000)).score
        if proven_plies(score) is not None:
            proven += 1
            assert value.result == (1 if score > 0 else -1), (position.fen(), score, value)
    assert proven >= 0.3 * count
    database.close()


@pytest.mark.slow
@pytest.mark.parametrize("signature", [(0, 3, 0, 1), (0, 2, 0, 2), (0, 2, 1, 1), (1, 1, 1, 1), (1, 2, 0, 1)])
def test_the_longest_four_piece_wins_are_played_out(four: str, signature: Signature) -> None:
    database = EndgameDatabase(four)
    index, table = database.table(signature)
    codes = table.codes()
    longest = max((code for code in set(codes) if code & 1), key=lambda code: code_distance(code) or 0)
    _, white, black, kings = next(entry for entry in index.positions() if codes[entry[0]] == longest)
    board = played_out(database, bits_position(white, black, kings))
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is True, board.moves


def test_the_longest_three_piece_wins_are_played_out_within_the_count() -> None:
    """scripts/egdb_playout.py, on the shipped tables: every material's longest win, with either
    side to move, is won by the engine against itself inside the 40-move count."""
    import sys

    script = Path(__file__).parent.parent / "scripts" / "egdb_playout.py"
    run = subprocess.run([sys.executable, str(script), "--egdb", shipped_directory(), "--pieces", "3",
                          "--both-sides", "--move-time", "0.05"], capture_output=True, text=True, timeout=600)
    rows = [line for line in run.stdout.splitlines() if line.startswith("| ") and "`" in line]
    assert run.returncode == 0, run.stderr
    assert len(rows) == 20 and {row.count("`B:") for row in rows} == {0, 1}
    assert all(row.endswith("| White wins | yes |") for row in rows), run.stdout
