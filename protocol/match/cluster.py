"""Matches and other long work on a Dask cluster: one task a game, played by engines on the worker.

``pedina match --cluster ADDRESS`` hands the games to Dask's ``distributed``
scheduler instead of local threads (:class:`ClusterVenue`); everything else
(the PDN file, progress, the table, the SPRT, ``--resume``) is the runner's own.
A task (:func:`play_cluster_game`) carries the engine settings (command,
``dir=``, options), starts the engines on its worker and returns the finished
:class:`~pedina.protocol.match.game.GameRecord`. A worker keeps its engines
between the games of a match, one set per worker thread, until the match ends
(:func:`release_match`). When a worker dies, the scheduler plays its games
again elsewhere; the runner sees each task's result once.

:func:`cluster_client` connects (or starts a local cluster) and
:class:`ClusterTasks` runs any function as tasks, for the self-play script too.
Dask is optional (``pip install 'pedina[cluster]'``): it is imported only here,
and only when a cluster is asked for.

Games travel between processes pickled. The engine's compiled (mypyc) classes do
not pickle by themselves, so this module registers reducers for positions, moves
and boards built on their public constructors (:mod:`copyreg`); it is imported on
both ends, the workers loading it with the task functions.
"""

from __future__ import annotations

import copyreg
import json
import os
import re
import threading
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterator, Sequence, TypeVar

from pedina.board import Board
from pedina.move import Move
from pedina.position import Position
from pedina.protocol.match.game import Aborted, EngineSpec, GameRecord, ScheduledGame, Seats, Settings, play_hub_game
from pedina.protocol.match.options import MatchError
from pedina.protocol.match.runner import Finished, check_engines

if TYPE_CHECKING:
    from distributed import Client, Future

#: The one-line answer to ``--cluster`` without Dask.
INSTALL_HINT = "--cluster needs Dask's distributed scheduler: pip install 'pedina[cluster]'"

#: Seconds to wait for the scheduler to answer, and for a first worker to join it.
CONNECT_TIMEOUT = 10.0
#: Where a ``local:N`` cluster's scheduler serves HTTP: a free port on 127.0.0.1. Without an
#: address Dask takes port 8787, and warns on stderr when another cluster has it; ``":0"``
#: would listen on every interface.
LOCAL_HTTP_ADDRESS = "127.0.0.1:0"

ResultT = TypeVar("ResultT")


def _reduce_position(position: Position) -> tuple[type[Position], tuple[int, int, int, bool]]:
    return Position, (position.white, position.black, position.kings, position.white_to_move)


def _reduce_move(move: Move) -> tuple[type[Move], tuple[int, tuple[int, ...]]]:
    return Move, (move.start, move.path)


def replayed_board(start: Position, moves: Sequence[Move], repetitions: int, draw_plies: int) -> Board:
    """A board from ``start`` with ``moves`` played (how a pickled :class:`Board` is rebuilt)."""
    board = Board(start, repetitions=repetitions, draw_plies=draw_plies)
    for move in moves:
        board.push(move)
    return board


def _reduce_board(board: Board) -> tuple[Callable[..., Board], tuple[Position, tuple[Move, ...], int, int]]:
    return replayed_board, (board.start, tuple(board.moves), board.repetitions, board.draw_plies)


copyreg.pickle(Position, _reduce_position)
copyreg.pickle(Move, _reduce_move)
copyreg.pickle(Board, _reduce_board)

# Worker-side state of the matches this worker process plays: a set of engines per
# (match token, worker thread), and the flag that tells a match's games to stop.
_state_lock = threading.Lock()
_match_seats: dict[tuple[str, int], Seats] = {}
_match_stops: dict[str, threading.Event] = {}


def play_cluster_game(token: str, game: ScheduledGame, specs: Sequence[EngineSpec],
                      settings: Settings) -> GameRecord:
    """The task of one game, run on a worker: play ``game`` of the match ``token``.

    The engines are this worker thread's for the match, started at its first game
    (replaced after a failure, or after each game with ``settings.restart``). Raises
    :class:`Aborted` once the match is released.
    """
    with _state_lock:
        stop = _match_stops.setdefault(token, threading.Event())
        if stop.is_set():
            raise Aborted
        seats = _match_seats.setdefault((token, threading.get_ident()), Seats(specs, settings))
    try:
        return play_hub_game(game, specs, seats, settings, stop)
    finally:
        if settings.restart or stop.is_set():
            seats.close_all()


def release_match(token: str) -> None:
    """Run on every worker when the match ``token`` ends: its games in play abort and its
    engines stop. (The stop flag stays, so a game of the match that starts late aborts too.)"""
    with _state_lock:
        _match_stops.setdefault(token, threading.Event()).set()
        keys = [key for key in _match_seats if key[0] == token]
        released = [_match_seats.pop(key) for key in keys]
    for seats in released:
        seats.close_all()


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise MatchError(INSTALL_HINT) from None
    return distributed


def scheduler_file_address(path: str) -> str:
    """The scheduler address in the scheduler file at ``path`` (JSON with an ``address``)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise MatchError(f"cannot read the scheduler file {path}: {error}") from None
    address = data.get("address") if isinstance(data, dict) else None
    if not isinstance(address, str):
        raise MatchError(f"{path} is not a Dask scheduler file (it has no \"address\")")
    return address


@contextmanager
def cluster_client(address: str) -> Iterator[Client]:
    """A Dask client for ``address``, closed afterwards.

    ``address`` is ``local:N`` (a new cluster of N one-thread worker processes on
    127.0.0.1, closed afterwards too), the path of a scheduler file (``dask scheduler
    --scheduler-file PATH``) or a scheduler address (``tcp://HOST:PORT``). Raises
    :class:`MatchError` without Dask, for a bad address, or when no scheduler with a
    worker answers within :data:`CONNECT_TIMEOUT` seconds.
    """
    distributed = _import_distributed()
    local = re.fullmatch(r"local:(\d+)", address.strip())
    cluster = None
    try:
        if local is not None:
            workers = int(local.group(1))
            if not 1 <= workers <= 256:
                raise MatchError(f"bad --cluster {address!r}: local:N needs 1 to 256 workers")
            cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                               host="127.0.0.1", dashboard_address=LOCAL_HTTP_ADDRESS)
            client = distributed.Client(cluster)
        elif os.path.isfile(address):
            client = distributed.Client(scheduler_file_address(address), timeout=CONNECT_TIMEOUT)
        elif re.fullmatch(r"(tcp|tls|inproc|ucx|ws|wss)://\S+", address):
            client = distributed.Client(address, timeout=CONNECT_TIMEOUT)
        else:
            raise MatchError(f"bad --cluster {address!r} (expected tcp://HOST:PORT, a scheduler file "
                             "or local:N)")
    except (OSError, ValueError, KeyError) as error:
        if cluster is not None:
            cluster.close()
        raise MatchError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    try:
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError):
            raise MatchError(f"the Dask scheduler at {address} has no workers (start some: "
                             f"dask worker {client.scheduler.address})") from None
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def cluster_summary(client: Client) -> str:
    """``N workers, T threads`` of the cluster now."""
    workers = client.scheduler_info()["workers"]
    threads = sum(int(info.get("nthreads", 0)) for info in workers.values())
    return f"{len(workers)} workers, {threads} threads"


class ClusterTasks(Generic[ResultT]):
    """``function(*call)`` for each of ``calls`` as a Dask task, submitted in order (the scheduler
    starts them roughly in that order), and more with :meth:`submit`; ``labels`` name them
    (``game 12``) in keys and errors."""

    def __init__(self, client: Client, function: Callable[..., ResultT], calls: Sequence[tuple[Any, ...]],
                 labels: Sequence[str]) -> None:
        from distributed import as_completed

        self.client = client
        self.function = function
        self.labels: list[str] = []
        self._batch = uuid.uuid4().hex[:12]
        # Tasks by index until their result is taken, so the workers can forget a result once read.
        self._futures: dict[int, Future[ResultT]] = {}
        self._index: dict[object, int] = {}  # by task key
        self._completed = as_completed(loop=client.loop)
        self._cancelled = False
        for label, call in zip(labels, calls):
            self.submit(call, label)

    def submit(self, call: tuple[Any, ...], label: str) -> int:
        """One more task, ``function(*call)`` named ``label``, which :meth:`results` yields too
        (when it is still iterating); its index, after those of ``calls``."""
        index = len(self.labels)
        future: Future[ResultT] = self.client.submit(self.function, *call, pure=False,
                                                     key=f"pedina-{label.replace(' ', '-')}-{self._batch}")
        self.labels.append(label)
        self._futures[index] = future
        self._index[future.key] = index
        self._completed.add(future)
        return index

    def results(self) -> Iterator[tuple[int, ResultT]]:
        """(index, result) of each task as it finishes, each task once, until none is left.

        A task's exception is raised here; so is :class:`MatchError` for a task the
        cluster gave up on (its workers died too often) or cancelled without
        :meth:`cancel` (the scheduler went away). After :meth:`cancel`, the tasks that
        did not finish are passed over.
        """
        from distributed.scheduler import KilledWorker

        for future in self._completed:
            index = self._index[future.key]
            label = self.labels[index]
            if self._cancelled and future.status != "finished":
                continue  # cancelled, or stopped by what the canceller did next
            if future.cancelled():
                raise MatchError(f"{label} was cancelled by the cluster (has the scheduler gone?)")
            try:
                result = future.result()
            except KilledWorker as error:
                raise MatchError(f"{label}: the Dask workers running it died too often ({error})") from None
            del self._futures[index]
            yield index, result

    def cancel(self) -> None:
        """Cancel the tasks not finished (a task already running on a worker runs on, its result dropped)."""
        self._cancelled = True
        self.client.cancel(list(self._futures.values()))


class ClusterVenue:
    """The match's games as tasks on the Dask cluster of ``client``, one task a game.

    A feeder thread puts each game's record on the runner's queue as its task
    finishes. :meth:`halt` cancels the tasks not finished and releases the match on
    every worker, so the games in play stop too.
    """

    def __init__(self, client: Client, address: str) -> None:
        self.client = client
        self.address = address
        self.token = uuid.uuid4().hex
        self._tasks: ClusterTasks[GameRecord] | None = None
        self._feeder: threading.Thread | None = None
        self._lock = threading.Lock()
        self._halted = False

    def describe(self) -> str:
        """``Dask cluster ADDRESS (N workers, T threads)``."""
        return f"Dask cluster {self.address} ({cluster_summary(self.client)})"

    def start(self, games: Sequence[ScheduledGame], specs: Sequence[EngineSpec], settings: Settings,
              done: Finished) -> None:
        """Submit one task per game, and start the feeder thread."""
        tasks = ClusterTasks(self.client, play_cluster_game, [(self.token, game, specs, settings) for game in games],
                             [f"game {game.number}" for game in games])
        self._tasks = tasks

        def feed() -> None:
            try:
                for _, record in tasks.results():
                    done.put(record)
            except BaseException as error:  # a game aborted by the halt itself is no error
                if not self._halted:
                    done.put(error)

        self._feeder = threading.Thread(target=feed, name="pedina-cluster-feeder", daemon=True)
        self._feeder.start()

    def busy(self) -> bool:
        """Some task has not finished (nor been cancelled)."""
        return self._feeder is not None and self._feeder.is_alive()

    def halt(self) -> None:
        """Cancel the tasks not finished and release the match on every worker (once)."""
        with self._lock:
            if self._halted:
                return
            self._halted = True
        try:
            if self._tasks is not None:
                self._tasks.cancel()
            self.client.run(release_match, self.token, on_error="ignore")
        except OSError:  # the scheduler is gone: its workers' games stop with them
            pass

    def close(self) -> None:
        """Halt and wait (up to 5 s) for the feeder thread to end."""
        self.halt()
        if self._feeder is not None:
            self._feeder.join(timeout=5.0)


def check_cluster_engines(client: Client, specs: Sequence[EngineSpec], settings: Settings) -> None:
    """Start each engine once on every worker (a task pinned to it): a wrong command, parameter
    or variant there is a setup error naming the worker."""
    workers = sorted(client.scheduler_info()["workers"])
    futures = [client.submit(check_engines, specs, settings, workers=[worker], allow_other_workers=False,
                             pure=False, key=f"pedina-check-{uuid.uuid4().hex[:12]}") for worker in workers]
    for worker, future in zip(workers, futures):
        try:
            future.result()
        except MatchError as error:
            raise MatchError(f"on worker {worker}: {error.message}") from None
