"""The time manager: soft, hard and watchdog limits for every kind of time control."""

from __future__ import annotations

import pytest

from pedina.timeman import (
    DEFAULT_MOVE_TIME, DEFAULT_MOVES_TO_GO, GRACE, OVERHEAD, Limits, TimeBudget, bounded,
    time_budget,
)


def test_no_time_limit_no_budget() -> None:
    assert time_budget(Limits()) is None
    assert time_budget(Limits(depth=3, nodes=1000)) is None
    assert time_budget(Limits(move_time=1.0, infinite=True)) is None


def test_move_time_is_a_hard_limit_with_the_watchdog_just_past_it() -> None:
    budget = time_budget(Limits(move_time=1.0))
    assert budget is not None
    assert budget.soft == budget.hard == pytest.approx(0.995)
    assert budget.hard < 1.0 < budget.watchdog <= 1.0 + GRACE
    # Nothing is kept for later moves: iterations start until the end (on a clock, not past 75%).
    assert budget.allows_iteration(0.99, 0.0) and not budget.allows_iteration(0.996, 0.0)
    on_clock = time_budget(Limits(clock=60.0))
    assert on_clock is not None and not on_clock.allows_iteration(0.76 * on_clock.soft, 0.0)


@pytest.mark.parametrize("clock, inc, moves", [(60.0, 0.0, None), (10.0, 0.0, 1), (5.0, 0.1, 20),
                                               (0.2, 0.0, None), (0.05, 0.0, None), (0.01, 0.0, 1),
                                               (0.0, 0.1, None), (300.0, 2.0, 40)])
def test_clock_budgets_stay_inside_the_clock(clock: float, inc: float, moves: int | None) -> None:
    budget = time_budget(Limits(clock=clock, inc=inc, moves_to_go=moves))
    assert budget is not None
    assert 0 < budget.soft <= budget.hard <= budget.watchdog
    # The session's own answer comes before the clock falls, overhead kept in hand.
    assert budget.watchdog <= max(0.001, clock + inc - OVERHEAD)


def test_a_long_clock_is_spread_over_the_moves() -> None:
    budget = time_budget(Limits(clock=60.0))
    assert budget is not None and budget.soft == pytest.approx((60.0 - OVERHEAD) / DEFAULT_MOVES_TO_GO)
    assert 1.0 < budget.soft <= budget.hard < 60.0 / 4
    last = time_budget(Limits(clock=10.0, moves_to_go=1))
    assert last is not None and 5.0 < last.hard < 10.0 - OVERHEAD


def test_a_clock_is_paced_over_every_move_to_go() -> None:
    # A DXP GAMEREQ of 1 minute for 600 moves asks for about 0.1 s a move, not 60/50.
    budget = time_budget(Limits(clock=59.0, moves_to_go=600))
    assert budget is not None and budget.soft == pytest.approx((59.0 - OVERHEAD) / 600)
    assert budget.hard == pytest.approx(4 * budget.soft)


def test_move_time_and_clock_together_take_the_tighter() -> None:
    budget = time_budget(Limits(move_time=5.0, clock=1.0))
    assert budget is not None and budget.watchdog < 1.0
    loose = time_budget(Limits(move_time=0.5, clock=100.0))
    assert loose is not None and loose.hard == pytest.approx(0.495)


def test_bounded_gives_think_a_move_time_and_analysis_no_end() -> None:
    assert bounded(Limits()).move_time == DEFAULT_MOVE_TIME
    analysis = bounded(Limits(analysis=True))
    assert analysis.infinite and analysis.analysis
    assert bounded(Limits(ponder=True)).ponder
    depth = Limits(depth=4)
    assert bounded(depth) is depth


def test_on_clock() -> None:
    assert Limits(move_time=1.0).on_clock and Limits(clock=3.0).on_clock
    assert not Limits(depth=3).on_clock
    assert not Limits(move_time=1.0, ponder=True).on_clock
    assert not Limits(move_time=1.0, analysis=True).on_clock  # analysis searches a lone move too


def test_an_iteration_starts_before_75_percent_of_a_soft_limit_stretched_by_instability() -> None:
    budget = TimeBudget(soft=1.0, hard=2.5, watchdog=3.0)
    assert budget.allows_iteration(0.75, 0.0) and not budget.allows_iteration(0.76, 0.0)
    assert budget.allows_iteration(1.27, 1.0) and not budget.allows_iteration(1.28, 1.0)  # 1.7 s soft
    assert budget.allows_iteration(1.87, 10.0) and not budget.allows_iteration(1.88, 10.0)  # the hard 2.5 s
