"""``pedina dxp``: a TCP server that serves DXP connections to a :class:`DxpFollower`.

:func:`listen` opens the socket, :func:`serve` hands the connections it
accepts to the Follower one after the other until Ctrl-C or SIGTERM, and
:func:`dxp` is the command that does both with the options it is given.
"""

from __future__ import annotations

import socket
import sys

import click

from pedina.settings import EngineSettings
from pedina.protocol.cli import FiniteRange, open_log
from pedina.protocol.dxp.follower import DxpFollower
from pedina.protocol.engine_options import engine_options
from pedina.protocol.interrupts import sigterm_as_keyboard_interrupt
from pedina.protocol.pdnfile import PdnOut

#: The port DXP programs listen on unless told otherwise.
DEFAULT_PORT = 27531


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket; :class:`OSError` (address in use, unknown host...) as the OS says."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=4)


def serve(listener: socket.socket, follower: DxpFollower) -> None:
    """Serve connections one after the other until interrupted (Ctrl-C or SIGTERM)."""
    try:
        with sigterm_as_keyboard_interrupt():  # accept() blocks in the OS: only an exception wakes it
            while True:
                conn, address = listener.accept()
                follower.serve_connection(conn, f"{address[0]}:{address[1]}")
    except KeyboardInterrupt:
        pass
    finally:
        follower.close()
        listener.close()


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="TCP port (0: a free one, shown at start).")
@click.option("--log", "log_path", type=click.Path(dir_okay=False, writable=True),
              help="Append every message both ways, with timestamps, to this file.")
@click.option("--time-margin", type=FiniteRange(0.0, 60.0), default=1.0, show_default=True,
              help="Seconds of the clock kept in reserve (for network delays).")
@click.option("--move-time", type=FiniteRange(0.01, 3600.0), default=1.0, show_default=True,
              help="Seconds a move when the GAMEREQ gives 0 minutes (no clock).")
@click.option("--pdnout", "pdn_path", type=click.Path(dir_okay=False), default=None,
              help="Append every game to this PDN file as it ends.")
@engine_options(without=("lines",))
def dxp(host: str, port: int, log_path: str | None, time_margin: float, move_time: float, pdn_path: str | None,
        settings: EngineSettings) -> None:
    """Play DamExchange (DXP) games over TCP as a listening Follower.

    An Initiator (a GUI, an arbiter, pydraughts' DXPEngine) connects and sends
    GAMEREQ; Pedina plays the colour asked, on its own clock of the GAMEREQ's
    minutes. Connections are served one after the other until Ctrl-C.
    """
    log = open_log(log_path)
    pdnout = PdnOut.open_option(pdn_path)
    try:
        listener = listen(host, port)
    except OSError as error:
        # create_server adds "(while attempting to bind ...)" to the OS's words: keep those only
        reason = (error.strerror or str(error)).split(" (while attempting")[0]
        for stream in (log, pdnout):
            if stream is not None:
                stream.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {reason}") from None
    try:
        follower = DxpFollower(settings, log=log, status=sys.stdout, time_margin=time_margin, move_time=move_time,
                               pdnout=pdnout, resident=True)
        bound = listener.getsockname()
        click.echo(f"pedina dxp: listening on {bound[0]}:{bound[1]} (Ctrl-C to stop)")
        sys.stdout.flush()
        serve(listener, follower)
    finally:
        for stream in (log, pdnout):
            if stream is not None:
                stream.close()


__all__ = ["DEFAULT_PORT", "dxp", "listen", "serve"]
