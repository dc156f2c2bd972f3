"""``pedina bench``: a fixed search workload, for speed and for spotting search changes.

Every position of :data:`BENCH_POSITIONS` is searched to the same depth by a
fresh search state (so the order of the positions does not matter). The total
node count is the signature: any change to search or evaluation moves it,
while a pure speed-up leaves it alone.
"""

from __future__ import annotations

import time

import click

from pedina import build_flavour
from pedina.board import Board
from pedina.protocol.bench_movegen import bench_movegen
from pedina.protocol.engine_options import engine_options
from pedina.egdb import open_endgame_database
from pedina.search import Searcher
from pedina.settings import EngineSettings
from pedina.timeman import Limits

#: (label, FEN): openings, middlegames, king endings, tactics.
BENCH_POSITIONS: tuple[tuple[str, str], ...] = (
    ("start", "W:W21-32:B1-12"),
    ("opening 1", "W:W17,19,23,24,25,27,28,29,30,31,32:B1,2,3,4,5,7,8,9,10,11,12"),
    ("opening 2", "B:W18,21,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,10,11,12,13"),
    ("opening 3", "W:W20,21,22,23,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,9,10,11,12,15"),
    ("middlegame 1", "W:W22,24,25,26,29,30,31,32:B1,2,3,4,6,8,11,17,21"),
    ("middlegame 2", "W:W20,23,25,26,29,30,31,32:B2,3,4,5,8,12,13,14,27"),
    ("middlegame 3", "W:W13,21,24,25,28,31,32:B1,2,4,6,8,12,22"),
    ("middlegame 4", "W:W30,26,27,22,23,24,17,18,20:B14,15,16,9,11,5,6,1,3"),
    ("middlegame 5", "W:W17,22,23,24,27,28,29,31,32:B1,2,3,4,6,7,8,9,11,12,K30"),
    ("king v men", "B:W30,21,22,17,20,K6:B25,28,9,5,1,3"),
    ("late middlegame", "W:WK1,17,20,28,29,30,31,32:B2,3,6,7,8,19"),
    ("few men 1", "W:W14,29,30,32:B1,4,6,8,11,19,25"),
    ("few men 2", "W:W8,21,23,29:B2,3,4,18,20,25"),
    ("kings and men 1", "W:WK2,10,20,29,30,32:B1,3,4,12,23,K31"),
    ("kings and men 2", "W:W8,9,12,13,17,20,28:B2,4,5,18,K26"),
    ("kings and men 3", "W:WK3,6,18,21,32:B1,9,22,27,K31"),
    ("king ending 1", "W:WK12,32:B14,23,K24,K26"),
    ("king ending 2", "W:WK7:B12,14,K25,K32"),
    ("2 kings v king", "W:WK10,K19:BK27"),
    ("3 kings v 2 kings", "B:WK1,K5,K14:BK22,K28"),
    ("shot", "W:W9,24,26,29:B4,8,11,19"),
    ("race to promote", "W:W13,22,27:B6,20,24"),
)


def run_search_bench(depth: int, settings: EngineSettings, echo: bool = True) -> tuple[int, float]:
    """Search every bench position to ``depth`` with ``settings``; returns (total nodes, wall seconds)."""
    searcher = Searcher(settings)
    searcher.prepare()  # tables opened and helpers started before the clock runs
    total_nodes = 0
    total_time = 0.0
    for index, (label, fen) in enumerate(BENCH_POSITIONS, start=1):
        searcher.new_game()
        board = Board(fen)
        started = time.perf_counter()
        result = searcher.search(board, Limits(depth=depth))
        elapsed = time.perf_counter() - started
        total_nodes += result.nodes
        total_time += elapsed
        if echo:
            best = result.best.hub() if result.best else "-"
            click.echo(f"{index:2d} {label:<18} {best:<12} score {result.score:6d}  nodes {result.nodes:>9,}  "
                       f"time {elapsed:7.3f} s  {result.nodes / max(elapsed, 1e-9):>9,.0f} nodes/s")
    return total_nodes, total_time


@click.group(name="bench", invoke_without_command=True)
@click.option("--depth", "-d", type=click.IntRange(1, 30), default=8, show_default=True,
              help="Search depth for every position.")
@engine_options(without=("lines", "play", "book"), egdb_path="")
@click.pass_context
def bench_search(ctx: click.Context, depth: int, settings: EngineSettings) -> None:
    """Search a fixed suite of positions to a fixed depth; print nodes, nodes/s and a signature.

    With --egdb the search probes the database, which changes the signature: compare
    signatures of runs with the same database only. With --threads above 1 the nodes are
    those of every process, and there is no signature: the helpers' share of the tree
    depends on timing. `pedina bench movegen` times the move generator instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    tables = open_endgame_database(settings.egdb_path)
    database = "" if tables is None else f", endgame database {tables.directory} (up to {tables.pieces} pieces)"
    threads = f", {settings.threads} threads" if settings.threads > 1 else ""
    click.echo(f"bench: {len(BENCH_POSITIONS)} positions, depth {depth}, hash {settings.hash_mb} MB{threads}, "
               f"{build_flavour()} flavour{database}")
    cpu_started = time.process_time()
    nodes, elapsed = run_search_bench(depth, settings)
    cpu = time.process_time() - cpu_started
    summary = f"total nodes {nodes:,}  time {elapsed:.3f} s  {nodes / max(elapsed, 1e-9):,.0f} nodes/s"
    if settings.threads > 1:
        click.echo(summary)
        click.echo("signature none: with helpers the tree depends on timing")
        return
    # CPU time too: on a shared machine the wall clock also counts other processes.
    click.echo(f"{summary}  (cpu {cpu:.3f} s, {nodes / max(cpu, 1e-9):,.0f} nodes/s)")
    click.echo(f"signature {nodes}")


bench_search.add_command(bench_movegen, name="movegen")
