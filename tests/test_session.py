"""The search session's guarantees, on the library object itself (the adapters have their own tests)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from dataclasses import replace
from pedina.settings import EngineSettings
from pedina import Board
from pedina.search import Info, Result, Searcher
from pedina.session import CANCEL_POLL, Answer, Session
from pedina.timeman import GRACE, Limits, time_budget
from stub_searchers import STUB_SETTINGS, HeldSearcher, ScriptedSearcher, StubbornSearcher
from timing import HANG, allowed

#: Thread wake-ups on an idle machine (seconds), passed through :func:`timing.allowed`.
SLACK = 0.05


class CountedStubbornSearcher(StubbornSearcher):
    """:class:`StubbornSearcher`, counting the searchers made."""

    made = 0

    def __init__(self, settings: EngineSettings = STUB_SETTINGS) -> None:
        super().__init__(settings)
        CountedStubbornSearcher.made += 1


class FailingSearcher(ScriptedSearcher):
    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        raise RuntimeError("broken on purpose")


class IllegalSearcher(ScriptedSearcher):
    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        other = Board("W:W22:B18,9").legal_moves()[0]  # a move of another position
        return Result(other, None, 0, 1, 1, 0.0, [other])


def collect(session: Session, board: Board, limits: Limits,
            watch: Callable[[Info], None] | None = None) -> tuple[list[Answer], list[str]]:
    """Start a search; the answers it gets and the order of its callbacks; ``watch`` sees every info."""
    answers: list[Answer] = []
    events: list[str] = []

    def on_info(info: Info) -> None:
        events.append("info")
        if watch is not None:
            watch(info)

    def on_answer(answer: Answer) -> None:
        answers.append(answer)
        events.append("answer")

    session.go(board, limits, on_info, on_answer)
    return answers, events


def searched_for(seconds: float) -> tuple[threading.Event, Callable[[Info], None]]:
    """An event, and an ``on_info`` that sets it once the search's own clock has passed ``seconds``."""
    passed = threading.Event()

    def watch(info: Info) -> None:
        if info.time > seconds:
            passed.set()
    return passed, watch


def join_new_threads(before: set[threading.Thread]) -> None:
    """Wait until the search and watchdog threads started since ``before`` have ended: whatever
    they were to say, they have said."""
    for thread in set(threading.enumerate()) - before:
        if thread.name.startswith("pedina-"):
            thread.join(HANG)
            assert not thread.is_alive(), thread.name


def test_a_real_search_answers_once_with_a_legal_move_and_ponder() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    board = Board()
    answers, events = collect(session, board, Limits(depth=5))
    assert session.wait_idle(10)
    assert len(answers) == 1 and events[-1] == "answer"
    answer = answers[0]
    assert answer.move in board.legal_moves() and answer.result is not None
    board.push(answer.move)
    assert answer.ponder in board.legal_moves()


def test_a_position_without_moves_gets_a_moveless_answer_at_once() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    answers, _ = collect(session, Board("B:W21,25:B"), Limits(move_time=1.0))  # Black has no piece
    assert answers == [Answer(None, None, None)]
    assert not session.busy


def test_a_searcher_ignoring_stop_is_answered_for_by_the_deadline_and_replaced() -> None:
    CountedStubbornSearcher.made = 0
    session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=CountedStubbornSearcher)
    board = Board()
    limits = Limits(move_time=0.3)
    budget = time_budget(limits)
    assert budget is not None
    try:
        started = time.monotonic()
        answers, events = collect(session, board, limits)
        assert session.wait_idle(HANG)  # the stub is held: only the watchdog can answer
        assert time.monotonic() - started <= budget.watchdog + allowed(SLACK)
        # From the last reported line, not a random move.
        assert len(answers) == 1 and answers[0].move == board.legal_moves()[-1] and answers[0].result is None

        started = time.monotonic()
        again, _ = collect(session, board, Limits(infinite=True))
        # The stuck searcher was abandoned, not waited for (it is held until released below).
        assert time.monotonic() - started < allowed(0.1)
        assert CountedStubbornSearcher.made == 2
        stopped = time.monotonic()
        session.stop()
        assert session.wait_idle(HANG) and len(again) == 1
        assert time.monotonic() - stopped <= GRACE + allowed(SLACK)
    finally:
        HeldSearcher.release()  # both stubs return now: no second answer, no late info
    assert len(answers) == 1 and len(again) == 1
    assert events == ["info", "answer"]


def test_close_waits_for_every_search_thread_abandoned_ones_too() -> None:
    """A process must not end with a search thread running (one left at interpreter shutdown
    failed there with a traceback on stderr, seen under load): ``close`` joins the searchers
    the watchdog answered for and the one replaced since."""
    session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=CountedStubbornSearcher)
    board = Board()
    try:
        for _ in range(2):  # the second go replaces the first, stuck searcher with a new one
            answers, _ = collect(session, board, Limits(move_time=0.05))
            assert session.wait_idle(HANG) and len(answers) == 1
        assert not session.close(0.0)  # both stubs are held: neither thread has returned
    finally:
        HeldSearcher.release()
    assert session.close(HANG)  # True only once every search thread has returned


def test_a_failing_or_lying_searcher_still_gives_a_legal_move() -> None:
    board = Board("W:W21-32:B1-12")
    for factory in (FailingSearcher, IllegalSearcher):
        notes: list[str] = []
        session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=factory, report=notes.append)
        answer = session.think(board, Limits(depth=3))
        assert answer.move in board.legal_moves() and notes


def test_ponder_runs_until_the_hit_then_on_the_clock() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    past_the_move_time, watch = searched_for(0.4)
    answers, _ = collect(session, Board(), Limits(move_time=0.2, ponder=True), watch)
    assert past_the_move_time.wait(HANG)
    assert not answers  # pondering: twice the move time by the search's own clock, and no answer
    hit = time.monotonic()
    session.ponder_hit()
    assert session.wait_idle(HANG)
    assert len(answers) == 1 and time.monotonic() - hit < 0.2 + GRACE + allowed(SLACK)


def test_settings_reach_a_replacement_searcher() -> None:
    CountedStubbornSearcher.made = 0
    session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=CountedStubbornSearcher)
    session.configure(replace(session.settings, multipv=3, skill=7, seed=11))
    try:
        collect(session, Board(), Limits(move_time=0.05))
        assert session.wait_idle(HANG)
        fresh = session.searcher  # the stub is still held: replaced
        assert CountedStubbornSearcher.made == 2
        assert isinstance(fresh, CountedStubbornSearcher)
        assert fresh.settings == EngineSettings(hash_mb=1, multipv=3, skill=7, seed=11, book=False, egdb_path="")
    finally:
        HeldSearcher.release()


def test_a_new_go_stops_and_answers_the_running_one_first() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    running = threading.Event()
    first, _ = collect(session, Board(), Limits(infinite=True), lambda info: running.set())
    assert running.wait(HANG)  # the first search has reported a line: it is under way
    second, _ = collect(session, Board(), Limits(depth=2))
    assert len(first) == 1  # answered before the second search began
    assert session.wait_idle(HANG) and len(second) == 1


def test_callbacks_never_overlap_and_nothing_follows_the_answer() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    inside = threading.Lock()
    order: list[str] = []

    def record(kind: str) -> None:
        assert inside.acquire(blocking=False), "two callbacks at once"
        order.append(kind)
        inside.release()

    before = set(threading.enumerate())
    for _ in range(5):
        heard = threading.Event()  # the stop then lands in the middle of the search, or just after it

        def on_info(info: Info) -> None:
            record("info")
            heard.set()

        def on_answer(answer: Answer) -> None:
            record("answer")
            heard.set()

        session.go(Board(), Limits(move_time=0.05), on_info, on_answer)
        assert heard.wait(HANG)
        session.stop()
        assert session.wait_idle(HANG)
    join_new_threads(before)
    answers = [i for i, kind in enumerate(order) if kind == "answer"]
    assert len(answers) == 5 and answers[-1] == len(order) - 1


@pytest.mark.parametrize("limits", [Limits(depth=3), Limits(nodes=500), Limits(move_time=0.05),
                                    Limits(clock=0.5, inc=0.01)])
def test_think_answers_every_kind_of_limit(limits: Limits) -> None:
    board = Board()
    answer = Session(EngineSettings(hash_mb=4, book=False, egdb_path="")).think(board, limits)
    assert answer.move in board.legal_moves()


@pytest.mark.parametrize("set_before", [False, True])
def test_think_stops_an_unbounded_search_when_cancelled(set_before: bool) -> None:
    board = Board()
    cancel = threading.Event()
    if set_before:
        cancel.set()
    else:
        threading.Timer(0.3, cancel.set).start()
    started = time.perf_counter()
    answer = Session(EngineSettings(hash_mb=4, book=False, egdb_path="")).think(board, Limits(infinite=True), cancel=cancel)
    waited = time.perf_counter() - started
    assert answer.move in board.legal_moves()
    # An unbounded search never returns by itself: a missed cancel would wait forever.
    assert waited < (0 if set_before else 0.3) + CANCEL_POLL + GRACE + allowed(0.1)


def test_a_slow_answer_callback_is_no_late_searcher() -> None:
    """The searcher returned in time but the adapter's callback (a slow pipe, say) ran past the
    watchdog's deadline: the watchdog must not report a searcher that did not return (it did,
    about one time in four, when it woke between the answer and the searcher's end)."""
    notes: list[str] = []
    session = Session(EngineSettings(book=False, egdb_path=""), searcher_factory=ScriptedSearcher, report=notes.append)
    answers: list[Answer] = []

    def slow(answer: Answer) -> None:
        answers.append(answer)
        time.sleep(0.06)  # the slow callback itself: past the 0.01 s move time and its grace, on any machine

    for _ in range(30):
        before = set(threading.enumerate())
        session.go(Board(), Limits(move_time=0.01), on_answer=slow)
        assert session.wait_idle(HANG)
        join_new_threads(before)  # the watchdog has decided
    assert len(answers) == 30 and notes == []
