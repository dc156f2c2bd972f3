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
from typing import Callable, Iterator


@contextmanager
def interrupt_requests() -> Iterator[threading.Event]:
    """Within the block, Ctrl-C (SIGINT) and SIGTERM set the event yielded instead of raising
    (the work polls it, or hands it to :meth:`~pedina.session.Session.think`). A SIGINT that
    the process was started to ignore (a job in the background of a shell) stays ignored.
    Off the main thread, where Python lets no code handle signals, no signal sets it."""
    requested = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        requested.set()

    signals = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signals.append(signal.SIGINT)
    with _handling(signals, on_signal):
        yield requested


@contextmanager
def sigterm_as_keyboard_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`KeyboardInterrupt` in the main thread, as
    Ctrl-C does (off the main thread: nothing changes)."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    with _handling([signal.SIGTERM], on_term):
        yield


@contextmanager
def _handling(signals: list[signal.Signals], handler: Callable[[int, FrameType | None], None]) -> Iterator[None]:
    """``handler`` for ``signals`` within the block, the earlier handlers after it; nothing
    off the main thread, where Python refuses to install handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, handler) for signum in signals}
    try:
        yield
    finally:
        for signum, earlier in previous.items():
            signal.signal(signum, earlier)


__all__ = ["interrupt_requests", "sigterm_as_keyboard_interrupt"]
