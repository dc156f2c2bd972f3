"""The score of a match: counts per pair of engines, the final table, the Elo plot."""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

from pedina.protocol.match.game import EngineSpec, GameRecord
from pedina.protocol.plotting import saved_figure
from pedina.protocol.match.stats import EloEstimate, elo_estimate, elo_text, pair_estimate


class Tally:
    """Win/draw/loss counts per pair of engines, the pentanomial counts of their game pairs
    (one round's opening, both colours), terminations, failures, and engine 0's Elo history."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], list[int]] = {}   # (i, j), i < j: [i wins, draws, j wins]
        # (i, j), i < j: i's game pairs scoring 0, 1/2, 1, 3/2, 2 points (LL .. WW)
        self.pentanomial: dict[tuple[int, int], list[int]] = {}
        self._halves: dict[tuple[int, int, int], float] = {}  # (round, i, j): i's points in the pair's first game
        self.terminations: Counter[str] = Counter()
        self.failures: Counter[tuple[str, str]] = Counter()
        self.history: list[EloEstimate] = []                # engine 0 against the others, per game
        self.colours = [0, 0, 0]                            # White wins, draws, Black wins

    def add(self, record: GameRecord) -> None:
        """Count a finished game."""
        first, second = sorted((record.game.white, record.game.black))
        counts = self.pairs.setdefault((first, second), [0, 0, 0])
        points = record.points(first)
        counts[0 if points == 1.0 else 1 if points == 0.5 else 2] += 1
        half = (record.game.round, first, second)
        if half in self._halves:  # the pair's other game: colours reversed on the same opening
            pair_points = self._halves.pop(half) + points
            self.pentanomial.setdefault((first, second), [0] * 5)[round(2 * pair_points)] += 1
        else:
            self._halves[half] = points
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

    def pair_counts(self, engine: int, opponent: int) -> tuple[int, int, int, int, int]:
        """``engine``'s pentanomial counts against ``opponent``: its game pairs that scored 0, 1/2,
        1, 3/2 and 2 points."""
        counts = self.pentanomial.get((min(engine, opponent), max(engine, opponent)), [0] * 5)
        ll, ld, even, wd, ww = counts if engine < opponent else counts[::-1]
        return ll, ld, even, wd, ww

    def estimate(self, engine: int, opponent: int | None = None) -> EloEstimate:
        """``engine``'s Elo difference against ``opponent`` (the field when ``None``)."""
        return elo_estimate(*self.wdl(engine, opponent))

    @property
    def games(self) -> int:
        """The number of games counted."""
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
                    f"{est.draws:>4}  {est.losses:>4}  {elo_text(est.elo):>7}  {error:>6}  "
                    f"{100 * est.los:>5.1f}%")
    rows.append("")
    for first, second in sorted(tally.pairs):
        est = tally.estimate(first, second)
        rows.append(f"{specs[first].name} vs {specs[second].name}: {est.summary()}  "
                    f"LOS {100 * est.los:.1f}%  draws {100 * est.draws / max(1, est.games):.0f}%")
        pairs = pair_estimate(tally.pair_counts(first, second))
        if pairs.pairs:
            rows.append(f"{' ' * len(specs[first].name)}    game pairs (LL LD DD/WL WD WW): {pairs.summary()}")
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


def plot_history(history: Sequence[EloEstimate], title: str, path: str) -> bool:
    """Save a picture of the Elo estimate and its 95% interval after each game; ``False``, with
    nothing saved, when the estimate was never finite (one side won or lost every game).

    The interval is drawn only where it is bounded, as the results table shows it. Raises
    :class:`click.ClickException` when the picture cannot be saved.
    """
    points = [(n, e) for n, e in enumerate(history, start=1) if math.isfinite(e.elo)]
    if not points:
        return False
    with saved_figure(path) as (figure, axes):
        games = [n for n, _ in points]
        bounded = [math.isfinite(e.error) for _, e in points]
        axes.fill_between(games, [e.low if ok else 0.0 for (_, e), ok in zip(points, bounded)],
                          [e.high if ok else 0.0 for (_, e), ok in zip(points, bounded)], where=bounded,
                          alpha=0.25, label="95% interval")
        axes.plot(games, [e.elo for _, e in points], marker="." if len(points) < 30 else "", label="Elo estimate")
        axes.axhline(0.0, color="grey", linewidth=0.8)
        axes.set_xlabel("games")
        axes.set_ylabel("Elo difference")
        axes.set_title(title)
        axes.legend(loc="best")
    return True
