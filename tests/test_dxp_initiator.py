"""The DXP Initiator in matches: a running ``pedina dxp`` against ``pedina hub``, and broken DXP engines."""

from __future__ import annotations

import re
import socket
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

from pedina.pdn import read_games
from pedina.protocol.dxp.messages import GameAccept, GameRequest, MessageReader, decode_frame, encode, parse_message
from pedina.protocol.match.options import gamereq_pace
from test_dxp import Server, start_server
from test_match import PEDINA, run


@pytest.fixture
def follower(tmp_path: Path) -> Iterator[Server]:
    """``pedina dxp`` on a free port, 0-minute games at 0.05 s a move."""
    running = start_server(tmp_path / "dxp.log", "--move-time", "0.05", "--hash", "16")
    yield running
    status, _, err = running.stop()
    assert status == 0 and err == "", (status, err)


def test_a_dxp_engine_plays_a_match_against_a_hub_engine(follower: Server, tmp_path: Path) -> None:
    pdn = tmp_path / "games.pdn"
    result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", f"dxp=127.0.0.1:{follower.port}", "name=D",
                 "--depth", "2", "--games", "4", "--maxplies", "120", "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    assert "4/4 games" in result.output and "loses by" not in result.output
    games = read_games(pdn.read_text())
    assert len(games) == 4
    assert {game.headers["White"] for game in games} == {game.headers["Black"] for game in games} == {"H", "D"}
    for game in games:
        assert game.result in ("1-0", "0-1", "1/2-1/2")
        assert game.headers["Termination"] in ("normal", "repetition", "40-move rule", "no moves",
                                               "adjudication: maximum length"), game.headers
    # the follower saw every game end, with GAMEEND exchanged (no unfinished game)
    lines = follower.stop()[1].splitlines()
    assert len(lines) == 4, lines
    assert not any("unfinished" in line for line in lines), lines
    confirmed = sum(1 for line in follower.log_lines() if line.endswith("# GAMEEND confirmed"))
    ended_by_opponent = sum(1 for line in lines if "GAMEEND from the opponent" in line
                            or "ended by the opponent" in line)
    assert confirmed + ended_by_opponent == 4, lines


def test_a_clock_goes_to_the_gamereq_in_whole_minutes(follower: Server) -> None:
    result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", f"dxp=127.0.0.1:{follower.port}", "name=D",
                 "--tc", "10+0.1", "--games", "1", "--maxplies", "6")
    assert result.exit_code == 0, result.output
    assert "1/1 games" in result.output and "loses by" not in result.output
    assert "time control 10+0.1 / 60+0" in result.output   # D plays on the GAMEREQ's clock, and is judged on it
    requests = [line for line in follower.log_lines() if re.search(r" > R01", line)]
    assert len(requests) == 1
    request = parse_message(requests[0].split(" > ", 1)[1])
    assert isinstance(request, GameRequest) and request.minutes == 1 and request.moves == 0


def test_a_move_time_goes_to_the_gamereq_as_a_pace(follower: Server) -> None:
    # The follower's own --move-time (0.05 s) is not what it plays on: the GAMEREQ's clock is.
    result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", f"dxp=127.0.0.1:{follower.port}", "name=D",
                 "--st", "0.1", "--games", "2", "--maxplies", "16")
    assert result.exit_code == 0, result.output
    assert "2/2 games" in result.output and "loses by" not in result.output
    assert "time control 0.1s/move / 600/60+0" in result.output
    requests = [parse_message(line.split(" > ", 1)[1]) for line in follower.log_lines() if re.search(r" > R01", line)]
    assert len(requests) == 2
    assert all(isinstance(r, GameRequest) and (r.minutes, r.moves) == (1, 600) for r in requests), requests


@pytest.mark.parametrize("move_time, pace", [(0.1, (1, 600)), (1.0, (1, 60)), (0.25, (1, 240)), (7.0, (7, 60)),
                                             (200.0, (10, 3)), (0.07, (1, 857))])
def test_gamereq_paces(move_time: float, pace: tuple[int, int]) -> None:
    assert gamereq_pace(move_time) == pace


@pytest.mark.parametrize("move_time", [0.01, 0.05, 99_999.0])
def test_a_pace_the_gamereq_cannot_carry_is_refused(move_time: float) -> None:
    with pytest.raises(ValueError, match="a DXP engine cannot be given"):
        gamereq_pace(move_time)


@contextmanager
def fake_follower(answer: Callable[[socket.socket], None]) -> Iterator[int]:
    """A DXP server on a free port that calls ``answer`` on each connection once its GAMEREQ came."""
    listener = socket.create_server(("127.0.0.1", 0))
    over = threading.Event()

    def serve() -> None:
        while True:
            conn, _ = listener.accept()
            if over.is_set():
                conn.close()
                return
            with conn:
                reader = MessageReader()
                while True:
                    data = conn.recv(4096)
                    if not data:
                        break
                    if any(isinstance(parse_message(decode_frame(frame)), GameRequest) for frame in reader.feed(data)):
                        answer(conn)
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    address = listener.getsockname()
    try:
        yield address[1]
    finally:
        # Closing the listener does not wake an accept() blocked on it (Linux): a last connection does.
        over.set()
        socket.create_connection(address).close()
        thread.join(10)
        listener.close()


def refuse(conn: socket.socket) -> None:
    conn.sendall(encode(GameAccept("Grumpy", 2)))
    conn.recv(4096)  # until the client gives up and closes


def accept_then_drop(conn: socket.socket) -> None:
    conn.sendall(encode(GameAccept("Fragile", 0)))


@pytest.mark.parametrize("answer, reason, message", [
    (refuse, "protocol error", "D: refused the game (GAMEACC code 2: refuses this game)"),
    (accept_then_drop, "crash", "D: closed the connection"),
])
def test_a_refused_game_or_a_dropped_connection_is_a_forfeit(answer: Callable[[socket.socket], None], reason: str,
                                                              message: str) -> None:
    with fake_follower(answer) as port:
        result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", f"dxp=127.0.0.1:{port}", "name=D",
                     "--depth", "1", "--games", "2", "--timeout", "30")
        assert result.exit_code == 0, result.output
        assert "2/2 games" in result.output
        assert result.output.count(f"D loses by {reason}: {message}") == 2, result.output
        assert "H vs D: +2 =0 -0" in result.output


@pytest.mark.parametrize("args, error", [
    (["--concurrency", "2"], "D is a DXP engine, which plays one game at a time: --concurrency must be 1"),
    (["--cluster", "local:1"], "D is a DXP engine, which plays one game at a time: not with --cluster"),
])
def test_a_dxp_engine_plays_one_game_at_a_time(args: list[str], error: str) -> None:
    result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", "dxp=127.0.0.1:1", "name=D", "--depth", "1",
                 *args)
    assert result.exit_code == 1 and error in result.output, result.output


@pytest.mark.parametrize("engine, error", [
    (["dxp=localhost", "name=D"], "bad DXP address 'localhost' (expected HOST:PORT"),
    (["dxp=127.0.0.1:1", "cmd=pedina hub", "name=D"], "engine D: give cmd= (a Hub engine to start) or dxp="),
    (["dxp=127.0.0.1:1", "option.skill=3", "name=D"], "engine D: a DXP engine has no parameters (option.skill)"),
    (["dxp=127.0.0.1:1", "tc=60", "st=1", "name=D"], "engine D: a DXP engine plays on one clock: give it a clock"),
    (["dxp=127.0.0.1:1", "st=0.02", "name=D"], "engine D: a DXP engine cannot be given 0.02 s a move"),
])
def test_dxp_engine_setup_mistakes(engine: list[str], error: str) -> None:
    result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", *engine, "--depth", "1")
    assert result.exit_code == 1 and error in result.output, result.output


def test_an_engine_that_is_not_listening_is_a_setup_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    result = run("--engine", f"cmd={PEDINA}", "name=H", "--engine", f"dxp=127.0.0.1:{port}", "name=D", "--depth", "1")
    assert result.exit_code == 1 and f"D: cannot connect to 127.0.0.1:{port}" in result.output, result.output
