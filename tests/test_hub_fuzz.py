"""Fuzzing the real ``pedina hub``: thousands of random and mutated lines.

The engine must stay alive, answer every ``ping`` (also in the middle of
searches), print only well-formed protocol lines, give every accepted ``go``
exactly one ``done`` and none to a refused one, send no ``info`` after a
``done`` until the next ``go``, and keep stderr empty.

Every ``go`` line is sent between two synchronisation points, so the lines
that belong to it are known: before it, ``stop`` and ``ping`` (the search
before it has answered, and nothing follows its ``done``); after it, ``ping``
(an ``error`` up to the ``pong`` means the ``go`` was refused).
"""

from __future__ import annotations

import os
import queue
import random
import shutil
import subprocess
import threading
import time

import pytest

from conftest import random_game
from pedina import Board
from pedina.protocol.hubline import HubInputError, parse_line

PEDINA = shutil.which("pedina")
ANSWERS = {"id", "param", "wait", "ready", "info", "done", "pong", "error"}
# Characters for random text: printable ASCII, quotes and '=' often, some control and non-ASCII
# characters, but no line breaks (so one line sent is one line read).
ALPHABET = ('abcdefghijklmnopqrstuvwxyzWBewb0123456789-x=" ' * 3
            + "\t\x00\x07\x1b\x7f\u00e8\u2028\U0001f600!@#$%^&*()[]{};:,.<>/?\\|~`")


def random_game_position(rng: random.Random) -> tuple[str, list[str]]:
    """The start position and a few random legal moves from it (Hub texts)."""
    board = random_game(rng, max_plies=rng.randrange(0, 30))
    return board.start.hub(), [move.hub() for move in board.moves]


def valid_line(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.25:
        start, moves = random_game_position(rng)
        cut = rng.randrange(0, len(moves) + 1)
        if rng.random() < 0.5 or not moves:
            return f'pos pos={start}' + (f' moves="{" ".join(moves[:cut])}"' if cut else "")
        board = Board()
        for text in moves[:cut]:
            board.push_text(text)
        return f'pos pos={board.position.hub()} moves="{" ".join(moves[cut:])}"'
    if kind < 0.45:
        return rng.choice(["level depth=1", "level depth=2", "level nodes=50", "level move-time=0.01",
                           "level time=0.05", "level time=0.04 inc=0.01", "level moves=3 time=0.05",
                           "level infinite", "level time=-0.3", "level depth=1 nodes=20"])
    if kind < 0.52:
        return "go " + rng.choice(["think", "ponder", "analyze"])
    if kind < 0.62:
        name = rng.choice(["variant", "tt-size", "ponder", "multipv", "skill", "bogus"])
        value = rng.choice(["italian", "1", "2", "20", "0", "true", "false", "-5", "99999", "x"])
        return f"set-param name={name} value={value}"
    return rng.choice(["ping", "stop", "ponder-hit", "new-game", "hub", "init", "ping"])


def mutate(line: str, rng: random.Random) -> str:
    chars = list(line)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(5)
        at = rng.randrange(len(chars) + 1)
        if op == 0 and chars:
            del chars[min(at, len(chars) - 1)]
        elif op == 1:
            chars.insert(at, rng.choice(ALPHABET))
        elif op == 2:
            chars = chars[:at]
        elif op == 3 and chars:
            end = min(len(chars), at + rng.randrange(1, 10))
            chars[at:at] = chars[at:end]
        elif op == 4 and chars:
            index = min(at, len(chars) - 1)
            if chars[index].isdigit():
                chars[index] = rng.choice("0123456789-.")
    return "".join(chars)


def fuzz_lines(rng: random.Random, count: int) -> list[bytes]:
    lines: list[bytes] = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.5:
            text = valid_line(rng)
        elif kind < 0.9:
            text = mutate(valid_line(rng), rng)
        elif kind < 0.97:
            text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 80)))
        else:
            text = "pos pos=" + "".join(rng.choice("WBwbe") for _ in range(rng.randrange(0, 5000)))
        data = text.encode("utf-8")
        if rng.random() < 0.02:  # bytes that are not UTF-8 at all
            data += bytes(rng.randrange(128, 256) for _ in range(rng.randrange(1, 8)))
        if b"quit" in data:
            continue
        lines.append(data)
    return lines


def command_of(data: bytes) -> str:
    """The command word the engine reads in ``data`` ('' when the line has none)."""
    try:
        return parse_line(data.decode("utf-8", errors="replace"))[0]
    except HubInputError:
        return ""


class Process:
    """``pedina hub`` with its stdout read into a queue and its stderr collected."""

    def __init__(self, *options: str) -> None:
        assert PEDINA is not None
        self.proc = subprocess.Popen([PEDINA, "hub", *options], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0)
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr = b""
        self.dones = 0
        self.pings = self.pongs = 0  # sent, received
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8"))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.pings += command_of(data) == "ping"

    def read_until(self, word: str, timeout: float = 30) -> list[tuple[str, dict[str, str]]]:
        """The (checked) output lines up to and including the next one starting with ``word``
        (for ``pong``: the one answering the last ``ping`` sent)."""
        deadline = time.monotonic() + timeout
        seen: list[tuple[str, dict[str, str]]] = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {word} within {timeout} s (alive: {self.proc.poll() is None}); "
                                     f"read {seen[-5:]}") from None
            assert line.endswith("\n")
            command, pairs = parse_line(line.rstrip("\n"))
            args = {key: value or "" for key, value in pairs}
            assert command in ANSWERS, line
            if command == "pong":
                self.pongs += 1
                if self.pongs < self.pings:
                    continue
            elif command == "done":
                self.dones += 1
                assert not pairs or pairs[0][0] == "move", line
            elif command == "error":
                assert list(args) == ["message"], line
            seen.append((command, args))
            if command == word:
                return seen

    def sync(self) -> list[tuple[str, dict[str, str]]]:
        """``ping``, and the lines up to its ``pong``."""
        self.send(b"ping")
        return self.read_until("pong")


def run_fuzz(count: int, seed: int, *options: str) -> None:
    """Send ``count`` fuzzed lines to ``pedina hub`` run with ``options``, checking every answer."""
    rng = random.Random(seed)
    engine = Process(*options)
    accepted = refused = 0
    try:
        for number, data in enumerate(fuzz_lines(rng, count), start=1):
            if command_of(data) != "go":
                engine.send(data)
                if number % 250 == 0:  # checkpoint: everything so far answered, engine alive
                    engine.sync()
                continue
            engine.send(b"stop")
            if engine.dones < accepted:  # the last accepted go has not been answered yet
                engine.read_until("done")
            # The engine is idle now: no info and no done before the pong (answers to earlier lines may).
            assert not {"info", "done"} & {command for command, _ in engine.sync()}
            engine.send(data)
            answer = engine.sync()
            if any(command == "error" and args["message"].startswith(("go ", "go takes"))
                   for command, args in answer):
                refused += 1
            else:
                accepted += 1
        engine.send(b"stop")
        if engine.dones < accepted:
            engine.read_until("done")
        assert not {"info", "done"} & {command for command, _ in engine.sync()}
        assert engine.dones == accepted and accepted > 50 and refused > 5, (engine.dones, accepted, refused)
        engine.send(b"quit")
        assert engine.proc.wait(timeout=10) == 0
        engine._stderr_reader.join(timeout=5)
        assert engine.stderr == b"", engine.stderr[:500]
    finally:
        if engine.proc.poll() is None:
            engine.proc.kill()
            engine.proc.wait()


def test_fuzz_thousands_of_lines_keeps_the_engine_alive_and_stderr_empty() -> None:
    run_fuzz(3000, seed=20261130)


@pytest.mark.slow
def test_fuzz_long_run() -> None:
    run_fuzz(10000 if os.environ.get("PEDINA_CI") else 50000, seed=7)
