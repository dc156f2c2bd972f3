"""Games between searchers in this process: one game, a small match over paired openings, and
the self-play games of the tuning data.

This is what the strength script, the self-play data generator and the slow
strength tests share. The games are played by the match runner's game loop
(:func:`~pedina.protocol.match.game.play_hub_game`), each searcher an engine of this
process (a :class:`~pedina.protocol.sessionclient.SessionClient`), so they end, and
fail, as ``pedina match`` games do, and score with :mod:`pedina.protocol.match.stats`.
A self-play game depends only on its seed and number (:func:`numbered_selfplay_game`),
so it can be played anywhere, e.g. as a task on a Dask worker that has Pedina installed.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from pedina.board import Board
from pedina.evaluate import Evaluator, default_evaluator
from pedina.move import Move
from pedina.movegen import generate_captures
from pedina.position import Position
from pedina.protocol.engineclient import SearchReport
from pedina.protocol.match.game import (EngineSpec, GameRecord, Opening, ScheduledGame, Seats, Settings,
                                        TimeControl, play_hub_game)
from pedina.protocol.match.stats import EloEstimate, elo_estimate
from pedina.protocol.sessionclient import SessionClient
from pedina.search import Searcher
from pedina.session import Session
from pedina.settings import EngineSettings
from pedina.squares import BOARD

#: Self-play games still going after this many plies are draws.
SELFPLAY_MAX_PLIES = 200
#: In the first this many plies of a self-play game, each move is a random one with this chance.
RANDOM_PLIES = 30
RANDOM_CHANCE = 0.05


@dataclass
class Player:
    """A search session with the limits it plays each move under."""

    session: Session
    tc: TimeControl
    name: str = "player"

    def spec(self) -> EngineSpec:
        """The player as the match runner's participant: its session, an engine of this process."""
        return EngineSpec(self.name, "", tc=self.tc, in_process=lambda: SessionClient(self.session, label=self.name))


def _games(specs: Sequence[EngineSpec], games: Iterable[ScheduledGame], max_plies: int,
           on_move: Callable[[Board, Move], None] | None = None) -> Iterator[GameRecord]:
    """The records of ``games`` between ``specs``, played one after the other by the match
    runner, each a draw after ``max_plies``; the engines are closed once the games are done."""
    settings = Settings(maxplies=max_plies)
    seats = Seats(specs, settings)
    never = threading.Event()
    try:
        for game in games:
            yield play_hub_game(game, specs, seats, settings, never, on_move)
    finally:
        seats.close_all()


def play_searcher_game(white: Player, black: Player, opening: list[Move], max_plies: int = 200,
                       start: Position | None = None,
                       on_move: Callable[[Board, Move], None] | None = None) -> GameRecord:
    """Play one game after the ``opening`` moves (from ``start``, by default the initial
    position) by the match runner's rules: it ends by :meth:`Board.outcome`, as a draw after
    ``max_plies``, or lost by a player that fails. ``on_move`` is called after each move the
    players choose."""
    game = ScheduledGame(1, 1, Opening(start or Position.start(), tuple(opening)), 0, 1)
    [record] = _games([white.spec(), black.spec()], [game], max_plies, on_move)
    return record


def play_searcher_match(first: Player, second: Player, opening_list: list[list[Move]], max_plies: int = 200,
                        on_game: Callable[[int, float, Board], None] | None = None) -> EloEstimate:
    """Each opening twice, colours swapped; ``first``'s wins, draws and losses with their Elo.

    ``on_game`` is called after each game with its number (from 1), ``first``'s score and the board.
    """
    schedule = (ScheduledGame(2 * round_ + colour + 1, round_ + 1, Opening(Position.start(), tuple(opening)),
                              colour, 1 - colour)
                for round_, opening in enumerate(opening_list) for colour in (0, 1))
    counts = [0, 0, 0]  # first's wins, draws, losses
    for record in _games([first.spec(), second.spec()], schedule, max_plies):
        score = record.points(0)
        counts[0 if score == 1.0 else 1 if score == 0.5 else 2] += 1
        if on_game is not None:
            on_game(record.game.number, score, record.board)
    wins, draws, losses = counts
    return elo_estimate(wins, draws, losses)


def is_quiet(board: Board) -> bool:
    """Neither side has a capture."""
    p = board.position
    empty = BOARD ^ p.white ^ p.black
    return not (generate_captures(p.white, p.black, p.kings, True, empty)
                or generate_captures(p.black, p.white, p.kings, False, empty))


class _SometimesRandom(SessionClient):
    """A session that plays a random move, drawn from ``rng``, with :data:`RANDOM_CHANCE` in each
    of the game's first :data:`RANDOM_PLIES` plies, and its own move otherwise."""

    def __init__(self, session: Session, rng: random.Random, *, label: str) -> None:
        super().__init__(session, label=label)
        self._rng = rng
        self._random_move: str | None = None

    def start_search(self, position: str, moves: Sequence[str], level: Mapping[str, object],
                     mode: str = "think") -> float:
        self._random_move = None
        if len(moves) < RANDOM_PLIES and self._rng.random() < RANDOM_CHANCE:
            self._random_move = self._rng.choice(self._board(position, moves).legal_moves()).hub()
            return time.monotonic()
        return super().start_search(position, moves, level, mode)

    def finish_search(self, started: float, timeout: float,
                      on_info: Callable[[dict[str, str]], None] | None = None) -> SearchReport:
        if self._random_move is not None:
            return SearchReport(self._random_move, None, time.monotonic() - started)
        return super().finish_search(started, timeout, on_info)


def selfplay_game(rng: random.Random, player: Player) -> tuple[list[str], float]:
    """One game of ``player`` against itself; returns (quiet FENs from ply 8 on, White's score).

    The game starts with 4 to 8 random moves drawn from ``rng``, which also gives a
    :data:`RANDOM_CHANCE` of a random move in each of the first :data:`RANDOM_PLIES` plies; it
    is played by the match runner, and ends by the rules or as a draw after
    :data:`SELFPLAY_MAX_PLIES` plies. A game the player fails raises :class:`RuntimeError`.
    """
    board = Board()
    for _ in range(rng.randint(4, 8)):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))
    spec = EngineSpec(player.name, "", tc=player.tc,
                      in_process=lambda: _SometimesRandom(player.session, rng, label=player.name))
    game = ScheduledGame(1, 1, Opening(board.start, tuple(board.moves)), 0, 0)
    [record] = _games([spec], [game], SELFPLAY_MAX_PLIES)
    if record.failure is not None:
        raise RuntimeError(f"self-play game failed: {record.failure.message}")

    fens: list[str] = []
    replay = Board(record.board.start)
    for ply, move in enumerate(record.board.moves):  # the positions a move was played from
        if ply >= 8 and is_quiet(replay):
            fens.append(replay.position.fen())
        replay.push(move)
    return fens, record.points(0)


def numbered_selfplay_game(seed: int, number: int, depth: int, shipped: bool = False) -> tuple[list[str], float]:
    """Game ``number`` of the self-play run ``seed``: :func:`selfplay_game` with its own random
    generator (seeded by ``seed`` and ``number``) and a fresh searcher to ``depth`` with the
    hand-set evaluation (``shipped``: the evaluation the engine plays with) and no opening book,
    so the game is the same wherever and in whatever order it is played."""
    evaluator = default_evaluator() if shipped else Evaluator()
    settings = EngineSettings(hash_mb=16, egdb_path="", book=False)
    session = Session(settings, searcher_factory=lambda chosen: Searcher(chosen, evaluator=evaluator))
    player = Player(session, TimeControl(depth=depth), "self-play")
    return selfplay_game(random.Random(f"selfplay {seed} {number}"), player)
