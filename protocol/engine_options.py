"""The engine's settings on the command line: one decorator for every command that searches.

:func:`engine_options` adds one option for each row of :data:`pedina.settings.SETTINGS`
(``--hash``, ``--multipv``, ``--skill``, ``--seed``, ``--egdb DIR``/``--no-egdb``,
``--book/--no-book``, ``--book-variety``) and hands the command a single ``settings``
argument, an :class:`~pedina.settings.EngineSettings`. A command that has no use for
some settings names their groups; one that needs another default (``pedina bench``
probes no endgame tables unless told) says so; every other default is the settings'. More
``--threads`` than the machine gives the process cores is said on stderr (but by the Hub
engine, whose stderr stays silent), and the command goes on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import Any, TypeVar

import click

from pedina.session import check_settings
from pedina.settings import SETTINGS, EngineSettings, Setting, value_type
from pedina.smp import usable_cores

Command = TypeVar("Command", bound=Callable[..., Any])

def _parameter(row: Setting) -> str:
    return f"setting_{row.field}"


def _options(row: Setting, default: object) -> list[Callable[[Any], Any]]:
    """The click options of one setting, with the default the command gives it."""
    name = _parameter(row)
    kind = value_type(row.field)
    if kind is bool:
        flag = row.option.removeprefix("--")
        return [click.option(f"--{flag}/--no-{flag}", name, default=default, show_default=True, help=row.help)]
    if kind is int:
        return [click.option(row.option, name, type=click.IntRange(row.low, row.high), default=default,
                             show_default=True, help=row.help)]
    # Giving neither the option nor its ``--no-`` form keeps the default.
    flag = row.option.removeprefix("--")
    shown = row.default_help if default == getattr(EngineSettings(), row.field) else default or "none"
    options = [click.option(row.option, name, default=None, metavar=row.metavar, help=f"{row.help} [default: {shown}]")]
    if row.none_help:
        options.append(click.option(f"--no-{flag}", f"{name}_none", is_flag=True, help=row.none_help))
    return options


def engine_options(without: Collection[str] = (), silent: bool = False,
                   **defaults: object) -> Callable[[Command], Command]:
    """Give a click command an option for each engine setting but those of the groups named in
    ``without`` (see :class:`~pedina.settings.Setting`), with the settings' defaults unless
    ``defaults`` names others, and call it with one ``settings`` keyword argument instead of
    the options' values. A ``silent`` command warns of nothing on stderr."""
    rows = [row for row in SETTINGS if row.group not in without]
    base = EngineSettings().with_values(defaults)

    def decorate(command: Command) -> Command:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> Any:
            chosen: dict[str, object] = {}
            for row in rows:
                value = kwargs.pop(_parameter(row))
                if value_type(row.field) is str:
                    if kwargs.pop(_parameter(row) + "_none", False):
                        if value is not None:
                            raise click.UsageError(f"{row.option} and --no-{row.option.removeprefix('--')} "
                                                   "contradict each other")
                        value = ""
                    if value is None:
                        continue
                chosen[row.field] = value
            settings = base.with_values(chosen)
            try:
                check_settings(settings)
            except ValueError as error:
                raise click.BadParameter(str(error)) from None
            cores = usable_cores()
            if settings.threads > cores and not silent:
                click.echo(f"Warning: --threads {settings.threads} is more processes than the {cores} core(s) "
                           "this process may run on: they take turns on them, and the main search slows down",
                           err=True)
            return command(*args, settings=settings, **kwargs)

        decorated: Callable[..., Any] = run
        for row in reversed(rows):
            for option in reversed(_options(row, getattr(base, row.field))):
                decorated = option(decorated)
        return decorated  # type: ignore[return-value]

    return decorate


__all__ = ["engine_options"]
