#!/usr/bin/env python3
"""How far an opening book reaches along every 3-move opening (the match runner's openings).

    python scripts/book_coverage.py                 # the shipped book
    python scripts/book_coverage.py --book book.txt --plies 3
    python scripts/book_coverage.py --games games.pdn   # and the book moves played in a match

For each opening (every legal sequence of ``--plies`` moves from the start, as
``pedina match`` plays them), two depths in plies past the opening: the book's main
line (its best move, while the position reached is in the book), and the deepest
book position reached by any line of book moves. Prints the minimum, median and
maximum of each over the openings, and how many openings end in a book position
at all. With ``--games``, the book moves each player made in the games of a
``pedina match`` PDN file (the moves whose comment is ``{book ...}``), a game on average.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from pathlib import Path

from pedina import Position
from pedina.book import Book, shipped_book
from pedina.pdn import decode_pdn, read_games
from pedina.protocol.match.schedule import opening_lines


def main_line_plies(book: Book, position: Position) -> int:
    """Plies of the book's main line from ``position`` (0 when it is not in the book)."""
    plies = 0
    seen = set()
    while position.fen() not in seen:
        seen.add(position.fen())
        moves = book.moves(position)
        if not moves:
            break
        position = position.play(moves[0].move)
        plies += 1
    return plies


def deepest_plies(book: Book, position: Position, known: dict[str, int]) -> int:
    """Plies to the deepest book position reached from ``position`` by book moves."""
    key = position.fen()
    if key in known:
        return known[key]
    known[key] = 0  # a repetition ends the line
    deepest = 0
    for book_move in book.moves(position):
        deepest = max(deepest, 1 + deepest_plies(book, position.play(book_move.move), known))
    known[key] = deepest
    return deepest


def book_moves_by_player(pdn_text: str) -> tuple[Counter[str], Counter[str]]:
    """The book moves each player made in the games of ``pdn_text``, and the games each played."""
    made: Counter[str] = Counter()
    games: Counter[str] = Counter()
    for game in read_games(pdn_text):
        white, black = game.headers.get("White", "?"), game.headers.get("Black", "?")
        games.update((white, black))
        for ply, comment in enumerate(game.comments):
            if comment.startswith("book"):
                made[white if game.board.positions[ply].white_to_move else black] += 1
    return made, games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--book", help="book file (default: the shipped book)")
    parser.add_argument("--plies", type=int, default=3, help="opening plies (default 3)")
    parser.add_argument("--games", help="a match's PDN file: the book moves each player made a game")
    args = parser.parse_args(argv)

    book = Book.read(args.book) if args.book else shipped_book()
    main_lines = []
    deepest = []
    known: dict[str, int] = {}
    for line in opening_lines(args.plies):
        position = Position.start()
        for move in line:
            position = position.play(move)
        main_lines.append(main_line_plies(book, position))
        deepest.append(deepest_plies(book, position, known))

    print(f"{len(book):,} positions; {len(main_lines)} openings of {args.plies} plies, "
          f"{sum(1 for plies in main_lines if plies)} ending in a book position")
    for name, plies in (("main line", main_lines), ("deepest line", deepest)):
        print(f"{name:<12} plies past the opening: min {min(plies)}, median {statistics.median(plies):g}, "
              f"max {max(plies)}")
    if args.games:
        made, games = book_moves_by_player(decode_pdn(Path(args.games).read_bytes()))
        for player, count in sorted(games.items()):
            print(f"{player}: {made[player]:,} book moves in {count} games, {made[player] / count:.2f} a game")
    return 0


if __name__ == "__main__":
    sys.exit(main())
