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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist


def score_of(wins: float, draws: float, losses: float) -> float:
    """The points fraction, 0.5 when no game was played."""
    games = wins + draws + losses
    return (wins + draws / 2) / games if games else 0.5


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
    games = wins + draws + losses
    if not games:
        return 0.0
    s = score_of(wins, draws, losses)
    return (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / games


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
        if not math.isfinite(self.error):
            return f"Elo {elo_text(self.elo)}"
        return f"Elo {elo_text(self.elo)} ± {self.error:.1f} [{elo_text(self.low)}, {elo_text(self.high)}]"

    def summary(self) -> str:
        """``+60 =20 -20  score 70.0%  Elo +147.2 ± 66.0 [+86.2, +218.3]``."""
        return f"+{self.wins} ={self.draws} -{self.losses}  score {100 * self.score:.1f}%  {self.interval_text()}"


def elo_text(value: float) -> str:
    """An Elo difference with its sign and one decimal: ``+147.2``, ``-0.5``, ``+inf``."""
    if not math.isfinite(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value + 0.0:+.1f}"  # + 0.0 turns -0.0 into 0.0, shown as +0.0


def elo_estimate(wins: int, draws: int, losses: int, confidence: float = 0.95) -> EloEstimate:
    """Elo difference, its ``confidence`` interval and LOS for these counts."""
    games = wins + draws + losses
    s = score_of(wins, draws, losses)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    margin = z * math.sqrt(variance(wins, draws, losses) / games) if games else math.inf
    return EloEstimate(wins, draws, losses, elo_of_score(s), elo_of_score(s - margin),
                       elo_of_score(s + margin), los(wins, draws, losses))


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
        games = wins + draws + losses
        if not games:
            return 0.0
        w, d, l = (count or _EMPTY for count in (wins, draws, losses))
        s, var = score_of(w, d, l), variance(w, d, l)
        s0, s1 = score_of_elo(self.elo0), score_of_elo(self.elo1)
        return games * (s1 - s0) * (2 * s - s0 - s1) / (2 * var)

    def decision(self, wins: int, draws: int, losses: int) -> str | None:
        """``"H0"`` or ``"H1"`` once decided, else ``None``."""
        value = self.llr(wins, draws, losses)
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return None
