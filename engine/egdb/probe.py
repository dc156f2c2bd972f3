"""Probing a directory of table files: the value of a position for the side to move."""

from __future__ import annotations

import importlib.resources
import os
import re
import sys
from typing import TYPE_CHECKING

from pedina.egdb.slices import Signature, SliceIndex, all_signatures, signature_of, slice_name
from pedina.egdb.store import TableFile, TableFileError, code_distance

if TYPE_CHECKING:
    from pedina.position import Position

#: A table file's name: ``slice-WM-WK-BM-BK.egdb`` (see :func:`pedina.egdb.slices.slice_name`).
_TABLE_NAME = re.compile(r"slice-(\d+)-(\d+)-(\d+)-(\d+)\.egdb")
#: The folder of the shipped tables, inside the ``pedina.egdb`` package.
SHIPPED_FOLDER = "tables"
#: Every table of up to this many pieces ships with the package.
SHIPPED_PIECES = 5


def table_path(directory: str, signature: Signature) -> str:
    """Where the table of ``signature`` lives in ``directory``."""
    return os.path.join(directory, slice_name(signature) + ".egdb")


def default_directory() -> str:
    """The database folder in the user's data folder: ``%LOCALAPPDATA%\\pedina\\egdb`` on
    Windows, ``~/Library/Application Support/pedina/egdb`` on macOS, else
    ``$XDG_DATA_HOME/pedina/egdb`` (``~/.local/share/pedina/egdb`` without it)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "pedina", "egdb")


def shipped_directory() -> str:
    """The folder of the tables that ship with Pedina: every table of up to
    :data:`SHIPPED_PIECES` pieces, built by ``pedina egdb build``, every one with distances."""
    return str(importlib.resources.files("pedina.egdb").joinpath(SHIPPED_FOLDER))


class EndgameDatabaseError(ValueError):
    """A folder named for endgame tables that holds no complete set of them."""


def open_endgame_database(directory: str) -> EndgameDatabase | None:
    """The endgame tables in ``directory`` (``None`` for the empty string: none), or
    :class:`EndgameDatabaseError` when the folder holds no complete set of tables. The
    shipped tables' folder stands for the tables installed (:func:`installed_database`),
    ``None`` in an install that has none."""
    if not directory:
        return None
    if directory == shipped_directory():
        return installed_database()
    if not os.path.isdir(directory):
        raise EndgameDatabaseError(f"no such folder of endgame tables: {directory}")
    database = EndgameDatabase(directory)
    if database.pieces:
        return database
    raise EndgameDatabaseError(f"{directory} holds no complete set of tables (see `pedina egdb build`)")


def installed_database(user_folder: str | None = None, shipped_folder: str | None = None) -> EndgameDatabase | None:
    """The tables probed by default (the shipped tables' folder as ``egdb_path``): those built
    into the user's data folder (``pedina egdb build``, :func:`default_directory`) when their
    complete set goes to more pieces than the shipped one, else the shipped tables (``None``
    in an install without them). The folders can be named instead, for tests and tools."""
    user = EndgameDatabase(user_folder if user_folder is not None else default_directory())
    shipped = EndgameDatabase(shipped_folder if shipped_folder is not None else shipped_directory())
    if user.pieces > shipped.pieces:
        return user
    return shipped if shipped.pieces else None


def shipped_database() -> EndgameDatabase | None:
    """A new :class:`EndgameDatabase` over the shipped tables, or ``None`` when this install
    has none. New at each call: a database's open files are read by one thread at a time."""
    database = EndgameDatabase(shipped_directory())
    return database if database.pieces else None


class DatabaseValue:
    """A position's value with best play: ``result`` for the side to move (1 win,
    0 draw, -1 loss) and, where the table stores it, ``distance``: plies to the next
    capture or man move, or to the end of the game, with the winner hastening it
    and the loser delaying it (``None`` for a draw or a table without distances)."""

    def __init__(self, result: int, distance: int | None) -> None:
        self.result = result
        self.distance = distance

    @classmethod
    def from_code(cls, code: int) -> DatabaseValue:
        """The value a table code stands for (see :mod:`pedina.egdb.store`)."""
        return cls(0 if code == 0 else 1 if code & 1 else -1, code_distance(code))

    def __str__(self) -> str:
        word = {1: "win", 0: "draw", -1: "loss"}[self.result]
        if self.distance is None:
            return word
        return f"{word} ({self.distance} plies to the next capture or man move, or the end)"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DatabaseValue) and self.result == other.result
                and self.distance == other.distance)

    def __repr__(self) -> str:
        return f"DatabaseValue({self.result}, {self.distance})"


class EndgameDatabase:
    """The tables found in ``directory`` (files opened on first use).

    :attr:`pieces` is the largest piece count of which every table is present:
    every position with that many pieces or fewer can be probed. Probes return
    codes (:mod:`pedina.egdb.store`) or ``-1`` for a position without a table.

    A table is trusted only once its header matches the slice of its file name.
    The search's :meth:`lookup` never raises: a table that fails there (and in
    :meth:`open_all` when told to) is dropped, its position answered as in no
    table, and the reason kept for the adapters to report (:meth:`take_errors`).
    """

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.signatures: set[Signature] = set()
        if os.path.isdir(directory):
            for name in os.listdir(directory):
                match = _TABLE_NAME.fullmatch(name)
                if match:
                    men, kings, other_men, other_kings = (int(group) for group in match.groups())
                    self.signatures.add((men, kings, other_men, other_kings))
        self.pieces = _complete_up_to(self.signatures)
        self._open: dict[Signature, tuple[SliceIndex, TableFile]] = {}
        self._loaded: dict[Signature, tuple[SliceIndex, bytes]] = {}
        self._errors: list[str] = []

    def table(self, signature: Signature) -> tuple[SliceIndex, TableFile]:
        """The index and open file of a table (raises :class:`~pedina.egdb.store.TableFileError`,
        also for a file whose header is another slice's: a renamed or swapped file)."""
        found = self._open.get(signature)
        if found is None:
            path = table_path(self.directory, signature)
            table = TableFile(path)
            index = SliceIndex(signature)
            if table.signature != signature or table.size != index.size:
                table.close()
                raise TableFileError(f"{path}: its header is of {slice_name(table.signature)} "
                                     f"({table.size} positions), not of {slice_name(signature)} ({index.size})")
            found = (index, table)
            self._open[signature] = found
        return found

    def open_all(self, drop_broken: bool = False) -> None:
        """Open every table now (tens of ms at 5 pieces): an engine does it before its first
        search, whose clock would otherwise pay for each table the search first reaches.

        A table that cannot be opened raises :class:`~pedina.egdb.store.TableFileError`, or
        with ``drop_broken`` is dropped (see :meth:`take_errors`) and the others opened."""
        for signature in sorted(self.signatures):
            try:
                self.table(signature)
            except TableFileError as error:
                if not drop_broken:
                    raise
                self._drop(signature, error)

    def _drop(self, signature: Signature, error: TableFileError) -> None:
        """Probe the table of ``signature`` no more, keeping why for :meth:`take_errors`."""
        self.signatures.discard(signature)
        opened = self._open.pop(signature, None)
        if opened is not None:
            opened[1].close()
        self._loaded.pop(signature, None)
        self._errors.append(f"endgame table dropped: {error}")

    def take_errors(self) -> list[str]:
        """Why each table dropped since the last call was dropped, one line a table."""
        errors, self._errors = self._errors, []
        return errors

    def load(self, signatures: list[Signature]) -> None:
        """Read these tables whole into memory, for many probes (builds and verification)."""
        for signature in signatures:
            if signature not in self._loaded:
                index, table = self.table(signature)
                self._loaded[signature] = (index, table.codes())

    def loaded(self, signature: Signature) -> tuple[SliceIndex, bytes]:
        """The index and codes of a table, read whole into memory (see :meth:`load`)."""
        self.load([signature])
        return self._loaded[signature]

    def white_code(self, white: int, black: int, kings: int) -> int:
        """The code of a position with White to move, ``-1`` when its table is missing."""
        signature = signature_of(white, black, kings)
        loaded = self._loaded.get(signature)
        if loaded is not None:
            return loaded[1][loaded[0].index(white, black, kings)]
        if signature not in self.signatures:
            return -1
        index, table = self.table(signature)
        return table.code(index.index(white, black, kings))

    def black_code(self, white: int, black: int, kings: int) -> int:
        """The code of a position with Black to move (looked up as its colour flip),
        ``-1`` when its table is missing."""
        signature = signature_of(black, white, kings)
        loaded = self._loaded.get(signature)
        if loaded is not None:
            return loaded[1][loaded[0].turned_index(black, white, kings)]
        if signature not in self.signatures:
            return -1
        index, table = self.table(signature)
        return table.code(index.turned_index(black, white, kings))

    def code(self, us: int, them: int, kings: int, white: bool) -> int:
        """The code of a position given as the search holds it: the mover's pieces, the
        other side's, the kings and the mover's colour; ``-1`` without a table."""
        return self.white_code(us, them, kings) if white else self.black_code(them, us, kings)

    def lookup(self, us: int, them: int, kings: int, white: bool) -> tuple[int, int] | None:
        """The search's probe (:class:`pedina.search.EndgameTables`): (1 win, 0 draw or -1
        loss for the side to move; the distance, -1 when not stored), ``None`` without a table
        or when its table fails (which is then dropped: see :meth:`take_errors`)."""
        try:
            code = self.code(us, them, kings, white)
        except TableFileError as error:
            # The mover's table either way: Black's position is looked up as its colour flip.
            self._drop(signature_of(us, them, kings), error)
            return None
        if code <= 0:
            return None if code < 0 else (0, -1)
        distance = code_distance(code)
        return 1 if code & 1 else -1, -1 if distance is None else distance

    def probe(self, position: Position) -> DatabaseValue | None:
        """The value of ``position`` for the side to move, ``None`` when no table holds it
        (too many pieces, or a side without pieces: the game is over)."""
        if position.white_to_move:
            code = self.white_code(position.white, position.black, position.kings)
        else:
            code = self.black_code(position.white, position.black, position.kings)
        return None if code < 0 else DatabaseValue.from_code(code)

    def close(self) -> None:
        for _, table in self._open.values():
            table.close()
        self._open.clear()
        self._loaded.clear()


def _complete_up_to(signatures: set[Signature]) -> int:
    """The largest N such that every table with at most N pieces is in ``signatures``
    (0 when even the 2-piece tables are incomplete)."""
    pieces = 1
    while pieces < 24 and all(signature in signatures for signature in all_signatures(pieces + 1)
              if sum(signature) == pieces + 1):
        pieces += 1
    return pieces if pieces >= 2 else 0
