"""The search session: the one way every adapter runs searches, and why they always answer.

A :class:`Session` owns a searcher (a :class:`~pedina.search.Searcher`, or any
object with the :class:`SupportsSearch` interface) and runs one search
at a time on it. :meth:`Session.go` returns at once; the search reports lines
through ``on_info`` and ends with exactly one call of ``on_answer``. The Hub
engine, the DXP Follower, ``pedina play``, ``pedina analyze`` and the in-process
match tooling all drive this object, so the guarantees below hold everywhere:

- every ``go`` gets exactly one :class:`Answer`: a legal move with a ponder move
  that is legal after it (or none), or no move when the position has none;
- no ``on_info`` call comes after the answer;
- the answer comes no later than the time manager's watchdog limit (its hard
  limit plus :data:`~pedina.timeman.GRACE`), or :data:`~pedina.timeman.GRACE`
  after :meth:`Session.stop`, even from a searcher that ignores its stop: the
  session then answers from the last line the searcher reported, else with
  any legal move;
- a searcher still running after a bounded join (:data:`JOIN_TIMEOUT`) is
  abandoned and a fresh one with the same settings takes its place, so the next
  command is served at once;
- every wait is on an event or a condition with a timeout, never a polling loop.

The opening book (:mod:`pedina.book`, on by default with the shipped book)
answers a ``go`` at once, before :meth:`Session.go` returns and without the
searcher, when the position is in the book and the search is one for a move to
play: not a ponder search (it runs on as before and answers on its clock), not
an analysis or an infinite search (they ask for the position's lines, which the
book does not have), and not with a skill below 20 (a weakened engine is weak
from its first move). Such an answer reports one :class:`~pedina.search.Info` of
depth :data:`BOOK_DEPTH` (no search reports it) with the book's value of the move,
and its :class:`Answer` says ``book``.

Callbacks run on the session's threads (the search thread or the watchdog),
one at a time per search; they must not block for long.
"""

from __future__ import annotations

import functools
import os
import random
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable, Protocol

from pedina.board import Board
from pedina.book import Book, shipped_book
from pedina.move import Move
from pedina.egdb.probe import open_endgame_database
from pedina.search import DEFAULT_SETTINGS, Info, Result, Searcher
from pedina.settings import EngineSettings
from pedina.timeman import GRACE, LONGEST_WAIT, Limits, time_budget

#: How long the session waits for a stopped searcher's thread before replacing the searcher (seconds).
JOIN_TIMEOUT = 0.05
#: How long :meth:`Session.close` waits for the search threads to return (seconds).
CLOSE_TIMEOUT = 2.0
#: What the session reports when its watchdog answers for a searcher that has not returned
#: in time: a stuck searcher, or one starved of CPU on an overloaded machine.
LATE_SEARCH_NOTE = "the search did not return in time: answering from its last reported line"
#: What it reports when it then replaces that searcher, still running at the next search.
ABANDONED_SEARCH_NOTE = "a stopped search did not return: its searcher is abandoned for a new one"
#: How often :meth:`Session.think` looks at its ``cancel`` event (seconds).
CANCEL_POLL = 0.05
#: The depth of a book answer's :class:`~pedina.search.Info` and :class:`~pedina.search.Result`:
#: a search reports depth 1 and more, so this depth says that the move came from the book.
BOOK_DEPTH = 0


@dataclass(frozen=True)
class Answer:
    """The end of one search.

    ``move`` is ``None`` only when the position has no legal move. ``result``
    is the searcher's own result (score, depth, nodes, line); it is ``None``
    when the session answered without it: the position had no move, or the
    searcher failed or was too late. ``book`` says that the move came from the
    opening book: ``result`` then holds the book's value of the move, depth
    :data:`BOOK_DEPTH` and no nodes.
    """

    move: Move | None
    ponder: Move | None
    result: Result | None
    book: bool = False


InfoCallback = Callable[[Info], None]
AnswerCallback = Callable[[Answer], None]


class SupportsSearch(Protocol):
    """What a session needs of a searcher: :class:`~pedina.search.Searcher` has it, and so
    can a test's stub without inheriting from it (a compiled ``Searcher`` cannot be subclassed).
    A searcher is made from :class:`~pedina.settings.EngineSettings` and takes new ones with
    :meth:`configure`."""

    def configure(self, settings: EngineSettings) -> None: ...

    def prepare(self) -> None: ...

    def problems(self) -> list[str]: ...

    def new_game(self) -> None: ...

    def start(self, board: Board, limits: Limits, on_info: InfoCallback | None,
              on_done: Callable[[Result | None, Exception | None], None],
              clock_from: float | None = None) -> threading.Thread: ...

    def stop(self) -> None: ...

    def ponder_hit(self) -> None: ...


def check_settings(settings: EngineSettings) -> None:
    """Raise :class:`ValueError` (:class:`~pedina.egdb.EndgameDatabaseError`,
    :class:`~pedina.book.BookError`) when ``settings`` name what cannot be used, so that a
    mistake is said when the settings are given, not at the first search."""
    open_endgame_database(settings.egdb_path)
    if settings.book_path:
        read_book(settings.book_path)


def read_book(path: str) -> Book:
    """The opening book in the file ``path`` (the shipped book for the empty path), read again
    only when the file has changed; :class:`~pedina.book.BookError` when it cannot be read."""
    if not path:
        return shipped_book()
    try:
        stamp = os.stat(path)
    except OSError:
        return Book.read(path)  # raises, saying why
    return _book_file(path, stamp.st_mtime_ns, stamp.st_size)


@functools.lru_cache(maxsize=4)
def _book_file(path: str, modified: int, size: int) -> Book:
    return Book.read(path)


def _less_overhead(limits: Limits, overhead: float) -> Limits:
    """A copy of ``limits`` with ``overhead`` seconds taken off the move time and the clock: what
    the client's side of the pipe or the network spends of them, which our clock cannot see."""
    move_time = None if limits.move_time is None else max(0.001, limits.move_time - overhead)
    clock = None if limits.clock is None else max(0.001, limits.clock - overhead)
    return replace(limits, move_time=move_time, clock=clock)


class _SearchJob:
    """One ``go``: what it searches, how it is bounded, and what it has said so far."""

    def __init__(self, board: Board, limits: Limits, on_info: InfoCallback | None,
                 on_answer: AnswerCallback | None) -> None:
        self.board = board
        self.legal = board.legal_moves()
        self.limits = limits
        self.on_info = on_info
        self.on_answer = on_answer
        self.budget = time_budget(limits)
        # One lock orders infos and the answer; the condition wakes the watchdog.
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.answering = False              # set under the lock: no info after this
        self.answered = threading.Event()   # set once on_answer has returned
        self.finished = False               # the searcher has returned
        self.stop_requested = False
        self.abandoned = False              # answered without the searcher, which is still running
        self.deadline: float | None = None  # when the watchdog answers without the searcher
        self.last_line: list[Move] = []

    def start_clock(self, now: float) -> None:
        if self.budget is not None and self.deadline is None:
            self.deadline = now + self.budget.watchdog


class Session:
    """Runs searches on one searcher with the guarantees of the module's docstring.

    ``settings`` are the engine's (:class:`~pedina.settings.EngineSettings`): the
    searcher's, and the opening book's ``book`` (on by default), ``book_path`` (the
    shipped book unless named) and ``book_variety`` (0: always the book's best move;
    ``seed`` seeds its draws, see :meth:`pedina.book.Book.choose`). :meth:`configure`
    changes them, and a searcher made to replace a stuck one is made from them too.
    ``searcher_factory`` makes a searcher from settings (tests pass stubs); ``report``
    receives a line for every abnormal event (a failed search, an illegal move, a stuck
    searcher), for the adapter to log or show. Raises :class:`ValueError` as
    :func:`check_settings` does when the settings name what cannot be used.
    """

    def __init__(self, settings: EngineSettings = DEFAULT_SETTINGS, *,
                 searcher_factory: Callable[[EngineSettings], SupportsSearch] = Searcher,
                 report: Callable[[str], None] | None = None) -> None:
        check_settings(settings)  # a bad folder is refused now, not at the first go
        self._settings = settings
        self._book_rng = random.Random(settings.seed)
        self._factory = searcher_factory
        self._report = report
        self._searcher: SupportsSearch | None = None
        self._thread: threading.Thread | None = None
        self._abandoned_threads: list[threading.Thread] = []
        self._job: _SearchJob | None = None

    # -- settings and state -----------------------------------------------------------

    @property
    def settings(self) -> EngineSettings:
        """The settings searched with (see :meth:`configure`)."""
        return self._settings

    def configure(self, settings: EngineSettings) -> None:
        """Search with ``settings`` from the next search on. A new hash size, other endgame
        tables or ``threads`` going from one to more or back empty the hash table
        (:meth:`pedina.search.Searcher.configure`), and a new seed starts the book's draws
        again. Endgame tables that cannot be opened raise
        :class:`~pedina.egdb.EndgameDatabaseError`, and a table whose memory cannot be had
        :class:`MemoryError`, and change nothing."""
        check_settings(settings)
        if self._searcher is not None:
            self._searcher.configure(settings)
        if settings.seed != self._settings.seed:
            self._book_rng = random.Random(settings.seed)
        self._settings = settings

    def prepare(self) -> None:
        """Make the searcher, open its endgame tables and read the book now: an engine does
        it before its first search, whose clock would otherwise pay for them."""
        searcher = self.searcher
        searcher.prepare()
        self._note_problems(searcher)
        try:
            self.opening_book()
        except (OSError, ValueError):
            pass  # said at the first go that needs it, which then searches

    def opening_book(self) -> Book | None:
        """The book the engine plays from (``None`` while the ``book`` setting is off), read on
        first need: raises :class:`~pedina.book.BookError` or :class:`OSError` when it cannot be."""
        if not self._settings.book:
            return None
        return read_book(self._settings.book_path)

    @property
    def searcher(self) -> SupportsSearch:
        """The searcher, made on first need and free of any earlier search (stopping it,
        and replacing it when it does not return within :data:`JOIN_TIMEOUT`)."""
        self._finish(GRACE)
        thread = self._thread
        if thread is not None:
            job = self._job
            if job is None or not job.abandoned:  # a searcher that answered returns within microseconds
                thread.join(JOIN_TIMEOUT)
            if thread.is_alive():
                self._note(ABANDONED_SEARCH_NOTE)
                self._searcher = None
                self._abandoned_threads.append(thread)
            self._thread = None
        if self._searcher is None:
            self._searcher = self._factory(self._settings)
        return self._searcher

    def new_game(self) -> None:
        """Forget what earlier games taught the searcher (hash table, history)."""
        self.searcher.new_game()

    @property
    def busy(self) -> bool:
        """A search has not answered yet."""
        job = self._job
        return job is not None and not job.answered.is_set()

    # -- searching --------------------------------------------------------------------

    def go(self, board: Board, limits: Limits, on_info: InfoCallback | None = None,
           on_answer: AnswerCallback | None = None) -> None:
        """Start searching ``board`` (copied) under ``limits``; returns at once.

        A search still running is stopped and answered first. When the position
        has no legal move, ``on_answer`` gets a moveless :class:`Answer` before
        this returns, and so does a book answer (its one ``on_info`` first).
        """
        asked = time.perf_counter()  # the clock runs from here, whatever the wait for a free searcher
        searcher = self.searcher
        job = _SearchJob(board.copy(), _less_overhead(limits, self.settings.move_overhead_ms / 1000), on_info,
                         on_answer)
        self._job = job
        if not job.legal:
            self._answer(job, None)
            return
        if self._book_answer(job):
            return
        if not limits.ponder:
            job.start_clock(asked)
        self._thread = searcher.start(job.board, job.limits, lambda info: self._on_info(job, info),
                                      lambda result, error: self._on_done(job, result, error), asked)
        threading.Thread(target=self._watch, args=(job, searcher), name="pedina-watchdog", daemon=True).start()

    def think(self, board: Board, limits: Limits, on_info: InfoCallback | None = None,
              cancel: threading.Event | None = None) -> Answer:
        """Search and wait for the answer. ``limits`` must bound the search, or ``cancel`` be
        set some time: the search is then stopped within :data:`CANCEL_POLL` seconds, and
        answers as a stopped search does."""
        answers: list[Answer] = []
        self.go(board, limits, on_info, answers.append)
        job = self._job
        assert job is not None
        while not job.answered.wait(None if cancel is None else CANCEL_POLL):
            if cancel is not None and cancel.is_set():
                self.stop()
        return answers[0]

    def stop(self) -> None:
        """Ask the running search to answer now; it does within :data:`~pedina.timeman.GRACE`."""
        job = self._job
        if job is None or job.answered.is_set():
            return
        with job.lock:
            job.stop_requested = True
            job.changed.notify_all()
        if self._searcher is not None:
            self._searcher.stop()

    def ponder_hit(self) -> None:
        """The predicted move was played: a ponder search now runs on its clock."""
        job = self._job
        if job is None or not job.limits.ponder or job.answered.is_set():
            return
        with job.lock:
            job.start_clock(time.perf_counter())
            job.changed.notify_all()
        if self._searcher is not None:
            self._searcher.ponder_hit()

    def close(self, timeout: float = CLOSE_TIMEOUT) -> bool:
        """Stop every search and wait up to ``timeout`` seconds in all for the search threads
        to return, those of searchers abandoned earlier too: a search thread still running
        when the interpreter shuts down can fail there, with a traceback on stderr. ``False``
        when one is still running. The session can search again afterwards."""
        self.stop()
        deadline = time.perf_counter() + timeout
        threads = self._abandoned_threads + ([self._thread] if self._thread is not None else [])
        for thread in threads:
            thread.join(max(0.0, deadline - time.perf_counter()))
        self._abandoned_threads = [thread for thread in self._abandoned_threads if thread.is_alive()]
        return not any(thread.is_alive() for thread in threads)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until the last search has answered; ``False`` if it has not within ``timeout`` seconds."""
        job = self._job
        return job is None or job.answered.wait(timeout)

    # -- the opening book ---------------------------------------------------------------

    def _book_answer(self, job: _SearchJob) -> bool:
        """Answer ``job`` from the book if the book answers it (see the module's docstring);
        ``True`` when it did."""
        limits = job.limits
        settings = self._settings
        if limits.ponder or limits.analysis or limits.infinite or settings.skill < 20:
            return False
        try:
            book = self.opening_book()
            if book is None:
                return False
            choice = book.choose(job.board, settings.book_variety, self._book_rng)
            if choice is None:
                return False
            replies = book.moves(job.board.position.play(choice.move))
        except (OSError, ValueError) as error:  # a broken book costs its answers, not the game
            self._note(f"the opening book failed, searching instead: {error}")
            return False
        line = [choice.move] + [reply.move for reply in replies[:1]]
        self._on_info(job, Info(BOOK_DEPTH, 0.0, choice.value, 0, 0.0, line))
        result = Result(choice.move, line[1] if len(line) > 1 else None, choice.value, BOOK_DEPTH, 0, 0.0, line)
        self._answer(job, result, book=True)
        return True

    def _finish(self, timeout: float) -> None:
        """Stop the running search and wait (bounded) for its answer."""
        if self.busy:
            self.stop()
            self.wait_idle(timeout + JOIN_TIMEOUT)

    # -- the search's threads ---------------------------------------------------------

    def _on_info(self, job: _SearchJob, info: Info) -> None:
        with job.lock:
            if job.answering:
                return
            if info.multipv == 1 and info.pv:
                job.last_line = list(info.pv)
            if job.on_info is not None:
                job.on_info(info)

    def _on_done(self, job: _SearchJob, result: Result | None, error: Exception | None) -> None:
        if error is not None:
            self._note(f"search failed: {type(error).__name__}: {error}")
        searcher = self._searcher
        if searcher is not None:
            self._note_problems(searcher)
        try:
            self._answer(job, result)
        finally:
            with job.lock:
                job.finished = True
                job.changed.notify_all()

    def _watch(self, job: _SearchJob, searcher: SupportsSearch) -> None:
        """Answer without the searcher when it is late: at the watchdog deadline, or
        :data:`~pedina.timeman.GRACE` after a stop."""
        with job.lock:
            while not (job.finished or job.stop_requested):
                if job.deadline is None:
                    job.changed.wait()
                    continue
                remaining = job.deadline - time.perf_counter()
                if remaining <= 0:
                    break
                job.changed.wait(min(remaining, LONGEST_WAIT))
            if job.finished or job.answering:
                return  # the searcher returned: its answer is going out (or has gone) on its thread
            # Stopped here, before the answer lets the adapter start another search on
            # this searcher: a later stop could end that one instead.
            searcher.stop()
            if job.stop_requested and job.changed.wait_for(lambda: job.finished, GRACE):
                return
            self._note(LATE_SEARCH_NOTE)
            job.abandoned = True
            self._answer(job, None)

    def _answer(self, job: _SearchJob, result: Result | None, book: bool = False) -> None:
        """Give ``job`` its one answer: the result's move if legal, else the last reported
        line's, else any legal move; a ponder move only if legal after it."""
        with job.lock:
            if job.answering:
                return
            job.answering = True
            line = list(result.pv) if result is not None and result.pv else list(job.last_line)
            best = result.best if result is not None else (line[0] if line else None)
            if best is not None and best not in job.legal:
                self._note(f"the search returned an illegal move {best}: playing another")
                best = None
            if best is None and job.legal:
                best = line[0] if line and line[0] in job.legal else job.legal[0]
            ponder = result.ponder if result is not None and result.ponder is not None else None
            if ponder is None and len(line) > 1 and line[0] == best:
                ponder = line[1]
            if ponder is not None and best is not None:
                after = job.board.copy()
                after.push(best)
                if ponder not in after.legal_moves():
                    ponder = None
            answer = Answer(best, ponder if best is not None else None, result, book)
            try:
                if job.on_answer is not None:
                    job.on_answer(answer)
            finally:
                job.answered.set()

    def _note_problems(self, searcher: SupportsSearch) -> None:
        for problem in searcher.problems():
            self._note(problem)

    def _note(self, text: str) -> None:
        if self._report is not None:
            self._report(text)


__all__ = ["ABANDONED_SEARCH_NOTE", "Answer", "BOOK_DEPTH", "CANCEL_POLL", "CLOSE_TIMEOUT", "JOIN_TIMEOUT",
           "LATE_SEARCH_NOTE", "Session", "SupportsSearch", "check_settings", "read_book"]
