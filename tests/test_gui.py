"""``pedina gui`` without a browser: the guard (token, origin, host), the page's messages as a
:class:`Table` handles them (bad ones refused, games, clocks, analysis, PDN), engine failures,
and the engines ending with the server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest
import uvicorn
from click.testing import CliRunner
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect
from websockets.typing import Origin

from pedina import Board, Position, read_game, write_game
from pedina.protocol import gui as gui_module
from pedina.protocol.cli import main
from pedina.protocol.gui import DEFAULT_ENGINE, gui_engines
from pedina.protocol.gui.comments import comment_score
from pedina.protocol.gui.engines import EngineCatalog
from pedina.protocol.gui.server import cookie_name, create_app, is_loopback
from pedina.protocol.gui.table import Table, pv_json, rules_reason, score_json, white_view
from pedina.protocol.match.game import EngineSpec
from pedina.scores import PROVEN, Score
from test_dxp import Server, start_server
from test_pdn import VARIATIONS
from timing import HANG, allowed, wait_until

FIXTURE = str(Path(__file__).parent / "fixtures" / "random_engine.py")
#: CI runs the slow tests at a reduced size.
CI = os.environ.get("PEDINA_CI") == "1"
TOKEN = "t0ken-for-the-tests"


def random_spec(name: str = "Random", **options: str) -> EngineSpec:
    """The fixture engine (random legal moves; ``mode`` makes it misbehave)."""
    return EngineSpec(name, f"{sys.executable} {FIXTURE}", {"seed": "1", **options})


Message = dict[str, Any]


class FakePage:
    """A table driven as the page drives it: JSON messages in, and the messages sent back read
    with a timeout (every one is kept in ``seen``)."""

    def __init__(self, specs: list[EngineSpec]) -> None:
        self.inbox: asyncio.Queue[Message] = asyncio.Queue()
        self.table = Table(EngineCatalog(specs), self.inbox.put_nowait)
        self.seen: list[Message] = []
        self.state: Message = {}

    async def send(self, **message: object) -> None:
        await self.table.handle(json.dumps(message))

    async def send_text(self, text: str) -> None:
        await self.table.handle(text)

    async def expect(self, kind: str, until: Callable[[Message], bool] = lambda m: True,
                     timeout: float = HANG) -> Message:
        """The next message of type ``kind`` that satisfies ``until`` (others are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {kind} message in time; last seen: "
                                     f"{[m['type'] + ':' + str(m.get('message', '')) for m in self.seen[-8:]]}")
            try:
                message = await asyncio.wait_for(self.inbox.get(), left)
            except asyncio.TimeoutError:
                continue
            self.seen.append(message)
            if message["type"] == "state":
                self.state = message
            if message["type"] == kind and until(message):
                return message

    async def error(self, text: str) -> str:
        """Send ``text`` and return the error message it gets."""
        await self.send_text(text)
        return str((await self.expect("error"))["message"])


def run(body: Callable[[FakePage], Coroutine[Any, Any, None]], specs: list[EngineSpec]) -> None:
    """Run ``body`` with a fresh table, closing it (and its engines) afterwards."""
    async def main_task() -> None:
        page = FakePage(specs)
        page.table.welcome()
        await page.expect("state")
        try:
            await body(page)
        finally:
            await page.table.close()
    asyncio.run(main_task())


def legal_choice(state: Message, index: int = 0) -> Message:
    moves = state["legal"]
    assert moves, state
    move: Message = moves[index % len(moves)]
    return move


# -- the guard ---------------------------------------------------------------------------


@contextlib.contextmanager
def live_server(specs: list[EngineSpec]) -> Iterator[str]:
    """The application served by uvicorn in a thread, on a free loopback port; yields ``host:port``."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    app = create_app(EngineCatalog(specs), TOKEN, port, probe=False)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    wait_until(lambda: server.started, what="the server's start")
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()


def http_get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """Status, headers and body of a GET (an error status is returned, not raised)."""
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=HANG) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_a_request_without_the_token_is_refused() -> None:
    with live_server([random_spec()]) as host:
        status, _, body = http_get(f"http://{host}/")
        assert status == 403 and "token" in body
        assert http_get(f"http://{host}/?token=wrong")[0] == 403
        assert http_get(f"http://{host}/static/app.js")[0] == 403
        status, headers, body = http_get(f"http://{host}/?token={TOKEN}")
        assert status == 200 and '<svg id="board"' in body
        assert "default-src 'none'" in headers["content-security-policy"]
        cookie = headers["set-cookie"].split(";")[0]
        assert cookie == f"{cookie_name(int(host.split(':')[1]))}={TOKEN}"
        # The cookie the page got lets its files load; nothing else is served.
        assert http_get(f"http://{host}/static/app.js", {"Cookie": cookie})[0] == 200
        status, headers, _ = http_get(f"http://{host}/static/style.css", {"Cookie": cookie})
        assert status == 200 and headers["content-type"].startswith("text/css")
        assert http_get(f"http://{host}/static/index.html", {"Cookie": cookie})[0] == 404
        assert http_get(f"http://{host}/static/..%2Fserver.py", {"Cookie": cookie})[0] == 404
        assert http_get(f"http://{host}/static/app.js", {"Cookie": "pedina-gui-1=" + TOKEN})[0] == 403
        with pytest.raises(InvalidStatus) as refused:
            with connect(f"ws://{host}/ws", origin=Origin(f"http://{host}")):
                pass
        assert refused.value.response.status_code == 403


def test_other_origins_and_hosts_are_refused() -> None:
    with live_server([random_spec()]) as host:
        page = f"http://{host}/?token={TOKEN}"
        assert http_get(page, {"Origin": "http://evil.example"})[0] == 403
        assert http_get(page, {"Origin": f"http://{host}"})[0] == 200
        # DNS rebinding: a hostile name that resolves to 127.0.0.1 still sends its own Host.
        assert http_get(page, {"Host": f"evil.example:{host.split(':')[1]}"})[0] == 403
        assert http_get(page, {"Host": "127.0.0.1:9"})[0] == 403
        for origin in ("http://evil.example", None):
            with pytest.raises(InvalidStatus) as refused:
                with connect(f"ws://{host}/ws?token={TOKEN}", origin=Origin(origin) if origin else None):
                    pass
            assert refused.value.response.status_code == 403
        with connect(f"ws://{host}/ws?token={TOKEN}", origin=Origin(f"http://{host}")) as websocket:
            welcome = json.loads(websocket.recv(timeout=HANG))
            assert welcome["type"] == "welcome" and welcome["engines"][0]["name"] == "Random"
            assert json.loads(websocket.recv(timeout=HANG))["type"] == "state"
            websocket.send(b"\x00binary")
            assert json.loads(websocket.recv(timeout=HANG)) == {"type": "error", "message": "messages must be JSON text"}


def test_a_token_beyond_ascii_is_refused_like_any_wrong_token() -> None:
    with live_server([random_spec()]) as host:
        port = int(host.split(":")[1])
        assert http_get(f"http://{host}/?token=%C3%A9")[0] == 403
        assert http_get(f"http://{host}/static/app.js", {"Cookie": f"{cookie_name(port)}=\u00e9"})[0] == 403
        for address in (f"ws://{host}/ws?token=%C3%A9", f"ws://{host}/ws?token={TOKEN}%C3%A9"):
            with pytest.raises(InvalidStatus) as refused:
                with connect(address, origin=Origin(f"http://{host}")):
                    pass
            assert refused.value.response.status_code == 403


def test_a_message_nested_too_deeply_is_refused_and_the_connection_kept() -> None:
    with live_server([random_spec()]) as host:
        with connect(f"ws://{host}/ws?token={TOKEN}", origin=Origin(f"http://{host}")) as websocket:
            assert json.loads(websocket.recv(timeout=10))["type"] == "welcome"
            assert json.loads(websocket.recv(timeout=10))["type"] == "state"
            websocket.send("[" * 100_000 + "]" * 100_000)
            assert json.loads(websocket.recv(timeout=10)) == {"type": "error", "message": "a message nested too deeply"}
            websocket.send(json.dumps({"type": "move", "start": 22, "path": [18]}))
            assert json.loads(websocket.recv(timeout=10))["fen"].startswith("B:W18,")


def test_loopback_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("[::1]")
    assert is_loopback("127.0.0.2") and not is_loopback("0.0.0.0") and not is_loopback("example.org")


# -- the command line --------------------------------------------------------------------


def test_engine_options_parse_like_the_match_runner() -> None:
    assert gui_engines(()) == [DEFAULT_ENGINE]
    specs = gui_engines(("cmd=pedina hub\0name=A\0option.skill=3", "cmd=other\0name=B"))
    assert [(spec.name, spec.command, spec.options) for spec in specs] == [
        ("A", "pedina hub", {"skill": "3"}), ("B", "other", {})]
    runner = CliRunner()
    for args, error in ((["--engine", "cmd=x", "st=1"], "the time is chosen in the page"),
                        (["--engine", "cmd=a", "name=A", "--engine", "cmd=b", "name=A"], "two engines are named 'A'"),
                        (["--engine", "name=A"], "no cmd= or dxp= given"),
                        (["--engine", "dxp=127.0.0.1:0"], "bad DXP address"),
                        (["--engine", "cmd=x", "colour=red"], "unknown engine setting 'colour'")):
        result = runner.invoke(main, ["gui", *args])
        assert result.exit_code == 1 and error in result.output, result.output


def test_a_port_in_use_is_one_line_of_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["gui", "--no-browser", "--port", str(port)])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot listen on 127.0.0.1:{port}: Address already in use")


def test_without_the_web_stack_the_command_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gui_module, "missing_web_stack", lambda: ["starlette", "uvicorn"])
    result = CliRunner().invoke(main, ["gui", "--no-browser"])
    assert result.exit_code == 1
    assert 'needs starlette, uvicorn: pip install "pedina[gui]"' in result.output


# -- what the page is told -------------------------------------------------------------


def test_why_the_rules_ended_a_game() -> None:
    def reason(fen: str, moves: list[str], **rules: int) -> str:
        board = Board(fen, **rules)
        for text in moves:
            board.push_text(text)
        outcome = board.outcome()
        assert outcome is not None
        return rules_reason(board, outcome)

    assert reason("B:W9:B1", ["1-5", "9x2"]) == "Black has no pieces left"
    assert reason("B:W5,10:B1", []) == "Black cannot move"
    kings = ["22-18", "5-1", "18-22", "1-5"]
    assert reason("W:WK22:BK5,12", kings * 2) == "the same position 3 times (repetition)"
    assert reason("W:WK22:BK5,12", kings, draw_plies=4, repetitions=9) == (
        "4 plies without a man move or a capture (the 40-move rule)")


def test_scores_and_principal_variations_for_the_page() -> None:
    assert white_view(Score(25), True) == Score(25) and white_view(Score(25), False) == Score(-25)
    assert white_view(None, True) is None
    assert score_json(Score(-12)) == {"white": -12, "result": 0, "text": "-0.12"}
    assert score_json(Score(9997, PROVEN)) == {"white": 9997, "result": 1, "text": "White wins in 3 plies"}
    assert score_json(Score(-9995, PROVEN)) == {"white": -9995, "result": -1, "text": "Black wins in 5 plies"}
    database = Score.from_hub({"score": "94.88", "egdb": "win"})
    assert database is not None
    assert score_json(white_view(database, False)) == {
        "white": -9488, "result": -1, "text": "Black wins (endgame database)"}
    start = Position.start()
    pv = pv_json(start, "21-17 10-14 17-13 9x18x13 9-9 1-5")
    assert [move["text"] for move in pv] == ["21-17", "10-14", "17-13", "9x18"]  # cut at the unreadable move
    assert pv[3] == {"start": 9, "path": [18], "captured": [13], "text": "9x18", "hub": "9x18x13"}
    assert pv_json(start, "") == [] and pv_json(start, "1-5") == []


# -- the page's messages -----------------------------------------------------------------


def test_bad_messages_get_an_error_and_the_table_goes_on() -> None:
    async def body(page: FakePage) -> None:
        assert "not a JSON message" in await page.error("{not json")
        assert "JSON object with a type" in await page.error("[1, 2]")
        assert "JSON object with a type" in await page.error('{"type": 7}')
        assert "unknown message type 'format_disk'" in await page.error('{"type": "format_disk"}')
        assert "start must be a whole number from 1 to 32" in await page.error(
            '{"type": "move", "start": 99, "path": [18]}')
        assert "start must be a whole number" in await page.error('{"type": "move", "start": true, "path": [18]}')
        assert "path must be a list" in await page.error('{"type": "move", "start": 22, "path": ["18"]}')
        assert "path must be a list" in await page.error('{"type": "move", "start": 22, "path": []}')
        assert "not a move" in await page.error('{"type": "move", "start": 22, "path": [30]}')
        assert "22-26 is not a legal move" in await page.error('{"type": "move", "start": 22, "path": [26]}')
        assert "ply must be a whole number from 0 to 0" in await page.error('{"type": "goto", "ply": 5}')
        assert "there is no move to take back" in await page.error('{"type": "takeback"}')
        assert "engine must be a whole number from 0 to 0" in await page.error(
            '{"type": "new_game", "mode": "play", "engine": 3, "colour": "white", '
            '"time": {"kind": "move", "seconds": 1}}')
        assert "seconds must be a number from 0.05 to 3600" in await page.error(
            '{"type": "new_game", "mode": "play", "engine": 0, "colour": "white", '
            '"time": {"kind": "move", "seconds": 1e999}}')
        assert "a clock needs some time" in await page.error(
            '{"type": "watch", "white": 0, "black": 0, "time": {"kind": "clock", "minutes": 0, "increment": 0}}')
        assert "position must be a text" in await page.error('{"type": "setup", "position": ["/etc/passwd"]}')
        assert "cannot read the PDN" in await page.error(json.dumps({"type": "load_pdn",
                                                                     "text": '[FEN "W:W99:B1"]\n\n1. 23-19 *'}))
        assert "data must be a file's bytes in base64" in await page.error('{"type": "load_pdn", "data": "@@"}')
        assert "data must be a text" in await page.error('{"type": "load_pdn", "data": 5}')
        assert "no PDN file with several games" in await page.error('{"type": "pick_pdn", "index": 0}')
        assert "nothing to stop" in await page.error('{"type": "stop"}')
        assert "no game against an engine to resign" in await page.error('{"type": "resign"}')
        # Still serving: a legal move is played.
        await page.send(type="move", start=22, path=[18])
        state = await page.expect("state")
        assert state["fen"].startswith("B:W18,") and state["moves"][0]["text"] == "22-18"
    run(body, [random_spec()])


def test_setup_refuses_an_impossible_position_and_offers_the_legal_moves() -> None:
    async def body(page: FakePage) -> None:
        error = await page.error(json.dumps({"type": "setup", "position": "W:W2,21:B5"}))
        assert "impossible position" in error and "white man on square 2" in error
        error = await page.error(json.dumps({"type": "setup", "position": "Wbbbbbbbbbbbbbeeeeeewwwwwwwwwwwwww"}))
        assert "impossible position" in error
        await page.send(type="setup", position="W:W22,K30:B18,14")
        state = await page.expect("state")
        assert state["mode"] == "free" and state["fen"] == "W:W22,K30:B14,18"
        # 22x13x18 is compulsory (a man may capture forward only).
        assert [move["hub"] for move in state["legal"]] == ["22x13x18"]
        assert state["legal"][0]["path"] == [13] and state["legal"][0]["captured"] == [18]
        assert "a capture is compulsory: 22x13" in await page.error(
            json.dumps({"type": "move", "start": 30, "path": [26]}))
    run(body, [random_spec()])


def test_a_game_against_the_engine_to_its_end_then_saved_and_loaded_back() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black",
                        time={"kind": "move", "seconds": 0.1})
        state = await page.expect("state", lambda m: m["mode"] == "play")
        assert state["players"] == {"white": "Random", "black": "Player"} and state["human"] == "black"
        for turn in range(400):
            state = await page.expect("state", lambda m: m["result"] is not None or bool(m["legal"]))
            if state["result"]:
                break
            move = legal_choice(state, turn * 7)
            await page.send(type="move", start=move["start"], path=move["path"])
        assert state["result"] is not None, "the game did not end"
        result = state["result"]
        assert result["result"] in ("1-0", "0-1", "1/2-1/2") and result["reason"]
        assert "takeback" in state["can"]
        await page.send(type="save_pdn")
        text = str((await page.expect("pdn"))["text"])
        game = read_game(text)
        assert [move.hub() for move in game.board.moves] == [move["hub"] for move in state["moves"]]
        assert game.headers["White"] == "Random" and game.headers["Black"] == "Player"
        assert game.result == result["result"]
        await page.send(type="load_pdn", text=text)
        loaded = await page.expect("state", lambda m: m["mode"] == "free")
        assert loaded["moves"] == state["moves"] and loaded["result"] == result
        await page.send(type="save_pdn")
        again = (await page.expect("pdn"))["text"]
        assert again == text, (again, text)
    run(body, [random_spec()])


def test_several_games_in_a_pdn_file_are_offered_to_choose() -> None:
    text = ('[Event "one"]\n[White "A"]\n[Black "B"]\n\n1. 22-18 10-14 *\n\n'
            '[Event "two"]\n[FEN "B:W18:B10"]\n\n1... 10-14 2. 18x11 1-0\n')
    async def body(page: FakePage) -> None:
        await page.send(type="load_pdn", text=text)
        games = (await page.expect("pdn_games"))["games"]
        assert len(games) == 2 and games[0].startswith("1. A - B (one)") and "1-0" in games[1]
        assert "index must be a whole number from 0 to 1" in await page.error('{"type": "pick_pdn", "index": 2}')
        await page.send(type="pick_pdn", index=1)
        state = await page.expect("state")
        assert state["start_fen"] == "B:W18:B10" and [m["text"] for m in state["moves"]] == ["10-14", "18x11"]
        assert state["result"]["result"] == "1-0" and state["result"]["reason"] == "Black has no pieces left"
        assert "no PDN file with several games" in await page.error('{"type": "pick_pdn", "index": 0}')
    run(body, [random_spec()])


def test_a_broken_game_costs_only_itself_not_the_file() -> None:
    # Defect 15 in the page: one bad game made the whole file unreadable ("cannot read the PDN").
    text = ('[Event "one"]\n\n1. 22-18 10-14 *\n\n'
            '[Event "two"]\n\n1. 22-18 10-14 2. 99-98 *\n\n'
            '[Event "three"]\n\n1. 21-17 *\n')
    async def body(page: FakePage) -> None:
        await page.send(type="load_pdn", text=text)
        notice = str((await page.expect("notice"))["message"])
        assert "game 2" in notice and "kept up to ply 2" in notice, notice
        games = (await page.expect("pdn_games"))["games"]
        assert len(games) == 3 and "(two)" in games[1] and "2 plies" in games[1]
        await page.send(type="pick_pdn", index=1)
        assert [m["text"] for m in (await page.expect("state"))["moves"]] == ["22-18", "10-14"]

        await page.send(type="load_pdn", text="1. 22-18 10-14 2. 18-1")  # a file cut in its last move
        assert "game 1" in str((await page.expect("notice"))["message"])
        assert len((await page.expect("state"))["moves"]) == 2
    run(body, [random_spec()])


def test_a_game_s_variations_are_shown_saved_and_dropped_with_the_moves_they_follow() -> None:
    # On 7585fe0 a loaded game lost its variations: the state had none, and save_pdn wrote none.
    async def body(page: FakePage) -> None:
        await page.send(type="load_pdn", text=VARIATIONS)
        state = await page.expect("state", lambda m: len(m["moves"]) == 3)
        assert state["comments"] == ["main", "", ""]
        assert state["variations"] == [
            ["(1. 21-17 {instead} 10-14 (1... 9-13 {deeper} 2. 22-18 {deepest}) 2. 24-20)"],
            ["(1... 12-16 {black} 2. 23-19)"], ["(2. 21-17)", "(2. 24-20 {a second one})"]]
        await page.send(type="save_pdn")
        saved = read_game(str((await page.expect("pdn"))["text"]))
        loaded = read_game(VARIATIONS)
        assert saved.variations == loaded.variations and saved.comments == loaded.comments
        await page.send(type="goto", ply=1)
        await page.expect("state", lambda m: m["cursor"] == 1)
        move = next(move for move in page.state["legal"] if move["text"] != "10-14")
        await page.send(type="move", start=move["start"], path=move["path"])
        state = await page.expect("state", lambda m: m["cursor"] == 2)
        assert state["variations"] == [state["variations"][0], []] and state["comments"] == ["main", ""]
        await page.send(type="save_pdn")
        saved = read_game(str((await page.expect("pdn"))["text"]))
        assert list(saved.variations) == [0] and saved.variations[0] == loaded.variations[0]
    run(body, [random_spec()])


def test_takeback_and_draw_offer_against_the_engine() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="white",
                        time={"kind": "move", "seconds": 0.1})
        state = await page.expect("state", lambda m: bool(m["legal"]))
        assert not state["can"]["takeback"]
        assert "there is no move to take back" in await page.error('{"type": "takeback"}')
        for _ in range(2):
            move = legal_choice(state)
            await page.send(type="move", start=move["start"], path=move["path"])
            state = await page.expect("state", lambda m: bool(m["legal"]) and len(m["moves"]) % 2 == 0)
        assert len(state["moves"]) == 4 and state["can"]["takeback"]
        await page.send(type="takeback")
        state = await page.expect("state", lambda m: bool(m["legal"]))
        assert len(state["moves"]) == 2 and state["white_to_move"]
        # The fixture scores material: level, so the engine takes the draw.
        await page.send(type="draw")
        assert "accepts the draw" in (await page.expect("notice"))["message"]
        state = await page.expect("state", lambda m: m["result"] is not None)
        assert state["result"] == {"result": "1/2-1/2", "reason": "agreed (Random accepted the offer)"}
        assert state["legal"] == [] and "the game is over" in await page.error(
            '{"type": "move", "start": 22, "path": [18]}')
    run(body, [random_spec()])


def test_the_draw_is_declined_when_the_engine_is_better_and_resigning_ends_the_game() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black",
                        time={"kind": "move", "seconds": 0.1})
        state = await page.expect("state", lambda m: bool(m["legal"]))
        await page.send(type="draw")
        assert (await page.expect("notice"))["message"] == "Random declines the draw"
        await page.send(type="resign")
        state = await page.expect("state", lambda m: m["result"] is not None)
        assert state["result"] == {"result": "1-0", "reason": "Black resigns"}
        assert state["legal"] == [] and state["why_not"] == "the game is over"
    run(body, [random_spec(score="3.5")])


def test_the_persons_flag_falls() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="white",
                        time={"kind": "clock", "minutes": 0, "increment": 0.4})
        state = await page.expect("state")
        clocks = state["clocks"]
        # The state goes out as the clock starts: within 10 ms on an idle machine, allowed for load.
        assert clocks["running"] == "white" and 0.4 - allowed(0.01) < clocks["white"] <= 0.4
        assert clocks["black"] == 0.4
        state = await page.expect("state", lambda m: m["result"] is not None)
        assert state["result"] == {"result": "0-1", "reason": "White lost on time"}
    run(body, [random_spec()])


def test_a_game_lost_on_time_shows_no_time_left_and_cannot_be_taken_back() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="white",
                        time={"kind": "clock", "minutes": 0, "increment": 2})
        state = await page.expect("state", lambda m: bool(m["legal"]))
        move = legal_choice(state)
        await page.send(type="move", start=move["start"], path=move["path"])
        state = await page.expect("state", lambda m: m["result"] is not None, timeout=20)
        assert state["result"] == {"result": "0-1", "reason": "White lost on time"} and len(state["moves"]) == 2
        assert state["clocks"]["white"] == 0.0 and state["clocks"]["running"] is None
        assert state["clocks"]["black"] > 0 and not state["can"]["takeback"]
        assert "White lost on time: start a new game" in await page.error('{"type": "takeback"}')
    run(body, [random_spec()])


def test_an_engine_that_hangs_on_a_clock_loses_on_time() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black",
                        time={"kind": "clock", "minutes": 0, "increment": 0.5})
        state = await page.expect("state", lambda m: m["result"] is not None)
        assert state["result"]["result"] == "0-1"
        assert state["result"]["reason"].startswith("White lost on time (Hanging did not answer")
        assert state["clocks"]["white"] == 0.0
    run(body, [random_spec("Hanging", mode="hang")])


def test_an_engine_crash_is_reported_and_the_table_goes_on() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="white",
                        time={"kind": "move", "seconds": 0.1})
        for _ in range(2):
            state = await page.expect("state", lambda m: bool(m["legal"]))
            move = legal_choice(state)
            await page.send(type="move", start=move["start"], path=move["path"])
        error = await page.expect("error")
        assert "Crashing: exited with code 3" in error["message"] and "> go think" in error["tail"]
        state = await page.expect("state", lambda m: m["failure"] is not None)
        assert state["can"]["engine_move"] and state["thinking"] is None and len(state["moves"]) == 3
        # A fresh process on request (it crashes again: the fixture crashes from ply 2 on).
        await page.send(type="engine_move")
        assert "exited with code 3" in (await page.expect("error"))["message"]
        await page.send(type="takeback")
        state = await page.expect("state", lambda m: m["failure"] is None and bool(m["legal"]))
        assert len(state["moves"]) == 2
        await page.send(type="new_game", mode="free")
        state = await page.expect("state", lambda m: m["mode"] == "free")
        await page.send(type="move", start=21, path=[17])
        assert (await page.expect("state"))["moves"][0]["text"] == "21-17"
    run(body, [random_spec("Crashing", mode="crash", after="2")])


def test_an_illegal_engine_move_is_reported() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black",
                        time={"kind": "move", "seconds": 0.1})
        error = await page.expect("error")
        assert "Cheat played an illegal move" in error["message"] and "< done move=1-2" in error["tail"]
    run(body, [random_spec("Cheat", mode="illegal")])


def test_two_engines_play_each_other_to_the_end() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="setup", position="W:W21-32:B1-12")
        await page.expect("state")
        await page.send(type="watch", white=0, black=1, time={"kind": "clock", "minutes": 1, "increment": 0})
        state = await page.expect("state", lambda m: m["mode"] == "watch")
        assert state["players"] == {"white": "R1", "black": "R2"} and state["legal"] == []
        state = await page.expect("state", lambda m: m["result"] is not None)
        assert len(state["moves"]) > 10 and state["mode"] == "free" and state["clocks"] is None
        assert state["players"] == {"white": "R1", "black": "R2"}
        assert all(score is not None for score in state["evals"][:-1])
    run(body, [random_spec("R1"), random_spec("R2", seed="2")])


def test_stopping_the_engines_returns_to_the_board() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="watch", white=0, black=0, time={"kind": "move", "seconds": 0.05})
        await page.expect("state", lambda m: len(m["moves"]) >= 4)
        await page.send(type="stop")
        state = await page.expect("state", lambda m: m["mode"] == "free")
        plies = len(state["moves"])
        # A window for a late engine move to show (the engines move every 0.02 s): it waits for
        # nothing, and a slow machine could only hide such a move, never fail the test.
        await asyncio.sleep(0.5)
        await page.send(type="goto", ply=0)
        state = await page.expect("state", lambda m: m["cursor"] == 0)
        assert len(state["moves"]) == plies and bool(state["legal"])
    run(body, [random_spec(delay="0.02", mode="slow")])


def test_analysis_lines_appear_update_and_stop() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="move", start=22, path=[18])
        await page.expect("state")
        await page.send(type="analyse", on=True, engine=0, lines=3)
        first = await page.expect("analysis", lambda m: len(m["lines"]) == 3)
        deeper = await page.expect("analysis", lambda m: int(m["stats"].get("depth", 0))
                                   > int(first["stats"]["depth"]))
        assert first["running"] and deeper["running"] and deeper["ply"] == 1
        line = deeper["lines"][0]
        assert line["pv"] and line["pv"][0]["start"] in range(1, 13)  # Black to move
        assert deeper["evals"][1] == line["score"]
        await page.send(type="stop")
        stopped = await page.expect("analysis", lambda m: not m["running"])
        state = await page.expect("state", lambda m: not m["analysing"])
        assert stopped["lines"] and state["evals"][1] is not None
    run(body, [DEFAULT_ENGINE])


async def analysed(page: FakePage, **message: object) -> Message:
    """The first analysis of the search that the ``analyse`` ``message`` (one line) starts, its
    engine prepared by then; the analysis is stopped at once: no message of it comes after."""
    await page.send(type="analyse", on=True, lines=1, **message)
    await page.expect("state", lambda m: m["analysing"])
    first = await page.expect("analysis", lambda m: m["running"])
    await page.send(type="stop")
    await page.expect("state", lambda m: not m["analysing"])
    return first


def test_an_analysis_stopped_as_soon_as_it_starts_stops_and_keeps_its_engine() -> None:
    # The stop comes while the go may still be on its way to the engine: it must follow the go,
    # not be dropped (the search would run on until the engine is ended for not stopping).
    async def body(page: FakePage) -> None:
        await analysed(page, engine=0)
        slot = page.table._slots[(0, 0)]
        for _ in range(10):
            await analysed(page, engine=0)
        assert page.table._slots.get((0, 0)) is slot
        assert not [message for message in page.seen if message["type"] == "error"]
    run(body, [DEFAULT_ENGINE])


def test_an_engine_line_is_played_from_the_position_shown_replacing_the_moves_after_it() -> None:
    async def body(page: FakePage) -> None:
        for start, path in ((22, [18]), (12, [16]), (21, [17])):
            await page.send(type="move", start=start, path=path)
            await page.expect("state")
        await page.send(type="goto", ply=1)
        shown = await page.expect("state", lambda m: m["cursor"] == 1)
        await page.send(type="analyse", on=True, engine=0, lines=2)
        report = await page.expect("analysis", lambda m: m["ply"] == 1 and len(m["lines"]) == 2
                                   and len(m["lines"][1]["pv"]) >= 3)
        line = report["lines"][1]["pv"]
        await page.send(type="play_line", ply=1, position=shown["position"], moves=[move["hub"] for move in line])
        state = await page.expect("state", lambda m: m["cursor"] == 1 + len(line))
        # The line took the place of the two moves after the position shown, as moves entered there would.
        assert [move["hub"] for move in state["moves"]] == ["22-18"] + [move["hub"] for move in line]
        assert [move["text"] for move in state["moves"][1:]] == [move["text"] for move in line]
        assert len(state["comments"]) == len(line) + 1 and len(state["evals"]) == len(line) + 2
        assert state["mode"] == "free" and state["analysing"]  # the analysis goes on from the line's end
        await page.expect("analysis", lambda m: m["ply"] == 1 + len(line) and bool(m["lines"]))
        await page.send(type="stop")
        await page.expect("state", lambda m: not m["analysing"])
    run(body, [DEFAULT_ENGINE])


def test_an_engine_line_that_is_bad_stale_illegal_or_in_a_game_is_refused_and_the_table_goes_on() -> None:
    async def body(page: FakePage) -> None:
        start = page.state["position"]
        table = page.table

        async def refused(expected: str, **message: object) -> None:
            text = json.dumps({"type": "play_line", "ply": 0, "position": start, "moves": ["22-18"], **message})
            assert expected in await page.error(text)
            assert table.board.moves == [] and table.cursor == 0

        await refused("ply must be a whole number from 0 to 2000", ply="0")
        await refused("ply must be a whole number", ply=True)
        await refused("position must be a text", position=None)
        await refused("moves must be a list of at most 24 texts", moves="22-18")
        await refused("moves must be a list of at most 24 texts", moves=[22])
        await refused("moves must be a list of at most 24 texts", moves=["22-18", "9-13"] * 13)
        await refused("moves must hold at least one move", moves=[])
        await refused("move 2 of the line: ", moves=["22-18", "22-18"])
        await refused("move 1 of the line: ", moves=["x" * 400])
        # A line about another position than the one shown: another ply, or another game.
        await refused("the line is about another position than the one shown (ply 0)", ply=1)
        await refused("the line is about another position", position=Position.parse("W:W22:B18").hub())
        # Not past the end of the game: White's capture leaves Black no piece.
        await page.send(type="setup", position="W:W22:B18")
        ended = await page.expect("state")
        assert "comes after the end of the game: Black has no pieces left" in await page.error(json.dumps(
            {"type": "play_line", "ply": 0, "position": ended["position"], "moves": ["22x13", "13-9"]}))
        # In a game against an engine, a line would play the engine's moves for it.
        await page.send(type="new_game", mode="play", engine=0, colour="white", time={"kind": "move", "seconds": 1})
        game = await page.expect("state", lambda m: m["mode"] == "play")
        assert "no engine line in a game against an engine" in await page.error(json.dumps(
            {"type": "play_line", "ply": 0, "position": game["position"], "moves": ["22-18"]}))
        assert table.board.moves == []
        # Still serving: on an analysis board the line is played.
        await page.send(type="new_game", mode="free")
        await page.expect("state", lambda m: m["mode"] == "free")
        await page.send(type="play_line", ply=0, position=start, moves=["22-18", "9-13", "18x9x13"])
        state = await page.expect("state", lambda m: m["cursor"] == 3)
        assert [move["text"] for move in state["moves"]] == ["22-18", "9-13", "18x9"]
    run(body, [random_spec()])


def test_the_skill_chosen_reaches_the_engine_and_analysis_plays_at_full_strength() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black", skill=3,
                        time={"kind": "move", "seconds": 0.05})
        await page.expect("state", lambda m: bool(m["legal"]))
        assert "skill must be a whole number from 0 to 20, not 21" in await page.error(json.dumps(
            {"type": "new_game", "mode": "play", "engine": 0, "colour": "black", "skill": 21,
             "time": {"kind": "move", "seconds": 0.05}}))
        slot = page.table._slots[(0, 0)]
        assert slot.settings == {"skill": "3"}                # multipv is 1 already
        await page.send(type="resign")
        await page.send(type="analyse", on=True, engine=0, lines=2)
        await page.expect("analysis", lambda m: len(m["lines"]) == 2)
        assert slot.settings == {"skill": "20", "multipv": "2"}
        # An engine given a skill on the command line keeps it when it analyses.
        await page.send(type="analyse", on=True, engine=1, lines=1)
        await page.expect("analysis", lambda m: m["running"] and m["engine"] == "Weak")
        weak = page.table._slots[(1, 0)]
        assert weak.settings == {"skill": "5"}                # as the handshake set it: left alone
    run(body, [DEFAULT_ENGINE, EngineSpec("Weak", DEFAULT_ENGINE.command, {"skill": "5"})])


def test_the_endgame_tables_can_be_turned_off_and_on_from_the_page() -> None:
    def by_database(message: Message) -> bool:
        return any("endgame database" in line["score"]["text"] for line in message["lines"] if line["score"])

    def deep_enough(message: Message) -> bool:
        return message["running"] and any(int(line["depth"] or 0) >= 6 for line in message["lines"])

    async def body(page: FakePage) -> None:
        await page.send(type="setup", position="W:WK10,22,27:B11,K14,18")
        await page.send(type="analyse", on=True, engine=0, lines=1)
        await page.expect("analysis", by_database)
        slot = page.table._slots[(0, 0)]
        folder = slot.params["egdb-path"]["value"]
        assert folder and "egdb-path" not in slot.settings     # on, as the engine started: left alone

        await page.send(type="analyse", on=True, engine=0, lines=1, tables=False)
        assert (await page.expect("state"))["endgame_tables"] is False
        assert not by_database(await page.expect("analysis", deep_enough))
        assert slot.settings["egdb-path"] == ""

        await page.send(type="analyse", on=True, engine=0, lines=1, tables=True)
        await page.expect("analysis", by_database)
        assert slot.settings["egdb-path"] == folder              # the engine's own folder, never the page's
        assert "tables must be true or false" in await page.error(
            '{"type": "analyse", "on": true, "tables": "/etc"}')
        engine = page.table.catalog.as_json()[0]
        assert engine["id_name"] == "Pedina" and engine["id_version"] and engine["id_author"]

        # A game against the engine takes the setting of its own dialog.
        await page.send(type="new_game", mode="play", engine=0, colour="black", tables=False,
                        time={"kind": "move", "seconds": 0.05})
        assert (await page.expect("state", lambda m: bool(m["legal"])))["endgame_tables"] is False
        assert page.table._slots[(0, 0)].settings["egdb-path"] == ""
    run(body, [DEFAULT_ENGINE])


def test_the_threads_chosen_reach_the_engine_they_were_chosen_for_and_stay() -> None:
    async def body(page: FakePage) -> None:
        assert page.seen[0]["type"] == "welcome" and page.seen[0]["cores"] >= 1
        await page.send(type="new_game", mode="play", engine=0, colour="black", threads=2,
                        time={"kind": "move", "seconds": 0.05})
        await page.expect("state", lambda m: bool(m["legal"]))
        slot = page.table._slots[(0, 0)]
        assert slot.settings["threads"] == "2"
        assert "threads must be a whole number from 1 to 64, not 65" in await page.error(json.dumps(
            {"type": "analyse", "on": True, "engine": 0, "threads": 65}))
        await page.send(type="resign")

        # The analysis keeps the engine's threads until the page chooses others for it.
        await analysed(page, engine=0)
        assert slot.settings["threads"] == "2"
        await analysed(page, engine=0, threads=1)
        assert slot.settings["threads"] == "1"
        # Another engine searches with its own threads: the choice was for engine 0.
        assert (await analysed(page, engine=1))["engine"] == "Other"
        assert "threads" not in page.table._slots[(1, 0)].settings
    run(body, [DEFAULT_ENGINE, EngineSpec("Other", DEFAULT_ENGINE.command, {})])


def test_threads_the_engine_refuses_are_said_to_the_page_and_the_game_goes_on_with_its_own() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black", threads=2,
                        time={"kind": "move", "seconds": 0.05})
        assert "Refusing: refused threads=2: no threads=2 on this machine" in str(
            (await page.expect("error"))["message"])
        await page.expect("state", lambda m: bool(m["legal"]))   # it moved all the same
        slot = page.table._slots[(0, 0)]
        assert "threads" not in slot.settings and 0 not in page.table.threads
        assert page.table.failure is None and slot.started      # the same engine, not a failed one

        # Its next move asks no more: the page's choice was dropped.
        errors = sum(message["type"] == "error" for message in page.seen)
        move = legal_choice(page.state)
        await page.send(type="move", start=move["start"], path=move["path"])
        await page.expect("state", lambda m: len(m["moves"]) == 3 and bool(m["legal"]))
        assert sum(message["type"] == "error" for message in page.seen) == errors
    run(body, [EngineSpec("Refusing", f"{sys.executable} {FIXTURE} threads", {"seed": "1"})])


# -- the real server -------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found.update(int(child) for child in (task / "children").read_text().split())
        except FileNotFoundError:  # a thread that ended while the tasks were listed
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


@contextlib.contextmanager
def gui_process(*engine: str) -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    """``pedina gui`` as a process with the random test engine (``engine``: its options);
    yields the process, its ``host:port`` and its token, and kills it at the end."""
    server = subprocess.Popen(
        [sys.executable, "-m", "pedina.protocol.cli", "gui", "--no-browser",
         "--engine", f"cmd={sys.executable} {FIXTURE}", "name=R", *engine],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = re.search(r"http://\S+", server.stdout.readline())
        assert url, "no address printed"
        yield server, url.group().split("/")[2], url.group().split("token=")[1]
    finally:
        if server.poll() is None:
            server.kill()
        server.wait()
        for stream in (server.stdout, server.stderr):
            if stream is not None:
                stream.close()


def test_engines_end_with_the_server() -> None:
    with gui_process("option.mode=hang") as (server, host, token):
        with connect(f"ws://{host}/ws?token={token}", origin=Origin(f"http://{host}")) as websocket:
            websocket.send(json.dumps({"type": "new_game", "mode": "play", "engine": 0, "colour": "black",
                                    "time": {"kind": "move", "seconds": 600}}))
            while True:  # a recv that times out fails the test
                message = json.loads(websocket.recv(timeout=HANG))
                if message["type"] == "state" and message["thinking"] == "white":
                    break
            engines = _children(server.pid)
            assert engines, "no engine process"
            server.send_signal(signal.SIGINT)
            assert server.wait(timeout=HANG) == 0
        assert not [pid for pid in engines if _alive(pid)]


def test_the_score_a_comment_gives() -> None:
    assert comment_score("+0.35/12 0.512s", white_moved=True, annotated=False) == (0, Score(35))
    assert comment_score("+0.35/12 0.512s", white_moved=False, annotated=False) == (0, Score(-35))
    assert comment_score("book +0.10/3", white_moved=False, annotated=False) == (0, Score(-10))
    assert comment_score("-1.25/9", white_moved=False, annotated=True) == (1, Score(-125))
    assert comment_score("+99.95/20 1.2s", white_moved=False, annotated=False) == (0, Score(-9995, PROVEN))
    assert comment_score("book 0.001s", white_moved=True, annotated=False) is None
    assert comment_score("a fine move, 3/4 of the time", white_moved=True, annotated=False) is None


def test_a_game_kept_over_a_reload_is_restored_as_a_loaded_game() -> None:
    async def body(page: FakePage) -> None:
        kept = {"type": "restore", "start": "W:W21-32:B1-12", "moves": ["21-17", "10-14"],
                "headers": {"White": "Player", "Black": "Random", "Event": "at home"},
                "comments": ["", "-0.35/12 0.5s"], "result": "1-0", "reason": "Black resigns"}
        await page.send(**kept)
        state = await page.expect("state", lambda m: m["game"] > 0)
        assert [move["hub"] for move in state["moves"]] == ["21-17", "10-14"] and state["mode"] == "free"
        assert state["players"] == {"white": "Player", "black": "Random"}
        assert state["result"] == {"result": "1-0", "reason": "Black resigns"}
        assert state["comments"] == ["", "-0.35/12 0.5s"] and state["evals"][1] == {"white": 35, "result": 0, "text": "+0.35"}
        assert "move 2: illegal move" in await page.error(json.dumps({**kept, "moves": ["21-17", "21-17"]}))
        assert "its start" in await page.error(json.dumps({**kept, "start": "W:W33"}))
        assert "headers must be" in await page.error(json.dumps({**kept, "headers": {"Bad Name": "x"}}))
        assert "result must be one of" in await page.error(json.dumps({**kept, "result": "2-0"}))
        assert "variations must be" in await page.error(json.dumps({**kept, "variations": [[], [], []]}))
    run(body, [random_spec()])


def test_a_game_kept_over_a_reload_keeps_its_variations() -> None:
    # On 7585fe0 a restored game had no variations (the page did not keep them, the server took none).
    async def body(page: FakePage) -> None:
        await page.send(type="load_pdn", text=VARIATIONS)
        shown = await page.expect("state", lambda m: len(m["moves"]) == 3)
        await page.send(type="restore", start=shown["start_fen"], moves=[move["hub"] for move in shown["moves"]],
                        headers={}, comments=shown["comments"], result="*", reason="",
                        variations=shown["variations"] + [])
        restored = await page.expect("state", lambda m: m["game"] > shown["game"])
        assert restored["variations"] == shown["variations"] and restored["comments"] == shown["comments"]
        assert page.table.variations[0][0][0] == read_game(VARIATIONS).variations[0][0]
        await page.send(type="restore", start=shown["start_fen"], moves=["22-18"], headers={}, comments=[],
                        result="*", reason="", variations=[["(1. 21-17 10-14)", "(1. 99-98)"]])
        restored = await page.expect("state", lambda m: len(m["moves"]) == 1)
        assert restored["variations"] == [["(1. 21-17 10-14)"]]  # what no longer reads is left out
    run(body, [random_spec()])


# -- engines that never hold up another page (issue 30, item 1) ---------------------------

#: Threads of asyncio's default pool (concurrent.futures' default size), which every engine call
#: shared before issue 30: one analysis held one thread for its whole length.
DEFAULT_POOL = min(32, (os.cpu_count() or 1) + 4)


async def _searching(page: FakePage) -> None:
    """Wait until the page's engine is waiting for its search's end (no event announces it)."""
    deadline = time.monotonic() + HANG
    while not (page.table._search_slot is not None and page.table._search_slot.searching):
        assert time.monotonic() < deadline, "the analysis did not start"
        await asyncio.sleep(0.01)


def test_more_pages_analysing_than_threads_hold_up_no_engine_and_all_end_with_their_pages() -> None:
    async def main_task() -> None:
        before = _children(os.getpid())
        engines: set[int] = set()
        try:
            # An analysis that never ends by itself: the engine never answers go.
            pages = [FakePage([random_spec("Endless", mode="hang")]) for _ in range(DEFAULT_POOL + 2)]
            for page in pages:
                page.table.welcome()
                await page.send(type="analyse", on=True, engine=0, lines=1)
                await page.expect("analysis", lambda m: bool(m["running"]))
                await _searching(page)
                engines.update(_children(os.getpid()) - before)
            assert len(engines) == len(pages)
            # A new page still gets its engine, and the engine's move.
            player = FakePage([random_spec()])
            await player.send(type="new_game", mode="play", engine=0, colour="black",
                              time={"kind": "move", "seconds": 0.1})
            await player.expect("state", lambda m: len(m["moves"]) == 1)
            # Closed, the pages end their engines (each close waits for its engine's end).
            await asyncio.wait_for(asyncio.gather(*(page.table.close() for page in [*pages, player])), HANG)
            assert not [pid for pid in engines if _alive(pid)]
        finally:  # after a failure, no thread may stay waiting on a live engine: asyncio.run's end waits for them
            for pid in engines | (_children(os.getpid()) - before):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    asyncio.run(main_task())


# -- a DXP engine (issue 28) ----------------------------------------------------------------


@pytest.fixture
def dxp_engine(tmp_path: Path) -> Iterator[Server]:
    """``pedina dxp`` on a free port, playing 0-minute games at 0.05 s a move."""
    running = start_server(tmp_path / "dxp.log", "--move-time", "0.05", "--hash", "16")
    yield running
    if running.process.poll() is None:
        running.stop()


def dxp_specs(server: Server) -> list[EngineSpec]:
    """The DXP engine ``D`` as ``--engine dxp=...`` gives it, and the random fixture engine."""
    return [*gui_engines((f"dxp=127.0.0.1:{server.port}\0name=D",)), random_spec()]


def test_a_game_against_a_dxp_engine_with_a_take_back_to_its_end(dxp_engine: Server) -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="new_game", mode="play", engine=0, colour="black", time={"kind": "move", "seconds": 1})
        state = await page.expect("state", lambda m: len(m["moves"]) == 1 and bool(m["legal"]))
        assert state["players"] == {"white": "D", "black": "Player"}
        for _ in range(2):
            move = legal_choice(state)
            await page.send(type="move", start=move["start"], path=move["path"])
            state = await page.expect("state", lambda m: bool(m["legal"]) and len(m["moves"]) % 2 == 1)
        assert len(state["moves"]) == 5
        await page.send(type="takeback")
        state = await page.expect("state", lambda m: bool(m["legal"]))
        assert len(state["moves"]) == 3
        for turn in range(400):
            move = legal_choice(state, turn * 5)
            await page.send(type="move", start=move["start"], path=move["path"])
            state = await page.expect("state", lambda m: m["result"] is not None or bool(m["legal"]))
            if state["result"]:
                break
        assert state["result"] is not None and state["result"]["result"] in ("1-0", "0-1", "1/2-1/2")
        assert page.table.failure is None
    run(body, dxp_specs(dxp_engine))
    # The engine got the game twice (the take back asked for it anew), and was told its end.
    status, out, err = dxp_engine.stop()
    assert status == 0 and err == "", err
    games = out.splitlines()
    assert len(games) == 2 and "unfinished" in games[0] and "unfinished" not in games[1], games
    assert re.search(r" (1-0|0-1|1/2-1/2) \(", games[1]) and "GAMEEND" in games[1], games
    requests = [line for line in dxp_engine.log_lines() if re.search(r" > R01", line)]
    assert len(requests) == 2


def test_a_dxp_engine_refuses_analysis_with_a_message_and_the_page_goes_on(dxp_engine: Server) -> None:
    async def body(page: FakePage) -> None:
        engines = page.table.catalog.as_json()
        assert engines[0]["protocol"] == "dxp" and "DXP sends no analysis" in str(engines[0]["no_analysis"])
        assert engines[1]["protocol"] == "hub" and engines[1]["no_analysis"] is None
        error = await page.error(json.dumps({"type": "analyse", "on": True, "engine": 0}))
        assert error.startswith("D is a DXP engine: DXP sends no analysis")
        assert "it cannot play both sides" in await page.error(json.dumps(
            {"type": "watch", "white": 0, "black": 0, "time": {"kind": "move", "seconds": 1}}))
        await page.send(type="move", start=22, path=[18])
        state = await page.expect("state", lambda m: len(m["moves"]) == 1)
        assert not state["analysing"]
        await page.send(type="analyse", on=True, engine=1)
        await page.expect("analysis", lambda m: m["running"] and m["engine"] == "Random")
    run(body, dxp_specs(dxp_engine))


def test_a_dxp_engine_plays_a_hub_engine_watched_to_the_end(dxp_engine: Server) -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="watch", white=1, black=0, time={"kind": "move", "seconds": 0.1})
        state = await page.expect("state", lambda m: m["result"] is not None)
        assert state["players"] == {"white": "Random", "black": "D"} and len(state["moves"]) > 4
        assert page.table.failure is None
    run(body, dxp_specs(dxp_engine))
    status, out, err = dxp_engine.stop()
    assert status == 0 and err == "", err
    games = out.splitlines()  # one status line per game: the game was played out and its end told
    assert len(games) == 1 and "unfinished" not in games[0] and "GAMEEND" in games[0], games


# -- a page that does not read ----------------------------------------------------------------


def long_commented_game(plies: int, comment: int) -> str:
    """A PDN game of random legal moves (seeded) up to ``plies`` plies or its end, each move
    with a comment of ``comment`` characters: a big state message for the GUI."""
    board = Board()
    rng = random.Random(7)
    while len(board.moves) < plies and board.outcome() is None:
        board.push(rng.choice(board.legal_moves()))
    text = write_game(board, {"Event": "long"}, "*")
    return re.sub(r"(\d+-\d+|\d+x\d+(?:x\d+)*)", lambda m: m.group(1) + " {" + "c" * comment + "}", text)


@pytest.mark.slow
def test_a_page_that_never_reads_does_not_grow_the_server() -> None:
    """A page sends ``goto`` after ``goto`` on a long game and never reads: the server owes it
    only the latest state, so its memory stays flat (it grew by gigabytes in 20 s)."""
    seconds = 5.0 if CI else 20.0
    with gui_process() as (server, host, token):
        process = psutil.Process(server.pid)
        # The client reads only what its own queue of 16 messages takes: then it stops reading.
        with connect(f"ws://{host}/ws?token={token}", origin=Origin(f"http://{host}"), max_queue=16) as websocket:
            websocket.send(json.dumps({"type": "load_pdn", "text": long_commented_game(200, 2000)}))
            start = process.memory_info().rss
            peak, sent = start, 0
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                websocket.send(json.dumps({"type": "goto", "ply": sent % 2}))
                sent += 1
                if sent % 200 == 0:
                    peak = max(peak, process.memory_info().rss)
        assert sent > 1000, "too few messages sent to tell"
        assert peak - start < 32 * 2**20, f"the server grew by {(peak - start) / 2**20:.0f} MB for {sent} gotos"
