"""Table files: values coded one byte (or two bits) a position, in zlib blocks with an offset index.

A *code* is a position's value for the side to move, one byte:

- ``0`` draw; ``1`` win and ``2`` loss, with no distance;
- ``2d + 1`` (odd, from 3): win, ``d >= 1`` plies to the next capture or man move
  or the end of the game; ``2d + 4`` (even, from 4): loss, ``d >= 0`` plies.

So a code is a win when odd, a loss when even and non-zero. A file (one table, see
:mod:`pedina.egdb.slices`) is, all integers little-endian:

- a 60-byte header (:data:`_HEADER`): magic ``PEDINAEG``, format version, the
  signature (4 bytes), bits per position (8: codes with distances; 2: codes 0, 1
  and 2 packed four to a byte, first position in the low bits), the number of
  positions, positions per block, number of blocks, then the wins, losses and
  draws of the table (holes not counted);
- ``blocks + 1`` offsets (8 bytes each) from the start of the file: block ``b``
  is the bytes from offset ``b`` to offset ``b + 1``;
- the blocks, each :data:`BLOCK_BYTES` bytes of packed codes (the last may be
  shorter) compressed by zlib. Holes (indices that are no position) hold the
  table's most common code, which compresses best; nothing reads them.

A probe reads one block (memory-mapped, so the file is never read whole) and
keeps the last few it unpacked.
"""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections import Counter
from collections.abc import Iterable

from pedina.egdb.slices import Signature

MAGIC = b"PEDINAEG"
FORMAT_VERSION = 1
_HEADER = struct.Struct("<8sH4BB5xQIIQQQ")
#: Packed bytes per block (before compression).
BLOCK_BYTES = 4096
#: Unpacked blocks kept per open table.
_CACHED_BLOCKS = 64
#: The largest distance a code holds (a win's; a loss's is 125).
MAX_DISTANCE = 127

WIN_CODE = 1
LOSS_CODE = 2
#: Byte -> 1 win, 2 loss, 0 draw: ``codes.translate(RESULT_OF_CODE)`` gives results only.
RESULT_OF_CODE = bytes(0 if code == 0 else WIN_CODE if code & 1 else LOSS_CODE for code in range(256))
#: Codes :func:`filled_holes` fills at a time.
_FILL_CHUNK = 1 << 22
#: Validity byte (1 a position, 0 a hole) -> a mask byte keeping the code.
_KEEP = bytes([0, 255]) + bytes(254)


class TableFileError(ValueError):
    """A table file is missing, cut short, corrupt, or of another format version."""


def win_code(distance: int) -> int:
    """The code of a win ``distance`` plies (1..127) from the next capture, man move or end."""
    return 2 * distance + 1


def loss_code(distance: int) -> int:
    """The code of a loss ``distance`` plies (0..125) from the next capture, man move or end."""
    return 2 * distance + 4


def code_distance(code: int) -> int | None:
    """The distance a code holds, ``None`` for a draw or a code without one."""
    if code <= LOSS_CODE:
        return None
    return (code - 1) // 2 if code & 1 else (code - 4) // 2


def result_counts(codes: bytes | bytearray, holes: int) -> tuple[int, int, int]:
    """(wins, losses, draws) of a table's codes, its ``holes`` (coded 0) left out."""
    results = codes.translate(RESULT_OF_CODE)
    wins = results.count(WIN_CODE)
    losses = results.count(LOSS_CODE)
    return wins, losses, len(codes) - wins - losses - holes


def filled_holes(codes: bytes | bytearray, validity: bytes | bytearray) -> bytearray:
    """``codes`` with every hole (0 in ``validity``) set to the most common code of the
    positions: holes are never read, and runs of one code compress best."""
    fill = Counter(codes).most_common(1)[0][0]
    filled = bytearray(len(codes))
    # A chunk at a time: the big-int arithmetic takes several times its operands' memory,
    # which for a whole 6-piece table was a gigabyte more at the job's peak.
    for start in range(0, len(codes), _FILL_CHUNK):
        chunk = codes[start:start + _FILL_CHUNK]
        size = len(chunk)
        keep = int.from_bytes(validity[start:start + size].translate(_KEEP), "little")
        value = int.from_bytes(chunk, "little") & keep | int.from_bytes(bytes([fill]) * size, "little") & ~keep
        filled[start:start + size] = value.to_bytes(size, "little")
    return filled


def _pack(codes: bytes | bytearray) -> bytes:
    """Two-bit codes (0, 1, 2) packed four a byte, first in the low bits."""
    padded = bytes(codes) + bytes(-len(codes) % 4)
    length = len(padded) // 4
    value = 0
    for lane in range(4):
        value |= int.from_bytes(padded[lane::4], "little") << (2 * lane)
    return value.to_bytes(length, "little")


def _unpack(packed: bytes, count: int) -> bytes:
    """The first ``count`` codes of :func:`_pack`'s bytes."""
    length = len(packed)
    value = int.from_bytes(packed, "little")
    mask = int.from_bytes(b"\x03" * length, "little")
    codes = bytearray(4 * length)
    for lane in range(4):
        codes[lane::4] = ((value >> (2 * lane)) & mask).to_bytes(length, "little")
    return bytes(codes[:count])


def write_table(path: str, signature: Signature, codes: bytes | bytearray, distances: bool,
                counts: tuple[int, int, int]) -> int:
    """Write a table file atomically (a temporary file renamed at the end); its size in bytes.

    ``distances`` keeps the codes as they are; without it they must be 0, 1 or 2
    and are packed two bits each.
    """
    bits = 8 if distances else 2
    per_block = BLOCK_BYTES * 8 // bits
    blocks = []
    for start in range(0, len(codes), per_block):
        chunk = codes[start:start + per_block]
        blocks.append(zlib.compress(bytes(chunk) if distances else _pack(chunk), 9))
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, *signature, bits, len(codes), per_block, len(blocks), *counts)
    offsets = []
    offset = _HEADER.size + 8 * (len(blocks) + 1)
    for block in blocks:
        offsets.append(offset)
        offset += len(block)
    offsets.append(offset)
    write_whole(path, [header, struct.pack(f"<{len(offsets)}Q", *offsets), *blocks])
    return offset


def write_whole(path: str, chunks: Iterable[bytes]) -> None:
    """Write ``chunks`` to ``path`` whole or not at all: into ``path + ".part"``, renamed to
    ``path`` once complete, so an interrupted write never leaves a table that looks built."""
    temporary = path + ".part"
    with open(temporary, "wb") as handle:
        for chunk in chunks:
            handle.write(chunk)
    os.replace(temporary, path)


class TableFile:
    """One table file, open for random access (see the module docstring for the format).

    Raises :class:`TableFileError` when the file cannot be read or is not a
    complete table file of this format version.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < _HEADER.size:
                    raise TableFileError(f"{path}: not a table file (only {size} bytes)")
                self._data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as error:
            raise TableFileError(f"{path}: {error.strerror or error}") from None
        (magic, version, men, kings, other_men, other_kings, bits, positions, per_block, blocks,
         wins, losses, draws) = _HEADER.unpack_from(self._data, 0)
        if magic != MAGIC:
            raise TableFileError(f"{path}: not a Pedina table file")
        if version != FORMAT_VERSION:
            raise TableFileError(f"{path}: format version {version}, this Pedina reads {FORMAT_VERSION}")
        if bits not in (2, 8):
            raise TableFileError(f"{path}: {bits} bits per position, expected 2 or 8")
        if per_block != BLOCK_BYTES * 8 // bits or blocks != -(-positions // per_block):
            raise TableFileError(f"{path}: {blocks} blocks of {per_block} positions cannot hold its {positions}")
        end = _HEADER.size + 8 * (blocks + 1)
        if size < end:
            raise TableFileError(f"{path}: cut short (the block index ends at byte {end}, the file at {size})")
        offsets: tuple[int, ...] = struct.unpack_from(f"<{blocks + 1}Q", self._data, _HEADER.size)
        if offsets[-1] != size:
            raise TableFileError(f"{path}: {size} bytes, the block index says {offsets[-1]}")
        self.signature: Signature = (men, kings, other_men, other_kings)
        self.size: int = positions
        #: Whether codes hold distances (8 bits a position) or only results (2 bits).
        self.distances = bits == 8
        #: (wins, losses, draws) as counted when the table was built.
        self.counts: tuple[int, int, int] = (wins, losses, draws)
        self.compressed_size = size
        self._per_block: int = per_block
        self._offsets = offsets
        self._cache: dict[int, bytes] = {}

    def close(self) -> None:
        self._data.close()

    def _unpacked(self, number: int) -> bytes:
        """Block ``number`` decompressed and unpacked to one code a byte."""
        count = min(self._per_block, self.size - number * self._per_block)
        packed = count if self.distances else -(-count // 4)
        inflater = zlib.decompressobj()
        try:
            # At most one byte more than the block should hold: a corrupt block cannot inflate without bound.
            raw = inflater.decompress(self._data[self._offsets[number]:self._offsets[number + 1]], packed + 1)
        except zlib.error as error:
            raise TableFileError(f"{self.path}: block {number} is corrupt ({error})") from None
        if len(raw) != packed or not inflater.eof:
            raise TableFileError(f"{self.path}: block {number} is corrupt (not {packed} bytes with their checksum)")
        return raw if self.distances else _unpack(raw, count)

    def code(self, index: int) -> int:
        """The code of the position at ``index``."""
        number, offset = divmod(index, self._per_block)
        block = self._cache.get(number)
        if block is None:
            block = self._unpacked(number)
            if len(self._cache) >= _CACHED_BLOCKS:
                del self._cache[next(iter(self._cache))]
            self._cache[number] = block
        return block[offset]

    def codes(self) -> bytes:
        """Every code of the table, one a byte (decompresses the whole file)."""
        return b"".join([self._unpacked(number) for number in range(len(self._offsets) - 1)])
