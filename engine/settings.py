"""Engine settings, declared once: what an engine's user can set, with its bounds and default.

:class:`EngineSettings` is a frozen value: a :class:`~pedina.session.Session` and a
:class:`~pedina.search.Searcher` are built from one and take a changed copy
(:func:`dataclasses.replace`) later. :data:`SETTINGS` describes each field once, for
every adapter to derive its own form from: the Hub engine's ``param`` lines and
``set-param`` names, the command line's options (one shared decorator), the GUI's
parameters for an engine. Adding a setting is a field here and a row in
:data:`SETTINGS`, and the code that uses it.

The endgame tables are named by their folder (``egdb_path``): the shipped tables'
folder by default, the empty string for none. Opening them is
:func:`pedina.egdb.open_endgame_database`' work, not this value's, which does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Final

from pedina.egdb.probe import shipped_directory
from pedina.tt import MAX_PROCESSES

#: The most ``book_variety`` there is (hundredths of a man).
MAX_VARIETY: Final = 200


@dataclass(frozen=True)
class Setting:
    """One setting: the :class:`EngineSettings` field it is, the Hub parameter and command-line
    option that set it, and for a number its bounds. ``group`` says what it is about, for a
    command to leave out what it has no use for: ``search`` (every search), ``lines`` (the
    lines reported), ``play`` (how the move played is chosen) or ``book``."""

    field: str
    group: str
    hub_name: str
    option: str
    help: str
    low: int = 0
    high: int = 0
    #: For a text setting: what its value names on the command line (``DIR``, ``FILE``), how its
    #: default reads in the help, and what its empty value means when that is not the default
    #: (the help of a ``--no-`` option).
    metavar: str = ""
    default_help: str = ""
    none_help: str = ""


#: Every setting, in the order the Hub engine announces them.
SETTINGS: Final = (
    Setting("hash_mb", "search", "tt-size", "--hash", "Hash table size in MB.", 1, 4096),
    Setting("multipv", "lines", "multipv", "--multipv", "Lines reported: the best moves, each with its line.", 1, 64),
    Setting("move_overhead_ms", "search", "move-overhead", "--move-overhead",
            "Milliseconds kept in hand on every timed move, for delays the engine's clock cannot see "
            "(a slow GUI, a network).", 0, 5000),
    Setting("skill", "play", "skill", "--skill", "Playing strength, 0 (weakest) to 20 (full strength).", 0, 20),
    Setting("seed", "play", "seed", "--seed", "Seed of the weakened engine's and the book's draws.", 0, 2**31 - 1),
    Setting("egdb_path", "search", "egdb-path", "--egdb", "Probe the endgame tables in this folder (see `pedina egdb`).",
            metavar="DIR", default_help="the tables shipped with Pedina", none_help="Probe no endgame tables."),
    Setting("book", "book", "book", "--book", "Use the opening book: play its moves (an analysis marks them)."),
    Setting("book_variety", "play", "book-variety", "--book-variety",
            "Play any book move within this many hundredths of a man of the best one.", 0, MAX_VARIETY),
    Setting("book_path", "book", "book-file", "--book-file", "Play from the opening book in this file (see `pedina book`).",
            metavar="FILE", default_help="the book shipped with Pedina"),
    Setting("threads", "search", "threads", "--threads",
            "Processes searching, one a core: the main search and its helpers, which share its hash table.",
            1, MAX_PROCESSES),
)


@dataclass(frozen=True)
class EngineSettings:
    """What the engine's user sets (see :data:`SETTINGS` for each field's bounds).

    ``hash_mb``: the transposition table's size in MB. ``threads``: the processes that
    search, the main search and ``threads - 1`` helpers (:mod:`pedina.smp`). ``multipv``: the root moves
    reported, each with its line. ``move_overhead_ms``: taken off every move time and
    clock before the search sees them. ``skill``: 0 to 20, full strength at 20; a weaker
    engine caps its depth and draws its move among the near-best (see
    :class:`~pedina.search.Searcher`), seeded by ``seed``, which seeds the book's
    draws too. ``egdb_path``: the folder of endgame tables probed (empty: none).
    ``book``: answer from the opening book when it knows the position;
    ``book_variety``: draw among the book moves within that many hundredths of a man
    of the best (0: always the best); ``book_path``: the book's file (empty: the shipped
    book). Raises :class:`ValueError` naming the field
    when a value is out of its bounds or of the wrong type.
    """

    hash_mb: int = 64
    multipv: int = 1
    move_overhead_ms: int = 0
    skill: int = 20
    seed: int = 0
    egdb_path: str = shipped_directory()
    book: bool = True
    book_variety: int = 0
    book_path: str = ""
    threads: int = 1

    def __post_init__(self) -> None:
        for setting in SETTINGS:
            value = getattr(self, setting.field)
            kind = _FIELD_TYPES[setting.field]
            if type(value) is not kind:
                raise ValueError(f"{setting.field} must be {kind.__name__}, not {value!r}")
            if isinstance(value, int) and kind is int and not setting.low <= value <= setting.high:
                raise ValueError(f"{setting.field} must be between {setting.low} and {setting.high}, not {value}")


    def with_values(self, values: Mapping[str, object]) -> EngineSettings:
        """These settings with the fields named in ``values`` changed (checked as a new value is)."""
        return replace(self, **values)  # type: ignore[arg-type]  # __post_init__ checks every type


def setting(field: str) -> Setting:
    """The row of :data:`SETTINGS` for an :class:`EngineSettings` field."""
    for row in SETTINGS:
        if row.field == field:
            return row
    raise KeyError(field)


def value_type(field: str) -> type:
    """The type of an :class:`EngineSettings` field: ``int``, ``bool`` or ``str``."""
    return _FIELD_TYPES[field]


_FIELD_TYPES: Final[dict[str, type]] = {
    item.name: {"int": int, "bool": bool, "str": str}[str(item.type)] for item in fields(EngineSettings)
}

assert set(_FIELD_TYPES) == {row.field for row in SETTINGS}, "every field has its row in SETTINGS"

__all__ = ["EngineSettings", "MAX_VARIETY", "SETTINGS", "Setting", "setting", "value_type"]
