"""``pedina gui``: play and analyse Italian draughts in the browser, with any Hub or DXP engine.

The command starts a local web server (:mod:`pedina.protocol.gui.server`) that serves one
page (``static/``: plain HTML, CSS and JavaScript, the board in SVG) and drives the
engines given with ``--engine`` (Hub processes, or running DXP engines, which only play
games), one game per page
(:mod:`pedina.protocol.gui.table`, :mod:`pedina.protocol.gui.engines`). The web stack
(Starlette, uvicorn, websockets) is the ``gui`` extra; this module imports it only when
the command runs, so that without it the command can say what to install.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from dataclasses import replace

import click

from pedina.settings import EngineSettings
from pedina.protocol.engine_options import engine_options
from pedina.protocol.hub import hub_parameters
from pedina.protocol.match.game import EngineSpec, TimeControl
from pedina.protocol.match.options import MatchCommand, MatchError, engine_spec, parse_pairs

#: The engine when no ``--engine`` is given: this Pedina, as a Hub engine.
DEFAULT_ENGINE = EngineSpec("Pedina", f"{shlex.quote(sys.executable)} -m pedina.protocol.cli hub")
#: The libraries the server needs (the ``gui`` extra), by import name.
WEB_STACK = ("starlette", "uvicorn", "websockets")
#: ``--engine`` keys of ``pedina match`` that set a time: in the GUI, the page chooses the time.
_TIME_KEYS = ("tc", "st", "depth", "nodes")


def gui_engines(values: tuple[str, ...]) -> list[EngineSpec]:
    """The engines of the ``--engine`` options (each a NUL-joined ``key=value`` group, as
    :class:`MatchCommand` gives it), or :data:`DEFAULT_ENGINE`; raises :class:`MatchError`."""
    if not values:
        return [DEFAULT_ENGINE]
    specs = []
    for number, text in enumerate(values, start=1):
        pairs = parse_pairs(text, "--engine")
        timed = [key for key in pairs if key in _TIME_KEYS]
        if timed:
            raise MatchError(f"--engine {timed[0]}=...: the time is chosen in the page, not per engine")
        # engine_spec needs some time control; the page's choice replaces it at every move.
        # A time control without a clock: a DXP engine's GAMEREQ asks for 0 minutes (its own move time).
        specs.append(engine_spec(pairs, {}, TimeControl(move_time=1.0), number))
    names = [spec.name for spec in specs]
    for name in names:
        if names.count(name) > 1:
            raise MatchError(f"two engines are named {name!r}: give each its own name=")
    return specs


def missing_web_stack() -> list[str]:
    """The libraries of :data:`WEB_STACK` that cannot be imported."""
    return [name for name in WEB_STACK if importlib.util.find_spec(name) is None]


@click.command(cls=MatchCommand)
@click.option("--engine", "engines", multiple=True, metavar="cmd=...|dxp=HOST:PORT [name=...] [option.X=...]",
              help="An engine the page may choose (repeatable; keys as in pedina match): a Hub engine "
                   "(cmd, dir, option.NAME) or a running DXP engine (dxp=HOST:PORT, e.g. pedina dxp; it "
                   "plays games at its own move time but cannot analyse), and its name. Default: Pedina itself.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (anything but loopback lets other machines in).")
@click.option("--port", type=click.IntRange(0, 65535), default=0,
              help="Port to listen on (default: a free one).")
@click.option("--no-browser", is_flag=True, help="Only print the address; do not open a browser.")
@engine_options()
def gui(engines: tuple[str, ...], host: str, port: int, no_browser: bool, settings: EngineSettings) -> None:
    """Play and analyse in the browser, against any Hub or DXP engine.

    Starts a local web server, prints its address (with a random token that every request
    needs) and opens it in the browser. Ctrl-C stops the server and its engines. The
    engine options set Pedina's own engine (an --engine takes option.NAME=VALUE instead).

    A DXP engine (--engine dxp=HOST:PORT, listening already) plays games and watched games,
    one at a time: DXP carries no analysis and no parameters, and no time per move (the
    page's game request asks for 0 minutes, so it moves at its own move time, e.g. pedina
    dxp --move-time; a clock chosen in the page still judges it), and it cannot be told to
    move now.
    """
    parameters = hub_parameters(settings)
    if engines and parameters:
        raise click.UsageError("the engine options set Pedina's own engine: with --engine, give "
                               "option.NAME=VALUE in its --engine")
    specs = gui_engines(engines) if engines else [replace(DEFAULT_ENGINE, options=parameters)]
    missing = missing_web_stack()
    if missing:
        raise click.ClickException(
            f"pedina gui needs {', '.join(missing)}: pip install \"pedina[gui]\" "
            "(in a source checkout: pip install \".[gui]\")")
    from pedina.protocol.gui.engines import EngineCatalog
    from pedina.protocol.gui.server import serve_gui

    try:
        serve_gui(EngineCatalog(specs), host, port, open_browser=not no_browser)
    except OSError as error:
        raise click.ClickException(f"cannot listen on {host}:{port}: {error.strerror or error}") from None


__all__ = ["DEFAULT_ENGINE", "gui", "gui_engines"]
