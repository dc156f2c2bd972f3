"""Self-play games for tuning: quiet positions labelled with the game result.

    python scripts/selfplay.py --games 1200 --depth 4 --seed 1 --out build/tune/positions.txt
    python scripts/selfplay.py --evaluation shipped --games 8000 --depth 5 --seed 2 --out build/tune/shipped.txt
    python scripts/selfplay.py --games 100000 --cluster tcp://HOST:8786 --out build/tune/positions.txt

Each game starts with 4 to 8 random moves, then both sides search to ``--depth``
with the hand-set (untuned) evaluation (``--evaluation shipped``: the evaluation the
installed engine plays with, whose own games teach the pattern weights of
``scripts/fit_patterns.py``), with a small chance of a random move in
the first 30 plies for variety. Game N draws its random choices from its own
generator, seeded by ``--seed`` and N, so games do not depend on each other.
Games end by the rules or as a draw after 200 plies. Every position from ply 8
on where neither side can capture is written as ``FEN result`` (White's score:
1, 0.5 or 0), one a line, game after game in order. The same arguments give the
same file, with or without ``--cluster``.

``--cluster`` (``tcp://HOST:PORT``, a Dask scheduler file, or ``local:N`` for a
local cluster of N workers) plays each game as a task on a Dask cluster; this
machine and the workers need ``pip install 'pedina[cluster]'``. Progress goes
to stderr; an interrupted run keeps the games already written.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import ExitStack
from typing import Iterable, Iterator, TextIO

from pedina.protocol.match.cluster import ClusterTasks, cluster_client
from pedina.protocol.match.inprocess import numbered_selfplay_game
from pedina.protocol.match.options import MatchError

GameResult = tuple[list[str], float]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1200)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="build/tune/positions.txt")
    parser.add_argument("--evaluation", choices=("hand-set", "shipped"), default="hand-set",
                        help="the weights both sides play with")
    parser.add_argument("--cluster", metavar="ADDRESS", help="play the games on this Dask cluster")
    args = parser.parse_args(argv)
    if args.games < 1 or args.depth < 1:
        parser.error("--games and --depth must be at least 1")
    try:
        generate_positions(args.games, args.depth, args.seed, args.out, args.cluster,
                           shipped=args.evaluation == "shipped")
    except MatchError as error:
        sys.exit(f"selfplay: {error.message}")
    except OSError as error:
        sys.exit(f"selfplay: cannot write {args.out}: {error.strerror or error}")
    except KeyboardInterrupt:
        print(f"selfplay: interrupted; the games finished in order are in {args.out}", file=sys.stderr)
        sys.exit(130)


def generate_positions(games: int, depth: int, seed: int, out: str, cluster: str | None = None,
                       shipped: bool = False) -> None:
    """Play ``games`` games (here, or as tasks on the Dask cluster at ``cluster``) with the
    hand-set evaluation (``shipped``: the engine's own) and write their labelled positions to
    ``out``, in game order."""
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with ExitStack() as stack:
        handle = stack.enter_context(open(out, "w", encoding="utf-8"))
        numbers = range(1, games + 1)
        finished: Iterable[tuple[int, GameResult]]
        if cluster is None:
            finished = ((number, numbered_selfplay_game(seed, number, depth, shipped)) for number in numbers)
        else:
            client = stack.enter_context(cluster_client(cluster))
            tasks = ClusterTasks(client, numbered_selfplay_game, [(seed, number, depth, shipped) for number in numbers],
                                 [f"selfplay game {number}" for number in numbers])
            stack.callback(tasks.cancel)  # on an interruption, the games not finished are not played
            finished = ((index + 1, result) for index, result in tasks.results())
        write_in_order(finished, games, handle)


def write_in_order(finished: Iterable[tuple[int, GameResult]], games: int, handle: TextIO) -> None:
    """Write the games numbered 1 to ``games`` as they finish (in any order) to ``handle``, in
    number order, with a progress line on stderr every 20 games and at the end."""
    waiting: dict[int, GameResult] = {}
    written = total = 0
    tally = {1.0: 0, 0.5: 0, 0.0: 0}
    started = time.perf_counter()
    for count, (number, result) in enumerate(finished, start=1):
        waiting[number] = result
        for fens, score in _ready(waiting, written + 1):
            written += 1
            tally[score] += 1
            total += len(fens)
            handle.writelines(f"{fen} {score:g}\n" for fen in fens)
        handle.flush()
        if count % 20 == 0 or count == games:
            elapsed = time.perf_counter() - started
            print(f"selfplay: {count}/{games} games, {total} positions written, "
                  f"+{tally[1.0]} ={tally[0.5]} -{tally[0.0]} (White), {elapsed:.0f} s",
                  file=sys.stderr, flush=True)


def _ready(waiting: dict[int, GameResult], number: int) -> Iterator[GameResult]:
    """Take out of ``waiting`` the games ``number``, ``number + 1``, ... that are there, in order."""
    while number in waiting:
        yield waiting.pop(number)
        number += 1


if __name__ == "__main__":
    main()
