"""The DXP Initiator: a running DXP engine driven as an :class:`~pedina.protocol.engineclient.EngineClient`.

:class:`DxpClient` connects over TCP to a listening Follower (``pedina dxp`` is one)
and maps the runner's requests onto the protocol: the first search of a game sends
GAMEREQ (form B: the position before the opponent's last move, the engine's colour, the
clock's minutes), waits for GAMEACC and sends that move; later searches send the opponent's move as a MOVE and wait for the
engine's; the game's end is a GAMEEND, answered by the other side's. A BACKREQ is
answered "not supported" (a match takes nothing back), a CHAT is kept in the tail.
DXP carries no move time, depth or node limit and no search information: the engine
plays on the GAMEREQ's clock, or at its own move time when the GAMEREQ gives 0 minutes.
"""

from __future__ import annotations

import collections
import queue
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from pedina.board import Board
from pedina.move import MoveError
from pedina.position import Position, PositionError
from pedina.protocol.dxp.messages import (BackAccept, BackRequest, Chat, DxpError, GameAccept, GameEnd, GameRequest,
                                          Message, MessageReader, MoveMessage, decode_frame, encode, find_move,
                                          move_message, parse_message, printable)
from pedina.protocol.engineclient import (TAIL_LINES, EngineCrashed, EngineError, EngineId, EngineProtocolError,
                                          EngineResigned, EngineTimeout, SearchReport, next_before)

#: Our name in GAMEREQ.
INITIATOR_NAME = "Pedina match"

_REFUSALS = {1: "wrong protocol version", 2: "refuses this game", 3: "refuses all games"}
_ENDS = {0: "no reason given", 1: "it resigns", 2: "it claims a draw", 3: "it claims a win"}


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as (host, port); :class:`ValueError` says what is wrong."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"bad DXP address {text!r} (expected HOST:PORT, e.g. 127.0.0.1:27531)")
    return host, int(port)


@dataclass
class _Game:
    """The game on the connection: the board as the engine knows it and the engine's colour."""

    start: str                 # Hub text of the runner's start position
    board: Board               # from that start, every move the engine has seen or played
    engine_white: bool


def hang_up(sock: socket.socket) -> None:
    """Shut a connection both ways, so that a thread blocked reading it wakes, then close it."""
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already shut by the other side
    sock.close()


class DxpClient:
    """The connection to one running DXP engine at ``host``:``port``, playing one game at a time.

    ``minutes`` and ``moves`` go into every GAMEREQ (0: no clock, no move count).
    """

    def __init__(self, host: str, port: int, *, minutes: int = 0, moves: int = 0, label: str = "engine") -> None:
        self.host, self.port = host, port
        self.minutes, self.moves = minutes, moves
        self.label = label
        self.id = EngineId()
        self._timeout = 30.0
        self._sock: socket.socket | None = None
        self._game: _Game | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._messages: queue.Queue[tuple[float, Message | DxpError | None]] = queue.Queue()
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None

    # -- plumbing -----------------------------------------------------------

    def _note(self, line: str) -> None:
        with self._lock:
            self._tail.append(line)

    def tail(self) -> list[str]:
        """The last messages exchanged with the engine, oldest first."""
        with self._lock:
            return list(self._tail)

    def _error(self, kind: type[EngineError], message: str) -> EngineError:
        return kind(f"{self.label}: {message}", self.tail())

    def _read(self, sock: socket.socket) -> None:
        framer = MessageReader()
        while True:
            try:
                data = sock.recv(4096)
            except OSError:
                data = b""
            if not data:
                self._messages.put((time.monotonic(), None))
                return
            stamp = time.monotonic()
            for frame in framer.feed(data):
                self._note("< " + printable(frame))
                item: Message | DxpError
                try:
                    item = parse_message(decode_frame(frame))
                except DxpError as error:
                    item = error
                self._messages.put((stamp, item))

    def _send(self, message: Message) -> None:
        data = encode(message)
        self._note("> " + data[:-1].decode("ascii"))
        if self._sock is None:
            raise self._error(EngineCrashed, "not connected")
        try:
            self._sock.sendall(data)
        except OSError as error:
            raise self._error(EngineCrashed, f"connection lost: {error.strerror or error}") from error

    def _receive(self, deadline: float) -> tuple[float, Message]:
        """The next message that needs an answer from the runner, before ``deadline`` (monotonic).
        A BACKREQ is answered here, a CHAT only kept in the tail."""
        while True:
            try:
                stamp, item = next_before(self._messages, deadline)
            except queue.Empty:
                raise self._error(EngineTimeout, "no answer in time") from None
            if item is None:
                self._messages.put((stamp, None))  # stay closed for later readers
                raise self._error(EngineCrashed, "closed the connection")
            if isinstance(item, DxpError):
                raise self._error(EngineProtocolError, f"sent an unreadable message: {item}")
            if isinstance(item, BackRequest):
                self._send(BackAccept(1))
            elif not isinstance(item, Chat):
                return stamp, item

    # -- the engine client --------------------------------------------------

    def handshake(self, params: Mapping[str, str] | None = None, *, timeout: float = 30.0,
                  variant: str = "italian") -> EngineId:
        """Connect within ``timeout`` s (which also bounds waiting for GAMEACC later). DXP has no
        parameters (``params`` must be empty) and plays 8x8 Italian as pydraughts' extension does."""
        if params:
            raise self._error(EngineProtocolError, f"a DXP engine has no parameters (given: {', '.join(params)})")
        if variant != "italian":
            raise self._error(EngineProtocolError, f"DXP plays Italian here, not {variant!r}")
        self._timeout = timeout
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=timeout)
        except OSError as error:
            raise self._error(EngineCrashed, f"cannot connect to {self.host}:{self.port}: "
                                             f"{error.strerror or error}") from None
        self._sock.settimeout(timeout)  # bounds a send to an engine that does not read
        self._reader = threading.Thread(target=self._read, args=(self._sock,), daemon=True)
        self._reader.start()
        return self.id

    def set_param(self, name: str, value: object) -> None:
        """Always an :class:`EngineProtocolError`: DXP has no parameters."""
        raise self._error(EngineProtocolError, f"a DXP engine has no parameter {name!r}")

    def new_game(self) -> None:
        """Forget the last game (the next search sends a GAMEREQ, which replaces it on the engine's side too)."""
        self._game = None

    def start_search(self, position: str, moves: Sequence[str], level: Mapping[str, object],
                     mode: str = "think") -> float:
        """The engine's turn: the game's first sends GAMEREQ and waits for GAMEACC, a later one sends
        the opponent's move. ``level`` is not sent (the GAMEREQ gave the clock); the engine moves on its own."""
        if mode != "think":
            raise self._error(EngineProtocolError, f"a DXP engine cannot {mode}: it only plays its moves")
        game = self._game
        if game is None or game.start != position or list(self._texts(game)) != list(moves[:-1]):
            return self._request_game(position, moves)
        try:
            move = game.board.parse_move(moves[-1])
        except MoveError as error:
            raise self._error(EngineProtocolError, f"cannot send {moves[-1]!r}: {error}") from None
        self._send(move_message(move, 0))
        game.board.push(move)
        return time.monotonic()

    @staticmethod
    def _texts(game: _Game) -> list[str]:
        return [move.hub() for move in game.board.moves]

    def _request_game(self, position: str, moves: Sequence[str]) -> float:
        """GAMEREQ at the position before the last of ``moves``, then that move (the engine's turn
        begins with a message received, as in any game: a Follower that paces its own messages
        does not make its first move wait after its GAMEACC); with no moves, GAMEREQ with the
        engine to move. GAMEACC awaited."""
        try:
            board = Board(Position.from_hub(position))
            for text in moves[:-1]:
                board.push(board.parse_move(text))
            last = board.parse_move(moves[-1]) if moves else None
        except (PositionError, MoveError) as error:
            raise self._error(EngineProtocolError, f"cannot set up the game: {error}") from None
        engine_white = board.position.white_to_move == (last is None)
        self._game = None
        self._send(GameRequest(INITIATOR_NAME, engine_white, self.minutes, self.moves, board.position))
        deadline = time.monotonic() + self._timeout
        while True:
            stamp, message = self._receive(deadline)
            if isinstance(message, GameAccept):
                break
            # a GAMEEND or MOVE of the game before, still on its way: no longer wanted
        if message.code != 0:
            raise self._error(EngineProtocolError, f"refused the game (GAMEACC code {message.code}: "
                                                   f"{_REFUSALS.get(message.code, 'unknown code')})")
        self.id.name = message.follower
        self._game = _Game(position, board, engine_white)
        if last is None:
            return stamp
        self._send(move_message(last, 0))
        board.push(last)
        return time.monotonic()

    def finish_search(self, started: float, timeout: float,
                      on_info: Callable[[dict[str, str]], None] | None = None) -> SearchReport:
        """The engine's MOVE, waited for until ``started + timeout``. A move that matches no legal move
        is reported as its squares (the runner finds it illegal); a GAMEEND instead of a move is
        answered and raised (:class:`EngineResigned` for "I lose"). DXP sends no info: ``on_info`` is never called."""
        game = self._game
        if game is None:
            raise self._error(EngineProtocolError, "no game in play to wait for")
        stamp, message = self._receive(started + timeout)
        if isinstance(message, GameEnd):
            self._send(GameEnd(0, 0))
            self._game = None
            kind = EngineResigned if message.reason == 1 else EngineProtocolError
            raise self._error(kind, f"ended the game instead of moving ({_ENDS[message.reason]})")
        if not isinstance(message, MoveMessage):
            raise self._error(EngineProtocolError, f"sent {type(message).__name__} instead of its move")
        try:
            move = find_move(game.board.legal_moves(), message)
        except DxpError:
            squares = "x".join(str(square) for square in (message.start, message.end, *sorted(message.captured)))
            text = squares if message.captured else f"{message.start}-{message.end}"
            return SearchReport(move=text, ponder=None, elapsed=stamp - started)
        game.board.push(move)
        return SearchReport(move=move.hub(), ponder=None, elapsed=stamp - started)

    def stop(self) -> None:
        """Nothing to send: DXP has no way to hurry an engine, which moves on its clock."""

    def game_over(self, position: str, moves: Sequence[str], result: str, timeout: float) -> None:
        """End the game as DXP does: the side to move sends GAMEEND, the other answers. A last move
        of ours that ended the game by the rules is sent first (then the engine, to move, ends it);
        otherwise (the engine's move ended it, or the runner adjudicated) we send GAMEEND."""
        game, self._game = self._game, None
        if game is None or game.start != position:
            return
        known = self._texts(game)
        white_points = {"1-0": 1.0, "0-1": 0.0}.get(result, 0.5)
        ours = white_points if not game.engine_white else 1.0 - white_points
        reason = {1.0: 3, 0.0: 1}.get(ours, 2)
        deadline = time.monotonic() + timeout
        if len(moves) == len(known) + 1 and list(moves[:-1]) == known:
            move = game.board.parse_move(moves[-1])
            game.board.push(move)
            if game.board.outcome() is not None:
                self._send(move_message(move, 0))
                self._await_end(deadline)
                self._send(GameEnd(reason, 0))
                return
        self._send(GameEnd(reason, 0))
        self._await_end(deadline)

    def _await_end(self, deadline: float) -> None:
        while not isinstance(self._receive(deadline)[1], GameEnd):
            pass  # a move that crossed our GAMEEND

    def close(self, timeout: float = 1.0) -> None:
        """Close the connection (the engine's server then takes the next one)."""
        sock, self._sock = self._sock, None
        if sock is not None:
            hang_up(sock)
        if self._reader is not None:
            self._reader.join(timeout)

    def __enter__(self) -> DxpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["DxpClient", "INITIATOR_NAME", "hang_up", "parse_address"]
