"""What the GUI server has still to send one page, bounded whatever the page does, and the
game's long lists sent as changes.

A page that keeps sending (``goto`` after ``goto``) and never reads its socket would
otherwise make the server hold every state it was owed: 64 KB each for a long game, 2.2 GB
after 20 s. Most messages only matter in their latest version (the game's state, the
analysis, the engine list, an answer to the last PDN request, the game review):
:class:`Outbox` keeps one of each kind, a newer one replacing the one not sent yet. The
others (errors, notices) are each worth reading but small, and at most :data:`MAX_QUEUED`
wait; beyond that the oldest go, since a page that far behind reads none of them in time.

The long lists of a game (:data:`CHANGED_LISTS`: its moves, their comments and variations, the
scores of its positions) leave as changes to the list the page has from the last message that carried
it (:func:`list_changes`; app.js applies them): a page going through a long game is sent its
moves once.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

#: Kinds of message of which only the latest counts: the whole state, the analysis lines,
#: the engine list, a saved game's text, a loaded file's list of games, the game review.
LATEST_ONLY: Final = frozenset({"state", "analysis", "engines", "pdn", "pdn_games", "review"})
#: The most messages of the other kinds waiting at once.
MAX_QUEUED: Final = 64
#: The lists sent as changes, in whichever message carries them.
CHANGED_LISTS: Final = ("moves", "comments", "variations", "evals")
#: Most entries of a list replaced one by one: with more, the list is sent from its first change on.
MAX_SET: Final = 64


def list_changes(old: Sequence[object], new: Sequence[object]) -> dict[str, object]:
    """How the page makes ``new`` from ``old``: keep the first ``keep`` entries, replace those
    ``set`` names (``[index, value]`` pairs, indices below ``keep``), then append ``add``."""
    common = min(len(old), len(new))
    if old[:common] == new[:common]:  # the usual case (a move played or taken back, a goto), at C speed
        return {"keep": common, "set": [], "add": list(new[common:])}
    changed = [index for index in range(common) if old[index] != new[index]]
    if len(changed) > MAX_SET:
        return {"keep": changed[0], "set": [], "add": list(new[changed[0]:])}
    return {"keep": common, "set": [[index, new[index]] for index in changed], "add": list(new[common:])}


class Outbox:
    """Messages waiting to be sent to one page, in the order put (a replaced message keeps the
    place of the one it replaced); at most one of each :data:`LATEST_ONLY` kind and
    :data:`MAX_QUEUED` others. :meth:`put` never blocks; :meth:`get` waits for a message and
    gives it as it is to be sent, its lists as changes."""

    def __init__(self) -> None:
        self._waiting: OrderedDict[object, dict[str, object]] = OrderedDict()
        self._queued = 0          # waiting messages not of a LATEST_ONLY kind
        self._number = 0          # names each of those
        self.dropped = 0          # those dropped for the limit
        self._sent_lists: dict[str, list[object]] = {}  # CHANGED_LISTS as the page has them
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
        return self._as_changes(message)

    def _as_changes(self, message: dict[str, object]) -> dict[str, object]:
        changed = dict(message)
        for key in CHANGED_LISTS:
            new = message.get(key)
            if isinstance(new, list):
                changed[key] = list_changes(self._sent_lists.get(key, []), new)
                self._sent_lists[key] = new
        return changed

    def __len__(self) -> int:
        return len(self._waiting)


__all__ = ["CHANGED_LISTS", "LATEST_ONLY", "MAX_QUEUED", "MAX_SET", "Outbox", "list_changes"]
