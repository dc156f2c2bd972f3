"""The in-process engine client: what the Hub client gets from ``pedina hub``, without the
process, and the same errors; and the in-process games played by the match runner."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable

import pytest

from pedina.board import Board
from pedina.move import Move
from pedina.protocol.engineclient import (EngineClient, EngineCrashed, EngineProtocolError, EngineRefused,
                                          EngineTimeout)
from pedina.protocol.hubclient import HubClient
from pedina.protocol.match.game import TimeControl
from pedina.protocol.match.inprocess import Player, play_searcher_game
from pedina.protocol.match.schedule import opening_lines
from pedina.protocol.sessionclient import SessionClient
from pedina.search import Searcher
from pedina.session import Session, SupportsSearch
from pedina.settings import EngineSettings
from stub_searchers import HeldSearcher, StubbornSearcher
from timing import HANG, allowed

PEDINA = shutil.which("pedina")
START = "Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww"
#: A small engine with no tables or book to open, so that its searches are its own.
SMALL = EngineSettings(hash_mb=4, egdb_path="", book=False)


def in_process(searcher_factory: Callable[[EngineSettings], SupportsSearch] = Searcher) -> SessionClient:
    return SessionClient(Session(SMALL, searcher_factory=searcher_factory), label="S")


def searches(engine: EngineClient) -> list[tuple[str, str | None, list[dict[str, str]]]]:
    """Two searches, a forced move and an opening move: each move, ponder move and ``info``
    arguments (less those that time the machine)."""
    made = []
    engine.new_game()
    for moves, level in ((["23-19", "10-14"], {"depth": 2}), ([], {"depth": 5})):
        infos: list[dict[str, str]] = []
        report = engine.finish_search(engine.start_search(START, moves, level), HANG, infos.append)
        made.append((report.move, report.ponder,
                     [{key: value for key, value in info.items() if key not in ("time", "nps")} for info in infos]))
    return made


@pytest.mark.skipif(PEDINA is None, reason="needs the pedina command")
def test_identity_parameters_and_searches_are_those_of_pedina_hub() -> None:
    assert PEDINA is not None
    with HubClient([PEDINA, "hub", "--hash", "4", "--no-egdb", "--no-book"], label="H") as hub:
        hub_id = hub.handshake({"multipv": "2"}, timeout=HANG)
        hub_searches = searches(hub)
    engine = in_process()
    ident = engine.handshake({"multipv": "2"}, timeout=HANG)
    try:
        assert (ident.name, ident.version, ident.author) == (hub_id.name, hub_id.version, hub_id.author) != ("", "", "")
        assert ident.params == hub_id.params and "tt-size" in ident.params
        made = searches(engine)
        assert made == hub_searches
        assert made[0][0] == "19x10x14" and all(info.get("multipv") for info in made[1][2])
    finally:
        engine.close()


@pytest.mark.skipif(PEDINA is None, reason="needs the pedina command")
def test_a_value_refused_between_searches_is_said_by_both_clients_and_the_engine_goes_on() -> None:
    assert PEDINA is not None
    with HubClient([PEDINA, "hub", "--hash", "4", "--no-egdb", "--no-book"], label="H") as hub:
        hub.handshake({}, timeout=HANG)
        engines: list[EngineClient] = [hub, in_process()]
        engines[1].handshake({}, timeout=HANG)
        for engine in engines:
            with pytest.raises(EngineRefused, match=f"{engine.label}: refused threads=0: parameter threads must "
                                                    "be between 1 and 64, not 0"):
                engine.set_param("threads", 0)
            engine.set_param("multipv", 2)   # taken: nothing raised
            report = engine.finish_search(engine.start_search(START, [], {"depth": 3}), HANG)
            assert report.move and report.depth == 3


def test_unknown_or_refused_parameters_and_variants_are_protocol_errors() -> None:
    engine = in_process()
    with pytest.raises(EngineProtocolError, match="no parameter 'hash'.*declares: book, book-file"):
        engine.handshake({"hash": "8"})
    with pytest.raises(EngineRefused, match="refused tt-size=0: parameter tt-size must be between 1 and 4096, not 0"):
        engine.handshake({"tt-size": "0"})
    with pytest.raises(EngineProtocolError, match="does not play variant 'russian' \\(offers italian\\)"):
        engine.handshake({}, variant="russian")
    engine.handshake({"skill": "7"})
    assert engine.session.settings.skill == 7
    with pytest.raises(EngineRefused, match="refused threads=0: parameter threads must be between 1 and 64, not 0"):
        engine.set_param("threads", 0)
    assert engine.session.settings.threads == 1
    engine.finish_search(engine.start_search(START, ["23-19", "10-14"], {"depth": 1, "infinite": True}), HANG)
    sent = [line for line in engine.tail() if line.startswith(">")]
    assert sent[-3:] == [f'> pos pos={START} moves="23-19 10-14"', "> level depth=1 infinite", "> go think"]
    assert engine.tail()[-1].startswith("< done move=19x10x14")
    with pytest.raises(EngineProtocolError, match="refused: move 2 of moves= \\(10-15\\)"):
        engine.start_search(START, ["23-19", "10-15"], {"depth": 1})


def test_a_session_that_cannot_search_is_a_crash() -> None:
    def broken(settings: EngineSettings) -> StubbornSearcher:
        raise MemoryError("no room for the hash table")

    engine = in_process(searcher_factory=broken)
    with pytest.raises(EngineCrashed, match="S: failed: MemoryError: no room for the hash table") as caught:
        engine.handshake()
    assert "> init" in caught.value.tail


def test_a_search_that_does_not_answer_times_out_and_stop_answers_it() -> None:
    engine = in_process(searcher_factory=StubbornSearcher)  # deaf to its depth and to stop
    engine.handshake()
    try:
        infos: list[dict[str, str]] = []
        started = engine.start_search(START, [], {"depth": 3})
        with pytest.raises(EngineTimeout, match="S: no answer in time"):
            engine.finish_search(started, 0.2, infos.append)
        assert time.monotonic() - started < 0.2 + allowed(0.2)
        last = Board().legal_moves()[-1].hub()  # the line the stub reported
        assert [(info["score"], info["pv"]) for info in infos] == [("0.25", last)]
        engine.stop()  # the session answers for its stuck searcher, from that line
        assert engine.finish_search(started, HANG).move == last
        assert engine.tail()[-2:] == ["> stop", f"< done move={last}"]
    finally:
        HeldSearcher.release()
        engine.close()


def test_an_answer_after_its_wait_ran_out_does_not_answer_the_next_search() -> None:
    engine = in_process(searcher_factory=StubbornSearcher)
    engine.handshake()
    try:
        with pytest.raises(EngineTimeout):
            engine.finish_search(engine.start_search(START, [], {"depth": 3}), 0.05)
        HeldSearcher.wait_held(1)
        # The next search stops the stuck one, whose answer comes now: it is not this one's.
        started = engine.start_search(START, ["21-17"], {"depth": 3})
        with pytest.raises(EngineTimeout):
            engine.finish_search(started, 0.05)
        engine.stop()
        board = Board()
        board.push(board.parse_move("21-17"))
        assert engine.finish_search(started, HANG).move == board.legal_moves()[-1].hub()
    finally:
        HeldSearcher.release()
        engine.close()


# -- games by the match runner -------------------------------------------------------


def test_in_process_games_are_played_by_the_match_runner() -> None:
    white = Player(Session(SMALL), TimeControl(depth=2), "W")
    black = Player(Session(SMALL), TimeControl(depth=1), "B")
    opening = opening_lines(3)[5]
    seen: list[tuple[int, str]] = []

    def on_move(board: Board, move: Move) -> None:
        seen.append((len(board.moves), move.hub()))

    record = play_searcher_game(white, black, opening, max_plies=24, on_move=on_move)
    assert record.termination == "adjudication: maximum length" and record.result == "1/2-1/2"
    assert [move.hub() for move in record.board.moves[:3]] == [move.hub() for move in opening]
    assert seen == [(ply, record.board.moves[ply - 1].hub()) for ply in range(4, 25)]
    assert record.reports[:3] == [None] * 3
    assert all(report is not None and report.depth and report.move == move.hub()
               for report, move in zip(record.reports[3:], record.board.moves[3:]))


@pytest.mark.parametrize("failing, result", [("white", "0-1"), ("black", "1-0")])
def test_an_in_process_player_that_fails_loses_as_a_hub_engine_does(failing: str, result: str) -> None:
    def broken(settings: EngineSettings) -> StubbornSearcher:
        raise MemoryError("no room for the hash table")

    sound = Player(Session(SMALL), TimeControl(depth=1), "sound")
    failed = Player(Session(SMALL, searcher_factory=broken), TimeControl(depth=1), "failed")
    white, black = (failed, sound) if failing == "white" else (sound, failed)
    record = play_searcher_game(white, black, opening_lines(3)[0])
    assert (record.result, record.termination) == (result, "crash")
    assert record.failure is not None and record.failure.engine == "failed"
    assert "MemoryError: no room for the hash table" in record.failure.message

