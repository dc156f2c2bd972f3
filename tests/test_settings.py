"""Engine settings declared once: the value, the Hub parameters and the command line's options
all come from :data:`pedina.settings.SETTINGS`."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pedina import Board, EngineSettings, Limits, Session
from pedina.egdb import EndgameDatabaseError, shipped_directory
from pedina.protocol.cli import main
from pedina.protocol.hub import HubServer, declared_params, hub_parameters
from pedina.protocol.hubline import parse_line
from pedina.search import Info, Result
from pedina.settings import SETTINGS, value_type
from stub_searchers import STUB_SETTINGS, ScriptedSearcher

#: Every command that searches, as ``pedina`` names it: each takes its engine options from one decorator.
SEARCHING_COMMANDS = (("play",), ("analyze",), ("demo",), ("dxp",), ("bench",), ("book", "build"), ("gui",),
                      ("hub",))


class SettingsRecorder(ScriptedSearcher):
    """A stub that keeps every searcher it makes, to read the settings each was given."""

    made: list[SettingsRecorder] = []

    def __init__(self, settings: EngineSettings = STUB_SETTINGS) -> None:
        super().__init__(settings)
        SettingsRecorder.made.append(self)


def command(path: tuple[str, ...]) -> click.Command:
    ctx = click.Context(main)
    found: click.Command | None = main
    for name in path:
        assert isinstance(found, click.Group)
        ctx = click.Context(found, parent=ctx, info_name=name)
        found = found.get_command(ctx, name)
    assert found is not None
    return found


def option(cmd: click.Command, flag: str) -> click.Option:
    for param in cmd.params:
        if isinstance(param, click.Option) and flag in param.opts + param.secondary_opts:
            return param
    raise AssertionError(f"{cmd.name} has no {flag}")


def test_every_field_has_one_row_and_the_defaults_are_valid() -> None:
    assert [row.field for row in SETTINGS] == [item.name for item in fields(EngineSettings)]
    assert EngineSettings().egdb_path == shipped_directory()
    assert len({row.hub_name for row in SETTINGS}) == len(SETTINGS)
    assert len({row.option for row in SETTINGS}) == len(SETTINGS)


@pytest.mark.parametrize("changes, named", [({"hash_mb": 0}, "hash_mb"), ({"skill": 21}, "skill"),
                                            ({"multipv": "3"}, "multipv"), ({"book": 1}, "book"),
                                            ({"seed": -1}, "seed"), ({"egdb_path": None}, "egdb_path")])
def test_a_bad_value_is_refused_naming_the_field(changes: dict[str, object], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        EngineSettings().with_values(changes)


def test_the_hub_declares_every_setting_with_its_bounds_and_the_starting_value() -> None:
    settings = EngineSettings(hash_mb=8, skill=13, book=False, egdb_path="")
    params = declared_params(settings)
    for row in SETTINGS:
        param = params[row.hub_name]
        assert param.field == row.field
        assert param.parse(param.default) == getattr(settings, row.field)
        if value_type(row.field) is int:
            assert (param.low, param.high) == (row.low, row.high)
    assert set(params) == {row.hub_name for row in SETTINGS} | {"variant", "ponder"}
    assert hub_parameters(settings) == {"tt-size": "8", "skill": "13", "book": "false", "egdb-path": ""}

    output = io.StringIO()
    HubServer(output, settings=settings, searcher_factory=ScriptedSearcher).run(["hub"])
    announced = [dict(parse_line(line)[1]) for line in output.getvalue().splitlines() if line.startswith("param ")]
    declared = {pairs["name"]: pairs["value"] for pairs in announced}
    assert declared["tt-size"] == "8" and declared["skill"] == "13" and declared["book"] == "false"


def test_set_param_reaches_the_searcher_through_the_settings() -> None:
    SettingsRecorder.made = []
    output = io.StringIO()
    lines = ["hub", "set-param name=tt-size value=3", "set-param name=multipv value=4", "set-param name=skill value=9",
             "set-param name=seed value=77", "set-param name=book value=false", "set-param name=book-variety value=5",
             'set-param name=egdb-path value=""', "init"]
    HubServer(output, settings=STUB_SETTINGS, searcher_factory=SettingsRecorder).run(lines)
    assert "error" not in output.getvalue()
    assert [searcher.settings for searcher in SettingsRecorder.made] == [
        EngineSettings(hash_mb=3, multipv=4, skill=9, seed=77, egdb_path="", book=False, book_variety=5)]
    assert SettingsRecorder.made[0].prepared == 1  # init readies the searcher before the first go


def test_a_folder_without_tables_is_refused_and_the_earlier_tables_stay(tmp_path: Path) -> None:
    output = io.StringIO()
    engine = HubServer(output, settings=STUB_SETTINGS, searcher_factory=SettingsRecorder)
    engine.run(["hub", f"set-param name=egdb-path value={tmp_path}", "init"])
    lines = output.getvalue().splitlines()
    assert any(line.startswith("error ") and "egdb-path" in line and "no complete set" in line for line in lines)
    assert lines[-1] == "ready"
    assert SettingsRecorder.made[-1].settings.egdb_path == ""


def test_the_session_refuses_a_folder_without_tables_and_keeps_its_settings(tmp_path: Path) -> None:
    with pytest.raises(EndgameDatabaseError):
        Session(EngineSettings(egdb_path=str(tmp_path)))
    session = Session(STUB_SETTINGS, searcher_factory=ScriptedSearcher)
    with pytest.raises(EndgameDatabaseError):
        session.configure(replace(session.settings, egdb_path=str(tmp_path / "missing")))
    assert session.settings == STUB_SETTINGS
    answer = session.think(Board(), Limits(depth=1))
    assert answer.move is not None


@pytest.mark.parametrize("path", SEARCHING_COMMANDS, ids=" ".join)
def test_every_searching_command_has_the_one_hash_default(path: tuple[str, ...]) -> None:
    hash_option = option(command(path), "--hash")
    assert hash_option.default == EngineSettings().hash_mb
    assert isinstance(hash_option.type, click.IntRange)
    assert (hash_option.type.min, hash_option.type.max) == (SETTINGS[0].low, SETTINGS[0].high)


def test_bench_probes_no_tables_unless_told() -> None:
    bench = command(("bench",))
    assert option(bench, "--egdb").default is None and "[default: none]" in (option(bench, "--egdb").help or "")
    assert "the tables shipped" in (option(command(("play",)), "--egdb").help or "")


def test_the_options_make_one_settings_value_and_refuse_contradictions(tmp_path: Path) -> None:
    runner = CliRunner()
    both = runner.invoke(main, ["analyze", "W:W21-32:B1-12", "--depth", "1", "--egdb", str(tmp_path), "--no-egdb"])
    assert both.exit_code == 2 and "contradict" in both.output
    empty = runner.invoke(main, ["analyze", "W:W21-32:B1-12", "--depth", "1", "--egdb", str(tmp_path)])
    assert empty.exit_code == 2 and "no complete set of tables" in empty.output
    weak = runner.invoke(main, ["analyze", "W:W21-32:B1-12", "--depth", "2", "--multipv", "2", "--no-egdb",
                                "--hash", "2", "--json"])
    assert weak.exit_code == 0, weak.output
    assert '"multipv": 2' in weak.output
    assert runner.invoke(main, ["play", "--skill", "21"]).exit_code == 2


def test_gui_engine_options_set_pedinas_own_engine_only() -> None:
    runner = CliRunner()
    refused = runner.invoke(main, ["gui", "--engine", "cmd=pedina hub", "--skill", "3", "--no-browser"])
    assert refused.exit_code == 2 and "option.NAME=VALUE" in refused.output


def test_init_answers_ready_even_when_the_tables_cannot_be_opened(tmp_path: Path) -> None:
    from pedina.egdb import build_databases

    build_databases(str(tmp_path), 2)
    broken = sorted(tmp_path.glob("*.egdb"))[0]
    broken.write_bytes(broken.read_bytes()[:5])  # cut short, as an interrupted copy leaves it
    output = io.StringIO()
    HubServer(output, settings=STUB_SETTINGS).run(["hub", f"set-param name=egdb-path value={tmp_path}", "init"])
    lines = output.getvalue().splitlines()
    assert lines[-1] == "ready"
    assert any(line.startswith("error ") and "init" in line for line in lines[:-1])


#: The start of a script run by :func:`_under_a_memory_limit`: a Hub engine on a StringIO, and
#: ``limit_to(more)``, which leaves the process ``more`` bytes of address space beyond what it has.
_LIMITED_ENGINE = """
import io, resource, threading
from pedina.protocol.hub import HubServer

threading.stack_size(256 * 1024)  # the search's thread within a few MB (8 MB by default)

def limit_to(more):
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + more, size + more))

output = io.StringIO()
engine = HubServer(output)
"""


def _under_a_memory_limit(script: str) -> list[str]:
    """The lines printed by ``script`` run after :data:`_LIMITED_ENGINE` in a process of its
    own (a memory limit is for the process's life), which must end well."""
    import subprocess
    import sys
    import textwrap

    run = subprocess.run([sys.executable, "-c", _LIMITED_ENGINE + textwrap.dedent(script)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_a_hash_size_whose_memory_cannot_be_had_leaves_the_engine_as_it_was() -> None:
    lines = _under_a_memory_limit("""
        for line in ("hub", "set-param name=tt-size value=8", "set-param name=book value=false", "init"):
            engine.handle(line)
        limit_to(64 * 1024 * 1024)  # 4096 MB of table cannot be had
        engine.handle("set-param name=tt-size value=4096")
        engine.run(["pos pos=Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww", "level depth=4", "go think"])
        print(output.getvalue())
    """)
    errors = [line for line in lines if line.startswith("error ")]
    assert len(errors) == 1 and "tt-size" in errors[0] and "stay as they were (tt-size=8 " in errors[0], lines
    assert any(line.startswith("info depth=4 ") for line in lines) and lines[-2].startswith("done move=")


def test_a_hash_table_fills_in_the_memory_it_took_at_once() -> None:
    """Issue 30.6: a large table under a memory limit aborted the process as it filled. The
    table's memory is now all taken when it is made: searching that fills it needs no more."""
    lines = _under_a_memory_limit("""
        for line in ("hub", "set-param name=tt-size value=32", "set-param name=book value=false", "init"):
            engine.handle(line)
        limit_to(4 * 1024 * 1024)  # the table's entries as Python objects took that after 300k nodes
        engine.run(["pos pos=Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww", "level nodes=300000", "go think"])  # to the end
        engine.run(["ping", "new-game", "pos pos=Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww", "level depth=2", "go think"])
        print(output.getvalue())
    """)
    assert any(" nodes=300" in line for line in lines), lines  # the first search went to its end
    assert sum(line.startswith("done move=") for line in lines) == 2 and "pong" in lines, lines
    assert not any(line.startswith("error") for line in lines), lines


class LimitsRecorder(ScriptedSearcher):
    """A stub that keeps the limits of every search it is asked for."""

    def __init__(self, settings: EngineSettings = STUB_SETTINGS) -> None:
        super().__init__(settings)
        self.asked: list[Limits] = []

    def script(self, board: Board, limits: Limits, on_info: Callable[[Info], None] | None) -> Result:
        self.asked.append(limits)
        return super().script(board, limits, None)


def test_the_move_overhead_comes_off_every_timed_move_and_nothing_else() -> None:
    recorder = LimitsRecorder()
    session = Session(replace(STUB_SETTINGS, move_overhead_ms=250, book=False), searcher_factory=lambda _: recorder)
    session.think(Board(), Limits(move_time=1.0))
    session.think(Board(), Limits(clock=10.0, inc=0.5))
    session.think(Board(), Limits(move_time=0.1))  # never below a millisecond
    session.think(Board(), Limits(depth=3))
    session.configure(replace(STUB_SETTINGS, book=False))
    session.think(Board(), Limits(move_time=1.0))
    assert [(limits.move_time, limits.clock, limits.inc, limits.depth) for limits in recorder.asked] == [
        (0.75, None, 0.0, None), (None, 9.75, 0.5, None), (0.001, None, 0.0, None), (None, None, 0.0, 3),
        (1.0, None, 0.0, None)]


def test_the_hub_sets_the_move_overhead_within_its_bounds() -> None:
    SettingsRecorder.made = []
    output = io.StringIO()
    HubServer(output, settings=STUB_SETTINGS, searcher_factory=SettingsRecorder).run(
        ["hub", "set-param name=move-overhead value=5001", "set-param name=move-overhead value=120", "init"])
    assert output.getvalue().count("error") == 1 and "5001" in output.getvalue()
    assert [searcher.settings.move_overhead_ms for searcher in SettingsRecorder.made] == [120]
    assert "--move-overhead" in option(command(("hub",)), "--move-overhead").opts
