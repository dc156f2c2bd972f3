"""Playing a match: a venue plays the scheduled games, the main thread keeps the score.

A :class:`Venue` is where the games are played: :class:`ThreadVenue` runs worker
threads on this machine, each playing its games with
:func:`~pedina.protocol.match.game.play_hub_game` on its own engines;
:class:`~pedina.protocol.match.cluster.ClusterVenue` plays them as tasks on a Dask
cluster. Either hands each finished game to the main thread, which writes it to the
PDN file at once (so a match can be interrupted and resumed), shows progress and
runs the SPRT.
"""

from __future__ import annotations

import os
import queue
import socket
import sys
import threading
import time
from dataclasses import dataclass
from typing import Protocol, Sequence, TypeAlias

from pedina.pdn import write_game
from pedina.protocol.engineclient import EngineError
from pedina.protocol.interrupts import interrupt_requests
from pedina.protocol.match.console import Console, clock_text
from pedina.protocol.match.game import Aborted, EngineSpec, GameRecord, ScheduledGame, Seats, Settings, play_hub_game
from pedina.protocol.match.options import MatchError
from pedina.protocol.match.resume import game_headers, load_finished
from pedina.protocol.pdnfile import PdnOut
from pedina.protocol.match.stats import Sprt
from pedina.protocol.match.tally import Tally

#: Where a venue puts each finished game, or the exception that stops the match.
Finished: TypeAlias = "queue.Queue[GameRecord | BaseException]"


class Venue(Protocol):
    """Where a match's games are played.

    :func:`run_match` calls :meth:`start` once (unless the SPRT has decided already),
    polls :meth:`busy`, may call :meth:`halt`, and always ends with :meth:`close`.
    """

    def describe(self) -> str:
        """How the games are played, for the match's first line (e.g. ``concurrency 2``)."""

    def start(self, games: Sequence[ScheduledGame], specs: Sequence[EngineSpec], settings: Settings,
              done: Finished) -> None:
        """Begin playing ``games``; put each finished game (or an error that must stop the
        match) on ``done``. Each game is put there at most once."""

    def busy(self) -> bool:
        """Games may still be put on ``done``."""

    def halt(self) -> None:
        """Stop: games not begun are never played, games in play are dropped and their engines
        stopped. Safe to call more than once."""

    def close(self) -> None:
        """Halt, then release everything the venue holds (threads, engines, tasks)."""


class ThreadVenue:
    """``concurrency`` worker threads on this machine, each with its own engine processes."""

    def __init__(self, concurrency: int = 1) -> None:
        self.concurrency = max(1, concurrency)
        self._stop = threading.Event()
        self._seats: list[Seats] = []
        self._workers: list[threading.Thread] = []

    def describe(self) -> str:
        """``concurrency N``."""
        return f"concurrency {self.concurrency}"

    def start(self, games: Sequence[ScheduledGame], specs: Sequence[EngineSpec], settings: Settings,
              done: Finished) -> None:
        """Start the worker threads; each takes the next game not begun until none is left."""
        pending: queue.Queue[ScheduledGame] = queue.Queue()
        for game in games:
            pending.put(game)

        def work(seats: Seats) -> None:
            try:
                while not self._stop.is_set():
                    try:
                        game = pending.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        done.put(play_hub_game(game, specs, seats, settings, self._stop))
                    except Aborted:
                        return
                    if settings.restart:
                        seats.close_all()
            except BaseException as error:  # report to the main thread, which re-raises it
                done.put(error)
            finally:
                seats.close_all()

        self._seats = [Seats(specs, settings) for _ in range(self.concurrency)]
        self._workers = [threading.Thread(target=work, args=(seats,), daemon=True) for seats in self._seats]
        for worker in self._workers:
            worker.start()

    def busy(self) -> bool:
        """A worker thread is still running."""
        return any(worker.is_alive() for worker in self._workers)

    def halt(self) -> None:
        """Set the stop flag and stop every engine process (games in play then raise :class:`Aborted`)."""
        self._stop.set()  # before the engines go: games in play are then dropped, not scored
        for seats in self._seats:
            seats.close_all()

    def close(self) -> None:
        """Halt and wait (up to 5 s each) for the worker threads to end."""
        self.halt()
        for worker in self._workers:
            if worker.is_alive():
                worker.join(timeout=5.0)


@dataclass
class MatchOutcome:
    """What :func:`run_match` did: the score of every game (resumed ones too), the games it played,
    the number resumed, the SPRT's decision (``"H0"``, ``"H1"`` or ``None``), whether it was
    interrupted, and its running time in seconds."""

    tally: Tally
    played: list[GameRecord]
    resumed: int
    sprt: str | None
    interrupted: bool
    seconds: float


def run_match(specs: Sequence[EngineSpec], games: Sequence[ScheduledGame], settings: Settings, *,
              venue: Venue | None = None, pdn_path: str | None = None, resume: bool = False,
              sprt: Sprt | None = None, event: str = "Pedina match",
              console: Console | None = None) -> MatchOutcome:
    """Play ``games`` (less those already in the PDN file when resuming) at ``venue`` (default:
    one thread here) and tally them."""
    console = console or Console(sys.stdout)
    venue = venue or ThreadVenue()
    tally = Tally()
    finished: dict[int, GameRecord] = {}
    if pdn_path is not None and resume and os.path.exists(pdn_path):
        finished, dropped = load_finished(pdn_path, games, specs)
        if dropped:
            console.message(f"dropped {dropped} unfinished game(s) at the end of {pdn_path}")
        console.message(f"resuming: {len(finished)} of {len(games)} games already played")
    for number in sorted(finished):
        tally.add(finished[number])
    done: Finished = queue.Queue()
    out = PdnOut(pdn_path) if pdn_path is not None else None
    site = socket.gethostname() or "?"
    started = time.monotonic()
    decision = sprt.decision(*tally.wdl(0)) if sprt is not None else None
    played: list[GameRecord] = []
    interrupted = False
    names = (f"{specs[0].name} vs {specs[1].name}" if len(specs) == 2 else f"{specs[0].name} vs field")

    def show(force: bool = False) -> None:
        est = tally.estimate(0)
        text = f"{tally.games}/{len(games)} games  {names}: {est.summary()}"
        if sprt is not None:
            text += f"  LLR {sprt.llr(*tally.wdl(0)):.2f} [{sprt.lower:.2f}, {sprt.upper:.2f}]"
        text += f"  {clock_text(time.monotonic() - started)}"
        console.progress(text, force)

    def take(item: GameRecord) -> None:
        if out is not None:
            out.write(write_game(item.board, game_headers(item, specs, event, site,
                                                          time.strftime("%Y.%m.%d")), item.result,
                                 item.move_notes()))
        played.append(item)
        tally.add(item)
        if item.failure is not None:
            failure = item.failure
            console.message(f"game {item.game.number} (round {item.game.round}, "
                            f"{specs[item.game.white].name} - {specs[item.game.black].name}): "
                            f"{failure.engine} loses by {failure.reason}: {failure.message}")
            console.message(f"  last lines of {failure.engine}:")
            for line in failure.tail:
                console.message(f"    {line}")

    # Ctrl-C or a kill (SIGTERM) stops the match: engines ended, finished games kept
    try:
        with interrupt_requests() as interruption:
            if decision is None:
                venue.start([game for game in games if game.number not in finished], specs, settings, done)
            show(force=True)
            while not interruption.is_set() and (decision is None and venue.busy() or not done.empty()):
                try:
                    item = done.get(timeout=0.5)
                except queue.Empty:
                    show()
                    continue
                if isinstance(item, BaseException):
                    raise item
                take(item)
                if sprt is not None and decision is None:
                    decision = sprt.decision(*tally.wdl(0))
                    if decision is not None:
                        venue.halt()
                show()
            if interruption.is_set():
                interrupted = True
                venue.halt()
                while not done.empty():  # games that ended before the interruption are kept
                    item = done.get()
                    if isinstance(item, GameRecord):
                        take(item)
    finally:
        venue.close()
        if out is not None:
            out.close()
    show(force=True)
    if console.tty:
        console.message("")
    return MatchOutcome(tally, played, len(finished), decision, interrupted, time.monotonic() - started)


def check_engines(specs: Sequence[EngineSpec], settings: Settings) -> None:
    """Start each engine once: a wrong command, parameter or variant is a setup error."""
    seats = Seats(specs, settings)
    try:
        for index in range(len(specs)):
            try:
                seats.get(index)
            except EngineError as error:
                raise MatchError(str(error)) from None
    finally:
        seats.close_all()
