"""An engine in this process, driven as the match runner drives an engine process (an
:class:`~pedina.protocol.engineclient.EngineClient`).

:class:`SessionClient` holds a :class:`~pedina.session.Session` and holds the Hub engine's
conversation with it without a process or a pipe: each command is the line a
:class:`~pedina.protocol.hubclient.HubClient` would send, carried out by the Hub engine's own
functions (:mod:`pedina.protocol.hub`: its parameters, ``pos``, ``level`` and ``go``), and each
search's ``info`` lines and ``done`` are the Hub engine's, read by the Hub client's reader
(:func:`~pedina.protocol.hubclient.read_search`). So an engine in this process gives the runner
the identity, parameters, reports and errors of ``pedina hub`` as a process: the in-process
matches and self-play (:mod:`pedina.protocol.match.inprocess`) play through the match runner.

The engine's failures are the runner's :class:`~pedina.protocol.engineclient.EngineError`: a
command the engine refuses is an :class:`~pedina.protocol.engineclient.EngineProtocolError`, the
session failing (its searcher cannot be made, say) an
:class:`~pedina.protocol.engineclient.EngineCrashed`, no answer in time an
:class:`~pedina.protocol.engineclient.EngineTimeout`. The session's own guarantee (one answer per
search, on time) means a search ends the way a Hub engine's does.
"""

from __future__ import annotations

import collections
import contextlib
import queue
import threading
import time
from typing import Callable, Iterator, Mapping, Sequence

from pedina.board import Board
from pedina.protocol.engineclient import (TAIL_LINES, EngineCrashed, EngineError, EngineId, EngineProtocolError,
                                          EngineRefused, EngineTimeout, SearchReport, next_before)
from pedina.protocol.hub import (IDENTITY, apply_level, declared_params, done_line, format_info, go_mode,
                                 play_moves, position_board, search_limits, set_param)
from pedina.protocol.hubclient import handshake_params, hub_line, read_search, split_line
from pedina.protocol.hubline import HubInputError, parse_line
from pedina.session import Session
from pedina.timeman import Limits


class SessionClient:
    """``session`` as an engine called ``label``. :meth:`close` ends its searches; the session
    can search again afterwards, so a caller may hand the same session to a new client."""

    def __init__(self, session: Session, *, label: str = "engine") -> None:
        self.session = session
        self.label = label
        self.id = EngineId()
        self._params = declared_params(session.settings)
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._lock = threading.Lock()
        # Each search's lines go to a queue of their own: a search answered after its wait ran
        # out cannot answer the next one.
        self._lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self._last_game: tuple[str, tuple[str, ...], Board] = ("", (), Board())

    # -- plumbing -----------------------------------------------------------

    def tail(self) -> list[str]:
        """The last lines exchanged with the engine, oldest first (``>`` asked, ``<`` answered)."""
        with self._lock:
            return list(self._tail)

    def _error(self, kind: type[EngineError], message: str) -> EngineError:
        return kind(f"{self.label}: {message}", self.tail())

    def _send(self, command: str, args: Mapping[str, object] | None = None) -> list[tuple[str, str | None]]:
        """The arguments of the line a Hub client sends for ``command`` and ``args``, that line noted."""
        line = hub_line(command, args)
        with self._lock:
            self._tail.append("> " + line)
        return parse_line(line)[1]

    def _answer(self, lines: queue.Queue[tuple[float, str]], line: str) -> None:
        """On the session's threads: one line of a search's answer, stamped as it comes."""
        stamp = time.monotonic()
        with self._lock:
            self._tail.append("< " + line)
        lines.put((stamp, line))

    def _receive(self, deadline: float) -> tuple[float, str, dict[str, str]]:
        try:
            stamp, line = next_before(self._lines, deadline)
        except queue.Empty:
            raise self._error(EngineTimeout, "no answer in time") from None
        return (stamp, *split_line(line))

    @contextlib.contextmanager
    def _engine_failures(self) -> Iterator[None]:
        """The engine's failures as :class:`EngineError`: a refused command, or any other
        exception of the session, which for an engine in a process would have ended it."""
        try:
            yield
        except HubInputError as error:
            raise self._error(EngineProtocolError, f"refused: {error}") from error
        except EngineError:
            raise
        except Exception as error:  # scored as a crash, as the runner scores a process's
            raise self._error(EngineCrashed, f"failed: {type(error).__name__}: {error}") from error

    # -- the engine ---------------------------------------------------------

    def handshake(self, params: Mapping[str, str] | None = None, *, timeout: float = 30.0,
                  variant: str = "italian") -> EngineId:
        """The Hub engine's identity and parameters; ``variant`` and ``params`` set as a Hub
        client sets them, then the session prepared (:meth:`~pedina.session.Session.prepare`,
        in this thread: ``timeout`` bounds no wait here)."""
        self._send("hub")
        self._params = declared_params(self.session.settings)
        ident = dict(IDENTITY)
        self.id = EngineId(ident["name"], ident["version"], ident["author"],
                           {name: split_line(param.declaration())[1] for name, param in self._params.items()})
        for name, value in handshake_params(self.id.params, params or {}, variant, self._error):
            self.set_param(name, value)
        self._send("init")
        with self._engine_failures():
            self.session.prepare()
        return self.id

    def set_param(self, name: str, value: object) -> None:
        """Set a declared parameter, as ``set-param`` does in the Hub engine; a refused value
        raises :class:`EngineRefused`."""
        args = self._send("set-param", {"name": name, "value": value})
        with self._engine_failures():
            try:
                set_param(self.session, self._params, args)
            except HubInputError as error:
                raise self._error(EngineRefused, f"refused {name}={value}: {error}") from error

    def new_game(self) -> None:
        """The session forgets the last game."""
        self._send("new-game")
        with self._engine_failures():
            self.session.new_game()

    def _board(self, position: str, moves: Sequence[str]) -> Board:
        """The board of ``position`` after ``moves``, read as the Hub engine reads ``pos``; when
        they continue the last search's, only the moves since are read (a game is not replayed
        from its start at every move)."""
        args = self._send("pos", {"pos": position, "moves": " ".join(moves) if moves else None})
        last_position, last_moves, last_board = self._last_game
        with self._engine_failures():
            if position == last_position and tuple(moves[:len(last_moves)]) == last_moves:
                board = last_board.copy()
                play_moves(board, moves[len(last_moves):], len(last_moves) + 1)
            else:
                board = position_board(args)
        self._last_game = (position, tuple(moves), board)  # never changed: a continuation copies it
        return board

    def start_search(self, position: str, moves: Sequence[str], level: Mapping[str, object],
                     mode: str = "think") -> float:
        """Start the session's search of ``position`` after ``moves`` under ``level`` (Hub
        ``level`` arguments, none: the Hub engine's default) in ``mode``, read as the Hub engine
        reads ``pos``, ``level`` and ``go``; the monotonic time it started."""
        board = self._board(position, moves)
        with self._engine_failures():
            level_args = self._send("level", level)
            limits = search_limits(board, apply_level(Limits(), level_args) if level_args else Limits(),
                                   go_mode(self._send("go", {mode: True})))
            lines: queue.Queue[tuple[float, str]] = queue.Queue()
            self._lines = lines
            with_multipv = self.session.settings.multipv > 1
            started = time.monotonic()
            self.session.go(board, limits, lambda info: self._answer(lines, format_info(info, with_multipv)),
                            lambda answer: self._answer(lines, done_line(answer)))
        return started

    def finish_search(self, started: float, timeout: float,
                      on_info: Callable[[dict[str, str]], None] | None = None) -> SearchReport:
        """Wait until ``started + timeout`` for the answer of the search begun at ``started``;
        each ``info`` goes to ``on_info`` as the Hub client gives it."""
        return read_search(self._receive, started, timeout, on_info, self._error)

    def stop(self) -> None:
        """The running search answers now (its move still comes to :meth:`finish_search`)."""
        self._send("stop")
        self.session.stop()

    def game_over(self, position: str, moves: Sequence[str], result: str, timeout: float) -> None:
        """Nothing to do: the next :meth:`new_game` begins another game."""

    def close(self, timeout: float = 1.0) -> None:
        """Stop the search, and wait up to ``timeout`` s for the session's search threads."""
        self._send("quit")
        self.session.close(timeout)


__all__ = ["SessionClient"]
