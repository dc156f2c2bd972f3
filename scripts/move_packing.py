#!/usr/bin/env python3
"""Moves as shared tuples or as packed integers: the search's loop over a node's moves, timed
both ways, in the flavour the script runs as.

    python scripts/move_packing.py              # interpreted: what the pure flavour pays
    python scripts/move_packing.py --compiled   # compiled by mypyc first (mypy: the test extra)

The moves are every legal move of the positions up to three plies from ``pedina bench``'s, once
as the move generator gives them (tuples, one shared object for each step and single jump) and
once packed into one int (the from and to squares' bit indices in the low 12 bits, the captured
squares above them), shared too, as a generator's tables would hold them. Each way, what the
search does with a node's moves is timed: build the list (appending each move), then take each
move apart and make it (three xors; a packed move works its king toggle out of the position).
The children are checked to be the same both ways. Runs alternate, so host noise hits both; the
table gives ns a move.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

from pedina import Position
from pedina.movegen import RawMove, generate
from pedina.protocol.bench_search import BENCH_POSITIONS
from pedina.squares import BLACK_PROMOTION, WHITE_PROMOTION

#: One node: the side to move's pieces, the other side's, the kings, the mover's promotion row,
#: and its moves.
Node = tuple[int, int, int, int, list[object]]


def packed(move: RawMove) -> int:
    """``move`` as one int: from square's bit index, to square's << 6, captured squares << 12."""
    frm, to, taken, _, _ = move
    return (frm.bit_length() - 1) | (to.bit_length() - 1) << 6 | taken << 12


def listed(moves: list[object]) -> list[object]:
    """A node's list of moves built as the generator builds it, a move at a time."""
    built: list[object] = []
    for move in moves:
        built.append(move)
    return built


def tuple_children(nodes: list[Node]) -> int:
    """Build each node's list of moves and make every move, moves held as tuples."""
    check = 0
    for us, them, kings, _, moves in nodes:
        for move in listed(moves):
            frm, to, taken, toggle, _ = cast(RawMove, move)
            check ^= (them ^ taken) ^ (us ^ frm ^ to) << 1 ^ (kings ^ toggle) << 2
    return check


def packed_children(nodes: list[Node]) -> int:
    """The same as :func:`tuple_children`, moves held as packed ints."""
    check = 0
    for us, them, kings, promotion, moves in nodes:
        for move in listed(moves):
            bits = cast(int, move)
            frm = 1 << (bits & 63)
            to = 1 << (bits >> 6 & 63)
            taken = bits >> 12
            toggle = (frm ^ to if frm & kings else to & promotion) | (taken & kings)
            check ^= (them ^ taken) ^ (us ^ frm ^ to) << 1 ^ (kings ^ toggle) << 2
    return check


#: A position as the move generator takes it: the side to move's pieces, the other side's, the
#: kings, whether White moves.
Sides = tuple[int, int, int, bool]


def sides_of(position: Position) -> Sides:
    """``position`` as the move generator takes it."""
    if position.white_to_move:
        return position.white, position.black, position.kings, True
    return position.black, position.white, position.kings, False


def bench_positions(plies: int) -> list[Sides]:
    """The positions up to ``plies`` from the bench's."""
    frontier = [sides_of(Position.parse(fen)) for _, fen in BENCH_POSITIONS]
    found = list(frontier)
    for _ in range(plies):
        frontier = [(them ^ taken, us ^ frm ^ to, kings ^ toggle, not white)
                    for us, them, kings, white in frontier
                    for frm, to, taken, toggle, _ in generate(us, them, kings, white)]
        found += frontier
    return found


def nodes_of(positions: list[Sides]) -> tuple[list[Node], list[Node]]:
    """The nodes of ``positions``, with their moves as tuples and as packed ints (each distinct
    move one object, as the generator's tables share them)."""
    as_tuples: list[Node] = []
    as_packed: list[Node] = []
    shared: dict[int, object] = {}
    for us, them, kings, white in positions:
        moves = generate(us, them, kings, white)
        promotion = WHITE_PROMOTION if white else BLACK_PROMOTION
        as_tuples.append((us, them, kings, promotion, list(moves)))
        held = [shared.setdefault(packed(move), packed(move)) for move in moves]
        as_packed.append((us, them, kings, promotion, held))
    return as_tuples, as_packed


def run(runs: int, rounds: int, plies: int) -> None:
    """Check both ways make the same children, then time them, alternating, and print the table."""
    as_tuples, as_packed = nodes_of(bench_positions(plies))
    if tuple_children(as_tuples) != packed_children(as_packed):
        raise SystemExit("the packed moves make other children than the tuples")
    moves = sum(len(node[4]) for node in as_tuples) * rounds
    timings: dict[str, list[float]] = {"tuples": [], "packed ints": []}
    for _ in range(runs):
        for name, walk, nodes in (("tuples", tuple_children, as_tuples), ("packed ints", packed_children, as_packed)):
            start = time.perf_counter()
            for _ in range(rounds):
                walk(nodes)
            timings[name].append((time.perf_counter() - start) / moves * 1e9)
    compiled = not __file__.endswith(".py")
    print(f"{moves // rounds:,} moves of {len(as_tuples):,} positions, {runs} runs of {rounds} rounds, "
          f"{'compiled' if compiled else 'interpreted'}")
    for name, values in timings.items():
        print(f"  {name:12s} {statistics.median(values):6.1f} ns a move (runs {min(values):.1f} to {max(values):.1f})")
    ratio = statistics.median(timings["packed ints"]) / statistics.median(timings["tuples"])
    print(f"  packed ints / tuples: {ratio:.2f}x the time")


def main() -> None:
    parser = argparse.ArgumentParser(description="The search's loop over a node's moves, with moves held as "
                                                 "shared tuples and as packed ints, timed side by side.")
    parser.add_argument("--compiled", action="store_true", help="compile this script with mypyc first")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--plies", type=int, default=3, help="the positions: up to this many plies from the bench's")
    args = parser.parse_args()
    if not args.compiled:
        run(args.runs, args.rounds, args.plies)
        return
    with tempfile.TemporaryDirectory() as build:
        module = Path(build) / "move_packing_compiled.py"
        module.write_text(Path(__file__).read_text())
        subprocess.run([sys.executable, "-m", "mypyc", module.name], cwd=build, check=True,
                       stdout=subprocess.DEVNULL)
        call = f"import move_packing_compiled as m; m.run({args.runs}, {args.rounds}, {args.plies})"
        subprocess.run([sys.executable, "-c", call], cwd=build, check=True)


if __name__ == "__main__":
    main()
