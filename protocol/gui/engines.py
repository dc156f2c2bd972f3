"""The engines of ``pedina gui``: the configured list, and one running process driven from asyncio.

:class:`EngineCatalog` holds the engines given on the command line (the page can only pick
one of them by its index) and what each declared in its handshake. :class:`EngineSlot` is
one engine process of one page: every blocking :class:`~pedina.protocol.hubclient.HubClient`
call runs in a worker thread, ``info`` lines come back to the event loop as they arrive,
and all writes to the engine are serialised, so :meth:`EngineSlot.stop` may be sent while
a search is waited for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pedina.protocol.hubclient import EngineCrashed, EngineError, EngineId, HubClient, SearchReport
from pedina.protocol.match.game import VARIANT, EngineSpec

#: Seconds an engine gets to start and answer the handshake.
HANDSHAKE_TIMEOUT = 30.0


@dataclass
class EngineListing:
    """What the page is told about one configured engine: its name and, once some process of
    it has done the handshake, its ``id`` and parameters (or why it could not start)."""

    name: str
    ident: EngineId | None = None
    problem: str | None = None

    def as_json(self, index: int) -> dict[str, object]:
        """The listing as sent to the page: ``index``, ``name``, ``id_name``, ``params``, ``problem``."""
        params = self.ident.params if self.ident else {}
        return {"index": index, "name": self.name, "id_name": self.ident.name if self.ident else None,
                "params": {name: dict(args) for name, args in params.items()}, "problem": self.problem}


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
        """Every listing, as sent to the page, with the parameters the command line sets (``options``)."""
        return [{**listing.as_json(index), "options": dict(spec.options)}
                for index, (listing, spec) in enumerate(zip(self.listings, self.specs))]

    async def probe(self, index: int) -> None:
        """Start engine ``index`` once to learn its ``id`` and parameters (or its problem), then end it."""
        slot = EngineSlot(self, index)
        try:
            await slot.start()
        except EngineError:
            pass  # start() noted the problem in the listing
        finally:
            await slot.close()


class EngineSlot:
    """One engine process for one page, started on first use (see :meth:`start`)."""

    def __init__(self, catalog: EngineCatalog, index: int) -> None:
        self.catalog = catalog
        self.index = index
        self.spec = catalog.spec(index)
        self._client: HubClient | None = None
        self._writing = asyncio.Lock()
        self._values = dict(self.spec.options)  # parameters set, in the handshake and after
        self._game: int | None = None  # the game number of the last new-game
        self._closed = False
        self.searching = False

    @property
    def started(self) -> bool:
        """Whether the process is running and through its handshake."""
        return self._client is not None

    @property
    def settings(self) -> dict[str, str]:
        """The parameters set by the handshake (the command line's ``option.NAME``) and by
        :meth:`ensure_param` since (name -> value)."""
        return dict(self._values)

    @property
    def params(self) -> dict[str, dict[str, str]]:
        """The parameters the running engine declared (empty before :meth:`start`)."""
        return self._client.id.params if self._client else {}

    async def start(self) -> EngineId:
        """The process, started and through its handshake if it was not yet.

        Raises :class:`EngineError` (the reason is also kept in the catalog's listing).
        """
        if self._client is not None:
            return self._client.id
        listing = self.catalog.listings[self.index]
        client: HubClient | None = None
        try:
            client = await asyncio.to_thread(HubClient, self.spec.command, cwd=self.spec.cwd,
                                             label=self.spec.name)
            ident = await asyncio.to_thread(client.handshake, self.spec.options, timeout=HANDSHAKE_TIMEOUT,
                                            variant=VARIANT)
        except EngineError as error:
            listing.problem = str(error)
            if client is not None:
                await asyncio.to_thread(client.close, 0.2)
            raise
        if self._closed:  # closed while starting: the process must not outlive the slot
            await asyncio.to_thread(client.close, 0.2)
            raise EngineCrashed(f"{self.spec.name}: closed while starting")
        listing.ident, listing.problem = ident, None
        self._client = client
        return ident

    def tail(self) -> list[str]:
        """The last lines exchanged with the engine (none before it started)."""
        return self._client.tail() if self._client else []

    def _running(self) -> HubClient:
        if self._client is None:
            raise RuntimeError(f"{self.spec.name}: not started")
        return self._client

    async def ensure_param(self, name: str, value: str) -> None:
        """``set-param`` when the engine declares ``name`` and it does not hold ``value`` yet
        (a parameter the engine does not declare is left alone)."""
        client = self._running()
        declared = client.id.params.get(name)
        if declared is None or self._values.get(name, declared.get("value")) == value:
            return
        async with self._writing:
            await asyncio.to_thread(client.set_param, name, value)
        self._values[name] = value

    async def new_game(self, number: int) -> None:
        """``new-game`` once for each game ``number`` (the caller's count), so the engine forgets the others."""
        client = self._running()
        if self._game == number:
            return
        async with self._writing:
            await asyncio.to_thread(client.new_game)
        self._game = number

    async def search(self, position: str, moves: Sequence[str], level: Mapping[str, object], mode: str,
                     timeout: float, on_info: Callable[[dict[str, str]], None]) -> SearchReport:
        """One search (``go MODE``), waited for in a worker thread; ``on_info`` gets each ``info``
        line's arguments on the event loop, before the result comes back.

        Raises :class:`EngineError` as :meth:`HubClient.finish_search` does.
        """
        client = self._running()
        loop = asyncio.get_running_loop()

        def relay(args: dict[str, str]) -> None:
            loop.call_soon_threadsafe(on_info, args)

        async with self._writing:
            started = await asyncio.to_thread(client.start_search, position, moves, level, mode)
            self.searching = True
        try:
            return await asyncio.to_thread(client.finish_search, started, timeout, relay)
        finally:
            self.searching = False

    async def stop(self) -> None:
        """``stop`` the running search, if any (an engine already gone is left to the search's error)."""
        if self._client is None or not self.searching:
            return
        async with self._writing:
            try:
                await asyncio.to_thread(self._client.stop)
            except EngineError:
                pass

    async def close(self) -> None:
        """End the process (``quit``, then its process group is killed); a search waiting on it fails,
        and a start still under way ends its process too."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await asyncio.to_thread(client.close, 0.5)
