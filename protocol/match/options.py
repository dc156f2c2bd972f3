"""Match settings from the command line: time controls, engines, adjudication rules.

Options such as ``--engine`` take several ``key=value`` words, as in cutechess-cli:
:class:`MatchCommand` joins each group into one option value, which
:func:`parse_pairs` splits again. A mistake raises :class:`MatchError`.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import replace
from typing import Callable, Sequence

import click

from pedina.protocol.dxp.initiator import parse_address
from pedina.protocol.match.game import EngineSpec, TimeControl


class MatchError(click.ClickException):
    """A bad match setup: shown as one line, exit status 1."""


def parse_tc(text: str) -> tuple[float, float, int | None]:
    """``10+0.1``, ``40``, ``1:30+1``, ``40/60+1`` as (seconds, increment, moves a session or ``None``):
    ``MOVES/`` gives the clock ``SECONDS`` for every ``MOVES`` moves."""
    match = re.fullmatch(r"\s*(?:(\d+)\s*/\s*)?(?:(\d+):)?(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*", text)
    if not match:
        raise MatchError(f"bad time control {text!r} (expected [MOVES/]SECONDS[+INCREMENT], e.g. 10+0.1 or 40/60+1)")
    base = float(match.group(3)) + 60 * int(match.group(2) or 0)
    if base <= 0:
        raise MatchError(f"bad time control {text!r}: the clock must be positive")
    moves = int(match.group(1)) if match.group(1) is not None else None
    if moves == 0:
        raise MatchError(f"bad time control {text!r}: a session needs at least one move")
    return base, float(match.group(4) or 0), moves


def _positive_number(key: str, value: str, kind: Callable[[str], float]) -> float:
    try:
        number = kind(value)
    except ValueError:
        raise MatchError(f"bad value {key}={value!r} (expected a number)") from None
    if not number > 0 or not math.isfinite(number):  # nan compares false with every bound
        raise MatchError(f"bad value {key}={value!r} (must be a positive finite number)")
    return number


def parse_pairs(text: str, what: str) -> dict[str, str]:
    """``key=value`` words (as the shell gave them, joined by NUL by :class:`MatchCommand`)."""
    pairs: dict[str, str] = {}
    for word in (w for w in text.split("\0") if w.strip()):
        key, sep, value = word.partition("=")
        if not sep or not key.strip():
            raise MatchError(f"bad {what} argument {word!r} (expected key=value)")
        pairs[key.strip()] = value.strip()
    return pairs


def engine_spec(pairs: dict[str, str], common: dict[str, str], default_tc: TimeControl,
                number: int) -> EngineSpec:
    """An :class:`EngineSpec` from ``--engine`` pairs over ``--each`` pairs."""
    merged = {**common, **pairs}
    options: dict[str, str] = {}
    tc = TimeControl()
    for key, value in merged.items():
        if key.startswith("option."):
            options[key[len("option."):]] = value
        elif key == "tc":
            base, inc, moves = parse_tc(value)
            tc = replace(tc, base=base, inc=inc, moves=moves)
        elif key == "st":
            tc = replace(tc, move_time=_positive_number(key, value, float))
        elif key == "depth":
            tc = replace(tc, depth=int(_positive_number(key, value, int)))
        elif key == "nodes":
            tc = replace(tc, nodes=int(_positive_number(key, value, int)))
        elif key not in ("cmd", "dxp", "name", "dir"):
            raise MatchError(f"unknown engine setting {key!r} (known: cmd, dxp, name, dir, tc, st, depth, "
                             "nodes, option.NAME)")
    tc = tc.merged(default_tc)
    name = merged.get("name") or f"engine{number}"
    if not tc.is_set:
        raise MatchError(f"engine {name}: no time control (give --tc, --st, --depth or --nodes)")
    if pairs.get("dxp"):  # an --engine's own dxp=, not one from --each
        if pairs.get("cmd") or pairs.get("dir"):
            raise MatchError(f"engine {name}: give cmd= (a Hub engine to start) or dxp= (a running DXP engine), "
                             "not both")
        return _dxp_spec(name, pairs["dxp"], options, tc)
    if not merged.get("cmd"):
        raise MatchError(f"engine {number}: no cmd= or dxp= given (e.g. --engine cmd=\"pedina hub\" name=A)")
    try:
        shlex.split(merged["cmd"])
    except ValueError as error:
        raise MatchError(f"engine {number}: bad cmd {merged['cmd']!r}: {error}") from None
    return EngineSpec(name, merged["cmd"], options, merged.get("dir") or None, tc)


#: The GAMEREQ's minutes and moves are three digits each.
GAMEREQ_MAX = 999


def gamereq_pace(move_time: float) -> tuple[int, int]:
    """The GAMEREQ clock (minutes, moves) nearest to ``move_time`` seconds a move: DXP has no
    time a move, only whole minutes for a number of moves (0.1 s: 1 minute for 600 moves).
    :class:`ValueError` when no GAMEREQ comes within 5%."""
    minutes, moves = min(((m, min(GAMEREQ_MAX, max(1, round(60 * m / move_time)))) for m in range(1, GAMEREQ_MAX + 1)),
                         key=lambda pace: abs(60 * pace[0] / pace[1] - move_time))
    if abs(60 * minutes / moves - move_time) > 0.05 * move_time:
        raise ValueError(f"a DXP engine cannot be given {move_time:g} s a move: its GAMEREQ gives whole minutes "
                         f"for at most {GAMEREQ_MAX} moves, from {60 / GAMEREQ_MAX:.3f} s a move")
    return minutes, moves


def _dxp_spec(name: str, address: str, options: dict[str, str], tc: TimeControl) -> EngineSpec:
    """A running DXP engine, on the clock its GAMEREQ can carry (the clock it plays on, and is
    judged on): whole minutes without increment, so a clock is rounded up to whole minutes (at
    least one), and a time a move becomes the nearest pace (:func:`gamereq_pace`)."""
    if options:
        raise MatchError(f"engine {name}: a DXP engine has no parameters (option.{next(iter(options))})")
    try:
        host, port = parse_address(address)
    except ValueError as error:
        raise MatchError(f"engine {name}: {error}") from None
    if tc.base is not None and tc.move_time is not None:
        raise MatchError(f"engine {name}: a DXP engine plays on one clock: give it a clock (tc) or a time a move (st), "
                         "not both")
    if tc.base is not None:
        tc = replace(tc, base=60.0 * max(1, math.ceil(tc.base / 60)), inc=0.0)
    elif tc.move_time is not None:
        try:
            minutes, moves = gamereq_pace(tc.move_time)
        except ValueError as error:
            raise MatchError(f"engine {name}: {error}") from None
        tc = replace(tc, base=60.0 * minutes, moves=moves, move_time=None)
    return EngineSpec(name, "", {}, None, tc, (host, port))


def parse_rule(text: str, option: str, keys: Sequence[str]) -> dict[str, int]:
    """The ``key=N`` words of ``option`` (``--draw``, ``--resign``): exactly ``keys``, each a
    non-negative integer (``movecount`` at least 1)."""
    pairs = parse_pairs(text, option)
    if set(pairs) != set(keys):
        raise MatchError(f"{option} needs exactly {' '.join(k + '=N' for k in keys)}")
    values = {}
    for key in keys:
        try:
            values[key] = int(pairs[key])
        except ValueError:
            raise MatchError(f"bad value {option} {key}={pairs[key]!r} (expected an integer)") from None
        if values[key] < (1 if key == "movecount" else 0):
            raise MatchError(f"bad value {option} {key}={pairs[key]!r} (too small)")
    return values


#: Options that take several ``key=value`` words.
_MULTI_WORD = ("--engine", "--each", "--draw", "--resign", "--sprt")


class MatchCommand(click.Command):
    """Gathers the ``key=value`` words after ``--engine`` (and the like) into one option value."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        joined: list[str] = []
        i = 0
        while i < len(args):
            word = args[i]
            joined.append(word)
            i += 1
            if word in _MULTI_WORD:
                group = []
                while i < len(args) and not args[i].startswith("-") and "=" in args[i]:
                    group.append(args[i])
                    i += 1
                joined.append("\0".join(group))
        return super().parse_args(ctx, joined)
