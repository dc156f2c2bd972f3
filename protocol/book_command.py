"""``pedina book``: build the opening book with the engine's own search, and look positions up in it."""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack

import click

from pedina.board import Board
from pedina.book import Book, BookError, build_book, shipped_book
from pedina.position import Position, PositionError
from pedina.scores import men
from pedina.settings import EngineSettings
from pedina.protocol.engine_options import engine_options


@click.group()
def book() -> None:
    """The opening book: positions searched in advance, with the value of every move."""


@book.command("build")
@click.option("--out", "path", type=click.Path(dir_okay=False), default="book.txt", show_default=True,
              help="The book file written (one line per position, appended as each is searched).")
@click.option("--depth", type=click.IntRange(1, 60), default=10, show_default=True,
              help="Search depth of every position.")
@click.option("--positions", type=click.IntRange(1), default=2000, show_default=True,
              help="Positions in the finished book.")
@click.option("--plies", type=click.IntRange(0, 8), default=3, show_default=True,
              help="Every position up to this many plies from the start is in the book (3: every 3-move opening).")
@click.option("--ply-cost", type=click.IntRange(0, 1000), default=10, show_default=True,
              help="Beyond --plies, the cost of a ply (hundredths of a man) against the cost of a worse move.")
@click.option("--resume", is_flag=True, help="Continue the book in --out (an interrupted build).")
@click.option("--batch", type=click.IntRange(1, 10_000), default=1, show_default=True,
              help="Beyond --plies, positions chosen and searched together before their moves are expanded: "
                   "what --workers and --cluster search in parallel. The book depends on it (not on --workers).")
@click.option("--workers", type=click.IntRange(1, 256), default=None,
              help="Processes searching at the same time on this machine [default: 1].")
@click.option("--cluster", metavar="ADDRESS", default=None,
              help="Search the positions as tasks on this Dask cluster: tcp://HOST:PORT, a scheduler file, or "
                   "local:N (see the README).")
@engine_options(without=("lines", "play", "book"))
def book_build(path: str, depth: int, positions: int, plies: int, ply_cost: int, resume: bool, batch: int,
               workers: int | None, cluster: str | None, settings: EngineSettings) -> None:
    """Build an opening book from the start position.

    Every position up to --plies plies is searched first (every move valued), then the
    positions cheapest to reach beyond them (each move costing --ply-cost plus what it
    loses against the best move), until the book has --positions positions. Each
    position is appended to the file as soon as it is searched: after Ctrl-C, the same
    command with --resume goes on where it stopped and gives the same book.
    """
    if cluster is not None and workers is not None:
        raise click.ClickException("--workers is for this machine; on a cluster, each worker's threads are its own")
    if (cluster is not None or (workers or 1) > 1) and batch < (workers or 2):
        click.echo(f"Warning: beyond --plies only --batch {batch} position(s) are searched at a time; "
                   "give a batch of at least the searches that can run at once", err=True)
    if settings.threads > 1:
        click.echo(f"Warning: with --threads {settings.threads} each search ends where its processes' shares of "
                   "the work lead it, so the same settings may not give the same book; --workers searches "
                   "positions side by side and keeps it the same", err=True)
    started = time.perf_counter()
    counts: list[int] = []  # the positions in the book: as the file was, then after each search
    try:
        with ExitStack() as stack:
            searches = None
            where = ""
            if cluster is not None:
                from pedina.protocol.book_cluster import ClusterSearches
                from pedina.protocol.match.cluster import cluster_client, cluster_summary

                client = stack.enter_context(cluster_client(cluster))
                searches = ClusterSearches(client, depth, settings)
                stack.callback(searches.cancel)
                where = f" on Dask cluster {cluster} ({cluster_summary(client)})"
            bar = stack.enter_context(click.progressbar(
                length=positions, label=f"building {path} at depth {depth}{where}", show_eta=True, file=sys.stderr))

            def progress(count: int) -> None:
                counts.append(count)
                bar.update(min(count, positions) - bar.pos)

            built = build_book(path, depth, positions, plies=plies, ply_cost=ply_cost, settings=settings,
                               resume=resume, progress=progress, batch=batch, workers=workers or 1,
                               searches=searches)
    except KeyboardInterrupt:
        click.echo(f"interrupted: {path} holds {counts[-1] if counts else 0:,} positions; the same command "
                   "with --resume goes on", err=True)
        sys.exit(130)
    except (BookError, OSError) as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{path}: {len(built):,} positions ({counts[-1] - counts[0]:,} searched now, depth {depth}) "
               f"in {time.perf_counter() - started:.1f} s")


@book.command("finish")
@click.argument("source", type=click.Path(dir_okay=False, exists=True))
@click.option("--out", "path", type=click.Path(dir_okay=False), required=True,
              help="The finished book written (not an existing file).")
def book_finish(source: str, path: str) -> None:
    """Write the book SOURCE with every value backed up through it, for play.

    A move to a position in the book takes that position's best value, itself backed up,
    so the book's choices see as deep as its lines go (the shipped book is finished).
    SOURCE, a build's file, stays as it is: --resume goes on from its searches' values.
    """
    try:
        raw = Book.read(source)
        finished = raw.backed_up()
        with open(source, encoding="utf-8") as handle:
            comments = [line.rstrip("\n") for line in handle.readlines()[1:] if line.startswith("#")]
        lines = finished.text().splitlines()
        comments.append("# values backed up through the book by pedina book finish")
        with open(path, "x", encoding="utf-8") as handle:
            handle.write("\n".join(lines[:1] + comments + lines[1:]) + "\n")
    except FileExistsError:
        raise click.ClickException(f"{path} already exists: the finished book goes to a new file") from None
    except (BookError, OSError) as error:
        raise click.ClickException(str(error)) from None
    changed = sum(before.moves != after.moves for before, after in zip(raw, finished))
    click.echo(f"{path}: {len(finished):,} positions, {changed:,} of them with values backed up from deeper "
               "in the book")


@book.command("moves")
@click.argument("position", default="")
@click.option("--book", "path", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The book file [default: the shipped book].")
def book_moves(position: str, path: str | None) -> None:
    """The book moves of POSITION (FEN or Hub string; default: the start) with their values."""
    try:
        root = Position.parse(position) if position else Position.start()
    except PositionError as error:
        raise click.BadParameter(str(error), param_hint="POSITION") from None
    try:
        opened = Book.read(path) if path is not None else shipped_book()
        entry = opened.get(root)
    except BookError as error:
        raise click.ClickException(str(error)) from None
    if entry is None:  # an answer, not a failure: most positions are in no book
        click.echo(f"{root.fen()} is not in the book ({len(opened):,} positions).")
        return
    click.echo(f"{root.fen()}  searched to depth {entry.depth}; values in men for the side to move:")
    board = Board(root)
    for choice in entry.moves:
        after = root.play(choice.move)
        mark = "" if after not in opened else "  (in the book)"
        click.echo(f"  {board.pdn(choice.move):<12} {men(choice.value):>7}{mark}")
