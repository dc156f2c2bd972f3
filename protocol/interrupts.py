"""Ctrl-C and SIGTERM for the commands that do long work and keep what they finished.

A :class:`KeyboardInterrupt` is raised wherever the main thread happens to be
when the signal lands. That can be inside a weak reference's callback or a
finaliser (Python's own threading module runs one whenever a finished thread is
collected), and there Python prints "Exception ignored" and carries on as if
nothing had been asked. :func:`interrupt_requests` therefore turns the signals
into a request that the work's loop reads where it is safe to stop;
:func:`sigterm_as_keyboard_interrupt` is for work that blocks in the operating
system (a server's ``accept``) and can only be woken by an exception.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator


@contextmanager
def interrupt_requests() -> Iterator[threading.Event]:
    """Within the block, Ctrl-C (SIGINT) and SIGTERM set the event yielded instead of raising
    (the work polls it, or hands it to :meth:`~pedina.session.Session.think`). A SIGINT that
    the process was started to ignore (a job in the background of a shell) stays ignored.
    Off the main thread, where Python lets no code handle signals, no signal sets it."""
    requested = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield requested
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        requested.set()

    handled = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        handled.append(signal.SIGINT)
    previous = {signum: signal.signal(signum, on_signal) for signum in handled}
    try:
        yield requested
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def sigterm_as_keyboard_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`KeyboardInterrupt` in the main thread, as
    Ctrl-C does (off the main thread: nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["interrupt_requests", "sigterm_as_keyboard_interrupt"]
