"""What a match shows while it runs: a live progress line and messages."""

from __future__ import annotations

import time
from typing import TextIO


class Console:
    """The live progress line (rewritten in place on a terminal, periodic lines otherwise) and messages."""

    def __init__(self, stream: TextIO, every: float = 10.0) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every = every
        self._last = 0.0
        self._shown = False

    def progress(self, text: str, force: bool = False) -> None:
        """Show ``text`` as the progress line: in place on a terminal; otherwise as a line of its
        own, at most one every :attr:`every` seconds unless ``force``."""
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            self._shown = True
        elif force or now - self._last >= self.every:
            self.stream.write(text + "\n")
            self._last = now
        self.stream.flush()

    def message(self, text: str) -> None:
        """Print ``text`` as a line of its own (over the progress line on a terminal)."""
        if self._shown:
            self.stream.write("\r\x1b[K")
            self._shown = False
        self.stream.write(text + "\n")
        self.stream.flush()


def clock_text(seconds: float) -> str:
    """Elapsed time as ``H:MM:SS``."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
