"""What the match runner needs of an engine, whatever protocol it speaks.

:class:`EngineClient` is the interface the runner drives (a game begun, a search
started and awaited, the game's end told, the engine closed), implemented by
:class:`~pedina.protocol.hubclient.HubClient` (a Hub engine process),
:class:`~pedina.protocol.dxp.initiator.DxpClient` (a running DXP engine, over TCP) and
:class:`~pedina.protocol.sessionclient.SessionClient` (a search session in this process).
Every wait is bounded, and a failure is an :class:`EngineError` carrying the
engine's last messages, so the runner can score the game and replace the engine.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence, TypeVar

from pedina.scores import Score
from pedina.timeman import LONGEST_WAIT

Item = TypeVar("Item")

#: How many of the engine's last messages (both directions) an error report keeps.
TAIL_LINES = 12
#: The longest line read from an engine; a longer one is skipped unread, as an error (a 50 MB
#: line would otherwise be held whole).
MAX_LINE_CHARS = 1 << 20


class EngineError(Exception):
    """The engine failed; ``tail`` holds its last messages (``>`` sent, ``<`` received, ``!`` stderr)."""

    def __init__(self, message: str, tail: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.tail = list(tail)


class EngineCrashed(EngineError):
    """The engine process exited, or closed its output or its connection."""


class EngineTimeout(EngineError):
    """The engine did not answer in time."""


class EngineProtocolError(EngineError):
    """The engine answered something the protocol does not allow (or refused a parameter or a game)."""


class EngineRefused(EngineProtocolError):
    """The engine refused a value given to one of its parameters between searches (an ``error``
    line answering ``set-param``); it goes on with the value it had."""


class EngineAnsweredTwice(EngineProtocolError):
    """The engine answered one search twice (a second ``done`` for one ``go``)."""


class EngineUnreadable(EngineProtocolError):
    """The engine sent a line that cannot be read: bytes that are not UTF-8, or a line beyond
    :data:`MAX_LINE_CHARS`."""


class EngineResigned(EngineError):
    """The engine gave up the game instead of moving."""


@dataclass
class SearchReport:
    """What one search produced: the move text, the engine's last info, and the time it took."""

    move: str
    ponder: str | None
    elapsed: float
    score: Score | None = None        # the last info's (side to move's view), with its kind
    depth: int | None = None
    nodes: int | None = None
    pv: str = ""
    infos: int = 0
    book: bool = False                # the last info said book=true: a move of the engine's opening book


@dataclass
class EngineId:
    """The engine's name, version and author, and its declared parameters (name -> ``param`` arguments)."""

    name: str = ""
    version: str = ""
    author: str = ""
    params: dict[str, dict[str, str]] = field(default_factory=dict)


class EngineClient(Protocol):
    """An engine the match runner drives. Positions and moves are Hub text (``pos=`` and
    ``22-18``, ``22x15x19``); every method that waits raises an :class:`EngineError`."""

    label: str
    id: EngineId

    def handshake(self, params: Mapping[str, str] | None = None, *, timeout: float = 30.0,
                  variant: str = "italian") -> EngineId:
        """Make the engine ready, with ``params`` set, within ``timeout`` s; its identity."""

    def set_param(self, name: str, value: object) -> None:
        """Set a declared parameter between searches (:class:`EngineRefused` when the engine
        says it will not take the value)."""

    def new_game(self) -> None:
        """The next search belongs to a new game."""

    def start_search(self, position: str, moves: Sequence[str], level: Mapping[str, object],
                     mode: str = "think") -> float:
        """Ask for a move in ``position`` after ``moves`` (the whole game) under ``level``
        (Hub ``level`` arguments); the monotonic time the engine was asked."""

    def finish_search(self, started: float, timeout: float,
                      on_info: Callable[[dict[str, str]], None] | None = None) -> SearchReport:
        """Wait until ``started + timeout`` for the move of the search begun at ``started``."""

    def stop(self) -> None:
        """Ask the running search to end soon (its move still comes to :meth:`finish_search`)."""

    def game_over(self, position: str, moves: Sequence[str], result: str, timeout: float) -> None:
        """The game of ``position`` and ``moves`` ended with ``result`` (``1-0``, ``0-1``,
        ``1/2-1/2``), by the rules or the runner: tell the engine, as its protocol says."""

    def close(self, timeout: float = 1.0) -> None:
        """End the engine (or the connection to it)."""

    def tail(self) -> list[str]:
        """The last messages exchanged with the engine, oldest first."""


def next_before(items: queue.Queue[Item], deadline: float) -> Item:
    """The next of ``items``, if one comes before ``deadline`` (:func:`time.monotonic`), else
    :class:`queue.Empty`. A far deadline (a move time of years) is waited for in pieces of
    :data:`~pedina.timeman.LONGEST_WAIT`, where one wait would raise :class:`OverflowError`."""
    while True:
        try:
            return items.get(timeout=min(max(0.0, deadline - time.monotonic()), LONGEST_WAIT))
        except queue.Empty:
            if time.monotonic() >= deadline:
                raise


__all__ = ["EngineAnsweredTwice", "EngineClient", "EngineCrashed", "EngineError", "EngineId", "EngineProtocolError",
           "EngineRefused", "EngineResigned", "EngineTimeout", "EngineUnreadable", "MAX_LINE_CHARS", "SearchReport",
           "TAIL_LINES", "next_before"]
