"""``pedina egdb build --cluster``: the database's jobs as tasks on a local Dask cluster of two
one-thread worker processes, against the build in one process (every table of up to 3 pieces)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from distributed import Client

from pedina.egdb import SliceReport, TableFile, build_databases, build_jobs, slice_name, write_whole
from pedina.protocol.cli import main
from pedina.protocol.egdb_cluster import ClusterJobs
from test_cluster import cluster, worker_killer  # noqa: F401  (cluster: the fixture, 2 workers)
from timing import HANG, wait_until

PIECES = 3


@pytest.fixture(scope="module")
def sequential(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The files of every table of up to 3 pieces, built in this process: name -> bytes."""
    directory = tmp_path_factory.mktemp("egdb-sequential")
    build_databases(str(directory), PIECES, distance_pieces=0)
    return tables_in(directory)


def tables_in(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def build_command(directory: Path, address: str) -> list[str]:
    # Without distances, so that no table is copied from the shipped ones: every job is a task.
    return ["egdb", "build", "--pieces", str(PIECES), "--distances", "0", "--dir", str(directory),
            "--cluster", address]


def test_a_cluster_build_writes_the_files_of_the_sequential_one(cluster: str, sequential: dict[str, bytes],
                                                                 tmp_path: Path) -> None:
    result = CliRunner().invoke(main, build_command(tmp_path, cluster))
    assert result.exit_code == 0, result.output
    assert f"on Dask cluster {cluster} (2 workers, 2 threads)" in result.output
    assert tables_in(tmp_path) == sequential        # byte for byte, and no .part file left
    lines = [line for line in result.output.splitlines() if line.startswith("slice-")]
    # One line a table, as its job ends.
    assert sorted(line.split()[0] for line in lines) == sorted(slice_name(signature) for job in build_jobs(PIECES)
                                                               for signature in job)
    assert not any("already built" in line for line in lines)


def test_a_worker_killed_during_a_job_loses_nothing_and_writes_nothing_twice(
        cluster: str, sequential: dict[str, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []

    def counting_write(path: str, chunks: list[bytes]) -> None:
        written.append(os.path.basename(path))
        write_whole(path, chunks)

    monkeypatch.setattr("pedina.protocol.egdb_cluster.write_whole", counting_write)
    reports: list[SliceReport] = []
    # the 2-piece jobs take a moment, the 3-piece ones seconds each: the kill lands in one of those
    with worker_killer(cluster, lambda: len(written) >= 4, "pedina-egdb-") as killed, Client(cluster) as client:
        build_databases(str(tmp_path), PIECES, distance_pieces=0, runner=ClusterJobs(client),
                        on_job=reports.extend)
    assert len(killed) == 1
    assert tables_in(tmp_path) == sequential
    assert sorted(written) == sorted(sequential)       # each table written once, by this process
    assert sorted(slice_name(report.signature) + ".egdb" for report in reports) == sorted(sequential)
    with Client(cluster) as client:
        client.wait_for_workers(2, timeout=30)          # the nanny restarted the worker, for the next tests


def test_an_interrupted_cluster_build_resumes_with_only_the_missing_tables(
        cluster: str, sequential: dict[str, bytes], tmp_path: Path) -> None:
    command = [sys.executable, "-m", "pedina.protocol.cli", *build_command(tmp_path, cluster)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_until(lambda: len(list(tmp_path.glob("*.egdb"))) >= 6, 2 * HANG, "six finished tables")
    process.send_signal(signal.SIGINT)
    output, errors = process.communicate(timeout=HANG)
    assert process.returncode == 130, errors
    assert "interrupted: " in errors and "run the same command again" in errors and "Traceback" not in errors
    kept = {path.name: os.stat(path).st_mtime_ns for path in tmp_path.glob("*.egdb")}
    assert 6 <= len(kept) < len(sequential)
    for name in kept:
        TableFile(str(tmp_path / name)).close()     # every table there is whole
    result = CliRunner().invoke(main, build_command(tmp_path, cluster))
    assert result.exit_code == 0, result.output
    already = {line.split()[0] + ".egdb" for line in result.output.splitlines() if line.endswith("already built")}
    assert already == set(kept)
    assert {path.name: os.stat(path).st_mtime_ns for path in tmp_path.glob("*.egdb") if path.name in kept} == kept
    assert tables_in(tmp_path) == sequential


@pytest.mark.parametrize("args, message", [
    (["--cluster", "local:2", "--workers", "2"], "--workers is for this machine"),
    (["--cluster", "nonsense"], "bad --cluster 'nonsense'"),
])
def test_cluster_build_mistakes_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(main, ["egdb", "build", "--pieces", "2", "--dir", str(tmp_path), *args])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {message}"), result.output
    assert not list(tmp_path.iterdir())
