"""The Hub protocol (version 2, Scan's) over :class:`pedina.session.Session`.

One :class:`HubServer` reads commands line by line and answers on its output
stream. A ``go`` runs on the session while input keeps being read: ``ping`` is
answered at once, ``ponder-hit`` and ``stop`` are passed on, and any other
command stops the search (its ``done`` goes out first) and is then handled, as
Scan does. The session guarantees one answer per ``go``, on time, so every
``go`` ends with exactly one ``done``: ``done move=... [ponder=...]``, or a bare
``done`` when the position has no legal move.

Bad input of any kind gives one ``error message="..."`` line and keeps the
previous state; an unexpected exception becomes an ``error`` line too.
"""

from __future__ import annotations

import io
import math
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import BinaryIO, TextIO

from pedina import __version__
from pedina.board import Board
from pedina.move import MoveError
from pedina.position import Position, PositionError
from pedina.search import DEFAULT_SETTINGS, FORCED_MOVE_DEPTH, Info, Searcher
from pedina.session import BOOK_DEPTH, JOIN_TIMEOUT, Answer, Session, SupportsSearch
from pedina.settings import SETTINGS, EngineSettings, value_type
from pedina.timeman import GRACE, Limits, bounded
from pedina.protocol.hubline import HubInputError, format_line, parse_line

#: How far a client's clock (``time``, plus ``inc``) may be below zero and still be
#: played on (seconds): a clock that ran out by a hair, or pydraughts' ``time`` less
#: the increment. Further below, the ``level`` line is refused.
CLOCK_OVERRUN = 1.0


def _clean_message(text: str, limit: int = 200) -> str:
    """Printable ASCII without double quotes, shortened: safe inside ``message="..."``."""
    text = "".join(char if " " <= char <= "~" and char != '"' else "?" for char in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def format_info(info: Info, with_multipv: bool) -> str:
    """An ``info`` line as Scan prints it, plus ``multipv=`` for multi-PV searches, the score's
    marks (``egdb=``, see :meth:`pedina.scores.Score.hub_fields`) and ``book=true`` for a move
    from the opening book (depth 0, no nodes)."""
    score, *marks = info.scored().hub_fields()
    pairs: list[tuple[str, object]] = [
        ("depth", info.depth), ("mean-depth", f"{info.mean_depth:.1f}"), score,
        ("nodes", info.nodes), ("time", f"{info.time:.3f}"), ("nps", f"{info.nps / 1e6:.3f}"),
    ]
    if with_multipv:
        pairs.append(("multipv", info.multipv))
    pairs += marks
    if info.depth == BOOK_DEPTH:
        pairs.append(("book", "true"))
    if info.pv:
        pairs.append(("pv", " ".join(move.hub() for move in info.pv)))
    return format_line("info", pairs)


# -- parameters -----------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A declared engine parameter: its Hub type, default and bounds, and the
    :class:`~pedina.settings.EngineSettings` field it sets (none for the protocol's own)."""

    name: str
    type: str  # "bool", "int", "enum" or "string"
    default: str
    low: int = 0
    high: int = 0
    values: tuple[str, ...] = ()
    field: str = ""

    def declaration(self) -> str:
        pairs: list[tuple[str, object]] = [("name", self.name), ("value", self.default), ("type", self.type)]
        if self.type == "int":
            pairs += [("min", self.low), ("max", self.high)]
        elif self.type == "enum":
            pairs.append(("values", " ".join(self.values)))
        return format_line("param", pairs)

    def parse(self, text: str) -> int | bool | str:
        """The typed value of ``text``, or :class:`HubInputError` saying what is allowed."""
        if self.type == "bool":
            lowered = text.lower()
            if lowered in ("true", "false"):
                return lowered == "true"
            raise HubInputError(f"parameter {self.name} takes true or false, not {text!r}")
        if self.type == "int":
            try:
                number = int(text)
            except ValueError:
                raise HubInputError(f"parameter {self.name} takes an integer, not {text!r}") from None
            if not self.low <= number <= self.high:
                raise HubInputError(f"parameter {self.name} must be between {self.low} and {self.high}, "
                                    f"not {number}")
            return number
        if self.type == "string":
            return text
        if text not in self.values:
            raise HubInputError(f"parameter {self.name} takes one of {' '.join(self.values)}, not {text!r}")
        return text


_HUB_TYPES = {bool: "bool", int: "int", str: "string"}


def param_text(value: object) -> str:
    """A setting's value as a Hub ``value=`` (``true``/``false`` for a flag)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def hub_parameters(settings: EngineSettings) -> dict[str, str]:
    """The ``set-param`` names and values that give a Pedina Hub engine ``settings``: those
    that differ from the defaults."""
    default = EngineSettings()
    return {row.hub_name: param_text(getattr(settings, row.field)) for row in SETTINGS
            if getattr(settings, row.field) != getattr(default, row.field)}


def declared_params(settings: EngineSettings) -> dict[str, Param]:
    """The parameters announced after ``hub``, by name: the protocol's own (``variant``,
    ``ponder``) and one for each engine setting (:data:`~pedina.settings.SETTINGS`),
    declared with its value in ``settings``."""
    params = [Param("variant", "enum", "italian", values=("italian",)), Param("ponder", "bool", "false")]
    params += [Param(row.hub_name, _HUB_TYPES[value_type(row.field)], param_text(getattr(settings, row.field)),
                     row.low, row.high, field=row.field) for row in SETTINGS]
    return {param.name: param for param in params}


# -- level ----------------------------------------------------------------------------


def _level_number(key: str, value: str | None, integer: bool) -> float:
    if value is None:
        raise HubInputError(f"level {key} needs a value")
    try:
        number = float(int(value)) if integer else float(value)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise HubInputError(f"level {key} takes {kind}, not {value!r}") from None
    if not math.isfinite(number):
        raise HubInputError(f"level {key} must be finite, not {value!r}")
    return number


class ClockOverrun(HubInputError):
    """A ``level`` whose clock is further below zero than a late client explains: the client
    is told, and the engine plays on :attr:`limits` (its clock at 0, so it moves at once)."""

    def __init__(self, message: str, limits: Limits) -> None:
        super().__init__(message)
        self.limits = limits


def apply_level(limits: Limits, args: list[tuple[str, str | None]]) -> Limits:
    """``limits`` with the fields of one ``level`` line set (a new object; raises on bad input).

    ``move-time`` must be positive and ``inc`` not negative. A ``time`` below zero
    (a client whose clock ran out, or one that sends the time less the increment) is
    clamped to 0, and the engine still moves at once; more than :data:`CLOCK_OVERRUN`
    below after the increment, :class:`ClockOverrun` says so, with the clamped limits.
    """
    new = replace(limits)
    if not args:
        raise HubInputError("level needs depth=, nodes=, move-time=, time=, moves=, inc= or infinite")
    for key, value in args:
        if key == "infinite":
            if value not in (None, ""):
                raise HubInputError("level infinite takes no value")
            new.infinite = True
        elif key in ("depth", "nodes", "moves"):
            number = int(_level_number(key, value, integer=True))
            if number < (0 if key == "moves" else 1):
                raise HubInputError(f"level {key} must be positive, not {number}")
            if key == "depth":
                new.depth = number
            elif key == "nodes":
                new.nodes = number
            else:
                new.moves_to_go = number or None  # moves=0: no moves count
        elif key in ("move-time", "time", "inc"):
            seconds = _level_number(key, value, integer=False)
            if key == "move-time":
                if seconds <= 0:
                    raise HubInputError(f"level move-time must be positive, not {value}")
                new.move_time = seconds
            elif key == "time":
                new.clock = seconds
            else:
                if seconds < 0:
                    raise HubInputError(f"level inc must not be negative, not {value}")
                new.inc = seconds
        else:
            raise HubInputError(f"unknown level argument {key!r}")
    if new.clock is not None and new.clock < 0:
        left = new.clock + new.inc
        given, new.clock = new.clock, 0.0
        if left < -CLOCK_OVERRUN:
            raise ClockOverrun(f"level time={given:g} (inc={new.inc:g}): the clock is {-left:g} s "
                               f"below zero, more than the {CLOCK_OVERRUN:g} s allowed: moving at once", new)
    return new


# -- commands shared with the in-process client ----------------------------------------

#: The ``id`` line's fields.
IDENTITY: tuple[tuple[str, str], ...] = (("name", "Pedina"), ("version", __version__),
                                         ("author", "The Pedina developers"), ("country", "Italy"))


def set_param(session: Session, params: dict[str, Param], args: list[tuple[str, str | None]]) -> None:
    """Carry out one ``set-param`` line's ``args`` on ``session`` (``params``: the declared
    parameters); :class:`HubInputError` saying why not, the settings then unchanged."""
    fields = dict(args)
    name, value = fields.get("name"), fields.get("value")
    if name is None or value is None:
        raise HubInputError("set-param needs name=... value=...")
    param = params.get(name)
    if param is None:
        raise HubInputError(f"unknown parameter {name!r} (known: {' '.join(params)})")
    typed = param.parse(value)
    if param.field:
        settings = session.settings
        try:
            session.configure(settings.with_values({param.field: typed}))
        except ValueError as error:  # tables that cannot be opened: the earlier ones stay
            raise HubInputError(f"{name}: {error}") from None
        except MemoryError:
            # A bigger table, or the shared one that threads above 1 need in place of the private one.
            raise HubInputError(f"{name}: not enough memory for the hash table {name}={value} needs; the "
                                f"settings stay as they were (tt-size={settings.hash_mb} "
                                f"threads={settings.threads})") from None


def position_board(args: list[tuple[str, str | None]]) -> Board:
    """The board of one ``pos`` line's ``args``: its position with its moves played;
    :class:`HubInputError` saying what is wrong."""
    fields = dict(args)
    unknown = [key for key in fields if key not in ("pos", "moves")]
    if unknown:
        raise HubInputError(f"unknown pos argument {unknown[0]!r}")
    text = fields.get("pos")
    if not text:
        raise HubInputError("pos needs pos=<33-character position>")
    try:
        board = Board(Position.from_hub(text))
    except PositionError as error:
        raise HubInputError(f"bad position: {error}") from None
    play_moves(board, (fields.get("moves") or "").split())
    return board


def play_moves(board: Board, moves: Sequence[str], first: int = 1) -> None:
    """Play ``moves`` (Hub text) on ``board``, counted from ``first`` in the ``pos`` line's
    ``moves=``; :class:`HubInputError` saying which move is wrong."""
    for number, move_text in enumerate(moves, start=first):
        try:
            board.push(board.parse_move(move_text))
        except MoveError as error:
            raise HubInputError(f"move {number} of moves= ({move_text}): {error}") from None


def go_mode(args: list[tuple[str, str | None]]) -> str:
    """The mode of one ``go`` line's ``args``: ``think``, ``ponder`` or ``analyze``."""
    modes = [key for key, _ in args]
    if len(modes) != 1 or modes[0] not in ("think", "ponder", "analyze") or args[0][1] not in (None, ""):
        raise HubInputError("go takes exactly one of think, ponder, analyze")
    return modes[0]


def search_limits(board: Board, level: Limits, mode: str) -> Limits:
    """What ``go`` in ``mode`` (:func:`go_mode`) searches ``board`` under, after ``level`` lines
    set ``level``: a bound where the level gives none (:func:`~pedina.timeman.bounded`), and a
    short search when there is only one move to think about."""
    limits = bounded(replace(level, ponder=mode == "ponder", analysis=mode == "analyze"))
    if mode == "think" and len(board.legal_moves()) == 1:
        # Nothing to choose: the move goes out at once, after a short search for its score
        # (whatever the level: an infinite think too).
        limits = Limits(depth=FORCED_MOVE_DEPTH)
    return limits


def done_line(answer: Answer) -> str:
    """The ``done`` line of a search's answer: ``done move=... [ponder=...]``, bare without a move."""
    pairs = [("move", answer.move.hub())] if answer.move else []
    if answer.ponder:
        pairs.append(("ponder", answer.ponder.hub()))
    return format_line("done", pairs)


# -- the engine -----------------------------------------------------------------------


class HubServer:
    """A Hub engine session over ``output`` (and optionally a ``log`` of both directions).

    Call :meth:`run` with the input lines; it returns on ``quit`` or end of input.
    ``resident``: this server is its process's for life, and prepares its session at once
    (:meth:`pedina.session.Session.prepare`).
    """

    def __init__(self, output: TextIO, *, settings: EngineSettings = DEFAULT_SETTINGS, log: TextIO | None = None,
                 searcher_factory: Callable[[EngineSettings], SupportsSearch] = Searcher,
                 resident: bool = False) -> None:
        self._output = output
        self._log = log
        self._lock = threading.Lock()
        self._params = declared_params(settings)
        self._session = Session(settings, searcher_factory=searcher_factory, report=self._error)
        if resident:
            self._session.prepare()
        self._board: Board | None = None
        self._level = Limits()
        self._endless = False  # the search running (if any) ends only on stop (or a ponder hit)
        self._closed = False  # the output is gone: nothing more to do

    # -- input ----------------------------------------------------------------------

    def run(self, lines: Iterable[str]) -> None:
        """Handle lines until ``quit`` or the end of input, and return once the last ``go``
        has its ``done`` and the search threads have returned (:meth:`Session.close`): at the
        end of input, a search its level bounds is waited for, an endless one (``infinite``,
        ``analyze`` without a level, an unhit ponder) is stopped."""
        for line in lines:
            if not self.handle(line) or self._closed:
                break
        if self._endless or self._closed:
            self._session.stop()
        self._session.wait_idle()
        self._session.close()

    def handle(self, line: str) -> bool:
        """Handle one input line; ``False`` when the engine should exit."""
        line = line.rstrip("\r\n")
        self._write_log(">", line)
        if not line.strip():
            return True
        command = "?"
        try:
            command, args = parse_line(line)
            if command == "ping":
                self._send("pong")
            elif command == "stop":
                self._session.stop()
            elif command == "ponder-hit":
                self._endless = False
                self._session.ponder_hit()
            else:
                # Anything else ends a search first, as in Scan: its done goes out before.
                self._session.stop()
                self._session.wait_idle(GRACE + JOIN_TIMEOUT)
                return self._dispatch(command, args)
        except HubInputError as error:
            self._error(str(error))
        except Exception as error:  # an engine bug must not end the session
            self._error(f"internal error on {command}: {type(error).__name__}: {error}")
        return True

    def _dispatch(self, command: str, args: list[tuple[str, str | None]]) -> bool:
        if command == "quit":
            return False
        handler = self._handlers().get(command)
        if handler is None:
            raise HubInputError(f"unknown command {command!r}")
        handler(args)
        return True

    def _handlers(self) -> dict[str, Callable[[list[tuple[str, str | None]]], None]]:
        return {"hub": self._hub, "set-param": self._set_param, "init": self._init, "new-game": self._new_game,
                "pos": self._pos, "level": self._level_command, "go": self._go}

    # -- commands -------------------------------------------------------------------

    def _hub(self, args: list[tuple[str, str | None]]) -> None:
        self._params = declared_params(self._session.settings)  # a second hub hears the values set since
        self._send(format_line("id", IDENTITY))
        for param in self._params.values():
            self._send(param.declaration())
        self._send("wait")

    def _set_param(self, args: list[tuple[str, str | None]]) -> None:
        set_param(self._session, self._params, args)

    def _init(self, args: list[tuple[str, str | None]]) -> None:
        try:
            self._session.prepare()  # hash table, endgame tables and book now, not on the first go's clock
        except Exception as error:  # a client waits for ready whatever failed: say it, then answer
            self._error(f"init: {type(error).__name__}: {error}")
        self._send("ready")

    def _new_game(self, args: list[tuple[str, str | None]]) -> None:
        self._session.new_game()

    def _pos(self, args: list[tuple[str, str | None]]) -> None:
        self._board = position_board(args)
        self._level = Limits()

    def _level_command(self, args: list[tuple[str, str | None]]) -> None:
        try:
            self._level = apply_level(self._level, args)
        except ClockOverrun as overrun:
            self._level = overrun.limits
            raise

    def _go(self, args: list[tuple[str, str | None]]) -> None:
        mode = go_mode(args)
        limits, self._level = self._level, Limits()
        if self._board is None:
            raise HubInputError("go before pos: no position set")
        limits = search_limits(self._board, limits, mode)
        self._endless = limits.infinite or limits.ponder
        with_multipv = self._session.settings.multipv > 1
        self._session.go(self._board, limits, lambda info: self._send(format_info(info, with_multipv)),
                         lambda answer: self._send(done_line(answer)))

    # -- output ---------------------------------------------------------------------

    def _send(self, line: str) -> None:
        with self._lock:
            self._write_log_locked("<", line)  # first: clients may kill us as soon as they read it
            try:
                self._output.write(line + "\n")
                self._output.flush()
            except (OSError, ValueError):  # the GUI closed our stdout
                self._closed = True

    def _error(self, message: str) -> None:
        self._send(format_line("error", [("message", _clean_message(message))]))

    def _write_log(self, direction: str, line: str) -> None:
        if self._log is not None:
            with self._lock:
                self._write_log_locked(direction, line)

    def _write_log_locked(self, direction: str, line: str) -> None:
        if self._log is not None:
            self._log.write(_log_line(direction, line))
            self._log.flush()


def _log_line(direction: str, line: str) -> str:
    """A line of the log: the time to the millisecond, ``>`` in, ``<`` out or ``#`` an event."""
    now = time.time()
    return time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d} {direction} {line}\n"


def read_lines(stream: BinaryIO, limit: int, too_long: Callable[[], None]) -> Iterator[str]:
    """The lines of ``stream`` as text (UTF-8, bad bytes replaced), each read up to ``limit``
    bytes: a longer line is skipped a piece at a time, never held whole, and ``too_long``
    called for it."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line.decode("utf-8", errors="replace")
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(limit)
        too_long()


def _end_when_output_closes(output_fd: int, log: TextIO | None) -> None:
    """On a thread: end the process as soon as the client closes our output (a pipe whose
    reader is gone reports an error to ``poll``), not at the next input line, so that an
    endless search does not run on for nobody. Without ``poll`` (Windows) the next failed
    write does it (:class:`_EngineOutput`)."""
    watcher = select.poll()
    watcher.register(output_fd, 0)  # no events asked: only an error or a hang-up wakes it
    events = [revents for _, revents in watcher.poll()]
    if events and events[0] & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
        _end_engine(log, "the client closed our output")


def _end_engine(log: TextIO | None, why: str) -> None:
    try:
        if log is not None:  # written directly: the failed write may hold the server's lock
            log.write(_log_line("#", f"{why}: the engine ends"))
            log.flush()
    except (OSError, ValueError):
        pass
    os._exit(0)


class _EngineOutput(io.TextIOWrapper):
    """The engine's stdout: a write that fails (the client closed it) ends the process."""

    log: TextIO | None = None

    def flush(self) -> None:
        try:
            super().flush()
        except (OSError, ValueError):
            _end_engine(self.log, "writing to the client failed")


#: The longest input line read (bytes); a longer one is skipped with an ``error``.
MAX_LINE_BYTES = 1 << 20


def serve_stdio(settings: EngineSettings = DEFAULT_SETTINGS, log: TextIO | None = None) -> None:
    """Run a Hub session on this process's stdin and stdout, then end the process at once;
    it also ends as soon as the client closes our stdout.

    stderr is silenced at the file-descriptor level (clients such as pydraughts merge
    it into the protocol stream); the optional open ``log`` gets both directions and
    anything that would have gone to stderr. Input lines longer than :data:`MAX_LINE_BYTES`
    are answered with ``error`` and skipped.
    """
    null_fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null_fd, 2)
    sys.stderr = log if log is not None else io.TextIOWrapper(io.FileIO(null_fd, "w", closefd=False))
    stdout = _EngineOutput(sys.stdout.buffer, encoding="utf-8", errors="replace")
    stdout.log = log
    if hasattr(select, "poll"):
        threading.Thread(target=_end_when_output_closes, args=(sys.stdout.fileno(), log), daemon=True).start()
    try:
        server = HubServer(stdout, settings=settings, log=log, resident=True)
        server.run(read_lines(sys.stdin.buffer, MAX_LINE_BYTES,
                              lambda: server._error(f"input line longer than {MAX_LINE_BYTES} bytes: skipped")))
    except KeyboardInterrupt:
        pass
    finally:
        for stream in (stdout, log):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        # Exit without interpreter shutdown: a search thread may still hold stdout.
        os._exit(0)
