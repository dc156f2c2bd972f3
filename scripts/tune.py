"""Fit the evaluation's feature weights alone to self-play results (logistic "Texel" tuning).

The shipped weights are fitted together with the pattern weights by
``scripts/fit_patterns.py``; this script fits the features without patterns, as
the weights before them were made. One command regenerates the data and refits:

    flock /tmp/pedina-heavy.lock python scripts/tune.py --games 1200 --seed 1 --out build/tune/weights.json

Steps:

1. Unless ``--data`` exists already, ``scripts/selfplay.py`` plays ``--games``
   games (depth 4, hand-set weights, seeded random openings) and writes quiet
   positions labelled with the game result to ``--data``.
2. Every position becomes the feature vector of :func:`pedina.evaluate.features`
   (White's point of view). Positions left to the endgame rules (6 pieces or
   fewer) are skipped. Duplicates are merged, their results averaged.
3. The win probability model is ``sigmoid(eval / scale)``. ``scale`` is fitted
   first with the hand-set weights, then the weights are fitted by full-batch
   Adam on the mean squared error between model and result, with the value of
   an opening man fixed at 100 so scores stay in hundredths of a man, and the
   king values kept within :data:`BOUNDS`. One in ten positions is held out to
   check the fit generalises.
4. The rounded weights are written as JSON to ``--out``.

Pure Python (no numpy): a few minutes for 100,000 positions.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from typing import Callable

from pedina.evaluate import DEFAULT_WEIGHTS, FEATURES, features
from pedina.position import Position

FIXED = ("man_mg",)
#: Bounds that keep the fit inside the evaluation's design: a king is worth well
#: under two men in the opening and more in the endgame. Without them the fit
#: prices opening kings above two men (early kings in self-play come with won
#: positions, so the king weight soaks up the rest of the advantage).
BOUNDS = {"king_mg": (110.0, 175.0), "king_eg": (200.0, 400.0),
          "king_centre_mg": (0.0, 8.0), "king_centre_eg": (0.0, 8.0)}

Sample = tuple[list[tuple[int, float]], float]


def load(path: str) -> list[Sample]:
    """Sparse White-view feature vectors with the mean result of each distinct position."""
    results: dict[str, list[float]] = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fen, _, result = line.strip().rpartition(" ")
            if fen:
                results.setdefault(fen, []).append(float(result))
    samples: list[Sample] = []
    for fen, scores in results.items():
        p = Position.from_fen(fen)
        if (p.white | p.black).bit_count() <= 6:
            continue
        us, them = (p.white, p.black) if p.white_to_move else (p.black, p.white)
        sign = 1.0 if p.white_to_move else -1.0
        vector = features(us, them, p.kings, p.white_to_move)
        sparse = [(i, sign * x) for i, x in enumerate(vector) if x]
        samples.append((sparse, sum(scores) / len(scores)))
    return samples


def _sigmoid(x: float) -> float:
    if x < -50:
        return 0.0
    if x > 50:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def loss(samples: list[Sample], weights: list[float], scale: float) -> float:
    total = 0.0
    for sparse, result in samples:
        s = 0.0
        for i, x in sparse:
            s += weights[i] * x
        total += (result - _sigmoid(s / scale)) ** 2
    return total / len(samples)


def minimise(f: Callable[[float], float], low: float = 20.0, high: float = 2000.0, steps: int = 30) -> float:
    """Golden-section search of the point of [low, high] minimising ``f`` (one dip)."""
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(steps):
        a = high - ratio * (high - low)
        b = low + ratio * (high - low)
        if f(a) < f(b):
            high = b
        else:
            low = a
    return (low + high) / 2


def fit_scale(samples: list[Sample], weights: list[float]) -> float:
    """The scale minimising the loss."""
    return minimise(lambda scale: loss(samples, weights, scale))


def fit(samples: list[Sample], weights: list[float], scale: float, epochs: int,
        rate: float, frozen: set[int], held_out: list[Sample],
        bounds: dict[int, tuple[float, float]]) -> list[float]:
    """Full-batch Adam on the squared error, projected onto ``bounds``; returns the weights."""
    w = list(weights)
    m = [0.0] * len(w)
    v = [0.0] * len(w)
    n = len(samples)
    for epoch in range(1, epochs + 1):
        grad = [0.0] * len(w)
        total = 0.0
        for sparse, result in samples:
            s = 0.0
            for i, x in sparse:
                s += w[i] * x
            p = _sigmoid(s / scale)
            error = p - result
            total += error * error
            g = 2.0 * error * p * (1.0 - p) / scale
            for i, x in sparse:
                grad[i] += g * x
        for i in range(len(w)):
            if i in frozen:
                continue
            g = grad[i] / n
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            m_hat = m[i] / (1 - 0.9 ** epoch)
            v_hat = v[i] / (1 - 0.999 ** epoch)
            w[i] -= rate * m_hat / (math.sqrt(v_hat) + 1e-12)
            if i in bounds:
                low, high = bounds[i]
                w[i] = min(max(w[i], low), high)
        if epoch % 10 == 0 or epoch == epochs:
            print(f"tune: epoch {epoch}/{epochs}  train {total / n:.5f}  "
                  f"held out {loss(held_out, w, scale):.5f}", file=sys.stderr, flush=True)
    return w


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="build/tune/positions.txt", help="labelled positions (made if missing)")
    parser.add_argument("--games", type=int, default=1200, help="self-play games when making the data")
    parser.add_argument("--depth", type=int, default=4, help="self-play search depth")
    parser.add_argument("--seed", type=int, default=1, help="self-play and hold-out seed")
    parser.add_argument("--epochs", type=int, default=600)
    parser.add_argument("--rate", type=float, default=1.5, help="Adam step size (weights are in 1/100 man)")
    parser.add_argument("--out", default="build/tune/weights.json")
    args = parser.parse_args(argv)
    if not os.path.exists(args.data):
        from selfplay import generate_positions
        generate_positions(args.games, args.depth, args.seed, args.data)
    started = time.perf_counter()
    samples = load(args.data)
    rng = random.Random(args.seed)
    rng.shuffle(samples)
    cut = len(samples) // 10
    held_out, train = samples[:cut], samples[cut:]
    print(f"tune: {len(train)} training positions, {len(held_out)} held out", file=sys.stderr)
    start = [float(DEFAULT_WEIGHTS[name]) for name in FEATURES]
    scale = fit_scale(train, start)
    before = (loss(train, start, scale), loss(held_out, start, scale))
    print(f"tune: scale {scale:.1f}; hand-set weights: train {before[0]:.5f} held out {before[1]:.5f}",
          file=sys.stderr)
    frozen = {FEATURES.index(name) for name in FIXED}
    bounds = {FEATURES.index(name): bound for name, bound in BOUNDS.items()}
    fitted = fit(train, start, scale, args.epochs, args.rate, frozen, held_out, bounds)
    after = (loss(train, fitted, scale), loss(held_out, fitted, scale))
    weights = {name: int(round(value)) for name, value in zip(FEATURES, fitted)}
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(weights, handle, indent=1)
        handle.write("\n")
    print(f"tune: train {after[0]:.5f} held out {after[1]:.5f} (was {before[0]:.5f} / {before[1]:.5f}); "
          f"wrote {args.out} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    for name in FEATURES:
        print(f"{name:<16} {DEFAULT_WEIGHTS[name]:5d} -> {weights[name]:5d}")


if __name__ == "__main__":
    main()
