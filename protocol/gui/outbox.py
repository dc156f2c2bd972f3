"""What a page's connection has yet to send it, in bounded memory, and the lists it sends as changes.

A page that does not read its socket (gone to sleep, or hostile) must not make the server keep
every message it was sent. Of the messages whose latest one says it all (``state``,
``analysis``, ``engines``: :data:`LATEST_ONLY`), an :class:`Outbox` keeps only the newest not
yet sent, in the place of the last one put; the others wait in order, and past
:data:`MAX_WAITING_BYTES` of them the page counts as not reading (:attr:`Outbox.overflowed`)
and its connection is to be dropped.

The long lists of a game (:data:`CHANGED_LISTS`: its moves, their comments, the scores of its
positions) go as changes to the list the page has from the previous message that carried it
(:func:`list_changes`): a page going through a long game is sent its moves once.
"""

from __future__ import annotations

import asyncio
import collections
import json
from typing import Any

#: Message types of which only the latest matters: a newer one replaces one not yet sent.
LATEST_ONLY = frozenset({"state", "analysis", "engines"})
#: Most bytes of other messages waiting to be sent before the page counts as not reading.
MAX_WAITING_BYTES = 4_000_000
#: The lists sent as changes (in ``state`` and ``analysis`` messages; app.js applies them).
CHANGED_LISTS = ("moves", "comments", "evals")
#: Most entries of a list changed one by one: with more, the list is sent from its first change on.
MAX_SET = 64

Message = dict[str, Any]


def list_changes(old: list[Any], new: list[Any]) -> Message:
    """How the page makes ``new`` from ``old``: keep the first ``keep`` entries, replace those
    ``set`` names (``[index, value]`` pairs, indices below ``keep``), then append ``add``."""
    common = min(len(old), len(new))
    if old[:common] == new[:common]:  # the usual case (a move played or taken back, a goto), at C speed
        return {"keep": common, "set": [], "add": new[common:]}
    changed = [index for index in range(common) if old[index] != new[index]]
    if len(changed) > MAX_SET:
        return {"keep": changed[0], "set": [], "add": new[changed[0]:]}
    return {"keep": common, "set": [[index, new[index]] for index in changed], "add": new[common:]}


class Outbox:
    """The messages of one page's connection not yet sent (``put`` by the table, taken by the
    connection's writer with :meth:`next_text`), with the lists the page was last sent."""

    def __init__(self) -> None:
        self._order = 0                                           # of the messages put, for sending in order
        self._latest: dict[str, tuple[int, Message]] = {}         # LATEST_ONLY type -> its newest message
        self._queued: collections.deque[tuple[int, str]] = collections.deque()  # the others, as JSON
        self._queued_bytes = 0
        self._sent_lists: dict[str, list[Any]] = {}               # CHANGED_LISTS as the page has them
        self._ready = asyncio.Event()
        #: Whether more than :data:`MAX_WAITING_BYTES` of messages waited: the page is not reading.
        self.overflowed = False

    def put(self, message: Message) -> None:
        """Add ``message`` (never blocks): it replaces a waiting one of its type if of :data:`LATEST_ONLY`."""
        self._order += 1
        kind = message.get("type")
        if kind in LATEST_ONLY:
            self._latest[str(kind)] = (self._order, message)
        else:
            text = json.dumps(message)
            self._queued.append((self._order, text))
            self._queued_bytes += len(text)
            self.overflowed = self.overflowed or self._queued_bytes > MAX_WAITING_BYTES
        self._ready.set()

    def waiting(self) -> int:
        """How many messages wait to be sent."""
        return len(self._latest) + len(self._queued)

    async def next_text(self) -> str:
        """The text of the next message to send, in the order put (waits for one); its lists, as changes."""
        while not self.waiting():
            self._ready.clear()
            await self._ready.wait()
        first_latest = min(self._latest.values(), key=lambda entry: entry[0], default=None)
        if self._queued and (first_latest is None or self._queued[0][0] < first_latest[0]):
            _, text = self._queued.popleft()
            self._queued_bytes -= len(text)
            return text
        assert first_latest is not None
        message = first_latest[1]
        del self._latest[str(message["type"])]
        return json.dumps(self._as_changes(message))

    def _as_changes(self, message: Message) -> Message:
        changed = dict(message)
        for key in CHANGED_LISTS:
            new = message.get(key)
            if isinstance(new, list):
                changed[key] = list_changes(self._sent_lists.get(key, []), new)
                self._sent_lists[key] = new
        return changed
