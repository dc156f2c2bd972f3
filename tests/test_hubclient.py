"""The Hub client against the fixture engine and against deliberately broken ones."""

from __future__ import annotations

import queue
import sys
import time
from pathlib import Path

import pytest

from pedina.protocol.hubclient import (EngineCrashed, EngineProtocolError, EngineTimeout, HubClient,
                                seconds_text, split_line)
from pedina.protocol.engineclient import next_before
from pedina.scores import Score, hub_value
from pedina.timeman import LONGEST_WAIT
from timing import allowed

FIXTURE = str(Path(__file__).parent / "fixtures" / "random_engine.py")
START = "Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww"


def random_engine() -> HubClient:
    return HubClient([sys.executable, FIXTURE], label="R")


def test_split_line_reads_quotes_flags_and_blanks() -> None:
    assert split_line('info depth=9 score=0.12 pv="23-19 10-14"') == (
        "info", {"depth": "9", "score": "0.12", "pv": "23-19 10-14"})
    assert split_line("go think") == ("go", {"think": ""})
    assert split_line('id name = "A B" author=""') == ("id", {"name": "A B", "author": ""})
    assert split_line("") == ("", {})
    assert split_line('info pv="unclosed') == ("", {})


def test_scores_and_seconds_text() -> None:
    assert hub_value("0.12") == 12
    assert hub_value("-99.97") == -9997
    assert hub_value("x") is None and hub_value("nan") is None and hub_value("inf") is None
    assert seconds_text(59.25) == "59.25"
    assert seconds_text(0.0001) == "0"
    assert seconds_text(-0.05) == "-0.05"
    assert seconds_text(1e-7) == "0"


def test_a_far_deadline_is_waited_for_in_pieces_a_past_one_not_at_all() -> None:
    """One wait for ``move-time=1e10`` would raise OverflowError (threading refuses it): the
    engine clients wait in pieces of LONGEST_WAIT until their deadline."""

    class Watched(queue.Queue[str]):
        """A queue that is empty on its first read, and says how long each read would wait."""

        def __init__(self) -> None:
            super().__init__()
            self.timeouts: list[float | None] = []

        def get(self, block: bool = True, timeout: float | None = None) -> str:
            self.timeouts.append(timeout)
            if len(self.timeouts) == 1:
                raise queue.Empty
            return "done move=23-19"

    lines = Watched()
    assert next_before(lines, time.monotonic() + 1e10) == "done move=23-19"
    assert lines.timeouts == [LONGEST_WAIT, LONGEST_WAIT]
    with pytest.raises(queue.Empty):
        next_before(queue.Queue(), time.monotonic() - 1.0)


def test_handshake_and_search() -> None:
    with random_engine() as engine:
        ident = engine.handshake({"seed": "3"}, timeout=20)
        assert ident.name == "Random" and {"variant", "seed", "mode"} <= set(ident.params)
        engine.new_game()
        engine.ping()
        report = engine.go(START, ["23-19", "10-14"], {"depth": 2}, timeout=10)
        assert report.move == "19x10x14"    # the only legal move
        assert report.score == Score(0) and report.depth == 1 and report.infos == 1
        assert 0 <= report.elapsed < 10
        sent = [line for line in engine.tail() if line.startswith(">")]
        assert sent[-4:] == [f'> pos pos={START} moves="23-19 10-14"', "> level depth=2", "> go think", "> ping"]


def test_unknown_parameter_is_refused_with_the_list() -> None:
    with random_engine() as engine:
        with pytest.raises(EngineProtocolError, match="no parameter 'hash'.*declares: after, delay"):
            engine.handshake({"hash": "8"}, timeout=20)


def test_crash_is_reported_with_the_last_lines() -> None:
    with random_engine() as engine:
        engine.handshake({"mode": "crash"}, timeout=20)
        with pytest.raises(EngineCrashed, match="exited with code 3") as caught:
            engine.go(START, [], {"depth": 1}, timeout=10)
        assert "> go think" in caught.value.tail


def test_silent_engine_times_out() -> None:
    with random_engine() as engine:
        engine.handshake({"mode": "hang"}, timeout=20)
        started = time.monotonic()
        with pytest.raises(EngineTimeout, match="no answer"):
            engine.go(START, [], {"depth": 1}, timeout=0.3)
        assert time.monotonic() - started < 0.3 + allowed(0.3)  # the engine hangs forever: not waited for
    assert engine.process.poll() is not None  # closed: the process is gone


def test_missing_command_is_a_clear_error() -> None:
    with pytest.raises(EngineCrashed, match="cannot start 'no-such-engine-xyz --hub': No such file"):
        HubClient("no-such-engine-xyz --hub")
