"""One game between two engines, played and judged by the match runner.

:func:`play_hub_game` sets up the opening, asks each engine for its move in turn
(a Hub engine gets ``pos`` with the whole game, ``level``, ``go think``; a DXP engine
the GAMEREQ, then the opponent's moves; an engine in this process the same as a Hub
engine, without the process), keeps the clocks, and
ends the game by the rules (no moves, repetition, 40-move count), by the
maximum length, by the engines' agreeing scores, or by a failure: an illegal
move, a crash, no answer, or a move over its time loses, and the failed
engine is replaced before its next game. :class:`Seats` holds the engines of
one worker thread, each an :class:`~pedina.protocol.engineclient.EngineClient`
made by :func:`open_engine` from its :class:`EngineSpec`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Sequence

from pedina.board import Board
from pedina.move import Move, MoveError
from pedina.pdn import MoveNote
from pedina.position import Position
from pedina.protocol.dxp.initiator import DxpClient
from pedina.protocol.engineclient import (EngineAnsweredTwice, EngineClient, EngineCrashed, EngineError,
                                          EngineResigned, EngineTimeout, EngineUnreadable, SearchReport)
from pedina.protocol.hubclient import HubClient, seconds_text
from pedina.scores import men

#: The variant asked of engines that declare a ``variant`` parameter.
VARIANT = "italian"
#: The parameter that ``pedina match --no-book`` sets to false where an engine declares it.
BOOK_PARAM = "book"


@dataclass(frozen=True)
class TimeControl:
    """Limits for one engine's moves. ``base``/``inc`` is a clock kept by the runner; with
    ``moves``, ``base`` is the time of each session of that many moves (``40/60+1``: 60 s
    for every 40 moves, 1 s more before each move), added to the clock as a session begins."""

    base: float | None = None
    inc: float = 0.0
    move_time: float | None = None
    depth: int | None = None
    nodes: int | None = None
    moves: int | None = None

    @property
    def is_set(self) -> bool:
        """Some limit is given (a clock, a move time, a depth or a node count)."""
        return any(v is not None for v in (self.base, self.move_time, self.depth, self.nodes))

    def merged(self, other: TimeControl) -> TimeControl:
        """These limits, with ``other``'s where this one has none."""
        clock = (self.base, self.inc, self.moves) if self.base is not None else (other.base, other.inc, other.moves)
        return TimeControl(clock[0], clock[1],
                           self.move_time if self.move_time is not None else other.move_time,
                           self.depth if self.depth is not None else other.depth,
                           self.nodes if self.nodes is not None else other.nodes, clock[2])

    def level(self, clock: float | None, played: int = 0) -> dict[str, object]:
        """The ``level`` arguments for a move with ``clock`` seconds left (before the increment),
        after the engine has ``played`` moves of the game (with ``moves``: ``moves=`` those left
        in the session)."""
        args: dict[str, object] = {}
        if self.depth is not None:
            args["depth"] = self.depth
        if self.nodes is not None:
            args["nodes"] = self.nodes
        if self.move_time is not None:
            args["move-time"] = seconds_text(self.move_time)
        if clock is not None:
            if self.moves:
                args["moves"] = self.moves - played % self.moves
            args["time"] = seconds_text(clock)
            if self.inc:
                args["inc"] = seconds_text(self.inc)
        return args

    def clock_after(self, clock: float, elapsed: float, played: int) -> float:
        """The clock after a move that took ``elapsed`` seconds, the engine's ``played``-th of the
        game (counted from 1): the increment credited, and the next session's time when the move
        ended a session."""
        clock += self.inc - elapsed
        if self.moves and self.base is not None and played % self.moves == 0:
            clock += self.base
        return clock

    def allowed(self, clock: float | None) -> float | None:
        """Seconds this move may take before it loses on time (``None``: no clock)."""
        limits = [limit for limit in (self.move_time, None if clock is None else clock + self.inc)
                  if limit is not None]
        return min(limits) if limits else None

    def __str__(self) -> str:
        parts = []
        if self.base is not None:
            session = f"{self.moves}/" if self.moves else ""
            parts.append(f"{session}{seconds_text(self.base)}+{seconds_text(self.inc)}")
        if self.move_time is not None:
            parts.append(f"{seconds_text(self.move_time)}s/move")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"{self.nodes} nodes")
        return ", ".join(parts) or "none"


@dataclass(frozen=True)
class EngineSpec:
    """One participant: how to start it (a Hub ``command``, the ``dxp`` address of a running
    DXP engine, or for an engine in this process its client's maker ``in_process``, e.g. a
    :class:`~pedina.protocol.sessionclient.SessionClient` of a session) and how it plays."""

    name: str
    command: str
    options: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    tc: TimeControl = TimeControl()
    dxp: tuple[str, int] | None = None
    in_process: Callable[[], EngineClient] | None = None


@dataclass(frozen=True)
class DrawRule:
    """Adjudicate a draw from move ``movenumber`` on once both engines' last ``movecount``
    scores are within ``score`` (hundredths of a man) of zero."""

    movenumber: int
    movecount: int
    score: int


@dataclass(frozen=True)
class ResignRule:
    """Adjudicate a win once the loser's last ``movecount`` scores are at or below ``-score`` and
    the winner's at or above ``score`` (hundredths of a man)."""

    movecount: int
    score: int


@dataclass
class Settings:
    """Everything about how games are played, besides the engines."""

    margin: float = 0.2               # seconds a move may overrun its time
    timeout: float = 60.0             # seconds to wait for an answer when no clock bounds it
    maxplies: int | None = None
    draw: DrawRule | None = None
    resign: ResignRule | None = None
    restart: bool = False             # a fresh process for every game
    book: bool = True                 # False: engines that declare a book parameter are set to false


@dataclass(frozen=True)
class Opening:
    """A start position and the moves played from it before the engines take over."""

    start: Position
    moves: tuple[Move, ...] = ()

    def board(self) -> Board:
        """A new board at the end of the opening moves."""
        board = Board(self.start)
        for move in self.moves:
            board.push(move)
        return board


@dataclass(frozen=True)
class ScheduledGame:
    """One game of the match: its place in the schedule, its opening and its players."""

    number: int          # 1-based position in the schedule
    round: int           # 1-based; one round is one opening played by every pair, both colours
    opening: Opening
    white: int           # engine indices
    black: int


@dataclass
class Failure:
    """An engine lost by failing: what happened, and its last protocol lines."""

    engine: str
    reason: str
    message: str
    tail: list[str]


@dataclass
class GameRecord:
    """A finished game. ``reports`` has, for each move of ``board``, what the engine that
    played it said (``None`` for the opening's moves; empty for a game read back from PDN)."""

    game: ScheduledGame
    board: Board
    result: str
    termination: str
    failure: Failure | None = None
    reports: list[SearchReport | None] = field(default_factory=list)

    def points(self, engine: int) -> float:
        """The points ``engine`` scored in this game (it played one of the sides)."""
        white_points = {"1-0": 1.0, "0-1": 0.0}.get(self.result, 0.5)
        return white_points if engine == self.game.white else 1.0 - white_points

    def move_notes(self) -> list[MoveNote | None]:
        """PDN comments for the engines' moves as cutechess writes them: the score (in men, from
        the mover's point of view) and depth of the engine's last ``info`` (``book`` instead for a
        move of the engine's opening book), and the time the move took: ``{+0.35/12 0.512s}``,
        ``{book 0.001s}``."""
        notes: list[MoveNote | None] = []
        for report in self.reports:
            if report is None:
                notes.append(None)
                continue
            parts = []
            if report.book:
                parts.append("book")
            elif report.score is not None:
                parts.append(men(report.score.value) + (f"/{report.depth}" if report.depth is not None else ""))
            parts.append(f"{report.elapsed:.3f}s")
            notes.append(MoveNote(comment=" ".join(parts)))
        return notes


class Aborted(Exception):
    """The match is stopping: drop the game being played."""


def open_engine(spec: EngineSpec, settings: Settings) -> EngineClient:
    """A ready engine for ``spec``: a Hub process started, a DXP engine connected (with the
    GAMEREQ clock of ``spec.tc``, whole minutes) or an engine in this process made, its
    handshake done within ``settings.timeout``. Raises :class:`EngineError` if it cannot start."""
    engine: EngineClient
    if spec.in_process is not None:
        engine = spec.in_process()
    elif spec.dxp is not None:
        minutes = round(spec.tc.base / 60) if spec.tc.base is not None else 0
        engine = DxpClient(*spec.dxp, minutes=minutes, moves=spec.tc.moves or 0, label=spec.name)
    else:
        engine = HubClient(spec.command, cwd=spec.cwd, label=spec.name)
    try:
        engine.handshake(spec.options, timeout=settings.timeout, variant=VARIANT)
        if not settings.book and BOOK_PARAM in engine.id.params:
            engine.set_param(BOOK_PARAM, "false")
    except EngineError:
        engine.close(timeout=0.2)
        raise
    return engine


class Seats:
    """The engines one worker drives: started on demand, replaced after a failure."""

    def __init__(self, specs: Sequence[EngineSpec], settings: Settings) -> None:
        self.specs = specs
        self.settings = settings
        self._engines: dict[int, EngineClient] = {}
        self._lock = threading.Lock()

    def get(self, index: int) -> EngineClient:
        """A ready engine for ``specs[index]`` (raises :class:`EngineError` if it cannot start)."""
        with self._lock:
            engine = self._engines.get(index)
        if engine is not None:
            return engine
        engine = open_engine(self.specs[index], self.settings)
        with self._lock:
            self._engines[index] = engine
        return engine

    def held(self, index: int) -> EngineClient | None:
        """The engine of ``specs[index]`` if one is running (none is started)."""
        with self._lock:
            return self._engines.get(index)

    def discard(self, index: int) -> None:
        """Stop the process of ``specs[index]``, if any: the next :meth:`get` starts a fresh one."""
        with self._lock:
            engine = self._engines.pop(index, None)
        if engine is not None:
            engine.close(timeout=0.2)

    def close_all(self) -> None:
        """Stop every engine process (``quit``, then killed if it lingers)."""
        with self._lock:
            engines, self._engines = list(self._engines.values()), {}
        for engine in engines:
            engine.close()


def _failure_reason(error: EngineError, clocked: bool) -> str:
    if isinstance(error, EngineCrashed):
        return "crash"
    if isinstance(error, EngineResigned):
        return "resignation"
    if isinstance(error, EngineTimeout):
        return "time forfeit" if clocked else "no answer"
    if isinstance(error, EngineAnsweredTwice):
        return "answered twice"
    if isinstance(error, EngineUnreadable):
        return "unreadable answer"
    return "protocol error"


def _streak(scores: list[int | None], count: int, test: Callable[[int], bool]) -> bool:
    """The last ``count`` scores exist and all pass ``test``."""
    last = scores[len(scores) - count:] if count else []
    return len(last) == count and all(score is not None and test(score) for score in last)


def play_hub_game(game: ScheduledGame, specs: Sequence[EngineSpec], seats: Seats, settings: Settings,
                  stop: threading.Event, on_move: Callable[[Board, Move], None] | None = None) -> GameRecord:
    """Play one game to its end (raises :class:`Aborted` when ``stop`` is set), then tell the
    engines still seated that it is over (one that fails to hear it is replaced). ``on_move``
    is called after each move an engine plays, with the board after it."""
    record = _play(game, specs, seats, settings, stop, on_move)
    for index in (game.white, game.black):
        engine = seats.held(index)
        if engine is None:
            continue
        try:
            engine.game_over(record.board.start.hub(), [move.hub() for move in record.board.moves],
                             record.result, settings.timeout)
        except EngineError:
            seats.discard(index)
    return record


def _play(game: ScheduledGame, specs: Sequence[EngineSpec], seats: Seats, settings: Settings,
          stop: threading.Event, on_move: Callable[[Board, Move], None] | None) -> GameRecord:
    board = game.opening.board()
    sides = (game.white, game.black)
    clocks = [specs[index].tc.base for index in sides]
    played = [0, 0]  # moves each side's engine has made
    scores: tuple[list[int | None], list[int | None]] = ([], [])
    reports: list[SearchReport | None] = [None] * len(board.moves)
    start_text = board.start.hub()

    def lose(side: int, reason: str, message: str, tail: list[str]) -> GameRecord:
        index = sides[side]
        seats.discard(index)
        return GameRecord(game, board, "0-1" if side == 0 else "1-0", reason,
                          Failure(specs[index].name, reason, message, tail), reports)

    def fail(side: int, error: EngineError, clocked: bool) -> GameRecord:
        # A match that stops closes its engines under the games in play: their errors then
        # are the stop's doing, and the game is dropped, not scored.
        if stop.is_set():
            raise Aborted from error
        return lose(side, _failure_reason(error, clocked), str(error), error.tail)

    for side, index in enumerate(sides):
        if stop.is_set():
            raise Aborted
        try:
            seats.get(index).new_game()
        except EngineError as error:
            return fail(side, error, False)
    while True:
        if stop.is_set():
            raise Aborted
        outcome = board.outcome()
        if outcome is not None:
            return GameRecord(game, board, outcome.result(), outcome.termination.value, reports=reports)
        if settings.maxplies is not None and len(board.moves) >= settings.maxplies:
            return GameRecord(game, board, "1/2-1/2", "adjudication: maximum length", reports=reports)
        side = 0 if board.position.white_to_move else 1
        spec = specs[sides[side]]
        allowed = spec.tc.allowed(clocks[side])
        timeout = settings.timeout if allowed is None else allowed + settings.margin
        try:
            engine = seats.get(sides[side])
            started = engine.start_search(start_text, [move.hub() for move in board.moves],
                                          spec.tc.level(clocks[side], played[side]))
            report = engine.finish_search(started, timeout)
        except EngineError as error:
            return fail(side, error, allowed is not None)
        if allowed is not None and report.elapsed > allowed + settings.margin:
            return lose(side, "time forfeit",
                        f"{spec.name}: took {report.elapsed:.3f} s, allowed {allowed:.3f} s "
                        f"+ {settings.margin:.3f} s margin", engine.tail())
        try:
            move = board.parse_move(report.move)
        except MoveError as error:
            return lose(side, "illegal move", f"{spec.name}: {error}", engine.tail())
        played[side] += 1
        clock = clocks[side]
        if clock is not None:
            clocks[side] = spec.tc.clock_after(clock, report.elapsed, played[side])
        board.push(move)
        if on_move is not None:
            on_move(board, move)
        reports.append(report)
        scores[side].append(report.score.value if report.score is not None else None)
        record = _adjudicate(game, board, scores, settings)
        if record is not None:
            record.reports = reports
            return record


def _adjudicate(game: ScheduledGame, board: Board, scores: tuple[list[int | None], list[int | None]],
                settings: Settings) -> GameRecord | None:
    """A draw or win by the engines' agreeing scores (each from its own side), if the rules say so."""
    if board.outcome() is not None:
        return None  # the rules decide
    draw = settings.draw
    if draw is not None and (len(board.moves) + 1) // 2 >= draw.movenumber and all(
            _streak(own, draw.movecount, lambda s: abs(s) <= draw.score) for own in scores):
        return GameRecord(game, board, "1/2-1/2", "adjudication: draw by score")
    resign = settings.resign
    if resign is not None:
        for loser in (0, 1):
            if (_streak(scores[loser], resign.movecount, lambda s: s <= -resign.score)
                    and _streak(scores[1 - loser], resign.movecount, lambda s: s >= resign.score)):
                return GameRecord(game, board, "0-1" if loser == 0 else "1-0", "adjudication: win by score")
    return None
