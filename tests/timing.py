"""Waiting in tests without timing the machine.

A test waits for what it needs (a callback's event, a line from a pipe, a file's
contents) with :data:`HANG` as its timeout: a safety net that turns a hang into a
failure, never the thing measured. Where a latency is itself the guarantee (a
``stop`` answered within 50 ms), the bound that holds on an idle machine is
passed through :func:`allowed`: on a loaded 2-core machine the OS may keep any
of the engine's threads, or the test's, off a core for several time slices, which
no engine can promise anything about. The bound stays finite, so a promise that
is broken outright (a stop never read, a search that runs to its own end) still
fails.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from pedina.session import ABANDONED_SEARCH_NOTE, LATE_SEARCH_NOTE

#: How many times longer than on an idle machine a latency may be on a loaded one;
#: ``PEDINA_LOAD_FACTOR`` sets it (1 checks the idle-machine bounds). 10 passes with
#: both cores kept busy by other processes, and still tells a prompt answer from
#: one that waited for a search to end.
LOAD_FACTOR = float(os.environ.get("PEDINA_LOAD_FACTOR", "10"))

#: How long a test waits for something that must come before calling it a hang (seconds).
HANG = 60.0

#: What an engine says when its watchdog answered on time for a search starved of CPU (and
#: then replaced that searcher): a guarantee kept, not a fault, on a loaded machine. Tests of
#: whole games accept these notes among the engine's errors; the session's own tests check
#: when they are said.
STARVED_SEARCH_NOTES = (LATE_SEARCH_NOTE, ABANDONED_SEARCH_NOTE)


def starved(text: str) -> bool:
    """``text`` (an engine's error or log line) only says that a search was starved of CPU."""
    return any(note in text for note in STARVED_SEARCH_NOTES)


def allowed(seconds: float) -> float:
    """The latency ``seconds``, promised on an idle machine, as a test allows it on a loaded one."""
    return seconds * LOAD_FACTOR


def wait_until(condition: Callable[[], bool], timeout: float = HANG, what: str = "the condition") -> None:
    """Wait until ``condition()`` holds, for states no event announces (a file written by another
    process, a pydraughts client's fields); fails after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not come within {timeout} s"
        time.sleep(0.01)

