"""Retrograde analysis: solving the tables of a job, writing them, and the whole build.

A job (:func:`pedina.egdb.slices.build_jobs`) is a signature with its colour flip:
a quiet move (a king's step, or a man's step that does not promote) leads from a
position of one to a position of the other, while a capture or a promotion
leads out of the job, into a table built before (an *exit*). Solving a job:

1. **Scan** every position forward with :mod:`pedina.movegen`. Without a move it
   is lost. With a capture every move is an exit, so its value is settled at once
   from the exits' tables. Otherwise a promotion that wins wins; each quiet move
   inside the job is counted, plus one for a promotion to a draw.
2. **Retrograde**: from every settled win or loss, go back one quiet move to
   its predecessors (the moving side's piece stepped back; a predecessor with a
   capture had no quiet move, and is skipped). A loss makes each predecessor a
   win; a win takes one off each predecessor's count, and a count reaching zero
   is a loss. What is never settled is a draw.
3. **Distances** (tables that store them): the plies to the next capture or man
   move, or to the end, with the winner hastening it and the loser delaying it.
   A win with a winning capture, promotion or man step is 1, a loss without a
   move 0, a loss whose moves are all captures, promotions or man steps 1; then,
   breadth first over king steps only, a win is 1 + the nearest loss it steps to,
   and a loss 1 + the farthest win, once all its king steps are known.

The values are the game's with best play: the repetition and 40-move draws are
not applied (a table says who wins, and the distance how soon the next
irreversible move comes, which is what the 40-move count needs).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import signal
import sys
import tempfile
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from queue import SimpleQueue
from typing import NamedTuple, Protocol, TypeVar

from pedina.egdb.probe import SHIPPED_PIECES, EndgameDatabase, table_path
from pedina.egdb.slices import (
    Job,
    Signature,
    SliceIndex,
    build_jobs,
    job_dependencies,
    signature_of,
    slice_name,
)
from pedina.egdb.store import (
    LOSS_CODE,
    MAX_DISTANCE,
    RESULT_OF_CODE,
    WIN_CODE,
    TableFile,
    filled_holes,
    TableFileError,
    loss_code,
    result_counts,
    win_code,
    write_table,
    write_whole,
)
from pedina.movegen import generate_captures, generate_non_captures
from pedina.squares import BOARD, SQUARE_BIT

#: ``counts`` value of a position with a capture: it has no move inside the job.
_CAPTURES = 255
#: ``flags`` bits: a win by a capture, promotion or man step; a position without moves.
_ZEROING_WIN = 1
_NO_MOVES = 2
#: Positions between two progress reports (the scan, the retrograde pass, verification).
PROGRESS_TICK = 4096

#: Squares a king on a square came from in one step, and a white man (moving up).
_KING_ORIGINS: dict[int, tuple[int, ...]] = {
    bit: tuple(frm for frm in (bit << 4, bit << 5, bit >> 4, bit >> 5) if frm & BOARD) for bit in SQUARE_BIT[1:]}
_MAN_ORIGINS: dict[int, tuple[int, ...]] = {
    bit: tuple(frm for frm in (bit << 4, bit << 5) if frm & BOARD) for bit in SQUARE_BIT[1:]}
#: ``progress(positions)``: that many more positions of work are done.
Progress = Callable[[int], None]
#: What solving a job away from its folder gives (:func:`build_job_files`): each table's file, and the reports.
JobFiles = tuple[dict[Signature, bytes], list["SliceReport"]]

_Item = TypeVar("_Item")


def counted(items: Iterable[_Item], progress: Progress | None) -> Iterator[_Item]:
    """``items``, telling ``progress`` of every :data:`PROGRESS_TICK` of them taken, and of
    the rest when they run out (a call per item would cost more than the item's work)."""
    done = 0
    for item in items:
        yield item
        done += 1
        if progress is not None and done == PROGRESS_TICK:
            progress(done)
            done = 0
    if progress is not None and done:
        progress(done)


def _popped(queue: array[int]) -> Iterator[int]:
    """The items of ``queue`` popped one by one until it is empty, while it may grow."""
    while queue:
        yield queue.pop()


class BuildError(Exception):
    """A table cannot be built (a table it needs is missing, or a distance overflows)."""


class SliceReport(NamedTuple):
    """What building (or finding) one table gave: its positions, results and file, and what
    solving its job cost (a tuple: it comes back from worker processes and cluster tasks)."""

    signature: Signature
    #: Positions of the table (holes left out).
    positions: int
    #: (wins, losses, draws) for the side to move (White).
    counts: tuple[int, int, int]
    file_bytes: int
    #: Time to solve the job the table belongs to; ``None`` when it was not solved here.
    seconds: float | None
    #: CPU time of the thread that solved the job (``None``: not solved here).
    cpu_seconds: float | None = None
    #: Peak resident memory of the process that solved the job, in bytes, while it did on
    #: Linux, over the process's life elsewhere (``None``: not solved here, or not known).
    peak_bytes: int | None = None
    #: Whether the table was copied from another folder (the shipped tables) rather than solved.
    copied: bool = False


def _restart_peak_memory() -> None:
    """Count this process's peak memory from now on where the system allows it (Linux resets
    it on a write to ``/proc/self/clear_refs``); elsewhere the peak stays the process's life's."""
    try:
        with open("/proc/self/clear_refs", "w") as control:
            control.write("5")
    except OSError:
        pass


def _peak_memory() -> int | None:
    """This process's peak resident memory in bytes (see :func:`_restart_peak_memory`), or
    ``None`` where the system does not say (Windows)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import resource
    except ImportError:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, Linux KB


class _Part:
    """One table of a job while it is solved."""

    def __init__(self, signature: Signature, distances: bool) -> None:
        self.signature = signature
        self.distances = distances
        self.index = SliceIndex(signature)
        size = self.index.size
        #: 0 unknown (a draw at the end), WIN_CODE, LOSS_CODE; distance codes after phase 3.
        self.values = bytearray(size)
        #: Quiet moves inside the job not yet known to lose (+1 for a drawn promotion), or _CAPTURES.
        self.counts = bytearray(size)
        #: Distance tables only: quiet king moves, and the _ZEROING_WIN / _NO_MOVES flags.
        self.king_moves = bytearray(size if distances else 0)
        self.flags = bytearray(size if distances else 0)


def _exit_result(database: EndgameDatabase, us: int, them: int, kings: int) -> int:
    """WIN_CODE, LOSS_CODE or 0 (draw) for the side to move after a capture or promotion
    by White: the position with Black (owning ``them``) to move, looked up as its flip."""
    if not them:
        return LOSS_CODE
    code = database.black_code(us, them, kings)
    if code < 0:
        missing = table_path(database.directory, signature_of(them, us, kings))
        raise BuildError(f"{missing} is needed and missing (build the smaller tables first)")
    return RESULT_OF_CODE[code]


def _scan(part: _Part, number: int, database: EndgameDatabase, queue: array[int],
          progress: Progress | None) -> None:
    """Phase 1 for one table: settle what the moves settle at once, count the rest."""
    values = part.values
    counts = part.counts
    distances = part.distances
    king_moves = part.king_moves
    flags = part.flags
    board = BOARD
    for index, us, them, kings in counted(part.index.positions(), progress):
        empty = board ^ us ^ them
        captures = generate_captures(us, them, kings, True, empty)
        if captures:
            counts[index] = _CAPTURES
            result = LOSS_CODE
            for frm, to, taken, toggle, _ in captures:
                child = _exit_result(database, us ^ frm ^ to, them ^ taken, kings ^ toggle)
                if child == LOSS_CODE:
                    result = WIN_CODE
                    break
                if child == 0:
                    result = 0
            if result:
                values[index] = result
                queue.append(index << 1 | number)
                if distances and result == WIN_CODE:
                    flags[index] = _ZEROING_WIN
            continue
        non_captures = generate_non_captures(us, kings, True, empty)
        if not non_captures:
            values[index] = LOSS_CODE
            queue.append(index << 1 | number)
            if distances:
                flags[index] = _NO_MOVES
            continue
        inside = 0
        kings_stepping = 0
        drawn = 0
        won = False
        for frm, to, _, toggle, _ in non_captures:
            if frm & kings:
                inside += 1
                kings_stepping += 1
            elif toggle:  # a man promoted: an exit
                child = _exit_result(database, us ^ frm ^ to, them, kings ^ toggle)
                if child == LOSS_CODE:
                    won = True
                    break
                if child == 0:
                    drawn = 1
            else:
                inside += 1
        if won:
            values[index] = WIN_CODE
            queue.append(index << 1 | number)
            if distances:
                flags[index] = _ZEROING_WIN
            continue
        if distances:
            king_moves[index] = kings_stepping
        if inside + drawn == 0:  # every move a promotion that loses
            values[index] = LOSS_CODE
            queue.append(index << 1 | number)
        else:
            counts[index] = inside + drawn


def _predecessors(child: SliceIndex, index: int, parent: SliceIndex, kings_only: bool) -> list[int]:
    """The positions one quiet move before position ``index`` of table ``child``, as
    ``parent_index << 1 | man_step``: the side that just moved (Black, seen from the
    child; White in the parent's table) steps a king, or a man back, to an empty square.
    Whether the parent had a capture instead is for the caller to check."""
    them, us, kings = child.position(index, turned=True)
    empty = BOARD ^ us ^ them
    base = parent.index(us, them, kings)
    found = []
    moved = us & kings
    rank = parent.white_kings.rank
    stride = parent.white_kings_stride
    others = base - rank[moved] * stride
    pieces = moved
    while pieces:
        to = pieces & -pieces
        pieces ^= to
        for frm in _KING_ORIGINS[to]:
            if frm & empty:
                found.append((others + rank[moved ^ frm ^ to] * stride) << 1)
    if not kings_only:
        moved = us & ~kings
        rank = parent.white_men.rank
        stride = parent.white_men_stride
        others = base - rank[moved] * stride
        pieces = moved
        while pieces:
            to = pieces & -pieces
            pieces ^= to
            for frm in _MAN_ORIGINS[to]:
                if frm & empty:
                    found.append((others + rank[moved ^ frm ^ to] * stride) << 1 | 1)
    return found


def _retrograde(parts: list[_Part], queue: array[int], progress: Progress | None) -> None:
    """Phase 2: settle predecessors from the settled positions until none is left."""
    for item in counted(_popped(queue), progress):
        number = item & 1
        part = parts[number]
        parent = parts[len(parts) - 1 - number]
        parent_number = len(parts) - 1 - number
        values = parent.values
        counts = parent.counts
        flags = parent.flags
        distances = parent.distances
        lost = part.values[item >> 1] == LOSS_CODE
        for found in _predecessors(part.index, item >> 1, parent.index, False):
            index = found >> 1
            count = counts[index]
            if count == _CAPTURES:
                continue
            if lost:
                if distances and found & 1:
                    flags[index] |= _ZEROING_WIN
                if not values[index]:
                    values[index] = WIN_CODE
                    queue.append(index << 1 | parent_number)
            elif not values[index]:
                count -= 1
                counts[index] = count
                if not count:
                    values[index] = LOSS_CODE
                    queue.append(index << 1 | parent_number)


def _distances(parts: list[_Part]) -> None:
    """Phase 3: turn every win and loss into its distance code, breadth first."""
    current = array("q")
    following = array("q")
    for number, part in enumerate(parts):
        values, flags, king_moves = part.values, part.flags, part.king_moves
        for index in range(len(values)):
            value = values[index]
            if value == WIN_CODE and flags[index] & _ZEROING_WIN:
                values[index] = win_code(1)
                following.append(index << 1 | number)
            elif value == LOSS_CODE and not king_moves[index]:
                if flags[index] & _NO_MOVES:
                    values[index] = loss_code(0)
                    current.append(index << 1 | number)
                else:
                    values[index] = loss_code(1)
                    following.append(index << 1 | number)
    distance = 0
    while current or following:
        reached = distance + 1
        for item in current:
            number = item & 1
            part = parts[number]
            parent_number = len(parts) - 1 - number
            parent = parts[parent_number]
            values, counts, king_moves = parent.values, parent.counts, parent.king_moves
            won = part.values[item >> 1] & 1
            for found in _predecessors(part.index, item >> 1, parent.index, True):
                index = found >> 1
                if counts[index] == _CAPTURES:
                    continue
                value = values[index]
                if won:
                    if value == LOSS_CODE:
                        left = king_moves[index] - 1
                        king_moves[index] = left
                        if not left:
                            if reached > MAX_DISTANCE - 2:
                                raise BuildError(f"a loss {reached} plies deep does not fit a code")
                            values[index] = loss_code(reached)
                            following.append(index << 1 | parent_number)
                elif value == WIN_CODE:
                    if reached > MAX_DISTANCE:
                        raise BuildError(f"a win {reached} plies deep does not fit a code")
                    values[index] = win_code(reached)
                    following.append(index << 1 | parent_number)
        current, following = following, array("q")
        distance = reached
    for part in parts:
        if WIN_CODE in part.values or LOSS_CODE in part.values:
            raise BuildError(f"{slice_name(part.signature)}: a win or loss got no distance")


def solve_job(job: Job, database: EndgameDatabase, distances: bool,
              progress: Progress | None = None) -> list[bytearray]:
    """The codes of each table of ``job`` (see :mod:`pedina.egdb.store`), its exits
    read from ``database``. ``progress`` gets each table's positions twice (scan,
    then retrograde and the draws left over)."""
    database.load([signature for signature in job_dependencies(job) if signature in database.signatures])
    parts = [_Part(signature, distances) for signature in job]
    # Settled positions to go back from, as index << 1 | table: 4 bytes each where that
    # fits (every table of up to 6 pieces), which halves the largest 6-piece job's queue.
    queue = array("I" if 2 * max(part.index.size for part in parts) < 1 << 32 else "q")
    for number, part in enumerate(parts):
        _scan(part, number, database, queue, progress)
    _retrograde(parts, queue, progress)
    if progress is not None:
        progress(sum(part.index.positions_count for part in parts)
                 - sum(len(part.values) - part.values.count(0) for part in parts))
    if distances:
        _distances(parts)
    return [part.values for part in parts]


def job_positions(job: Job) -> int:
    """Positions of a job's tables, holes left out."""
    return sum(SliceIndex(signature).positions_count for signature in job)


def built_report(directory: str, signature: Signature) -> SliceReport | None:
    """The report of a table already in ``directory``, ``None`` when it is missing or
    unreadable (an interrupted build leaves no half-written table: files are renamed
    into place when complete)."""
    try:
        table = TableFile(table_path(directory, signature))
    except TableFileError:
        return None
    index = SliceIndex(signature)
    report = None
    if table.signature == signature and table.size == index.size:
        report = SliceReport(signature, index.positions_count, table.counts, table.compressed_size, None)
    table.close()
    return report


def copied_job(directory: str, job: Job, source: str, distances: bool) -> list[SliceReport] | None:
    """Copy the tables of ``job`` from the folder ``source`` into ``directory`` when they are
    there, sound and stored as asked (with distances or without): they are what solving the
    job would write. Their reports, or ``None`` (nothing copied) when one is not."""
    found = []
    for signature in job:
        try:
            table = TableFile(table_path(source, signature))
        except TableFileError:
            return None
        fits = (table.signature == signature and table.size == SliceIndex(signature).size
                and table.distances == distances)
        found.append(SliceReport(signature, SliceIndex(signature).positions_count, table.counts,
                                 table.compressed_size, None, copied=True))
        table.close()
        if not fits:
            return None
    for signature in job:
        write_whole(table_path(directory, signature), [Path(table_path(source, signature)).read_bytes()])
    return found


def build_job(directory: str, job: Job, distances: bool,
              progress: Progress | None = None) -> list[SliceReport]:
    """Solve one job from the tables in ``directory`` and write its tables there; their reports
    give the job's wall and CPU time (writing included) and its process's peak memory."""
    database = EndgameDatabase(directory)
    _restart_peak_memory()
    started = time.perf_counter()
    cpu_started = time.thread_time()
    try:
        solved = solve_job(job, database, distances, progress)
    finally:
        database.close()
    written = []
    for signature, codes in zip(job, solved):
        index = SliceIndex(signature)
        counts = result_counts(codes, index.size - index.positions_count)
        size = write_table(table_path(directory, signature), signature, filled_holes(codes, index.validity()),
                           distances, counts)
        written.append((signature, index.positions_count, counts, size))
    seconds = time.perf_counter() - started
    cpu_seconds = time.thread_time() - cpu_started
    peak = _peak_memory()
    return [SliceReport(signature, positions, counts, size, seconds, cpu_seconds, peak)
            for signature, positions, counts, size in written]


def build_job_files(job: Job, inputs: dict[Signature, bytes], distances: bool) -> JobFiles:
    """Solve one job without its folder, as a machine that does not share it does:
    ``inputs`` are the files of the tables it reads (:func:`job_dependencies`), by
    signature; the result is the files of the job's tables and their reports. The
    work is done in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="pedina-egdb-") as scratch:
        for signature, data in inputs.items():
            Path(table_path(scratch, signature)).write_bytes(data)
        reports = build_job(scratch, job, distances)
        files = {signature: Path(table_path(scratch, signature)).read_bytes() for signature in job}
    return files, reports


class JobRunner(Protocol):
    """Where :func:`build_databases` has its jobs solved: it starts each job once the tables
    the job reads are in the folder, and waits for one to end whenever none is left to start."""

    def start(self, directory: str, job: Job, distances: bool) -> None:
        """Begin solving ``job`` from the tables in ``directory`` (with distances or not)."""

    def wait(self) -> tuple[Job, list[SliceReport]]:
        """A started job once it has ended, its tables written into its folder, with their reports."""


class _InProcess:
    """Jobs solved here, one at a time in the order started, ``progress`` told within each."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress
        self._started: deque[tuple[str, Job, bool]] = deque()

    def start(self, directory: str, job: Job, distances: bool) -> None:
        self._started.append((directory, job, distances))

    def wait(self) -> tuple[Job, list[SliceReport]]:
        directory, job, distances = self._started.popleft()
        return job, build_job(directory, job, distances, self._progress)


def worker_pool(workers: int) -> multiprocessing.pool.Pool:
    """A pool of ``workers`` processes that leave Ctrl-C (which reaches the whole process
    group) to this one, which ends them with ``terminate()`` at once: deep in a compiled job
    a worker would not see an interrupt before the job ended, minutes later. (A table is
    written whole or not at all.)"""
    return multiprocessing.Pool(workers, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))


class _ProcessPool:
    """Jobs solved in a pool of ``workers`` processes (:func:`worker_pool`), sharing the folder."""

    def __init__(self, workers: int) -> None:
        self._pool = worker_pool(workers)
        self._ended: SimpleQueue[tuple[Job, list[SliceReport] | BaseException]] = SimpleQueue()

    def start(self, directory: str, job: Job, distances: bool) -> None:
        self._pool.apply_async(build_job, (directory, job, distances),
                               callback=lambda reports: self._ended.put((job, reports)),
                               error_callback=lambda error: self._ended.put((job, error)))

    def wait(self) -> tuple[Job, list[SliceReport]]:
        job, ended = self._ended.get()
        if isinstance(ended, BaseException):
            raise ended
        return job, ended

    def close(self) -> None:
        self._pool.terminate()


def build_databases(directory: str, pieces: int, distance_pieces: int = SHIPPED_PIECES, workers: int = 1,
                    progress: Progress | None = None,
                    on_job: Callable[[list[SliceReport]], None] | None = None,
                    runner: JobRunner | None = None, copy_from: str | None = None) -> list[SliceReport]:
    """Build every table with at most ``pieces`` pieces into ``directory`` (made if
    needed), tables of at most ``distance_pieces`` pieces with distances; the reports
    of every table, in build order. A job whose tables are in the folder ``copy_from``
    (the shipped ones), stored as asked, is copied from there (:func:`copied_job`).

    Tables already there are kept, so an interrupted build goes on from the jobs it
    was in. A job starts as soon as the tables it reads (:func:`job_dependencies`)
    are built: ``workers`` > 1 solves that many jobs at a time in as many processes,
    and ``runner`` solves them wherever it does instead (``workers`` is then unused).
    ``progress`` advances within jobs when they are solved here one at a time, else a
    job at a time. ``on_job`` gets each job's reports as it ends (or is found built).
    """
    os.makedirs(directory, exist_ok=True)
    reports: dict[Signature, SliceReport] = {}
    here = runner is None and workers == 1
    solver = runner if runner is not None else _InProcess(progress) if here else _ProcessPool(workers)

    def finished(job: Job, job_reports: list[SliceReport], progressed: bool) -> None:
        reports.update((report.signature, report) for report in job_reports)
        if on_job is not None:
            on_job(job_reports)
        if progress is not None and not progressed:
            progress(2 * job_positions(job))

    jobs = build_jobs(pieces)
    waiting = []
    for job in jobs:
        found = [built_report(directory, signature) for signature in job]
        copies = None
        if any(report is None for report in found) and copy_from is not None:
            copies = copied_job(directory, job, copy_from, sum(job[0]) <= distance_pieces)
        if copies is not None:
            finished(job, copies, False)
        elif all(report is not None for report in found):
            finished(job, [report for report in found if report is not None], False)
        else:
            waiting.append(job)
    running = 0
    try:
        while waiting or running:
            for job in [job for job in waiting if all(needed in reports for needed in job_dependencies(job))]:
                waiting.remove(job)
                solver.start(directory, job, sum(job[0]) <= distance_pieces)
                running += 1
            job, job_reports = solver.wait()
            running -= 1
            finished(job, job_reports, here)
    finally:
        if isinstance(solver, _ProcessPool):
            solver.close()
    return [reports[signature] for job in jobs for signature in job]
