"""``pedina match``: engine-vs-engine matches between Hub engines, with statistics.

A match is a list of scheduled games (round robin or gauntlet; each opening
played twice per pair with the colours swapped) played by worker threads, each
playing its games with :func:`pedina.protocol.arbiter.play_game` on its own engine
processes. The main thread writes every finished game to the PDN file at once
(so a match can be interrupted and resumed), shows progress, runs the SPRT and
prints the final table.
"""

from __future__ import annotations

import importlib
import itertools
import math
import os
import queue
import random
import re
import shlex
import signal
import socket
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import Callable, Iterator, Sequence, TextIO

import click

from pedina.board import Board
from pedina.move import Move
from pedina.pdn import PdnError, read_game, read_games, write_game
from pedina.position import Position, PositionError
from pedina.protocol.arbiter import (Aborted, DrawRule, EngineSpec, GameRecord, Opening, ResignRule, ScheduledGame,
                              Seats, Settings, TimeControl, play_game)
from pedina.protocol.hubclient import EngineError
from pedina.protocol.stats import EloEstimate, Sprt, elo_estimate


class MatchError(click.ClickException):
    """A bad match setup: shown as one line, exit status 1."""


# -- settings from the command line ----------------------------------------------------


def parse_tc(text: str) -> tuple[float, float]:
    """``10+0.1``, ``40``, ``1:30+1`` as (seconds, increment)."""
    match = re.fullmatch(r"\s*(?:(\d+):)?(\d+(?:\.\d*)?)\s*(?:\+\s*(\d+(?:\.\d*)?))?\s*", text)
    if not match:
        raise MatchError(f"bad time control {text!r} (expected SECONDS[+INCREMENT], e.g. 10+0.1)")
    base = float(match.group(2)) + 60 * int(match.group(1) or 0)
    if base <= 0:
        raise MatchError(f"bad time control {text!r}: the clock must be positive")
    return base, float(match.group(3) or 0)


def _number(key: str, value: str, kind: Callable[[str], float]) -> float:
    try:
        number = kind(value)
    except ValueError:
        raise MatchError(f"bad value {key}={value!r} (expected a number)") from None
    if number <= 0:
        raise MatchError(f"bad value {key}={value!r} (must be positive)")
    return number


def parse_pairs(text: str, what: str) -> dict[str, str]:
    """``key=value`` words (as the shell gave them, joined by NUL by :class:`MatchCommand`)."""
    pairs: dict[str, str] = {}
    for word in (w for w in text.split("\0") if w.strip()):
        key, sep, value = word.partition("=")
        if not sep or not key.strip():
            raise MatchError(f"bad {what} argument {word!r} (expected key=value)")
        pairs[key.strip()] = value.strip()
    return pairs


def engine_spec(pairs: dict[str, str], common: dict[str, str], default_tc: TimeControl,
                number: int) -> EngineSpec:
    """An :class:`EngineSpec` from ``--engine`` pairs over ``--each`` pairs."""
    merged = {**common, **pairs}
    options: dict[str, str] = {}
    tc = TimeControl()
    for key, value in merged.items():
        if key.startswith("option."):
            options[key[len("option."):]] = value
        elif key == "tc":
            base, inc = parse_tc(value)
            tc = replace(tc, base=base, inc=inc)
        elif key == "st":
            tc = replace(tc, move_time=_number(key, value, float))
        elif key == "depth":
            tc = replace(tc, depth=int(_number(key, value, int)))
        elif key == "nodes":
            tc = replace(tc, nodes=int(_number(key, value, int)))
        elif key not in ("cmd", "name", "dir"):
            raise MatchError(f"unknown engine setting {key!r} (known: cmd, name, dir, tc, st, depth, "
                             "nodes, option.NAME)")
    if not merged.get("cmd"):
        raise MatchError(f"engine {number}: no cmd= given (e.g. --engine cmd=\"pedina hub\" name=A)")
    try:
        shlex.split(merged["cmd"])
    except ValueError as error:
        raise MatchError(f"engine {number}: bad cmd {merged['cmd']!r}: {error}") from None
    tc = tc.merged(default_tc)
    name = merged.get("name") or f"engine{number}"
    if not tc.is_set:
        raise MatchError(f"engine {name}: no time control (give --tc, --st, --depth or --nodes)")
    return EngineSpec(name, merged["cmd"], options, merged.get("dir") or None, tc)


def parse_rule(text: str, option: str, keys: Sequence[str]) -> dict[str, int]:
    pairs = parse_pairs(text, option)
    if set(pairs) != set(keys):
        raise MatchError(f"{option} needs exactly {' '.join(k + '=N' for k in keys)}")
    values = {}
    for key in keys:
        try:
            values[key] = int(pairs[key])
        except ValueError:
            raise MatchError(f"bad value {option} {key}={pairs[key]!r} (expected an integer)") from None
        if values[key] < (1 if key == "movecount" else 0):
            raise MatchError(f"bad value {option} {key}={pairs[key]!r} (too small)")
    return values


# -- openings and schedule ------------------------------------------------------------


def all_openings(plies: int = 3) -> list[Opening]:
    """Every legal sequence of ``plies`` moves from the start position, in Hub move text order."""
    openings: list[Opening] = []

    def extend(board: Board) -> None:
        if len(board.moves) == plies:
            openings.append(Opening(board.start, tuple(board.moves)))
            return
        for move in sorted(board.legal_moves(), key=Move.hub):
            board.push(move)
            extend(board)
            board.pop()

    extend(Board())
    return openings


def read_openings(path: str) -> list[Opening]:
    """Openings from a file of FEN (or Hub) positions, one a line, or of PDN games.

    A PDN game gives its start position and its moves. Openings whose game is already
    over are left out.
    """
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise MatchError(f"cannot read openings file {path}: {error.strerror or error}") from None
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    openings: list[Opening] = []
    try:
        openings = [Opening(Position.parse(line)) for line in lines]
    except PositionError:
        try:
            openings = [Opening(game.board.start, tuple(game.board.moves)) for game in read_games(text)]
        except PdnError as error:
            raise MatchError(f"openings file {path}: neither FEN lines nor PDN games ({error})") from None
    playable = [opening for opening in openings if not opening.board().is_game_over()]
    if not playable:
        raise MatchError(f"openings file {path}: no playable opening found")
    return playable


def schedule(engines: int, openings: Sequence[Opening], *, gauntlet: bool = False,
             rounds: int | None = None, games: int | None = None) -> list[ScheduledGame]:
    """The match's games in order: per round one opening, every pair playing it with both colours.

    Openings are used in order and cycled when there are more rounds than openings.
    """
    pairs = ([(0, other) for other in range(1, engines)] if gauntlet
             else list(itertools.combinations(range(engines), 2)))
    total_rounds = len(openings) if rounds is None else rounds
    result: list[ScheduledGame] = []
    for round_index in range(total_rounds):
        opening = openings[round_index % len(openings)]
        for first, second in pairs:
            for white, black in ((first, second), (second, first)):
                if games is not None and len(result) >= games:
                    return result
                result.append(ScheduledGame(len(result) + 1, round_index + 1, opening, white, black))
    return result


# -- output ---------------------------------------------------------------------------


def game_headers(record: GameRecord, specs: Sequence[EngineSpec], event: str, site: str,
                 date: str) -> dict[str, str]:
    white, black = specs[record.game.white], specs[record.game.black]
    tc = str(white.tc) if white.tc == black.tc else f"{white.tc} / {black.tc}"
    return {"Event": event, "Site": site, "Date": date, "Round": str(record.game.round),
            "White": white.name, "Black": black.name, "Result": record.result, "TimeControl": tc,
            "Termination": record.termination}


class PdnOut:
    """The PDN output file: each game appended, flushed and synced as soon as it ends."""

    def __init__(self, path: str) -> None:
        self._file: TextIO = open(path, "a", encoding="utf-8")

    def write(self, text: str) -> None:
        if self._file.tell() > 0:
            text = "\n" + text
        self._file.write(text)
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def _chunks(text: str) -> Iterator[str]:
    """The file split before each game's first tag line (games are separated by blank lines)."""
    blocks = re.split(r"\n\s*\n(?=\s*\[)", text)
    for block in blocks:
        if block.strip():
            yield block.strip() + "\n"


def load_finished(path: str, games: Sequence[ScheduledGame],
                  specs: Sequence[EngineSpec]) -> tuple[dict[int, GameRecord], int]:
    """The games of ``games`` already in the PDN file at ``path``, by schedule number.

    Games are matched by round and players, and must have the scheduled opening.
    A game without a result or that cannot be read (an interrupted write leaves one
    at the end) is dropped and the file rewritten without it; the number of games
    dropped is returned too.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise MatchError(f"cannot read {path}: {error.strerror or error}") from None
    by_key = {(game.round, specs[game.white].name, specs[game.black].name): game for game in games}
    finished: dict[int, GameRecord] = {}
    kept: list[str] = []
    dropped = 0
    for chunk in _chunks(text):
        try:
            pdn = read_game(chunk)
        except PdnError:
            dropped += 1
            continue
        if pdn.result == "*":
            dropped += 1
            continue
        headers = pdn.headers
        try:
            key = (int(headers.get("Round", "")), headers.get("White", ""), headers.get("Black", ""))
        except ValueError:
            key = (0, "", "")
        game = by_key.get(key)
        if (game is None or pdn.board.start != game.opening.start
                or tuple(pdn.board.moves[:len(game.opening.moves)]) != game.opening.moves):
            raise MatchError(f"{path} holds a game (round {headers.get('Round', '?')}, "
                             f"{headers.get('White', '?')} - {headers.get('Black', '?')}) that is not "
                             "in this match's schedule: resume with the same engines, openings and seed")
        if game.number in finished:
            raise MatchError(f"{path} holds the game of round {key[0]}, {key[1]} - {key[2]} twice")
        finished[game.number] = GameRecord(game, pdn.board, pdn.result, headers.get("Termination", ""))
        kept.append(chunk)
    if dropped:
        tmp = path + ".tmp"
        Path(tmp).write_text("\n".join(kept), encoding="utf-8")
        os.replace(tmp, path)
    return finished, dropped


def _elo_text(value: float) -> str:
    return f"{value + 0.0:+.1f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def _estimate_text(estimate: EloEstimate) -> str:
    return (f"Elo {_elo_text(estimate.elo)} ± {estimate.error:.1f} "
            f"[{_elo_text(estimate.low)}, {_elo_text(estimate.high)}]"
            if math.isfinite(estimate.error) else f"Elo {_elo_text(estimate.elo)}")


class Tally:
    """Win/draw/loss counts per pair of engines, terminations, failures, and engine 0's Elo history."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], list[int]] = {}   # (i, j), i < j: [i wins, draws, j wins]
        self.terminations: Counter[str] = Counter()
        self.failures: Counter[tuple[str, str]] = Counter()
        self.history: list[EloEstimate] = []                # engine 0 against the others, per game
        self.colours = [0, 0, 0]                            # White wins, draws, Black wins

    def add(self, record: GameRecord) -> None:
        first, second = sorted((record.game.white, record.game.black))
        counts = self.pairs.setdefault((first, second), [0, 0, 0])
        points = record.points(first)
        counts[0 if points == 1.0 else 1 if points == 0.5 else 2] += 1
        self.colours[{"1-0": 0, "0-1": 2}.get(record.result, 1)] += 1
        self.terminations[record.termination] += 1
        if record.failure is not None:
            self.failures[(record.failure.engine, record.failure.reason)] += 1
        self.history.append(self.estimate(0))

    def wdl(self, engine: int, opponent: int | None = None) -> tuple[int, int, int]:
        """``engine``'s wins, draws, losses against ``opponent`` (all opponents when ``None``)."""
        wins = draws = losses = 0
        for (first, second), (w, d, l) in self.pairs.items():
            if engine == first and opponent in (None, second):
                wins, draws, losses = wins + w, draws + d, losses + l
            elif engine == second and opponent in (None, first):
                wins, draws, losses = wins + l, draws + d, losses + w
        return wins, draws, losses

    def estimate(self, engine: int, opponent: int | None = None) -> EloEstimate:
        return elo_estimate(*self.wdl(engine, opponent))

    @property
    def games(self) -> int:
        return sum(sum(counts) for counts in self.pairs.values())


def final_table(tally: Tally, specs: Sequence[EngineSpec]) -> list[str]:
    """The results table: one row per engine (against the field), then one per pair."""
    rows = []
    width = max(len("Engine"), *(len(spec.name) for spec in specs))
    order = sorted(range(len(specs)), key=lambda i: -tally.estimate(i).score)
    rows.append(f"{'Rank':>4}  {'Engine':<{width}}  {'Games':>5}  {'Points':>6}  {'Score':>6}  "
                f"{'W':>4}  {'D':>4}  {'L':>4}  {'Elo':>7}  {'±95%':>6}  {'LOS':>6}")
    for rank, index in enumerate(order, start=1):
        est = tally.estimate(index)
        error = f"{est.error:.1f}" if math.isfinite(est.error) else "-"
        rows.append(f"{rank:>4}  {specs[index].name:<{width}}  {est.games:>5}  "
                    f"{est.wins + est.draws / 2:>6.1f}  {100 * est.score:>5.1f}%  {est.wins:>4}  "
                    f"{est.draws:>4}  {est.losses:>4}  {_elo_text(est.elo):>7}  {error:>6}  "
                    f"{100 * est.los:>5.1f}%")
    rows.append("")
    for first, second in sorted(tally.pairs):
        est = tally.estimate(first, second)
        rows.append(f"{specs[first].name} vs {specs[second].name}: +{est.wins} ={est.draws} "
                    f"-{est.losses}  score {100 * est.score:.1f}%  {_estimate_text(est)}  "
                    f"LOS {100 * est.los:.1f}%  draws {100 * est.draws / max(1, est.games):.0f}%")
    white = elo_estimate(*tally.colours)
    rows.append(f"White vs Black: +{white.wins} ={white.draws} -{white.losses}  "
                f"score {100 * white.score:.1f}%")
    if tally.terminations:
        rows.append("Terminations: " + ", ".join(f"{name} {count}" for name, count
                                                 in tally.terminations.most_common()))
    if tally.failures:
        rows.append("Engine failures: " + ", ".join(f"{engine} {reason} {count}" for (engine, reason), count
                                                    in sorted(tally.failures.items())))
    return rows


def plot_history(history: Sequence[EloEstimate], title: str, path: str) -> None:
    """Save a picture of the Elo estimate and its 95% interval after each game."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [(n, e) for n, e in enumerate(history, start=1) if math.isfinite(e.elo)]
    figure, axes = plt.subplots(figsize=(8, 4.5))
    if points:
        games = [n for n, _ in points]
        cap = 1000.0
        low = [max(-cap, e.low) for _, e in points]
        high = [min(cap, e.high) for _, e in points]
        axes.fill_between(games, low, high, alpha=0.25, label="95% interval")
        axes.plot(games, [e.elo for _, e in points], label="Elo estimate")
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xlabel("games")
    axes.set_ylabel("Elo difference")
    axes.set_title(title)
    axes.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


class Console:
    """The live progress line (rewritten in place on a terminal, periodic lines otherwise) and messages."""

    def __init__(self, stream: TextIO, every: float = 10.0) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every = every
        self._last = 0.0
        self._shown = False

    def progress(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            self._shown = True
        elif force or now - self._last >= self.every:
            self.stream.write(text + "\n")
            self._last = now
        self.stream.flush()

    def message(self, text: str) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self._shown = False
        self.stream.write(text + "\n")
        self.stream.flush()


# -- the match ------------------------------------------------------------------------


@dataclass
class MatchOutcome:
    tally: Tally
    played: list[GameRecord]
    resumed: int
    sprt: str | None
    interrupted: bool
    seconds: float


def run_match(specs: Sequence[EngineSpec], games: Sequence[ScheduledGame], settings: Settings, *,
              concurrency: int = 1, pdn_path: str | None = None, resume: bool = False,
              sprt: Sprt | None = None, event: str = "Pedina match",
              console: Console | None = None) -> MatchOutcome:
    """Play ``games`` (less those already in the PDN file when resuming) and tally them."""
    console = console or Console(sys.stdout)
    tally = Tally()
    finished: dict[int, GameRecord] = {}
    if pdn_path is not None and resume and os.path.exists(pdn_path):
        finished, dropped = load_finished(pdn_path, games, specs)
        if dropped:
            console.message(f"dropped {dropped} unfinished game(s) at the end of {pdn_path}")
        console.message(f"resuming: {len(finished)} of {len(games)} games already played")
    for number in sorted(finished):
        tally.add(finished[number])
    pending: queue.Queue[ScheduledGame] = queue.Queue()
    for game in games:
        if game.number not in finished:
            pending.put(game)
    done: queue.Queue[GameRecord | BaseException] = queue.Queue()
    stop = threading.Event()
    all_seats = [Seats(specs, settings) for _ in range(max(1, concurrency))]

    def work(seats: Seats) -> None:
        try:
            while not stop.is_set():
                try:
                    game = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    done.put(play_game(game, specs, seats, settings, stop))
                except Aborted:
                    return
                if settings.restart:
                    seats.close_all()
        except BaseException as error:  # report to the main thread, which re-raises it
            done.put(error)
        finally:
            seats.close_all()

    workers = [threading.Thread(target=work, args=(seats,), daemon=True) for seats in all_seats]
    out = PdnOut(pdn_path) if pdn_path is not None else None
    site = socket.gethostname() or "?"
    started = time.monotonic()
    decision = sprt.decision(*tally.wdl(0)) if sprt is not None else None
    played: list[GameRecord] = []
    interrupted = False
    names = (f"{specs[0].name} vs {specs[1].name}" if len(specs) == 2 else f"{specs[0].name} vs field")

    def show(force: bool = False) -> None:
        est = tally.estimate(0)
        text = (f"{tally.games}/{len(games)} games  {names}: +{est.wins} ={est.draws} -{est.losses}  "
                f"score {100 * est.score:.1f}%  {_estimate_text(est)}")
        if sprt is not None:
            text += f"  LLR {sprt.llr(*tally.wdl(0)):.2f} [{sprt.lower:.2f}, {sprt.upper:.2f}]"
        text += f"  {_clock(time.monotonic() - started)}"
        console.progress(text, force)

    def take(item: GameRecord) -> None:
        if out is not None:
            out.write(write_game(item.board, game_headers(item, specs, event, site,
                                                          time.strftime("%Y.%m.%d")), item.result))
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

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    # a kill (SIGTERM) stops the match like Ctrl-C: engines ended, finished games kept
    handle_term = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_term) if handle_term else None
    try:
        if decision is None:
            for worker in workers:
                worker.start()
        show(force=True)
        while decision is None and any(worker.is_alive() for worker in workers) or not done.empty():
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
                    stop.set()
            show()
    except KeyboardInterrupt:
        interrupted = True
        stop.set()  # before the engines go: games in play are then dropped, not scored
        for seats in all_seats:
            seats.close_all()
        while not done.empty():  # games that ended before the interruption are kept
            item = done.get()
            if isinstance(item, GameRecord):
                take(item)
    finally:
        stop.set()
        for worker in workers:
            if worker.is_alive():
                worker.join(timeout=5.0)
        if out is not None:
            out.close()
        if handle_term and previous is not None:
            signal.signal(signal.SIGTERM, previous)
    show(force=True)
    if console.tty:
        console.message("")
    return MatchOutcome(tally, played, len(finished), decision, interrupted, time.monotonic() - started)


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def check_engines(specs: Sequence[EngineSpec], settings: Settings) -> None:
    """Start each engine once: a wrong command, parameter or variant is a setup error."""
    seats = Seats(specs, settings)
    try:
        for index, spec in enumerate(specs):
            try:
                seats.get(index)
            except EngineError as error:
                raise MatchError(str(error)) from None
    finally:
        seats.close_all()


# -- command line ---------------------------------------------------------------------


#: Options that take several ``key=value`` words, as in cutechess-cli.
_MULTI_WORD = ("--engine", "--each", "--draw", "--resign", "--sprt")


class MatchCommand(click.Command):
    """Gathers the ``key=value`` words after ``--engine`` (and the like) into one option value."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        joined: list[str] = []
        i = 0
        while i < len(args):
            word = args[i]
            joined.append(word)
            i += 1
            if word in _MULTI_WORD:
                group = []
                while i < len(args) and not args[i].startswith("-") and "=" in args[i]:
                    group.append(args[i])
                    i += 1
                joined.append("\0".join(group))
        return super().parse_args(ctx, joined)


@click.command(cls=MatchCommand)
@click.option("--engine", "engines", multiple=True, metavar="KEY=VALUE...",
              help="An engine (two or more): cmd=COMMAND [name=NAME] [dir=DIR] [option.PARAM=VALUE]... "
                   "[tc=.. st=.. depth=.. nodes=..], e.g. --engine cmd=\"pedina hub\" name=A option.skill=10")
@click.option("--each", "each", default="", metavar="KEY=VALUE...",
              help="Settings for every engine (an --engine's own settings win).")
@click.option("--gauntlet", is_flag=True, help="The first engine plays each of the others (default: round robin).")
@click.option("--openings", "openings_path", type=click.Path(dir_okay=False),
              help="FEN positions (one a line) or PDN games to start from (default: every 3-ply opening).")
@click.option("--shuffle", is_flag=True, help="Shuffle the openings (with --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --shuffle.")
@click.option("--rounds", type=click.IntRange(1), help="Rounds (one opening each, every pair, both colours).")
@click.option("--games", "max_games", type=click.IntRange(1), help="Stop after this many games.")
@click.option("--tc", metavar="SECONDS+INC", help="Clock per engine, SECONDS+INCREMENT (increment credited before each move).")
@click.option("--st", type=click.FloatRange(0, min_open=True), help="Seconds per move.")
@click.option("--depth", type=click.IntRange(1), help="Fixed search depth.")
@click.option("--nodes", type=click.IntRange(1), help="Fixed node count.")
@click.option("--timemargin", type=click.FloatRange(0), default=0.2, show_default=True,
              help="Seconds a move may overrun its time before it loses.")
@click.option("--timeout", type=click.FloatRange(0, min_open=True), default=60.0, show_default=True,
              help="Seconds to wait for an engine's answer when no clock bounds it (start-up, depth, nodes).")
@click.option("--maxplies", type=click.IntRange(1), help="Adjudicate a draw after this many plies.")
@click.option("--draw", "draw_text", metavar="movenumber=N movecount=N score=N",
              help="Adjudicate a draw from move N on when both engines' last movecount scores are within "
                   "score (hundredths of a man).")
@click.option("--resign", "resign_text", metavar="movecount=N score=N",
              help="Adjudicate a win when both engines agree for movecount moves that one is up by score.")
@click.option("--concurrency", type=click.IntRange(1), default=1, show_default=True,
              help="Games played at the same time.")
@click.option("--restart", is_flag=True, help="Start fresh engine processes for every game.")
@click.option("--pdnout", "--pgnout", "pdn_path", type=click.Path(dir_okay=False),
              help="Write every game to this PDN file as soon as it ends.")
@click.option("--resume", is_flag=True, help="Continue the match recorded in --pdnout, playing only the missing games.")
@click.option("--sprt", "sprt_text", metavar="elo0=E elo1=E alpha=A beta=B",
              help="Stop once a sequential probability ratio test decides (two engines).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Save a picture of the Elo estimate over the match (needs matplotlib).")
@click.option("--event", default="Pedina match", show_default=True, help="PDN Event tag.")
def match(engines: tuple[str, ...], each: str, gauntlet: bool, openings_path: str | None, shuffle: bool,
          seed: int, rounds: int | None, max_games: int | None, tc: str | None, st: float | None,
          depth: int | None, nodes: int | None, timemargin: float, timeout: float, maxplies: int | None,
          draw_text: str | None, resign_text: str | None, concurrency: int, restart: bool,
          pdn_path: str | None, resume: bool, sprt_text: str | None, plot_path: str | None,
          event: str) -> None:
    """Play a match between Hub engines and show who is stronger.

    \b
    Example: full strength against skill 10, 0.1 s a move, two games at a time:
      pedina match --engine cmd="pedina hub" name=full \\
                   --engine cmd="pedina hub" name=skill10 option.skill=10 \\
                   --st 0.1 --games 100 --shuffle --concurrency 2 --pdnout games.pdn
    """
    base, inc = parse_tc(tc) if tc else (None, 0.0)
    default_tc = TimeControl(base, inc, st, depth, nodes)
    common = parse_pairs(each, "--each")
    specs = [engine_spec(parse_pairs(text, "--engine"), common, default_tc, number)
             for number, text in enumerate(engines, start=1)]
    if len(specs) < 2:
        raise MatchError("a match needs at least two --engine options")
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise MatchError("engine names must differ (give each --engine a name=)")
    settings = Settings(timemargin, timeout, maxplies, restart=restart)
    if draw_text is not None:
        settings.draw = DrawRule(**parse_rule(draw_text, "--draw", ("movenumber", "movecount", "score")))
    if resign_text is not None:
        settings.resign = ResignRule(**parse_rule(resign_text, "--resign", ("movecount", "score")))
    sprt = None
    if sprt_text is not None:
        if len(specs) != 2:
            raise MatchError("--sprt needs exactly two engines")
        pairs = parse_pairs(sprt_text, "--sprt")
        try:
            sprt = Sprt(**{key: float(value) for key, value in pairs.items()})
        except (TypeError, ValueError) as error:
            raise MatchError(f"bad --sprt (expected elo0=E elo1=E alpha=A beta=B): {error}") from None
    if resume and pdn_path is None:
        raise MatchError("--resume needs --pdnout FILE (the match to continue)")
    if pdn_path is not None and not resume and os.path.exists(pdn_path) and os.path.getsize(pdn_path):
        raise MatchError(f"{pdn_path} already exists: add --resume to finish that match, or choose another file")
    if pdn_path is not None:
        try:
            open(pdn_path, "a", encoding="utf-8").close()
        except OSError as error:
            raise MatchError(f"cannot write {pdn_path}: {error.strerror or error}") from None
    if plot_path is not None:
        try:
            importlib.import_module("matplotlib")
        except ImportError:
            raise MatchError("--plot needs matplotlib: pip install 'pedina[plot]'") from None
    openings = read_openings(openings_path) if openings_path else all_openings()
    if shuffle:
        random.Random(seed).shuffle(openings)
    games = schedule(len(specs), openings, gauntlet=gauntlet, rounds=rounds, games=max_games)
    check_engines(specs, settings)
    console = Console(sys.stdout)
    console.message(f"{len(games)} games, {len(specs)} engines ({', '.join(names)}), "
                    f"{'gauntlet' if gauntlet else 'round robin'}, "
                    f"time control {' / '.join(sorted({str(s.tc) for s in specs}))}, concurrency {concurrency}")
    outcome = run_match(specs, games, settings, concurrency=concurrency, pdn_path=pdn_path,
                        resume=resume, sprt=sprt, event=event, console=console)
    for row in final_table(outcome.tally, specs):
        console.message(row)
    if sprt is not None:
        llr = sprt.llr(*outcome.tally.wdl(0))
        verdict = {"H1": f"H1 accepted ({specs[0].name} is better by about elo1)",
                   "H0": "H0 accepted (no gain of elo1)", None: "undecided"}[outcome.sprt]
        console.message(f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} beta={sprt.beta:g}: "
                        f"LLR {llr:.2f} [{sprt.lower:.2f}, {sprt.upper:.2f}], {verdict}")
    rate = len(outcome.played) / outcome.seconds * 60 if outcome.seconds > 0 else 0.0
    console.message(f"{len(outcome.played)} games played in {_clock(outcome.seconds)} ({rate:.1f} games/min)"
                    + (f", {outcome.resumed} resumed from {pdn_path}" if outcome.resumed else ""))
    if plot_path is not None and outcome.tally.history:
        try:
            plot_history(outcome.tally.history, f"{names[0]} vs {'field' if len(names) > 2 else names[1]}",
                         plot_path)
            console.message(f"Elo plot saved to {plot_path}")
        except OSError as error:
            console.message(f"cannot save the plot to {plot_path}: {error.strerror or error}")
    if outcome.interrupted:
        console.message("interrupted" + (f": finished games are in {pdn_path}; run the same command with "
                                         "--resume to play the rest" if pdn_path else ""))
        sys.exit(130)
