"""Transposition table: fixed-width entries packed into one flat buffer of 64-bit words.

Layout. The table is anonymous memory (an ``mmap``; a bytearray where pages cannot be asked
for at once) seen as signed 64-bit words (a ``memoryview`` cast to ``'q'``), allocated and
zeroed whole when the table is made: its memory is taken up front, so a table under a memory
limit either cannot be made (:class:`MemoryError`, the old one stays) or never needs another
byte, and the cycle collector never sees an entry. A table made ``shared`` lives in memory
other processes can map (by its :attr:`TranspositionTable.handle`): the helper processes of a search
on several cores (:mod:`pedina.smp`) read and write the same words. Of the buffer types
mypyc can index, a memoryview was the fastest: 460 to 520 ns a read and write against 540 to
820 for an ``array.array`` of ``'q'``, in a compiled loop over 2**12 and 2**22 words on a
loaded machine (a list of ints, in the same range, is no flat buffer). An entry is two words:

- the key word, stored xored with the data word, so that a reader on another process that
  sees half of a write (one entry's key word with another's data word) finds a wrong check,
  unless the two data words agree in the check's bits (the same depth, bound and forced
  bit, scores that differ only in their low 6 bits): such a mixed entry is a false hit (below)::

      check (20 bits) << 42 | age (6 bits) << 36 | captured squares (36 bits)

- the data word::

      from | to squares (36 bits) | score (16 bits, offset) << 36 | depth (7 bits) << 52
      | bound (2 bits) << 59 | forced (1 bit) << 61

Both stay below 2**62: compiled, mypyc keeps such ints unboxed. ``check`` is the top of
the position's 62-bit key (:func:`position_key`), whose low bits choose the bucket, so 20 + the
bucket bits of the key are verified: a different position read as this one (a false
hit, about one probe in 2**19 of those that miss) can only cost a wrong cut, or a node
searched a ply deeper or shallower than it should be (its forced bit). The move
is stored as the squares it joins and the pieces it takes; the search gives it back
only as one of the position's legal moves (see :mod:`pedina.search`), so a false hit
never plays an illegal one. A data word of 0 is an empty slot (the score's offset makes
every stored one non-zero).

Replacement: a bucket is two entries (32 bytes, in one cache line). The first keeps the
deeper search: a new entry takes it when it is for the same position, at least as
deep, or the entry there is from an earlier search (:meth:`TranspositionTable.new_search`
ages the table); otherwise the new entry goes into the second, which is always replaced.

A new game zeroes the buffer (one ``memset``): 3 to 4.5 ms of CPU at 64 MB, compiled, on a
loaded machine. The earlier table of Python tuples (about 248 bytes an entry against
16 here) needed a sweeper thread to free its entries and a frozen collector to keep
collections short; neither has anything left to do.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import weakref
from multiprocessing import resource_tracker, shared_memory
from typing import Final

from pedina.movegen import RawMove

try:
    from mypy_extensions import i64
except ImportError:  # only the build needs mypy_extensions: when run, an i64 is an int (compiled,
    i64 = int  # type: ignore[misc]  # mypyc has already made it a machine word)

EXACT: Final = 0
LOWER: Final = 1   # score is a lower bound (fail high)
UPPER: Final = 2   # score is an upper bound (fail low)

#: Bytes an entry takes: two 64-bit words.
ENTRY_BYTES: Final = 16
#: Words a bucket takes (two entries, the depth-preferred one first), and its bytes.
BUCKET_WORDS: Final = 4
BUCKET_BYTES: Final = 2 * ENTRY_BYTES
#: A position's key: the low 62 bits of its hash (mypyc's unboxed range).
KEY_MASK: Final = (1 << 62) - 1
#: The key bits kept in an entry: the key's top 20.
CHECK_SHIFT: Final = 42
AGE_SHIFT: Final = 36
AGE_MASK: Final = 63
SQUARES_MASK: Final = (1 << 36) - 1
SCORE_SHIFT: Final = 36
SCORE_OFFSET: Final = 1 << 15   # scores stay within +/- WIN, 10,000 (scores.to_table): 16 bits
SCORE_MASK: Final = (1 << 16) - 1
DEPTH_SHIFT: Final = 52
DEPTH_MASK: Final = 127
BOUND_SHIFT: Final = 59
BOUND_MASK: Final = 3
FORCED_BIT: Final = 1 << 61


# The multiply-xorshift mix of position_key: odd multipliers with well-spread bits, below
# 2**63 so that they are i64 constants.
_MIX_US: Final = 0x4F1BBCDCBFA53E0B
_MIX_THEM: Final = 0x61595A1E93EA75A7
_MIX_KINGS: Final = 0x165667B19E3779F9
_MIX_WHITE: Final = 0x09F53ACBC5999F1
_MIX_FINAL: Final = 0x7FA8D7EBF6AAC667


def position_key(us: i64, them: i64, kings: i64, white: bool) -> int:
    """The table's 62-bit key of a position (pieces of the side to move first), which the
    search also compares to find repetitions: two positions share one with a chance of
    about 2**-62.

    Compiled, the products wrap around at 64 bits, in the pure flavour they are exact;
    every shift comes after a mask to 62 bits, so both give the same key. It is about
    ten times cheaper than hashing the position's 109-bit identity, which no machine word
    holds."""
    mixed: i64 = (us * _MIX_US ^ them * _MIX_THEM ^ kings * _MIX_KINGS) & KEY_MASK
    if white:
        mixed ^= _MIX_WHITE
    mixed ^= mixed >> 29
    mixed = mixed * _MIX_FINAL & KEY_MASK
    return mixed ^ mixed >> 32


def bucket_count(mb: float) -> int:
    """Largest power of two of buckets fitting in ``mb`` megabytes (at least 512)."""
    wanted = max(512, int(mb * 1024 * 1024 / BUCKET_BYTES))
    return 1 << (wanted.bit_length() - 1)


def stored_depth(data: int) -> int:
    """The depth of a data word."""
    return data >> DEPTH_SHIFT & DEPTH_MASK


def stored_bound(data: int) -> int:
    """The bound of a data word: EXACT, LOWER or UPPER."""
    return data >> BOUND_SHIFT & BOUND_MASK


def stored_score(data: int) -> int:
    """The score of a data word, as :func:`pedina.scores.to_table` gave it."""
    return (data >> SCORE_SHIFT & SCORE_MASK) - SCORE_OFFSET


def stored_ends(data: int) -> int:
    """The squares the stored move joins (from | to; one square for a ring capture; 0: no move)."""
    return data & SQUARES_MASK


def stored_forced(data: int) -> bool:
    """Whether the position has a single legal move (the search does not count it as a ply)."""
    return data & FORCED_BIT != 0


def is_move(move: RawMove, ends: int, taken: int) -> bool:
    """Whether ``move`` is the one stored as ``ends`` and ``taken`` (its path aside: two
    captures that differ only there lead to the same position)."""
    frm, to, captured, _, _ = move
    return frm | to == ends and captured == taken


#: Words after a shared table's buckets where each helper process keeps its node count and its
#: last finished iteration (two a process, :data:`MAX_PROCESSES` at most; see :mod:`pedina.smp`).
MAX_PROCESSES: Final = 64
COUNTER_BYTES: Final = 16 * MAX_PROCESSES


def _zeroed(size: int) -> bytearray | mmap.mmap:
    """``size`` zero bytes in memory of their own, every page taken now (MemoryError if not)."""
    populate = getattr(mmap, "MAP_POPULATE", 0)
    if not populate:
        return bytearray(size)
    try:
        # The kernel hands over zeroed pages at once: 28 ms at 64 MB where a bytearray,
        # page fault by page fault, took 52 ms (a cost every bench run and engine pays).
        return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate)
    except OSError as error:
        raise MemoryError(f"{size} bytes of hash table: {error}") from None


def _shared_zeroed(size: int) -> tuple[mmap.mmap, int | str]:
    """``size`` zero bytes other processes can map: (the mapping, its handle there, which lives
    as long as the mapping). MemoryError if the memory cannot be had."""
    try:
        if hasattr(os, "memfd_create"):
            # Linux: a memory file of its own, not in /dev/shm (which containers often cap at
            # 64 MB); its pages are reserved now, so a full machine refuses here instead of
            # killing the engine with SIGBUS at a write, later.
            fd = os.memfd_create("pedina-hash", os.MFD_CLOEXEC)
            try:
                os.posix_fallocate(fd, 0, size)
                raw = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
            except OSError:
                os.close(fd)
                raise
            weakref.finalize(raw, os.close, fd)
            return raw, fd
        # Elsewhere (macOS): POSIX shared memory by name, unlinked when this process lets it go.
        named = shared_memory.SharedMemory(create=True, size=size)
        raw = _mapping_of(named)
        weakref.finalize(raw, _unlink_shared_memory, named._name)  # type: ignore[attr-defined]
        return raw, named.name
    except OSError as error:
        raise MemoryError(f"{size} bytes of shared hash table: {error}") from None


def _mapping_of(named: shared_memory.SharedMemory) -> mmap.mmap:
    """The mapping of ``named``, taken from it: the object, closed, keeps no descriptor (and
    would refuse to close, at its collection, a mapping the table's views hold)."""
    raw: mmap.mmap = named._mmap  # type: ignore[attr-defined]
    named._mmap = None  # type: ignore[attr-defined]
    named.close()
    return raw


def _unlink_shared_memory(name: str) -> None:
    """What ``SharedMemory.unlink`` does, by name: a finalizer must not hold the object."""
    shared_memory._posixshmem.shm_unlink(name)  # type: ignore[attr-defined]
    resource_tracker.unregister(name, "shared_memory")


class TranspositionTable:
    """Fixed-size table of two-entry buckets in :attr:`words` (see the module's docstring).

    :meth:`probe` and :meth:`store` take a :func:`position_key`; ``entries`` is the number of
    positions the table holds when full. A ``shared`` table lives in memory other processes
    can map: :attr:`handle` names it there (a file descriptor on Linux, else a shared memory
    name) and ``TranspositionTable(mb, handle=...)`` in that process maps it (taking over the
    descriptor), the same size; :attr:`counters` are its words for the processes' node counts
    and finished iterations. A table of one process has no counters.
    """

    def __init__(self, mb: float = 64, shared: bool = False, handle: int | str | None = None) -> None:
        self.mb = mb
        self.age = 0
        self.shared = shared or handle is not None
        self.handle: int | str = -1
        self._raw: bytearray | mmap.mmap = bytearray(0)
        self.words = memoryview(self._raw).cast("q")
        self.counters = memoryview(self._raw).cast("q")
        self.mask = 0
        self.entries = 0
        if handle is None:
            self._take(mb)
        else:
            self._attach(handle, mb)

    def _take(self, mb: float) -> None:
        """Allocate a zeroed buffer of ``mb`` megabytes, every page of it, and use it;
        :class:`MemoryError` leaves everything as it was."""
        buckets = bucket_count(mb)
        if self.shared:
            raw, handle = _shared_zeroed(buckets * BUCKET_BYTES + COUNTER_BYTES)
            self._use(raw, buckets, mb, handle)
        else:
            self._use(_zeroed(buckets * BUCKET_BYTES), buckets, mb, -1)

    def _attach(self, handle: int | str, mb: float) -> None:
        buckets = bucket_count(mb)
        size = buckets * BUCKET_BYTES + COUNTER_BYTES
        if isinstance(handle, int):
            try:
                raw = mmap.mmap(handle, size, flags=mmap.MAP_SHARED)
            finally:
                os.close(handle)  # the mapping holds the memory
            self._use(raw, buckets, mb, -1)
            return
        named = shared_memory.SharedMemory(name=handle)
        # The maker unlinks it; this process's resource tracker must not (before Python 3.13
        # every process that opens one by name takes it for its own).
        resource_tracker.unregister(named._name, "shared_memory")  # type: ignore[attr-defined]
        self._use(_mapping_of(named), buckets, mb, -1)

    def _use(self, raw: bytearray | mmap.mmap, buckets: int, mb: float, handle: int | str) -> None:
        size = buckets * BUCKET_BYTES
        self._raw = raw
        self.handle = handle
        view = memoryview(raw)
        self.words = view[:size].cast("q")
        self.counters = view[size:size + COUNTER_BYTES].cast("q") if self.shared else view[:0].cast("q")
        self.mb = mb
        self.mask = buckets - 1
        self.entries = 2 * buckets

    def clear(self) -> None:
        """Empty every entry (the size stays)."""
        size = len(self._raw)
        # One memset: 2.6 ms at 64 MB where zeroing it from Python, a megabyte slice at a time,
        # took 6.5 ms (it copies zeros in, reading as much as it writes).
        ctypes.memset((ctypes.c_char * size).from_buffer(self._raw), 0, size)
        self.age = 0

    def new_search(self) -> None:
        """Age the table: the deep entries of earlier searches give way to the next one's."""
        self.age = (self.age + 1) & AGE_MASK

    def probe(self, key: int) -> tuple[int, int]:
        """(data word, captured squares of its move) of the entry stored for ``key``; (0, 0)
        when there is none."""
        words = self.words
        base = (key & self.mask) * BUCKET_WORDS
        check = key >> CHECK_SHIFT
        # An empty slot's key word is not read: each read of the buffer costs a new int.
        data = words[base + 1]
        if data:
            stored_key = words[base] ^ data
            if stored_key >> CHECK_SHIFT == check:
                return data, stored_key & SQUARES_MASK
        data = words[base + 3]
        if data:
            stored_key = words[base + 2] ^ data
            if stored_key >> CHECK_SHIFT == check:
                return data, stored_key & SQUARES_MASK
        return 0, 0

    def store(self, key: int, depth: int, bound: int, score: int, move: RawMove | None, forced: bool) -> None:
        """Keep a search's result for ``key`` (``score`` as :func:`pedina.scores.to_table`
        gives it), in the bucket's first entry when it is worth keeping there, else in the second."""
        ends = 0
        taken = 0
        if move is not None:
            frm, to, taken, _, _ = move
            ends = frm | to
        data = (ends | (score + SCORE_OFFSET) << SCORE_SHIFT | min(depth, DEPTH_MASK) << DEPTH_SHIFT
                | bound << BOUND_SHIFT | (FORCED_BIT if forced else 0))
        check = key >> CHECK_SHIFT
        age = self.age
        stored_key = check << CHECK_SHIFT | age << AGE_SHIFT | taken

        words = self.words
        base = (key & self.mask) * BUCKET_WORDS
        kept_data = words[base + 1]
        if depth < stored_depth(kept_data):  # never so for an empty slot, whose key is not read
            kept_key = words[base] ^ kept_data
            if kept_key >> CHECK_SHIFT != check and kept_key >> AGE_SHIFT & AGE_MASK == age:
                base += 2
        words[base] = stored_key ^ data
        words[base + 1] = data
