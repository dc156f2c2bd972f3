"""The ``pedina`` command."""

from __future__ import annotations

import contextlib
import difflib
import importlib
import math
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

import click

from pedina import Position, PositionError, __version__, build_flavour, legal_moves
from pedina.perft import perft
from pedina.settings import EngineSettings
from pedina.protocol.engine_options import engine_options


#: Subcommands defined in other modules, imported only when named (so ``pedina hub`` starts fast).
_LAZY_COMMANDS = {
    "analyze": "pedina.protocol.analyze:analyze",
    "bench": "pedina.protocol.bench_search:bench_search",
    "book": "pedina.protocol.book_command:book",
    "demo": "pedina.protocol.demo:demo",
    "dxp": "pedina.protocol.dxp:dxp",
    "egdb": "pedina.protocol.egdb_command:egdb",
    "gui": "pedina.protocol.gui:gui",
    "match": "pedina.protocol.match:match",
    "play": "pedina.protocol.play:play",
    "show": "pedina.protocol.show:show",
}
#: Other spellings a command answers to, left out of the help.
_ALIASES = {"analyse": "analyze"}


class _PedinaGroup(click.Group):
    """``pedina`` with no subcommand runs the Hub engine when stdin is not a terminal;
    subcommands of other modules are imported on first use; user mistakes are one line (a
    mistyped command with the nearest one suggested)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd_name = _ALIASES.get(cmd_name, cmd_name)
        target = _LAZY_COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0]
        if not name.startswith("-") and self.get_command(ctx, name) is None and not ctx.resilient_parsing:
            # click suggests a command (from 8.4 on) only among those it holds, not those imported on use.
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            suggestion = f" Did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"No such command {name!r}.{suggestion}", ctx)
        return super().resolve_command(ctx, args)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and not sys.stdin.isatty():
            args = ["hub"]
        return super().parse_args(ctx, args)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        with _one_line_errors():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        with _one_line_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def _one_line_errors() -> Iterator[None]:
    """A user mistake prints one ``Error: ...`` line (no usage block) and exits with click's code."""
    try:
        yield
    except click.ClickException as error:
        click.echo(f"Error: {error.format_message()}", err=True)
        sys.exit(error.exit_code)


@click.group(cls=_PedinaGroup)
@click.version_option(__version__, prog_name="pedina",
                      message=f"%(prog)s %(version)s ({build_flavour()} flavour)")
def main() -> None:
    """Pedina, an Italian draughts engine.

    Give `pedina` (or `pedina hub`) to a Hub client as the engine command.
    """


class FiniteRange(click.FloatRange):
    """:class:`click.FloatRange` that also refuses ``nan`` and the infinities, which compare
    false with both bounds and would otherwise slip through."""

    name = "finite number range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


def parse_position(text: str) -> Position:
    """A FEN or Hub string from the command line, or a click error saying what is wrong."""
    try:
        return Position.parse(text)
    except PositionError as error:
        raise click.BadParameter(str(error), param_hint="position") from error


def open_log(path: str | None) -> TextIO | None:
    """The log file ``path`` opened for appending (``None`` without a path), or a click
    error naming the file and the reason."""
    if path is None:
        return None
    try:
        return open(path, "a", encoding="utf-8")
    except OSError as error:
        raise click.ClickException(f"cannot open the log file {path}: {error.strerror or error}") from None


@main.command(name="perft")
@click.argument("position", required=False, default="")
@click.option("--depth", "-d", type=click.IntRange(1, 30), required=True, help="Plies to count.")
@click.option("--divide", is_flag=True, help="Show the count below each legal move.")
def perft_command(position: str, depth: int, divide: bool) -> None:
    """Count the leaves of the legal-move tree (POSITION: FEN or Hub string; default: start).

    Without --divide, every depth up to DEPTH is counted in turn, with its speed.
    """
    root = parse_position(position) if position else Position.start()
    if divide:
        started = time.perf_counter()
        total = 0
        for move in legal_moves(root):
            count = perft(root.play(move), depth - 1)
            total += count
            click.echo(f"{move.hub():<24} {count:>13,}")
        elapsed = time.perf_counter() - started
        click.echo(f"depth {depth}: {total:,} leaves in {elapsed:.3f} s "
                   f"({total / max(elapsed, 1e-9):,.0f} leaves/s)")
        return
    for ply in range(1, depth + 1):
        started = time.perf_counter()
        total = perft(root, ply)
        elapsed = time.perf_counter() - started
        click.echo(f"depth {ply:2d}  leaves {total:>13,}  time {elapsed:8.3f} s  "
                   f"{total / max(elapsed, 1e-9):>13,.0f} leaves/s")


@main.command()
@click.option("--log", "log_path", type=click.Path(dir_okay=False, writable=True),
              help="Append both directions of the session to this file.")
@engine_options(silent=True)
def hub(log_path: str | None, settings: EngineSettings) -> None:
    """Run as a Hub protocol engine on stdin/stdout (give `pedina` to a Hub client).

    The options set the parameters' starting values (a client's set-param changes them).
    """
    from pedina.protocol.hub import serve_stdio

    serve_stdio(settings, log=open_log(log_path))


if __name__ == "__main__":
    main()
