"""Search: the engine's thinking, driven through :class:`Searcher`.

What it does. :meth:`Searcher.search` deepens one ply at a time (iterative
deepening) over a principal-variation search, :meth:`Searcher._pvs`: at each node
the first move is searched with the full window and the others with a null
window, searched again when they beat alpha. Each iteration reports its best
lines (:class:`Info`) and orders the root moves for the next; the search ends at
the depth or node limit, on :meth:`Searcher.stop`, at the hard time limit, or
when :meth:`pedina.timeman.TimeBudget.allows_iteration` says another iteration
would not finish in time. Scores are those of :mod:`pedina.scores`: hundredths of
a man for the side to move, with bands of their own for proofs and for the
endgame database's results.

Why it is built so (the measurements are in ``docs/search.md``):

- PVS rather than MTD(f), which took fewer nodes: it gives exact root scores
  for multi-PV and the skill setting, and a principal variation every iteration.
- The tree works on raw ints (the mover's and the other side's bitboards, the
  kings, the colour) and the move tuples of :mod:`pedina.movegen`: a move is
  three xors into the child's arguments, and nothing is undone.
- Captures are compulsory, so a position where the side to move can capture is
  never evaluated (the evaluation's precondition): the quiescence search,
  :meth:`Searcher._quiesce`, plays out every capture sequence first. A node with
  a single legal move does not use up depth: choosing costs nothing there.
- What cuts the tree: the transposition table (:mod:`pedina.tt`: cut-offs at
  null-window nodes and the first move everywhere), the move order (hash move,
  two killers a ply, history counters), late-move reductions for late
  non-captures, and ProbCut (a null-window node first searched shallower against a
  bound above beta). No null move: zugzwang is common in draughts.
- Draws: the game's move count (:attr:`Board.draw_plies`) scores 0, and so does
  a position that repeats one on the line or in the game since the last
  irreversible move, whatever repetition count the rules set: whoever could
  repeat once can repeat until the count is reached.
- Endgame databases (the ``egdb_path`` setting): a position with few enough
  pieces takes the database's exact value (:func:`pedina.scores.database_score`),
  less its distance to the next capture or man move so the search plays the win
  out; a win the 40-move count would take away scores as the draw it is. A table
  without distances says who wins but not how: its wins are searched on, and a
  leaf scores in the progress band by the evaluation, which shows the way
  forward (:func:`pedina.scores.progress_score`). The root of a position with a
  distance is searched one ply: every move leads into the database.
- Multi-PV and the skill setting need the exact score of several root moves:
  each iteration then searches every root move with the full window.
- The stop flag, the clock and the node limit are looked at every 256 nodes
  (under 1 ms), and the protocol's thread gets the interpreter lock every 2048
  nodes: compiled, the search would otherwise never let it run.
"""

from __future__ import annotations

import functools
import random
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Final, Protocol, cast

from pedina.board import Board
from pedina.egdb.probe import open_endgame_database
from pedina.evaluate import Evaluator, default_evaluator
from pedina.move import Move
from pedina.movegen import RawMove, generate, generate_captures, generate_non_captures, step_move
from pedina.scores import (
    INF, MAX_PLY, NO_MOVES, Score, database_score, from_table, loss_in, proven_plies, progress_score, to_table,
    within_estimates,
)
from pedina.settings import EngineSettings
from pedina.smp import TAG_SHIFT, HelperPool, finished_iteration
from pedina.squares import BOARD, popcount
from pedina.timeman import Limits, TimeBudget, time_budget
from pedina.tt import (
    EXACT, LOWER, MAX_PROCESSES, UPPER, TranspositionTable, is_move, position_key, stored_bound,
    stored_depth, stored_ends, stored_forced, stored_score,
)

#: Depth of the short search that scores a lone legal move before it is played.
FORCED_MOVE_DEPTH: Final = 4
MAX_DEPTH: Final = 99
#: Late-move reductions: from the move with this index on (0 is the first)...
LMR_MIN_MOVES: Final = 3
#: ...in nodes whose children have at least this depth left.
LMR_MIN_DEPTH: Final = 2
#: ProbCut: a null-window node with at least this depth left first searches itself this
#: much shallower against a bound this far above beta (hundredths of a man); when even
#: that bound is reached, the full search would very likely fail high too.
PROBCUT_MIN_DEPTH: Final = 4
PROBCUT_REDUCTION: Final = 3
PROBCUT_MARGIN: Final = 80
#: The clock, node limit and stop flag are read when ``nodes & CHECK_MASK == 0``.
CHECK_MASK: Final = 255
#: ...and the interpreter lock is handed over when ``nodes & HAND_OVER_MASK == 0`` (see
#: :meth:`Searcher._check`): every 2048 nodes, 3 to 4 ms compiled.
HAND_OVER_MASK: Final = 2047
#: Packs (leaf count, sum of leaf plies) into one int for the mean depth.
_LEAF_ONE: Final = 1 << 32
#: A RawMove held whole, or None. Compiled, a variable of type RawMove holds the move's five
#: fields unpacked, and storing or comparing it packs them into a new tuple (and new ints):
#: moves that the search only keeps, passes on and compares are held as plain objects.
_Held = object


class EndgameTables(Protocol):
    """What the search needs of an endgame database (:class:`pedina.egdb.EndgameDatabase`)."""

    #: Every position with at most this many pieces is in the tables.
    pieces: int

    def open_all(self, drop_broken: bool = False) -> None:
        """Open every table now (see :meth:`Searcher.prepare`); ``drop_broken``: a table that
        cannot be opened is dropped, not raised."""
        ...

    def take_errors(self) -> list[str]:
        """Why each table dropped since the last call was dropped (a lookup never raises)."""
        ...

    def lookup(self, us: int, them: int, kings: int, white: bool) -> tuple[int, int] | None:
        """(1 win, 0 draw or -1 loss for the side to move; the distance, -1 when not stored),
        ``None`` for a position in no table."""
        ...


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
    seldepth: int = 0
    database_draw: bool = False  # the root is a draw in the endgame tables: a score of 0 is theirs

    def scored(self) -> Score:
        """The score with its kind (side to move's view), a draw of the tables marked as one."""
        return Score.of(self.score, self.database_draw)

    @property
    def nps(self) -> float:
        """Nodes per second so far (0 before any time has passed)."""
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
    database_draw: bool = False  # as :attr:`Info.database_draw`

    def scored(self) -> Score:
        """The score with its kind (side to move's view), a draw of the tables marked as one."""
        return Score.of(self.score, self.database_draw)


#: What a :class:`Searcher` made without settings searches with.
DEFAULT_SETTINGS: Final = EngineSettings()


class _Abort(Exception):
    """Raised inside the tree when the search must end now."""


class Searcher:
    """A search object kept across moves (hash table, history).

    :meth:`search` blocks; :meth:`start` runs it on its own thread, and
    :meth:`stop` or :meth:`ponder_hit` may then come from any other thread.

    It reads its :class:`~pedina.settings.EngineSettings` (:meth:`configure` changes
    them): ``hash_mb`` sizes the hash table, ``egdb_path`` names the endgame tables
    probed, ``multipv`` is the number of best root moves reported, and ``skill``
    (0..20, 20 = full strength) weakens play: the depth is capped at
    ``skill // 2 + 1`` and the move is drawn, with ``seed`` fixing the draw,
    among the root moves within ``(20 - skill) * 8`` of the best score. Each
    iteration reports the ``multipv`` best lines, and an iteration cut short
    reports the move it plays when that move beat the last finished iteration's
    best (so the last line reported is always the move played); with a skill set, one more
    :class:`Info` (``multipv`` 1) describes the move drawn, just before the
    search returns. An analysis search (:attr:`Limits.analysis`) is never
    weakened.

    ``threads`` above 1 starts ``threads - 1`` helper processes (:mod:`pedina.smp`) that
    search each position beside this search, on its hash table, shared: the nodes reported
    (:class:`Info`, :class:`Result`) are theirs too, while a node limit counts this process's.
    They search with the shipped evaluation, so a searcher given another ``evaluator`` searches
    alone, and so does a weakened one. ``table`` and ``node_slot`` make a helper's searcher.
    """

    def __init__(self, settings: EngineSettings = DEFAULT_SETTINGS, evaluator: Evaluator | None = None, *,
                 table: TranspositionTable | None = None, node_slot: int = 0) -> None:
        self._settings = settings
        self.evaluator = evaluator if evaluator is not None else default_evaluator()
        self._shipped_evaluation = evaluator is None
        self.tt = table if table is not None else TranspositionTable(settings.hash_mb, shared=settings.threads > 1)
        self._helpers: HelperPool | None = None
        self._helping: HelperPool | None = None  # the helpers of the running search, when it has them
        # A helper process's searcher (pedina.smp) keeps its node count in its word of the
        # shared table, tagged with the main search's node_tag.
        self._node_slot = node_slot
        self.node_tag = 0
        self._history: defaultdict[_Held, int] = defaultdict(int)
        self._killers: list[_Held] = [None] * (2 * MAX_PLY + 4)
        self._path: list[int] = []
        self._draw_plies = 80
        self._stop_flag = False
        self._ponder_hit_flag = False
        self._ponder_hit_time = 0.0
        self._requested = threading.Event()  # a stop or a ponder hit came: wakes an idle wait
        self.nodes = 0
        self._leaf_sum = 0
        self._seldepth = 0
        self._database_draw = False
        self._max_nodes: int | None = None
        self._hard_deadline: float | None = None
        self._budget: TimeBudget | None = None
        self._clock_start: float | None = None
        self._start = 0.0
        self._iter_best: tuple[RawMove, int] | None = None
        # Triangular principal variations: _lines[ply] is the best line found
        # from the PV node at that ply; _root_lines keeps each root move's line.
        self._lines: list[list[RawMove]] = [[] for _ in range(MAX_PLY + 2)]
        self._root_lines: dict[RawMove, list[RawMove]] = {}
        self._on_info: Callable[[Info], None] | None = None
        self._last_info: list[Info] = []
        self._egdb: EndgameTables | None = open_endgame_database(settings.egdb_path)
        self._egdb_pieces = self._egdb.pieces if self._egdb is not None else 0

    # -- control from other threads ------------------------------------------------

    def new_game(self) -> None:
        """Forget everything learnt in earlier games (hash table, history, killers)."""
        self.tt.clear()
        self._history = defaultdict(int)
        self._killers = [None] * (2 * MAX_PLY + 4)

    @property
    def settings(self) -> EngineSettings:
        """The settings searched with (see :meth:`configure`)."""
        return self._settings

    def configure(self, settings: EngineSettings) -> None:
        """Search with ``settings`` from the next search on. A new hash size, other endgame
        tables (the scores were found with other knowledge) or ``threads`` going from one to
        more or back (the table is made shared, or no longer) empty the hash table; tables that
        cannot be opened raise :class:`~pedina.egdb.EndgameDatabaseError`, and a table whose
        memory cannot be had :class:`MemoryError`, and change nothing."""
        tables = self._egdb
        if settings.egdb_path != self._settings.egdb_path:
            tables = open_endgame_database(settings.egdb_path)
        shared = settings.threads > 1
        if settings.hash_mb != self._settings.hash_mb or shared != self.tt.shared:
            # A MemoryError leaves the table as it was.
            self.tt = TranspositionTable(settings.hash_mb, shared=shared)
        if (self._helpers is not None and (settings.threads != self._settings.threads
                                           or settings.hash_mb != self._settings.hash_mb
                                           or settings.egdb_path != self._settings.egdb_path)):
            # They search with the old table and tables: new ones start on need. Ended before the
            # table is emptied, which one still searching would fill again with the old tables' scores.
            self._helpers.close()
            self._helpers = None
        if tables is not self._egdb:
            self._egdb = tables
            self._egdb_pieces = tables.pieces if tables is not None else 0
            self.tt.clear()
        self._settings = settings

    def prepare(self) -> None:
        """Open every endgame table, and start the helper processes of ``threads`` and wait for
        them, now: not on the clock of the first search that needs them (a broken table is
        dropped, a helper that does not start is left out: see :meth:`problems`)."""
        if self._egdb is not None:
            self._egdb.open_all(drop_broken=True)
        helpers = self._start_helpers()
        if helpers is not None:
            helpers.wait_ready()

    def _start_helpers(self) -> HelperPool | None:
        if (self._helpers is None and self._settings.threads > 1 and self._node_slot == 0
                and self._shipped_evaluation):
            self._helpers = HelperPool(self._settings, self.tt, self._settings.threads - 1)
        return self._helpers

    def problems(self) -> list[str]:
        """What went wrong since the last call without stopping a search, one line each: an
        endgame table found broken and dropped, a helper process that failed or died (the
        search goes on without it)."""
        problems = self._egdb.take_errors() if self._egdb is not None else []
        return problems + (self._helpers.take_failures() if self._helpers is not None else [])

    def stop(self) -> None:
        """Ask a running search to return as soon as possible (thread-safe)."""
        self._stop_flag = True
        self._requested.set()

    def ponder_hit(self) -> None:
        """The predicted move was played: switch a ponder search to the clock."""
        self._ponder_hit_time = time.perf_counter()
        self._ponder_hit_flag = True
        self._requested.set()

    # -- the search ------------------------------------------------------------------

    def start(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None,
              on_done: Callable[[Result | None, Exception | None], None],
              clock_from: float | None = None) -> threading.Thread:
        """Run the search on a new thread; ``on_done(result, error)`` gets its end.

        ``clock_from`` is the :func:`time.perf_counter` time the move's clock
        started, when that was before this call (a caller's own work then counts
        against the move's time); by default the clock starts with the search.
        A ponder search ignores it: its clock starts at the ponder hit.

        Earlier stop and ponder-hit requests are cleared here, in the caller's
        thread, so a :meth:`stop` or :meth:`ponder_hit` sent as soon as this
        returns is never lost (as it could be if the new thread cleared them).
        """
        self._clear_requests()
        return search_thread(functools.partial(self._search, board, limits, on_info, clock_from), on_done)

    def search(self, board: Board, limits: Limits,
               on_info: Callable[[Info], None] | None = None) -> Result:
        """Search the current position of ``board`` (whose history counts for repetitions)."""
        self._clear_requests()
        return self._search(board, limits, on_info)

    def _clear_requests(self) -> None:
        self._stop_flag = False
        self._ponder_hit_flag = False
        self._requested.clear()

    def _search(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None,
                clock_from: float | None = None) -> Result:
        self._start = start = time.perf_counter()
        self._on_info = on_info
        self._last_info = []
        self._root_lines = {}
        self.nodes = 0
        self._leaf_sum = 0
        self._seldepth = 0
        self._database_draw = False
        self._max_nodes = limits.nodes
        self._budget = time_budget(limits)
        self._clock_start = None
        self._hard_deadline = None
        if not limits.ponder:
            self._start_clock(start if clock_from is None else min(clock_from, start))
        position = board.position
        white = position.white_to_move
        us, them = (position.white, position.black) if white else (position.black, position.white)
        kings = position.kings
        reversible = board.reversible_plies
        self._draw_plies = board.draw_plies
        self.tt.new_search()
        root_moves = generate(us, them, kings, white)
        if not root_moves:
            return Result(None, None, loss_in(0), 0, 0, time.perf_counter() - start)
        history = [position_key(*_sides(p.white, p.black, p.white_to_move), p.kings, p.white_to_move)
                   for p in board.positions[max(0, len(board.positions) - 1 - reversible):-1]]
        for key in list(self._history):
            self._history[key] >>= 2
        settings = self._settings
        skilled = settings.skill < 20 and not limits.analysis
        max_depth = min(limits.depth or MAX_DEPTH, MAX_DEPTH)
        if skilled:
            max_depth = min(max_depth, max(1, settings.skill // 2 + 1))
        if self._egdb_pieces and popcount(us | them) <= self._egdb_pieces:
            probed = self._egdb.lookup(us, them, kings, white) if self._egdb is not None else None
            if probed is not None and (not probed[0] or probed[1] >= 0):
                max_depth = 1  # every move leads into the database, which settles it
            self._database_draw = probed is not None and not probed[0]
        if len(root_moves) == 1 and limits.on_clock:
            # Nothing to choose: a short search gives the move a true score, and it goes out at once.
            max_depth = min(max_depth, FORCED_MOVE_DEPTH)
        lines = min(settings.multipv, len(root_moves))
        exact = (skilled or lines > 1) and len(root_moves) > 1
        order = list(root_moves)
        # Helpers would only make a weakened engine stronger, and a settled root needs none.
        helpers = self._start_helpers() if max_depth > FORCED_MOVE_DEPTH and not skilled else None
        self._helping = helpers
        if helpers is not None:
            helpers.begin(board, self.tt.age)
        try:
            completed, results, results_depth = self._deepen(us, them, kings, white, root_moves, order, history,
                                                             max_depth, reversible, exact, lines)
            self._wait_if_pondering(limits)
        finally:
            if helpers is not None:
                helpers.end()
        finished = helpers.deepest() if helpers is not None and not exact else None
        if finished is not None and completed < finished[0] <= max_depth and finished[1] < len(root_moves):
            # A helper got deeper: its answer is the deeper search's (the table holds its line). A
            # move beyond the root's is no helper's of this build (an engine upgraded under a running one).
            completed = results_depth = finished[0]
            results = [(finished[2], root_moves[finished[1]])]
        if not results:  # not even depth 1 finished: any legal move beats none
            results = [(0, order[0])]
        score, best = self._pick(results, hash(position)) if skilled else results[0]
        pv = self._pv(us, them, kings, white, best, max(completed, 1) + 8)
        elapsed = time.perf_counter() - start
        nodes = self._all_nodes()
        self._helping = None  # the pool holds a view of its table, which a new size or threads replaces
        shown = self._last_info[0] if self._last_info else None
        if results_depth and self._on_info is not None and (shown is None or (shown.score, shown.pv) != (score, pv)):
            # Clients keep the last line they are sent: it must be the line played (an
            # unfinished iteration's, or a weaker skill's pick).
            self._on_info(Info(results_depth, self._mean_depth(), score, nodes, elapsed, pv, 1, self._seldepth,
                               self._database_draw))
        return Result(pv[0], pv[1] if len(pv) > 1 else None, score, completed, nodes, elapsed, pv,
                      self._database_draw)

    def _deepen(self, us: int, them: int, kings: int, white: bool, root_moves: list[RawMove], order: list[RawMove],
                history: list[int], max_depth: int, reversible: int, exact: bool, lines: int
                ) -> tuple[int, list[tuple[int, RawMove]], int]:
        """Iterative deepening to ``max_depth``, until a stop or the clock ends it: (the last
        depth completed, the root moves' results, the depth those results come from). A helper
        (:mod:`pedina.smp`) searches every other depth only (odd or even ones by its slot), ahead
        of the main search, and keeps each iteration it finishes in its word of the table."""
        slot = self._node_slot
        results: list[tuple[int, RawMove]] = []
        completed = 0
        results_depth = 0  # the depth that results' score comes from
        instability = 0.0
        for depth in range(1, max_depth + 1):
            if slot and depth > 1 and (depth + slot) % 2:
                continue
            self._begin_iteration(history)
            try:
                found = self._root(us, them, kings, white, order, depth, reversible, exact)
            except _Abort:
                if not exact and self._iter_best is not None:
                    results = [(self._iter_best[1], self._iter_best[0])]
                    results_depth = depth
                break
            # Moves are compared by value, never by identity: compiled by mypyc, a
            # tuple taken out of a list is a new object each time.
            if results and found[0][1] != results[0][1]:
                instability += 1.0
            results = found
            best_first = [m for _, m in found]
            order = best_first + [m for m in order if m not in best_first]
            completed = results_depth = depth
            if slot:
                self.tt.counters[MAX_PROCESSES + slot] = finished_iteration(
                    self.node_tag, depth, root_moves.index(results[0][1]), results[0][0])
            self._report(us, them, kings, white, results[:lines], depth)
            if self._stop_now(results[0][0], depth, instability):
                break
            instability *= 0.5
        return completed, results, results_depth

    def _begin_iteration(self, history: list[int]) -> None:
        # A method of its own: mypyc would otherwise take ``_iter_best`` for None
        # for the rest of search(), not seeing that _root() sets it.
        self._path = list(history)
        self._iter_best = None

    def _root(self, us: int, them: int, kings: int, white: bool, moves: list[RawMove],
              depth: int, reversible: int, exact: bool) -> list[tuple[int, RawMove]]:
        """One pass over the root ``moves`` at ``depth``: every move with its exact score,
        best first, when ``exact``; else the best move alone, with its score."""
        alpha = -INF
        beta = INF
        best = -INF
        best_move = moves[0]
        lines = self._lines
        scored: list[tuple[int, RawMove]] = []
        self._path.append(position_key(us, them, kings, white))
        for i, move in enumerate(moves):
            frm, to, taken, toggle, _ = move
            child = (them ^ taken, us ^ frm ^ to, kings ^ toggle, not white)
            child_reversible = reversible + 1 if not taken and frm & kings else 0
            lines[1] = []
            if i == 0 or exact:
                value = -self._pvs(*child, depth - 1, -beta, -alpha, 1, child_reversible)
            else:
                value = -self._pvs(*child, depth - 1, -alpha - 1, -alpha, 1, child_reversible)
                if value > alpha:
                    lines[1] = []
                    value = -self._pvs(*child, depth - 1, -beta, -alpha, 1, child_reversible)
            if exact:
                scored.append((value, move))
            if exact or value > best:
                self._root_lines[move] = [move] + lines[1]
            if value > best:
                best = value
                best_move = move
                self._iter_best = (move, value)
                if not exact and value > alpha:
                    alpha = value
        self._path.pop()
        if exact:
            scored.sort(key=_score_of, reverse=True)  # stable: ties keep the move order
            return scored
        return [(best, best_move)]

    def _pvs(self, us: int, them: int, kings: int, white: bool, depth: int,
             alpha: int, beta: int, ply: int, reversible: int) -> int:
        """Principal-variation search of a node; ``reversible`` counts reversible plies before it."""
        # Step 1. Out of depth: the captures are played out and the quiet position evaluated.
        if depth <= 0:
            return self._quiesce(us, them, kings, white, alpha, beta, ply, reversible)
        nodes = self.nodes + 1
        self.nodes = nodes
        if not nodes & CHECK_MASK:
            self._check(nodes)

        # Step 2. Draws by the game's rules: the move count, and a repetition on the line or in
        # the game (only a king move is reversible, so only every other position since the last
        # irreversible move, four plies back at the nearest, can be the same), told by its key.
        key = position_key(us, them, kings, white)
        path = self._path
        if reversible >= 4:
            if reversible >= self._draw_plies:
                return 0
            j = len(path) - 4
            stop = len(path) - reversible
            while j >= stop:
                if path[j] == key:
                    return 0
                j -= 2

        # Step 3. The endgame database settles the position, or scores a win without a
        # distance at the leaves (see _quiesce).
        if self._egdb_pieces and popcount(us | them) <= self._egdb_pieces:
            known, _ = self._probe(us, them, kings, white, reversible)
            if known is not None:
                return known

        # Step 4. The transposition table: a cut-off at a null-window node, else the move to try first.
        tt = self.tt
        data, move_taken = tt.probe(key)
        move_ends = 0
        forced = False
        if data:
            move_ends = stored_ends(data)
            forced = stored_forced(data)
            if stored_depth(data) >= depth and beta - alpha == 1:
                score = from_table(stored_score(data), ply)
                flag = stored_bound(data)
                if flag == EXACT or (flag == LOWER and score >= beta) or (flag == UPPER and score <= alpha):
                    return score
        if ply >= MAX_PLY:
            return self._quiesce(us, them, kings, white, alpha, beta, ply, reversible)

        # Step 5. ProbCut: a shallow search that clears beta by a margin stands for the full one.
        if (beta - alpha == 1 and depth >= PROBCUT_MIN_DEPTH
                and within_estimates(beta, beta + PROBCUT_MARGIN)):
            bound = beta + PROBCUT_MARGIN
            if self._pvs(us, them, kings, white, depth - PROBCUT_REDUCTION, bound - 1, bound, ply, reversible) >= bound:
                return beta
            # The shallow search left its best move in the table: the full one tries it first.
            shallow, shallow_taken = tt.probe(key)
            if stored_ends(shallow):
                move_ends = stored_ends(shallow)
                move_taken = shallow_taken
                forced = stored_forced(shallow)
        searched_depth = depth

        # Step 6. The first move: the table's move, or else the first killer, when it is legal
        # here, is tried before the other moves are generated: it often cuts the node off, and
        # then only the captures were (they say whether a step is legal).
        hash_move: _Held = None
        first: _Held = None
        captures: list[RawMove] | None = None
        killer: _Held = self._killers[2 * ply]
        if move_ends or killer is not None:
            empty = BOARD ^ us ^ them
            captures = generate_captures(us, them, kings, white, empty)
            if move_ends:
                hash_move = first = _legal_table_move(us, kings, white, empty, captures, move_ends, move_taken)
            if first is None and killer is not None and not captures:
                frm, to, _, toggle, _ = cast(RawMove, killer)
                # A killer (never a capture) is legal when its piece is ours and of the same kind,
                # the target is empty and a man goes forward.
                if (frm & us and to & empty and frm & kings == frm & toggle
                        and (frm & kings or (to == frm >> 4 or to == frm >> 5) == white)):
                    first = killer
        if first is not None:
            moves = cast("list[RawMove]", [first])
            generated = False
        else:
            if captures is None:
                moves = generate(us, them, kings, white)
            else:
                moves = captures or generate_non_captures(us, kings, white, BOARD ^ us ^ them)
            if not moves:
                return loss_in(ply)
            forced = len(moves) == 1
            if not forced:
                self._order(moves, None, ply)
            generated = True
        # A forced move keeps the depth: it costs the side nothing to choose.
        if not forced:
            depth -= 1

        # Step 7. The moves: the first with the full window, the others with a null window
        # (a late non-capture a ply shallower first), searched again when they beat alpha.
        original_alpha = alpha
        pv_node = beta - alpha > 1
        lines = self._lines
        best = -INF
        best_move: _Held = None
        held = cast("list[_Held]", moves)
        # Only king moves are reversible, so only a position where the mover has a
        # king can be repeated further down the line: the others stay off the path.
        if us & kings:
            path.append(key)
        next_ply = ply + 1
        child_white = not white
        i = 0
        while i < len(moves):
            move = moves[i]
            frm, to, taken, toggle, _ = move
            child_us = them ^ taken
            child_them = us ^ frm ^ to
            child_kings = kings ^ toggle
            if taken:
                child_reversible = 0
            else:
                child_reversible = reversible + 1 if frm & kings else 0
            if pv_node:
                lines[next_ply] = []
            if depth <= 0:
                value = -self._quiesce(child_us, child_them, child_kings, child_white,
                                       -beta, -alpha, next_ply, child_reversible)
            elif i == 0:
                value = -self._pvs(child_us, child_them, child_kings, child_white, depth,
                                   -beta, -alpha, next_ply, child_reversible)
            else:
                # A late non-capture (not a promotion) comes after the hash move, the killers and
                # the best by history, so it rarely matters: when the shallow search says it
                # does, it is searched again at full depth.
                searched = depth
                if (i >= LMR_MIN_MOVES and depth >= LMR_MIN_DEPTH and not taken
                        and (frm & kings or not toggle)):
                    searched = depth - 1
                value = -self._pvs(child_us, child_them, child_kings, child_white, searched,
                                   -alpha - 1, -alpha, next_ply, child_reversible)
                if searched < depth and value > alpha:
                    value = -self._pvs(child_us, child_them, child_kings, child_white, depth,
                                       -alpha - 1, -alpha, next_ply, child_reversible)
                if alpha < value < beta:
                    value = -self._pvs(child_us, child_them, child_kings, child_white, depth,
                                       -beta, -alpha, next_ply, child_reversible)
            if value > best:
                best = value
                best_move = held[i]
                if value > alpha:
                    alpha = value
                    if value < beta:
                        if pv_node:
                            lines[ply] = cast("list[RawMove]", [best_move]) + lines[next_ply]
                    else:
                        # A non-capture that cut the node off is remembered for its siblings.
                        if not taken and not forced:
                            self._history[best_move] += depth * depth + 1
                            killers = self._killers
                            if killers[2 * ply] != best_move:
                                killers[2 * ply + 1] = killers[2 * ply]
                                killers[2 * ply] = best_move
                        break
            i += 1
            if not generated and i == 1:
                generated = True
                # The captures are known (a first move is only tried after them): when there are
                # none, the moves are the steps.
                assert captures is not None
                rest = list(captures) if captures else generate_non_captures(us, kings, white, BOARD ^ us ^ them)
                held_rest = cast("list[_Held]", rest)
                if first in held_rest:
                    held_rest.remove(first)
                self._order(rest, first, ply)
                moves.extend(rest)
        if us & kings:
            path.pop()

        # Step 8. The result goes into the table: a bound, or the exact score with its best move.
        if best <= original_alpha:
            flag = UPPER
            best_move = hash_move
        elif best >= beta:
            flag = LOWER
        else:
            flag = EXACT
        tt.store(key, searched_depth, flag, to_table(best, ply), cast("RawMove | None", best_move), forced)
        return best

    def _order(self, moves: list[RawMove], hash_move: _Held, ply: int) -> None:
        """Sort non-captures: killers first, then by history (captures all tie on precedence)."""
        if len(moves) < 2 or moves[0][2]:
            return
        held = cast("list[_Held]", moves)
        held.sort(key=self._history.__getitem__, reverse=True)
        killers = self._killers
        _promote(held, killers[2 * ply + 1], hash_move)
        _promote(held, killers[2 * ply], hash_move)

    def _quiesce(self, us: int, them: int, kings: int, white: bool, alpha: int, beta: int, ply: int,
                 reversible: int = 0) -> int:
        """Play out the compulsory captures, then evaluate the quiet position; ``reversible``
        counts the reversible plies before it (0: it follows a capture or man move)."""
        nodes = self.nodes + 1
        self.nodes = nodes
        if not nodes & CHECK_MASK:
            self._check(nodes)
        unknown = 0  # a database win (1) or loss (-1) without a distance: the evaluation orders it
        if self._egdb_pieces and popcount(us | them) <= self._egdb_pieces:
            known, unknown = self._probe(us, them, kings, white, reversible)
            if known is not None:
                return known
        captures = generate_captures(us, them, kings, white, BOARD ^ us ^ them)
        if captures:
            best = -INF
            next_ply = ply + 1
            for frm, to, taken, toggle, _ in captures:
                value = -self._quiesce(them ^ taken, us ^ frm ^ to, kings ^ toggle, not white,
                                       -beta, -alpha, next_ply)
                if value > best:
                    best = value
                    if value > alpha:
                        alpha = value
                        if value >= beta:
                            break
            return best
        self._leaf_sum += ply + _LEAF_ONE
        if ply > self._seldepth:
            self._seldepth = ply
        value = self.evaluator.evaluate(us, them, kings, white)
        if value == NO_MOVES:
            return loss_in(ply)
        if unknown:
            return progress_score(unknown, value)
        return value

    def _probe(self, us: int, them: int, kings: int, white: bool, reversible: int) -> tuple[int | None, int]:
        """(the database's score of a position, see the module's docstring; 0), or, for a win
        or loss whose table has no distance, to be searched on (unless right after a capture
        or man move): (``None``, its result, 1 or -1); (``None``, 0) for a position in no table.
        ``reversible`` counts the reversible plies before the position."""
        assert self._egdb is not None
        found = self._egdb.lookup(us, them, kings, white)
        if found is None:
            return None, 0
        result, distance = found
        if not result:
            return 0, 0
        if distance < 0:
            if reversible:
                return None, result
        elif reversible + distance > self._draw_plies:
            return 0, 0
        return database_score(result, distance if reversible else 0), 0

    # -- limits and reports -----------------------------------------------------------

    def _start_clock(self, now: float) -> None:
        self._clock_start = now
        if self._budget is not None:
            self._hard_deadline = now + self._budget.hard

    def _check(self, nodes: int) -> None:
        """Every few hundred nodes: stop flag, ponder hit, deadline, node limit."""
        # Compiled, the tree never returns to the interpreter's loop, which is where the GIL
        # changes hands: without this the protocol thread could not read a stop or a ping.
        # Only a real sleep lets a waiting thread in (a bare release, as os.sched_yield
        # makes, is taken back before the waiter wakes), and the shortest one lasts the
        # kernel's timer slack, 50 to 80 us: once every 256 nodes, that was a fifth of a
        # compiled search's time.
        if not nodes & HAND_OVER_MASK:
            time.sleep(0)
        if self._node_slot:
            self.tt.counters[self._node_slot] = self.node_tag << TAG_SHIFT | nodes
        if self._stop_flag:
            raise _Abort
        if self._clock_start is None and self._ponder_hit_flag:
            self._start_clock(self._ponder_hit_time)
        if self._hard_deadline is not None and time.perf_counter() >= self._hard_deadline:
            raise _Abort
        if self._max_nodes is not None and self.nodes >= self._max_nodes:
            raise _Abort

    def _stop_now(self, score: int, depth: int, instability: float) -> bool:
        """After an iteration: is another one worth starting?"""
        if self._stop_flag:
            return True
        if self._clock_start is None and self._ponder_hit_flag:
            self._start_clock(self._ponder_hit_time)
        if self._max_nodes is not None and self.nodes >= self._max_nodes:
            return True
        if self._clock_start is None or self._budget is None:
            return False
        plies = proven_plies(score)
        if plies is not None and plies <= depth:
            return True
        return not self._budget.allows_iteration(time.perf_counter() - self._clock_start, instability)

    def _wait_if_pondering(self, limits: Limits) -> None:
        """Infinite and unhit ponder searches only end on stop (or the ponder hit)."""
        while not self._stop_flag and (limits.infinite or (limits.ponder and not self._ponder_hit_flag)):
            self._requested.wait()
            self._requested.clear()  # the flags, set before the event, are read again

    def _all_nodes(self) -> int:
        """The nodes of this search, its helpers' too."""
        helpers = self._helping
        return self.nodes + (helpers.nodes() if helpers is not None else 0)

    def _mean_depth(self) -> float:
        leaves = self._leaf_sum >> 32
        return (self._leaf_sum & (_LEAF_ONE - 1)) / leaves if leaves else 0.0

    def _report(self, us: int, them: int, kings: int, white: bool,
                lines: list[tuple[int, RawMove]], depth: int) -> None:
        infos = []
        elapsed = time.perf_counter() - self._start
        mean = self._mean_depth()
        nodes = self._all_nodes()
        for index, (score, move) in enumerate(lines, start=1):
            pv = self._pv(us, them, kings, white, move, depth + 8)
            infos.append(Info(depth, mean, score, nodes, elapsed, pv, index, self._seldepth, self._database_draw))
        self._last_info = infos
        if self._on_info is not None:
            for info in infos:
                self._on_info(info)

    def _pv(self, us: int, them: int, kings: int, white: bool, first: RawMove, limit: int) -> list[Move]:
        """The line from ``first`` on: the search's own line for it, then the hash
        table's best moves while they last."""
        line = self._root_lines.get(first) or [first]
        pv: list[Move] = []
        seen = {position_key(us, them, kings, white)}
        move: RawMove | None = line[0]
        while move is not None and len(pv) < limit:
            pv.append(Move._from_raw(move))
            frm, to, taken, toggle, _ = move
            us, them, kings, white = them ^ taken, us ^ frm ^ to, kings ^ toggle, not white
            key = position_key(us, them, kings, white)
            if key in seen:
                break
            seen.add(key)
            if len(pv) < len(line):
                move = line[len(pv)]
            else:
                data, taken = self.tt.probe(key)
                ends = stored_ends(data)
                move = next((m for m in generate(us, them, kings, white) if is_move(m, ends, taken)), None)
        return pv

    def _pick(self, results: list[tuple[int, RawMove]], key: int) -> tuple[int, RawMove]:
        """The skill setting's choice: a seeded draw among the moves close to the best."""
        margin = (20 - self._settings.skill) * 8
        ranked = sorted(results, key=lambda r: -r[0])
        top = ranked[0][0]
        candidates = [r for r in ranked if r[0] >= top - margin]
        weights = [r[0] - (top - margin) + 1 for r in candidates]
        rng = random.Random(self._settings.seed * 1_000_003 ^ key)
        return rng.choices(candidates, weights=weights)[0]


def _promote(moves: list[_Held], killer: _Held, hash_move: _Held) -> None:
    """Put ``killer`` first in ``moves`` when it is one of them and not ``hash_move``."""
    if killer is not None and killer != hash_move and killer in moves:
        moves.remove(killer)
        moves.insert(0, killer)


def _legal_table_move(us: int, kings: int, white: bool, empty: int, captures: list[RawMove],
                      ends: int, taken: int) -> RawMove | None:
    """The move the table stored as ``ends`` and ``taken`` (see :mod:`pedina.tt`) when it is one
    of the position's legal moves, else ``None`` (the entry was another position's); ``captures``
    are the position's captures, ``empty`` its empty squares."""
    if captures:
        for move in captures:
            if is_move(move, ends, taken):
                return move
        return None
    if taken:
        return None
    frm = ends & us
    return step_move(us, kings, white, empty, frm, ends ^ frm)


def _score_of(scored: tuple[int, RawMove]) -> int:
    return scored[0]


def search_thread(search: Callable[[], Result],
                  on_done: Callable[[Result | None, Exception | None], None]) -> threading.Thread:
    """Run ``search`` on a new daemon thread; ``on_done`` gets its result, or the exception it
    raised (handed to the caller, who must still answer)."""
    # No closure here or in Searcher.start: compiled, a closure's environment object is put up
    # for reuse as soon as it starts being freed, and freeing one can free a whole searcher,
    # whose helpers' end lets other threads run. A search started then took that object, and
    # had its fields cleared under it (an AttributeError, or a segmentation fault).
    thread = threading.Thread(target=_run_search, args=(search, on_done), name="pedina-search", daemon=True)
    thread.start()
    return thread


def _run_search(search: Callable[[], Result], on_done: Callable[[Result | None, Exception | None], None]) -> None:
    try:
        result = search()
    except Exception as error:
        on_done(None, error)
        return
    on_done(result, None)


def _sides(white: int, black: int, white_to_move: bool) -> tuple[int, int]:
    """(mover's pieces, other side's pieces)."""
    return (white, black) if white_to_move else (black, white)


__all__ = ["EndgameTables", "FORCED_MOVE_DEPTH", "Info", "Result", "Searcher", "search_thread"]
