"""``pedina egdb build --cluster``: the endgame database's jobs as tasks on a Dask cluster.

:func:`pedina.egdb.build_databases` keeps the schedule (a job starts as soon as
the tables it reads are built; tables already built are kept); :class:`ClusterJobs`
is the :class:`pedina.egdb.JobRunner` that hands each job to the cluster as one
task. The workers need no shared folder: a task carries the files of the tables
its job reads and returns the files of the job's tables
(:func:`pedina.egdb.build_job_files`), which this machine alone writes into the
database folder, each whole or not at all. So a worker that dies mid-job leaves
nothing behind (the scheduler runs the task again elsewhere), and each table is
written once, when its task's result arrives.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pedina.egdb import Job, JobFiles, SliceReport, build_job_files, job_dependencies, slice_name, table_path, write_whole
from pedina.protocol.match.cluster import ClusterTasks

if TYPE_CHECKING:
    from distributed import Client


class ClusterJobs:
    """Jobs solved as tasks on the Dask cluster of ``client``, a task a job (see the module)."""

    def __init__(self, client: Client) -> None:
        self._tasks: ClusterTasks[JobFiles] = ClusterTasks(client, build_job_files, [], [])
        self._results = self._tasks.results()
        self._started: list[tuple[str, Job]] = []

    def start(self, directory: str, job: Job, distances: bool) -> None:
        """Submit ``job`` with the files it reads from ``directory``."""
        import dask

        inputs = {signature: Path(table_path(directory, signature)).read_bytes() for signature in job_dependencies(job)}
        # The files travel with the task, so that it can run again anywhere; Dask warns from 10 MB (6 pieces).
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1GB"}):
            self._tasks.submit((job, inputs, distances), f"egdb {slice_name(job[0])}")
        self._started.append((directory, job))

    def wait(self) -> tuple[Job, list[SliceReport]]:
        """The next job to finish on the cluster, its tables written into its folder."""
        index, (files, reports) = next(self._results)
        directory, job = self._started[index]
        for signature in job:
            write_whole(table_path(directory, signature), [files[signature]])
        return job, reports

    def cancel(self) -> None:
        """Cancel the jobs not finished (an interrupted build; what was written stays)."""
        self._tasks.cancel()
