#!/usr/bin/env python3
"""``pedina bench`` of two installs side by side: runs alternate, so host noise hits both.

    python scripts/compare_bench.py /tmp/pure/bin/pedina /tmp/compiled/bin/pedina --runs 5
    python scripts/compare_bench.py pedina pedina --first-args "--egdb DIR5" --second-args "--egdb DIR6"

Each run of each command is ``pedina bench`` with the same depth and hash, and
each one's own further options; the table shows nodes per second (wall clock and
CPU), the signatures (which must agree when the two search the same tree; the
exit status is 1 when they do not), and the median ratio second/first: of
CPU nodes/s by default, of wall-clock nodes/s with ``--wall`` (for a change in how
long the search waits, which a move's time pays for but the CPU clock does not see).
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys

_TOTAL = re.compile(r"total nodes ([\d,]+)\s+time ([\d.]+) s\s+([\d,]+) nodes/s\s+\(cpu ([\d.]+) s, ([\d,]+) nodes/s\)")


def bench_once(command: str, depth: int, hash_mb: int, extra: list[str]) -> tuple[str, int, int, int]:
    """(flavour line, signature, wall nodes/s, cpu nodes/s) of one ``bench`` run of ``command``
    with the options ``extra``."""
    done = subprocess.run([command, "bench", "--depth", str(depth), "--hash", str(hash_mb), *extra],
                          capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    found = _TOTAL.search(done.stdout)
    if found is None:
        raise SystemExit(f"{command}: no total line in its bench output:\n{done.stdout[-500:]}")
    signature = int(found.group(1).replace(",", ""))
    return lines[0], signature, int(found.group(3).replace(",", "")), int(found.group(5).replace(",", ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", help="the reference pedina command")
    parser.add_argument("second", help="the pedina command compared to it")
    parser.add_argument("--runs", type=int, default=5, help="runs of each (default 5)")
    parser.add_argument("--depth", type=int, default=8, help="bench depth (default 8)")
    parser.add_argument("--hash", type=int, default=64, help="hash MB (default 64)")
    parser.add_argument("--wall", action="store_true", help="ratio of wall-clock nodes/s, not CPU")
    parser.add_argument("--first-args", default="", help="more options of the first's bench (e.g. \"--egdb DIR\")")
    parser.add_argument("--second-args", default="", help="more options of the second's bench")
    args = parser.parse_args(argv)

    print(f"{'run':>3}  {'first nodes/s':>13} {'cpu':>10}  {'second nodes/s':>14} {'cpu':>10}  {'ratio':>6}")
    ratios: list[float] = []
    signatures: set[tuple[int, int]] = set()
    headers: tuple[str, str] = ("", "")
    for run in range(1, args.runs + 1):
        first = bench_once(args.first, args.depth, args.hash, shlex.split(args.first_args))
        second = bench_once(args.second, args.depth, args.hash, shlex.split(args.second_args))
        headers = (first[0], second[0])
        signatures.add((first[1], second[1]))
        ratio = second[2] / first[2] if args.wall else second[3] / first[3]
        ratios.append(ratio)
        print(f"{run:>3}  {first[2]:>13,} {first[3]:>10,}  {second[2]:>14,} {second[3]:>10,}  {ratio:>6.2f}",
              flush=True)
    print(f"first:  {headers[0]}\nsecond: {headers[1]}")
    print(f"signatures (first, second): {sorted(signatures)}")
    print(f"median ratio second/first ({'wall' if args.wall else 'cpu'} nodes/s): {statistics.median(ratios):.2f}")
    return 0 if all(a == b for a, b in signatures) else 1


if __name__ == "__main__":
    sys.exit(main())
