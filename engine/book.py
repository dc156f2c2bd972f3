"""The opening book: positions searched in advance, with the value of each of their moves.

A :class:`Book` maps positions to a :class:`BookEntry`: the depth the position
was searched to and every legal move with its value, best first, so that play
can vary among near-equal moves (:meth:`Book.choose`). ``pedina book build``
makes one with the engine's own search, and ``pedina book finish`` backs its
values up through it (:meth:`Book.backed_up`); the book shipped in the package
(:func:`shipped_book`, finished) covers every position of every 3-move opening,
and the good lines beyond them. Looking up a position that is not in the book gives
``None``::

    import random

    import pedina.book

    book = pedina.book.shipped_book()
    board = pedina.Board()
    for choice in book.moves(board):
        print(board.pdn(choice.move), choice.value)
    print(book.choose(board, variety=10, rng=random.Random(1)))

The file format (``book.txt``, UTF-8 text) is line based. The first line is
``pedina-book 1`` (the format and its version); blank lines and lines starting
with ``#`` are ignored; every other line is one position::

    f7f800000 000001fef 000000000 w 6 23-19=-5 21-18=-6 22-19=-7 21-17=-11 ...

- the white pieces, the black pieces and the kings as bitboards in the 36-bit
  layout of :mod:`pedina.squares`, in hexadecimal (nine digits);
- ``w`` or ``b``: the side to move;
- the depth of the search that valued the moves;
- every legal move as Hub text, ``=``, and its value: the search's score of the
  move in hundredths of a man from the side to move's point of view (as
  :attr:`pedina.Result.score`), best first. A finished book holds the values
  backed up through the book instead (:meth:`Book.backed_up`), for every move
  that leads to a position in it; a build's own file keeps the searches' values,
  which a resumed build goes on from.

A position given twice keeps its last line (a book can be extended by
appending). Positions are checked, and their moves parsed, when they are
looked up: loading a book of many thousand lines takes milliseconds.
"""

from __future__ import annotations

import functools
import heapq
import importlib.resources
import os
import random
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Protocol

from pedina.board import Board
from pedina.move import Move, legal_moves
from pedina.position import Position, PositionError
from pedina.scores import from_table
from pedina.search import Info, Searcher
from pedina.settings import MAX_VARIETY, EngineSettings
from pedina.timeman import Limits

#: The book shipped in the package (read as a resource, as the evaluation's weights are).
BOOK_RESOURCE = "book.txt"
#: The first line of every book file.
BOOK_HEADER = "pedina-book 1"
Key = tuple[int, int, int, bool]


class BookError(ValueError):
    """A book file or one of its lines is malformed (the message says where and how)."""


@dataclass(frozen=True)
class BookMove:
    """A move of a book position and its value (hundredths of a man, the mover's view)."""

    move: Move
    value: int


@dataclass(frozen=True)
class BookEntry:
    """A book position: the search depth its moves were valued at, and the moves, kept best
    first (equal values in the order given)."""

    position: Position
    depth: int
    moves: tuple[BookMove, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "moves", tuple(sorted(self.moves, key=lambda choice: -choice.value)))

    def line(self) -> str:
        """The entry as a line of the file format (without the newline)."""
        position = self.position
        fields = [f"{position.white:09x}", f"{position.black:09x}", f"{position.kings:09x}",
                  "w" if position.white_to_move else "b", str(self.depth)]
        return " ".join(fields + [f"{choice.move.hub()}={choice.value:+d}" for choice in self.moves])


def _key(position: Position) -> Key:
    return position.white, position.black, position.kings, position.white_to_move


def _parse_key(fields: list[str], where: str) -> Key:
    if len(fields) < 5:
        raise BookError(f"{where}: expected the white, black and king bitboards, the side to move, the depth "
                        "and the moves")
    try:
        white, black, kings = (int(field, 16) for field in fields[:3])
    except ValueError:
        raise BookError(f"{where}: the bitboards must be hexadecimal numbers, not {' '.join(fields[:3])!r}") from None
    if fields[3] not in ("w", "b"):
        raise BookError(f"{where}: the side to move must be w or b, not {fields[3]!r}")
    return white, black, kings, fields[3] == "w"


def parse_entry(line: str, where: str = "book line") -> BookEntry:
    """The :class:`BookEntry` of one line of the file format, or :class:`BookError` saying what is
    wrong: malformed fields, bitboards that are no valid position, a move that is not legal
    there, a legal move missing, or a move given twice. ``where`` names the line in messages."""
    fields = line.split()
    white, black, kings, white_to_move = _parse_key(fields, where)
    position = Position(white, black, kings, white_to_move)
    try:
        # The Hub text round trip rejects what the unchecked constructor let through: bits off
        # the board or shared by both sides (the texts then differ), too many pieces, men on
        # their promotion row.
        checked = Position.from_hub(position.hub())
    except PositionError as error:
        raise BookError(f"{where}: not a valid position: {error}") from None
    if checked != position:
        raise BookError(f"{where}: the bitboards overlap or name squares off the board")
    try:
        depth = int(fields[4])
    except ValueError:
        raise BookError(f"{where}: the depth must be an integer, not {fields[4]!r}") from None
    legal = {move.hub(): move for move in legal_moves(position)}
    moves: list[BookMove] = []
    for field in fields[5:]:
        text, sep, value = field.partition("=")
        move = legal.pop(text, None)
        if move is None:
            raise BookError(f"{where}: {text!r} is not a legal move of {position.fen()} (or is given twice)")
        try:
            moves.append(BookMove(move, int(value)))
        except ValueError:
            raise BookError(f"{where}: the value of {text} must be an integer, not {value!r}") from None
    if legal:
        raise BookError(f"{where}: the legal move {next(iter(legal))} of {position.fen()} has no value")
    return BookEntry(position, depth, tuple(moves))


class Book:
    """An opening book: :class:`BookEntry` by position.

    ``len()`` counts the positions, ``in`` tells whether a :class:`~pedina.Position`
    (or a :class:`~pedina.Board`'s current position) is in the book, and iterating
    gives every entry in the order the positions were added. :meth:`read` and
    :func:`shipped_book` load files; the text of a line is parsed (and checked)
    when its position is first looked up, so a malformed line raises
    :class:`BookError` from :meth:`get`, :meth:`moves`, :meth:`choose` or the
    iteration.
    """

    def __init__(self, entries: Iterable[BookEntry] = ()) -> None:
        # An entry, or the text of its line not parsed yet and where that line is.
        self._items: dict[Key, BookEntry | tuple[str, str]] = {}
        for entry in entries:
            self.add(entry)

    @classmethod
    def from_text(cls, text: str, source: str = "book") -> Book:
        """The book in ``text`` (the file format); :class:`BookError` when its header or a line's
        position fields are malformed (``source`` names the text in messages)."""
        lines = text.splitlines()
        if not lines or lines[0].strip() != BOOK_HEADER:
            raise BookError(f"{source} is not a Pedina opening book (its first line is not {BOOK_HEADER!r})")
        book = cls()
        for number, line in enumerate(lines[1:], start=2):
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            where = f"{source}, line {number}"
            key = _parse_key(stripped.split(maxsplit=5), where)
            book._items.pop(key, None)
            book._items[key] = (stripped, where)
        return book

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Book:
        """The book in the file ``path``; :class:`BookError` when it cannot be read or is malformed."""
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else error
            raise BookError(f"cannot read the book {os.fspath(path)}: {reason}") from None
        return cls.from_text(text, os.fspath(path))

    def add(self, entry: BookEntry) -> None:
        """Add ``entry``, replacing the position's earlier entry if there is one."""
        key = _key(entry.position)
        self._items.pop(key, None)
        self._items[key] = entry

    def get(self, position: Position | Board) -> BookEntry | None:
        """The entry of ``position`` (a board: its current position), ``None`` if it is not in the book."""
        if isinstance(position, Board):
            position = position.position
        key = _key(position)
        item = self._items.get(key)
        if item is None or isinstance(item, BookEntry):
            return item
        entry = self._items[key] = parse_entry(*item)
        return entry

    def moves(self, position: Position | Board) -> list[BookMove]:
        """The book moves of ``position`` with their values, best first (empty if it is not in the book)."""
        entry = self.get(position)
        return list(entry.moves) if entry is not None else []

    def backed_up(self) -> Book:
        """This book with every value backed up through it: a move to a position in the
        book is worth that position's best move, whose value is backed up in turn (negamax
        over the book, a proof one ply longer at each step); any other move keeps its
        search's value. The choices of the result then see as deep as the book's lines go,
        not only as deep as its searches. ``pedina book finish`` writes it; the shipped book
        is finished, and :meth:`moves` reads the values as stored, so play pays nothing for it.

        Entries keep their order and depth, and moves of equal value the order given; a
        line that returns to a position being backed up ends there with its move's own
        value. :class:`BookError` for a malformed line.
        """
        values: dict[Key, int] = {}

        def position_value(position: Position, entry: BookEntry, path: set[Key]) -> int:
            key = _key(position)
            known = values.get(key)
            if known is None:
                path.add(key)
                known = values[key] = max(move_value(position, choice, path) for choice in entry.moves)
                path.discard(key)
            return known

        def move_value(position: Position, choice: BookMove, path: set[Key]) -> int:
            child = position.play(choice.move)
            entry = self.get(child)
            if entry is None or not entry.moves or _key(child) in path:
                return choice.value
            return from_table(-position_value(child, entry, path), 1)

        return Book(replace(entry, moves=tuple(BookMove(choice.move, move_value(entry.position, choice, set()))
                                               for choice in entry.moves))
                    for entry in self)

    def choose(self, position: Position | Board, variety: int = 0,
               rng: random.Random | None = None) -> BookMove | None:
        """A book move to play in ``position``, ``None`` if it is not in the book.

        ``variety`` 0 always gives the best move (the first one stored of equal
        values); a larger ``variety`` (hundredths of a man, at most
        :data:`MAX_VARIETY`) draws among the moves valued within ``variety`` of
        the best, the better ones more likely (weight: how far the value is
        above the lowest allowed, plus one), with ``rng`` (give a seeded
        :class:`random.Random` to repeat the draws; default: a fresh unseeded one).
        """
        if not 0 <= variety <= MAX_VARIETY:
            raise ValueError(f"variety must be between 0 and {MAX_VARIETY}, not {variety}")
        choices = self.moves(position)
        if not choices or not variety:
            return choices[0] if choices else None
        floor = choices[0].value - variety
        candidates = [choice for choice in choices if choice.value >= floor]
        weights = [choice.value - floor + 1 for choice in candidates]
        return (rng if rng is not None else random.Random()).choices(candidates, weights=weights)[0]

    def __iter__(self) -> Iterator[BookEntry]:
        for key in list(self._items):
            entry = self.get(Position(*key))
            assert entry is not None
            yield entry

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, position: object) -> bool:
        if isinstance(position, Board):
            position = position.position
        return isinstance(position, Position) and _key(position) in self._items

    def text(self) -> str:
        """The whole book in the file format (header first, then one line per position)."""
        return "\n".join([BOOK_HEADER] + [entry.line() for entry in self]) + "\n"


def search_entry(searcher: Searcher, position: Position, depth: int) -> BookEntry:
    """The entry of ``position`` (which has a legal move): every move valued by one search of
    ``searcher`` to ``depth``, every root move scored exactly (multi-PV over all of them).

    The searcher starts afresh (:meth:`~pedina.Searcher.new_game`), so the values depend on
    the position and the depth alone, not on what was searched before: a book built in
    several runs is the book built in one.
    """
    searcher.new_game()
    searcher.configure(replace(searcher.settings, multipv=max(1, position.count_moves())))
    infos: list[Info] = []
    searcher.search(Board(position), Limits(depth=depth, analysis=True), infos.append)
    # The lines of the last iteration, which the search reports whole, once it is complete.
    deepest = max(info.depth for info in infos)
    moves = [BookMove(info.pv[0], info.score) for info in infos if info.depth == deepest and info.pv]
    return BookEntry(position, deepest, tuple(moves))


def opening_positions(plies: int) -> list[Position]:
    """Every position with a legal move up to ``plies`` plies from the start, nearest first
    (each once, in the order of the moves that first reach it)."""
    level = [Position.start()]
    found: dict[Position, None] = dict.fromkeys(level)
    for _ in range(plies):
        following: dict[Position, None] = {}
        for position in level:
            for move in legal_moves(position):
                child = position.play(move)
                if child not in found and child not in following:
                    following[child] = None
        found.update(following)
        level = list(following)
    return [position for position in found if position.count_moves()]


def entry_line(hub: str, depth: int, settings: EngineSettings) -> str:
    """:func:`search_entry` of the position in Hub text ``hub``, as a line of the file format:
    text in and out, so that it runs in a worker process or on a Dask worker as well as here.
    Each process keeps one searcher per settings (a fresh table per position anyway)."""
    searcher = _searchers.get(settings)
    if searcher is None:
        searcher = _searchers[settings] = Searcher(settings)
    return search_entry(searcher, Position.from_hub(hub), depth).line()


_searchers: dict[EngineSettings, Searcher] = {}


class BookSearches(Protocol):
    """Where :func:`build_book` has its positions searched: it starts several at a time (a
    batch) and then takes their entries as they come."""

    def start(self, position: Position) -> None:
        """Begin searching ``position`` (it has a legal move)."""

    def wait(self) -> BookEntry:
        """The entry of a started position, once its search has ended (in any order)."""


class _SearchHere:
    """Positions searched here, one at a time in the order started."""

    def __init__(self, depth: int, settings: EngineSettings) -> None:
        self._searcher = Searcher(settings)
        self._depth = depth
        self._started: deque[Position] = deque()

    def start(self, position: Position) -> None:
        self._started.append(position)

    def wait(self) -> BookEntry:
        return search_entry(self._searcher, self._started.popleft(), self._depth)


class _SearchPool:
    """Positions searched in a pool of worker processes, each with a searcher of its own."""

    def __init__(self, depth: int, settings: EngineSettings, workers: int) -> None:
        self.pool = ProcessPoolExecutor(workers, initializer=_leave_interrupts_to_the_parent)
        self._depth = depth
        self._settings = settings
        self._running: set[Future[str]] = set()

    def start(self, position: Position) -> None:
        self._running.add(self.pool.submit(entry_line, position.hub(), self._depth, self._settings))

    def wait(self) -> BookEntry:
        done, _ = wait(self._running, return_when=FIRST_COMPLETED)
        future = next(iter(done))
        self._running.remove(future)
        return parse_entry(future.result(), "a worker's entry")


def _leave_interrupts_to_the_parent() -> None:
    """In a worker: Ctrl-C reaches the whole process group, and the building process alone
    handles it (stopping the pool); a worker would otherwise die with a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def build_book(path: str | os.PathLike[str], depth: int, positions: int, *, plies: int = 3, ply_cost: int = 10,
               settings: EngineSettings = EngineSettings(), resume: bool = False,
               progress: Callable[[int], None] | None = None, batch: int = 1, workers: int = 1,
               searches: BookSearches | None = None) -> Book:
    """Build (or with ``resume``, continue) the book in the file ``path`` up to ``positions`` positions.

    First every position up to ``plies`` plies from the start (every 3-move opening's
    positions, for 3), nearest first; then best-first ("drop-out") expansion: the next
    positions searched are the ``batch`` positions not in the book that are cheapest to
    reach from the positions within ``plies``, where each move costs ``ply_cost`` plus
    what it loses against the best move of its position (hundredths of a man; ties go to
    the smaller Hub text), so the book follows the good lines of every opening deeper
    than the bad ones. A batch is searched at once and then expanded, so with ``batch``
    1 every position's children are known before the next is chosen, and a larger batch
    lets ``workers`` processes (or ``searches``, e.g. a cluster's, instead) search
    together. Each position is valued by :func:`search_entry` at ``depth`` and appended
    to the file as soon as its search ends: an interrupted build loses only the searches
    it was in. The book depends on the settings and ``batch``, never on ``workers`` or
    on the order searches end (the file's lines may come in another order).

    ``progress`` gets the number of positions in the book, once the file is read and
    after each position searched. ``resume`` continues the file as it is (a last line
    cut short is dropped), and the same settings then give the same book as a build in
    one run; without it an existing file is refused.

    Raises :class:`BookError` for a file that exists without ``resume``, is not a book,
    or holds positions searched to another depth.
    """
    if batch < 1 or workers < 1:
        raise ValueError(f"batch and workers must be at least 1, not {batch} and {workers}")
    exists = os.path.exists(path) and os.path.getsize(path) > 0
    if exists and not resume:
        raise BookError(f"{os.fspath(path)} already exists (resume continues it)")
    book = Book()
    if exists:
        _drop_cut_line(path)
        book = Book.read(path)
        other = next((entry for entry in book if entry.depth != depth), None)
        if other is not None:
            raise BookError(f"{os.fspath(path)} holds positions searched to depth {other.depth}, not {depth}")
    if progress is not None:
        progress(len(book))
    runner: BookSearches
    if searches is not None:
        runner = searches
    elif workers == 1:
        runner = _SearchHere(depth, settings)
    else:
        runner = _SearchPool(depth, settings, workers)
    try:
        with open(path, "a", encoding="utf-8") as handle:
            if not exists:
                handle.write(f"{BOOK_HEADER}\n# pedina book build: depth {depth}, plies {plies}, "
                             f"ply cost {ply_cost}, batch {batch}\n")

            def search_all(wanted: list[Position]) -> None:
                missing = [position for position in wanted if position not in book]
                for position in missing:
                    runner.start(position)
                for _ in missing:
                    entry = runner.wait()
                    handle.write(entry.line() + "\n")
                    handle.flush()
                    book.add(entry)
                    if progress is not None:
                        progress(len(book))

            roots = opening_positions(plies)[:positions]
            search_all(roots)
            _expand_best_first(book, roots, positions, ply_cost, batch, search_all)
    finally:
        if isinstance(runner, _SearchPool):  # an interrupted build does not wait for the searches left
            runner.pool.shutdown(wait=True, cancel_futures=True)
    return book


def _expand_best_first(book: Book, roots: list[Position], positions: int, ply_cost: int, batch: int,
                       search_all: Callable[[list[Position]], None]) -> None:
    """Dijkstra's search over the book's moves from ``roots`` (all in ``book``), choosing
    positions a batch at a time until ``positions`` are chosen in all (see :func:`build_book`).
    What is chosen depends only on the entries' values, not on which positions ``book``
    held before (a resumed build), so a resumed build chooses what one run would."""
    chosen = set(roots)
    heap = [(0, position.hub(), position) for position in roots]
    cost = {position: 0 for position in roots}
    done: set[Position] = set()

    def expand(position: Position, spent: int) -> None:
        entry = book.get(position)
        assert entry is not None
        best = entry.moves[0].value
        for choice in entry.moves:
            child = position.play(choice.move)
            reach = spent + best - choice.value + ply_cost
            if reach < cost.get(child, reach + 1):
                cost[child] = reach
                heapq.heappush(heap, (reach, child.hub(), child))

    while heap and len(chosen) < positions:
        members: list[tuple[int, Position]] = []
        while heap and len(members) < min(batch, positions - len(chosen)):
            spent, _, position = heapq.heappop(heap)
            if position in done:
                continue
            done.add(position)
            if position in chosen:  # a root: its entry is known, its children go in at once
                expand(position, spent)
            elif position.count_moves():
                members.append((spent, position))
        chosen.update(position for _, position in members)
        search_all([position for _, position in members])
        for spent, position in members:
            expand(position, spent)


def _drop_cut_line(path: str | os.PathLike[str]) -> None:
    """Cut the file after its last newline: a line cut short by an interrupted write goes."""
    with open(path, "rb+") as handle:
        data = handle.read()
        if not data.endswith(b"\n"):
            handle.truncate(data.rfind(b"\n") + 1)


@functools.cache
def shipped_book() -> Book:
    """The book that ships with the package (``pedina/book.txt``), loaded once."""
    text = importlib.resources.files("pedina").joinpath(BOOK_RESOURCE).read_text(encoding="utf-8")
    return Book.from_text(text, f"the shipped book ({BOOK_RESOURCE})")


__all__ = ["BOOK_HEADER", "BOOK_RESOURCE", "Book", "BookEntry", "BookError", "BookMove", "BookSearches", "MAX_VARIETY",
           "build_book", "entry_line", "opening_positions", "parse_entry", "search_entry", "shipped_book"]
