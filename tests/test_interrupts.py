"""Ctrl-C and SIGTERM as requests the long commands read, never lost where they land."""

from __future__ import annotations

import gc
import os
import signal
import threading
import weakref
from collections.abc import Iterator

import pytest

from pedina.protocol.interrupts import interrupt_requests, sigterm_as_keyboard_interrupt
from timing import HANG


class Finalised:
    """An object to hang a finaliser on."""


@pytest.fixture(autouse=True)
def ctrl_c_as_a_terminal_gives_it() -> Iterator[None]:
    """Python's own SIGINT handler, as in a terminal: a test run in the background (CI) starts
    with SIGINT ignored, which interrupt_requests rightly leaves so."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_sets_the_request_and_raises_nothing(signum: int) -> None:
    before = signal.getsignal(signum)
    with interrupt_requests() as requested:
        assert not requested.is_set()
        os.kill(os.getpid(), signum)
        assert requested.wait(HANG)
    assert signal.getsignal(signum) == before


def test_a_signal_landing_in_a_finaliser_is_not_lost() -> None:
    """Python reports and drops an exception raised in a finaliser (threading runs one for
    every thread collected): a KeyboardInterrupt raised there would be lost, the request is not."""
    with interrupt_requests() as requested:
        weakref.finalize(Finalised(), os.kill, os.getpid(), signal.SIGINT)
        gc.collect()
        assert requested.wait(HANG)


def test_an_ignored_sigint_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupt_requests():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_off_the_main_thread_nothing_is_installed() -> None:
    seen: list[object] = []

    def look() -> None:
        with interrupt_requests() as requested:
            seen.append(signal.getsignal(signal.SIGTERM))
            seen.append(requested.is_set())
        with sigterm_as_keyboard_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=look)
    thread.start()
    thread.join()
    assert seen == [before, False, before]


def test_sigterm_raises_keyboard_interrupt_for_blocking_work() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_keyboard_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            threading.Event().wait(HANG)  # the blocking work: only the interrupt ends it in time
    assert signal.getsignal(signal.SIGTERM) == before
