"""The engines of ``pedina gui``: the configured list, and one engine driven from asyncio.

:class:`EngineCatalog` holds the engines given on the command line (the page can only pick
one of them by its index) and what each declared in its handshake. :class:`EngineSlot` is
one engine of one page, a Hub process or a connection to a running DXP engine, driven
through the :class:`~pedina.protocol.engineclient.EngineClient` interface: every blocking
call runs in a thread of its own (never in asyncio's shared pool, which a few long
analyses would fill, leaving every later call, a ``stop`` or a ``close`` among them, to
wait for ever), ``info`` lines come back to the event loop as they arrive, and all writes
to the engine are serialised, so :meth:`EngineSlot.stop` may be sent while a search is
waited for.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pedina.protocol.engineclient import EngineClient, EngineCrashed, EngineError, EngineId, SearchReport
from pedina.protocol.match.game import EngineSpec, Settings, open_engine

_Result = TypeVar("_Result")

#: Seconds an engine gets to start and answer the handshake.
HANDSHAKE_TIMEOUT = 30.0
#: Seconds an engine gets to see a game's end through (a DXP engine answers GAMEEND with its own).
GAME_OVER_TIMEOUT = 10.0


def analysis_refusal(spec: EngineSpec) -> str | None:
    """Why ``spec``'s engine cannot analyse (``None`` when it can): a DXP engine only plays its
    moves, with no search information and no way to be stopped."""
    if spec.dxp is None:
        return None
    return (f"{spec.name} is a DXP engine: DXP sends no analysis (no scores, no lines) and cannot be "
            "stopped, so it can only play games; choose a Hub engine to analyse")


def in_own_thread(call: Callable[[], _Result]) -> asyncio.Future[_Result]:
    """``call()`` run in a new daemon thread, its result (or exception) awaited on the running loop.

    A thread of its own rather than one of asyncio's shared pool: an engine call may block for
    a whole analysis, and however many run at once, none waits for another to end.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[_Result] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():  # the waiter may have been cancelled
            outcome()

    def work() -> None:
        report: Callable[[], None]
        try:
            report = functools.partial(future.set_result, call())
        except BaseException as error:  # handed to the waiter, whatever it is
            report = functools.partial(future.set_exception, error)
        try:
            loop.call_soon_threadsafe(settle, report)
        except RuntimeError:
            pass  # the loop has closed (the server ended): nobody waits any more

    threading.Thread(target=work, name="pedina gui engine call", daemon=True).start()
    return future


@dataclass
class EngineListing:
    """What the page is told about one configured engine: its name and, once some process of
    it has done the handshake, its ``id`` and parameters (or why it could not start)."""

    name: str
    ident: EngineId | None = None
    problem: str | None = None

    def as_json(self, index: int) -> dict[str, object]:
        """The listing as sent to the page: ``index``, ``name``, ``id_name``, ``id_version``,
        ``id_author``, ``params``, ``problem``."""
        ident = self.ident
        params = ident.params if ident else {}
        return {"index": index, "name": self.name, "id_name": ident.name if ident else None,
                "id_version": ident.version if ident else None, "id_author": ident.author if ident else None,
                "params": {name: dict(args) for name, args in params.items()}, "problem": self.problem}


def listing_json(listing: EngineListing, spec: EngineSpec, index: int) -> dict[str, object]:
    """What the page is told about engine ``index``: its listing, the parameters the command line
    sets (``options``), its protocol (``hub`` or ``dxp``) and why it cannot analyse (``no_analysis``)."""
    return {**listing.as_json(index), "options": dict(spec.options),
            "protocol": "hub" if spec.dxp is None else "dxp", "no_analysis": analysis_refusal(spec)}


class EngineCatalog:
    """The engines of the command line, in order; the page names them by index."""

    def __init__(self, specs: Sequence[EngineSpec]) -> None:
        if not specs:
            raise ValueError("pedina gui needs at least one engine")
        self.specs = list(specs)
        self.listings = [EngineListing(spec.name) for spec in self.specs]

    def spec(self, index: int) -> EngineSpec:
        """The engine at ``index``; raises :class:`ValueError` for an index the command line did not give."""
        if not 0 <= index < len(self.specs):
            raise ValueError(f"there is no engine {index} (engines 0 to {len(self.specs) - 1})")
        return self.specs[index]

    def as_json(self) -> list[dict[str, object]]:
        """Every listing, as sent to the page (see :func:`listing_json`)."""
        return [listing_json(listing, spec, index)
                for index, (listing, spec) in enumerate(zip(self.listings, self.specs))]

    async def probe(self, index: int) -> None:
        """Start (or connect to) engine ``index`` once to learn its ``id`` and parameters (or its problem), then end it."""
        slot = EngineSlot(self, index)
        try:
            await slot.start()
        except EngineError:
            pass  # start() noted the problem in the listing
        finally:
            await slot.close()


class EngineSlot:
    """One engine for one page (a Hub process, or a connection to a DXP engine), started on first
    use (see :meth:`start`)."""

    def __init__(self, catalog: EngineCatalog, index: int) -> None:
        self.catalog = catalog
        self.index = index
        self.spec = catalog.spec(index)
        self._client: EngineClient | None = None
        self._writing = asyncio.Lock()  # one write at a time: a stop never cuts into a search's lines
        self._turn = asyncio.Lock()     # one exchange at a time: a game, a search, a game's end
        self._values = dict(self.spec.options)  # parameters set, in the handshake and after
        self._game: int | None = None  # the game number of the last new-game
        self._closed = False
        self.searching = False

    @property
    def started(self) -> bool:
        """Whether the engine is running (or connected) and through its handshake."""
        return self._client is not None

    @property
    def stoppable(self) -> bool:
        """Whether :meth:`stop` ends a search early (a DXP engine moves in its own time)."""
        return self.spec.dxp is None

    @property
    def settings(self) -> dict[str, str]:
        """The parameters set by the handshake (the command line's ``option.NAME``) and by
        :meth:`ensure_param` since (name -> value)."""
        return dict(self._values)

    @property
    def params(self) -> dict[str, dict[str, str]]:
        """The parameters the running engine declared (empty before :meth:`start`, and for DXP)."""
        return self._client.id.params if self._client else {}

    def own_value(self, name: str) -> str | None:
        """What parameter ``name`` is without the page: the command line's ``option.NAME``, else
        the value the running engine declared (``None`` when it does not declare ``name``)."""
        declared = self.params.get(name)
        if declared is None:
            return None
        return self.spec.options.get(name, declared.get("value", ""))

    async def start(self) -> EngineId:
        """The engine, started (or connected) and through its handshake if it was not yet.

        Raises :class:`EngineError` (the reason is also kept in the catalog's listing).
        """
        if self._client is not None:
            return self._client.id
        listing = self.catalog.listings[self.index]
        try:
            client = await in_own_thread(lambda: open_engine(self.spec, Settings(timeout=HANDSHAKE_TIMEOUT)))
        except EngineError as error:
            listing.problem = str(error)
            raise
        if self._closed:  # closed while starting: the engine must not outlive the slot
            await in_own_thread(lambda: client.close(0.2))
            raise EngineCrashed(f"{self.spec.name}: closed while starting")
        listing.ident, listing.problem = client.id, None
        self._client = client
        return client.id

    def tail(self) -> list[str]:
        """The last lines exchanged with the engine (none before it started)."""
        return self._client.tail() if self._client else []

    def _running(self) -> EngineClient:
        if self._client is None:
            raise RuntimeError(f"{self.spec.name}: not started")
        return self._client

    async def ensure_param(self, name: str, value: str) -> bool:
        """``set-param`` when the engine declares ``name`` and it does not hold ``value`` yet
        (a parameter the engine does not declare is left alone); whether it was sent. A value
        the engine refuses raises :class:`~pedina.protocol.engineclient.EngineRefused`, and the
        engine keeps its own."""
        client = self._running()
        declared = client.id.params.get(name)
        if declared is None or self._values.get(name, declared.get("value")) == value:
            return False
        async with self._turn, self._writing:
            await in_own_thread(lambda: client.set_param(name, value))
        self._values[name] = value
        return True

    def forget_game(self) -> None:
        """Have the next :meth:`new_game` reach the engine whatever its number, so that it starts
        from nothing (a game review, which must find what a fresh engine finds)."""
        self._game = None

    async def new_game(self, number: int) -> None:
        """A new game once for each game ``number`` (the caller's count), so the engine forgets the others."""
        client = self._running()
        if self._game == number:
            return
        async with self._turn, self._writing:
            await in_own_thread(client.new_game)
        self._game = number

    async def search(self, position: str, moves: Sequence[str], level: Mapping[str, object], mode: str,
                     timeout: float, on_info: Callable[[dict[str, str]], None]) -> SearchReport:
        """One search (``go MODE``), waited for in a thread of its own; ``on_info`` gets each ``info``
        line's arguments on the event loop, before the result comes back. A search still running
        (one given up on, of an engine that cannot be stopped) is waited for first.

        Raises :class:`EngineError` as :meth:`EngineClient.finish_search` does.
        """
        client = self._running()
        loop = asyncio.get_running_loop()

        def relay(args: dict[str, str]) -> None:
            loop.call_soon_threadsafe(on_info, args)

        async with self._turn:
            # Searching from before the go is written: a stop asked meanwhile waits for the write,
            # then follows the go (were it dropped, the search would run on unstopped).
            self.searching = True
            try:
                async with self._writing:
                    started = await in_own_thread(lambda: client.start_search(position, moves, level, mode))
                return await in_own_thread(lambda: client.finish_search(started, timeout, relay))
            finally:
                self.searching = False

    async def game_over(self, position: str, moves: Sequence[str], result: str) -> None:
        """Tell the engine that the game of ``position`` and ``moves`` ended with ``result``, as its
        protocol says (a DXP engine gets the last move, or a GAMEEND; a Hub engine nothing).

        Raises :class:`EngineError`.
        """
        client = self._running()
        async with self._turn, self._writing:
            await in_own_thread(lambda: client.game_over(position, moves, result, GAME_OVER_TIMEOUT))

    async def stop(self) -> None:
        """``stop`` the running search, if any (an engine already gone is left to the search's error)."""
        client = self._client
        if client is None or not self.searching:
            return
        async with self._writing:
            try:
                await in_own_thread(client.stop)
            except EngineError:
                pass

    async def close(self) -> None:
        """End the engine (``quit``, then its process group is killed; or the connection closed); a
        search waiting on it fails, and a start still under way ends its engine too."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await in_own_thread(lambda: client.close(0.5))
