"""The time manager: what bounds a search, and how long a move may take.

:class:`Limits` is what a client asks for (depth, nodes, a time a move, a clock
with increment and moves to go, or no bound); :func:`time_budget` turns it into
the three times that every adapter and the searcher share:

- ``soft``: on a clock, no new iteration is started past :data:`ITERATION_START`
  (75%) of it, as an iteration takes about as long as all before it and the
  time one started later would mostly be wasted, where it could have been kept
  for the moves to come; it is stretched when the best move keeps changing
  (:meth:`TimeBudget.allows_iteration`). A move time keeps nothing for later,
  so its iterations start until its end: an unfinished one still plays the best
  move it has searched, and it searches the previous best move first;
- ``hard``: the searcher stops itself here, in the middle of an iteration;
- ``watchdog``: the session answers here from the last reported line, even if
  the searcher has not returned (a bug, a stuck thread, a starved CPU): at most
  :data:`GRACE` past a move time, and always inside the clock.

Every time is in seconds from the moment the move's clock starts (the search's
start, or the ponder hit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Time per move when nothing bounds a ``think`` (seconds).
DEFAULT_MOVE_TIME = 1.0
#: Time kept in hand on every move for the adapter, the OS and the pipe (seconds).
OVERHEAD = 0.03
#: How long after ``hard`` the searcher has to return before the session answers without it.
GRACE = 0.03
#: The longest one wait is asked to last (seconds): ``threading`` refuses a timeout past the
#: platform's clock (``move-time=1e10`` is one), so a far deadline is waited for in pieces.
LONGEST_WAIT: Final = 3600.0
# Both measured together on a clock (3+0.03, 604 games): 30 moves and 55% ended a game with
# 35% of the clock and its increments unused, on average; 20 moves and 75% with 19%, and
# scored +20.7 +/- 18.5 Elo against them (README, "The search").
#: Moves the clock is spread over when the client gives no moves to go.
DEFAULT_MOVES_TO_GO = 20
#: On a clock, no iteration starts past this share of the (stretched) soft limit.
ITERATION_START: Final = 0.75
#: The soft limit grows by this share for each unit of instability (a change of best move
#: between iterations counts 1, halved at every iteration after)...
INSTABILITY_STRETCH: Final = 0.7
#: ...counted up to this many units (never past the hard limit).
MAX_INSTABILITY: Final = 3.0


@dataclass
class Limits:
    """What bounds a search. All times in seconds; ``None`` means no bound.

    ``clock`` is the time left on our clock and ``inc`` the increment credited
    before each move (Hub semantics); ``moves_to_go`` the moves that clock is
    for. ``infinite`` searches until stopped; ``ponder`` searches until
    stopped or until the ponder hit, after which the clock applies.
    ``analysis`` asks for the position's lines, not for a move to play: a
    lone legal move is searched like any other position, and the skill
    setting does not weaken the search.
    """

    depth: int | None = None
    nodes: int | None = None
    move_time: float | None = None
    clock: float | None = None
    inc: float = 0.0
    moves_to_go: int | None = None
    infinite: bool = False
    ponder: bool = False
    analysis: bool = False

    @property
    def on_clock(self) -> bool:
        """A move to play, limited by time (per move or clock) and not pondering: a lone legal
        move then gets only a short search (:data:`pedina.search.FORCED_MOVE_DEPTH`)."""
        return ((self.move_time is not None or self.clock is not None)
                and not (self.infinite or self.ponder or self.analysis))

    @property
    def unbounded(self) -> bool:
        """Nothing would ever end this search but a stop."""
        return (self.depth is None and self.nodes is None and self.move_time is None
                and self.clock is None)


@dataclass(frozen=True)
class TimeBudget:
    """The soft, hard and watchdog limits of one move (see the module's docstring), and the
    share of the soft limit past which no iteration starts."""

    soft: float
    hard: float
    watchdog: float
    iteration_start: float = ITERATION_START

    def allows_iteration(self, elapsed: float, instability: float) -> bool:
        """Whether a new iteration may start ``elapsed`` seconds into the move, with the best
        move as unstable as ``instability`` says (see :data:`INSTABILITY_STRETCH`)."""
        soft = min(self.soft * (1.0 + INSTABILITY_STRETCH * min(instability, MAX_INSTABILITY)), self.hard)
        return elapsed <= self.iteration_start * soft


def bounded(limits: Limits) -> Limits:
    """``limits`` with a bound when they have none: analysis (:attr:`Limits.analysis`) goes
    on until stopped, a move gets :data:`DEFAULT_MOVE_TIME`."""
    if not limits.unbounded or limits.infinite:
        return limits
    if limits.analysis:
        return Limits(inc=limits.inc, moves_to_go=limits.moves_to_go, infinite=True, ponder=limits.ponder,
                      analysis=True)
    return Limits(move_time=DEFAULT_MOVE_TIME, inc=limits.inc, moves_to_go=limits.moves_to_go,
                  ponder=limits.ponder)


def time_budget(limits: Limits) -> TimeBudget | None:
    """The times of one move under ``limits``, or ``None`` when no time bounds it.

    A move time is a hard limit. On a clock, ``hard`` stays below the clock
    (plus the increment) less :data:`OVERHEAD`, so the engine never loses on
    time. The clock is paced over the moves to go, however many (a DXP GAMEREQ of
    1 minute for 600 moves is how a match asks for 0.1 s a move), or over
    :data:`DEFAULT_MOVES_TO_GO` moves without them; the last move of a period is
    given most of what is left.
    """
    if limits.infinite:
        return None
    if limits.move_time is not None:
        hard = max(0.001, limits.move_time - 0.005)
        budget = TimeBudget(hard, hard, max(hard, limits.move_time - 0.002) + GRACE, iteration_start=1.0)
        if limits.clock is None:
            return budget
        on_clock = _clock_budget(limits.clock, limits.inc, limits.moves_to_go)
        return budget if budget.hard <= on_clock.hard else on_clock
    if limits.clock is None:
        return None
    return _clock_budget(limits.clock, limits.inc, limits.moves_to_go)


def _clock_budget(clock: float, inc: float, moves_to_go: int | None) -> TimeBudget:
    usable = max(0.001, clock + inc - OVERHEAD)
    if moves_to_go is not None and moves_to_go <= 1:
        soft, hard = usable * 0.6, usable * 0.9
    else:
        moves = moves_to_go or DEFAULT_MOVES_TO_GO
        base = max(0.0, clock - OVERHEAD) / moves + 0.9 * inc
        hard = min(usable * 0.4, base * 4)
        soft = min(base, hard)
    soft, hard = max(0.001, soft), max(0.001, hard)
    return TimeBudget(soft, hard, max(hard, min(hard + GRACE, usable)))


__all__ = ["DEFAULT_MOVE_TIME", "GRACE", "LONGEST_WAIT", "Limits", "OVERHEAD", "TimeBudget", "bounded", "time_budget"]
