"""In-process strength matches between two search configurations.

    flock /tmp/pedina-heavy.lock python scripts/strength.py --games 100 \\
        --a "time=0.1" --b "depth=2"
    flock /tmp/pedina-heavy.lock python scripts/strength.py --games 100 \\
        --a "depth=5" --b "depth=5,weights=untuned"

A player is ``key=value`` pairs: ``depth``, ``nodes`` or ``time`` (seconds per
move) for the limit, ``weights`` (a JSON file, ``untuned`` for the hand-set
weights, default the shipped ``engine/weights.json``), ``hash`` (MB) and ``book``
(``on``, the default: the shipped opening book; ``off``: a search from the first move).
Openings are the 3-ply sequences from the start position, spread evenly over
the whole list, each played twice with colours swapped; games end by the rules
or as a draw after ``--max-plies``. Scores are A's, with a 95% interval.
"""

from __future__ import annotations

import argparse
import sys
import time

from pedina.board import Board
from pedina.evaluate import Evaluator, default_evaluator
from pedina.settings import EngineSettings
from pedina.move import Move
from pedina.protocol.match.game import TimeControl
from pedina.protocol.match.inprocess import Player, play_searcher_match
from pedina.protocol.match.schedule import opening_lines
from pedina.protocol.match.stats import EloEstimate
from pedina.search import Searcher
from pedina.session import Session


def make_player(spec: str, name: str) -> Player:
    """A :class:`Player` from ``depth=4,weights=untuned`` style text."""
    options = dict(item.split("=", 1) for item in spec.split(",") if item)
    unknown = set(options) - {"depth", "nodes", "time", "weights", "hash", "book"}
    if unknown:
        raise SystemExit(f"unknown player option(s) {', '.join(sorted(unknown))} in {spec!r}")
    weights = options.get("weights")
    if weights is None:
        evaluator = default_evaluator()
    elif weights == "untuned":
        evaluator = Evaluator()
    else:
        evaluator = Evaluator.from_file(weights)
    tc = TimeControl(depth=int(options["depth"]) if "depth" in options else None,
                     nodes=int(options["nodes"]) if "nodes" in options else None,
                     move_time=float(options["time"]) if "time" in options else None)
    if not tc.is_set:
        raise SystemExit(f"player {spec!r} needs depth=, nodes= or time=")
    if options.get("book", "on") not in ("on", "off"):
        raise SystemExit(f"player {spec!r}: book= takes on or off")
    settings = EngineSettings(hash_mb=int(options.get("hash", 16)), egdb_path="", book=options.get("book", "on") == "on")
    session = Session(settings, searcher_factory=lambda chosen: Searcher(chosen, evaluator=evaluator))
    return Player(session, tc, f"{name} ({spec})")


def spread_openings(count: int) -> list[list[Move]]:
    """``count`` 3-ply openings taken evenly across the full list."""
    every = opening_lines(3)
    if count >= len(every):
        return every
    return [every[i * len(every) // count] for i in range(count)]


def run(a: Player, b: Player, games: int, max_plies: int, quiet: bool = False) -> EloEstimate:
    chosen = spread_openings((games + 1) // 2)
    started = time.perf_counter()

    def progress(index: int, score: float, board: Board) -> None:
        if not quiet:
            print(f"game {index:3d}: {score:g} for A in {len(board.moves)} plies  "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)

    return play_searcher_match(a, b, chosen, max_plies, on_game=progress)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="player A, e.g. time=0.1")
    parser.add_argument("--b", required=True, help="player B, e.g. depth=2")
    parser.add_argument("--games", type=int, default=100, help="games (rounded up to pairs)")
    parser.add_argument("--max-plies", type=int, default=200)
    args = parser.parse_args(argv)
    a = make_player(args.a, "A")
    b = make_player(args.b, "B")
    result = run(a, b, args.games, args.max_plies)
    print(f"A = {a.name}\nB = {b.name}\nA: {result.games} games  {result.summary()}  LOS {100 * result.los:.1f}%")


if __name__ == "__main__":
    main()
