"""Match statistics against values worked out by hand from the formulas."""

from __future__ import annotations

import math

import pytest

from pedina.protocol.match.stats import Sprt, elo_estimate, elo_of_score, los, score_of_elo, variance

Z95 = 1.959963984540054  # the 97.5% quantile of the standard normal distribution


def test_even_match_is_zero_elo_and_even_los() -> None:
    est = elo_estimate(30, 40, 30)
    assert est.score == 0.5
    assert est.elo == 0.0
    assert est.los == 0.5
    assert est.low == pytest.approx(-est.high)


def test_elo_interval_and_los_for_60_20_20() -> None:
    est = elo_estimate(60, 20, 20)
    # score 0.7; Elo = -400 log10(1/0.7 - 1) = -400 log10(3/7)
    assert est.score == pytest.approx(0.7)
    assert est.elo == pytest.approx(-400 * math.log10(3 / 7))
    assert est.elo == pytest.approx(147.19, abs=0.01)
    # per-game variance: (60 * 0.3^2 + 20 * 0.2^2 + 20 * 0.7^2) / 100 = (5.4 + 0.8 + 9.8) / 100 = 0.16
    assert variance(60, 20, 20) == pytest.approx(0.16)
    # standard error of the score sqrt(0.16 / 100) = 0.04; 95% bounds 0.7 -+ 1.96 * 0.04
    low_score, high_score = 0.7 - Z95 * 0.04, 0.7 + Z95 * 0.04
    assert est.low == pytest.approx(-400 * math.log10(1 / low_score - 1))
    assert est.high == pytest.approx(-400 * math.log10(1 / high_score - 1))
    assert est.low == pytest.approx(86.23, abs=0.01)
    assert est.high == pytest.approx(218.25, abs=0.01)
    assert est.error == pytest.approx((218.2518 - 86.2250) / 2, abs=1e-3)
    # LOS = (1 + erf((60 - 20) / sqrt(2 * 80))) / 2
    assert est.los == pytest.approx(0.5 * (1 + math.erf(40 / math.sqrt(160))))


def test_los_for_12_wins_8_losses() -> None:
    # (1 + erf(4 / sqrt(40))) / 2 = (1 + erf(0.632456)) / 2 = (1 + 0.628907) / 2
    assert los(12, 5, 8) == pytest.approx(0.814453, abs=1e-6)
    assert los(8, 5, 12) == pytest.approx(1 - 0.814453, abs=1e-6)
    assert los(0, 7, 0) == 0.5


def test_negative_and_extreme_scores() -> None:
    est = elo_estimate(20, 20, 60)
    assert est.elo == pytest.approx(-400 * math.log10(1 / 0.3 - 1))
    assert est.elo == pytest.approx(-147.19, abs=0.01)
    assert elo_of_score(1.0) == math.inf and elo_of_score(0.0) == -math.inf
    assert elo_estimate(5, 0, 0).elo == math.inf
    assert score_of_elo(0) == 0.5
    assert score_of_elo(elo_of_score(0.64)) == pytest.approx(0.64)


def test_sprt_bounds_and_llr() -> None:
    sprt = Sprt(elo0=0, elo1=10, alpha=0.05, beta=0.05)
    # log(0.05 / 0.95) and log(0.95 / 0.05)
    assert sprt.lower == pytest.approx(-2.944439, abs=1e-6)
    assert sprt.upper == pytest.approx(2.944439, abs=1e-6)
    s0, s1 = 0.5, 1 / (1 + 10 ** (-10 / 400))           # 0.5 and 0.514387
    # LLR = N (s1 - s0) (2 s - s0 - s1) / (2 var): 100 * 0.014387 * (1.4 - 1.014387) / 0.32
    expected = 100 * (s1 - s0) * (2 * 0.7 - s0 - s1) / (2 * 0.16)
    assert sprt.llr(60, 20, 20) == pytest.approx(expected)
    assert sprt.llr(60, 20, 20) == pytest.approx(1.7337, abs=1e-4)
    assert sprt.decision(60, 20, 20) is None
    assert sprt.llr(120, 40, 40) == pytest.approx(2 * expected)   # same rates, twice the games
    assert sprt.decision(120, 40, 40) == "H1"
    assert sprt.llr(40, 40, 120) == pytest.approx(200 * (s1 - s0) * (0.6 - s0 - s1) / 0.32)
    assert sprt.decision(40, 40, 120) == "H0"
    assert sprt.llr(0, 0, 0) == 0.0


def test_sprt_decides_a_one_sided_run() -> None:
    # no draws and no losses: the empty classes count as half a game, so the variance is not 0.
    # 16 wins: w, d, l = 16, 0.5, 0.5; s = 16.25 / 17 = 0.955882;
    # var = (16 * 0.044118^2 + 0.5 * 0.455882^2 + 0.5 * 0.955882^2) / 17 = 0.034818
    s0, s1 = 0.5, 1 / (1 + 10 ** (-10 / 400))
    s = 16.25 / 17
    var = (16 * (1 - s) ** 2 + 0.5 * (0.5 - s) ** 2 + 0.5 * s ** 2) / 17
    assert var == pytest.approx(0.034818, abs=1e-6)
    assert Sprt().llr(16, 0, 0) == pytest.approx(16 * (s1 - s0) * (2 * s - s0 - s1) / (2 * var))
    assert Sprt().llr(16, 0, 0) == pytest.approx(2.966, abs=1e-3)
    assert Sprt().decision(15, 0, 0) is None        # LLR 2.61
    assert Sprt().decision(16, 0, 0) == "H1"
    assert Sprt().decision(0, 0, 16) == "H0"


def test_sprt_rejects_bad_settings() -> None:
    with pytest.raises(ValueError):
        Sprt(elo0=10, elo1=0)
    with pytest.raises(ValueError):
        Sprt(alpha=0)


# -- game pairs (pentanomial) -----------------------------------------------------------------------


def independent_pair_figures(pair_points: list[float], elo0: float, elo1: float) -> tuple[float, float, float, float]:
    """(Elo, low, high, LLR) worked out from each pair's points one by one, the way the model reads:
    a pair's score is its points over two; the mean and the variance are over pairs."""
    scores = [points / 2 for points in pair_points]
    n = len(scores)
    mean = sum(scores) / n
    var = sum((score - mean) ** 2 for score in scores) / n
    margin = Z95 * math.sqrt(var / n)

    def elo(score: float) -> float:
        return 400 * math.log10(score / (1 - score))

    def expected(e: float) -> float:
        return 1 / (1 + 10 ** (-e / 400))

    s0, s1 = expected(elo0), expected(elo1)
    return elo(mean), elo(mean - margin), elo(mean + margin), n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def test_pair_figures_agree_with_a_pair_by_pair_computation() -> None:
    from pedina.protocol.match.stats import pair_estimate

    # pairs in some order, each the first engine's points over its two games
    pair_points = [2, 1.5, 1, 1, 0.5, 1.5, 1, 2, 0, 1.5, 1, 1, 1.5, 0.5, 1, 2, 1.5, 1, 1, 1.5]
    counts = [pair_points.count(points) for points in (0, 0.5, 1, 1.5, 2)]
    assert counts == [1, 2, 8, 6, 3]
    est = pair_estimate(counts)
    elo, low, high, llr = independent_pair_figures(pair_points, 0.0, 10.0)
    assert est.pairs == 20
    assert (est.elo, est.low, est.high) == pytest.approx((elo, low, high))
    assert Sprt(0, 10).pair_llr(counts) == pytest.approx(llr)
    # by hand: mean (0 + 2*.25 + 8*.5 + 6*.75 + 3*1) / 20 = 12 / 20 = 0.6
    assert est.elo == pytest.approx(400 * math.log10(0.6 / 0.4))


def test_pairs_that_split_their_games_narrow_the_interval() -> None:
    from pedina.protocol.match.stats import pair_estimate

    # 40 games: every pair one win and one loss (the opening decided each game), then 4 pairs
    # won outright. Counted as games: 24 wins, 16 losses; as pairs, most of the noise is gone.
    counts = [0, 0, 16, 0, 4]
    games = elo_estimate(24, 0, 16)
    pairs = pair_estimate(counts)
    assert pairs.elo == pytest.approx(games.elo)  # the same score either way
    assert pairs.error < 0.6 * games.error
    even = pair_estimate([0, 0, 10, 0, 0])
    assert (even.elo, even.low, even.high) == (0.0, 0.0, 0.0)  # no spread: no doubt
    assert pair_estimate([0, 0, 0, 0, 0]).pairs == 0 and math.isinf(pair_estimate([0, 0, 0, 0, 0]).error)
