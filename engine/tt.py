"""Transposition table: a fixed-size list of entries indexed by a hash of the position.

A position's identity is one exact int (:func:`identity`), so an entry is
verified against it and never gives a false hit. Entries are plain tuples
``(identity, depth, flag, score, move, forced)``, read whole by unpacking
(``identity``: :func:`identity`; ``flag``: the bound, EXACT, LOWER or UPPER;
``score``: :func:`pedina.scores.to_table`; ``move``: the best move, ``None`` when
none was best; ``forced``: the position has a single legal move, which the
search does not count as a ply of depth) in a list preallocated to the size
asked for in MB; a new entry always replaces the old one in its slot (cheaper
in Python than any bucket scheme).

A new game empties the table. Freeing every entry takes 50 to 90 ms at 64 MB
(measured after a game at 0.1 s a move, more on a loaded machine), and a
match sends ``new-game`` just before ``go``: done then and there, it came out
of the first move's time, which the engine's own clock cannot see (it starts
at the ``go``), and could take a 0.1 s move past a match's margin. So the
table has two lists: :meth:`TranspositionTable.clear` puts the clean spare in
the table's place at once, and a sweeper thread empties the old one in small
chunks, each giving the interpreter lock back, while the search goes on.
Tagging identities with a game number instead (old entries kept, never to
match) was tried and dropped: new games took 0.1 ms, but with the table always
full of the earlier games' entries each young collection took about 2.5 times
as long (2.2 ms against 0.9 ms), and at 0.1 s a move the engine lost 7 games of
115 on time.

Both lists stay the same two objects for the table's life: clearing and
resizing change them in place. An engine process can then move them out of
the cycle collector's reach once (:meth:`pedina.session.Session.settle`), as a
full collection would otherwise visit every slot, a cache miss each: 10 to 25
ms a collection at 64 to 256 MB, long enough to take a move past its hard limit.

Why a list and not a dict keyed by identity: a dict lookup is faster (about
0.03 us against 0.15 us for the slot hash), but a dict has no cheap way to stay
within a memory limit (no eviction short of rebuilding it, which stalls the
search for tens of ms at large sizes). Measured footprint of the list: a 16 MB
table filled by a depth-11 search grew the process by 14.7 MB (237 bytes per
entry), so :data:`ENTRY_BYTES` keeps the size honest.
"""

from __future__ import annotations

import threading
import time
from typing import Final

from pedina.movegen import RawMove

EXACT: Final = 0
LOWER: Final = 1   # score is a lower bound (fail high)
UPPER: Final = 2   # score is an upper bound (fail low)

#: Rough bytes held per filled slot: the entry tuple, its identity int, a
#: score int, and a share of the move tuples kept alive, plus its slot in each list.
ENTRY_BYTES: Final = 248
#: Slots the sweeper empties between two hand-overs of the interpreter lock (a fraction of a
#: millisecond's work: a search waiting for the lock is not held up for longer). The table
#: sizes are powers of two of at least 1024 slots, so chunks divide them.
SWEEP_CHUNK: Final = 1024

Entry = tuple[int, int, int, int, "RawMove | None", bool]


def identity(us: int, them: int, kings: int, white: bool) -> int:
    """Exact identity of a position (pieces of the side to move first)."""
    return us | them << 36 | kings << 72 | (1 << 108 if white else 0)


def slot_count(mb: float) -> int:
    """Largest power of two of entries fitting in ``mb`` megabytes (at least 1024)."""
    wanted = max(1024, int(mb * 1024 * 1024 / ENTRY_BYTES))
    return 1 << (wanted.bit_length() - 1)


class TranspositionTable:
    """Fixed-size table; ``table[index(identity)]`` holds an :data:`Entry` or ``None``."""

    def __init__(self, mb: float = 64) -> None:
        self.mb = mb
        self.size = slot_count(mb)
        self.mask = self.size - 1
        self.table: list[Entry | None] = [None] * self.size
        self._spare: list[Entry | None] = [None] * self.size  # empty, or being emptied by the sweeper
        self._sweeper: threading.Thread | None = None

    @property
    def lists(self) -> tuple[list[Entry | None], list[Entry | None]]:
        """The table's two lists, the one in use first: the same two objects for life."""
        return self.table, self._spare

    def resize(self, mb: float) -> None:
        """Change the size (clears the table). Raises :class:`MemoryError` when the memory for
        the new size cannot be had: the table then stays as it was, size and entries."""
        self.wait_swept()
        size = slot_count(mb)
        fresh: list[Entry | None] = [None] * size
        old_size = len(self.table)
        self.table[:] = fresh
        try:
            self._spare[:] = fresh
        except MemoryError:
            self.table[:] = [None] * old_size  # a smaller list than the one that was just made
            raise
        self.mb = mb
        self.size = size
        self.mask = size - 1

    def clear(self) -> None:
        """Empty every slot (the size stays): at once, the old entries freed on a thread of
        their own (see the module's docstring)."""
        self.wait_swept()  # two clears in a row: the second waits for the first's sweep
        used = self.table
        self.table = self._spare
        self._spare = used
        self._sweeper = threading.Thread(target=_sweep, args=(used,), name="pedina-tt-sweeper", daemon=True)
        self._sweeper.start()

    def wait_swept(self) -> None:
        """Return once the list a :meth:`clear` put aside is empty."""
        sweeper = self._sweeper
        if sweeper is not None:
            sweeper.join()
            self._sweeper = None

    def index(self, ident: int) -> int:
        """The slot of a position identity (the search inlines this in its hot loop)."""
        # The hash of a 1-tuple mixes every bit of the identity into the low ones
        # (an int's own hash is the int modulo 2**61 - 1, which leaves most of the
        # board out of the low bits), and costs half what arithmetic mixing does.
        return hash((ident,)) & self.mask

    def probe(self, ident: int) -> Entry | None:
        """The entry stored for exactly this identity, or ``None``."""
        entry = self.table[self.index(ident)]
        if entry is None:
            return None
        stored_ident, _, _, _, _, _ = entry
        return entry if stored_ident == ident else None


def _sweep(slots: list[Entry | None]) -> None:
    """Empty ``slots`` a chunk at a time, handing the interpreter lock over after each:
    compiled, this loop would otherwise keep it to the end."""
    empty: list[Entry | None] = [None] * SWEEP_CHUNK
    for start in range(0, len(slots), SWEEP_CHUNK):
        slots[start:start + SWEEP_CHUNK] = empty
        time.sleep(0)
