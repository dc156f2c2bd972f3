"""Search: the engine's thinking, driven through :class:`Searcher`.

PLACEHOLDER IMPLEMENTATION (API contract only): plain iterative-deepening
alpha-beta on material. The search issue replaces the internals and keeps
this API.

Scores are integers in hundredths of a man from the side to move's point of
view; a proven win in N plies is ``WIN - N``, a proven loss ``-(WIN - N)``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from engine.board import Board
from engine.move import Move, legal_moves
from engine.position import Position

WIN = 10000
#: Scores beyond this are proven wins or losses.
WIN_THRESHOLD = WIN - 1000


@dataclass
class Limits:
    """What bounds a search. All times in seconds; ``None`` means no bound."""

    depth: int | None = None
    nodes: int | None = None
    move_time: float | None = None
    time: float | None = None        # our clock
    inc: float = 0.0                 # credited before each move (Hub semantics)
    moves_to_go: int | None = None
    infinite: bool = False
    ponder: bool = False             # search until ponder_hit(), then on the clock


@dataclass
class Info:
    """A report on the search so far (after each iteration, one per multi-PV line)."""

    depth: int
    mean_depth: float
    score: int
    nodes: int
    time: float
    pv: list[Move] = field(default_factory=list)
    multipv: int = 1

    @property
    def nps(self) -> float:
        return self.nodes / self.time if self.time > 0 else 0.0


@dataclass
class Result:
    """The answer of a search: best move, expected reply, and how it was found."""

    best: Move | None
    ponder: Move | None
    score: int
    depth: int
    nodes: int
    time: float
    pv: list[Move] = field(default_factory=list)


class Searcher:
    """A search object kept across moves (hash table, history).

    :meth:`search` blocks; an adapter runs it on its own thread and calls
    :meth:`stop` or :meth:`ponder_hit` from another one.
    """

    def __init__(self, hash_mb: int = 64) -> None:
        self.hash_mb = hash_mb
        self.multipv = 1
        self.skill = 20
        self._stop = threading.Event()
        self._ponder_hit = threading.Event()
        self.nodes = 0

    def new_game(self) -> None:
        """Forget everything learnt in earlier games."""

    def set_hash_size(self, mb: int) -> None:
        self.hash_mb = mb

    def stop(self) -> None:
        """Ask a running search to return as soon as possible (thread-safe)."""
        self._stop.set()

    def ponder_hit(self) -> None:
        """The predicted move was played: switch a ponder search to the clock."""
        self._ponder_hit.set()

    def search(self, board: Board, limits: Limits,
               on_info: Callable[[Info], None] | None = None) -> Result:
        """Search the current position of ``board`` (whose history counts for repetitions)."""
        self._stop.clear()
        self._ponder_hit.clear()
        self.nodes = 0
        start = time.perf_counter()
        moves = legal_moves(board.position)
        if not moves:
            return Result(None, None, -WIN, 0, 0, 0.0)
        budget = limits.move_time
        if budget is None and limits.time is not None:
            budget = max(0.01, (limits.time + limits.inc) / (limits.moves_to_go or 30))
        deadline = None if limits.infinite or limits.ponder or budget is None else start + budget
        max_depth = limits.depth or 64
        best, score, depth, pv = moves[0], 0, 0, [moves[0]]
        for depth_now in range(1, max_depth + 1):
            ordered = [best] + [m for m in moves if m != best]
            alpha = -WIN - 1
            iteration_best = None
            for move in ordered:
                child = board.position.play_raw(move.raw)
                value = -self._alphabeta(child, depth_now - 1, -WIN - 1, -alpha, 1, deadline, limits.nodes)
                if self._aborted(deadline, limits.nodes):
                    break
                if value > alpha:
                    alpha, iteration_best = value, move
            if self._aborted(deadline, limits.nodes) or iteration_best is None:
                break
            best, score, depth, pv = iteration_best, alpha, depth_now, [iteration_best]
            if on_info:
                elapsed = time.perf_counter() - start
                on_info(Info(depth, float(depth), score, self.nodes, elapsed, list(pv)))
            if len(moves) == 1 and not (limits.infinite or limits.ponder):
                break
        while (limits.infinite or limits.ponder) and not self._stop.is_set():
            if limits.ponder and self._ponder_hit.is_set():
                break
            time.sleep(0.001)
        elapsed = time.perf_counter() - start
        return Result(best, None, score, depth, self.nodes, elapsed, pv)

    def _aborted(self, deadline: float | None, max_nodes: int | None) -> bool:
        return (self._stop.is_set() or (deadline is not None and time.perf_counter() > deadline)
                or (max_nodes is not None and self.nodes >= max_nodes))

    def _alphabeta(self, position: Position, depth: int, alpha: int, beta: int, ply: int,
                   deadline: float | None, max_nodes: int | None) -> int:
        self.nodes += 1
        if self.nodes & 1023 == 0 and self._aborted(deadline, max_nodes):
            return 0
        raws = position.raw_moves()
        if not raws:
            return -(WIN - ply)
        if depth <= 0:
            wm, wk, bm, bk = position.piece_count()
            material = (wm - bm) * 100 + (wk - bk) * 150
            return material if position.white_to_move else -material
        for raw in raws:
            value = -self._alphabeta(position.play_raw(raw), depth - 1, -beta, -alpha, ply + 1, deadline, max_nodes)
            if value >= beta:
                return value
            alpha = max(alpha, value)
        return alpha
