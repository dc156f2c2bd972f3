"""Won endings from the endgame database, played out by the engine against itself.

    pedina egdb build --pieces 4 --dir /tmp/eg4
    python scripts/egdb_playout.py --egdb /tmp/eg4 --move-time 0.1

For each material of :data:`MATERIALS` (3 and 4 pieces), the won position with
White to move that has the longest database distance (the first in index order
among equals, so the same database gives the same positions) is played by two
searchers at ``--move-time`` seconds a move, both probing the database, under the
rules' draws (repetition, the 40-move count: 80 plies without a capture or a man
move), for at most 200 plies. One Markdown row a position: the database's
distance at the start (plies to the next capture or man move, or the end), the
plies the game took, its longest run of plies without a capture or man move
(the 40-move count's, which draws at 80), and how it ended. Progress goes to stderr. One process, one
core.
"""

from __future__ import annotations

import argparse
import sys
import time

from pedina import Board, EngineSettings, Limits, Position, Searcher
from pedina.egdb import EndgameDatabase, Signature, slice_name
from pedina.egdb.store import code_distance
from pedina.squares import squares_of

#: (signature, what it is): White's men and kings against Black's, White to move.
MATERIALS: tuple[tuple[Signature, str], ...] = (
    ((0, 2, 0, 1), "2 kings v king"),
    ((1, 1, 0, 1), "king and man v king"),
    ((0, 2, 1, 0), "2 kings v man"),
    ((0, 3, 0, 1), "3 kings v king"),
    ((1, 2, 0, 1), "2 kings and man v king"),
    ((2, 1, 0, 1), "king and 2 men v king"),
    ((0, 2, 0, 2), "2 kings v 2 kings"),
    ((0, 2, 1, 1), "2 kings v king and man"),
    ((1, 1, 1, 1), "king and man v king and man"),
)
#: Plies after which a game is stopped unfinished.
MAX_PLIES = 200


def longest_win(database: EndgameDatabase, signature: Signature) -> Position:
    """The won position of ``signature`` (White to move) with the longest distance."""
    index, table = database.table(signature)
    codes = table.codes()
    best = max((code for code in set(codes) if code & 1), key=lambda code: code_distance(code) or 0)
    for position_index, white, black, kings in index.positions():
        if codes[position_index] == best:
            return Position.from_squares(squares_of(white & ~kings), squares_of(white & kings),
                                         squares_of(black & ~kings), squares_of(black & kings), True)
    raise LookupError(f"{slice_name(signature)} has no won position")


def play_out(database: EndgameDatabase, start: Position, move_time: float, hash_mb: int) -> tuple[Board, int]:
    """The game from ``start``, both sides searching ``move_time`` seconds a move with the database,
    and its longest run of plies without a capture or a man move (the 40-move count's)."""
    board = Board(start)
    longest = 0
    settings = EngineSettings(hash_mb=hash_mb, egdb_path=database.directory)
    sides = {True: Searcher(settings), False: Searcher(settings)}
    while board.outcome() is None and len(board.moves) < MAX_PLIES:
        best = sides[board.position.white_to_move].search(board, Limits(move_time=move_time)).best
        if best is None:
            raise RuntimeError(f"no move in {board.position.fen()}, a game that is not over")
        board.push(best)
        longest = max(longest, board.reversible_plies)
    return board, longest


def ending(board: Board) -> tuple[str, bool]:
    """How the game ended, and whether White (the side that was winning) won."""
    outcome = board.outcome()
    if outcome is None:
        return f"stopped after {MAX_PLIES} plies", False
    if outcome.winner is None:
        return f"draw ({outcome.termination})", False
    return ("White wins" if outcome.winner else "Black wins"), outcome.winner is True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--egdb", required=True, metavar="DIR", help="a folder with every table of up to 4 pieces")
    parser.add_argument("--move-time", type=float, default=0.1, help="seconds a move (default 0.1)")
    parser.add_argument("--hash", type=int, default=16, help="each searcher's hash table in MB (default 16)")
    args = parser.parse_args(argv)
    if args.move_time <= 0 or args.hash < 1:
        parser.error("--move-time must be positive and --hash at least 1")
    database = EndgameDatabase(args.egdb)
    if database.pieces < 4:
        sys.exit(f"egdb_playout: {args.egdb} does not hold every table of up to 4 pieces "
                 f"(build them: pedina egdb build --pieces 4 --dir {args.egdb})")
    print("| ending | start (White to move) | database distance | plies played | longest count (of 80) | result "
          "| won within the 40-move rule |")
    print("|---|---|--:|--:|--:|---|---|")
    won = 0
    for number, (signature, name) in enumerate(MATERIALS, start=1):
        start = longest_win(database, signature)
        value = database.probe(start)
        assert value is not None and value.result == 1 and value.distance is not None
        started = time.perf_counter()
        board, longest = play_out(database, start, args.move_time, args.hash)
        result, white_won = ending(board)
        won += white_won
        print(f"| {name} | `{start.fen()}` | {value.distance} | {len(board.moves)} | {longest} | {result} | "
              f"{'yes' if white_won else 'no'} |", flush=True)
        print(f"egdb_playout: {number}/{len(MATERIALS)} {name}: {result} in {len(board.moves)} plies "
              f"({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
    print(f"egdb_playout: {won} of {len(MATERIALS)} won", file=sys.stderr)
    database.close()


if __name__ == "__main__":
    main()
