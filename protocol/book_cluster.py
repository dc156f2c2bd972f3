"""``pedina book build --cluster``: the book's positions searched as tasks on a Dask cluster.

:func:`pedina.book.build_book` keeps the schedule (which positions, in batches) and
writes the file; :class:`ClusterSearches` is the :class:`pedina.book.BookSearches`
that hands each position to the cluster as one task of :func:`pedina.book.entry_line`
(Hub text in, a line of the book out), so a worker needs Pedina installed and nothing
else, and a task whose worker dies is run again elsewhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pedina.book import BookEntry, entry_line, parse_entry
from pedina.position import Position
from pedina.protocol.match.cluster import ClusterTasks
from pedina.settings import EngineSettings

if TYPE_CHECKING:
    from distributed import Client


class ClusterSearches:
    """Positions searched as tasks on the Dask cluster of ``client``, a task a position."""

    def __init__(self, client: Client, depth: int, settings: EngineSettings) -> None:
        self._tasks: ClusterTasks[str] = ClusterTasks(client, entry_line, [], [])
        self._results = self._tasks.results()
        self._depth = depth
        self._settings = settings

    def start(self, position: Position) -> None:
        self._tasks.submit((position.hub(), self._depth, self._settings), f"book {len(self._tasks.labels) + 1}")

    def wait(self) -> BookEntry:
        _, line = next(self._results)
        return parse_entry(line, "a cluster worker's entry")

    def cancel(self) -> None:
        """Cancel the searches not finished (an interrupted build; what was written stays)."""
        self._tasks.cancel()
