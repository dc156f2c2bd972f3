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
