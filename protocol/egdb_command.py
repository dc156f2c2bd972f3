"""``pedina egdb``: build, probe and verify the endgame databases (see ``docs/egdb.md``)."""

from __future__ import annotations

import os
import sys
import time
from contextlib import ExitStack
from typing import TYPE_CHECKING

import click

from pedina.egdb import (
    SHIPPED_PIECES,
    BuildError,
    DatabaseValue,
    EndgameDatabase,
    SliceIndex,
    SliceReport,
    TableFileError,
    VerifyReport,
    build_databases,
    build_jobs,
    default_directory,
    job_positions,
    shipped_directory,
    slice_name,
    verify_databases,
)
from pedina.move import format_pdn, legal_moves
from pedina.position import Position, PositionError

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

#: The most pieces ``build`` accepts (a side has at most 12; beyond a few, a big machine's work).
MAX_BUILD_PIECES = 12

_DIRECTORY = click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
                          help="Database folder [default: the user's data folder, see `pedina egdb --help`].")


@click.group()
def egdb() -> None:
    """Endgame databases: the exact value of every position with few pieces.

    Every table of up to 5 pieces ships with Pedina, and the commands that play or
    analyse probe them unless told otherwise (--egdb DIR, --no-egdb). `build` writes to
    the user's data folder by default (on Linux ~/.local/share/pedina/egdb).
    """


def _folder(directory: str | None) -> str:
    return directory if directory is not None else default_directory()


def _read_folders(directory: str | None) -> list[str]:
    """The folders ``probe`` and ``verify`` read, first first: ``--dir`` (which must exist), else
    the user's data folder when it holds tables, then the shipped tables (a table the user's
    folder lacks, as a build stopped half-way leaves it, is read from there)."""
    if directory is not None:
        if not os.path.isdir(directory):
            raise click.ClickException(f"no such folder: {directory}")
        return [directory]
    folder = default_directory()
    return ([folder] if EndgameDatabase(folder).signatures else []) + [shipped_directory()]


def _mover(white: bool) -> str:
    return "White" if white else "Black"


def _report_line(report: SliceReport) -> str:
    wins, losses, draws = report.counts
    if report.copied:
        timing = "copied from the shipped tables"
    elif report.seconds is None:
        timing = "already built"
    else:
        cpu = "" if report.cpu_seconds is None else f"  cpu {report.cpu_seconds:8.1f} s"
        peak = "" if report.peak_bytes is None else f"  peak {report.peak_bytes / 2**20:7,.0f} MB"
        timing = f"wall {report.seconds:8.1f} s{cpu}{peak}"
    return (f"{slice_name(report.signature):<16} {report.positions:>12,} positions  "
            f"win {wins:>11,}  loss {losses:>11,}  draw {draws:>11,}  {report.file_bytes:>11,} bytes  {timing}")


def _above_bar(bar: ProgressBar[int], lines: list[str]) -> None:
    """Print ``lines`` on stdout above the progress bar on stderr (drawn again below them on a terminal)."""
    if sys.stderr.isatty():
        click.echo("\r\x1b[K", nl=False, err=True)
    for line in lines:
        click.echo(line)
    if sys.stderr.isatty():
        bar.render_progress()


@egdb.command("build")
@click.option("--pieces", type=click.IntRange(2, MAX_BUILD_PIECES), required=True,
              help="Build every table with at most this many pieces.")
@_DIRECTORY
@click.option("--distances", "distance_pieces", type=click.IntRange(0, MAX_BUILD_PIECES),
              default=SHIPPED_PIECES, show_default=True,
              help="Store distances in the tables with at most this many pieces (as the shipped tables do).")
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="Processes solving independent tables at the same time [default: 1].")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Solve the tables as tasks on this Dask cluster: tcp://HOST:PORT, a scheduler file, or "
                   "local:N (see the README).")
def egdb_build(pieces: int, directory: str | None, distance_pieces: int, workers: int | None,
               cluster: str | None) -> None:
    """Build the tables with at most PIECES pieces, smallest first.

    Tables already in the folder are kept: an interrupted build goes on with the
    tables it was building. The shipped tables (up to 5 pieces, with distances) are
    copied rather than solved where they are what the build asks for. One line per
    table as its job ends: positions, results for the side to move, file size, and
    the job's wall and CPU time and its process's peak memory; then the totals.
    """
    folder = _folder(directory)
    if cluster is not None and workers is not None:
        raise click.ClickException("--workers is for this machine; on a cluster, each worker's threads are its own")
    total = 2 * sum(job_positions(job) for job in build_jobs(pieces))
    jobs: list[list[SliceReport]] = []
    started = time.perf_counter()
    try:
        with ExitStack() as stack:
            runner = None
            where = ""
            if cluster is not None:
                from pedina.protocol.egdb_cluster import ClusterJobs
                from pedina.protocol.match.cluster import cluster_client, cluster_summary

                client = stack.enter_context(cluster_client(cluster))
                runner = ClusterJobs(client)
                stack.callback(runner.cancel)
                where = f" on Dask cluster {cluster} ({cluster_summary(client)})"
            bar = stack.enter_context(click.progressbar(
                length=total, label=f"building up to {pieces} pieces in {folder}{where}", show_eta=True,
                file=sys.stderr))

            def job_ended(job_reports: list[SliceReport]) -> None:
                jobs.append(job_reports)
                _above_bar(bar, [_report_line(report) for report in job_reports])

            built = build_databases(folder, pieces, distance_pieces, workers or 1, progress=bar.update,
                                    on_job=job_ended, runner=runner, copy_from=shipped_directory())
    except (BuildError, TableFileError, OSError) as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        click.echo(f"interrupted: {sum(len(job) for job in jobs)} tables are built in {folder}; run the same "
                   "command again to build the rest", err=True)
        sys.exit(130)
    size = sum(report.file_bytes for report in built)
    click.echo(f"{len(built)} tables, {sum(report.positions for report in built):,} positions, "
               f"{size:,} bytes, in {time.perf_counter() - started:.1f} s")
    solved = [job[0] for job in jobs if job[0].seconds is not None]
    if solved:
        cpu = sum(report.cpu_seconds or 0.0 for report in solved)
        peaks = [report.peak_bytes for report in solved if report.peak_bytes is not None]
        largest = f", the largest job's peak memory {max(peaks) / 2**20:,.0f} MB" if peaks else ""
        click.echo(f"{len(solved)} jobs solved: {sum(report.seconds or 0.0 for report in solved):,.1f} s of "
                   f"jobs, {cpu:,.1f} s of CPU{largest}")


@egdb.command("probe")
@click.argument("position")
@_DIRECTORY
@click.option("--moves", is_flag=True, help="Also show the value after each legal move.")
def egdb_probe(position: str, directory: str | None, moves: bool) -> None:
    """The value of POSITION (FEN or Hub string) for the side to move.

    The default folder is the user's data folder when it holds tables, else the tables
    shipped with Pedina.
    """
    try:
        root = Position.parse(position)
    except PositionError as error:
        raise click.BadParameter(str(error), param_hint="POSITION") from None
    databases = [EndgameDatabase(folder) for folder in _read_folders(directory)]

    def probe(position: Position) -> DatabaseValue | None:
        for database in databases:
            value = database.probe(position)
            if value is not None:
                return value
        return None

    try:
        value = probe(root)
        if value is None:
            pieces = (root.white | root.black).bit_count()
            covered = " and ".join(f"{database.directory} up to {database.pieces}" for database in databases)
            raise click.ClickException(f"no table holds this position ({pieces} pieces; the tables cover every "
                                       f"position with: {covered})")
        click.echo(f"{root.fen()}  {_mover(root.white_to_move)} to move: {value}")
        if moves:
            legal = legal_moves(root)
            for move in legal:
                after = probe(root.play(move))
                text = "has no piece left: a loss" if after is None else f"to move: {after}"
                click.echo(f"  {format_pdn(move, legal):<12} then {_mover(not root.white_to_move)} {text}")
    except TableFileError as error:
        raise click.ClickException(str(error)) from None
    finally:
        for database in databases:
            database.close()


@egdb.command("verify")
@_DIRECTORY
@click.option("--pieces", type=click.IntRange(2, MAX_BUILD_PIECES), default=None,
              help="Check only the tables of this many pieces [default: every table].")
@click.option("--workers", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Processes checking tables at the same time.")
def egdb_verify(directory: str | None, pieces: int | None, workers: int) -> None:
    """Check every position of every table in the folder against its successors.

    The default folder is the user's data folder when it holds tables, else the tables
    shipped with Pedina. One line per table as it is checked, then the totals. Exits
    with status 1 when a value or a table's counts are wrong.
    """
    folder = _read_folders(directory)[0]
    signatures = [signature for signature in EndgameDatabase(folder).signatures
                  if pieces is None or sum(signature) == pieces]
    if not signatures:
        raise click.ClickException(f"no tables{'' if pieces is None else f' of {pieces} pieces'} in {folder}")
    total = sum(SliceIndex(signature).positions_count for signature in signatures)
    reports: list[VerifyReport] = []
    started = time.perf_counter()
    try:
        with click.progressbar(length=total, label=f"verifying {folder}", show_eta=True,
                               file=sys.stderr) as bar:

            def checked(report: VerifyReport) -> None:
                reports.append(report)
                status = "ok" if report.ok else (f"{report.errors:,} wrong" if report.errors else "counts differ")
                _above_bar(bar, [f"{slice_name(report.signature):<16} {report.positions:>12,} positions  {status}"]
                           + [f"    {example}" for example in report.examples])

            verify_databases(folder, progress=bar.update, on_table=checked, workers=workers, pieces=pieces)
    except (TableFileError, LookupError) as error:
        raise click.ClickException(str(error)) from None
    except KeyboardInterrupt:
        click.echo(f"interrupted: {len(reports)} tables checked, "
                   f"{sum(not report.ok for report in reports)} with errors", err=True)
        sys.exit(130)
    bad = sum(not report.ok for report in reports)
    click.echo(f"{len(reports)} tables, {sum(report.positions for report in reports):,} positions, "
               f"in {time.perf_counter() - started:.1f} s: " + ("all correct" if not bad else f"{bad} with errors"))
    if bad:
        raise SystemExit(1)
