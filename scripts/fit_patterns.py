"""Fit the pattern weights, and refit the features' weights with them, to self-play results.

The data are the engine's own games (the shipped evaluation, compiled install):

    python scripts/selfplay.py --evaluation shipped --games 8000 --depth 5 --seed 2 --out build/tune/shipped.txt
    python scripts/fit_patterns.py --data build/tune/shipped.txt --seed 1

Steps:

1. The positions are cut back into their games (a game never gains pieces and
   has one result; selfplay.py writes game after game). One game in ten, drawn
   with ``--seed``, is held out: its positions that no training game has are the
   validation set, so the validation loss is that of positions never seen.
   Duplicates are merged, their results averaged; the endings that the endgame
   rules score by themselves are skipped (see :func:`scored_by_rule`).
2. The model is ``sigmoid(eval / scale)`` of the result from the side to move's
   view, ``eval`` the features of :func:`pedina.evaluate.features` times their
   weights plus the pattern weights of :func:`pedina.evaluate.pattern_indices`.
   ``scale`` is fitted first with the hand-set weights, then kept.
3. Two fits by full-batch Adam on the cross-entropy (logistic regression), from
   the hand-set weights: the features alone, for comparison, and the features
   with the patterns, whose weights have an L2 penalty (``--l2``) so that a
   configuration seen in a few games keeps a small weight. The value of an
   opening man stays 100 and the kings within tune.py's bounds.
4. The losses on the training and validation sets, with the rounded
   weights the engine uses, are printed; the second fit is written to
   ``--weights-out`` (JSON) and ``--patterns-out`` (the packed pattern file).

Needs numpy (``pip install 'pedina[tune]'``): under two minutes for 760,000 positions (8,000 games).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pedina.evaluate import DEFAULT_WEIGHTS, FEATURES, PATTERN_WEIGHTS, encode_patterns, features, pattern_indices
from pedina.position import Position
from tune import BOUNDS, FIXED, minimise

Floats = npt.NDArray[np.float64]
Game = list[tuple[str, float]]


def read_games(path: str) -> list[Game]:
    """The ``FEN result`` lines of ``path`` cut into games: a new game starts where the
    pieces are more than in the line before, or the result differs."""
    games: list[Game] = []
    last_pieces, last_result = 0, -1.0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fen, _, text = line.strip().rpartition(" ")
            if not fen:
                continue
            result = float(text)
            position = Position.from_fen(fen)
            pieces = (position.white | position.black).bit_count()
            if pieces > last_pieces or result != last_result:
                games.append([])
            games[-1].append((fen, result))
            last_pieces, last_result = pieces, result
    return games


def split(games: list[Game], seed: int, share: float) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Results by distinct position of the training games and of the held-out games
    (``share`` of them), the latter without the positions the former have."""
    rng = random.Random(seed)
    train: dict[str, list[float]] = {}
    held: dict[str, list[float]] = {}
    for game in games:
        target = held if rng.random() < share else train
        for fen, result in game:
            target.setdefault(fen, []).append(result)
    return train, {fen: scores for fen, scores in held.items() if fen not in train}


@dataclass
class Data:
    """Positions as arrays, from the side to move's view."""

    features: Floats  # (n, len(FEATURES))
    patterns: npt.NDArray[np.int64]  # (n, PATTERN_REGIONS): pattern weight indices
    results: Floats  # (n,): mean result for the side to move


def scored_by_rule(p: Position) -> bool:
    """Whether the evaluation's endgame knowledge, not its weights, scores ``p``: 6 pieces
    or fewer, and kings only (even endings, drawn or scaled down) or a lone piece against
    two kings or more (a known win)."""
    if (p.white | p.black).bit_count() > 6:
        return False
    if not (p.white | p.black) & ~p.kings:
        return True
    return any(side.bit_count() == 1 and (other & p.kings).bit_count() >= 2
               for side, other in ((p.white, p.black), (p.black, p.white)))


def arrays(results: dict[str, list[float]]) -> Data:
    rows: list[list[float]] = []
    indices: list[list[int]] = []
    labels: list[float] = []
    for fen, scores in results.items():
        p = Position.from_fen(fen)
        if scored_by_rule(p):
            continue
        us, them = (p.white, p.black) if p.white_to_move else (p.black, p.white)
        rows.append(features(us, them, p.kings, p.white_to_move))
        indices.append(pattern_indices(us, them, p.kings, p.white_to_move))
        mean = sum(scores) / len(scores)
        labels.append(mean if p.white_to_move else 1.0 - mean)
    return Data(np.array(rows), np.array(indices, dtype=np.int64), np.array(labels))


def _sigmoid(x: Floats) -> Floats:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # exp would overflow far from zero


def predict(data: Data, theta: Floats) -> Floats:
    """Evaluations of ``data`` for ``theta``, the feature weights then the pattern weights."""
    linear: Floats = data.features @ theta[:len(FEATURES)]
    by_pattern: Floats = theta[len(FEATURES):][data.patterns].sum(axis=1)
    return linear + by_pattern


def losses(data: Data, theta: Floats, scale: float) -> tuple[float, float]:
    """Mean cross-entropy and mean squared error of the predicted results."""
    p = np.clip(_sigmoid(predict(data, theta) / scale), 1e-12, 1 - 1e-12)
    y = data.results
    return float(np.mean(-(y * np.log(p) + (1 - y) * np.log(1 - p)))), float(np.mean((p - y) ** 2))


def fit_scale(data: Data, theta: Floats) -> float:
    """The scale minimising the cross-entropy."""
    return minimise(lambda scale: losses(data, theta, scale)[0])


def fit(data: Data, theta: Floats, scale: float, trainable: Floats, low: Floats, high: Floats,
        l2: float, iterations: int, rate: float, held_out: Data) -> Floats:
    """Full-batch Adam on the cross-entropy plus ``l2`` times the pattern weights' squares
    (per position), for the weights where ``trainable`` is 1, projected into [low, high]."""
    n = len(data.results)
    theta = theta.copy()
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    penalty = np.zeros_like(theta)
    penalty[len(FEATURES):] = 2.0 * l2 / n
    flat = data.patterns.ravel()
    regions = data.patterns.shape[1]
    for step in range(1, iterations + 1):
        g = (_sigmoid(predict(data, theta) / scale) - data.results) / (scale * n)
        by_pattern: Floats = np.bincount(flat, np.repeat(g, regions), PATTERN_WEIGHTS).astype(np.float64)
        grad: Floats = (np.concatenate((data.features.T @ g, by_pattern)) + penalty * theta) * trainable
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad * grad
        # The step shrinks towards the end so that the last iterations settle.
        size = rate * (1.0 - 0.9 * step / iterations)
        theta -= size * (m / (1 - 0.9 ** step)) / (np.sqrt(v / (1 - 0.999 ** step)) + 1e-12)
        theta = np.clip(theta, low, high)
        if step % 50 == 0 or step == iterations:
            print(f"fit: step {step}/{iterations}  train {losses(data, theta, scale)[0]:.5f}  "
                  f"held out {losses(held_out, theta, scale)[0]:.5f}", file=sys.stderr, flush=True)
    return theta


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="build/tune/shipped.txt", help="selfplay.py's labelled positions")
    parser.add_argument("--seed", type=int, default=1, help="which games are held out")
    parser.add_argument("--held-out", type=float, default=0.1, help="share of the games held out")
    parser.add_argument("--l2", type=float, default=0.01, help="pattern weights' penalty")
    parser.add_argument("--iterations", type=int, default=600)
    parser.add_argument("--rate", type=float, default=1.5, help="Adam step size (weights are in 1/100 man)")
    parser.add_argument("--weights-out", default="engine/weights.json")
    parser.add_argument("--patterns-out", default="engine/patterns.bin")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    games = read_games(args.data)
    train_results, held_results = split(games, args.seed, args.held_out)
    train, held_out = arrays(train_results), arrays(held_results)
    print(f"fit: {sum(map(len, games))} positions in {len(games)} games; distinct positions not scored "
          f"by rule: {len(train.results)} for training, {len(held_out.results)} held out",
          file=sys.stderr, flush=True)

    size = len(FEATURES) + PATTERN_WEIGHTS
    start = np.zeros(size)
    start[:len(FEATURES)] = [DEFAULT_WEIGHTS[name] for name in FEATURES]
    scale = fit_scale(train, start)
    low, high = np.full(size, -32768.0), np.full(size, 32767.0)
    for name, (lower, upper) in BOUNDS.items():
        low[FEATURES.index(name)], high[FEATURES.index(name)] = lower, upper
    linear_only = np.zeros(size)
    linear_only[:len(FEATURES)] = 1.0
    for name in FIXED:
        linear_only[FEATURES.index(name)] = 0.0
    with_patterns = linear_only.copy()
    with_patterns[len(FEATURES):] = 1.0

    models = {"hand-set features": start}
    for name, trainable in (("features refitted", linear_only), ("features + patterns", with_patterns)):
        print(f"fit: {name}", file=sys.stderr, flush=True)
        fitted = fit(train, start, scale, trainable, low, high, args.l2, args.iterations, args.rate, held_out)
        models[name] = np.round(fitted)
    print(f"scale {scale:.1f}; losses with the rounded weights (cross-entropy, squared error):")
    print(f"{'model':<22} {'train CE':>9} {'held CE':>9} {'train SE':>9} {'held SE':>9}")
    for name, theta in models.items():
        train_ce, train_se = losses(train, theta, scale)
        held_ce, held_se = losses(held_out, theta, scale)
        print(f"{name:<22} {train_ce:9.5f} {held_ce:9.5f} {train_se:9.5f} {held_se:9.5f}")

    final = models["features + patterns"].astype(np.int64)
    with open(args.weights_out, "w", encoding="utf-8") as handle:
        json.dump({name: int(value) for name, value in zip(FEATURES, final)}, handle, indent=1)
        handle.write("\n")
    patterns = final[len(FEATURES):].tolist()
    with open(args.patterns_out, "wb") as out:
        out.write(encode_patterns(patterns))
    print(f"fit: {sum(1 for value in patterns if value)} pattern weights not 0, largest {max(map(abs, patterns))}; "
          f"wrote {args.weights_out} and {args.patterns_out} in {time.perf_counter() - started:.0f} s",
          file=sys.stderr)


if __name__ == "__main__":
    main()
