"""Self-play games for tuning: quiet positions labelled with the game result.

    python scripts/selfplay.py --games 1200 --depth 4 --seed 1 --out build/tune/positions.txt

Each game starts with 4 to 8 random moves (drawn from ``--seed``), then both
sides search to ``--depth`` with the hand-set (untuned) evaluation, with a
small seeded chance of a random move in the first 30 plies for variety. Games
end by the rules or as a draw after 200 plies. Every position from ply 8 on
where neither side can capture is written as ``FEN result`` (White's score:
1, 0.5 or 0), one a line. The same arguments give the same file.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time

from pedina.board import Board
from pedina.evaluate import Evaluator
from pedina.movegen import generate_captures
from pedina.protocol.match.inprocess import Player, choose_move
from pedina.search import Limits, Searcher
from pedina.session import Session
from pedina.squares import BOARD

MAX_PLIES = 200


def quiet(board: Board) -> bool:
    """Neither side has a capture."""
    p = board.position
    empty = BOARD ^ p.white ^ p.black
    return not (generate_captures(p.white, p.black, p.kings, True, empty)
                or generate_captures(p.black, p.white, p.kings, False, empty))


def selfplay_game(rng: random.Random, player: Player) -> tuple[list[str], float]:
    """One game of ``player`` against itself; returns (quiet FENs from ply 8 on, White's score)."""
    board = Board()
    player.engine.new_game()
    for _ in range(rng.randint(4, 8)):
        moves = board.legal_moves()
        if not moves:
            break
        board.push(rng.choice(moves))
    fens: list[str] = []
    while True:
        outcome = board.outcome()
        if outcome is not None:
            score = 0.5 if outcome.winner is None else float(outcome.winner)
            break
        if len(board.moves) >= MAX_PLIES:
            score = 0.5
            break
        if len(board.moves) >= 8 and quiet(board):
            fens.append(board.position.fen())
        moves = board.legal_moves()
        if len(board.moves) < 30 and rng.random() < 0.05:
            board.push(rng.choice(moves))
        else:
            board.push(choose_move(player, board))
    return fens, score


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1200)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="build/tune/positions.txt")
    args = parser.parse_args(argv)
    generate_positions(args.games, args.depth, args.seed, args.out)


def generate_positions(games: int, depth: int, seed: int, out: str) -> None:
    """Play ``games`` games and write their labelled positions to ``out``."""
    rng = random.Random(seed)
    player = Player(Session(hash_mb=16, searcher_factory=lambda mb: Searcher(mb, evaluator=Evaluator())), Limits(depth=depth))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    started = time.perf_counter()
    total = 0
    tally = {1.0: 0, 0.5: 0, 0.0: 0}
    with open(out, "w", encoding="utf-8") as handle:
        for game in range(1, games + 1):
            fens, score = selfplay_game(rng, player)
            tally[score] += 1
            total += len(fens)
            for fen in fens:
                handle.write(f"{fen} {score:g}\n")
            if game % 20 == 0 or game == games:
                elapsed = time.perf_counter() - started
                print(f"selfplay: {game}/{games} games, {total} positions, "
                      f"+{tally[1.0]} ={tally[0.5]} -{tally[0.0]} (White), {elapsed:.0f} s",
                      file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
