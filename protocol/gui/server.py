"""The web server of ``pedina gui``: the page, its files and one WebSocket per page.

:func:`create_app` builds the Starlette application; :func:`serve_gui` binds the socket, prints
the address with its token, opens the browser and runs uvicorn until Ctrl-C.

Security: :class:`Guard` lets a request or WebSocket through only with the random token
(in the address's ``token`` query, or the cookie the page gets with it) and from the page's
own origin (an ``Origin`` header, when there is one, must name the ``Host`` asked for; a
WebSocket must have one); on a loopback address the ``Host`` must be a loopback name
with the server's port (no DNS rebinding). The page can only name engines by their index
in the command line's list, and it sends and receives PDN as text: the server never runs
a command or opens a file the page chose. Every page's engines end with its connection,
and all of them with the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import secrets
import socket
import sys
import threading
import webbrowser
from collections.abc import AsyncIterator
from importlib import resources
from urllib.parse import parse_qs

import uvicorn
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketClose

from pedina.protocol.gui.engines import EngineCatalog
from pedina.protocol.gui.outbox import Outbox
from pedina.protocol.gui.table import MAX_PDN, Table

#: The page's files: name -> media type (nothing else is served).
STATIC_FILES = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}
#: Headers of every page response: nothing loaded from elsewhere, no framing, no referrer (the token).
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
#: Largest WebSocket message accepted (bytes): a PDN text of :data:`MAX_PDN` characters, in UTF-8.
MAX_MESSAGE_BYTES = 4 * MAX_PDN + 1024

_LOOPBACK_NAMES = ("localhost",)
_LOG = logging.getLogger("pedina.gui")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 possibly in brackets) is this machine's loopback."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def cookie_name(port: int) -> str:
    """The token cookie's name: one per port, since cookies do not tell ports apart."""
    return f"pedina-gui-{port}"


class Guard:
    """ASGI middleware: refuses a request or WebSocket without the token or from another origin
    (HTTP 403; a WebSocket is closed before it is accepted, which the browser sees as a 403)."""

    def __init__(self, app: ASGIApp, token: str, port: int, loopback: bool) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.loopback = loopback

    def refusal(self, scope: Scope) -> str | None:
        """Why this request may not pass, or ``None``."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if self.loopback:
            name, _, port = host.rpartition(":")
            if not is_loopback(name) or port != str(self.port):
                return f"unexpected Host {host!r}"
        origin = headers.get("origin")
        if origin is None and scope["type"] == "websocket":
            return "a WebSocket without an Origin"
        if origin is not None and origin != f"http://{host}":
            return f"a request from another origin ({origin})"
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("token", [None])[0]
        if given is None:
            given = HTTPConnection(scope).cookies.get(cookie_name(self.port))
        # Compared as bytes: compare_digest refuses text with characters beyond ASCII.
        if given is None or not secrets.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            return "a missing or wrong token: open the address that pedina gui printed"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        reason = self.refusal(scope)
        if reason is None:
            await self.app(scope, receive, send)
            return
        _LOG.warning("refused %s %s: %s", scope["type"], scope.get("path"), reason)
        if scope["type"] == "http":
            await PlainTextResponse(f"Forbidden: {reason}\n", status_code=403,
                                    headers=SECURITY_HEADERS)(scope, receive, send)
        else:
            await WebSocketClose(code=1008, reason="forbidden")(scope, receive, send)


def _static(name: str) -> bytes:
    return resources.files("pedina.protocol.gui").joinpath("static", name).read_bytes()


def create_app(catalog: EngineCatalog, token: str, port: int, *, loopback: bool = True,
               probe: bool = True) -> ASGIApp:
    """The application behind :class:`Guard`; ``port`` is the one the server listens on, and
    ``probe`` starts each engine once at startup to learn its name and parameters."""
    index = _static("index.html")
    files = {name: _static(name) for name in STATIC_FILES}
    tables: set[Table] = set()

    async def page(request: Request) -> Response:
        response = Response(index, media_type="text/html; charset=utf-8", headers=SECURITY_HEADERS)
        response.set_cookie(cookie_name(port), token, httponly=True, samesite="strict")
        return response

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in files:
            return PlainTextResponse("Not found\n", status_code=404, headers=SECURITY_HEADERS)
        return Response(files[name], media_type=STATIC_FILES[name], headers=SECURITY_HEADERS)

    async def connection(websocket: WebSocket) -> None:
        await websocket.accept()
        outbox = Outbox()  # bounded: a page that does not read is owed only the latest state
        table = Table(catalog, outbox.put)
        tables.add(table)

        async def write() -> None:
            while True:
                message = await outbox.get()
                await websocket.send_text(json.dumps(message))

        writer = asyncio.create_task(write())
        table.welcome()
        try:
            while True:
                event = await websocket.receive()
                if event["type"] == "websocket.disconnect":
                    break
                text = event.get("text")
                if isinstance(text, str):
                    try:
                        await table.handle(text)
                    except RecursionError:  # json.loads of a message nested about a thousand deep
                        table.error("a message nested too deeply")
                else:
                    table.error("messages must be JSON text")
        finally:
            tables.discard(table)
            await table.close()
            writer.cancel()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async def learn(number: int) -> None:
            await catalog.probe(number)
            for table in list(tables):
                table.send_engines()

        probes = [asyncio.create_task(learn(number)) for number in range(len(catalog.specs))] if probe else []
        try:
            yield
        finally:
            await asyncio.gather(*(table.close() for table in list(tables)))
            await asyncio.gather(*probes, return_exceptions=True)

    app = Starlette(routes=[Route("/", page), Route("/static/{name}", static),
                            WebSocketRoute("/ws", connection)], lifespan=lifespan)
    return Guard(app, token, port, loopback)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    return socket.create_server((host.strip("[]"), port), family=family)


def serve_gui(catalog: EngineCatalog, host: str, port: int, open_browser: bool) -> None:
    """Listen on ``host``:``port`` (0: a free port), print the address, open it in the browser
    unless told not to, and serve until Ctrl-C or SIGTERM; every engine process ends with it."""
    token = secrets.token_urlsafe(24)
    listener = _listen(host, port)
    port = listener.getsockname()[1]
    wildcard = host.strip("[]") in ("0.0.0.0", "::")
    shown = "127.0.0.1" if wildcard else (f"[{host.strip('[]')}]" if ":" in host else host)
    url = f"http://{shown}:{port}/?token={token}"
    app = create_app(catalog, token, port, loopback=is_loopback(host) and not wildcard)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            ws_max_size=MAX_MESSAGE_BYTES, timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    print(f"Pedina GUI: {url}", flush=True)
    print("Press Ctrl-C to stop.", flush=True)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    try:
        server.run(sockets=[listener])
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()
    print("Pedina GUI stopped.", file=sys.stderr, flush=True)
