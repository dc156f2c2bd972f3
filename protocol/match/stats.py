"""Match statistics: Elo difference with its error bar, likelihood of superiority, SPRT.

The one statistics module of both the Hub match runner and the in-process
matches of :mod:`pedina.protocol.match.inprocess`. All functions take
win/draw/loss counts from one side's point of view. The formulas are the ones
engine testers use (cutechess-cli, fastchess):

- score ``s = (W + D/2) / N``; Elo difference ``-400 log10(1/s - 1)``;
- per-game variance ``((W (1-s)^2 + D (1/2-s)^2 + L s^2) / N``; the score's
  confidence interval ``s ± z sqrt(var / N)`` mapped through the Elo formula;
- likelihood of superiority ``(1 + erf((W - L) / sqrt(2 (W + L)))) / 2``;
- SPRT on logistic Elo with the trinomial (W/D/L) normal approximation of the
  generalised log-likelihood ratio: ``N (s1 - s0) (2 s - s0 - s1) / (2 var)``,
  stopping at ``log(beta / (1 - alpha))`` (H0) or ``log((1 - beta) / alpha)`` (H1).
  An outcome class that has not occurred yet counts as half a game there (a
  Jeffreys-style prior), so a one-sided run has a variance and stops after a
  dozen or so games, not after its first.
- the pentanomial model, as fishtest and fastchess count a match of game pairs
  (one opening, colours reversed): each pair scores 0, 1/4, 1/2, 3/4 or 1 (LL,
  LD, DD or WL, WD, WW), and the same formulas run over pairs instead of games,
  with the pairs' own variance. An opening's bias cancels within its pair, so
  the interval is narrower where openings decide games, and the SPRT decides sooner.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist


#: The score of a game won, drawn, lost; of a game pair by its pentanomial class (LL .. WW).
GAME_SCORES = (1.0, 0.5, 0.0)
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _mean(counts: Sequence[float], values: Sequence[float]) -> float:
    total = sum(counts)
    return sum(count * value for count, value in zip(counts, values)) / total if total else 0.5


def _variance(counts: Sequence[float], values: Sequence[float]) -> float:
    total = sum(counts)
    if not total:
        return 0.0
    mean = _mean(counts, values)
    return sum(count * (value - mean) ** 2 for count, value in zip(counts, values)) / total


def score_of(wins: float, draws: float, losses: float) -> float:
    """The points fraction, 0.5 when no game was played."""
    return _mean((wins, draws, losses), GAME_SCORES)


def elo_of_score(score: float) -> float:
    """The logistic Elo difference giving an expected ``score`` (``±inf`` at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_of_elo(elo: float) -> float:
    """The expected score of a player ``elo`` points stronger."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def variance(wins: float, draws: float, losses: float) -> float:
    """The per-game variance of the score (0 when no game was played)."""
    return _variance((wins, draws, losses), GAME_SCORES)


def los(wins: int, draws: int, losses: int) -> float:
    """Likelihood of superiority: the probability that this side is the stronger (0.5 without decisive games)."""
    decisive = wins + losses
    if not decisive:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * decisive)))


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference with its confidence interval (``low`` .. ``high``) and LOS."""

    wins: int
    draws: int
    losses: int
    elo: float
    low: float
    high: float
    los: float

    @property
    def games(self) -> int:
        """The number of games counted."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """The points fraction (0.5 when no game was played)."""
        return score_of(self.wins, self.draws, self.losses)

    @property
    def error(self) -> float:
        """Half the width of the interval (``inf`` when it is unbounded)."""
        return (self.high - self.low) / 2

    def interval_text(self) -> str:
        """``Elo +147.2 ± 66.0 [+86.2, +218.3]``; just ``Elo +inf`` when the interval is unbounded."""
        return _interval_text(self.elo, self.low, self.high)

    def summary(self) -> str:
        """``+60 =20 -20  score 70.0%  Elo +147.2 ± 66.0 [+86.2, +218.3]``."""
        return f"+{self.wins} ={self.draws} -{self.losses}  score {100 * self.score:.1f}%  {self.interval_text()}"


@dataclass(frozen=True)
class PairEstimate:
    """An Elo difference from game pairs (see the module's docstring), with its interval:
    ``counts`` of the pairs that scored 0, 1/2, 1, 3/2 and 2 points (LL, LD, DD or WL, WD, WW)."""

    counts: tuple[int, int, int, int, int]
    elo: float
    low: float
    high: float

    @property
    def pairs(self) -> int:
        """The number of pairs counted."""
        return sum(self.counts)

    @property
    def error(self) -> float:
        """Half the width of the interval (``inf`` when it is unbounded)."""
        return (self.high - self.low) / 2

    def summary(self) -> str:
        """``pairs 50 [2, 10, 21, 12, 5]  Elo +35.0 ± 40.1 [-5.0, +75.6]``."""
        return (f"pairs {self.pairs} [{', '.join(map(str, self.counts))}]  "
                + _interval_text(self.elo, self.low, self.high))


def _interval_text(elo: float, low: float, high: float) -> str:
    if not math.isfinite((high - low) / 2):
        return f"Elo {elo_text(elo)}"
    return f"Elo {elo_text(elo)} ± {(high - low) / 2:.1f} [{elo_text(low)}, {elo_text(high)}]"


def elo_text(value: float) -> str:
    """An Elo difference with its sign and one decimal: ``+147.2``, ``-0.5``, ``+inf``."""
    if not math.isfinite(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value + 0.0:+.1f}"  # + 0.0 turns -0.0 into 0.0, shown as +0.0


def _elo_interval(counts: Sequence[int], values: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """(Elo, low, high): the mean score's ``confidence`` interval, mapped through the Elo formula."""
    total = sum(counts)
    s = _mean(counts, values)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    margin = z * math.sqrt(_variance(counts, values) / total) if total else math.inf
    return elo_of_score(s), elo_of_score(s - margin), elo_of_score(s + margin)


def elo_estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """Elo difference, its ``confidence`` interval and LOS for these counts."""
    elo, low, high = _elo_interval((wins, draws, losses), GAME_SCORES, confidence)
    return EloEstimate(wins, draws, losses, elo, low, high, los(wins, draws, losses))


def pair_estimate(counts: Sequence[int], confidence: float = 0.95) -> PairEstimate:
    """Elo difference and its ``confidence`` interval from the pentanomial ``counts`` (LL .. WW)."""
    ll, ld, even, wd, ww = counts
    return PairEstimate((ll, ld, even, wd, ww), *_elo_interval(counts, PAIR_SCORES, confidence))


#: What an outcome class that has not occurred counts as in the SPRT (games).
_EMPTY = 0.5


@dataclass(frozen=True)
class Sprt:
    """A sequential probability ratio test of H0 ``elo = elo0`` against H1 ``elo = elo1``."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not (0 < self.alpha < 1 and 0 < self.beta < 1):
            raise ValueError("SPRT alpha and beta must be between 0 and 1")
        if not self.elo0 < self.elo1:
            raise ValueError("SPRT needs elo0 < elo1")

    @property
    def lower(self) -> float:
        """LLR at or below which H0 is accepted."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """LLR at or above which H1 is accepted."""
        return math.log((1 - self.beta) / self.alpha)

    def llr(self, wins: int, draws: int, losses: int) -> float:
        """The log-likelihood ratio after these games (0 before the first game)."""
        return self._llr((wins, draws, losses), GAME_SCORES)

    def pair_llr(self, counts: Sequence[int]) -> float:
        """The log-likelihood ratio after these game pairs (pentanomial ``counts``, LL .. WW)."""
        return self._llr(counts, PAIR_SCORES)

    def _llr(self, counts: Sequence[int], values: Sequence[float]) -> float:
        trials = sum(counts)
        if not trials:
            return 0.0
        smoothed = [count or _EMPTY for count in counts]
        s, var = _mean(smoothed, values), _variance(smoothed, values)
        s0, s1 = score_of_elo(self.elo0), score_of_elo(self.elo1)
        return trials * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)

    def decision(self, wins: int, draws: int, losses: int) -> str | None:
        """``"H0"`` or ``"H1"`` once decided, else ``None``."""
        value = self.llr(wins, draws, losses)
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None
