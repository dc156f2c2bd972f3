"""The search session's guarantees, on the library object itself (the adapters have their own tests)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable

import pytest

from dataclasses import replace
from pedina.settings import EngineSettings
from pedina import Board
from pedina.search import Info, Result, Searcher
from pedina.session import CANCEL_POLL, JOIN_TIMEOUT, Answer, Session
from pedina.timeman import GRACE, Limits, time_budget
from stub_searchers import STUB_SETTINGS, ScriptedSearcher

#: Scheduling slack for the assertions on a shared, loaded machine (seconds).
SLACK = 0.05


class StubbornSearcher(ScriptedSearcher):
    """Reports one line, then ignores ``stop`` for :attr:`delay` seconds before returning."""

    delay = 3.0
    made = 0

    def __init__(self, settings: EngineSettings = STUB_SETTINGS) -> None:
        super().__init__(settings)
        StubbornSearcher.made += 1

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        moves = board.legal_moves()
        if on_info is not None:
            on_info(Info(1, 1.0, 25, 1, 0.001, [moves[-1]]))
        time.sleep(self.delay)
        return Result(moves[0], None, 0, 1, 1, self.delay, [moves[0]])


class FailingSearcher(ScriptedSearcher):
    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        raise RuntimeError("broken on purpose")


class IllegalSearcher(ScriptedSearcher):
    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        other = Board("W:W22:B18,9").legal_moves()[0]  # a move of another position
        return Result(other, None, 0, 1, 1, 0.0, [other])


def collect(session: Session, board: Board, limits: Limits) -> tuple[list[Answer], list[tuple[str, float]]]:
    """Start a search; the answers it gets and the order of its callbacks (kind, time)."""
    answers: list[Answer] = []
    events: list[tuple[str, float]] = []

    def on_answer(answer: Answer) -> None:
        answers.append(answer)
        events.append(("answer", time.monotonic()))

    session.go(board, limits, lambda info: events.append(("info", time.monotonic())), on_answer)
    return answers, events


def test_a_real_search_answers_once_with_a_legal_move_and_ponder() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    board = Board()
    answers, events = collect(session, board, Limits(depth=5))
    assert session.wait_idle(10)
    assert len(answers) == 1 and [kind for kind, _ in events][-1] == "answer"
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
    StubbornSearcher.made = 0
    session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=StubbornSearcher)
    board = Board()
    limits = Limits(move_time=0.3)
    budget = time_budget(limits)
    assert budget is not None
    started = time.monotonic()
    answers, events = collect(session, board, limits)
    assert session.wait_idle(budget.watchdog + SLACK + 1.0)
    assert time.monotonic() - started <= budget.hard + GRACE + SLACK
    # From the last reported line, not a random move.
    assert len(answers) == 1 and answers[0].move == board.legal_moves()[-1] and answers[0].result is None

    started = time.monotonic()
    again, _ = collect(session, board, Limits(infinite=True))
    assert time.monotonic() - started < 0.1  # the stuck searcher was abandoned, not waited for
    assert StubbornSearcher.made == 2
    session.stop()
    assert session.wait_idle(GRACE + SLACK) and len(again) == 1
    time.sleep(StubbornSearcher.delay + 0.2)  # both stubs return meanwhile: no second answer, no late info
    assert len(answers) == 1 and len(again) == 1
    assert [kind for kind, _ in events] == ["info", "answer"]


def test_a_failing_or_lying_searcher_still_gives_a_legal_move() -> None:
    board = Board("W:W21-32:B1-12")
    for factory in (FailingSearcher, IllegalSearcher):
        notes: list[str] = []
        session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=factory, report=notes.append)
        answer = session.think(board, Limits(depth=3))
        assert answer.move in board.legal_moves() and notes


def test_ponder_runs_until_the_hit_then_on_the_clock() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    answers, _ = collect(session, Board(), Limits(move_time=0.2, ponder=True))
    time.sleep(0.4)
    assert not answers  # pondering: the clock has not started
    hit = time.monotonic()
    session.ponder_hit()
    assert session.wait_idle(0.2 + GRACE + 1.0)
    assert len(answers) == 1 and time.monotonic() - hit < 0.2 + GRACE + SLACK


def test_settings_reach_a_replacement_searcher() -> None:
    StubbornSearcher.made = 0
    session = Session(EngineSettings(hash_mb=1, book=False, egdb_path=""), searcher_factory=StubbornSearcher)
    session.configure(replace(session.settings, multipv=3, skill=7, seed=11))
    collect(session, Board(), Limits(move_time=0.05))
    assert session.wait_idle(1.0)
    fresh = session.searcher  # the stub is still asleep: replaced
    assert StubbornSearcher.made == 2
    assert isinstance(fresh, StubbornSearcher)
    assert fresh.settings == EngineSettings(hash_mb=1, multipv=3, skill=7, seed=11, book=False, egdb_path="")


def test_a_new_go_stops_and_answers_the_running_one_first() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    first, _ = collect(session, Board(), Limits(infinite=True))
    time.sleep(0.1)
    second, _ = collect(session, Board(), Limits(depth=2))
    assert len(first) == 1  # answered before the second search began
    assert session.wait_idle(10) and len(second) == 1


def test_callbacks_never_overlap_and_nothing_follows_the_answer() -> None:
    session = Session(EngineSettings(hash_mb=4, book=False, egdb_path=""))
    inside = threading.Lock()
    order: list[str] = []

    def record(kind: str) -> None:
        assert inside.acquire(blocking=False), "two callbacks at once"
        order.append(kind)
        inside.release()

    for _ in range(5):
        session.go(Board(), Limits(move_time=0.05), lambda info: record("info"), lambda answer: record("answer"))
        time.sleep(0.02)
        session.stop()
        assert session.wait_idle(GRACE + JOIN_TIMEOUT + SLACK)
    time.sleep(0.1)
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
    assert waited < (0 if set_before else 0.3) + CANCEL_POLL + GRACE + 1.0  # an unbounded search never returns by itself


def test_settle_freezes_the_hash_table_for_the_process_life() -> None:
    """The hash table's two lists leave the collector's generations (gc.get_objects lists only
    those) and stay out through new games, a new hash size and a search. In a process of
    its own: freezing is for the process's life."""
    code = textwrap.dedent("""
        import gc
        from dataclasses import replace
        from pedina import Board, EngineSettings
        from pedina.session import Session
        from pedina.timeman import Limits

        def frozen(table):
            return gc.is_tracked(table) and not any(o is table for o in gc.get_objects())

        session = Session(EngineSettings(hash_mb=1, egdb_path=""))
        session.settle()
        lists = session.searcher.tt.lists
        assert all(frozen(table) for table in lists)
        session.new_game()
        session.configure(replace(session.settings, hash_mb=2))
        session.think(Board(), Limits(depth=3))
        session.new_game()
        assert set(map(id, session.searcher.tt.lists)) == set(map(id, lists))
        assert all(frozen(table) for table in lists)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout == "ok\n", run.stderr


def test_a_slow_answer_callback_is_no_late_searcher() -> None:
    """The searcher returned in time but the adapter's callback (a slow pipe, say) ran past the
    watchdog's deadline: the watchdog must not report a searcher that did not return (it did,
    about one time in four, when it woke between the answer and the searcher's end)."""
    notes: list[str] = []
    session = Session(EngineSettings(book=False, egdb_path=""), searcher_factory=ScriptedSearcher, report=notes.append)
    answers: list[Answer] = []

    def slow(answer: Answer) -> None:
        answers.append(answer)
        time.sleep(0.06)  # past the 0.01 s move time and its grace

    for _ in range(30):
        session.go(Board(), Limits(move_time=0.01), on_answer=slow)
        assert session.wait_idle(2.0)
        time.sleep(0.01)
    assert len(answers) == 30 and notes == []
