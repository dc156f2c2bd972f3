"""The Hub adapter: syntax helpers in process, and the real ``pedina hub`` driven with pexpect.

These tests check protocol behaviour only (never the strength of the search):
every ``go`` ends with exactly one ``done`` carrying legal moves, timing bounds
hold, bad input gives ``error`` and keeps the previous state.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest

from pedina.settings import EngineSettings
from pedina import START_HUB, Board, Position
from pedina.scores import WIN
from pedina.search import Info, Result
from pedina.timeman import Limits
from pedina.move import parse_move
from pedina.protocol.hub import MAX_LINE_BYTES, ClockOverrun, HubServer, apply_level, format_info, read_lines
from pedina.protocol.hubline import HubInputError, format_line, parse_line
from stub_searchers import HeldSearcher, ScriptedSearcher, StubbornSearcher
from timing import HANG, allowed

PEDINA = shutil.which("pedina")
# White to move with a single legal move, the capture 22x13x18.
FORCED = Position.from_squares(white_men=[22, 30], black_men=[18, 5]).hub()
# Black to move without pieces, so without legal moves.
NO_MOVES = Position.from_squares(white_men=[21, 25], white_to_move=False).hub()
TOKEN = re.compile(r'[^\s"=]+=(?:"[^"=]*"|[^\s"=]+)')


# -- in process -------------------------------------------------------------------------------


def test_parse_line_reads_flags_quotes_and_loose_blanks() -> None:
    assert parse_line('pos pos=Wbb moves = "23-19 10-14"') == ("pos", [("pos", "Wbb"), ("moves", "23-19 10-14")])
    assert parse_line("level infinite") == ("level", [("infinite", None)])
    assert parse_line('set-param name=x value=""') == ("set-param", [("name", "x"), ("value", "")])
    for bad in ('pos pos="Wbb', "=x", "go think =", 'level "time"=1'):
        with pytest.raises(HubInputError):
            parse_line(bad)


def test_format_line_quotes_only_when_needed() -> None:
    assert format_line("id", [("name", "Pedina"), ("author", "A B"), ("x", "")]) == 'id name=Pedina author="A B" x=""'
    command, args = parse_line(format_line("error", [("message", 'say "hi" = now')]))
    assert command == "error" and args == [("message", "say 'hi' = now")]


def test_info_is_formatted_like_scan() -> None:
    board = Board()
    pv = [board.parse_move("23-19")]
    line = format_info(Info(depth=9, mean_depth=8.96, score=12, nodes=81234, time=0.402, pv=pv), False)
    assert line == 'info depth=9 mean-depth=9.0 score=0.12 nodes=81234 time=0.402 nps=0.202 pv=23-19'
    win_in_3 = format_info(Info(3, 3.0, WIN - 3, 10, 0.0, pv, multipv=2), True)
    assert "score=99.97" in win_in_3 and "multipv=2" in win_in_3 and "nps=0.000" in win_in_3
    assert "score=-99.95" in format_info(Info(5, 5.0, -(WIN - 5), 10, 1.0, []), False)


def test_a_known_ending_is_not_sent_as_a_win() -> None:
    """An estimate stays below 90.00, the range Hub clients (pydraughts: above 9000) read as a win
    (without the endgame database, which knows this ending exactly)."""
    output = io.StringIO()
    HubServer(output).run(['set-param name=egdb-path value=""', f"pos pos={Position.from_fen('W:WK29,K32:BK4').hub()}", "level depth=6", "go think"])
    infos = [dict(parse_line(line)[1]) for line in output.getvalue().splitlines() if line.startswith("info ")]
    assert [info["depth"] for info in infos] == ["1", "2", "3", "4", "5", "6"]
    assert all(40 < float(info["score"] or "") < 90 for info in infos), infos


def test_level_fields_combine_validate_and_clamp() -> None:
    limits = apply_level(Limits(), parse_line("level moves=20 time=59.5 inc=1")[1])
    assert (limits.moves_to_go, limits.clock, limits.inc) == (20, 59.5, 1.0)
    limits = apply_level(limits, parse_line("level depth=7")[1])
    assert (limits.depth, limits.clock) == (7, 59.5)
    assert apply_level(Limits(), parse_line("level time=-0.25")[1]).clock == 0.0
    assert apply_level(Limits(), parse_line("level infinite")[1]).infinite
    for bad in ("level", "level depth=0", "level depth=x", "level time=nan", "level nodes=-3",
                "level speed=3", "level infinite=yes", "level depth"):
        with pytest.raises(HubInputError):
            apply_level(Limits(), parse_line(bad)[1])


@pytest.mark.parametrize("bad, words", [
    ("level move-time=-1", "move-time must be positive"), ("level move-time=0", "move-time must be positive"),
    ("level inc=-2", "inc must not be negative"),
])
def test_level_refuses_times_that_cannot_be_played(bad: str, words: str) -> None:
    with pytest.raises(HubInputError, match=words):
        apply_level(Limits(), parse_line(bad)[1])
    # and over the protocol: one error line, and the next go still searches (the default move time)
    out = session([f"pos pos={START_HUB}", bad, "go think"])
    assert [line.split()[0] for line in out] == ["error", "info", "done"] and words in out[0]
    assert RecordingSearcher.calls[0][1].move_time == 1.0


@pytest.mark.parametrize("bad, words", [
    ("level time=-5", "level time=-5 (inc=0): the clock is 5 s below zero"),
    ("level time=-3 inc=1", "level time=-3 (inc=1): the clock is 2 s below zero"),
])
def test_a_clock_far_below_zero_is_said_and_moved_on_at_once(bad: str, words: str) -> None:
    with pytest.raises(ClockOverrun, match=re.escape(words)) as overrun:
        apply_level(Limits(), parse_line(bad)[1])
    assert overrun.value.limits.clock == 0.0
    # over the protocol: one error line, and the next go plays on an empty clock, not the default move time
    out = session([f"pos pos={START_HUB}", bad, "go think"])
    assert [line.split()[0] for line in out] == ["error", "info", "done"] and words in out[0]
    limits = RecordingSearcher.calls[0][1]
    assert limits.move_time is None and limits.clock is not None and limits.clock <= 0.001


def test_a_clock_slightly_below_zero_is_played_on() -> None:
    # pydraughts sends the time less the increment, which is negative when the clock is below it
    for line in ("level time=-0.5 inc=1", "level time=-0.9", "level time=-1.5 inc=0.6"):
        assert apply_level(Limits(), parse_line(line)[1]).clock == 0.0


def test_in_process_session_keeps_state_on_errors() -> None:
    output = io.StringIO()
    engine = HubServer(output)
    engine.run([f"pos pos={START_HUB}", "level depth=1", f'pos pos={START_HUB} moves="23-19 23-19"',
                "level depth=1", "go think", "quit", "ping"])
    lines = output.getvalue().splitlines()
    assert lines[0].startswith("error message=") and "move 2" in lines[0]
    done = lines[-1]
    assert done.startswith("done move=")
    parse_move(Position.start(), done.split()[1].split("=")[1])  # legal in the kept start position
    assert "pong" not in lines  # nothing after quit


class RecordingSearcher(ScriptedSearcher):
    """A searcher that records what the adapter asks for and answers the first legal move at once."""

    calls: list[tuple[Board, Limits, int, int, int]] = []

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        RecordingSearcher.calls.append((board.copy(), limits, self.settings.multipv, self.settings.skill,
                                        self.settings.seed))
        move = board.legal_moves()[0]
        if on_info:
            on_info(Info(1, 1.0, 0, 1, 0.001, [move]))
        return Result(move, None, 0, 1, 1, 0.001, [move])


def session(lines: list[str]) -> list[str]:
    """Run ``lines`` through an in-process engine with a :class:`RecordingSearcher` and the book off
    (the searcher is what these tests watch); its output lines."""
    RecordingSearcher.calls = []
    output = io.StringIO()
    HubServer(output, searcher_factory=RecordingSearcher).run(["set-param name=book value=false", *lines])
    return output.getvalue().splitlines()


def test_pos_accepts_a_tail_after_an_irreversible_position_and_keeps_history() -> None:
    board = Board()
    for text in ("23-19", "10-14", "19x10", "5x14"):  # the capture is irreversible
        board.push_text(text)
    middle = board.position.hub()
    for _ in range(4):  # a tail played after the irreversible capture
        board.push(board.legal_moves()[-1])
    tail = [move.hub() for move in board.moves[4:]]
    out = session([f'pos pos={middle} moves="{" ".join(tail)}"', "level depth=3", "go think",
                   f'pos pos={START_HUB} moves="{" ".join(m.hub() for m in board.moves)}"', "go analyze", "stop"])
    assert [line.split()[0] for line in out] == ["info", "done", "info", "done"]
    (first, limits, *_), (second, _, *_) = RecordingSearcher.calls
    assert first.start.hub() == middle and [m.hub() for m in first.moves] == tail
    assert limits.depth == 3 and second.position == first.position and len(second.moves) == 8
    assert second.positions[4] == Position.from_hub(middle)


def test_set_param_validates_and_reaches_the_searcher() -> None:
    out = session(["set-param name=multipv value=3", "set-param name=skill value=7", "set-param name=seed value=5",
                   "set-param name=multipv value=99", "set-param name=skill value=x", "set-param name=nope value=1",
                   "set-param name=tt-size value=8", f"pos pos={START_HUB}", "level nodes=10", "go think"])
    assert [line.split()[0] for line in out] == ["error", "error", "error", "info", "done"]
    _, limits, multipv, skill, seed = RecordingSearcher.calls[0]
    assert (multipv, skill, seed, limits.nodes) == (3, 7, 5, 10)
    assert "multipv=1" in out[3]  # multi-PV searches label their info lines


class ShortOfMemorySearcher(RecordingSearcher):
    """A searcher on a machine without the memory for a shared hash table (threads above 1)."""

    def configure(self, settings: EngineSettings) -> None:
        if settings.threads > 1:
            raise MemoryError
        super().configure(settings)


def test_a_setting_without_memory_is_refused_and_a_second_hub_announces_the_values_set() -> None:
    output = io.StringIO()
    HubServer(output, searcher_factory=ShortOfMemorySearcher).run([
        "hub", "init", "set-param name=threads value=2", "set-param name=multipv value=2", "hub"])
    lines = output.getvalue().splitlines()
    assert [line for line in lines if line.startswith("error")] == [
        'error message="threads: not enough memory for the hash table threads=2 needs; the settings stay as '
        'they were (tt-size=64 threads=1)"']
    second = lines[lines.index("ready") + 2:]
    values = {dict(parse_line(line)[1])["name"]: dict(parse_line(line)[1])["value"] for line in second
              if line.startswith("param ")}
    assert (values["threads"], values["multipv"], values["tt-size"]) == ("1", "2", "64")


def test_level_resets_and_defaults_reach_the_searcher() -> None:
    session([f"pos pos={START_HUB}", "level depth=4", "go think", "go think", "level infinite",
             f"pos pos={START_HUB}", "go analyze", "stop", "level move-time=2", "go ponder", "stop"])
    limits = [call[1] for call in RecordingSearcher.calls]
    assert limits[0].depth == 4
    assert limits[1].depth is None and limits[1].move_time is not None  # reset after go: default time
    assert limits[2].infinite  # reset after pos; analyze without a level searches until stop
    assert limits[3].ponder and limits[3].move_time == 2


# -- the real process -------------------------------------------------------------------------


class Hub:
    """A ``pedina hub`` process under pexpect, with small helpers."""

    def __init__(self, *args: str, log: Path | None = None) -> None:
        assert PEDINA is not None, "the pedina console script is not installed"
        self.log = log
        logging = ["--log", str(log)] if log is not None else []
        self.child = pexpect.spawn(PEDINA, ["hub", *logging, *args], encoding="utf-8", timeout=10, echo=False)
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default

    def send(self, line: str) -> None:
        self.child.sendline(line)

    def expect_line(self, command: str, timeout: float = HANG) -> str:
        """The first complete line starting with the word ``command``; earlier lines are skipped."""
        return self.lines_until(command, timeout)[-1]

    def lines_until(self, command: str, timeout: float = HANG) -> list[str]:
        """All complete lines up to and including the first one starting with the word ``command``."""
        self.child.expect(rf"(?m)^({re.escape(command)}(?: [^\r\n]*)?)\r?\n", timeout=timeout)
        before = [line.strip() for line in str(self.child.before).splitlines() if line.strip()]
        match = self.child.match
        assert isinstance(match, re.Match)
        return before + [str(match.group(1))]

    def lines_until_info(self, reached: Callable[[dict[str, str | None]], bool]) -> list[str]:
        """All complete lines up to the first info line whose fields satisfy ``reached``; none of
        them a ``done``. For a test that needs a search under way, or this far on by its own clock."""
        lines: list[str] = []
        while True:
            lines += self.lines_until("info", HANG)
            assert not any(line.startswith("done") for line in lines), lines
            if reached(dict(parse_line(lines[-1])[1])):
                return lines

    def logged_latency(self, request: str, answer: str) -> float:
        """Seconds from the engine's reading of the last ``request`` line to its writing of the
        first ``answer`` line after it, by the stamps of its log: the engine's own clock, free
        of the pipe's and the test process's delays."""
        assert self.log is not None
        read_at: float | None = None
        answered_at: float | None = None
        for line in self.log.read_text(encoding="utf-8").splitlines():
            stamp, direction, text = line.split(" ", 2)
            hours, minutes, seconds = stamp.split(":")
            at = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
            if direction == ">" and text.split()[0] == request:
                read_at, answered_at = at, None
            elif direction == "<" and text.split()[0] == answer and read_at is not None and answered_at is None:
                answered_at = at
        assert read_at is not None and answered_at is not None, f"no {request} then {answer} in the log"
        return answered_at - read_at

    def handshake(self) -> list[str]:
        """``hub`` to ``ready``, the book off: these tests watch searches (tests/test_book.py the book)."""
        self.send("hub")
        lines = self.lines_until("wait")
        self.send("set-param name=variant value=italian")
        self.send("set-param name=book value=false")
        self.send("init")
        self.expect_line("ready")
        return lines

    def go(self, board: Board, level: str, mode: str = "think", timeout: float = 15) -> tuple[str, float]:
        """Search ``board`` at ``level``; the done line and the seconds it took."""
        moves = " ".join(move.hub() for move in board.moves)
        self.send(f'pos pos={board.start.hub()}' + (f' moves="{moves}"' if moves else ""))
        if level:
            self.send(f"level {level}")
        started = time.perf_counter()
        self.send(f"go {mode}")
        done = self.expect_line("done", timeout=timeout)
        return done, time.perf_counter() - started

    def close(self) -> None:
        if self.child.isalive():
            self.send("quit")
            self.child.expect(pexpect.EOF, timeout=5)
        self.child.close()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    engine = Hub(log=tmp_path / "hub.log")
    engine.handshake()
    yield engine
    engine.close()


def done_moves(board: Board, done: str) -> tuple[str, str | None]:
    """Check a ``done`` line: move first, legal, in full Hub text; the ponder move legal after it."""
    command, args = parse_line(done)
    assert command == "done" and args and args[0][0] == "move", done
    fields = dict(args)
    move = board.parse_move(fields["move"] or "")
    assert move.hub() == fields["move"], "the move must be in full Hub text (captures with captured squares)"
    ponder = fields.get("ponder")
    if ponder is not None:
        after = board.copy()
        after.push(move)
        assert after.parse_move(ponder).hub() == ponder
    assert set(fields) <= {"move", "ponder"}
    return move.hub(), ponder


def test_handshake_declares_id_params_with_key_value_tokens() -> None:
    engine = Hub()
    try:
        lines = engine.handshake()
        assert lines[0].startswith("id ")
        assert lines[-1] == "wait"
        for line in lines[:-1]:
            body = line.split(" ", 1)[1]
            tokens = TOKEN.findall(body)
            assert " ".join(tokens) == body, f"every token must be key=value without '=' in quotes: {line}"
        id_fields = dict(parse_line(lines[0])[1])
        assert id_fields["name"] == "Pedina" and id_fields["country"] == "Italy" and id_fields["version"]
        params = {dict(parse_line(line)[1])["name"]: dict(parse_line(line)[1]) for line in lines[1:-1]}
        assert params["variant"] == {"name": "variant", "value": "italian", "type": "enum", "values": "italian"}
        assert params["tt-size"]["type"] == "int" and params["ponder"]["type"] == "bool"
        assert (params["skill"]["min"], params["skill"]["max"]) == ("0", "20")
        assert params["multipv"]["type"] == "int"
        engine.send("ping")
        engine.expect_line("pong")
    finally:
        engine.close()


@pytest.mark.parametrize("level, bound", [
    ("depth=2", None), ("nodes=300", None), ("move-time=0.3", 0.3), ("time=1.5", 1.5),
    ("time=0.9 inc=0.1", 1.0), ("moves=5 time=1", 1.0), ("moves=1 time=0.4 inc=0.1", 0.5),
    ("time=-0.2", 0.0),
])
def test_go_think_at_each_level_form_answers_one_legal_done_in_time(hub: Hub, level: str, bound: float | None) -> None:
    board = Board()
    for text in ("23-19", "10-14"):
        board.push_text(text)
    done, _ = hub.go(board, level)
    done_moves(board, done)
    if bound is not None:
        # The bound of the level on the engine's own clock (its log), plus its reading and
        # writing of the lines: 50 ms on an idle machine, allowed for load.
        elapsed = hub.logged_latency("go", "done")
        assert elapsed <= bound + allowed(0.05), f"{level}: done after {elapsed:.3f} s"
    hub.send("ping")
    lines = hub.lines_until("pong")
    assert not any(line.startswith("done") for line in lines[:-1]), "exactly one done per go"


def test_info_lines_are_key_value_with_scan_types(hub: Hub) -> None:
    hub.send(f"pos pos={START_HUB}")
    hub.send("level depth=3")
    hub.send("go think")
    lines = hub.lines_until("done")
    infos = [line for line in lines if line.startswith("info ")]
    assert infos, "a search reports at least one info line"
    for line in infos:
        fields = dict(parse_line(line)[1])
        int(fields["depth"] or "")
        int(fields["nodes"] or "")
        assert re.fullmatch(r"\d+\.\d", fields["mean-depth"] or "")
        assert re.fullmatch(r"-?\d+\.\d\d", fields["score"] or "")
        float(fields["time"] or "")
        float(fields["nps"] or "")
        board = Board()
        for move in (fields.get("pv") or "").split():
            board.push_text(move)


def test_infinite_search_answers_ping_and_stops_within_100_ms(hub: Hub) -> None:
    hub.send(f"pos pos={START_HUB}")
    hub.send("level infinite")
    hub.send("go think")
    hub.lines_until_info(lambda fields: True)  # the search is under way
    hub.send("ping")
    lines = hub.lines_until("pong")
    assert not any(line.startswith("done") for line in lines)
    # Still searching after the ping (a done at any time before the stop would be a failure).
    with pytest.raises(pexpect.TIMEOUT):
        hub.expect_line("done", timeout=0.5)
    hub.send("stop")
    done = hub.expect_line("done", timeout=HANG)
    # On the engine's clock; 100 ms holds on an idle machine, and the bound allows for a loaded one.
    assert hub.logged_latency("ping", "pong") < allowed(0.1)
    assert hub.logged_latency("stop", "done") < allowed(0.1)
    done_moves(Board(), done)


def test_stop_during_go_analyze_is_answered_within_100_ms(hub: Hub) -> None:
    board = Board()
    board.push_text("22-18")
    hub.send(f'pos pos={START_HUB} moves="22-18"')
    hub.send("go analyze")
    hub.lines_until_info(lambda fields: True)  # the search is under way
    with pytest.raises(pexpect.TIMEOUT):
        hub.expect_line("done", timeout=0.2)
    hub.send("stop")
    done = hub.expect_line("done", timeout=HANG)
    assert hub.logged_latency("stop", "done") < allowed(0.1)  # as in the test above
    done_moves(board, done)


def test_ponder_then_ponder_hit_moves_on_the_clock(hub: Hub) -> None:
    hub.send(f"pos pos={START_HUB}")
    hub.send("level move-time=0.3")
    hub.send("go ponder")
    # Pondering does not end on its own before ponder-hit: twice the move time by the search's clock.
    hub.lines_until_info(lambda fields: float(fields["time"] or "0") > 0.6)
    hub.send("ping")
    hub.expect_line("pong")
    hub.send("ponder-hit")
    done = hub.expect_line("done", timeout=HANG)
    # On the clock from the hit (the engine's log), within the move time and the session's grace.
    assert hub.logged_latency("ponder-hit", "done") <= 0.3 + allowed(0.025)
    done_moves(Board(), done)


def test_ponder_then_stop_ends_with_one_done(hub: Hub) -> None:
    hub.send(f"pos pos={START_HUB}")
    hub.send("level time=5 inc=1")
    hub.send("go ponder")
    hub.lines_until_info(lambda fields: True)  # the search is under way
    hub.send("stop")
    done_moves(Board(), hub.expect_line("done", timeout=HANG))
    hub.send("ping")
    assert not any(line.startswith("done") for line in hub.lines_until("pong"))


def test_other_command_during_search_stops_it_then_is_handled(hub: Hub) -> None:
    hub.send(f"pos pos={START_HUB}")
    hub.send("level infinite")
    hub.send("go analyze")
    hub.lines_until_info(lambda fields: True)  # the search is under way
    hub.send(f'pos pos={START_HUB} moves="23-19"')
    hub.send("level depth=1")
    hub.send("go think")
    first = hub.expect_line("done", timeout=HANG)
    done_moves(Board(), first)  # the interrupted search's move, legal at the start
    board = Board()
    board.push_text("23-19")
    done_moves(board, hub.expect_line("done", timeout=HANG))  # then the new search


def test_level_is_reset_after_pos_and_after_go(hub: Hub) -> None:
    # level infinite then pos: the next go think must end by itself (default time per move)
    hub.send("level infinite")
    hub.send(f"pos pos={START_HUB}")
    hub.send("go think")
    done_moves(Board(), hub.expect_line("done", timeout=HANG))
    hub.send("level infinite")
    hub.send("go think")
    hub.send("stop")
    hub.expect_line("done", timeout=HANG)
    hub.send("go think")  # no level again: ends by itself
    done_moves(Board(), hub.expect_line("done", timeout=HANG))


def test_bad_input_gives_error_and_keeps_state(hub: Hub) -> None:
    for line in ("go think", "frobnicate", "pos", "pos pos=" + "W" + "e" * 50,
                 "pos pos=Xbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww", f'pos pos={START_HUB} moves="23-19 23-19"',
                 f'pos pos={START_HUB} moves="23x19"', "level depth=-1", "level time=abc",
                 "set-param name=colour value=red", "set-param name=skill value=21", "set-param name=ponder value=2",
                 "set-param name=variant value=international", 'pos pos="Wbb', "go", "go fast"):
        hub.send(line)
        error = hub.expect_line("error", timeout=5)
        assert dict(parse_line(error)[1])["message"], line
    # go before any valid pos was the first error; now a valid pos, then bad ones keep it
    hub.send(f"pos pos={START_HUB}")
    hub.send(f'pos pos={START_HUB} moves="23-19 11-15 11-15"')
    hub.expect_line("error")
    hub.send("level depth=1")
    hub.send("go think")
    done_moves(Board(), hub.expect_line("done"))


def test_forced_move_and_no_move_positions(hub: Hub) -> None:
    hub.send(f"pos pos={FORCED}")
    hub.send("level infinite")
    hub.send("go think")
    done = hub.expect_line("done", timeout=HANG)  # a single legal move is answered at once
    assert done == "done move=22x13x18" or done.startswith("done move=22x13x18 ")
    hub.send(f"pos pos={NO_MOVES}")
    hub.send("go think")
    assert hub.expect_line("done", timeout=HANG) == "done"  # a bare done, as Scan sends


def test_multipv_param_adds_multipv_key(hub: Hub) -> None:
    hub.send("set-param name=multipv value=2")
    hub.send(f"pos pos={START_HUB}")
    hub.send("level depth=2")
    hub.send("go think")
    lines = hub.lines_until("done")
    assert all("multipv=" in line for line in lines if line.startswith("info "))


def test_quit_during_search_sends_done_then_exits() -> None:
    engine = Hub()
    engine.handshake()
    engine.send(f"pos pos={START_HUB}")
    engine.send("go analyze")
    engine.lines_until_info(lambda fields: True)  # the search is under way
    engine.send("quit")
    engine.expect_line("done", timeout=HANG)
    engine.child.expect(pexpect.EOF, timeout=HANG)
    engine.child.close()


def test_end_of_input_exits_at_once_even_while_searching() -> None:
    engine = Hub()
    engine.handshake()
    engine.send(f"pos pos={START_HUB}")
    engine.send("level infinite")
    engine.send("go think")
    engine.lines_until_info(lambda fields: True)  # the search is under way
    started = time.perf_counter()
    engine.child.sendeof()
    engine.child.expect(pexpect.EOF, timeout=HANG)
    # The infinite search is not waited for (it would never end); 0.5 s is the idle bound.
    assert time.perf_counter() - started < allowed(0.5)
    engine.child.close()
    assert engine.child.exitstatus == 0


def test_end_of_input_during_a_bounded_search_answers_then_exits() -> None:
    assert PEDINA is not None
    script = f"hub\nset-param name=book value=false\ninit\npos pos={START_HUB}\nlevel depth=9\ngo think\n"
    result = subprocess.run([PEDINA, "hub"], input=script, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    done_moves(Board(), lines[-1])
    # The search ran to its own bound before answering: a stop at the end of input would have
    # cut it short of its depth (a time bound, ended by the clock, could not tell the two apart).
    last = dict(parse_line([line for line in lines if line.startswith("info ")][-1])[1])
    assert last["depth"] == "9"


def test_a_bad_log_path_is_one_error_line_and_a_failed_start() -> None:
    assert PEDINA is not None
    for command in ("hub", "dxp"):
        result = subprocess.run([PEDINA, command, "--log", "/nonexistent/dir/x.log"], capture_output=True,
                                text=True, timeout=30, stdin=subprocess.DEVNULL)
        assert result.returncode == 1 and result.stdout == ""
        assert result.stderr == "Error: cannot open the log file /nonexistent/dir/x.log: No such file or directory\n"


def test_with_a_skill_the_last_info_before_done_is_the_move_played(hub: Hub) -> None:
    hub.send("set-param name=skill value=2")
    for seed in range(4):
        hub.send(f"set-param name=seed value={seed}")
        hub.send(f"pos pos={START_HUB}")
        hub.send("level depth=8")
        hub.send("go think")
        lines = hub.lines_until("done")
        infos = [dict(parse_line(line)[1]) for line in lines if line.startswith("info ")]
        # one line an iteration (skill 2 searches 2 plies), then the line of the move drawn
        # when it is not the line shown
        assert [info["depth"] for info in infos] in (["1", "2"], ["1", "2", "2"])
        move, _ = done_moves(Board(), lines[-1])
        assert (infos[-1]["pv"] or "").split()[0] == move


def test_go_analyze_with_a_skill_searches_until_stop(hub: Hub) -> None:
    hub.send("set-param name=skill value=2")
    hub.send(f"pos pos={START_HUB}")
    hub.send("go analyze")
    lines = hub.lines_until_info(lambda fields: int(fields["depth"] or "0") > 4)  # not stopped at the skill's, 2
    hub.send("stop")
    lines += hub.lines_until("done", HANG)
    done_moves(Board(), lines[-1])


def test_log_file_records_both_directions(tmp_path: pytest.TempPathFactory) -> None:
    log = f"{tmp_path}/session.log"
    engine = Hub("--log", log)
    engine.handshake()
    engine.send("ping")
    engine.expect_line("pong")
    engine.close()
    text = open(log, encoding="utf-8").read()
    assert re.search(r"> hub$", text, re.M) and re.search(r"< wait$", text, re.M)
    assert re.search(r"> ping$", text, re.M) and re.search(r"< pong$", text, re.M)


# -- the session's guarantees over the Hub ---------------------------------------------------


class LockedOutput(io.StringIO):
    """Output written from the session's threads, read from the test's."""

    def __init__(self) -> None:
        super().__init__()
        self.written = threading.Condition()

    def write(self, text: str) -> int:
        with self.written:
            count = super().write(text)
            self.written.notify_all()
        return count

    def lines(self) -> list[str]:
        with self.written:
            return self.getvalue().splitlines()

    def wait_for(self, count: int, word: str) -> float:
        """Seconds until ``count`` lines start with ``word``."""
        started = time.monotonic()
        with self.written:
            assert self.written.wait_for(lambda: sum(line.split()[0] == word for line in self.lines()) >= count,
                                         HANG), f"no {word}: {self.lines()}"
        return time.monotonic() - started


def test_a_searcher_ignoring_stop_still_gets_one_done_on_time_and_the_next_command_at_once() -> None:
    from pedina.timeman import GRACE, time_budget

    output = LockedOutput()
    engine = HubServer(output, settings=EngineSettings(hash_mb=1), searcher_factory=StubbornSearcher)
    for line in ("hub", "set-param name=book value=false", "init", f"pos pos={START_HUB}", "level move-time=0.3"):
        engine.handle(line)
    budget = time_budget(Limits(move_time=0.3))
    assert budget is not None
    try:
        engine.handle("go think")
        # Only the watchdog can answer (the stub is held); idle, within 50 ms of its limit.
        assert output.wait_for(1, "done") <= budget.watchdog + allowed(0.05)
        assert output.lines()[-1] == f"done move={Board().legal_moves()[-1].hub()}"  # from the reported line

        for line in (f"pos pos={START_HUB}", "ping", "go analyze"):  # the stub is still held
            started = time.monotonic()
            engine.handle(line)
            assert time.monotonic() - started < allowed(0.1), line
        assert "pong" in output.lines()
        engine.handle("stop")
        assert output.wait_for(2, "done") <= GRACE + allowed(0.05)
    finally:
        HeldSearcher.release()  # both stubs return now: still one done per go, no info after a done
    words = [line.split()[0] for line in output.lines() if not line.startswith("error ")]
    assert words.count("done") == 2
    assert words[-1] == "done" and words[words.index("done") - 1] == "info"
    assert any("did not return in time" in line for line in output.lines())  # said, not hidden


def test_a_move_time_of_centuries_keeps_the_watchdog_and_its_answer_after_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    """``threading`` refuses a timeout past the platform's clock: a watchdog waiting for the
    deadline of ``move-time=1e10`` in one wait died of it, and a searcher deaf to ``stop``
    then left the ``go`` unanswered."""
    from pedina.timeman import GRACE

    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hook: failures.append(hook.exc_value))
    output = LockedOutput()
    engine = HubServer(output, settings=EngineSettings(hash_mb=1), searcher_factory=StubbornSearcher)
    for line in ("hub", "set-param name=book value=false", "init", f"pos pos={START_HUB}", "level move-time=1e10"):
        engine.handle(line)
    try:
        engine.handle("go think")
        engine.handle("ping")  # a round trip, in which the watchdog starts its wait for the deadline
        output.wait_for(1, "pong")
        engine.handle("stop")
        assert output.wait_for(1, "done") <= GRACE + allowed(0.05)
    finally:
        HeldSearcher.release()
    assert failures == []
    assert [line.split()[0] for line in output.lines()].count("done") == 1


def test_a_closed_output_ends_the_engine_during_an_endless_search(tmp_path: Path) -> None:
    assert PEDINA is not None
    log = tmp_path / "hub.log"
    engine = subprocess.Popen([PEDINA, "hub", "--log", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert engine.stdin is not None and engine.stdout is not None
    try:
        engine.stdin.write(f"hub\nset-param name=book value=false\ninit\npos pos={START_HUB}\ngo analyze\n")
        engine.stdin.flush()
        while not engine.stdout.readline().startswith("info "):  # searching, for ever
            pass
        engine.stdout.close()
        assert engine.wait(timeout=30) == 0  # with no input line after: the closed output alone ended it
        # Whichever sees it first ends it: the watch on the output, or the next info line's failed write.
        last = log.read_text(encoding="utf-8").splitlines()[-1]
        assert re.search(r"# (the client closed our output|writing to the client failed): the engine ends$", last)
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait()
        engine.stdin.close()


def test_an_input_line_too_long_is_an_error_and_the_engine_goes_on() -> None:
    assert PEDINA is not None
    script = "hub\n" + "pos pos=" + "e" * (2 * MAX_LINE_BYTES) + "\nping\n"
    result = subprocess.run([PEDINA, "hub"], input=script, capture_output=True, text=True, timeout=60)
    lines = result.stdout.splitlines()
    assert lines[-2:] == [f'error message="input line longer than {MAX_LINE_BYTES} bytes: skipped"', "pong"], lines


def test_input_lines_are_read_in_bounded_memory() -> None:
    stream = io.BytesIO(b"go think\n" + b"x" * (8 * MAX_LINE_BYTES) + b"\nping\n" + b"y" * 10)
    skipped = []
    tracemalloc.start()
    try:
        lines = list(read_lines(stream, MAX_LINE_BYTES, lambda: skipped.append(True)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert lines == ["go think\n", "ping\n", "y" * 10] and skipped == [True]
    assert peak < 3 * MAX_LINE_BYTES
