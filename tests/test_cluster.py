"""``pedina match --cluster`` and ``scripts/selfplay.py --cluster``: games as tasks on a local Dask
cluster of two one-thread worker processes (fast settings)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import psutil  # type: ignore[import-untyped]
import pytest
from distributed import Client, LocalCluster, Worker

from pedina import Board
from pedina.pdn import read_games
from pedina.protocol.match.cluster import LOCAL_HTTP_ADDRESS, cluster_client
from pedina.protocol.match.inprocess import numbered_selfplay_game
from test_match import PEDINA, RANDOM, games_of, run
from timing import HANG, wait_until

SELFPLAY = str(Path(__file__).parent.parent / "scripts" / "selfplay.py")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The scheduler address of a local cluster of 2 worker processes, one thread each."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=LOCAL_HTTP_ADDRESS) as local:
        yield local.scheduler_address


def wait_for_both_workers(cluster: str) -> None:
    """Return once the cluster has its 2 workers again: a worker killed by a test is restarted
    by its nanny, slowly on a loaded machine."""
    with Client(cluster) as client:
        client.wait_for_workers(2, timeout=HANG)


def new_games(log: Path) -> int:
    """The games an engine given ``option.log=LOG`` began (one line per ``new-game``)."""
    return len(log.read_text().splitlines()) if log.exists() else 0


def pdn_games(pdn: Path) -> int:
    return pdn.read_text().count("[Event ") if pdn.exists() else 0


def executing_tasks(prefix: str, dask_worker: Worker) -> list[str]:
    """The keys of the tasks named ``prefix...`` running on ``dask_worker`` now (run there by
    ``Client.run``; ``pedina-game-`` for the games)."""
    return [str(task.key) for task in dask_worker.state.executing if str(task.key).startswith(prefix)]


@contextmanager
def worker_killer(cluster: str, ready: Callable[[], bool], prefix: str) -> Iterator[list[str]]:
    """While the block runs, as soon as ``ready()``, SIGKILL one worker running a task named
    ``prefix...``; the list given is that task's key (empty if none was killed)."""
    killed: list[str] = []
    over = threading.Event()

    def kill() -> None:
        with Client(cluster) as client:
            while not over.is_set() and not killed:
                if ready():
                    for address, keys in client.run(executing_tasks, prefix).items():
                        if keys:
                            pid = client.run(os.getpid, workers=[address])[address]
                            os.kill(pid, signal.SIGKILL)
                            killed.extend(keys)
                            break
                over.wait(0.05)  # the next look at the workers, unless the test is over

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        yield killed
    finally:
        over.set()
        killer.join()


def engine_processes() -> list[str]:
    """The command lines of the processes a worker started (run there by ``Client.run``)."""
    return [" ".join(child.cmdline()) for child in psutil.Process().children(recursive=True)]


def test_a_board_reaches_a_worker_with_its_moves_and_draw_rules() -> None:
    """A game's board is pickled to the worker that plays it (cluster.py's picklers)."""
    import pickle

    board = Board(repetitions=2, draw_plies=40)
    for text in ("23-19", "10-14"):
        board.push(board.parse_move(text))
    back = pickle.loads(pickle.dumps(board))
    assert [move.hub() for move in back.moves] == ["23-19", "10-14"]
    assert (back.start.hub(), back.repetitions, back.draw_plies) == (board.start.hub(), 2, 40)


def test_local_cluster_match_equals_the_sequential_one(tmp_path: Path) -> None:
    runs = []
    for how in (["--concurrency", "1"], ["--cluster", "local:2"]):
        pdn = tmp_path / f"{how[1]}.pdn".replace(":", "")
        result = run("--engine", f"cmd={PEDINA}", "name=A", "--engine", f"cmd={PEDINA}", "name=B",
                     "option.skill=10", "--depth", "2", "--games", "4", "--maxplies", "80",
                     "--shuffle", "--seed", "7", *how, "--pdnout", str(pdn))
        assert result.exit_code == 0, result.output
        assert "4/4 games" in result.output and "4 games played" in result.output
        runs.append((games_of(pdn), result.output))
    assert "Dask cluster local:2 (2 workers, 2 threads)" in runs[1][1]
    assert len(runs[0][0]) == 4
    assert runs[0][0] == runs[1][0]
    table = [line for line in runs[0][1].splitlines() if line.startswith(("A vs B", "White vs Black"))]
    assert table == [line for line in runs[1][1].splitlines() if line.startswith(("A vs B", "White vs Black"))]


def test_a_worker_killed_during_a_game_loses_nothing(cluster: str, tmp_path: Path) -> None:
    reference, pdn, log = tmp_path / "ref.pdn", tmp_path / "killed.pdn", tmp_path / "a.log"

    def args(*a_settings: str) -> list[str]:
        return ["--engine", f"cmd={RANDOM}", "name=A", "option.seed=5", *a_settings,
                "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", "--maxplies", "40", "--games", "6"]

    assert run(*args(), "--pdnout", str(reference)).exit_code == 0
    # A is slow (0.05 s a move), so a game lasts about a second: the kill lands in one
    with worker_killer(cluster, lambda: pdn_games(pdn) >= 1, "pedina-game-") as killed:
        result = run(*args("option.mode=slow", "option.delay=0.05", f"option.log={log}"),
                     "--cluster", cluster, "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    assert len(killed) == 1
    assert "6 games played" in result.output and "6/6 games" in result.output
    assert pdn_games(pdn) == 6                      # every game once ...
    assert games_of(pdn) == games_of(reference)     # ... and the same games as without the cluster
    assert new_games(log) >= 7                      # the killed game was begun again elsewhere
    wait_for_both_workers(cluster)                  # for the next tests


def test_an_sprt_that_stops_early_cancels_the_pending_games(cluster: str, tmp_path: Path) -> None:
    pdn, log = tmp_path / "sprt.pdn", tmp_path / "good.log"
    result = run("--engine", f"cmd={RANDOM}", "name=good", "option.mode=slow", "option.delay=0.1",
                 f"option.log={log}",
                 "--engine", f"cmd={RANDOM}", "name=bad", "option.mode=illegal", "option.after=6",
                 "--depth", "1", "--games", "60", "--sprt", "elo0=0", "elo1=10", "alpha=0.05", "beta=0.05",
                 "--cluster", cluster, "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    assert "H1 accepted" in result.output
    played = pdn_games(pdn)
    assert f"{played} games played" in result.output
    assert 16 <= played <= 18                 # 16 straight wins decide; a game per worker may end meanwhile
    with Client(cluster) as client:                   # nothing left running on the workers
        wait_until(lambda: all(not keys for keys in client.run(executing_tasks, "pedina-game-").values())
                   and all(not engines for engines in client.run(engine_processes).values()),
                   what="the workers' games and engines to end")
    assert played <= new_games(log) <= played + 4     # the games in play when it stopped, and no others


def test_resume_after_an_interrupted_cluster_match_plays_only_the_missing_games(cluster: str,
                                                                                 tmp_path: Path) -> None:
    reference, pdn, log = tmp_path / "ref.pdn", tmp_path / "int.pdn", tmp_path / "resume.log"

    def args(*a_settings: str) -> list[str]:
        return ["--engine", f"cmd={RANDOM}", "name=A", *a_settings, "--engine", f"cmd={RANDOM}", "name=B",
                "--depth", "1", "--maxplies", "20", "--games", "12"]

    assert run(*args(), "--pdnout", str(reference)).exit_code == 0
    command = [sys.executable, "-m", "pedina.protocol.cli", "match", *args("option.mode=slow", "option.delay=0.05"),
               "--cluster", cluster, "--pdnout", str(pdn)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_until(lambda: pdn_games(pdn) >= 2, what="two finished games")
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=HANG)
    assert process.returncode == 130, output
    assert "--resume" in output and "Traceback" not in output
    saved = len(read_games(pdn.read_text()))
    assert 2 <= saved < 12
    result = run(*args(f"option.log={log}"), "--cluster", cluster, "--pdnout", str(pdn), "--resume")
    assert result.exit_code == 0, result.output
    assert f"resuming: {saved} of 12 games already played" in result.output
    assert f"{12 - saved} games played" in result.output
    assert new_games(log) == 12 - saved       # A began only the missing games
    assert pdn_games(pdn) == 12
    assert games_of(pdn) == games_of(reference)


def test_engines_missing_on_the_workers_are_a_one_line_error(cluster: str) -> None:
    result = run("--engine", "cmd=no-such-engine-xyz", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
                 "--cluster", cluster)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: on worker tcp://127.0.0.1:"), result.output
    assert "cannot start" in lines[0]


def test_a_local_cluster_listens_on_127_0_0_1_only_and_takes_no_port_of_another(recwarn: pytest.WarningsRecorder
                                                                                   ) -> None:
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 8787))  # Dask's own port, where an HTTP server without an address goes
        taken.listen()
    except OSError:
        pass  # another test's cluster has it, which does as well
    with taken, cluster_client("local:1") as client:
        listening = set()
        for process in [psutil.Process(), *psutil.Process().children(recursive=True)]:
            try:
                connections = process.net_connections()
            except psutil.NoSuchProcess:
                continue  # a process of an earlier test, ending now
            listening |= {(process.pid, connection.laddr) for connection in connections
                          if connection.status == psutil.CONN_LISTEN}
        assert listening and {address.ip for _, address in listening} == {"127.0.0.1"}, listening
        assert client.dashboard_link.startswith("http://127.0.0.1:")
    assert not [str(warning.message) for warning in recwarn if "already in use" in str(warning.message)]


@pytest.mark.parametrize("args, message", [
    (["--cluster", "nonsense"], "bad --cluster 'nonsense' (expected tcp://HOST:PORT, a scheduler file or local:N)"),
    (["--cluster", "local:0"], "bad --cluster 'local:0': local:N needs 1 to 256 workers"),
    (["--cluster", "local:2", "--concurrency", "2"], "--concurrency is for this machine"),
])
def test_cluster_mistakes_are_one_line_errors(args: list[str], message: str) -> None:
    result = run("--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", *args)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {message}"), result.output


def test_a_scheduler_file_gives_the_address_and_a_bad_one_is_a_one_line_error(cluster: str,
                                                                              tmp_path: Path) -> None:
    good, garbage, other = tmp_path / "scheduler.json", tmp_path / "garbage.json", tmp_path / "other.json"
    good.write_text(json.dumps({"type": "Scheduler", "address": cluster}))
    garbage.write_text("not json")
    other.write_text('{"type": "Scheduler"}')
    engines = ["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", "--games", "2"]
    wait_for_both_workers(cluster)  # the worker count is part of the line checked
    result = run(*engines, "--cluster", str(good))
    assert result.exit_code == 0, result.output
    assert f"Dask cluster {good} (2 workers, 2 threads)" in result.output and "2 games played" in result.output
    for path, message in ((garbage, f"cannot read the scheduler file {garbage}: "),
                          (other, f'{other} is not a Dask scheduler file (it has no "address")')):
        result = run(*engines, "--cluster", str(path))
        assert result.exit_code == 1
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith(f"Error: {message}"), result.output


def test_cluster_without_dask_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    result = run("--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
                 "--cluster", "local:2")
    assert result.exit_code == 1
    assert result.output.strip() == "Error: --cluster needs Dask's distributed scheduler: pip install 'pedina[cluster]'"


def test_selfplay_on_a_cluster_writes_the_same_file(cluster: str, tmp_path: Path) -> None:
    outputs = []
    for how in ([], ["--cluster", cluster]):
        out = tmp_path / f"positions{len(how)}.txt"
        done = subprocess.run([sys.executable, SELFPLAY, "--games", "6", "--depth", "2", "--seed", "3",
                               "--out", str(out), *how], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "selfplay: 6/6 games" in done.stderr
        outputs.append(out.read_text())
    lines = outputs[0].splitlines()
    assert len(lines) > 100 and all(line.rsplit(" ", 1)[1] in ("1", "0.5", "0") for line in lines)
    assert outputs[0] == outputs[1]


def test_selfplay_with_the_shipped_evaluation_plays_other_games() -> None:
    hand_set = [numbered_selfplay_game(3, number, 2) for number in (1, 2)]
    shipped = [numbered_selfplay_game(3, number, 2, shipped=True) for number in (1, 2)]
    assert shipped != hand_set
    assert shipped == [numbered_selfplay_game(3, number, 2, shipped=True) for number in (1, 2)]


def test_selfplay_without_dask_says_what_to_install(tmp_path: Path) -> None:
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "distributed.py").write_text("raise ImportError('no dask here')\n")
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    done = subprocess.run([sys.executable, SELFPLAY, "--games", "2", "--out", str(tmp_path / "x.txt"),
                           "--cluster", "local:2"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert done.stderr.strip() == ("selfplay: --cluster needs Dask's distributed scheduler: "
                                   "pip install 'pedina[cluster]'")
