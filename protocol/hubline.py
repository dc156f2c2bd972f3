"""The Hub protocol's line syntax, shared by the engine side and the client side.

A line is a command word and ``name`` or ``name=value`` arguments; a value
holding blanks is double-quoted (no escapes). This module knows nothing of
what the commands mean, so a client can read and write lines without loading
the search.
"""

from __future__ import annotations

from collections.abc import Iterable


class HubInputError(ValueError):
    """A command line cannot be read or carries a bad argument."""


# -- syntax ---------------------------------------------------------------------------


def _is_id(char: str) -> bool:
    return char.isprintable() and not char.isspace() and char not in '="'


def parse_line(line: str) -> tuple[str, list[tuple[str, str | None]]]:
    """Split a Hub line into its command word and its ``(name, value)`` arguments.

    A bare name (a flag) has the value ``None``; a value may be double-quoted (no
    escapes); blanks around ``=`` mean nothing. Raises :class:`HubInputError`.
    """
    pos = 0
    end = len(line)

    def skip_blanks() -> None:
        nonlocal pos
        while pos < end and line[pos].isspace():
            pos += 1

    def name() -> str:
        nonlocal pos
        skip_blanks()
        start = pos
        while pos < end and _is_id(line[pos]):
            pos += 1
        if pos == start:
            found = repr(line[pos]) if pos < end else "end of line"
            raise HubInputError(f"expected a name at column {pos + 1}, found {found}")
        return line[start:pos]

    command = name()
    args: list[tuple[str, str | None]] = []
    while True:
        skip_blanks()
        if pos == end:
            return command, args
        key = name()
        skip_blanks()
        value: str | None = None
        if pos < end and line[pos] == "=":
            pos += 1
            skip_blanks()
            if pos < end and line[pos] == '"':
                close = line.find('"', pos + 1)
                if close < 0:
                    raise HubInputError(f"missing closing quote for {key}=")
                value = line[pos + 1:close]
                pos = close + 1
            else:
                value = name()
        args.append((key, value))


def format_value(value: str) -> str:
    """A value as written on a Hub line: quoted when empty or holding a blank, ``=`` or quote."""
    if value and all(_is_id(char) for char in value):
        return value
    return '"' + value.replace('"', "'") + '"'


def format_line(command: str, pairs: Iterable[tuple[str, object]] = ()) -> str:
    """``command name=value ...`` with each value formatted by :func:`format_value`."""
    return " ".join([command, *(f"{key}={format_value(str(value))}" for key, value in pairs)])


__all__ = ["HubInputError", "format_line", "format_value", "parse_line"]
