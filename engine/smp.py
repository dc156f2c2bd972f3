"""A search on several cores: helper processes that fill the one shared hash table (Lazy SMP).

Python threads cannot search in parallel (one interpreter lock), so the ``threads`` setting
(:class:`~pedina.settings.EngineSettings`) runs ``threads - 1`` helper processes beside the
:class:`~pedina.search.Searcher`, the main search. They share its transposition table, made
``shared`` (:mod:`pedina.tt`): every search the main one starts, each helper searches the
same position too, deepening on its own until the main search ends, and what any of them
stores the others find. The main search reports and answers; the helpers are worth their
cores through the cut-offs and moves they leave in the table, as Stockfish's "lazy" threads
are, and through their own results: a helper searches every other depth (the first helper
1, 3, 5..., a second 1, 2, 4, 6..., and so on by turns), so it runs ahead of the main search,
and when the main search ends, the deepest iteration any helper finished answers if it is
deeper than the main search's own. Each helper writes its node count and its last finished
iteration in its words of the table's :attr:`~pedina.tt.TranspositionTable.counters`, tagged
with the search they are for.

Guarantees:

- A helper is a new interpreter (:func:`helper_main`), never a fork of the engine, whose
  protocol threads may hold locks (and macOS's system libraries refuse forks); nor is it a
  ``multiprocessing`` spawn, which runs the caller's main script again in each process (a
  script without its ``__main__`` guard would start over).
- A helper never outlives the engine: it ends when its pipe to the engine closes, however
  the engine ended (SIGKILL too); the pool also stops its helpers when it is dropped.
- A helper never writes to the engine's stdout or stderr: it reports a failure through its
  pipe, and the search reports it (:meth:`HelperPool.take_failures`).
- A helper that dies costs the search its help, never its answer: the main search does not
  wait for the helpers, and a dead one is said once and left out from then on.
- Nor does one that reads slowly or not at all (stopped, swapped out, stuck): what it is
  sent goes into its pipe only while the pipe has room, so the search never waits on a
  full one. A helper that fell behind is said once; it is sent nothing until it has room
  again, and then it skips to the last message it was sent (a search stops the one before
  it), so it always searches the latest position it has.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
import weakref
from dataclasses import asdict
from multiprocessing.connection import Connection, Pipe
from typing import Final

from pedina.board import Board
from pedina.move import Move
from pedina.settings import EngineSettings
from pedina.timeman import Limits
from pedina.tt import AGE_MASK, DEPTH_MASK, MAX_PROCESSES, SCORE_MASK, SCORE_OFFSET, TranspositionTable

#: What a helper process runs. ``-c`` puts the working directory first on the module path: taken
#: off, so that a ``pedina`` folder where the engine was started is never what a helper runs.
HELPER_PROGRAM: Final = "import sys; del sys.path[0]; from pedina.smp import helper_main; helper_main()"
#: How long :meth:`HelperPool.wait_ready` waits for the helpers to start (seconds): an
#: interpreter and the engine's modules each, on a machine that may be busy.
START_TIMEOUT: Final = 30.0
#: A helper's node count is kept as ``tag << TAG_SHIFT | nodes``: the tag says which search
#: it counts for, so a count left from an earlier search is never added to this one's.
TAG_SHIFT: Final = 40
TAG_MASK: Final = (1 << 21) - 1
NODES_MASK: Final = (1 << TAG_SHIFT) - 1
#: A finished iteration is ``tag << TAG_SHIFT | depth << ITERATION_DEPTH_SHIFT | index <<
#: ITERATION_INDEX_SHIFT | score + SCORE_OFFSET`` (``index``: the best move's among the position's
#: generated moves; depth and score in as many bits as a table entry's).
ITERATION_DEPTH_SHIFT: Final = 24
ITERATION_INDEX_SHIFT: Final = 16
ITERATION_INDEX_MASK: Final = 255


def finished_iteration(tag: int, depth: int, index: int, score: int) -> int:
    """The word a helper keeps for its last finished iteration (see :data:`ITERATION_DEPTH_SHIFT`)."""
    return tag << TAG_SHIFT | depth << ITERATION_DEPTH_SHIFT | index << ITERATION_INDEX_SHIFT | (score + SCORE_OFFSET)


def iteration_of(word: int) -> tuple[int, int, int]:
    """(depth, move index, score) of a word :func:`finished_iteration` made, its tag aside."""
    return (word >> ITERATION_DEPTH_SHIFT & DEPTH_MASK, word >> ITERATION_INDEX_SHIFT & ITERATION_INDEX_MASK,
            (word & SCORE_MASK) - SCORE_OFFSET)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it): search
    processes beyond them, this engine's or other engines', only take turns on them."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class HelperPool:
    """The helper processes of one :class:`~pedina.search.Searcher` (see the module's docstring).

    ``count`` helpers search with ``settings`` on ``table`` (a shared one), helper ``i`` counting
    its nodes in ``table.counters[i]``. A search never waits for a helper: one still starting
    (an interpreter, the engine's modules) reads the searches it was sent when it can. An
    engine waits for them once, before its first search (:meth:`wait_ready`).
    """

    def __init__(self, settings: EngineSettings, table: TranspositionTable, count: int) -> None:
        self._connections: list[Connection] = []
        self._processes: list[subprocess.Popen[bytes]] = []
        self._failures: list[str] = []
        self._ready: list[bool] = []
        self._fell_behind: list[bool] = []  # said once per helper: a storm of searches may outrun it often
        self._tag = 0
        self.counters = table.counters
        passed = [table.handle] if isinstance(table.handle, int) else []
        for slot in range(1, count + 1):
            # Tags count from 0 again: the words a pool before this one left in the table (after
            # a new ``threads`` on the same table) would pass for this pool's searches.
            self.counters[slot] = self.counters[MAX_PROCESSES + slot] = 0
            ours, theirs = Pipe()
            command = [sys.executable, "-c", HELPER_PROGRAM, str(theirs.fileno()), str(table.handle), repr(table.mb),
                       str(slot)]
            try:
                process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, pass_fds=[theirs.fileno(), *passed])
            except OSError as error:  # no process to be had (a limit, no memory): search with fewer
                ours.close()
                self._failures.append(f"search helper {slot} could not start: {error}")
                break
            finally:
                theirs.close()
            self._connections.append(ours)
            self._processes.append(process)
            self._ready.append(False)
            self._fell_behind.append(False)
            ours.send(asdict(settings))  # read when it has started: nothing here waits for that
        weakref.finalize(self, _stop_processes, self._connections, self._processes)

    def begin(self, board: Board, age: int) -> None:
        """Have every helper search ``board`` (the table at ``age``) until :meth:`end`."""
        self._tag = (self._tag + 1) & TAG_MASK
        # The game since its last irreversible move is all a search reads of the past (repetitions).
        reversible = board.reversible_plies
        since = board.positions[len(board.positions) - 1 - reversible]
        moves = [(move.start, tuple(move.path)) for move in board.moves[len(board.moves) - reversible:]]
        self._send_all(("search", since.fen(), moves, board.repetitions, board.draw_plies, age, self._tag))

    def end(self) -> None:
        """Stop the helpers' searches (they return within a few milliseconds, unwaited for)."""
        self._send_all(("stop",))

    def nodes(self) -> int:
        """The nodes the helpers searched since the last :meth:`begin`."""
        counters = self.counters
        total = 0
        for slot in range(1, len(self._connections) + 1):
            word = counters[slot]
            if word >> TAG_SHIFT == self._tag:
                total += word & NODES_MASK
        return total

    def deepest(self) -> tuple[int, int, int] | None:
        """(depth, move index, score) of the deepest iteration a helper finished since the last
        :meth:`begin`, ``None`` before any."""
        counters = self.counters
        best: tuple[int, int, int] | None = None
        for slot in range(1, len(self._connections) + 1):
            word = counters[MAX_PROCESSES + slot]
            if word >> TAG_SHIFT != self._tag:
                continue
            found = iteration_of(word)
            if best is None or found[0] > best[0]:
                best = found
        return best

    def wait_ready(self, timeout: float = START_TIMEOUT) -> None:
        """Wait until every helper has started, up to ``timeout`` seconds in all (one that has
        not by then is said to have failed to start, and is left out)."""
        deadline = time.monotonic() + timeout
        for slot in range(1, len(self._connections) + 1):
            self._read(slot, max(0.0, deadline - time.monotonic()))
            if not self._ready[slot - 1]:
                self._fail(slot, "did not start")

    def take_failures(self) -> list[str]:
        """What went wrong with a helper since the last call, one line each."""
        for slot in range(1, len(self._connections) + 1):
            self._read(slot, 0.0)
        failures, self._failures = self._failures, []
        return failures

    def _read(self, slot: int, timeout: float) -> None:
        """Take in what helper ``slot`` said (waiting up to ``timeout`` seconds for its start)."""
        connection = self._connections[slot - 1]
        try:
            while not connection.closed and connection.poll(0.0 if self._ready[slot - 1] else timeout):
                kind, text = connection.recv()
                if kind == "ready":
                    self._ready[slot - 1] = True
                else:
                    self._fail(slot, text)
        except (EOFError, OSError):
            self._fail(slot, "died")

    def close(self) -> None:
        """End every helper now."""
        _stop_processes(self._connections, self._processes)

    def _send_all(self, message: tuple[object, ...]) -> None:
        for slot, connection in enumerate(self._connections, start=1):
            if connection.closed:
                continue
            if not _has_room(connection):
                if not self._fell_behind[slot - 1]:
                    self._fell_behind[slot - 1] = True
                    self._failures.append(f"search helper {slot} fell behind the searches it is sent: "
                                          "they go on without it until it catches up")
                continue
            try:
                connection.send(message)
            except OSError:  # its end of the pipe is gone: the process died
                self._fail(slot, "died")

    def _fail(self, slot: int, why: str) -> None:
        connection = self._connections[slot - 1]
        if not connection.closed:
            connection.close()
            process = self._processes[slot - 1]
            status = process.poll()
            if status is None:
                process.kill()
            else:
                why += f" (exit status {status})"
            self._failures.append(f"search helper {slot} {why}: searching on without it")


def _has_room(connection: Connection) -> bool:
    """Whether a message sent on ``connection`` now goes out without waiting.

    A pipe counts as having room while most of its buffer is free (on Linux, while at most a
    quarter of it is in use), far more than one message takes: it runs out only when the
    helper has read nothing for dozens of searches."""
    if hasattr(select, "poll"):  # no limit on descriptor numbers, as select() has
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLOUT)
        return bool(poller.poll(0))
    return bool(select.select([], [connection], [], 0)[1])


def _stop_processes(connections: list[Connection], processes: list[subprocess.Popen[bytes]]) -> None:
    # Killed, not asked: a helper keeps nothing worth a wait (the table lives on in the
    # engine), and the command that ends them (a new hash size, say) must be answered now.
    for connection in connections:
        if not connection.closed:
            connection.close()
    for process in processes:
        if process.poll() is None:
            process.kill()
    for process in processes:
        try:
            process.wait(1.0)
        except subprocess.TimeoutExpired:
            pass  # reaped by the subprocess module later


def helper_main() -> None:
    """A helper process's life (its arguments: the pipe's descriptor, the table's handle, its
    size in MB, the helper's slot): map the table, then search what the pipe says until it
    closes."""
    connection = Connection(int(sys.argv[1]))
    handle = sys.argv[2]
    table = TranspositionTable(float(sys.argv[3]), handle=int(handle) if handle.isdigit() else handle)
    slot = int(sys.argv[4])
    from pedina.search import Searcher  # the searcher imports this module

    values = connection.recv()
    settings = EngineSettings(**values).with_values({"threads": 1, "multipv": 1, "skill": 20})
    searcher = Searcher(settings, table=table, node_slot=slot)
    connection.send(("ready", ""))
    thread = None

    def on_done(_result: object, error: Exception | None) -> None:
        if error is not None:
            connection.send(("failed", f"failed: {type(error).__name__}: {error}"))

    while True:
        try:
            message = connection.recv()
            # Searches can come faster than a helper starts and stops them (a stop waits for
            # the search to hand over the interpreter lock): of a backlog, the last message
            # is all that counts.
            while connection.poll():
                message = connection.recv()
        except (EOFError, OSError):
            os._exit(0)  # the engine is gone, or let us go: nothing here to keep
        # A search also stops the one before it, whose stop may not have been sent (see HelperPool).
        searcher.stop()
        if message[0] == "stop":
            continue
        _, fen, moves, repetitions, draw_plies, age, tag = message
        if thread is not None:
            thread.join()
        board = Board(fen, repetitions=repetitions, draw_plies=draw_plies)
        for start, path in moves:
            board.push(Move(start, path))
        table.age = (age - 1) & AGE_MASK  # the search ages it once more, to the main search's age
        searcher.node_tag = tag
        thread = searcher.start(board, Limits(infinite=True), None, on_done)


__all__ = ["HelperPool", "ITERATION_DEPTH_SHIFT", "NODES_MASK", "START_TIMEOUT", "TAG_SHIFT", "finished_iteration",
           "helper_main", "iteration_of", "usable_cores"]
