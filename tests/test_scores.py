"""The score module: bands, conversions, and what a score says on the Hub, in JSON and in words."""

from __future__ import annotations

import pytest

from pedina.settings import EngineSettings
from pedina import Board
from pedina.scores import (
    DATABASE,
    DATABASE_WIN,
    ESTIMATE,
    INF,
    KNOWN_WIN,
    MATE_BOUND,
    MAX_PLY,
    PROGRESS_FLOOR,
    PROVEN,
    UNKNOWN_DISTANCE,
    WIN,
    Score,
    database_result,
    database_score,
    for_white,
    from_table,
    hub_value,
    loss_in,
    men,
    progress_score,
    proven_plies,
    to_table,
    win_in,
    within_estimates,
)
from pedina.search import Info, Searcher
from pedina.timeman import Limits


def test_the_bands_are_ordered_and_apart() -> None:
    assert INF > WIN > MATE_BOUND > DATABASE_WIN > DATABASE_WIN - UNKNOWN_DISTANCE > PROGRESS_FLOOR > KNOWN_WIN
    assert win_in(2 * MAX_PLY - 1) > MATE_BOUND  # the longest proof stays a proof
    assert database_score(1, UNKNOWN_DISTANCE - 1) > progress_score(1, 10 ** 6)  # any distance beats none


def test_proofs() -> None:
    assert win_in(5) == WIN - 5 and loss_in(5) == -(WIN - 5) and loss_in(0) == -WIN
    assert proven_plies(win_in(5)) == proven_plies(loss_in(5)) == 5
    assert proven_plies(MATE_BOUND) is None and proven_plies(MATE_BOUND + 1) == 2 * MAX_PLY - 1
    assert proven_plies(DATABASE_WIN) is None and proven_plies(KNOWN_WIN + 300) is None
    assert database_result(win_in(5)) == 0


@pytest.mark.parametrize("score", [win_in(9), loss_in(11), 35, -KNOWN_WIN, database_score(1, 4)])
def test_the_table_keeps_proofs_from_the_node(score: int) -> None:
    stored = to_table(score, 6)
    assert from_table(stored, 6) == score
    plies = proven_plies(score)
    if plies is not None:
        # Found at a node 6 plies from the root, met again 2 plies from it: the same end, 4 plies nearer.
        assert proven_plies(from_table(stored, 2)) == plies - 4
    else:
        assert stored == score == from_table(stored, 2)


def test_within_estimates() -> None:
    assert within_estimates(-100, 180) and within_estimates(-MATE_BOUND + 1, MATE_BOUND - 1)
    assert not within_estimates(-MATE_BOUND, 0) and not within_estimates(0, MATE_BOUND)


def test_database_scores() -> None:
    assert database_score(1, 0) == DATABASE_WIN and database_score(-1, 12) == -(DATABASE_WIN - 12)
    assert database_score(0, 7) == 0
    assert database_result(DATABASE_WIN - 12) == 1 and database_result(-(DATABASE_WIN - 12)) == -1
    # Without a distance: ordered by the evaluation, clipped, and always a database result.
    low, mid, high = (progress_score(1, value) for value in (-10 ** 6, 0, 10 ** 6))
    assert PROGRESS_FLOOR == low < mid < high == DATABASE_WIN - UNKNOWN_DISTANCE
    assert progress_score(1, 40) > progress_score(1, 0) and progress_score(-1, 40) == -progress_score(1, -40)
    assert database_result(low) == database_result(high) == 1 and database_result(-low) == -1
    assert database_result(PROGRESS_FLOOR - 1) == 0 and database_result(0) == 0


def test_kinds_of_the_engine_own_scores() -> None:
    assert Score.of(win_in(3)) == Score(WIN - 3, PROVEN) and Score.of(win_in(3)).plies == 3
    assert Score.of(-(DATABASE_WIN - 4)) == Score(-(DATABASE_WIN - 4), DATABASE)
    assert Score.of(progress_score(1, 0)).kind == DATABASE
    assert Score.of(KNOWN_WIN + 200) == Score(KNOWN_WIN + 200, ESTIMATE) and Score.of(0).result == 0
    assert Score.of(loss_in(4)).result == -1 and Score.of(DATABASE_WIN).plies is None


def test_words() -> None:
    assert men(35) == "+0.35" and men(-100) == "-1.00" and men(0) == "+0.00"
    assert for_white(35, True) == 35 and for_white(35, False) == -35
    assert Score.of(win_in(1)).text() == "White wins in 1 ply"
    assert Score.of(loss_in(6)).text() == "Black wins in 6 plies"
    assert Score.of(DATABASE_WIN - 3).text() == "White wins (endgame database)"
    assert Score.of(-(DATABASE_WIN - 3)).text("Pedina", "you") == "you wins (endgame database)"
    assert Score.of(KNOWN_WIN).text() == "+50.00" and Score.of(KNOWN_WIN).note("White", "Black") == ""
    assert Score.of(-(DATABASE_WIN - 3)).for_white(False).text() == "White wins (endgame database)"
    assert Score.of(win_in(5)).for_white(True) == Score.of(win_in(5))


def test_hub_fields_and_reading_them_back() -> None:
    assert Score.of(12).hub_fields() == [("score", "0.12")]
    assert Score.of(win_in(3)).hub_fields() == [("score", "99.97")]
    assert Score.of(-(DATABASE_WIN - 0)).hub_fields() == [("score", "-94.88"), ("egdb", "loss")]
    assert Score.of(progress_score(1, 0)).hub_fields()[1] == ("egdb", "win")
    for score in (Score.of(12), Score.of(win_in(3)), Score.of(loss_in(8)), Score.of(DATABASE_WIN - 9),
                  Score.of(-progress_score(1, 300))):
        assert Score.from_hub(dict(score.hub_fields())) == score
    # Another engine's numbers are read by its marks, not by this engine's bands.
    assert Score.from_hub({"score": "94.88"}) == Score(9488, ESTIMATE)
    assert Score.from_hub({"score": "70.00", "egdb": "win"}) == Score(7000, DATABASE)
    assert Score.from_hub({"depth": "3"}) is None and Score.from_hub({"score": "lots"}) is None
    assert hub_value("-99.97") == -9997 and hub_value("1e300") is None


def test_json_fields() -> None:
    assert Score.of(-35).json_fields(False) == {"score": -0.35, "white": 0.35, "proven": None, "database": None}
    assert Score.of(win_in(9)).json_fields(True)["proven"] == {"winner": "white", "plies": 9}
    assert Score.of(win_in(9)).json_fields(False)["proven"] == {"winner": "black", "plies": 9}
    database = Score.of(DATABASE_WIN - 1).json_fields(False)
    assert database["database"] == {"winner": "black"} and database["proven"] is None


def test_the_search_scores_in_these_bands() -> None:
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    known = searcher.search(Board("B:WK29,K32:BK4"), Limits(depth=4)).score  # a known loss, unproven
    assert -PROGRESS_FLOOR < known < -KNOWN_WIN + 400 and Score.of(known).kind == ESTIMATE
    forced = searcher.search(Board("W:W18,25,26,27,28,29,30,31,32:B14,1"), Limits(depth=10)).score
    assert Score.of(forced) == Score(win_in(9), PROVEN)


def test_a_score_survives_pickling() -> None:
    import pickle

    for score in (Score.of(35), Score.of(-35).for_white(False), Score(win_in(9), PROVEN)):
        assert pickle.loads(pickle.dumps(score)) == score  # the cluster sends reports between processes


def test_a_draw_of_the_tables_is_one_only_when_the_search_says_so() -> None:
    drawn = Score.of(0, database_draw=True)
    assert drawn == Score(0, DATABASE) and drawn.result == 0 and Score.of(12, database_draw=True) == Score.of(12)
    assert drawn.text() == "Draw (endgame database)" and Score.of(0).text() == "+0.00"
    assert drawn.hub_fields() == [("score", "0.00"), ("egdb", "draw")] and Score.from_hub(dict(drawn.hub_fields())) == drawn
    assert drawn.json_fields(True)["database"] == {"winner": None} and Score.of(0).json_fields(True)["database"] is None


@pytest.mark.parametrize("fen, drawn", [("W:WK10:BK20", True), ("B:W18,21,22,23:B5,6,7,9,10", False)])
def test_the_search_marks_a_root_the_tables_call_drawn(fen: str, drawn: bool) -> None:
    searcher = Searcher(EngineSettings(hash_mb=1))  # the shipped tables
    infos: list[Info] = []
    result = searcher.search(Board(fen), Limits(depth=3), infos.append)
    assert result.database_draw is drawn and all(info.database_draw is drawn for info in infos)
    assert (result.scored().note("White", "Black") == "Draw (endgame database)") is drawn


def test_the_hub_and_the_analysis_say_a_draw_of_the_tables() -> None:
    import io

    from click.testing import CliRunner

    from pedina import Position
    from pedina.protocol.cli import main
    from pedina.protocol.hub import HubServer

    output = io.StringIO()
    HubServer(output, settings=EngineSettings(hash_mb=1)).run(
        ["hub", "init", f"pos pos={Position.from_fen('W:WK10:BK20').hub()}", "level depth=3", "go think"])
    assert " egdb=draw " in output.getvalue()
    table = CliRunner().invoke(main, ["analyze", "W:WK10:BK20", "--depth", "3"])
    assert table.exit_code == 0 and "Draw (endgame database)" in table.output
