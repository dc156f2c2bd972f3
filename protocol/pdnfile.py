"""A PDN file that games are appended to as they end: ``match``, ``play``, ``demo`` and ``dxp --pdnout``.

Each game is written (UTF-8), flushed and synced at once, so a program that is
stopped loses only the game in play.
"""

from __future__ import annotations

import os
from typing import TextIO

import click


class PdnOut:
    """The PDN output file at ``path``, opened for appending (:class:`OSError` as the OS says)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: TextIO = open(path, "a", encoding="utf-8")

    @classmethod
    def open_option(cls, path: str | None, option: str = "--pdnout") -> PdnOut | None:
        """The file of a command-line ``option`` (``None`` without a path); a file that cannot be
        written is a :class:`click.ClickException` naming it."""
        if path is None:
            return None
        try:
            return cls(path)
        except OSError as error:
            raise click.ClickException(f"{option}: cannot write {path}: {error.strerror or error}") from None

    def write(self, text: str) -> None:
        """Append one game's PDN text, after a blank line unless it is the file's first."""
        if self._file.tell() > 0:
            text = "\n" + text
        self._file.write(text)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file."""
        self._file.close()


__all__ = ["PdnOut"]
