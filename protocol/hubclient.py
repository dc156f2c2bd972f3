"""A Hub protocol client: drive any Hub engine process as a GUI would (an
:class:`~pedina.protocol.engineclient.EngineClient`).

:class:`HubClient` starts an engine, does the handshake (``hub`` ... ``wait``,
``set-param``, ``init`` ... ``ready``) and runs searches with :meth:`HubClient.go`, or in two
steps (:meth:`HubClient.start_search`, then :meth:`HubClient.finish_search` with each ``info``
as it comes, and :meth:`HubClient.stop` in between) for a GUI that shows the search live.
Every wait is bounded: an engine that exits, stops answering or talks nonsense
raises an :class:`EngineError` carrying the engine's last output lines, so a
caller (the match runner) can score the game and start a fresh process. So is
every line read (:data:`~pedina.protocol.engineclient.MAX_LINE_CHARS`).

One ``go`` has one ``done``. After each ``done`` the client sends ``ping`` and reads up to
the ``pong``: the engine reads its input in order, so a second ``done`` for the same
``go``, however late, comes before that ``pong`` and is called what it is
(:class:`~pedina.protocol.engineclient.EngineAnsweredTwice`) instead of answering the
next ``go``. An engine that does not answer ``ping`` in its handshake gets no fence;
a stray ``done`` found before its next ``go`` is then called the same. The same fence
follows a ``set-param`` after the handshake: an ``error`` line before the ``pong`` is the
engine refusing the value (:class:`~pedina.protocol.engineclient.EngineRefused`).
"""

from __future__ import annotations

import collections
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from typing import IO, Callable, Mapping, Sequence

from pedina.scores import Score
from pedina.protocol.engineclient import (MAX_LINE_CHARS, TAIL_LINES, EngineAnsweredTwice, EngineCrashed,
                                          EngineError, EngineId, EngineProtocolError, EngineRefused, EngineTimeout,
                                          EngineUnreadable, SearchReport, next_before)
from pedina.protocol.hubline import HubInputError, format_line, parse_line


def split_line(line: str) -> tuple[str, dict[str, str]]:
    """A Hub line as its command word and arguments (a flag maps to ``""``); ``("", {})`` if unreadable."""
    try:
        command, pairs = parse_line(line)
    except HubInputError:
        return "", {}
    return command, {key: "" if value is None else value for key, value in pairs}


def seconds_text(value: float) -> str:
    """Seconds as short decimal text for ``level`` (``0.1``, ``59.25``), never in exponent form."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def hub_line(command: str, args: Mapping[str, object] | None = None) -> str:
    """A protocol line: ``None`` values are left out, ``True`` ones written as a bare flag."""
    pairs = {key: value for key, value in (args or {}).items() if value is not None}
    return " ".join([format_line(command, [(k, v) for k, v in pairs.items() if v is not True]),
                     *(k for k, v in pairs.items() if v is True)])


ErrorMaker = Callable[[type[EngineError], str], EngineError]
Receiver = Callable[[float], tuple[float, str, dict[str, str]]]


def handshake_params(declared: Mapping[str, Mapping[str, str]], params: Mapping[str, str], variant: str,
                     error: ErrorMaker) -> list[tuple[str, str]]:
    """The ``set-param`` names and values a handshake sends an engine that declared ``declared``
    (name -> ``param`` arguments): ``variant`` if it declares one, then ``params``. Raises
    ``error(EngineProtocolError, ...)`` if it does not offer ``variant`` or declare a parameter."""
    settings: list[tuple[str, str]] = []
    if "variant" in declared:
        offered = declared["variant"].get("values", declared["variant"].get("value", "")).split()
        if offered and variant not in offered:
            raise error(EngineProtocolError, f"does not play variant {variant!r} (offers {' '.join(offered)})")
        settings.append(("variant", variant))
    for name, value in params.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise error(EngineProtocolError, f"has no parameter {name!r} (it declares: {known})")
        settings.append((name, value))
    return settings


def read_search(receive: Receiver, started: float, timeout: float,
                on_info: Callable[[dict[str, str]], None] | None, error: ErrorMaker) -> SearchReport:
    """The report of the search begun at ``started``, from the ``info`` lines up to its ``done``,
    each read by ``receive(deadline)`` (arrival time, command word, arguments) until ``started +
    timeout``; each ``info``'s arguments also go to ``on_info``. A ``done`` without a move raises
    ``error(EngineProtocolError, ...)``."""
    report = SearchReport(move="", ponder=None, elapsed=0.0)
    deadline = started + timeout
    while True:
        stamp, command, args = receive(deadline)
        if command == "info":
            report.infos += 1
            if "score" in args:
                report.score = Score.from_hub(args)
            if args.get("depth", "").isdigit():
                report.depth = int(args["depth"])
            if args.get("nodes", "").isdigit():
                report.nodes = int(args["nodes"])
            report.pv = args.get("pv", report.pv)
            report.book = args.get("book") == "true"
            if on_info is not None:
                on_info(args)
        elif command == "done":
            move = args.get("move")
            if not move:
                raise error(EngineProtocolError, "answered 'done' without a move")
            report.move, report.ponder = move, args.get("ponder") or None
            report.elapsed = stamp - started
            return report


#: Seconds an engine has to answer the handshake's ``ping`` (else it is driven without fences)
#: and each fence's (it has just answered, and has nothing else to do).
PING_TIMEOUT = 5.0
#: Seconds an engine has to answer the fence after a ``set-param``: a new hash size or thread
#: count may make it allocate and zero gigabytes before it reads the ``ping``.
SETTING_TIMEOUT = 60.0
#: What the decoder puts for bytes that are not UTF-8.
UNREADABLE = "\ufffd"


class _Overlong:
    """In the reader's queue: a line longer than :data:`MAX_LINE_CHARS` was skipped."""


class HubClient:
    """One running Hub engine process.

    ``command`` is an argument list or a shell-like string (split with
    :func:`shlex.split`, never run through a shell). The process gets its own
    session so a Ctrl-C in the terminal reaches only the caller, which ends the
    engine's whole process group in :meth:`close`.
    """

    def __init__(self, command: str | Sequence[str], *, cwd: str | None = None,
                 label: str = "engine") -> None:
        self.argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.argv:
            raise EngineCrashed(f"{label}: empty engine command")
        self.label = label
        self.id = EngineId()
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._lines: queue.Queue[tuple[float, str | _Overlong | None]] = queue.Queue()
        self._fences = False  # the engine answered the handshake's ping: each done is fenced
        self._lock = threading.Lock()
        try:
            self.process = subprocess.Popen(
                self.argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                bufsize=1, start_new_session=True)
        except OSError as error:
            raise EngineCrashed(f"{label}: cannot start {shlex.join(self.argv)!r}: "
                                f"{error.strerror or error}") from error
        assert self.process.stdout is not None and self.process.stderr is not None
        self._readers = [threading.Thread(target=self._read, args=(stream, stream is self.process.stdout),
                                          daemon=True) for stream in (self.process.stdout, self.process.stderr)]
        for reader in self._readers:
            reader.start()

    # -- plumbing -----------------------------------------------------------

    def _read(self, stream: IO[str], protocol: bool) -> None:
        while raw := stream.readline(MAX_LINE_CHARS + 1):
            item: str | _Overlong = raw.rstrip("\r\n")
            if len(raw) > MAX_LINE_CHARS:  # skipped to its end, never held whole
                while (rest := stream.readline(MAX_LINE_CHARS)) and not rest.endswith("\n"):
                    pass
                item = _Overlong()
            stamp = time.monotonic()
            with self._lock:
                self._tail.append(("< " if protocol else "! ")
                                  + (item if isinstance(item, str) else f"(a line of over {MAX_LINE_CHARS:,} characters)"))
            if protocol:
                self._lines.put((stamp, item))
        if protocol:
            self._lines.put((time.monotonic(), None))

    def tail(self) -> list[str]:
        """The last lines exchanged with the engine, oldest first."""
        with self._lock:
            return list(self._tail)

    def _error(self, kind: type[EngineError], message: str) -> EngineError:
        return kind(f"{self.label}: {message}", self.tail())

    def send(self, command: str, args: Mapping[str, object] | None = None) -> None:
        """Write one protocol line; ``None`` values are left out, ``True`` ones written as a bare flag.

        Raises :class:`EngineCrashed` if the engine is gone.
        """
        line = hub_line(command, args)
        with self._lock:
            self._tail.append("> " + line)
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as error:
            raise self._crashed() from error

    def _crashed(self) -> EngineError:
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return self._error(EngineCrashed, "closed its output")
        return self._error(EngineCrashed, f"exited with code {code}")

    def receive(self, deadline: float, readable: bool = False) -> tuple[float, str, dict[str, str]]:
        """The next line (arrival time, command word, arguments) before ``deadline`` (monotonic).
        A line beyond :data:`MAX_LINE_CHARS` raises :class:`EngineUnreadable`, and with
        ``readable`` (a search's answer) so does one with bytes that are not UTF-8."""
        while True:
            try:
                stamp, line = next_before(self._lines, deadline)
            except queue.Empty:
                raise self._error(EngineTimeout, "no answer in time") from None
            if line is None:
                self._lines.put((stamp, None))  # stay at end of file for later readers
                raise self._crashed()
            if isinstance(line, _Overlong):
                raise self._error(EngineUnreadable, f"sent a line of over {MAX_LINE_CHARS:,} characters")
            if readable and UNREADABLE in line:
                raise self._error(EngineUnreadable, f"sent an unreadable line (not UTF-8): {line[:80]!r}")
            command, args = split_line(line)
            if command:
                return stamp, command, args

    def _drain(self) -> None:
        """Forget lines already received; a stray ``done`` is an :class:`EngineAnsweredTwice`
        (it must not answer the next ``go``)."""
        while True:
            try:
                stamp, line = self._lines.get_nowait()
            except queue.Empty:
                return
            if line is None:
                self._lines.put((stamp, None))
                return
            if isinstance(line, str) and split_line(line)[0] == "done":
                raise self._error(EngineAnsweredTwice, f"answered twice: {line[:80]!r} came with no 'go' to answer")

    def _fence(self, timeout: float = PING_TIMEOUT) -> list[str]:
        """``ping``, and every line up to the ``pong`` (within ``timeout`` seconds): a ``done``
        among them answered the last ``go`` a second time (see the module's docstring); the
        messages of the ``error`` lines among them."""
        if not self._fences:
            return []
        self.send("ping")
        deadline = time.monotonic() + timeout
        errors: list[str] = []
        while True:
            _, command, args = self.receive(deadline, readable=True)
            if command == "pong":
                return errors
            if command == "error":
                errors.append(args.get("message", ""))
            if command == "done":
                raise self._error(EngineAnsweredTwice, f"answered twice: a second 'done' (move={args.get('move')!r}) "
                                                       "for one 'go'")

    def expect(self, wanted: str, timeout: float) -> dict[str, str]:
        """Skip lines up to the first ``wanted`` command; its arguments."""
        deadline = time.monotonic() + timeout
        while True:
            _, command, args = self.receive(deadline)
            if command == wanted:
                return args

    # -- protocol -----------------------------------------------------------

    def handshake(self, params: Mapping[str, str] | None = None, *, timeout: float = 30.0,
                  variant: str = "italian") -> EngineId:
        """``hub`` ... ``wait``, then ``set-param`` for ``variant`` and ``params``, then ``init`` ... ``ready``.

        Raises :class:`EngineProtocolError` if a parameter is not declared by the engine
        or the engine's variant parameter does not offer ``variant``.
        """
        deadline = time.monotonic() + timeout
        self.send("hub")
        while True:
            _, command, args = self.receive(deadline)
            if command == "id":
                self.id.name = args.get("name", "")
                self.id.version = args.get("version", "")
                self.id.author = args.get("author", "")
            elif command == "param" and "name" in args:
                self.id.params[args["name"]] = args
            elif command == "wait":
                break
        for name, value in handshake_params(self.id.params, params or {}, variant, self._error):
            self.send("set-param", {"name": name, "value": value})
        self.send("init")
        while True:
            _, command, args = self.receive(deadline)
            if command == "ready":
                break
            if command == "error":
                raise self._error(EngineProtocolError,
                                  f"refused a setting: {args.get('message', '')}")
        self.send("ping")
        try:
            self.expect("pong", min(PING_TIMEOUT, max(0.0, deadline - time.monotonic())))
            self._fences = True
        except EngineTimeout:
            pass  # an engine without ping: stray lines are only found before the next go (see _drain)
        return self.id

    def new_game(self) -> None:
        """``new-game``: the engine forgets the last game."""
        self.send("new-game")

    def ping(self, timeout: float = 10.0) -> None:
        """``ping`` and wait for ``pong``."""
        self.send("ping")
        self.expect("pong", timeout)

    def set_param(self, name: str, value: object) -> None:
        """``set-param`` after the handshake (e.g. ``skill`` or ``multipv`` between searches).

        Raises :class:`EngineRefused` when the engine answers it with an ``error`` line, which
        only an engine that answers ``ping`` can be heard to do (see the module's docstring)."""
        self.send("set-param", {"name": name, "value": value})
        refusals = self._fence(SETTING_TIMEOUT)
        if refusals:
            raise self._error(EngineRefused, f"refused {name}={value}: {'; '.join(refusals)}")

    def go(self, position: str, moves: Sequence[str], level: Mapping[str, object],
           timeout: float) -> SearchReport:
        """Search: ``pos``, ``level``, ``go think``, then wait up to ``timeout`` s for ``done``.

        ``elapsed`` is measured from the ``go`` line to the arrival of ``done``.
        On a timeout the engine is left as it is (the caller closes it).
        """
        return self.finish_search(self.start_search(position, moves, level), timeout)

    def start_search(self, position: str, moves: Sequence[str], level: Mapping[str, object],
                     mode: str = "think") -> float:
        """Begin a search and return at once: ``pos``, ``level``, then ``go`` with the flag ``mode``
        (``think``, ``ponder`` or ``analyze``); the monotonic time the ``go`` line went out.

        :meth:`finish_search` waits for its ``done``; :meth:`stop` may be sent before that
        from another thread, since waiting only reads.
        """
        self._drain()
        self.send("pos", {"pos": position, "moves": " ".join(moves) if moves else None})
        self.send("level", level)
        started = time.monotonic()
        self.send("go", {mode: True})
        return started

    def finish_search(self, started: float, timeout: float,
                      on_info: Callable[[dict[str, str]], None] | None = None) -> SearchReport:
        """Wait until ``started + timeout`` (monotonic) for the ``done`` of the search that
        :meth:`start_search` began; each ``info`` line's arguments also go to ``on_info`` as it arrives.

        Raises :class:`EngineTimeout` when no ``done`` comes in time (the engine is left as it is),
        :class:`EngineCrashed` when the engine exits, :class:`EngineProtocolError` for a ``done``
        without a move.
        """
        report = read_search(lambda deadline: self.receive(deadline, readable=True), started, timeout, on_info,
                             self._error)
        self._fence()
        return report

    def game_over(self, position: str, moves: Sequence[str], result: str, timeout: float) -> None:
        """Nothing to send: the Hub protocol has no game end (the next ``new-game`` begins another)."""

    def stop(self) -> None:
        """``stop``: the running search should end soon; its ``done`` still comes to :meth:`finish_search`."""
        self.send("stop")

    def close(self, timeout: float = 1.0) -> None:
        """``quit``, then end the engine's process group if it is still there after ``timeout`` s."""
        if self.process.poll() is None:
            try:
                self.send("quit")
                self.process.wait(timeout=timeout)
            except (EngineError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        for reader in self._readers:  # they end at end of file, now that the process is gone
            reader.join(timeout)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass

    def __enter__(self) -> HubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()



__all__ = ["EngineCrashed", "EngineError", "EngineId", "EngineProtocolError", "EngineRefused", "EngineTimeout",
           "HubClient", "SearchReport", "TAIL_LINES", "handshake_params", "hub_line", "read_search", "seconds_text",
           "split_line"]
