"""The compiled and the plain-Python flavours search the same tree; each says which it is."""

from __future__ import annotations

import os
import random
import shutil
import subprocess

import pedina
from pedina import Board, EngineSettings, Limits, Searcher
from pedina.protocol.bench_search import BENCH_POSITIONS
from pedina.squares import popcount

PEDINA = shutil.which("pedina")
#: Nodes over the bench suite at depth 5 with 16 MB, each position from a fresh searcher. Both
#: flavours must count exactly this; it moves only with a change of the search or the evaluation.
BENCH_NODES_AT_DEPTH_5 = 20687


def test_the_bench_suite_at_depth_5_searches_the_known_tree() -> None:
    total = 0
    for _, fen in BENCH_POSITIONS:
        total += Searcher(EngineSettings(hash_mb=16, egdb_path="")).search(Board(fen), Limits(depth=5)).nodes
    assert total == BENCH_NODES_AT_DEPTH_5, pedina.build_flavour()


def test_version_and_bench_name_the_flavour() -> None:
    flavour = pedina.build_flavour()
    assert flavour in ("compiled", "pure")
    if os.environ.get("PEDINA_PURE") == "1":
        assert flavour == "pure"
    assert PEDINA is not None
    shown = subprocess.run([PEDINA, "--version"], capture_output=True, text=True, check=True).stdout
    assert f"({flavour} flavour)" in shown
    bench = subprocess.run([PEDINA, "bench", "--depth", "1"], capture_output=True, text=True, check=True).stdout
    assert f"{flavour} flavour" in bench.splitlines()[0]


def test_popcount_counts_every_bit_of_a_board() -> None:
    # The compiled flavour counts with shifts and adds, the plain one with int.bit_count.
    rng = random.Random(7)
    samples = [0, 1, (1 << 36) - 1, (1 << 40) - 1] + [rng.getrandbits(36) for _ in range(2000)]
    for bits in samples:
        assert popcount(bits) == bin(bits).count("1"), hex(bits)

