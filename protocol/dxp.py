"""The DamExchange protocol (DXP) over TCP: Pedina as a listening Follower.

The Initiator (a GUI, an arbiter, pydraughts' ``DXPEngine``) connects, sends a
GAMEREQ and gets a GAMEACC; then MOVE messages strictly alternate until one
side, when it is to move, sends a GAMEEND, which the other confirms with one.
Another GAMEREQ may then start a new game on the same connection. Squares are
numbered 1-32 as in FID notation (pydraughts' 8x8 extension of the protocol).

The first half of this module is pure: the messages as values
(:class:`GameRequest`, :class:`GameAccept`, :class:`MoveMessage`,
:class:`GameEnd`, :class:`Chat`, :class:`BackRequest`, :class:`BackAccept`),
:func:`parse_message` and :func:`format_message`, the NUL framing
(:class:`MessageReader`, :func:`decode_frame`) and the mapping to our moves and
positions (:func:`find_move`, :func:`move_message`, :func:`position_from_dxp`).
The second half is the Follower (:class:`DxpFollower`, :func:`serve`, the
``pedina dxp`` command): one connection at a time, the search on its own
thread, our clock kept from the GAMEREQ minutes since the other side's MOVE
messages carry no usable time.
"""

from __future__ import annotations

import queue
import select
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType
from typing import Callable, TextIO, Union

import click

from pedina.board import Board, Outcome
from pedina.move import Move
from pedina.position import Position, PositionError
from pedina.search import Info, Limits, Result, Searcher
from pedina.timeman import time_budget

#: The port DXP programs listen on unless told otherwise.
DEFAULT_PORT = 27531
#: The only protocol version there is.
VERSION = "01"
#: Longest message (without its NUL).
MAX_LENGTH = 127
#: Our name in GAMEACC.
ENGINE_NAME = "Pedina"
#: Pause between two messages we send with nothing received in between (seconds):
#: pydraughts' reader fuses two messages that arrive in one ``recv`` and loses the second.
MESSAGE_GAP = 0.2
#: After a stop at the hard deadline, how long the searcher gets before we answer
#: from its last reported main line (seconds).
STOP_GRACE = 0.05
_NAME_WIDTH = 32
_SQUARES = 32


class DxpError(ValueError):
    """A message that cannot be read, or a move that matches no legal move; the text says why."""


class UnsupportedVersion(DxpError):
    """A GAMEREQ for a protocol version other than ``01`` (answered with GAMEACC code 1)."""


# -- messages -------------------------------------------------------------------------


@dataclass(frozen=True)
class GameRequest:
    """``R``: start a game. ``position`` ``None`` is form A (the normal start position)."""

    initiator: str
    follower_white: bool
    minutes: int              # per side for the whole game; 0: none given
    moves: int                # moves per game the time is for; 0: no limit
    position: Position | None = None


@dataclass(frozen=True)
class GameAccept:
    """``A``: the Follower's answer; ``code`` 0 accept, 1 wrong version, 2 refuse this game, 3 refuse all."""

    follower: str
    code: int


@dataclass(frozen=True)
class MoveMessage:
    """``M``: a move by its start, end and captured squares (any order), with the seconds it took."""

    seconds: int
    start: int
    end: int
    captured: tuple[int, ...] = ()


@dataclass(frozen=True)
class GameEnd:
    """``E``: ``reason`` 0 unknown, 1 I lose, 2 draw, 3 I win; ``stop`` 0 another game is fine, 1 stop."""

    reason: int
    stop: int = 0


@dataclass(frozen=True)
class Chat:
    """``C``: free text, 1-126 characters."""

    text: str


@dataclass(frozen=True)
class BackRequest:
    """``B``: take back to move ``number`` (the first move is 1) with ``white_to_move`` to play."""

    number: int
    white_to_move: bool


@dataclass(frozen=True)
class BackAccept:
    """``K``: ``code`` 0 accepted, 1 not supported, 2 refused."""

    code: int


Message = Union[GameRequest, GameAccept, MoveMessage, GameEnd, Chat, BackRequest, BackAccept]

_KINDS = {"R": "GAMEREQ", "A": "GAMEACC", "M": "MOVE", "E": "GAMEEND", "C": "CHAT", "B": "BACKREQ",
          "K": "BACKACC"}


def _number(text: str, field: str, low: int, high: int) -> int:
    if not (text.isascii() and text.isdigit()):
        raise DxpError(f"{field} must be digits, got {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise DxpError(f"{field} must be {low:0{len(text)}d}-{high:0{len(text)}d}, got {text!r}")
    return value


def _colour(char: str, field: str) -> bool:
    """``W`` is White (``True``), ``Z`` Black."""
    if char not in ("W", "Z"):
        raise DxpError(f"{field} must be W or Z, got {char!r}")
    return char == "W"


def _expect_length(text: str, kind: str, length: int) -> None:
    if len(text) != length:
        raise DxpError(f"{kind} must have {length} characters, got {len(text)}")


def parse_message(text: str) -> Message:
    """The message ``text`` (without its NUL) as a value; :class:`DxpError` says what is wrong."""
    if not text:
        raise DxpError("empty message")
    if len(text) > MAX_LENGTH:
        raise DxpError(f"message of {len(text)} characters, more than {MAX_LENGTH}")
    bad = next((char for char in text if not 1 <= ord(char) <= 127), None)
    if bad is not None:
        raise DxpError(f"character {bad!r} outside ASCII 1-127")
    kind = text[0]
    if kind not in _KINDS:
        raise DxpError(f"unknown message type {kind!r}")
    name = _KINDS[kind]
    if kind == "R":
        return _parse_gamereq(text)
    if kind == "A":
        _expect_length(text, name, 34)
        return GameAccept(text[1:33].rstrip(), _number(text[33], "GAMEACC code", 0, 3))
    if kind == "M":
        return _parse_move(text)
    if kind == "E":
        _expect_length(text, name, 3)
        return GameEnd(_number(text[1], "GAMEEND reason", 0, 3), _number(text[2], "GAMEEND stop code", 0, 1))
    if kind == "C":
        if len(text) < 2:
            raise DxpError("CHAT without text")
        return Chat(text[1:])
    if kind == "B":
        _expect_length(text, name, 5)
        return BackRequest(_number(text[1:4], "BACKREQ move number", 1, 999), _colour(text[4], "BACKREQ colour"))
    _expect_length(text, name, 2)
    return BackAccept(_number(text[1], "BACKACC code", 0, 2))


def _parse_gamereq(text: str) -> GameRequest:
    if len(text) < 3:
        raise DxpError(f"GAMEREQ of {len(text)} characters is too short")
    if text[1:3] != VERSION:
        raise UnsupportedVersion(f"GAMEREQ for protocol version {text[1:3]!r}; only {VERSION} is known")
    if len(text) < 43:
        raise DxpError(f"GAMEREQ must have 43 characters (form A) or 76 (form B), got {len(text)}")
    initiator = text[3:35].rstrip()
    follower_white = _colour(text[35], "GAMEREQ Follower colour")
    minutes = _number(text[36:39], "GAMEREQ minutes", 0, 999)
    moves = _number(text[39:42], "GAMEREQ moves", 0, 999)
    form = text[42]
    if form == "A":
        _expect_length(text, "GAMEREQ form A", 43)
        return GameRequest(initiator, follower_white, minutes, moves)
    if form != "B":
        raise DxpError(f"GAMEREQ position indicator must be A or B, got {form!r}")
    if len(text) == 44 + 50:
        raise DxpError("GAMEREQ gives a 10x10 position (50 squares); only 8x8 (32 squares) is played")
    _expect_length(text, "GAMEREQ form B", 44 + _SQUARES)
    return GameRequest(initiator, follower_white, minutes, moves, position_from_dxp(text[43], text[44:]))


def _parse_move(text: str) -> MoveMessage:
    if len(text) < 11:
        raise DxpError(f"MOVE must have at least 11 characters, got {len(text)}")
    seconds = _number(text[1:5], "MOVE time", 0, 9999)
    start = _number(text[5:7], "MOVE from square", 1, _SQUARES)
    end = _number(text[7:9], "MOVE to square", 1, _SQUARES)
    count = _number(text[9:11], "MOVE capture count", 0, 20)
    if len(text) != 11 + 2 * count:
        raise DxpError(f"MOVE with {count} captured pieces must have {11 + 2 * count} characters, got {len(text)}")
    captured = tuple(_number(text[i:i + 2], "MOVE captured square", 1, _SQUARES) for i in range(11, len(text), 2))
    if len(set(captured)) != len(captured):
        raise DxpError("MOVE names a captured square twice")
    return MoveMessage(seconds, start, end, captured)


def _name(name: str) -> str:
    """A program name for GAMEREQ/GAMEACC: printable ASCII, 32 characters, blank-padded."""
    clean = "".join(char if " " <= char <= "~" else "?" for char in name).strip()
    return clean[:_NAME_WIDTH].ljust(_NAME_WIDTH)


def format_message(message: Message) -> str:
    """The text of ``message`` (without its NUL). Raises :class:`DxpError` for a field out of range."""
    if isinstance(message, GameRequest):
        head = (f"R{VERSION}{_name(message.initiator)}{'W' if message.follower_white else 'Z'}"
                f"{_field(message.minutes, 3, 'minutes')}{_field(message.moves, 3, 'moves')}")
        if message.position is None:
            return head + "A"
        side, squares = position_to_dxp(message.position)
        return f"{head}B{side}{squares}"
    if isinstance(message, GameAccept):
        return f"A{_name(message.follower)}{_field(message.code, 1, 'GAMEACC code', 3)}"
    if isinstance(message, MoveMessage):
        named = [message.start, message.end, *message.captured]
        if any(not 1 <= square <= _SQUARES for square in named):
            raise DxpError(f"MOVE square out of 1-{_SQUARES}: {named}")
        fields = [message.start, message.end, len(message.captured), *message.captured]
        return f"M{min(max(message.seconds, 0), 9999):04d}" + "".join(f"{number:02d}" for number in fields)
    if isinstance(message, GameEnd):
        return f"E{_field(message.reason, 1, 'GAMEEND reason', 3)}{_field(message.stop, 1, 'GAMEEND stop', 1)}"
    if isinstance(message, Chat):
        return "C" + chat_text(message.text)
    if isinstance(message, BackRequest):
        if not 1 <= message.number <= 999:
            raise DxpError(f"BACKREQ move number must be 1-999, got {message.number}")
        return f"B{message.number:03d}{'W' if message.white_to_move else 'Z'}"
    return f"K{_field(message.code, 1, 'BACKACC code', 2)}"


def _field(value: int, width: int, name: str, high: int | None = None) -> str:
    top = 10 ** width - 1 if high is None else high
    if not 0 <= value <= top:
        raise DxpError(f"{name} must be 0-{top}, got {value}")
    return f"{value:0{width}d}"


def chat_text(text: str) -> str:
    """``text`` made fit for a CHAT: printable ASCII, 1-126 characters (shortened with ``...``)."""
    clean = "".join(char if " " <= char <= "~" else "?" for char in text) or "?"
    limit = MAX_LENGTH - 1
    return clean if len(clean) <= limit else clean[:limit - 3] + "..."


def encode(message: Message) -> bytes:
    """``message`` as sent: its ASCII text and the terminating NUL."""
    return format_message(message).encode("ascii") + b"\0"


# -- framing --------------------------------------------------------------------------


class MessageReader:
    """Cuts a byte stream into NUL-terminated frames, whatever the reads look like.

    :meth:`feed` takes any chunk (several messages, a piece of one) and returns
    the frames completed by it, without their NUL. A message longer than
    :data:`MAX_LENGTH` bytes comes out cut to one byte more (so it is reported:
    :func:`decode_frame` rejects it) as soon as it is that long, and the rest of
    it, up to its NUL, is dropped: one bad message never swallows the ones after it.
    """

    def __init__(self) -> None:
        self._pending = bytearray()
        self._skipping = False

    def feed(self, data: bytes) -> list[bytes]:
        frames: list[bytes] = []
        parts = data.split(b"\0")  # the last part is the start of a message still to come
        for index, part in enumerate(parts):
            complete = index < len(parts) - 1
            if self._skipping:
                if complete:
                    self._skipping = False
                continue
            self._pending += part
            if complete or len(self._pending) > MAX_LENGTH:
                frames.append(bytes(self._pending[:MAX_LENGTH + 1]))  # enough to be seen as too long
                self._pending.clear()
                self._skipping = not complete
        return frames

    @property
    def pending(self) -> bytes:
        """Bytes of a message not yet complete."""
        return bytes(self._pending)


def decode_frame(frame: bytes) -> str:
    """A frame's text; :class:`DxpError` when it is empty, too long or not ASCII 1-127."""
    if not frame:
        raise DxpError("empty message (two NULs in a row)")
    if len(frame) > MAX_LENGTH:
        raise DxpError(f"message longer than {MAX_LENGTH} characters without its NUL")
    if any(byte > 127 for byte in frame):
        raise DxpError("message with bytes outside ASCII 1-127")
    return frame.decode("ascii")


def printable(frame: bytes) -> str:
    """A frame as text for logs and explanations: control and non-ASCII bytes as ``\\xNN``."""
    return "".join(chr(byte) if 32 <= byte <= 126 else f"\\x{byte:02x}" for byte in frame)


# -- positions and moves --------------------------------------------------------------


def position_from_dxp(side: str, squares: str) -> Position:
    """A GAMEREQ form-B position: ``W``/``Z`` to move, then squares 1-32 (``e``, ``w``/``z`` men, ``W``/``Z`` kings)."""
    white = _colour(side, "GAMEREQ colour to move")
    if len(squares) != _SQUARES:
        raise DxpError(f"position must give {_SQUARES} squares, got {len(squares)}")
    bad = next((char for char in squares if char not in "ewzWZ"), None)
    if bad is not None:
        raise DxpError(f"position square character must be e, w, z, W or Z, got {bad!r}")
    hub = ("W" if white else "B") + squares.replace("z", "b").replace("Z", "B")
    try:
        return Position.from_hub(hub)
    except PositionError as error:
        raise DxpError(f"bad position: {error}") from None


def position_to_dxp(position: Position) -> tuple[str, str]:
    """(colour to move, 32 square characters) of ``position`` for a GAMEREQ form B."""
    hub = position.hub()
    return ("W" if position.white_to_move else "Z"), hub[1:].replace("b", "z").replace("B", "Z")


def find_move(legal: list[Move], message: MoveMessage) -> Move:
    """The legal move ``message`` names: same start, end and set of captured squares.

    A capture sent without its captured squares is taken when only one legal
    move has that start and end. Raises :class:`DxpError` otherwise.
    """
    same_ends = [move for move in legal if move.start == message.start and move.end == message.end]
    if message.captured or not any(move.captured for move in same_ends):
        wanted = frozenset(message.captured)
        for move in same_ends:
            if frozenset(move.captured) == wanted:
                return move
    elif len(same_ends) == 1:
        return same_ends[0]
    else:
        options = ", ".join(move.hub() for move in same_ends)
        raise DxpError(f"capture {message.start}x{message.end} is ambiguous without its captured squares "
                       f"({options})")
    text = f"{message.start}{'x' if message.captured else '-'}{message.end}"
    if message.captured:
        text += " capturing " + ",".join(str(square) for square in sorted(message.captured))
    ordered = sorted(legal, key=lambda move: (move.start, move.end, sorted(move.captured)))
    legal_text = " ".join(move.hub() for move in ordered) or "none"
    raise DxpError(f"illegal move {text} (legal: {legal_text})")


def move_message(move: Move, seconds: float) -> MoveMessage:
    """The MOVE for ``move`` (captured squares ascending), ``seconds`` rounded into 0-9999."""
    return MoveMessage(min(max(int(round(seconds)), 0), 9999), move.start, move.end, tuple(sorted(move.captured)))


def think_limits(clock: float | None, margin: float, moves_left: int | None, move_time: float) -> Limits:
    """Limits for one move: on our ``clock`` (seconds left, less ``margin`` kept in reserve)
    with ``moves_left`` to play in it, or ``move_time`` a move when the game has no clock."""
    if clock is None:
        return Limits(move_time=move_time)
    return Limits(clock=max(0.0, clock - margin), moves_to_go=moves_left if moves_left and moves_left > 0 else None)


def backreq_ply(start_white: bool, request: BackRequest) -> int:
    """Number of plies played before move ``request.number`` with its side to move (0: the start)."""
    return 2 * (request.number - 1) + (0 if request.white_to_move else 1) - (0 if start_white else 1)


# -- the Follower ---------------------------------------------------------------------


def _excerpt(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _end_reason(outcome: Outcome, engine_white: bool) -> int:
    """GAMEEND reason from our side: 1 we lose, 2 draw, 3 we win."""
    if outcome.winner is None:
        return 2
    return 3 if outcome.winner == engine_white else 1


@dataclass
class _Game:
    number: int
    board: Board
    engine_white: bool
    opponent: str
    minutes: int
    moves_per_game: int
    clock: float | None            # seconds left on our clock; None: no clock given
    turn_started: float = 0.0      # when our turn began (monotonic)
    used: float = 0.0

    def engine_to_move(self) -> bool:
        return self.board.position.white_to_move == self.engine_white

    def moves_left(self) -> int | None:
        """Moves still to play within the GAMEREQ's move count (``None``: no count)."""
        if not self.moves_per_game:
            return None
        played = sum(1 for position in self.board.positions[:-1] if position.white_to_move == self.engine_white)
        return self.moves_per_game - played


class _Job:
    """One search: its board, legal moves, deadline and the last main line it reported."""

    def __init__(self, board: Board, deadline: float | None) -> None:
        self.board = board
        self.legal = board.legal_moves()
        self.deadline = deadline
        self.stopped_at: float | None = None
        self.best_pv: list[Move] = []
        self.answered = False

    def note(self, info: Info) -> None:
        if info.multipv == 1 and info.pv:
            self.best_pv = list(info.pv)


class DxpFollower:
    """Plays DXP games as the Follower on one connection at a time (:meth:`serve_connection`).

    ``log`` gets both directions with timestamps (``>`` received, ``<`` sent,
    ``#`` events); ``status`` one line per finished game. ``time_margin``
    seconds of the clock are kept in reserve; a GAMEREQ with 0 minutes is played
    at ``move_time`` seconds a move.
    """

    def __init__(self, *, hash_mb: int = 64, log: TextIO | None = None, status: TextIO | None = None,
                 time_margin: float = 1.0, move_time: float = 1.0, message_gap: float = MESSAGE_GAP,
                 searcher_factory: Callable[[int], Searcher] = Searcher) -> None:
        self.hash_mb = hash_mb
        self.time_margin = time_margin
        self.move_time = move_time
        self.message_gap = message_gap
        self._log_stream = log
        self._status = status
        self._searcher_factory = searcher_factory
        self._searcher = searcher_factory(hash_mb)
        self._search_thread: threading.Thread | None = None
        self._finished: queue.SimpleQueue[tuple[_Job, Result | None, Exception | None]] = queue.SimpleQueue()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._games_played = 0
        self._connections = 0
        self._reset(None)

    def _reset(self, conn: socket.socket | None) -> None:
        self._conn = conn
        self._reader = MessageReader()
        self._game: _Game | None = None
        self._job: _Job | None = None
        self._awaiting_end = False       # we sent the first GAMEEND; the next one received confirms it
        self._last_send: float | None = None  # our last message, if nothing was received since
        self._closed = False

    def close(self) -> None:
        """Stop any search and release the wake-up sockets."""
        self._abandon_search()
        self._wake_read.close()
        self._wake_write.close()

    # -- the connection loop --------------------------------------------------------

    def serve_connection(self, conn: socket.socket, peer: str = "?") -> None:
        """Play on ``conn`` until the other side closes it (``conn`` is closed on return)."""
        self._connections += 1
        self._reset(conn)
        self._event(f"connection {self._connections} from {peer}")
        why = "connection closed"
        try:
            while not self._closed:
                readable, _, _ = select.select([conn, self._wake_read], [], [], self._poll_timeout())
                if self._wake_read in readable:
                    self._drain_wake()
                self._collect_searches()
                self._supervise()
                if conn in readable and not self._closed:
                    try:
                        data = conn.recv(4096)
                    except OSError as error:
                        self._event(f"receive failed: {error}")
                        break
                    if not data:
                        break
                    for frame in self._reader.feed(data):
                        self._handle_frame(frame)
        except KeyboardInterrupt:
            why = "interrupted"
            raise
        except Exception as error:  # an engine bug ends this connection, not the server
            why = f"internal error: {type(error).__name__}: {error}"
            self._event(why)
        finally:
            self._abandon_search()
            if self._game is not None:
                self._finish_game(f"unfinished: {why}")
            if self._reader.pending:
                self._event(f"connection closed in the middle of a message: {printable(self._reader.pending)}")
            self._event(f"connection {self._connections} closed")
            conn.close()
            self._reset(None)

    def _poll_timeout(self) -> float | None:
        job = self._job
        if job is None or job.deadline is None:
            return None
        now = time.monotonic()
        target = job.deadline if job.stopped_at is None else job.stopped_at + STOP_GRACE
        return max(0.0, target - now)

    def _drain_wake(self) -> None:
        try:
            while self._wake_read.recv(256):
                pass
        except BlockingIOError:
            pass

    # -- received messages ----------------------------------------------------------

    def _handle_frame(self, frame: bytes) -> None:
        self._log(">", printable(frame))
        self._last_send = None
        try:
            message = parse_message(decode_frame(frame))
        except UnsupportedVersion as error:
            self._refuse(1, str(error))
            return
        except DxpError as error:
            self._bad_message(frame, error)
            return
        try:
            self._dispatch(message)
        except Exception as error:  # an engine bug must not end the session
            self._event(f"internal error on {printable(frame)}: {type(error).__name__}: {error}")
            self._send(Chat(f"Pedina internal error: {type(error).__name__}: {error}"))

    def _dispatch(self, message: Message) -> None:
        if isinstance(message, GameRequest):
            self._on_gamereq(message)
        elif isinstance(message, MoveMessage):
            self._on_move(message)
        elif isinstance(message, GameEnd):
            self._on_gameend(message)
        elif isinstance(message, BackRequest):
            self._on_backreq(message)
        elif isinstance(message, Chat):
            self._event(f"chat: {message.text}")
        else:
            self._event(f"ignored: {type(message).__name__} is only sent by a Follower or to an Initiator")

    def _bad_message(self, frame: bytes, error: DxpError) -> None:
        """Explain in a CHAT; a bad GAMEREQ is refused, a bad MOVE in a game ends the game."""
        text = printable(frame)
        self._event(f"bad message {text!r}: {error}")
        if frame[:1] == b"R":
            self._refuse(2, f"cannot read GAMEREQ: {error}")
        elif frame[:1] == b"M" and self._their_turn():
            self._send(Chat(f"cannot read MOVE: {error} ({_excerpt(text)})"))
            self._end_game(0, f"unreadable move from the opponent: {error}")
        else:
            self._send(Chat(f"cannot read message: {error} ({_excerpt(text)})"))

    def _their_turn(self) -> bool:
        return self._game is not None and self._job is None and not self._game.engine_to_move()

    def _refuse(self, code: int, why: str) -> None:
        self._event(f"GAMEREQ refused (code {code}): {why}")
        self._send(Chat(why))
        self._send(GameAccept(ENGINE_NAME, code))

    def _on_gamereq(self, request: GameRequest) -> None:
        self._awaiting_end = False
        if self._game is not None:
            self._abandon_search()
            self._finish_game("unfinished: a new GAMEREQ replaced it")
        board = Board(request.position or Position.start())
        if not board.legal_moves():
            self._refuse(2, "the side to move has no legal moves in the GAMEREQ position")
            return
        self._games_played += 1
        clock = request.minutes * 60.0 if request.minutes else None
        self._game = game = _Game(self._games_played, board, request.follower_white, request.initiator or "?",
                                  request.minutes, request.moves, clock)
        self._searcher_idle().new_game()
        self._event(f"game {game.number}: Pedina plays {'White' if game.engine_white else 'Black'} against "
                    f"{game.opponent}, {f'{request.minutes} min' if clock else f'{self.move_time:g} s a move'}"
                    f"{f' for {request.moves} moves' if request.moves else ''}, from {board.position.fen()}")
        self._send(GameAccept(ENGINE_NAME, 0))
        if game.engine_to_move():
            self._our_turn()

    def _on_move(self, message: MoveMessage) -> None:
        game = self._game
        if game is None:
            self._send(Chat("MOVE without a game: send a GAMEREQ first"))
            return
        if not self._their_turn():
            self._event("MOVE out of turn ignored")
            self._send(Chat("MOVE out of turn (it is Pedina's move): ignored"))
            return
        outcome = game.board.outcome()
        if outcome is not None:  # ended by our last move; they played on
            self._send(Chat(f"the game was already over: {outcome.result()} by {outcome.termination}"))
            self._end_game(_end_reason(outcome, game.engine_white), f"{outcome.termination}, opponent played on")
            return
        try:
            move = find_move(game.board.legal_moves(), message)
        except DxpError as error:
            self._event(f"illegal move from the opponent in {game.board.position.fen()}: {error}")
            self._send(Chat(f"{error} in {game.board.position.fen()}"))
            self._end_game(0, f"illegal move from the opponent: {error}")
            return
        game.board.push(move)
        self._our_turn()

    def _on_gameend(self, message: GameEnd) -> None:
        if self._awaiting_end:
            self._awaiting_end = False
            self._event("GAMEEND confirmed")
            return
        if self._game is None:
            self._event("GAMEEND with no game in play: ignored")
            return
        self._abandon_search()
        self._send(GameEnd(0, 0))
        if self._game.board.outcome() is not None:
            self._finish_game("GAMEEND from the opponent")
        else:
            reasons = {0: "no reason given", 1: "it resigns", 2: "it claims a draw", 3: "it claims a win"}
            self._finish_game(f"ended by the opponent ({reasons[message.reason]})")

    def _on_backreq(self, request: BackRequest) -> None:
        game = self._game
        if game is None:
            self._send(Chat("BACKREQ without a game"))
            self._send(BackAccept(2))
            return
        ply = backreq_ply(game.board.start.white_to_move, request)
        if not 0 <= ply <= len(game.board.moves):
            side = "White" if request.white_to_move else "Black"
            self._send(Chat(f"cannot take back to move {request.number} with {side} to move: "
                            f"the game has {len(game.board.moves)} plies"))
            self._send(BackAccept(2))
            return
        self._abandon_search()
        while len(game.board.moves) > ply:
            game.board.pop()
        self._event(f"took back to ply {ply}: {game.board.position.fen()}")
        self._send(BackAccept(0))
        if game.engine_to_move():
            self._our_turn()

    # -- our moves ------------------------------------------------------------------

    def _our_turn(self) -> None:
        """Our move: end the game if our rules say it is over, else start thinking."""
        game = self._game
        assert game is not None
        game.turn_started = time.monotonic()
        outcome = game.board.outcome()
        if outcome is not None:
            self._end_game(_end_reason(outcome, game.engine_white), str(outcome.termination))
            return
        limits = think_limits(game.clock, self.time_margin, game.moves_left(), self.move_time)
        budget = time_budget(limits)
        job = _Job(game.board.copy(), None if budget is None else game.turn_started + budget.hard)
        searcher = self._searcher_idle()
        self._job = job

        def done(result: Result | None, error: Exception | None) -> None:
            self._finished.put((job, result, error))
            try:
                self._wake_write.send(b"!")
            except OSError:
                pass

        self._search_thread = searcher.start(job.board, limits, job.note, done)

    def _searcher_idle(self) -> Searcher:
        """The searcher, once its last search has returned (a stuck one is replaced)."""
        thread = self._search_thread
        if thread is not None:
            thread.join(timeout=5.0)
            if thread.is_alive():
                self._event("a stopped search did not return within 5 s: using a new searcher")
                self._searcher = self._searcher_factory(self.hash_mb)
            self._search_thread = None
        return self._searcher

    def _collect_searches(self) -> None:
        while True:
            try:
                job, result, error = self._finished.get_nowait()
            except queue.Empty:
                return
            if error is not None:
                self._event(f"internal error in search: {type(error).__name__}: {error}")
            self._answer(job, result.best if result is not None else None)

    def _supervise(self) -> None:
        """Past the hard deadline: stop the search, then answer from its last main line."""
        job = self._job
        if job is None or job.deadline is None:
            return
        now = time.monotonic()
        if job.stopped_at is None and now >= job.deadline:
            self._searcher.stop()
            job.stopped_at = now
        elif job.stopped_at is not None and now >= job.stopped_at + STOP_GRACE:
            self._event("search late after its deadline: answering from its last main line")
            self._answer(job, job.best_pv[0] if job.best_pv else None)

    def _answer(self, job: _Job, best: Move | None) -> None:
        """Play the job's move (a legal one whatever the search said) and send it."""
        game = self._game
        if job is not self._job or job.answered or game is None:
            return  # abandoned, or already answered at the deadline
        job.answered = True
        self._job = None
        if best not in job.legal:
            if best is not None:
                self._event(f"search returned an illegal move {best}; playing {job.legal[0]}")
            best = job.legal[0]
        assert best is not None
        self._wait_gap()
        used = time.monotonic() - game.turn_started
        game.board.push(best)
        self._send(move_message(best, used))
        game.used += used
        if game.clock is not None:
            game.clock -= used
            self._event(f"clock: {used:.3f} s used, {game.clock:.3f} s left")
        outcome = game.board.outcome()
        if outcome is not None:
            self._event(f"game over by our rules ({outcome.result()}, {outcome.termination}): "
                        "waiting for the opponent's GAMEEND")

    def _abandon_search(self) -> None:
        if self._job is not None:
            self._job.answered = True
            self._job = None
            self._searcher.stop()

    # -- game end -------------------------------------------------------------------

    def _end_game(self, reason: int, why: str) -> None:
        """Send the first GAMEEND (it is our turn) and close the game."""
        self._abandon_search()
        self._send(GameEnd(reason, 0))
        self._awaiting_end = True
        self._finish_game(why)

    def _finish_game(self, why: str) -> None:
        game = self._game
        if game is None:
            return
        self._game = None
        outcome = game.board.outcome()
        result = f"{outcome.result()} ({outcome.termination})" if outcome else "*"
        names = ("Pedina", game.opponent) if game.engine_white else (game.opponent, "Pedina")
        clock = f"{game.used:.1f} s of {game.minutes * 60} s" if game.clock is not None else f"{game.used:.1f} s"
        line = (f"game {game.number}: {names[0]} - {names[1]}  {result}, {len(game.board.moves)} plies, "
                f"Pedina used {clock}; {why}")
        self._event(line)
        if self._status is not None:
            try:
                self._status.write(line + "\n")
                self._status.flush()
            except (OSError, ValueError):
                self._status = None

    # -- output ---------------------------------------------------------------------

    def _wait_gap(self) -> None:
        if self._last_send is not None:
            remaining = self._last_send + self.message_gap - time.monotonic()
            if remaining > 0:
                time.sleep(remaining)

    def _send(self, message: Message) -> None:
        if self._conn is None or self._closed:
            return
        data = encode(message)
        self._wait_gap()
        self._log("<", data[:-1].decode("ascii"))
        try:
            self._conn.sendall(data)
        except OSError as error:
            self._event(f"send failed: {error}")
            self._closed = True
        self._last_send = time.monotonic()

    def _event(self, text: str) -> None:
        self._log("#", text)

    def _log(self, direction: str, text: str) -> None:
        if self._log_stream is None:
            return
        now = time.time()
        stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
        try:
            self._log_stream.write(f"{stamp} {direction} {text}\n")
            self._log_stream.flush()
        except (OSError, ValueError):
            self._log_stream = None


# -- the server -----------------------------------------------------------------------


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket; :class:`OSError` (address in use, unknown host...) as the OS says."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=4)


def serve(listener: socket.socket, follower: DxpFollower) -> None:
    """Serve connections one after the other until interrupted (Ctrl-C or SIGTERM)."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_term) if in_main else None
    try:
        while True:
            conn, address = listener.accept()
            follower.serve_connection(conn, f"{address[0]}:{address[1]}")
    except KeyboardInterrupt:
        pass
    finally:
        follower.close()
        listener.close()
        if in_main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="TCP port (0: a free one, shown at start).")
@click.option("--hash", "hash_mb", type=click.IntRange(1, 4096), default=64, show_default=True,
              help="Hash table size in MB.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, writable=True),
              help="Append every message both ways, with timestamps, to this file.")
@click.option("--time-margin", type=click.FloatRange(0.0, 60.0), default=1.0, show_default=True,
              help="Seconds of the clock kept in reserve (for network delays).")
@click.option("--move-time", type=click.FloatRange(0.01, 3600.0), default=1.0, show_default=True,
              help="Seconds a move when the GAMEREQ gives 0 minutes (no clock).")
def dxp(host: str, port: int, hash_mb: int, log_path: str | None, time_margin: float, move_time: float) -> None:
    """Play DamExchange (DXP) games over TCP as a listening Follower.

    An Initiator (a GUI, an arbiter, pydraughts' DXPEngine) connects and sends
    GAMEREQ; Pedina plays the colour asked, on its own clock of the GAMEREQ's
    minutes. Connections are served one after the other until Ctrl-C.
    """
    try:
        listener = listen(host, port)
    except OSError as error:
        # create_server adds "(while attempting to bind ...)" to the OS's words: keep those only
        reason = (error.strerror or str(error)).split(" (while attempting")[0]
        raise click.ClickException(f"cannot listen on {host}:{port}: {reason}") from None
    log = open(log_path, "a", encoding="utf-8") if log_path else None
    try:
        follower = DxpFollower(hash_mb=hash_mb, log=log, status=sys.stdout, time_margin=time_margin,
                               move_time=move_time)
        bound = listener.getsockname()
        click.echo(f"pedina dxp: listening on {bound[0]}:{bound[1]} (Ctrl-C to stop)")
        sys.stdout.flush()
        serve(listener, follower)
    finally:
        if log is not None:
            log.close()
