"""The search on several processes (``threads``): helpers share the table, count their nodes,
never outlive the engine, and never cost a ``go`` its answer.

The guarantees are checked on events (a counter the helper writes, a line the engine
sends, a process that is gone), never on how much faster two processes search: that is
``pedina bench --threads`` and the match's work.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pedina import START_HUB, Board
from pedina.search import Info, Result, Searcher
from pedina.settings import EngineSettings
from pedina.smp import HelperPool, NODES_MASK, TAG_SHIFT, finished_iteration, iteration_of
from pedina.timeman import Limits
from pedina.tt import EXACT, MAX_PROCESSES, TranspositionTable, position_key
from test_hub import Hub, done_moves
from test_hub_fuzz import run_fuzz
from timing import HANG, allowed, wait_until

TWO = EngineSettings(threads=2, hash_mb=4, egdb_path="", book=False)


def descendants(pid: int) -> list[int]:
    """The processes under ``pid``, from /proc (children of children too)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").iterdir():
            children = [int(text) for text in (task / "children").read_text().split()]
            found += children
            pending += children
    return found


def gone(pid: int) -> bool:
    """The process has ended (a zombie nobody reaped has ended too)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return "\nState:\tZ" in status


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads processes from Linux's /proc")


def started(searcher: Searcher, limits: Limits) -> Callable[[], Result]:
    """Start a search of the start position; the function returned waits for its result (for at
    most :data:`HANG`) and checks that it is a legal move."""
    done = threading.Event()
    results: list[Result | None] = []

    def on_done(result: Result | None, error: Exception | None) -> None:
        assert error is None
        results.append(result)
        done.set()

    searcher.start(Board(), limits, None, on_done)

    def result() -> Result:
        assert done.wait(HANG), "the search never returned"
        found = results[0]
        assert found is not None and found.best in Board().legal_moves()
        return found

    return result


def test_a_shared_table_is_seen_by_another_process() -> None:
    table = TranspositionTable(1, shared=True)
    assert table.shared and table.counters.nbytes > 0
    key = position_key(12345, 0, 0, True)
    script = ("import sys; from pedina.tt import TranspositionTable, EXACT; "
              "table = TranspositionTable(1, handle=int(sys.argv[1])); "
              "table.store(int(sys.argv[2]), 7, EXACT, 42, None, False); table.counters[3] = 99")
    handle = table.handle
    assert isinstance(handle, int)
    subprocess.run([sys.executable, "-c", script, str(handle), str(key)], pass_fds=[handle], check=True,
                   timeout=HANG)
    data, _ = table.probe(key)
    assert data and table.counters[3] == 99


def test_a_table_is_shared_by_name_where_there_is_no_memfd(monkeypatch: pytest.MonkeyPatch) -> None:
    # macOS's way (POSIX shared memory by name), tried here on Linux without memfd_create.
    monkeypatch.delattr(os, "memfd_create")
    table = TranspositionTable(1, shared=True)
    name = table.handle
    assert isinstance(name, str)
    key = position_key(54321, 0, 0, False)
    script = ("import sys; from pedina.tt import TranspositionTable, EXACT; "
              "table = TranspositionTable(1, handle=sys.argv[1]); "
              "table.store(int(sys.argv[2]), 5, EXACT, 7, None, False)")
    result = subprocess.run([sys.executable, "-c", script, name, str(key)], capture_output=True, text=True,
                            timeout=HANG)
    assert result.returncode == 0 and result.stderr == "", result.stderr  # no resource tracker's warning
    data, _ = table.probe(key)
    assert data
    memory = Path("/dev/shm") / name
    assert memory.exists()
    del table
    gc.collect()
    assert not memory.exists()  # unlinked with the table


def test_a_table_of_one_process_is_not_shared() -> None:
    table = TranspositionTable(1)
    assert not table.shared and table.counters.nbytes == 0


def test_a_new_pool_on_the_same_table_takes_nothing_of_the_pool_before() -> None:
    """A new ``threads`` above 1 keeps the shared table and starts a new pool, whose searches
    are tagged from 1 again: the words the pool before left would pass for its own (another
    position's move index, nodes of another search) until its helpers write theirs."""
    table = TranspositionTable(4, shared=True)
    table.counters[1] = 1 << TAG_SHIFT | 12345  # the last pool's first search, its helper's nodes
    table.counters[MAX_PROCESSES + 1] = finished_iteration(1, 60, 7, 250)  # and its deepest iteration
    pool = HelperPool(TWO, table, 1)
    try:
        # Nothing is searched before begin(): no helper can have written since the pool began.
        assert table.counters[1] == table.counters[MAX_PROCESSES + 1] == 0
        pool.begin(Board(), table.age)
        assert pool.nodes() != 12345
        found = pool.deepest()
        assert found is None or found[0] < 60
    finally:
        pool.close()


@pytest.mark.parametrize("memory", [
    pytest.param("memfd", id="memfd, as on Linux",
                 marks=pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="Linux's memfd_create")),
    pytest.param("named", id="shared memory by name, as on macOS")])
def test_helpers_search_with_the_main_search_and_their_nodes_are_counted(
        memory: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With either kind of shared memory: the helper searches and counts its nodes in the table,
    and the table's memory goes with the table (the last search's helpers held it until the
    next search)."""
    if memory == "named":
        # macOS has neither: the table is POSIX shared memory, which the helper maps by its name.
        monkeypatch.delattr(os, "memfd_create")
        monkeypatch.delattr(mmap, "MAP_POPULATE", raising=False)
    searcher = Searcher(TWO)
    handle = searcher.tt.handle
    assert isinstance(handle, str if memory == "named" else int)
    try:
        result_of_search = started(searcher, Limits(infinite=True))
        helper_counter = searcher.tt.counters
        # The helper counts in its word of the table, tagged with this search.
        wait_until(lambda: helper_counter[1] & NODES_MASK > 20_000 and helper_counter[1] >> TAG_SHIFT != 0,
                   what="the helper's count")
        searcher.stop()
        result = result_of_search()
        assert result.nodes >= searcher.nodes + 20_000  # the main search's nodes and the helper's
        assert searcher.problems() == []
    finally:
        searcher.configure(EngineSettings(threads=1, hash_mb=4, egdb_path="", book=False))
    del helper_counter  # a view of the shared memory, which keeps it mapped
    gc.collect()
    assert not (isinstance(handle, str) and (Path("/dev/shm") / handle).exists())  # unlinked with its table


class HeldMainSearch:
    """A search of the start position on :data:`TWO` whose main search is held in its first
    report of ``depth`` or deeper until :attr:`release` is set: what lets the helper get ahead
    of it on any machine (left to run, the main search may stay ahead as long as a test waits)."""

    def __init__(self, limits: Limits, depth: int) -> None:
        self.searcher = Searcher(TWO)
        self.held = threading.Event()
        self.release = threading.Event()
        self.done = threading.Event()
        self.depths: list[int] = []  # of every report
        self.results: list[Result | None] = []
        self._depth = depth
        self.searcher.start(Board(), limits, self._on_info, self._on_done)
        assert self.held.wait(HANG)

    def _on_info(self, info: Info) -> None:
        self.depths.append(info.depth)
        if info.depth >= self._depth and not self.held.is_set():
            self.held.set()
            assert self.release.wait(HANG)

    def _on_done(self, result: Result | None, error: Exception | None) -> None:
        self.results.append(result)
        self.done.set()

    def helper_depth(self) -> int:
        """The helper's last finished iteration in this search (0: none yet)."""
        word = self.searcher.tt.counters[MAX_PROCESSES + 1]
        return iteration_of(word)[0] if word >> TAG_SHIFT != 0 else 0

    def result(self) -> Result:
        """The search's result, once it has returned (a legal move)."""
        assert self.done.wait(HANG)
        result = self.results[0]
        assert result is not None and result.best in Board().legal_moves()
        return result

    def close(self) -> None:
        self.release.set()
        self.searcher.stop()
        assert self.done.wait(HANG)
        self.searcher.configure(EngineSettings(threads=1, hash_mb=4, egdb_path="", book=False))


def test_a_helper_deeper_than_the_main_search_answers() -> None:
    search = HeldMainSearch(Limits(infinite=True), 6)
    try:
        wait_until(lambda: search.helper_depth() > 6, what="a helper's iteration deeper than the held main search's")
        deeper = search.helper_depth()
        search.searcher.stop()
        search.release.set()
        assert search.result().depth >= deeper > 6  # the helper's depth, not the main search's 6
    finally:
        search.close()


def test_a_helper_word_naming_no_root_move_does_not_answer() -> None:
    """What the main search reads of a helper is checked: a word of this search naming a move
    the root does not have (a stray write, a helper of another build) is not its answer."""
    search = HeldMainSearch(Limits(infinite=True), 4)
    try:
        pool = search.searcher._helpers
        assert pool is not None
        pool._processes[0].kill()   # no more words of its own over the one written here
        pool._processes[0].wait(HANG)
        search.searcher.tt.counters[MAX_PROCESSES + 1] = finished_iteration(pool._tag, 60, 200, 0)
        search.searcher.stop()
        search.release.set()
        assert search.result().depth < 60
    finally:
        search.close()


def test_a_depth_limited_search_answers_at_its_depth_though_a_helper_got_past_it() -> None:
    """A helper searches on past the depth asked for: its deeper iteration does not answer."""
    search = HeldMainSearch(Limits(depth=6), 4)
    try:
        wait_until(lambda: search.helper_depth() > 6, what="a helper's iteration past the depth asked for")
        search.release.set()
        result = search.result()
        assert result.depth == 6
        assert search.depths[-1] == 6
    finally:
        search.close()


def test_other_endgame_tables_end_the_helpers_before_the_table_is_emptied(monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper still searching would fill the emptied table again with the old tables' scores."""
    key = position_key(12345, 0, 0, True)
    searcher = Searcher(TWO)
    kept_at_close: list[bool] = []   # whether the table still held its entry when the helpers ended
    close = HelperPool.close

    def closing(pool: HelperPool) -> None:
        kept_at_close.append(bool(searcher.tt.probe(key)[0]))
        close(pool)

    monkeypatch.setattr(HelperPool, "close", closing)
    try:
        searcher.prepare()
        searcher.tt.store(key, 7, EXACT, 42, None, False)
        searcher.configure(TWO.with_values({"egdb_path": EngineSettings().egdb_path}))
        assert kept_at_close == [True] and not searcher.tt.probe(key)[0]   # ended, then emptied
    finally:
        searcher.configure(EngineSettings(threads=1, hash_mb=4, egdb_path="", book=False))


def test_a_helper_that_cannot_be_started_is_said_and_the_search_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_process(*args: object, **kwargs: object) -> None:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(subprocess, "Popen", no_process)  # the module pedina.smp starts helpers with
    searcher = Searcher(TWO)
    searcher.prepare()
    result = searcher.search(Board(), Limits(depth=6))
    assert result.best in Board().legal_moves() and result.nodes == searcher.nodes
    assert searcher.problems() == ["search helper 1 could not start: [Errno 11] Resource temporarily unavailable"]
    assert searcher.search(Board(), Limits(depth=6)).best is not None and searcher.problems() == []  # said once


def test_a_weakened_engine_searches_without_helpers() -> None:
    searcher = Searcher(EngineSettings(threads=2, hash_mb=4, egdb_path="", book=False, skill=10))
    result = searcher.search(Board(), Limits(depth=5))
    assert result.nodes == searcher.nodes  # nothing added: no helper searched


def test_threads_is_a_hub_parameter() -> None:
    engine = Hub()
    try:
        lines = engine.handshake()
        threads = next(line for line in lines if "name=threads" in line)
        assert "type=int" in threads and "min=1" in threads and "max=64" in threads and "value=1" in threads
    finally:
        engine.close()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="pins the commands to one core by their CPU affinity")
def test_more_threads_than_cores_are_warned_of_on_the_command_line_and_the_hub_stays_silent() -> None:
    one_core = {min(os.sched_getaffinity(0))}

    def pedina(*args: str, given: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pedina.protocol.cli", *args], input=given, capture_output=True,
                              text=True, timeout=HANG, preexec_fn=lambda: os.sched_setaffinity(0, one_core))

    crowded = pedina("bench", "-d", "1", "--hash", "4", "--threads", "2")
    assert crowded.returncode == 0, crowded.stderr
    assert crowded.stderr == ("Warning: --threads 2 is more processes than the 1 core(s) this process may run on: "
                              "they take turns on them, and the main search slows down\n")
    assert "total nodes" in crowded.stdout
    alone = pedina("bench", "-d", "1", "--hash", "4")
    assert alone.returncode == 0 and alone.stderr == "" and "total nodes" in alone.stdout
    hub = pedina("hub", "--threads", "2", "--hash", "4", given="hub\nquit\n")
    assert hub.returncode == 0 and hub.stderr == ""
    assert hub.stdout.splitlines()[-1] == "wait" and "name=threads value=2" in hub.stdout


def engine_pid(engine: Hub) -> int:
    pid = engine.child.pid
    assert pid is not None
    return pid


@contextlib.contextmanager
def analysing_on_two(tmp_path: Path) -> Iterator[Hub]:
    """``pedina hub --threads 2`` analysing the start position, its first line reported; closed
    at the end."""
    engine = Hub("--threads", "2", log=tmp_path / "hub.log")
    try:
        engine.handshake()
        engine.send(f"pos pos={START_HUB}")
        engine.send("go analyze")
        engine.lines_until_info(lambda fields: True)
        yield engine
    finally:
        engine.close()


@needs_proc
def test_with_two_threads_stop_and_ping_are_answered_within_100_ms(tmp_path: Path) -> None:
    with analysing_on_two(tmp_path) as engine:
        assert len(descendants(engine_pid(engine))) == 1  # the helper searches beside the engine
        engine.send("ping")
        engine.expect_line("pong")
        engine.send("stop")
        done = engine.expect_line("done")
        assert engine.logged_latency("ping", "pong") < allowed(0.1)
        assert engine.logged_latency("stop", "done") < allowed(0.1)
        done_moves(Board(), done)


@needs_proc
def test_a_helper_killed_mid_search_costs_no_answer_and_is_reported(tmp_path: Path) -> None:
    with analysing_on_two(tmp_path) as engine:
        (helper,) = descendants(engine_pid(engine))
        os.kill(helper, signal.SIGKILL)
        wait_until(lambda: gone(helper), what="the helper's end")
        engine.send("ping")
        engine.expect_line("pong")
        engine.send("stop")
        lines = engine.lines_until("done")
        done_moves(Board(), lines[-1])
        # Said once, then the engine searches on alone.
        board = Board()
        done, _ = engine.go(board, "move-time=0.2")
        done_moves(board, done)
        log = (tmp_path / "hub.log").read_text(encoding="utf-8")
        assert log.count("search helper 1 died") == 1, log[-2000:]
        engine.send("ping")
        engine.expect_line("pong")


@needs_proc
def test_a_helper_that_reads_nothing_costs_its_help_never_an_answer() -> None:
    """A stopped helper's pipe fills up with the searches it is sent: the searches go on without
    waiting for it, it is said once, and when it reads again it searches the latest one."""
    before = set(descendants(os.getpid()))
    searcher = Searcher(TWO)
    searcher.prepare()
    (helper,) = set(descendants(os.getpid())) - before
    os.kill(helper, signal.SIGSTOP)
    try:
        problems: list[str] = []
        for _ in range(2_000):  # a pipe's buffer takes the messages of dozens of searches
            started(searcher, Limits(depth=5))()
            problems += searcher.problems()
            if problems:
                break
        assert problems == ["search helper 1 fell behind the searches it is sent: "
                            "they go on without it until it catches up"]
        for _ in range(20):
            result = started(searcher, Limits(depth=5))()
            assert result.nodes == searcher.nodes and searcher.problems() == []  # said once; no help
    finally:
        os.kill(helper, signal.SIGCONT)
    try:
        # It reads its backlog, then helps again: its nodes count in a search.
        wait_until(lambda: started(searcher, Limits(depth=9))().nodes > searcher.nodes,
                   what="the helper's nodes in a search after it caught up")
        assert searcher.problems() == []
    finally:
        searcher.configure(EngineSettings(threads=1, hash_mb=4, egdb_path="", book=False))


def test_a_helper_sent_a_search_before_its_stop_searches_the_new_one() -> None:
    # As when a helper that fell behind was sent a search but not its stop: the next search
    # stops the one it is on, or it would wait for that one forever.
    table = TranspositionTable(4, shared=True)
    pool = HelperPool(TWO, table, 1)
    try:
        pool.wait_ready()
        pool.begin(Board(), table.age)
        wait_until(lambda: pool.nodes() > 0, what="the helper's nodes in the first search")
        pool.begin(Board(), table.age)
        wait_until(lambda: pool.nodes() > 0, what="the helper's nodes in the second search")
        pool.end()
        assert pool.take_failures() == []
    finally:
        pool.close()


@needs_proc
def test_no_helper_outlives_an_engine_killed_with_sigkill(tmp_path: Path) -> None:
    with analysing_on_two(tmp_path) as engine:
        helpers = descendants(engine_pid(engine))
        assert helpers
        os.kill(engine_pid(engine), signal.SIGKILL)
        wait_until(lambda: all(gone(pid) for pid in helpers), what="the helpers' end")


def test_the_fuzz_storm_with_two_threads() -> None:
    run_fuzz(2000, 20261205, "--threads", "2")


#: Searchers on two processes, each freed by its own search thread when it ends, while another
#: thread starts one search after another; prints the errors those searches met.
FREED_WHILE_STARTING = """
import sys, threading
from pedina import Board, Limits
from pedina.search import Searcher
from pedina.settings import EngineSettings

errors = []
threading.excepthook = lambda hook: errors.append(repr(hook.exc_value))
freed = threading.Event()

def free_searchers():
    for _ in range(40):
        searcher = Searcher(EngineSettings(threads=2, hash_mb=4, egdb_path="", book=False))
        searcher.start(Board(), Limits(depth=6), None, lambda result, error: None)
        del searcher  # its search thread holds it last: freed, helper and all, as that ends
    freed.set()

threading.Thread(target=free_searchers).start()
searcher = Searcher(EngineSettings(threads=1, hash_mb=4, egdb_path="", book=False))
starts = 0
while not freed.is_set():
    done = threading.Event()
    def on_done(result, error):
        if error is not None or result is None:
            errors.append(repr(error))
        done.set()
    searcher.start(Board(), Limits(depth=1), None, on_done)
    if not done.wait(60):
        errors.append("a search never returned")
        break
    starts += 1
print(starts, errors[:3])
"""


def test_searchers_freed_while_another_thread_starts_searches() -> None:
    # Compiled, the freed searchers' closures were put up for reuse before being cleared, and a
    # search started meanwhile lost its arguments (an AttributeError), or the process crashed.
    done = subprocess.run([sys.executable, "-c", FREED_WHILE_STARTING], capture_output=True, text=True,
                          timeout=HANG * 4)
    assert done.returncode == 0, done.stderr[-2000:]
    starts, errors = done.stdout.split(" ", 1)
    assert int(starts) > 0 and errors.strip() == "[]", done.stdout[-2000:]


def test_a_helper_never_runs_a_pedina_of_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    planted = tmp_path / "pedina"
    planted.mkdir()
    (planted / "__init__.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    searcher = Searcher(TWO)
    searcher.prepare()  # the helper has started: it imported the engine
    assert searcher.problems() == [] and not (tmp_path / "ran").exists()
    searcher.configure(EngineSettings(threads=1, hash_mb=4, egdb_path="", book=False))


def test_a_pure_script_without_a_main_guard_can_search_on_two_threads(tmp_path: Path) -> None:
    # The helpers are new interpreters that import the engine, not the caller's script.
    script = tmp_path / "two.py"
    script.write_text("from pedina import Board, Limits, Searcher\n"
                      "from pedina.settings import EngineSettings\n"
                      "searcher = Searcher(EngineSettings(threads=2, egdb_path=''))\n"
                      "print('searched', searcher.search(Board(), Limits(depth=6)).best)\n", encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=HANG)
    assert result.returncode == 0 and result.stdout.count("searched") == 1, result.stderr
