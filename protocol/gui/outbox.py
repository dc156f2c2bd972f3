"""What the GUI server has still to send one page, bounded whatever the page does.

A page that keeps sending (``goto`` after ``goto``) and never reads its socket would
otherwise make the server hold every state it was owed: 64 KB each for a long game, 2.2 GB
after 20 s. Most messages only matter in their latest version (the game's state, the
analysis, the engine list, an answer to the last PDN request): :class:`Outbox` keeps one
of each kind, a newer one replacing the one not sent yet. The others (errors, notices)
are each worth reading but small, and at most :data:`MAX_QUEUED` wait; beyond that the
oldest go, since a page that far behind reads none of them in time.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Final

#: Kinds of message of which only the latest counts: the whole state, the analysis lines,
#: the engine list, a saved game's text, a loaded file's list of games, the game review.
LATEST_ONLY: Final = frozenset({"state", "analysis", "engines", "pdn", "pdn_games", "review"})
#: The most messages of the other kinds waiting at once.
MAX_QUEUED: Final = 64


class Outbox:
    """Messages waiting to be sent to one page, in the order put (a replaced message keeps the
    place of the one it replaced); at most one of each :data:`LATEST_ONLY` kind and
    :data:`MAX_QUEUED` others. :meth:`put` never blocks; :meth:`get` waits for a message."""

    def __init__(self) -> None:
        self._waiting: OrderedDict[object, dict[str, object]] = OrderedDict()
        self._queued = 0          # waiting messages not of a LATEST_ONLY kind
        self._number = 0          # names each of those
        self.dropped = 0          # those dropped for the limit
        self._ready = asyncio.Event()

    def put(self, message: dict[str, object]) -> None:
        kind = message.get("type")
        if kind in LATEST_ONLY:
            self._waiting[kind] = message
        else:
            self._number += 1
            self._waiting[self._number] = message
            self._queued += 1
            if self._queued > MAX_QUEUED:
                oldest = next(key for key in self._waiting if isinstance(key, int))
                del self._waiting[oldest]
                self._queued -= 1
                self.dropped += 1
        self._ready.set()

    async def get(self) -> dict[str, object]:
        while not self._waiting:
            self._ready.clear()
            await self._ready.wait()
        key, message = self._waiting.popitem(last=False)
        if isinstance(key, int):
            self._queued -= 1
        return message

    def __len__(self) -> int:
        return len(self._waiting)


__all__ = ["LATEST_ONLY", "MAX_QUEUED", "Outbox"]
