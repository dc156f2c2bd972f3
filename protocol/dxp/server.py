"""``pedina dxp``: a TCP server that serves DXP connections to a :class:`DxpFollower`.

:func:`listen` opens the socket, :func:`serve` hands the connections it
accepts to the Follower one after the other until Ctrl-C or SIGTERM (one that
comes while another is served is refused at once: GAMEACC code 3), and
:func:`dxp` is the command that does both with the options it is given.
"""

from __future__ import annotations

import select
import socket
import sys
import threading

import click

from pedina.settings import EngineSettings
from pedina.protocol.cli import FiniteRange, open_log
from pedina.protocol.dxp.follower import ENGINE_NAME, DxpFollower
from pedina.protocol.dxp.messages import GameAccept, encode
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
    """Serve connections one after the other until interrupted (Ctrl-C or SIGTERM), each on a
    thread of its own while this one accepts: a connection that comes meanwhile is refused."""
    serving: threading.Thread | None = None
    served: socket.socket | None = None
    try:
        with sigterm_as_keyboard_interrupt():
            # The kernel may hand Ctrl-C to another thread, and Python runs its handler only once
            # the main thread runs again: accept() must come back now and then for that.
            listener.settimeout(SIGNAL_POLL)
            while True:
                try:
                    conn, address = listener.accept()
                except TimeoutError:
                    continue
                if serving is not None and serving.is_alive():
                    assert served is not None
                    if has_unread(served):  # the last client's closing words, or its leaving, not yet read
                        serving.join(LEAVING_GRACE)
                    if serving.is_alive():
                        refuse_busy(conn)
                        continue
                served = conn
                serving = threading.Thread(target=follower.serve_connection, name="dxp connection",
                                           args=(conn, f"{address[0]}:{address[1]}"))
                serving.start()
    except KeyboardInterrupt:
        pass
    finally:
        if serving is not None:
            follower.interrupt()
            serving.join()
        follower.close()
        listener.close()


#: The longest the accepting thread blocks in the OS before it looks for a Ctrl-C that another
#: thread received (seconds).
SIGNAL_POLL = 0.25
#: How long a new connection waits for the last one's thread, when that one has words or its
#: end still to be read (a client that said GAMEEND and left as the next came), before "busy".
LEAVING_GRACE = 2.0


def has_unread(conn: socket.socket) -> bool:
    """Whether ``conn`` has bytes or its end still to be read (or is closed already): the thread
    serving it has work queued, as when its client has just said goodbye."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable)
    except (OSError, ValueError):  # closed meanwhile by its thread
        return True


def refuse_busy(conn: socket.socket) -> None:
    """Tell a connection that came while another is served that no game can start (GAMEACC
    code 3, sent before its GAMEREQ), and close it."""
    try:
        conn.settimeout(1.0)
        conn.sendall(encode(GameAccept(ENGINE_NAME, 3)))
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # gone already
    finally:
        conn.close()


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
    minutes. Connections are served one after the other until Ctrl-C; one that
    comes while another is served is refused at once (GAMEACC code 3).
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
