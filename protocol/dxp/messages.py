"""DXP messages as values, their text, the NUL framing, and the mapping to our moves.

Pure functions only, no sockets or threads: the seven messages
(:class:`GameRequest`, :class:`GameAccept`, :class:`MoveMessage`,
:class:`GameEnd`, :class:`Chat`, :class:`BackRequest`, :class:`BackAccept`),
:func:`parse_message` and :func:`format_message`; :class:`MessageReader` and
:func:`decode_frame`, which cut a byte stream into messages; and the mapping to
Pedina's positions and moves (:func:`position_from_dxp`, :func:`position_to_dxp`,
:func:`find_move`, :func:`move_message`, :func:`backreq_ply`). Squares are
numbered 1-32 as in FID notation (pydraughts' 8x8 extension of the protocol).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from pedina.move import Move
from pedina.position import Position, PositionError

#: The only protocol version there is.
VERSION = "01"
#: Longest message (without its NUL).
MAX_LENGTH = 127
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


def _digits(text: str, field: str, low: int, high: int) -> int:
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
        return GameAccept(text[1:33].rstrip(), _digits(text[33], "GAMEACC code", 0, 3))
    if kind == "M":
        return _parse_move(text)
    if kind == "E":
        _expect_length(text, name, 3)
        return GameEnd(_digits(text[1], "GAMEEND reason", 0, 3), _digits(text[2], "GAMEEND stop code", 0, 1))
    if kind == "C":
        if len(text) < 2:
            raise DxpError("CHAT without text")
        return Chat(text[1:])
    if kind == "B":
        _expect_length(text, name, 5)
        return BackRequest(_digits(text[1:4], "BACKREQ move number", 1, 999), _colour(text[4], "BACKREQ colour"))
    _expect_length(text, name, 2)
    return BackAccept(_digits(text[1], "BACKACC code", 0, 2))


def _parse_gamereq(text: str) -> GameRequest:
    if len(text) < 3:
        raise DxpError(f"GAMEREQ of {len(text)} characters is too short")
    if text[1:3] != VERSION:
        raise UnsupportedVersion(f"GAMEREQ for protocol version {text[1:3]!r}; only {VERSION} is known")
    if len(text) < 43:
        raise DxpError(f"GAMEREQ must have 43 characters (form A) or 76 (form B), got {len(text)}")
    initiator = text[3:35].rstrip()
    follower_white = _colour(text[35], "GAMEREQ Follower colour")
    minutes = _digits(text[36:39], "GAMEREQ minutes", 0, 999)
    moves = _digits(text[39:42], "GAMEREQ moves", 0, 999)
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
    seconds = _digits(text[1:5], "MOVE time", 0, 9999)
    start = _digits(text[5:7], "MOVE from square", 1, _SQUARES)
    end = _digits(text[7:9], "MOVE to square", 1, _SQUARES)
    count = _digits(text[9:11], "MOVE capture count", 0, 20)
    if len(text) != 11 + 2 * count:
        raise DxpError(f"MOVE with {count} captured pieces must have {11 + 2 * count} characters, got {len(text)}")
    captured = tuple(_digits(text[i:i + 2], "MOVE captured square", 1, _SQUARES) for i in range(11, len(text), 2))
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


def backreq_ply(start_white: bool, request: BackRequest) -> int:
    """Number of plies played before move ``request.number`` with its side to move (0: the start)."""
    return 2 * (request.number - 1) + (0 if request.white_to_move else 1) - (0 if start_white else 1)


__all__ = [
    "BackAccept", "BackRequest", "Chat", "DxpError", "GameAccept", "GameEnd", "GameRequest", "MAX_LENGTH",
    "Message", "MessageReader", "MoveMessage", "UnsupportedVersion", "VERSION", "backreq_ply", "chat_text",
    "decode_frame", "encode", "find_move", "format_message", "move_message", "parse_message", "position_from_dxp",
    "position_to_dxp", "printable",
]
