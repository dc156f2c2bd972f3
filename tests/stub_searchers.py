"""A base for the tests' stub searchers: the session's interface, with a scripted search.

A stub overrides :meth:`ScriptedSearcher.script`, which runs on its own thread
as a real search does, so the adapters' threading is exercised for real. It
does not inherit from :class:`pedina.search.Searcher`, which the compiled
flavour does not let interpreted classes extend.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from pedina import Board
from pedina.search import Info, Result, search_thread
from pedina.settings import EngineSettings
from pedina.timeman import Limits
from timing import HANG

#: A stub's settings when it is given none: a small table, and no endgame tables to open.
STUB_SETTINGS = EngineSettings(hash_mb=1, egdb_path="")


class ScriptedSearcher:
    """Implements :class:`pedina.session.SupportsSearch`; ``stop`` only sets :attr:`stopped`."""

    def __init__(self, settings: EngineSettings = STUB_SETTINGS) -> None:
        self.settings = settings
        self.stopped = threading.Event()
        self.games = 0
        self.prepared = 0

    def configure(self, settings: EngineSettings) -> None:
        self.settings = settings

    def prepare(self) -> None:
        self.prepared += 1

    def problems(self) -> list[str]:
        return []

    def new_game(self) -> None:
        self.games += 1

    def stop(self) -> None:
        self.stopped.set()

    def ponder_hit(self) -> None:
        pass

    def start(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None,
              on_done: Callable[[Result | None, Exception | None], None],
              clock_from: float | None = None) -> threading.Thread:
        self.stopped.clear()
        return search_thread(lambda: self.script(board, limits, on_info), on_done)

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        """The search's behaviour: by default, the first legal move at once."""
        move = board.legal_moves()[0]
        return Result(move, None, 0, 1, 1, 0.0, [move])


class HeldSearcher(ScriptedSearcher):
    """A base for stubs deaf to their limits and to ``stop``: a search that calls :meth:`hold`
    stays there until the test calls :meth:`release`, so a test decides when a stuck search
    ends instead of sleeping until it has (and a late result cannot slip in early on a
    slow machine). A hold never outlasts :data:`timing.HANG`, so a failed test leaves no
    thread behind for long."""

    _changed = threading.Condition()
    _holds: list[threading.Event] = []     # one a search that reached hold(), set to release it
    _returns: list[threading.Event] = []   # one a search started, set once its on_done has returned

    def start(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None,
              on_done: Callable[[Result | None, Exception | None], None],
              clock_from: float | None = None) -> threading.Thread:
        returned = threading.Event()
        with HeldSearcher._changed:
            HeldSearcher._returns.append(returned)

        def done(result: Result | None, error: Exception | None) -> None:
            try:
                on_done(result, error)
            finally:
                returned.set()
        return super().start(board, limits, on_info, done, clock_from)

    def hold(self) -> None:
        """Block this search until :meth:`release`."""
        released = threading.Event()
        with HeldSearcher._changed:
            HeldSearcher._holds.append(released)
            HeldSearcher._changed.notify_all()
        released.wait(HANG)

    @staticmethod
    def held() -> int:
        """How many searches have reached :meth:`hold` since the last :meth:`release`."""
        with HeldSearcher._changed:
            return len(HeldSearcher._holds)

    @staticmethod
    def wait_held(count: int) -> None:
        """Wait until ``count`` searches have reached :meth:`hold` since the last :meth:`release`."""
        with HeldSearcher._changed:
            assert HeldSearcher._changed.wait_for(lambda: len(HeldSearcher._holds) >= count, HANG), \
                f"{len(HeldSearcher._holds)} searches held, not {count}"

    @staticmethod
    def release() -> None:
        """Let every search started so far return (once each has reached :meth:`hold`), and wait
        until each one's ``on_done`` has returned: whatever a late result does, it has done."""
        with HeldSearcher._changed:
            HeldSearcher._changed.wait_for(lambda: len(HeldSearcher._holds) >= len(HeldSearcher._returns), HANG)
            holds, returns = HeldSearcher._holds, HeldSearcher._returns
            HeldSearcher._holds, HeldSearcher._returns = [], []
        for released in holds:
            released.set()
        assert all(returned.wait(HANG) for returned in returns), "a released search did not return"


class StubbornSearcher(HeldSearcher):
    """Reports one line (the last legal move, scored +0.25), then ignores ``stop`` until the
    test releases it, and returns the first legal move."""

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        moves = board.legal_moves()
        if on_info is not None:
            on_info(Info(1, 1.0, 25, 1, 0.001, [moves[-1]]))
        self.hold()
        return Result(moves[0], None, 0, 1, 1, 1.0, [moves[0]])
