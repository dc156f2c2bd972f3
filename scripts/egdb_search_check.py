#!/usr/bin/env python3
"""Random positions of the endgame tables against a search that does not probe them.

    python scripts/egdb_search_check.py --egdb DIR --pieces 6 --count 500

Draws ``--count`` positions uniformly among those of every table with exactly
``--pieces`` pieces (a random index of a table chosen by its number of positions;
an index that is no position is drawn again), with White or Black to move, and
skips those without a legal move. Each is searched without a database (depth 14 and
40,000 nodes by default, a new game each time); where the search proves a win or a
loss, the table must say the same. Prints one line per disagreement and a summary,
progress on stderr, and exits 1 if any proof disagrees. One process, one core.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from pedina import Board, EngineSettings, Limits, Position, Searcher, legal_moves
from pedina.egdb import EndgameDatabase, SliceIndex, all_signatures
from pedina.egdb.slices import flip_bits
from pedina.scores import proven_plies
from pedina.squares import popcount


def table_position(rng: random.Random, tables: list[SliceIndex], weights: list[int]) -> Position:
    """A position drawn uniformly from ``tables`` (weighted by their positions), either side to move."""
    while True:
        (table,) = rng.choices(tables, weights)
        white, black, kings = table.position(rng.randrange(table.size))
        white_men, white_kings, black_men, black_kings = table.signature
        if white & black or popcount(white) != white_men + white_kings or popcount(black) != black_men + black_kings:
            continue  # a hole: two pieces on one square
        if rng.random() < 0.5:
            return Position(white, black, kings, True)
        # The colour flip: the same material and value, with Black to move.
        return Position(flip_bits(black), flip_bits(white), flip_bits(kings), False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--egdb", required=True, help="folder of the tables (every table of up to --pieces)")
    parser.add_argument("--pieces", type=int, required=True, help="pieces of the positions drawn")
    parser.add_argument("--count", type=int, default=500, help="positions drawn (default 500)")
    parser.add_argument("--depth", type=int, default=14, help="search depth (default 14)")
    parser.add_argument("--nodes", type=int, default=40_000, help="search nodes (default 40,000)")
    parser.add_argument("--seed", type=int, default=2026, help="random seed (default 2026)")
    args = parser.parse_args(argv)

    database = EndgameDatabase(args.egdb)
    if database.pieces < args.pieces:
        parser.error(f"{args.egdb} holds every table up to {database.pieces} pieces only, not {args.pieces}")
    tables = [SliceIndex(signature) for signature in all_signatures(args.pieces) if sum(signature) == args.pieces]
    weights = [table.positions_count for table in tables]
    rng = random.Random(args.seed)
    searcher = Searcher(EngineSettings(hash_mb=16, egdb_path=""))

    searched = proven = disagreed = 0
    started = time.perf_counter()
    while searched < args.count:
        position = table_position(rng, tables, weights)
        if not legal_moves(position):
            continue
        searched += 1
        value = database.probe(position)
        assert value is not None
        searcher.new_game()
        score = searcher.search(Board(position), Limits(depth=args.depth, nodes=args.nodes)).score
        if proven_plies(score) is not None:
            proven += 1
            if (score > 0) != (value.result > 0) or value.result == 0:
                disagreed += 1
                print(f"{position.fen()}: the search proves {'a win' if score > 0 else 'a loss'}, "
                      f"the table says {value}")
        if searched % 25 == 0:
            print(f"{searched}/{args.count} searched, {proven} proven, {disagreed} disagreeing, "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    print(f"{searched} random {args.pieces}-piece positions with a move: the search (depth {args.depth}, "
          f"{args.nodes:,} nodes, no database) proved {proven} won or lost; {proven - disagreed} as the tables say, "
          f"{disagreed} otherwise ({time.perf_counter() - started:.0f} s)")
    database.close()
    return 1 if disagreed else 0


if __name__ == "__main__":
    sys.exit(main())
