"""``pedina gui`` under pages that read slowly or load large files (issue 30, items 2 and 10): a page
that never reads holds one state in the server's memory, not every one it was sent, and a bounded
queue of the other messages; the game's long lists go to the page once, then as changes; a PDN is
read off the event loop, and a game too long to show is refused."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import tracemalloc
from collections.abc import Callable, MutableMapping
from typing import Any

import pytest
from websockets.sync.client import connect
from websockets.typing import Origin

from pedina import Board, read_game
from pedina.pdn import PdnError, write_game
from pedina.protocol.gui.engines import EngineCatalog
from pedina.protocol.gui.outbox import MAX_QUEUED, MAX_SET, Outbox, list_changes
from pedina.protocol.gui.server import create_app
from test_gui import TOKEN, FakePage, live_server, random_spec, run
from timing import HANG

PORT = 8765


def played_game(plies: int) -> str:
    """A game of at most ``plies`` plies from the start (each side plays its first legal move), as PDN."""
    board = Board()
    while len(board.moves) < plies and board.outcome() is None:
        board.push(board.legal_moves()[0])
    return write_game(board, {"Event": "test"}, "*")


GAME = played_game(120)


def plies_of(text: str) -> int:
    return len(read_game(text).board.moves)


async def serve_page(inbound: list[dict[str, Any]], on_receive: Callable[[int], None],
                     reading: bool) -> list[MutableMapping[str, Any]]:
    """Run one WebSocket connection of the application to its end: the page sends the ASGI
    events ``inbound`` (then disconnects), ``on_receive(n)`` is called when the server asks for
    its n-th event (all before it handled), and the page reads what it is sent only if
    ``reading`` (otherwise its first message never leaves: a socket nobody reads). Returns the
    ASGI messages the page got."""
    app = create_app(EngineCatalog([random_spec()]), TOKEN, PORT, probe=False)
    scope = {"type": "websocket", "path": "/ws", "raw_path": b"/ws", "query_string": f"token={TOKEN}".encode(),
             "headers": [(b"host", f"127.0.0.1:{PORT}".encode()), (b"origin", f"http://127.0.0.1:{PORT}".encode())],
             "scheme": "ws", "server": ("127.0.0.1", PORT), "client": ("127.0.0.1", 1), "root_path": "",
             "subprotocols": [], "app": None}
    events = [{"type": "websocket.connect"}, *inbound]
    asked = 0
    got: list[MutableMapping[str, Any]] = []
    never = asyncio.Event()

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        on_receive(asked)
        return events[asked - 1] if asked <= len(events) else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: MutableMapping[str, Any]) -> None:
        got.append(message)
        if message["type"] == "websocket.send" and not reading:
            await never.wait()

    await asyncio.wait_for(app(scope, receive, send), HANG)
    return got


def text_event(**message: object) -> dict[str, Any]:
    return {"type": "websocket.receive", "text": json.dumps(message)}


def test_the_outbox_keeps_the_latest_of_each_kind_and_a_bounded_queue_of_the_rest() -> None:
    async def scenario() -> None:
        outbox = Outbox()
        outbox.put({"type": "state", "cursor": 0})
        outbox.put({"type": "error", "message": "first"})
        for cursor in range(1, 10_000):
            outbox.put({"type": "state", "cursor": cursor})
            outbox.put({"type": "analysis", "lines": cursor})
        for number in range(2 * MAX_QUEUED):
            outbox.put({"type": "notice", "message": str(number)})
        assert len(outbox) == 2 + MAX_QUEUED and outbox.dropped == MAX_QUEUED + 1
        sent = [await outbox.get() for _ in range(len(outbox))]
        # The latest state and analysis, where the first ones were put; the newest notices, in order.
        assert sent[:2] == [{"type": "state", "cursor": 9_999}, {"type": "analysis", "lines": 9_999}]
        assert [message["message"] for message in sent[2:]] == [str(n) for n in range(MAX_QUEUED, 2 * MAX_QUEUED)]
        waiting = asyncio.ensure_future(outbox.get())
        await asyncio.sleep(0)
        assert not waiting.done()  # nothing to send: get waits for the next put
        outbox.put({"type": "welcome"})
        assert await asyncio.wait_for(waiting, HANG) == {"type": "welcome"}

    asyncio.run(scenario())


def test_a_page_that_never_reads_keeps_one_state_waiting_not_all() -> None:
    # Each goto makes a state of the whole game; on 7ffa4be every one waited in an unbounded queue.
    gotos = 300
    inbound = [text_event(type="load_pdn", text=GAME)] + [text_event(type="goto", ply=n % 2) for n in range(2 * gotos)]
    memory: dict[int, int] = {}

    def on_receive(asked: int) -> None:
        if asked in (2 + gotos, 2 + 2 * gotos):  # after the load and `gotos` gotos, then `gotos` more
            memory[asked] = tracemalloc.get_traced_memory()[0]

    async def state_size() -> int:
        page = FakePage([random_spec()])
        await page.send(type="load_pdn", text=GAME)
        return len(json.dumps(await page.expect("state")))

    size = asyncio.run(state_size())
    tracemalloc.start()
    try:
        asyncio.run(serve_page(inbound, on_receive, reading=False))
    finally:
        tracemalloc.stop()
    growth = memory[2 + 2 * gotos] - memory[2 + gotos]
    assert size > 10_000
    assert growth < 10 * size, f"{growth} bytes more after {gotos} gotos (a state is {size} bytes of JSON)"


def apply_changes(old: list[Any], changes: dict[str, Any]) -> list[Any]:
    """What app.js does with a list's changes."""
    new = old[:changes["keep"]]
    for index, value in changes["set"]:
        new[index] = value
    added: list[Any] = changes["add"]
    return new + added


def test_list_changes_rebuild_the_list() -> None:
    rng = random.Random(3)
    base = list(range(300))
    cases = [([], base), (base, base), (base, base[:100]), (base, base + [7, 8]), (base[:100], base),
             (base, base[:50] + [-1] + base[51:]), (base, [-n for n in base]), (base, [])]
    for _ in range(200):
        new = list(base[:rng.randrange(320)]) + [rng.randrange(5) for _ in range(rng.randrange(20))]
        for _ in range(rng.randrange(100)):
            if new:
                new[rng.randrange(len(new))] = -1
        cases.append((base, new))
    for old, new in cases:
        changes = list_changes(old, new)
        assert apply_changes(old, changes) == new
        replaced = changes["set"]
        assert isinstance(replaced, list) and len(replaced) <= MAX_SET
    assert list_changes(base, base) == {"keep": 300, "set": [], "add": []}
    assert list_changes(base, base[:50] + [-1] + base[51:]) == {"keep": 300, "set": [[50, -1]], "add": []}


def test_a_long_game_is_sent_once_then_only_what_changed() -> None:
    # On 7ffa4be every state carried the whole move list, comments and scores.
    with live_server([random_spec()]) as host:
        with connect(f"ws://{host}/ws?token={TOKEN}", origin=Origin(f"http://{host}")) as websocket:
            lists: dict[str, list[Any]] = {}

            def next_state() -> tuple[dict[str, Any], int]:
                while True:
                    text = websocket.recv(timeout=HANG)
                    message = json.loads(text)
                    for key in ("moves", "comments", "evals"):
                        if key in message:
                            lists[key] = message[key] = apply_changes(lists.get(key, []), message[key])
                    if message["type"] == "state":
                        return message, len(text)

            first, _ = next_state()
            assert first["moves"] == [] and first["evals"] == [None]
            websocket.send(json.dumps({"type": "load_pdn", "text": GAME}))
            loaded, loaded_size = next_state()
            plies = len(loaded["moves"])
            assert plies == plies_of(GAME) and len(loaded["evals"]) == plies + 1
            sizes = []
            for ply in (0, 1, plies):
                websocket.send(json.dumps({"type": "goto", "ply": ply}))
                state, size = next_state()
                assert state["cursor"] == ply and state["moves"] == loaded["moves"]
                sizes.append(size)
            for ply in (plies, 3):  # a move at the end, then one in the middle (the moves after it go)
                websocket.send(json.dumps({"type": "goto", "ply": ply}))
                shown, _ = next_state()
                move = shown["legal"][0]
                websocket.send(json.dumps({"type": "move", "start": move["start"], "path": move["path"]}))
                played, _ = next_state()
                assert played["moves"] == loaded["moves"][:ply] + [move]
                assert len(played["evals"]) == len(played["comments"]) + 1 == ply + 2
    assert all(size < loaded_size // 8 for size in sizes), (sizes, loaded_size)


def test_reading_a_pdn_leaves_the_other_pages_served(monkeypatch: pytest.MonkeyPatch) -> None:
    # On 7ffa4be the PDN was read on the event loop: no other page was answered until it was read.
    from pedina.pdn import read_games as read
    go_on = threading.Event()
    released: list[bool] = []

    def slow_read(text: str, on_error: Callable[[PdnError], None] | None = None) -> Any:
        released.append(go_on.wait(HANG))
        return read(text, on_error)

    monkeypatch.setattr("pedina.protocol.gui.table.read_games", slow_read)

    async def main() -> None:
        loader, other = FakePage([random_spec()]), FakePage([random_spec()])
        loading = asyncio.create_task(loader.send(type="load_pdn", text=GAME))
        await other.send(type="setup", position="W:W31:B1")  # answered while the PDN is being read
        assert (await other.expect("state"))["fen"] == "W:W31:B1"
        go_on.set()
        await loading
        assert len((await loader.expect("state"))["moves"]) == plies_of(GAME)
        await asyncio.gather(loader.table.close(), other.table.close())

    asyncio.run(main())
    assert released == [True]


def test_a_game_too_long_to_show_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # On 7ffa4be a game of any length was loaded (a 223,460-ply one made 17.3 MB states).
    monkeypatch.setattr("pedina.protocol.gui.table.MAX_GAME_PLIES", 20, raising=False)
    long, short = played_game(21), played_game(20)
    assert (plies_of(long), plies_of(short)) == (21, 20)

    async def body(page: FakePage) -> None:
        assert await page.error(json.dumps({"type": "load_pdn", "text": long})) == \
            "game 1 of the PDN has 21 plies: at most 20 can be shown"
        await page.send(type="load_pdn", text=short + "\n" + long)
        assert len((await page.expect("pdn_games"))["games"]) == 2
        assert await page.error(json.dumps({"type": "pick_pdn", "index": 1})) == \
            "game 2 of the PDN has 21 plies: at most 20 can be shown"
        await page.send(type="pick_pdn", index=0)
        assert len((await page.expect("state"))["moves"]) == 20
    run(body, [random_spec()])
