"""The DamExchange (DXP) Follower: messages, framing and move mapping as pure functions,
then ``pedina dxp`` as a real process driven over TCP by pydraughts' ``DXPEngine`` and
by a raw socket.

pydraughts 0.6.7's DXP client has bugs these tests work around, each noted where it
matters: its socket reader never notices a closed connection (it compares the bytes
``recv`` returns with ``""``, so it spins forever on EOF), its ``disconnect`` sleeps
7 s, ``play`` waits for a MOVE forever when the engine answers with GAMEEND, and its
takeback logic takes the side to move at the start for the engine's colour.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import draughts
import pytest
from draughts.engine import DXPEngine

from pedina.settings import EngineSettings
from pedina import Board, Position
from pedina.move import Move
from pedina.pdn import read_games
from pedina.search import Info, Result, Searcher
from pedina.session import JOIN_TIMEOUT
from pedina.timeman import GRACE, Limits, time_budget
from pedina.protocol.dxp.follower import DxpFollower, think_limits
from pedina.protocol.dxp.initiator import hang_up
from pedina.protocol.dxp.messages import (BackAccept, BackRequest, Chat, DxpError, GameAccept, GameEnd, GameRequest,
                                          Message, MessageReader, MoveMessage, UnsupportedVersion, backreq_ply,
                                          decode_frame, encode, find_move, format_message, move_message, parse_message,
                                          position_from_dxp, position_to_dxp)
from stub_searchers import HeldSearcher
from timing import HANG, allowed, starved, wait_until

PEDINA = shutil.which("pedina")
CI = os.environ.get("PEDINA_CI") == "1"
START_DXP = "zzzzzzzzzzzzeeeeeeeewwwwwwwwwwww"
SAMPLE_GAMEREQ = "R01DXP Client                      Z002010BW" + START_DXP
LOG_LINE = re.compile(r"(\d\d):(\d\d):(\d\d\.\d{3}) ([<>#]) (.*)")
# How long a read waits for anything the engine should answer before calling it a hang (seconds).
ANSWER = HANG

if PEDINA is None:  # the integration tests run the installed console script, as a user would
    raise RuntimeError("the pedina console script is not on PATH: install the project first")


# -- messages -------------------------------------------------------------------------


@pytest.mark.parametrize("message, text", [
    (GameRequest("DXP Client", False, 2, 10, Position.start()), SAMPLE_GAMEREQ),
    (GameRequest("Initiator", True, 90, 0), "R01Initiator                       W090000A"),
    (GameAccept("Pedina", 0), "APedina                          0"),
    (GameAccept("Pedina", 2), "APedina                          2"),
    (MoveMessage(0, 21, 18), "M0000211800"),
    (MoveMessage(1, 7, 14, (11,)), "M000107140111"),
    (MoveMessage(12, 27, 9, (23, 5, 6, 15)), "M0012270904230506" + "15"),
    (GameEnd(1, 0), "E10"),
    (GameEnd(0, 1), "E01"),
    (Chat("good game"), "Cgood game"),
    (BackRequest(5, False), "B005Z"),
    (BackAccept(1), "K1"),
])
def test_format_and_parse_round_trip(message: Message, text: str) -> None:
    assert format_message(message) == text
    assert parse_message(text) == message


def test_sample_exchange_of_the_protocol_notes() -> None:
    request = parse_message(SAMPLE_GAMEREQ)
    assert request == GameRequest("DXP Client", False, 2, 10, Position.start())
    assert parse_message("M000018110114") == MoveMessage(0, 18, 11, (14,))
    # A Follower name is padded to 32 characters and never longer.
    assert format_message(GameAccept("x" * 40, 0)) == "A" + "x" * 32 + "0"


@pytest.mark.parametrize("text, error", [
    ("", "empty message"),
    ("X123", "unknown message type 'X'"),
    ("C" + "x" * 127, "more than 127"),
    ("C\x80", "outside ASCII"),
    ("C", "CHAT without text"),
    ("M00002118", "at least 11 characters"),
    ("M0000211801", "must have 13 characters"),
    ("M00002118001", "must have 11 characters, got 12"),
    ("M000021330", "at least 11"),
    ("M0000213300", "MOVE to square must be 01-32"),
    ("M0000001800", "MOVE from square must be 01-32"),
    ("M00a0211800", "MOVE time must be digits"),
    ("M00002215211919", "MOVE capture count must be 00-20"),
    ("M000022150133", "MOVE captured square must be 01-32, got '33'"),
    ("M00002215021919", "captured square twice"),
    ("E4", "must have 3 characters"),
    ("E40", "GAMEEND reason must be 0-3"),
    ("E02", "GAMEEND stop code must be 0-1"),
    ("B05W", "must have 5 characters"),
    ("B000W", "move number must be 001-999"),
    ("B005X", "BACKREQ colour must be W or Z"),
    ("K3", "BACKACC code must be 0-2"),
    ("A" + "x" * 32, "GAMEACC must have 34 characters"),
    (SAMPLE_GAMEREQ[:35] + "X" + SAMPLE_GAMEREQ[36:], "Follower colour must be W or Z"),
    (SAMPLE_GAMEREQ[:36] + "0x2" + SAMPLE_GAMEREQ[39:], "minutes must be digits"),
    (SAMPLE_GAMEREQ[:42] + "C", "position indicator must be A or B"),
    (SAMPLE_GAMEREQ[:43], "GAMEREQ form B must have 76 characters, got 43"),
    (SAMPLE_GAMEREQ[:44] + "z" * 20 + "e" * 10 + "w" * 20, "10x10 position"),
    (SAMPLE_GAMEREQ[:44] + "y" + START_DXP[1:], "must be e, w, z, W or Z, got 'y'"),
    (SAMPLE_GAMEREQ[:44] + "w" + START_DXP[1:-1] + "e", "white man on square 1"),
    (SAMPLE_GAMEREQ[:44] + "z" * 13 + START_DXP[13:], "Black has 13 pieces"),
    (SAMPLE_GAMEREQ[:43] + "X" + START_DXP, "GAMEREQ colour to move must be W or Z"),
])
def test_parse_errors_say_what_is_wrong(text: str, error: str) -> None:
    with pytest.raises(DxpError, match=re.escape(error)):
        parse_message(text)


def test_form_a_gamereq_with_a_position_is_an_error() -> None:
    with pytest.raises(DxpError, match="GAMEREQ form A must have 43 characters, got 44"):
        parse_message(SAMPLE_GAMEREQ[:42] + "AW")


def test_unsupported_version_is_its_own_error() -> None:
    with pytest.raises(UnsupportedVersion, match="version '02'"):
        parse_message("R02" + SAMPLE_GAMEREQ[3:])
    with pytest.raises(DxpError, match="too short") as raised:
        parse_message("R1")  # not even a version: a malformed GAMEREQ
    assert not isinstance(raised.value, UnsupportedVersion)


def test_format_rejects_fields_out_of_range() -> None:
    for message in (GameAccept("P", 4), GameEnd(4, 0), BackAccept(3), BackRequest(1000, True),
                    MoveMessage(0, 33, 1), GameRequest("I", True, 1000, 0)):
        with pytest.raises(DxpError):
            format_message(message)
    assert format_message(MoveMessage(12345, 1, 5)) == "M9999010500"  # seconds are clamped
    assert format_message(Chat("\x00é" + "y" * 200)) == "C??" + "y" * 121 + "..."


# -- framing --------------------------------------------------------------------------


def test_reader_splits_fused_messages_and_joins_split_ones() -> None:
    reader = MessageReader()
    assert reader.feed(b"APedina" + b" " * 26 + b"0\0M0001101300\0M00") == [
        b"APedina" + b" " * 26 + b"0", b"M0001101300"]
    assert reader.pending == b"M00"
    assert reader.feed(b"0021") == []
    assert reader.feed(b"13") == []
    assert reader.feed(b"00\0E") == [b"M0000211300"]
    assert reader.feed(b"0") == []
    assert reader.feed(b"0\0") == [b"E00"]
    assert reader.pending == b""
    # One byte at a time makes no difference.
    reader = MessageReader()
    frames = [frame for byte in b"E10\0K1\0" for frame in reader.feed(bytes([byte]))]
    assert frames == [b"E10", b"K1"]


def test_reader_reports_an_overlong_message_once_and_resynchronises() -> None:
    reader = MessageReader()
    frames = reader.feed(b"C" + b"x" * 150)
    assert frames == [b"C" + b"x" * 127]         # cut to 128 bytes: enough to be too long
    assert reader.feed(b"y" * 300) == []          # the rest of the bad message is dropped
    assert reader.feed(b"zz\0E00\0") == [b"E00"]  # and the next message comes through
    with pytest.raises(DxpError, match="longer than 127"):
        decode_frame(frames[0])
    # An overlong message whose NUL comes in the same read is cut the same way.
    assert MessageReader().feed(b"M" * 1000 + b"\0K1\0") == [b"M" * 128, b"K1"]


def test_decode_frame_errors() -> None:
    with pytest.raises(DxpError, match="empty message"):
        decode_frame(b"")
    with pytest.raises(DxpError, match="outside ASCII"):
        decode_frame(b"C\xff")
    assert decode_frame(b"E00") == "E00"


# -- positions and moves --------------------------------------------------------------


def test_positions_convert_both_ways() -> None:
    assert position_from_dxp("W", START_DXP) == Position.start()
    position = Position.from_fen("B:WK27,18:B10,17,K30")
    side, squares = position_to_dxp(position)
    assert side == "Z" and squares.count("W") == 1 and squares.count("Z") == 1 and squares[26] == "W"
    assert position_from_dxp(side, squares) == position
    with pytest.raises(DxpError, match="32 squares, got 31"):
        position_from_dxp("W", START_DXP[1:])


def test_find_move_by_start_end_and_captured_set() -> None:
    board = Board()
    assert find_move(board.legal_moves(), MoveMessage(0, 22, 18)).hub() == "22-18"
    with pytest.raises(DxpError, match=r"illegal move 22-17 \(legal: 21-17 21-18"):
        find_move(board.legal_moves(), MoveMessage(0, 22, 17))
    board.push_text("21-18")
    board.push_text("11-14")
    capture = board.legal_moves()
    assert [move.hub() for move in capture] == ["18x11x14"]
    target = capture[0]
    assert find_move(capture, MoveMessage(0, target.start, target.end, tuple(reversed(target.captured)))) == target
    # A capture without its captured squares is taken when unambiguous ...
    assert find_move(capture, MoveMessage(0, target.start, target.end)) == target
    # ... and a wrong captured set is not.
    with pytest.raises(DxpError, match="illegal move"):
        find_move(capture, MoveMessage(0, target.start, target.end, (target.start,)))


def test_ambiguous_capture_needs_its_captured_squares() -> None:
    # A king with two captures from 27 to 9 over different pieces.
    legal = Board("B:WK5,K6,K12,K14,K15,K19,K22,K23:BK27").legal_moves()
    with pytest.raises(DxpError, match="ambiguous"):
        find_move(legal, MoveMessage(0, 27, 9))
    assert find_move(legal, MoveMessage(0, 27, 9, (22, 14, 6, 5))).hub() == "27x9x5x6x14x22"
    ring = find_move(legal, MoveMessage(0, 27, 27, (14, 15, 22, 23)))
    assert ring.start == ring.end == 27


def test_move_message_sorts_captures_and_rounds_time() -> None:
    move = Board("B:WK5,K6,K12,K14,K15,K19,K22,K23:BK27").parse_move("27x9x23x15x6x5")
    assert format_message(move_message(move, 1.6)) == "M0002270904" + "05061523"
    assert move_message(move, -3).seconds == 0


def test_think_limits_and_takeback_plies() -> None:
    assert think_limits(None, 1.0, None, 0.5) == Limits(move_time=0.5)
    assert think_limits(60.0, 1.0, None, 0.5) == Limits(clock=59.0)
    assert think_limits(60.0, 1.0, 12, 0.5) == Limits(clock=59.0, moves_to_go=12)
    assert think_limits(0.4, 1.0, 0, 0.5) == Limits(clock=0.0)   # moves count used up: spread the clock
    assert backreq_ply(True, BackRequest(1, True)) == 0
    assert backreq_ply(True, BackRequest(3, False)) == 5
    assert backreq_ply(False, BackRequest(1, False)) == 0       # a game where Black moves first
    assert backreq_ply(False, BackRequest(2, True)) == 1
    assert backreq_ply(False, BackRequest(1, True)) == -1       # before the start: refused


# -- the process ----------------------------------------------------------------------


@dataclass
class Server:
    """A running ``pedina dxp`` on a free port, with its log."""

    process: subprocess.Popen[str]
    port: int
    log: Path

    def log_lines(self) -> list[str]:
        return self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []

    def stop(self) -> tuple[int, str, str]:
        """Ctrl-C; (exit status, rest of stdout, stderr)."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=20)
        return self.process.returncode, out, err


def start_server(log: Path, *options: str) -> Server:
    # A shell running us in the background ignores SIGINT, and children inherit that;
    # a terminal's Ctrl-C reaches a process with the default handling, so restore it.
    process = subprocess.Popen([str(PEDINA), "dxp", "--port", "0", "--log", str(log), *options],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert process.stdout is not None
    line = process.stdout.readline()  # printed once the socket listens
    match = re.fullmatch(r"pedina dxp: listening on 127\.0\.0\.1:(\d+) \(Ctrl-C to stop\)\n", line)
    if not match:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"pedina dxp did not start: {line!r} {out!r} {err!r}")
    return Server(process, int(match.group(1)), log)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One engine for the module; 0-minute games are played at 0.02 s a move."""
    running = start_server(tmp_path_factory.mktemp("dxp") / "dxp.log", "--move-time", "0.02", "--hash", "16")
    yield running
    status, out, err = running.stop()
    games = sum(1 for line in running.log_lines() if re.search(r"# game \d+: .* - .* (1-0|0-1|1/2-1/2|\*)", line))
    assert status == 0 and err == "", (status, err)
    # stdout: nothing but one status line per game
    lines = out.splitlines()
    assert all(re.fullmatch(r"game \d+: .+ - .+ {2}(1-0|0-1|1/2-1/2|\*).*", line) for line in lines), lines
    assert len(lines) == games


def log_since(server: Server, mark: int) -> list[tuple[float, str, str]]:
    """(seconds of the day, direction, text) of the log lines after the first ``mark``."""
    entries = []
    for line in server.log_lines()[mark:]:
        match = LOG_LINE.fullmatch(line)
        assert match, f"unexpected log line {line!r}"
        hours, minutes, seconds, direction, text = match.groups()
        entries.append((int(hours) * 3600 + int(minutes) * 60 + float(seconds), direction, text))
    return entries


def assert_no_trouble(entries: list[tuple[float, str, str]]) -> None:
    events = [text for _, direction, text in entries if direction == "#"]
    trouble = [text for text in events
               if re.search(r"bad message|illegal|internal error|late|refused|failed|did not return", text)
               and not starved(text)]
    assert not trouble, trouble
    assert not [text for _, direction, text in entries if direction == "<" and text.startswith("C")]


def back_to_back_gaps(entries: list[tuple[float, str, str]]) -> list[float]:
    """Seconds between each two messages the engine sent with nothing received in between
    (from the log, where sends are stamped): pydraughts loses the second of two messages
    that reach it in one read, so each must be at least about 0.2 s."""
    gaps = []
    last_sent: float | None = None
    for at, direction, text in entries:
        if direction == ">":
            last_sent = None
        elif direction == "<":
            if last_sent is not None:
                gaps.append(at - last_sent)
            last_sent = at
    return gaps


# -- a raw client ---------------------------------------------------------------------


class RawClient:
    """A DXP Initiator on a plain socket: sends bytes, reads messages with their arrival times."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=ANSWER)
        self.reader = MessageReader()
        self.frames: deque[tuple[float, str]] = deque()

    def send(self, data: str | bytes) -> None:
        self.sock.sendall(data if isinstance(data, bytes) else data.encode("ascii") + b"\0")

    def receive(self, timeout: float = ANSWER) -> tuple[float, str]:
        deadline = time.monotonic() + timeout
        while not self.frames:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = self.sock.recv(4096)
            assert data, "the engine closed the connection"
            arrived = time.monotonic()
            self.frames.extend((arrived, decode_frame(frame)) for frame in self.reader.feed(data))
        return self.frames.popleft()

    def expect(self, kind: str, timeout: float = ANSWER) -> Message:
        _, text = self.receive(timeout)
        assert text[:1] == kind, f"expected a {kind} message, got {text!r}"
        return parse_message(text)

    def expect_chat(self, fragment: str) -> None:
        message = self.expect("C")
        assert isinstance(message, Chat) and fragment in message.text, message

    def silent(self, seconds: float) -> bool:
        try:
            self.receive(seconds)
        except socket.timeout:
            return True
        return False

    def close(self) -> None:
        self.sock.close()


def gamereq(follower_white: bool, minutes: int = 0, position: Position | None = None, moves: int = 0) -> str:
    return format_message(GameRequest("raw test", follower_white, minutes, moves, position))


def engine_move(client: RawClient, board: Board) -> Move:
    """Read the engine's MOVE, check it is legal on ``board`` and play it there."""
    message = client.expect("M")
    assert isinstance(message, MoveMessage)
    move = find_move(board.legal_moves(), message)  # raises unless legal
    assert message.captured == tuple(sorted(move.captured))  # every capture with its squares, ascending
    board.push(move)
    return move


def send_move(client: RawClient, board: Board, text: str) -> None:
    move = board.parse_move(text)
    client.send(format_message(move_message(move, 0)))
    board.push(move)


def test_garbage_illegal_and_split_messages_keep_the_engine_playing(server: Server) -> None:
    mark = len(server.log_lines())
    client = RawClient(server.port)
    try:
        for data, answer in ((b"\x01\x02\xff\0", "outside ASCII"), (b"X123\0", "unknown message type 'X'"),
                             (b"\0", "empty message"), (b"E0\0", "GAMEEND must have 3 characters")):
            client.send(data)
            client.expect_chat(answer)
        client.send("E00")                     # a GAMEEND with no game in play is not answered
        assert client.silent(0.3)

        client.send(gamereq(follower_white=False))
        assert client.expect("A") == GameAccept("Pedina", 0)
        board = Board()
        for piece in (b"M00", b"0021", b"1700\0"):  # one MOVE over three reads
            client.send(piece)
            # A pause, so that the pieces arrive in separate reads: it waits for nothing, and
            # a slow machine can only make the engine read them together, never fail the test.
            time.sleep(0.05)
        board.push_text("21-17")
        engine_move(client, board)
        client.send("M0000211700")             # 21 is empty now
        client.expect_chat("illegal move 21-17")
        assert client.expect("E") == GameEnd(0, 0)
        client.send("E00")                     # our confirmation ends that game
        assert client.silent(0.3)

        client.send(gamereq(follower_white=True, position=Position.start()))
        assert client.expect("A") == GameAccept("Pedina", 0)
        board = Board()
        engine_move(client, board)
        client.send(b"C" + b"x" * 200 + b"\0")
        client.expect_chat("longer than 127")
        client.send("M0000" + "x" * 6)         # a MOVE we cannot read ends the game
        client.expect_chat("MOVE from square must be digits")
        assert client.expect("E") == GameEnd(0, 0)
        client.send("E00")
        client.send(gamereq(follower_white=False))
        assert client.expect("A") == GameAccept("Pedina", 0)
        board = Board()
        send_move(client, board, "22-18")
        engine_move(client, board)
        client.send("Chello")                  # a chat is only logged
        client.send("E01")                     # we end it: the engine confirms
        assert client.expect("E") == GameEnd(0, 0)
    finally:
        client.close()
    gaps = back_to_back_gaps(log_since(server, mark))
    assert len(gaps) == 3 and min(gaps) >= 0.19  # CHAT then GAMEEND twice, GAMEACC then MOVE
    # The engine keeps listening after the connection closes.
    again = RawClient(server.port)
    try:
        again.send(gamereq(follower_white=False))
        assert again.expect("A") == GameAccept("Pedina", 0)
    finally:
        again.close()


def test_gamereqs_that_are_refused(server: Server) -> None:
    client = RawClient(server.port)
    try:
        client.send("R02" + gamereq(True)[3:])
        client.expect_chat("version '02'")
        assert client.expect("A") == GameAccept("Pedina", 1)
        client.send(SAMPLE_GAMEREQ[:44] + "z" * 20 + "e" * 10 + "w" * 20)
        client.expect_chat("only 8x8")
        assert client.expect("A") == GameAccept("Pedina", 2)
        client.send(gamereq(True, position=Position.from_fen("W:W:B1,2")))
        client.expect_chat("no legal moves")
        assert client.expect("A") == GameAccept("Pedina", 2)
        client.send(gamereq(True)[:35] + "Q" + gamereq(True)[36:])
        client.expect_chat("Follower colour must be W or Z")
        assert client.expect("A") == GameAccept("Pedina", 2)
        client.send(gamereq(True, position=Position.from_fen("W:W21:B1")))  # and then a good one
        assert client.expect("A") == GameAccept("Pedina", 0)
        engine_move(client, Board("W:W21:B1"))
    finally:
        client.close()


def test_engine_sends_gameend_when_it_has_no_moves(server: Server) -> None:
    mark = len(server.log_lines())
    client = RawClient(server.port)
    try:
        client.send(gamereq(False, position=Position.from_fen("W:WK2:B1")))
        assert client.expect("A") == GameAccept("Pedina", 0)
        client.send("M0000020500")             # the black man on 1 is now blocked
        assert client.expect("E") == GameEnd(1, 0)  # "I lose"
        client.send("E10")
        assert client.silent(0.3)              # a confirmation is not confirmed
    finally:
        client.close()
    wait_until(lambda: any("1-0 (no moves), 1 plies" in text for _, _, text in log_since(server, mark)),
               what="the game's line in the log")


def test_engine_claims_the_win_when_the_opponent_plays_on(server: Server) -> None:
    client = RawClient(server.port)
    try:
        board = Board("B:WK27:B10,17,K30")
        client.send(gamereq(False, position=board.position))
        assert client.expect("A") == GameAccept("Pedina", 0)
        engine_move(client, board)             # 30x23x27: White has nothing left
        assert board.outcome() is not None and board.outcome().winner is False  # type: ignore[union-attr]
        client.send("M0000222600")
        client.expect_chat("already over: 0-1 by no moves")
        assert client.expect("E") == GameEnd(3, 0)
        client.send("E30")
    finally:
        client.close()


def test_pdnout_records_every_game_as_it_ends(tmp_path: Path) -> None:
    record = tmp_path / "dxp.pdn"
    running = start_server(tmp_path / "dxp.log", "--move-time", "0.02", "--pdnout", str(record))
    try:
        client = RawClient(running.port)
        client.send(gamereq(False, position=Position.from_fen("W:WK2:B1")))
        assert client.expect("A") == GameAccept("Pedina", 0)
        client.send("M0000020500")             # Black (the engine) is blocked: it loses
        assert client.expect("E") == GameEnd(1, 0)
        client.send("E10")
        board = Board()
        client.send(gamereq(True))
        assert client.expect("A") == GameAccept("Pedina", 0)
        engine_move(client, board)
        client.send("E10")                     # the opponent resigns
        assert client.expect("E") == GameEnd(0, 0)
        # Both games recorded before the Ctrl-C (the second ends when the engine reads our GAMEEND).
        wait_until(lambda: record.exists() and len(read_games(record.read_text(encoding="utf-8"))) == 2,
                   what="the second game in the record")
        client.close()
    finally:
        status, _, err = running.stop()
    assert status == 0 and err == ""
    first, second = read_games(record.read_text(encoding="utf-8"))
    assert (first.result, first.headers["White"], first.headers["Black"]) == ("1-0", "raw test", "Pedina")
    assert [m.hub() for m in first.board.moves] == ["2-5"] and first.board.start == Position.from_fen("W:WK2:B1")
    assert (second.result, second.headers["White"], second.board.moves) == ("1-0", "Pedina", board.moves)
    assert "resigns" in second.headers["Termination"]


def test_draw_by_repetition_ends_with_gameend(server: Server) -> None:
    # Black's king on 8 has one move each time: 8-4, then 4-8 back.
    board = Board("B:WK6,K7,K10,K11,K12,K15,K21,K24,K25,K28,K29:BK8")
    client = RawClient(server.port)
    try:
        client.send(gamereq(False, position=board.position))
        assert client.expect("A") == GameAccept("Pedina", 0)
        for _ in range(2):
            engine_move(client, board)
            send_move(client, board, "6-3")
            engine_move(client, board)
            send_move(client, board, "3-6")
        assert board.repetition_count() == 3
        assert client.expect("E") == GameEnd(2, 0)
        client.send("E20")
    finally:
        client.close()


def test_takeback_requests(server: Server) -> None:
    mark = len(server.log_lines())
    client = RawClient(server.port)
    try:
        client.send(gamereq(False))
        assert client.expect("A") == GameAccept("Pedina", 0)
        board = Board()
        send_move(client, board, "21-17")
        engine_move(client, board)
        client.send("B005W")                   # only 2 plies played
        client.expect_chat("cannot take back to move 5")
        assert client.expect("K") == BackAccept(2)
        client.send("B001W")                   # back to the start, White (us) to move
        assert client.expect("K") == BackAccept(0)
        board.pop()
        board.pop()
        send_move(client, board, "24-20")
        engine_move(client, board)
        client.send("B001Z")                   # Black (the engine) to move again: it moves
        assert client.expect("K") == BackAccept(0)
        board.pop()
        engine_move(client, board)
        gaps = back_to_back_gaps(log_since(server, mark))
        assert len(gaps) == 2 and min(gaps) >= 0.19  # CHAT then BACKACC, BACKACC then MOVE
        send_move(client, board, board.legal_moves()[0].hub())
        engine_move(client, board)
    finally:
        client.close()


# -- pydraughts as the client -----------------------------------------------------------


def close_client(client: DXPEngine) -> None:
    """Disconnect a pydraughts client at once.

    ``DXPEngine.quit`` sleeps 7 s in ``MySocket.close`` while its reader thread
    spins on the shut-down socket (it compares ``recv``'s bytes with ``""``, so
    it never sees EOF); the thread only ends when the socket attribute is gone.
    """
    sock = client.sender.socket.sock
    client.sender.socket.sock = None
    client.sender.socket.closed = True
    if sock is not None:
        hang_up(sock)
    client.receiver.close()


def identity(hub_text: str) -> tuple[int, int, frozenset[int]]:
    numbers = [int(n) for n in re.findall(r"\d+", hub_text)]
    return numbers[0], numbers[1], frozenset(numbers[2:])


@dataclass
class PlayedGame:
    board: Board
    ended_by: str              # "engine": it sent the first GAMEEND; "client": we did
    engine_reason: str | None  # the engine's GAMEEND reason when it ended the game


def drive_game(client: DXPEngine, engine_white: bool, opponent: Callable[[Board], Move],
               max_plies: int) -> PlayedGame:
    """A game between the engine (through ``client``) and ``opponent``, refereed by our Board.

    Every engine move must be legal by our rules; pydraughts' board follows along.
    """
    ours = Board()
    theirs = draughts.Board("italian")
    while True:
        engine_to_move = ours.position.white_to_move == engine_white
        if ours.outcome() is not None or len(ours.moves) >= max_plies and not engine_to_move:
            client.sender.gameend()            # our turn in a finished or long game: we end it
            return PlayedGame(ours, "client", None)
        if engine_to_move:
            played = client.play(theirs).move
            assert played is not None, "no move from the engine"
            move = ours.parse_move(played.hub_move)  # raises unless legal for us
            assert identity(move.hub()) == identity(played.hub_move)
            ours.push(move)
            theirs.push(played)
        else:
            move = opponent(ours)
            mirrored = draughts.Move(theirs, hub_move=move.hub())
            ours.push(move)
            theirs.push(mirrored)
            if ours.outcome() is not None:
                # The engine must answer with GAMEEND; play() would wait for a MOVE forever.
                client.sender.send_move(mirrored)
                wait_until(lambda: client.sender.current.result is not None)
                return PlayedGame(ours, "engine", client.sender.current.result)


def game_ends(server: Server, mark: int) -> list[tuple[str, str]]:
    """The GAMEEND messages in the log since ``mark``: (direction, text)."""
    return [(direction, text) for _, direction, text in log_since(server, mark) if text.startswith("E")]


def play_with_watchdog(server: Server, mark: int, minutes: int, engine_white: bool, opponent: Callable[[Board], Move],
                       max_plies: int, timeout: float, moves_per_game: int = 0) -> PlayedGame:
    """:func:`drive_game` on a thread: pydraughts busy-waits forever on a missing answer,
    so a hang is turned into a failure by closing the client. A finished game's client
    is closed once the log shows both GAMEENDs (the game's end and its confirmation)."""
    client = DXPEngine(options={"ip": "127.0.0.1", "port": server.port, "initial-time": 60 * minutes,
                                "max-moves": moves_per_game})
    outcome: list[PlayedGame | BaseException] = []

    def run() -> None:
        try:
            outcome.append(drive_game(client, engine_white, opponent, max_plies))
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if outcome and not isinstance(outcome[0], BaseException):
        wait_until(lambda: len(game_ends(server, mark)) >= 2, what="the GAMEEND exchange in the log")
    close_client(client)
    thread.join(5.0)
    assert outcome, f"the game did not finish within {timeout} s"
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def random_mover(seed: int) -> Callable[[Board], Move]:
    rng = random.Random(seed)
    return lambda board: rng.choice(board.legal_moves())


def check_game_log(server: Server, mark: int, game: PlayedGame, engine_white: bool) -> list[tuple[float, str, str]]:
    """The log shows the game's messages, in order, and the GAMEEND exchange; no trouble."""
    entries = log_since(server, mark)
    assert_no_trouble(entries)
    assert all(gap >= 0.19 for gap in back_to_back_gaps(entries))
    moves = [(direction, text) for _, direction, text in entries if text.startswith("M") and direction in "<>"]
    assert len(moves) == len(game.board.moves)
    for ply, ((direction, text), move) in enumerate(zip(moves, game.board.moves)):
        message = parse_message(text)
        assert isinstance(message, MoveMessage)
        assert (message.start, message.end, frozenset(message.captured)) == identity(move.hub())
        assert (direction == "<") == (game.board.positions[ply].white_to_move == engine_white)
    ends = game_ends(server, mark)
    if game.ended_by == "client":
        assert ends[:2] == [(">", "E01"), ("<", "E00")]
    else:
        assert ends[0] == ("<", f"E{game.engine_reason}0") and ends[1][0] == ">"
    return entries


@pytest.mark.parametrize("engine_white", [True, False], ids=["engine-white", "engine-black"])
def test_pydraughts_plays_whole_games(server: Server, engine_white: bool) -> None:
    mark = len(server.log_lines())
    game = play_with_watchdog(server, mark, 0, engine_white, random_mover(7 + engine_white), 200, 60.0)
    outcome = game.board.outcome()
    assert outcome is not None  # played to the end
    if game.ended_by == "engine":   # the random mover's move ended it: a draw (it cannot beat us)
        assert outcome.winner is None and game.engine_reason == "2"
    check_game_log(server, mark, game, engine_white)


def test_pydraughts_takeback(server: Server) -> None:
    # Engine White only: pydraughts takes the side to move in the GAMEREQ position
    # for the engine's colour, so with the engine Black it would wait for an engine
    # move after taking back to a position with White to move, forever.
    client = DXPEngine(options={"ip": "127.0.0.1", "port": server.port, "initial-time": 0})
    try:
        theirs = draughts.Board("italian")
        ours = Board()
        for _ in range(2):
            played = client.play(theirs).move
            assert played is not None
            ours.push(ours.parse_move(played.hub_move))
            theirs.push(played)
            reply = ours.legal_moves()[-1]
            ours.push(reply)
            theirs.push(draughts.Move(theirs, hub_move=reply.hub()))
        accepted, _, result = client.takeback(2, draughts.WHITE)  # to ply 2: the engine moves again
        assert accepted and result.move is not None
        while len(ours.moves) > 2:
            ours.pop()
            theirs.pop()
        ours.push(ours.parse_move(result.move.hub_move))
        theirs.push(result.move)
        accepted, _, result = client.takeback(1, draughts.BLACK)  # to ply 1: our move
        assert accepted and result.move is None
        while len(ours.moves) > 1:
            ours.pop()
            theirs.pop()
        reply = ours.legal_moves()[0]
        ours.push(reply)
        theirs.push(draughts.Move(theirs, hub_move=reply.hub()))
        played = client.play(theirs).move
        assert played is not None
        ours.parse_move(played.hub_move)
    finally:
        close_client(client)


def searcher_opponent(depth: int) -> Callable[[Board], Move]:
    searcher = Searcher(EngineSettings(hash_mb=8, egdb_path=""))

    def choose(board: Board) -> Move:
        best = searcher.search(board, Limits(depth=depth)).best
        assert best is not None
        return best
    return choose


@pytest.mark.slow
@pytest.mark.parametrize("engine_white, moves_per_game", [(True, 0), (False, 20)],
                         ids=["engine-white", "engine-black-20-moves"])
def test_pydraughts_one_minute_games_stay_on_the_clock(server: Server, engine_white: bool,
                                                       moves_per_game: int) -> None:
    """1-minute games (pydraughts sends ``001`` minutes): the engine's thinking, measured
    from its log as the time from our MOVE (or its GAMEACC) to its MOVE, stays inside
    the minute and uses a fair part of it. With the minute for 20 moves the engine
    spends nearly all of it by move 20 and must still never overstep it. CI plays the
    first 40 plies only (20 moves each)."""
    mark = len(server.log_lines())
    max_plies = 40 if CI else 300
    game = play_with_watchdog(server, mark, 1, engine_white, searcher_opponent(3), max_plies, 200.0, moves_per_game)
    entries = check_game_log(server, mark, game, engine_white)
    thinking = 0.0
    turn_start: float | None = None
    for at, direction, text in entries:
        if direction == ">" and text.startswith("M") or direction == "<" and text.startswith("A"):
            turn_start = at
        elif direction == "<" and text.startswith("M"):
            assert turn_start is not None
            thinking += at - turn_start
            turn_start = None
    engine_moves = sum(1 for p in game.board.positions[:-1] if p.white_to_move == engine_white)
    assert thinking < 60.0
    assert thinking > min(15.0, 0.3 * engine_moves)  # on the clock, not at 0.02 s a move
    if moves_per_game and engine_moves >= moves_per_game:
        assert thinking > 30.0                         # the minute was for these moves


# -- the command ------------------------------------------------------------------------


def test_port_in_use_is_one_line_and_an_error_status() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = subprocess.run([str(PEDINA), "dxp", "--port", str(port)], capture_output=True, text=True,
                                timeout=30)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use\n"


@pytest.mark.parametrize("args, fragment", [
    (["--port", "70000"], "'--port'"), (["--time-margin", "-1"], "'--time-margin'"), (["--bogus"], "--bogus"),
])
def test_bad_options_are_one_line(args: list[str], fragment: str) -> None:
    result = subprocess.run([str(PEDINA), "dxp", *args], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("Error: ") and fragment in result.stderr


def test_help() -> None:
    result = subprocess.run([str(PEDINA), "dxp", "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    for option in ("--host", "--port", "--hash", "--log", "--time-margin", "--move-time"):
        assert option in result.stdout


def test_ctrl_c_during_a_game_exits_cleanly(tmp_path: Path) -> None:
    running = start_server(tmp_path / "dxp.log", "--move-time", "30", "--no-book")
    client = RawClient(running.port)
    try:
        client.send(gamereq(follower_white=True))
        assert client.expect("A") == GameAccept("Pedina", 0)  # the game is in play: the engine thinks for 30 s
        started = time.monotonic()
        status, out, err = running.stop()
        assert time.monotonic() - started < allowed(0.5)  # not the 30 s
    finally:
        client.close()
    assert status == 0 and err == ""
    assert re.fullmatch(r"game 1: Pedina - raw test  \*, 0 plies, Pedina used \d+\.\d s; unfinished: interrupted\n",
                        out), out


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads are listed in /proc on Linux only")
def test_a_ctrl_c_the_kernel_gives_another_thread_still_stops_the_server(tmp_path: Path) -> None:
    """The kernel may deliver a process's SIGINT to any of its threads, and Python then runs
    the handler only when the main thread next runs Python code: a main thread blocked in
    accept() for good never did (a server seen alive 20 minutes after its Ctrl-C). Here the
    signal goes to a thread other than the main one on purpose (``tgkill``)."""
    running = start_server(tmp_path / "dxp.log", "--move-time", "30", "--no-book")
    client = RawClient(running.port)
    try:
        client.send(gamereq(follower_white=True))
        assert client.expect("A") == GameAccept("Pedina", 0)  # the engine thinks: more threads than main
        pid = running.process.pid
        others = sorted(int(task) for task in os.listdir(f"/proc/{pid}/task") if int(task) != pid)
        assert others
        assert ctypes.CDLL(None, use_errno=True).tgkill(pid, others[-1], signal.SIGINT) == 0
        out, err = running.process.communicate(timeout=HANG)
    finally:
        client.close()
        if running.process.poll() is None:
            running.process.kill()
    assert running.process.returncode == 0 and err == ""
    assert "unfinished: interrupted" in out


# -- the session's guarantees, in process ---------------------------------------------


class DeafSearcher(HeldSearcher):
    """A searcher that ignores its limits and stop(): every search is held until the test
    releases it, then raises ``failure`` if given, else returns the last legal move (not the
    first, the session's fallback, so a late result that got through would show)."""

    def __init__(self, settings: EngineSettings, failure: Exception | None = None) -> None:
        super().__init__(settings)
        self.failure = failure

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        self.hold()
        if self.failure is not None:
            raise self.failure
        move = board.legal_moves()[-1]
        return Result(move, None, 0, 1, 0, 1.0, [move])


@contextlib.contextmanager
def follower_client(follower: DxpFollower) -> Iterator[RawClient]:
    """A raw client on one end of a socket pair, ``follower`` serving the other on a thread."""
    ours, theirs = socket.socketpair()
    serving = threading.Thread(target=follower.serve_connection, args=(ours, "pair"), daemon=True)
    serving.start()
    client = RawClient.__new__(RawClient)
    client.sock, client.reader, client.frames = theirs, MessageReader(), deque()
    try:
        yield client
    finally:
        client.close()
        serving.join(5.0)
        follower.close()


def test_a_late_search_is_answered_at_the_deadline_with_a_legal_move() -> None:
    log = io.StringIO()
    # 60 s less a 59.5 s margin leave 0.5 s on the clock: the hard limit is a few hundredths.
    follower = DxpFollower(EngineSettings(hash_mb=1, book=False, egdb_path=""), log=log, time_margin=59.5,
                           message_gap=0.0,
                           searcher_factory=lambda settings: DeafSearcher(settings, RuntimeError("stuck")))
    with follower_client(follower) as client:
        try:
            client.send(gamereq(follower_white=True, minutes=1))
            accepted_at, text = client.receive()
            assert parse_message(text) == GameAccept("Pedina", 0)
            moved_at, text = client.receive()
            message = parse_message(text)
            assert isinstance(message, MoveMessage)
            board = Board()
            board.push(find_move(board.legal_moves(), message))
            # The search is still held: the MOVE did not wait for it. On an idle machine it
            # comes within 0.1 s (the watchdog's limit on that clock).
            assert HeldSearcher.held() == 1 and moved_at - accepted_at < allowed(0.1)
            send_move(client, board, board.legal_moves()[0].hub())
            engine_move(client, board)                     # the next search runs on a new searcher
        finally:
            HeldSearcher.release()                         # the stuck searches end, failing
    assert "answering from its last reported line" in log.getvalue()
    assert "search failed: RuntimeError: stuck" in log.getvalue()


#: Thread wake-ups and socket hops on an idle machine (seconds), allowed for load.
SLACK = allowed(0.05)
#: The longest a message may wait before it is handled on an idle machine (seconds), allowed for load.
PROMPT = allowed(0.1)
#: Time a move of the deaf-searcher games (seconds). A message sent in the middle of a search
#: must reach the engine before its watchdog answers, and the test's own thread may be kept
#: off a core as long as the engine's (PROMPT): at 0.3 s a loaded machine once let the MOVE
#: go first, which the engine rightly sent.
DEAF_MOVE_TIME = PROMPT + 0.3


def test_a_searcher_deaf_to_stop_gives_one_move_a_turn_and_the_next_message_is_prompt() -> None:
    """Every search of a searcher deaf to stop is answered by the session at the move
    time's watchdog limit; the messages after it (a takeback, a GAMEEND in the middle of a
    search, a new GAMEREQ, a takeback in the middle of a search) are answered within
    :data:`PROMPT`; and no turn ever gets two MOVEs, not even when the deaf searches end
    (the test releases them at the end, so that they end after every answer, on any machine)."""
    log = io.StringIO()
    follower = DxpFollower(EngineSettings(hash_mb=1, book=False, egdb_path=""), log=log, move_time=DEAF_MOVE_TIME,
                           message_gap=0.0,
                           searcher_factory=DeafSearcher)
    budget = time_budget(Limits(move_time=DEAF_MOVE_TIME))
    assert budget is not None
    # A MOVE that follows a stopped search may also wait for that search's answer (GRACE)
    # and for the join before its stuck searcher is replaced.
    later_move = GRACE + JOIN_TIMEOUT + budget.watchdog + SLACK

    def answered(data: str, kind: str) -> float:
        """Send ``data``; the reply of type ``kind`` must come within PROMPT. Its arrival time."""
        sent = time.monotonic()
        client.send(data)
        arrived, text = client.receive()
        assert text[:1] == kind, text
        assert arrived - sent < PROMPT, (data, arrived - sent)
        return arrived

    def engine_moves_by(deadline: float) -> float:
        """Read the engine's MOVE, which must come before ``deadline``, and play it on ``board``."""
        arrived, text = client.receive()
        message = parse_message(text)
        assert isinstance(message, MoveMessage), text
        board.push(find_move(board.legal_moves(), message))
        assert arrived < deadline, arrived - deadline
        return arrived

    def engine_thinks_after(text: str) -> None:
        """Send our move ``text``; return once the engine's search of the reply has begun."""
        held = HeldSearcher.held()
        send_move(client, board, text)
        HeldSearcher.wait_held(held + 1)

    with follower_client(follower) as client:
        try:
            board = Board()
            accepted = answered(gamereq(follower_white=True), "A")
            engine_moves_by(accepted + budget.watchdog + SLACK)

            taken_back = answered("B001W", "K")     # back to the start, the engine to move
            board.pop()
            engine_moves_by(taken_back + later_move)

            engine_thinks_after(board.legal_moves()[0].hub())
            answered("E01", "E")                    # a GAMEEND abandons its search

            board = Board()
            answered(gamereq(follower_white=False), "A")
            send_move(client, board, "22-18")
            engine_moves_by(time.monotonic() + later_move)
            engine_thinks_after(board.legal_moves()[0].hub())
            taken_back = answered("B001Z", "K")     # mid-search, back to the engine's first move
            board.pop()
            board.pop()
            engine_moves_by(taken_back + later_move)
            engine_thinks_after(board.legal_moves()[0].hub())
            answered("E01", "E")
        finally:
            HeldSearcher.release()                  # every deaf search ends now, after every answer
        assert client.silent(0.3)                   # none of their results was sent
    sent_since_received = 0
    for line in log.getvalue().splitlines():
        match = LOG_LINE.fullmatch(line)
        assert match, line
        direction, text = match.group(4, 5)
        if direction == ">":
            sent_since_received = 0
        elif direction == "<" and text.startswith("M"):
            sent_since_received += 1
            assert sent_since_received == 1, "two MOVEs for one turn"
    assert sum(1 for line in log.getvalue().splitlines() if " < M" in line) == 4
    assert "its searcher is abandoned for a new one" in log.getvalue()


# -- one client cannot hold the server ------------------------------------------------


def test_a_second_client_is_told_at_once_that_the_engine_is_busy(server: Server) -> None:
    first = RawClient(server.port)
    second: RawClient | None = None
    try:
        first.send(gamereq(follower_white=False))
        assert first.expect("A") == GameAccept("Pedina", 0)
        second = RawClient(server.port)
        assert second.expect("A") == GameAccept("Pedina", 3)    # before any GAMEREQ of its own
        assert second.sock.recv(16) == b""                      # and closed
        board = Board()
        send_move(first, board, "22-18")                        # the first game goes on
        engine_move(first, board)
    finally:
        first.close()
        if second is not None:
            second.close()


def serve_in_thread(follower: DxpFollower) -> tuple[socket.socket, threading.Thread]:
    """``follower`` serving one end of a socket pair on a thread; the other end and the thread."""
    ours, theirs = socket.socketpair()
    serving = threading.Thread(target=follower.serve_connection, args=(ours, "pair"), daemon=True)
    serving.start()
    return theirs, serving


def test_an_idle_connection_is_closed() -> None:
    log = io.StringIO()
    follower = DxpFollower(EngineSettings(hash_mb=1, book=False, egdb_path=""), log=log, message_gap=0.0, idle_timeout=0.2)
    client, serving = serve_in_thread(follower)
    try:
        client.settimeout(ANSWER)
        assert client.recv(16) == b""                           # closed by the engine, not by us
        serving.join(ANSWER)
        assert not serving.is_alive() and "nothing received for" in log.getvalue()
    finally:
        client.close()
        follower.close()


def test_a_client_that_never_reads_cannot_block_the_engine() -> None:
    log = io.StringIO()
    follower = DxpFollower(EngineSettings(hash_mb=1, book=False, egdb_path=""), log=log, message_gap=0.0, send_timeout=0.2, max_faults=10**9)
    client, serving = serve_in_thread(follower)
    try:
        client.settimeout(ANSWER)
        with contextlib.suppress(OSError):                      # the engine drops us: the flood stops
            for _ in range(1_000_000):                          # bad messages, each answered with a CHAT
                client.sendall(b"X1\0" * 100)
        serving.join(ANSWER)
        assert not serving.is_alive() and "send failed" in log.getvalue()
    finally:
        client.close()
        follower.close()


def test_a_flood_of_bad_messages_is_refused_without_pauses_and_then_closed() -> None:
    log = io.StringIO()
    # A gap of an hour: a refusal that waited for it would never be through.
    follower = DxpFollower(EngineSettings(hash_mb=1, book=False, egdb_path=""), log=log, message_gap=3600.0, max_faults=20)
    client, serving = serve_in_thread(follower)
    reader = MessageReader()
    frames: list[bytes] = []
    try:
        client.settimeout(ANSWER)
        client.sendall(b"R02" + gamereq(True)[3:].encode() + b"\0" + b"X1\0" * 1000)
        while data := client.recv(4096):
            frames.extend(reader.feed(data))
        serving.join(ANSWER)
        assert not serving.is_alive()
    finally:
        client.close()
        follower.close()
    assert frames[0].startswith(b"CGAMEREQ for protocol version '02'") and frames[1] == encode(GameAccept("Pedina", 1))[:-1]
    # A CHAT for each and the GAMEACC of the refusal, each sent when the next bad message came:
    # the last one waits for the gap in the outbox when the connection is closed.
    assert len(frames) == 20 and all(frame.startswith(b"Ccannot read message") for frame in frames[2:])
    lines = log.getvalue().splitlines()
    assert len(lines) < 4 * 20 + 10 and any("20 unreadable or refused messages: closing" in line for line in lines)
