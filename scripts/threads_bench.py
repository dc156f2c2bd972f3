"""Time to a depth with one search process and with helpers: ``python scripts/threads_bench.py``.

Each run makes a fresh searcher with the given ``threads`` (helpers started and waited for
before the clock), searches one position to the depth and prints its time, nodes and
nodes per second; the runs alternate between the thread counts so that a machine's changing
load falls on both. The summary gives each count's median time and nodes per second, and
their ratios to one thread.
"""

from __future__ import annotations

import statistics
import time

import click

from pedina import Board, Limits, Searcher, build_flavour
from pedina.settings import EngineSettings


@click.command()
@click.option("--fen", default="W:W21-32:B1-12", show_default=True, help="The position searched.")
@click.option("--depth", "-d", default=12, show_default=True, help="The depth searched to.")
@click.option("--runs", default=5, show_default=True, help="Runs of each thread count.")
@click.option("--threads", "counts", default="1,2", show_default=True, help="Thread counts compared.")
@click.option("--hash", "hash_mb", default=64, show_default=True, help="Hash table size in MB.")
def main(fen: str, depth: int, runs: int, counts: str, hash_mb: int) -> None:
    """Compare the time to ``depth`` and the nodes per second of several thread counts."""
    threads = [int(text) for text in counts.split(",")]
    times: dict[int, list[float]] = {count: [] for count in threads}
    rates: dict[int, list[float]] = {count: [] for count in threads}
    click.echo(f"{fen}, depth {depth}, hash {hash_mb} MB, {build_flavour()} flavour")
    for run in range(1, runs + 1):
        for count in threads:
            searcher = Searcher(EngineSettings(threads=count, hash_mb=hash_mb, egdb_path="", book=False))
            searcher.prepare()
            started = time.perf_counter()
            result = searcher.search(Board(fen), Limits(depth=depth))
            elapsed = time.perf_counter() - started
            times[count].append(elapsed)
            rates[count].append(result.nodes / elapsed)
            click.echo(f"run {run} threads {count}: {elapsed:.3f} s  nodes {result.nodes:,}  "
                       f"{result.nodes / elapsed:,.0f} nodes/s  best {result.best}")
    base_time = statistics.median(times[threads[0]])
    base_rate = statistics.median(rates[threads[0]])
    for count in threads:
        median_time = statistics.median(times[count])
        median_rate = statistics.median(rates[count])
        click.echo(f"threads {count}: median {median_time:.3f} s to depth {depth} "
                   f"({base_time / median_time:.2f}x faster), "
                   f"{median_rate:,.0f} nodes/s ({median_rate / base_rate:.2f}x)")


if __name__ == "__main__":
    main()
