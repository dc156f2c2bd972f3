"""The Hub protocol (version 2, Scan's) over :class:`pedina.search.Searcher`.

One :class:`HubServer` reads commands line by line and answers on its output
stream. A ``go`` runs the search on its own thread while input keeps being read:
``ping`` is answered at once, ``ponder-hit`` and ``stop`` are passed on, and any
other command stops the search (its ``done`` goes out first) and is then
handled, as Scan does. Every ``go`` ends with exactly one ``done``.

The search runs through :meth:`Searcher.start`, which takes requests sent as
soon as it returns. A small supervisor thread per search stops a clocked search
at a hard limit inside the ``level`` it was given, and when the searcher is slow
to return after a stop it answers ``done`` itself from the last reported main
line (after :data:`STOP_GRACE`), so the GUI never waits on a late search.

Bad input of any kind gives one ``error message="..."`` line and keeps the
previous state; an unexpected exception becomes an ``error`` line too.
"""

from __future__ import annotations

import io
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TextIO

from pedina import __version__
from pedina.board import Board
from pedina.move import Move, MoveError
from pedina.position import Position, PositionError
from pedina.search import Info, Limits, Result, Searcher
from pedina.protocol.hubline import HubInputError, format_line, parse_line

#: Time per move for a ``go think`` with no ``level`` (seconds).
DEFAULT_MOVE_TIME = 1.0
#: After a stop (asked or at the hard deadline), how long the searcher gets to return
#: before ``done`` is sent from the last reported main line (seconds).
STOP_GRACE = 0.03
#: Supervisor poll period (seconds): bounds the delay of a re-sent stop or ponder-hit.
_POLL = 0.005


def _clean_message(text: str, limit: int = 200) -> str:
    """Printable ASCII without double quotes, shortened: safe inside ``message="..."``."""
    text = "".join(char if " " <= char <= "~" and char != '"' else "?" for char in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def format_score(score: int) -> str:
    """Score in men with two decimals; a win in N plies (``WIN - N``) gives ``100 - N/100``."""
    return f"{score / 100:.2f}"


def format_info(info: Info, with_multipv: bool) -> str:
    """An ``info`` line as Scan prints it, plus ``multipv=`` for multi-PV searches."""
    pairs: list[tuple[str, object]] = [
        ("depth", info.depth), ("mean-depth", f"{info.mean_depth:.1f}"), ("score", format_score(info.score)),
        ("nodes", info.nodes), ("time", f"{info.time:.3f}"), ("nps", f"{info.nps / 1e6:.3f}"),
    ]
    if with_multipv:
        pairs.append(("multipv", info.multipv))
    if info.pv:
        pairs.append(("pv", " ".join(move.hub() for move in info.pv)))
    return format_line("info", pairs)


# -- parameters -----------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """A declared engine parameter: its Hub type, default and bounds."""

    name: str
    type: str  # "bool", "int" or "enum"
    default: str
    low: int = 0
    high: int = 0
    values: tuple[str, ...] = ()

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
        if text not in self.values:
            raise HubInputError(f"parameter {self.name} takes one of {' '.join(self.values)}, not {text!r}")
        return text


def declared_params(hash_mb: int) -> dict[str, Param]:
    """The parameters announced after ``hub``, by name."""
    params = [
        Param("variant", "enum", "italian", values=("italian",)),
        Param("tt-size", "int", str(hash_mb), low=1, high=4096),
        Param("ponder", "bool", "false"),
        Param("multipv", "int", "1", low=1, high=32),
        Param("skill", "int", "20", low=0, high=20),
        Param("seed", "int", "0", low=0, high=2**31 - 1),
    ]
    return {param.name: param for param in params}


# -- level ----------------------------------------------------------------------------


def _number(key: str, value: str | None, integer: bool) -> float:
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


def apply_level(limits: Limits, args: list[tuple[str, str | None]]) -> Limits:
    """``limits`` with the fields of one ``level`` line set (a new object; raises on bad input).

    A slightly negative ``time`` (a client whose clock ran out) is clamped to 0.
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
            number = int(_number(key, value, integer=True))
            if number < (0 if key == "moves" else 1):
                raise HubInputError(f"level {key} must be positive, not {number}")
            if key == "depth":
                new.depth = number
            elif key == "nodes":
                new.nodes = number
            else:
                new.moves_to_go = number or None  # moves=0: no moves count
        elif key in ("move-time", "time", "inc"):
            seconds = max(0.0, _number(key, value, integer=False))
            if key == "move-time":
                new.move_time = seconds
            elif key == "time":
                new.clock = seconds
            else:
                new.inc = seconds
        else:
            raise HubInputError(f"unknown level argument {key!r}")
    return new


def _is_unbounded(limits: Limits) -> bool:
    return (limits.depth is None and limits.nodes is None and limits.move_time is None
            and limits.clock is None and not limits.infinite)


def hard_budget(limits: Limits) -> float | None:
    """Seconds after which a clocked search is stopped whatever the searcher thinks.

    ``move-time`` is a hard limit; on a clock (``time`` plus ``inc``, the increment
    being credited before the move) we keep a margin so the clock never falls.
    """
    budgets = []
    if limits.move_time is not None:
        budgets.append(limits.move_time)
    if limits.clock is not None:
        available = limits.clock + limits.inc
        budgets.append(max(0.005, min(available * 0.9, available - 0.05)))
    return min(budgets) if budgets else None


# -- the engine -----------------------------------------------------------------------


class _Job:
    """One ``go``: its board, its threads, the requests made to it and its answer."""

    def __init__(self, mode: str, limits: Limits, board: Board) -> None:
        self.mode = mode
        self.limits = limits
        self.board = board
        self.legal = board.legal_moves()
        self.answered = threading.Event()   # its one ``done`` has been sent
        self.finished = threading.Event()   # the searcher has returned
        self.answer_lock = threading.Lock()
        self.stop_requested = threading.Event()
        self.hit_requested = threading.Event()
        self.deadline: float | None = None
        self.stopping_since: float | None = None
        self.best_pv: list[Move] = []       # the last main line reported, for an early answer
        self.thread: threading.Thread | None = None


class HubServer:
    """A Hub engine session over ``output`` (and optionally a ``log`` of both directions).

    Call :meth:`run` with the input lines; it returns on ``quit`` or end of input.
    """

    def __init__(self, output: TextIO, *, hash_mb: int = 64, log: TextIO | None = None,
                 searcher_factory: Callable[[int], Searcher] = Searcher) -> None:
        self._output = output
        self._log = log
        self._lock = threading.Lock()
        self._params = declared_params(hash_mb)
        self._values: dict[str, int | bool | str] = {name: p.parse(p.default) for name, p in self._params.items()}
        self._searcher_factory = searcher_factory
        self._searcher: Searcher | None = None
        self._board: Board | None = None
        self._level = Limits()
        self._job: _Job | None = None
        self._closed = False  # the output is gone: nothing more to do

    # -- input ----------------------------------------------------------------------

    def run(self, lines: Iterable[str]) -> None:
        """Handle lines until ``quit`` or the end of input (a running search is stopped)."""
        for line in lines:
            if not self.handle(line) or self._closed:
                break
        self._finish_search(timeout=0.0)  # end of input: exit at once

    def handle(self, line: str) -> bool:
        """Handle one input line; ``False`` when the engine should exit."""
        line = line.rstrip("\r\n")
        self._write_log(">", line)
        if not line.strip():
            return True
        command = "?"
        try:
            command, args = parse_line(line)
            if command in ("ping", "stop", "ponder-hit"):
                if command == "ping":
                    self._send("pong")
                elif self._searching():
                    self._request(command)
                return True  # stop/ponder-hit with no search running: a harmless race with done
            self._finish_search(timeout=None)  # anything else ends a search first, as in Scan
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
        self._send(format_line("id", [("name", "Pedina"), ("version", __version__),
                                      ("author", "The Pedina developers"), ("country", "Italy")]))
        for param in self._params.values():
            self._send(param.declaration())
        self._send("wait")

    def _set_param(self, args: list[tuple[str, str | None]]) -> None:
        fields = dict(args)
        name, value = fields.get("name"), fields.get("value")
        if name is None or value is None:
            raise HubInputError("set-param needs name=... value=...")
        param = self._params.get(name)
        if param is None:
            raise HubInputError(f"unknown parameter {name!r} (known: {' '.join(self._params)})")
        typed = param.parse(value)
        self._values[name] = typed
        if self._searcher is not None:
            self._configure(self._searcher)

    def _configure(self, searcher: Searcher) -> None:
        hash_mb = int(self._values["tt-size"])
        if searcher.hash_mb != hash_mb:
            searcher.set_hash_size(hash_mb)
        searcher.multipv = int(self._values["multipv"])
        searcher.skill = int(self._values["skill"])
        searcher.seed = int(self._values["seed"])

    def _searcher_ready(self) -> Searcher:
        """The searcher, made on first need (so ``tt-size`` set before ``init`` allocates once)."""
        if self._searcher is None:
            self._searcher = self._searcher_factory(int(self._values["tt-size"]))
        self._configure(self._searcher)
        return self._searcher

    def _init(self, args: list[tuple[str, str | None]]) -> None:
        self._searcher_ready()
        self._send("ready")

    def _new_game(self, args: list[tuple[str, str | None]]) -> None:
        self._searcher_ready().new_game()

    def _pos(self, args: list[tuple[str, str | None]]) -> None:
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
        for number, move_text in enumerate((fields.get("moves") or "").split(), start=1):
            try:
                board.push(board.parse_move(move_text))
            except MoveError as error:
                raise HubInputError(f"move {number} of moves= ({move_text}): {error}") from None
        self._board = board
        self._level = Limits()

    def _level_command(self, args: list[tuple[str, str | None]]) -> None:
        self._level = apply_level(self._level, args)

    def _go(self, args: list[tuple[str, str | None]]) -> None:
        modes = [key for key, _ in args]
        if len(modes) != 1 or modes[0] not in ("think", "ponder", "analyze") or args[0][1] not in (None, ""):
            raise HubInputError("go takes exactly one of think, ponder, analyze")
        mode = modes[0]
        limits, self._level = self._level, Limits()
        if self._board is None:
            raise HubInputError("go before pos: no position set")
        job = _Job(mode, limits, self._board.copy())
        if not job.legal:
            raise HubInputError("no legal moves in this position: nothing to search")
        if mode == "think" and len(job.legal) == 1:
            self._send(format_line("done", [("move", job.legal[0].hub())]))
            return
        if _is_unbounded(limits):
            if mode == "analyze":
                limits.infinite = True
            else:
                limits.move_time = DEFAULT_MOVE_TIME
        limits.ponder = mode == "ponder"
        searcher = self._searcher_ready()
        if mode != "ponder":  # a ponder search is on the clock only after ponder-hit
            self._arm_deadline(job)
        self._job = job
        with_multipv = int(self._values["multipv"]) > 1
        job.thread = searcher.start(job.board, job.limits, lambda info: self._on_info(job, info, with_multipv),
                                    lambda result, error: self._on_done(job, result, error))
        threading.Thread(target=self._supervise, args=(job, searcher), daemon=True).start()

    # -- searching ------------------------------------------------------------------

    def _searching(self) -> bool:
        """A ``go`` is waiting for its ``done``."""
        return self._job is not None and not self._job.answered.is_set()

    def _request(self, command: str) -> None:
        job, searcher = self._job, self._searcher
        if job is None or searcher is None:
            return
        if command == "stop":
            job.stop_requested.set()
            searcher.stop()
        elif job.mode == "ponder" and not job.hit_requested.is_set():
            self._arm_deadline(job)
            job.hit_requested.set()
            searcher.ponder_hit()

    @staticmethod
    def _arm_deadline(job: _Job) -> None:
        budget = hard_budget(job.limits)
        if budget is not None:
            job.deadline = time.monotonic() + budget

    def _finish_search(self, timeout: float | None) -> None:
        """Stop the search (if any) and wait, up to ``timeout`` seconds, until the searcher is free."""
        job = self._job
        if job is None or job.thread is None:
            return
        if not job.answered.is_set():
            job.stop_requested.set()
            if self._searcher is not None:
                self._searcher.stop()
        job.thread.join(timeout)

    def _supervise(self, job: _Job, searcher: Searcher) -> None:
        """Stop the search at the hard deadline; answer early from the last reported main
        line when the searcher is slow to return after a stop."""
        try:
            while not job.finished.wait(_POLL):
                now = time.monotonic()
                if job.stop_requested.is_set() or (job.deadline is not None and now >= job.deadline):
                    searcher.stop()
                    if job.stopping_since is None:
                        job.stopping_since = now
                    elif now - job.stopping_since >= STOP_GRACE and not job.answered.is_set():
                        pv = list(job.best_pv)
                        self._answer(job, pv[0] if pv else None, pv[1] if len(pv) > 1 else None)
        except Exception as error:
            self._error(f"internal error in search supervisor: {type(error).__name__}: {error}")

    def _on_info(self, job: _Job, info: Info, with_multipv: bool) -> None:
        if job.answered.is_set():  # answered early: the GUI has moved on
            return
        if info.multipv == 1 and info.pv:
            job.best_pv = list(info.pv)
        self._send(format_info(info, with_multipv))

    def _on_done(self, job: _Job, result: Result | None, error: Exception | None) -> None:
        """The search's end: answer (unless the supervisor already did); a failed search
        still answers with a legal move."""
        best: Move | None = None
        ponder: Move | None = None
        try:
            if error is not None:
                self._error(f"internal error in search: {type(error).__name__}: {error}")
            elif result is not None:
                best = result.best
                ponder = result.ponder or (result.pv[1] if len(result.pv) > 1 and result.pv[0] == best else None)
        finally:
            self._answer(job, best, ponder)
            job.finished.set()

    def _answer(self, job: _Job, best: Move | None, ponder: Move | None) -> None:
        """Send the job's one ``done``: ``best`` if legal (else a legal move), ``ponder`` if legal after it."""
        with job.answer_lock:
            if job.answered.is_set():
                return
            if best not in job.legal:
                if best is not None:
                    self._error(f"search returned an illegal move {best}; playing {job.legal[0]}")
                best, ponder = job.legal[0], None
            assert best is not None
            if ponder is not None:
                after = job.board.copy()
                after.push(best)
                if ponder not in after.legal_moves():
                    ponder = None
            pairs = [("move", best.hub())] + ([("ponder", ponder.hub())] if ponder else [])
            self._send(format_line("done", pairs))
            job.answered.set()

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
            now = time.time()
            stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
            self._log.write(f"{stamp} {direction} {line}\n")
            self._log.flush()


def serve_stdio(hash_mb: int = 64, log_path: str | None = None) -> None:
    """Run a Hub session on this process's stdin and stdout, then end the process at once.

    stderr is silenced at the file-descriptor level (clients such as pydraughts merge
    it into the protocol stream); the optional log gets both directions and anything
    that would have gone to stderr.
    """
    log = open(log_path, "a", encoding="utf-8") if log_path else None
    null_fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null_fd, 2)
    sys.stderr = log if log is not None else io.TextIOWrapper(io.FileIO(null_fd, "w", closefd=False))
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", errors="replace")
    try:
        HubServer(stdout, hash_mb=hash_mb, log=log).run(stdin)
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
