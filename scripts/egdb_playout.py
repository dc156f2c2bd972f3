"""Won endings from the endgame database, played out by the engine against itself.

    pedina egdb build --pieces 4 --dir /tmp/eg4
    python scripts/egdb_playout.py --egdb /tmp/eg4 --pieces 3 --pieces 4 --move-time 0.1

For each material with the given numbers of pieces in which White can win, the won
position with the longest database distance is played out, once with White to move
(White's longest win) and, with ``--both-sides``, once with Black to move (Black's
longest loss: the defender moves first); the first in index order among equals, so
the same database gives the same positions. Two searchers play at ``--move-time``
seconds a move, both probing the database (or ``--engine-egdb``'s), under the rules' draws (repetition, the
40-move count: 80 plies without a capture or a man move), for at most 200 plies.
One Markdown row a position: the database's distance at the start (plies to the
next capture or man move, or the end), the plies the game took, its longest run of
plies without a capture or man move (the 40-move count's, which draws at 80), and
how it ended. Progress goes to stderr. One process, one core.
"""

from __future__ import annotations

import argparse
import sys
import time

from pedina import Board, EngineSettings, Limits, Position, Searcher
from pedina.egdb import EndgameDatabase, Signature
from pedina.egdb.slices import all_signatures, flip_bits, flipped_signature
from pedina.egdb.store import code_distance
from pedina.squares import squares_of

#: Plies after which a game is stopped unfinished.
MAX_PLIES = 200


def material_name(signature: Signature) -> str:
    """``"2 kings and man v king"`` for White's men and kings against Black's."""
    def side(men: int, kings: int) -> str:
        parts = [f"{count} {plural}" if count > 1 else singular
                 for count, singular, plural in ((kings, "king", "kings"), (men, "man", "men")) if count]
        return " and ".join(parts)

    white_men, white_kings, black_men, black_kings = signature
    return f"{side(white_men, white_kings)} v {side(black_men, black_kings)}"


def longest_result(database: EndgameDatabase, signature: Signature, win: bool) -> Position | None:
    """The position of ``signature``'s table (White to move) whose side to move wins (``win``)
    or loses with the longest distance; ``None`` when there is none."""
    index, table = database.table(signature)
    codes = table.codes()
    wanted = [code for code in set(codes) if code_distance(code) is not None and bool(code & 1) == win]
    if not wanted:
        return None
    best = max(wanted, key=lambda code: code_distance(code) or 0)
    for position_index, white, black, kings in index.positions():
        if codes[position_index] == best:
            return Position.from_squares(squares_of(white & ~kings), squares_of(white & kings),
                                         squares_of(black & ~kings), squares_of(black & kings), True)
    raise AssertionError("a code of the table is at some index")


def white_wins_black_to_move(database: EndgameDatabase, signature: Signature) -> Position | None:
    """The longest win of White's ``signature`` with Black to move: the colour flip of the
    longest loss in the flipped material's table (White to move there)."""
    flipped = longest_result(database, flipped_signature(signature), win=False)
    if flipped is None:
        return None
    white, black, kings = flip_bits(flipped.black), flip_bits(flipped.white), flip_bits(flipped.kings)
    return Position.from_squares(squares_of(white & ~kings), squares_of(white & kings),
                                 squares_of(black & ~kings), squares_of(black & kings), False)


def play_out(directory: str, start: Position, move_time: float, hash_mb: int) -> tuple[Board, int]:
    """The game from ``start``, both sides searching ``move_time`` seconds a move with the tables of ``directory``,
    and its longest run of plies without a capture or a man move (the 40-move count's)."""
    board = Board(start)
    longest = 0
    settings = EngineSettings(hash_mb=hash_mb, egdb_path=directory)
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
    parser.add_argument("--egdb", required=True, metavar="DIR", help="a folder with every table of the pieces played")
    parser.add_argument("--pieces", type=int, action="append", metavar="N",
                        help="play the materials of N pieces (repeatable; default: 3 and 4)")
    parser.add_argument("--both-sides", action="store_true", help="also the longest win with Black to move")
    parser.add_argument("--engine-egdb", metavar="DIR",
                        help="the tables the engines probe (default: --egdb's; e.g. tables without some distances)")
    parser.add_argument("--move-time", type=float, default=0.1, help="seconds a move (default 0.1)")
    parser.add_argument("--hash", type=int, default=16, help="each searcher's hash table in MB (default 16)")
    args = parser.parse_args(argv)
    pieces = sorted(set(args.pieces or [3, 4]))
    if args.move_time <= 0 or args.hash < 1 or not 3 <= pieces[0] <= pieces[-1] <= 12:
        parser.error("--move-time must be positive, --hash at least 1 and --pieces between 3 and 12")
    database = EndgameDatabase(args.egdb)
    if database.pieces < pieces[-1]:
        sys.exit(f"egdb_playout: {args.egdb} does not hold every table of up to {pieces[-1]} pieces "
                 f"(build them: pedina egdb build --pieces {pieces[-1]} --dir {args.egdb})")
    starts: list[tuple[str, Position]] = []
    for signature in all_signatures(pieces[-1]):
        if sum(signature) in pieces:
            found = [longest_result(database, signature, win=True)]
            if args.both_sides:
                found.append(white_wins_black_to_move(database, signature))
            starts += [(material_name(signature), start) for start in found if start is not None]
    print("| ending | start | database distance | plies played | longest count (of 80) | result "
          "| won within the 40-move rule |")
    print("|---|---|--:|--:|--:|---|---|")
    won = 0
    for number, (name, start) in enumerate(starts, start=1):
        value = database.probe(start)
        assert value is not None and value.result == (1 if start.white_to_move else -1) and value.distance is not None
        started = time.perf_counter()
        board, longest = play_out(args.engine_egdb or args.egdb, start, args.move_time, args.hash)
        result, white_won = ending(board)
        won += white_won
        print(f"| {name} | `{start.fen()}` | {value.distance} | {len(board.moves)} | {longest} | {result} | "
              f"{'yes' if white_won else 'no'} |", flush=True)
        print(f"egdb_playout: {number}/{len(starts)} {name}: {result} in {len(board.moves)} plies "
              f"({time.perf_counter() - started:.1f} s)", file=sys.stderr, flush=True)
    print(f"egdb_playout: {won} of {len(starts)} won", file=sys.stderr)
    database.close()


if __name__ == "__main__":
    main()
