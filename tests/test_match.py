"""``pedina match``: whole matches with Pedina and with the fixture engines (fast settings)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner, Result

from pedina.protocol.match.stats import Sprt
from pedina import Board, Position, legal_moves, perft
from pedina.pdn import read_games, write_game
from pedina.protocol.cli import main
from pedina.protocol.match.options import MatchError
from pedina.protocol.match.schedule import all_openings, read_openings, schedule
from timing import HANG, wait_until

PYTHON = shlex.quote(sys.executable)
PEDINA = f"{PYTHON} -m pedina.protocol.cli hub"
FIXTURE = str(Path(__file__).parent / "fixtures" / "random_engine.py")
RANDOM = f"{PYTHON} {shlex.quote(FIXTURE)}"


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["match", *args])


def games_of(path: Path) -> dict[tuple[str, str, str], tuple[str, list[str], str]]:
    """Round, White, Black -> result, moves (Hub text), termination, as pedina.pdn reads the file."""
    return {(g.headers["Round"], g.headers["White"], g.headers["Black"]):
            (g.result, [m.hub() for m in g.board.moves], g.headers["Termination"])
            for g in read_games(path.read_text())}


def test_pedina_match_runs_and_its_pdn_reads_back_in_pydraughts(tmp_path: Path) -> None:
    from draughts import WHITE, Board as PyBoard, Move as PyMove
    from draughts.PDN import PDNReader

    pdn = tmp_path / "games.pdn"
    result = run("--engine", f"cmd={PEDINA}", "name=deep", "depth=3",
                 "--engine", f"cmd={PEDINA}", "name=shallow", "depth=1", "option.tt-size=8",
                 "--games", "4", "--maxplies", "120", "--pdnout", str(pdn), "--event", "Test match")
    assert result.exit_code == 0, result.output
    assert "4/4 games" in result.output and "4 games played" in result.output
    assert "deep vs shallow: +" in result.output and "LOS" in result.output
    ours = read_games(pdn.read_text())
    theirs = PDNReader(filename=str(pdn)).games
    assert len(ours) == len(theirs) == 4
    for game, read in zip(ours, theirs):
        assert read.tags["GameType"] == "22" and read.variant == "italian"
        assert read.game_ending == game.result == read.tags["Result"] != "*"
        for tag in ("Event", "Site", "Date", "Round", "White", "Black", "TimeControl", "Termination"):
            assert read.tags[tag] == game.headers[tag]
        assert read.tags["Event"] == "Test match"
        assert {read.tags["White"], read.tags["Black"]} == {"deep", "shallow"}
        assert read.tags["TimeControl"] == "depth 3 / depth 1" or read.tags["TimeControl"] == "depth 1 / depth 3"
        assert len(read.moves) == len(game.board.moves) >= 3
        board = PyBoard(variant="italian", fen="startpos")
        for text in read.moves:
            board.push(PyMove(board, pdn_move=text))
        if read.tags["Termination"] == "normal":    # no moves left: pydraughts sees the same winner
            assert board.is_over()
            assert (board.winner() == WHITE) == (read.game_ending == "1-0")
    # the two games of each round used the same opening, with the colours swapped
    assert [g.headers["Round"] for g in ours] == ["1", "1", "2", "2"]
    assert ours[0].board.moves[:3] == ours[1].board.moves[:3]
    assert ours[0].headers["White"] == ours[1].headers["Black"]


def test_broken_engines_lose_and_the_match_finishes(tmp_path: Path) -> None:
    pdn = tmp_path / "broken.pdn"
    result = run("--engine", f"cmd={RANDOM}", "name=good", "option.seed=1",
                 "--engine", f"cmd={RANDOM}", "name=illegal", "option.mode=illegal", "option.after=6",
                 "--engine", f"cmd={RANDOM}", "name=crash", "option.mode=crash", "option.after=6",
                 "--engine", f"cmd={RANDOM}", "name=silent", "option.mode=hang", "option.after=6",
                 "--engine", f"cmd={RANDOM}", "name=slow", "option.mode=slow", "option.after=6",
                 "option.delay=0.6", "st=0.1",
                 "--gauntlet", "--rounds", "1", "--depth", "1", "--timeout", "1", "--timemargin", "0.1",
                 "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    games = games_of(pdn)
    assert len(games) == 8
    reasons = {"illegal": "illegal move", "crash": "crash", "silent": "no answer", "slow": "time forfeit"}
    for (_, white, black), (outcome, moves, termination) in games.items():
        loser = black if white == "good" else white
        assert termination == reasons[loser]
        assert outcome == ("1-0" if white == "good" else "0-1")
        assert len(moves) >= 6           # the engines misbehave only from ply 6 on
    # each failure is logged with the engine's last lines
    assert "illegal loses by illegal move" in result.output and "< done move=1-2" in result.output
    assert "crash loses by crash" in result.output and "exited with code 3" in result.output
    assert "silent loses by no answer" in result.output and "> go think" in result.output
    assert "slow loses by time forfeit" in result.output
    assert any(line.split()[:3] == ["1", "good", "8"] for line in result.output.splitlines())  # ranked first
    assert "Engine failures:" in result.output


@pytest.mark.parametrize("stopping", [True, False])
def test_an_engine_failing_as_the_match_stops_drops_its_game_unscored(stopping: bool) -> None:
    """A match that stops (an SPRT decision, Ctrl-C) sets its stop flag and then closes the
    engines under the games in play: an engine starting a game then fails, and its game is
    dropped (:class:`Aborted`), never scored as its loss. The same failure in a match that goes
    on is the engine's loss."""
    from pedina.protocol.engineclient import EngineCrashed
    from pedina.protocol.match.game import (Aborted, EngineSpec, Opening, ScheduledGame, Seats, Settings, TimeControl,
                                            play_hub_game)
    from pedina.protocol.sessionclient import SessionClient
    from pedina.session import Session
    from pedina.settings import EngineSettings

    stop = threading.Event()

    class ClosedInItsNewGame(SessionClient):
        def new_game(self) -> None:
            if stopping:
                stop.set()
            raise self._error(EngineCrashed, "closed its output")

    def engine() -> SessionClient:
        return ClosedInItsNewGame(Session(EngineSettings(hash_mb=4, egdb_path="", book=False)), label="closed")

    specs = [EngineSpec(name, "", tc=TimeControl(depth=1), in_process=engine) for name in ("A", "B")]
    game = ScheduledGame(1, 1, Opening(Position.start()), 0, 1)
    seats = Seats(specs, Settings())
    try:
        if stopping:
            with pytest.raises(Aborted):
                play_hub_game(game, specs, seats, Settings(), stop)
        else:
            record = play_hub_game(game, specs, seats, Settings(), stop)
            assert (record.result, record.termination) == ("0-1", "crash")
    finally:
        seats.close_all()


def test_a_silent_engine_under_a_clock_loses_on_time() -> None:
    result = run("--engine", f"cmd={RANDOM}", "name=good",
                 "--engine", f"cmd={RANDOM}", "name=silent", "option.mode=hang", "option.after=2",
                 "--tc", "0.3+0.05", "--games", "2")
    assert result.exit_code == 0, result.output
    assert "silent loses by time forfeit" in result.output
    assert "good vs silent: +2 =0 -0" in result.output
    assert "White vs Black: +1 =0 -1" in result.output


def test_concurrent_fixed_depth_games_equal_the_sequential_ones(tmp_path: Path) -> None:
    runs = []
    for concurrency in ("1", "2"):
        pdn = tmp_path / f"c{concurrency}.pdn"
        result = run("--engine", f"cmd={PEDINA}", "name=A", "--engine", f"cmd={PEDINA}", "name=B",
                     "option.skill=10", "--depth", "2", "--games", "6", "--maxplies", "100",
                     "--shuffle", "--seed", "7", "--concurrency", concurrency, "--pdnout", str(pdn))
        assert result.exit_code == 0, result.output
        runs.append(games_of(pdn))
    assert len(runs[0]) == 6
    assert runs[0] == runs[1]


def test_adjudication_by_agreeing_scores(tmp_path: Path) -> None:
    draws = tmp_path / "draw.pdn"
    result = run("--engine", f"cmd={RANDOM}", "name=A", "option.score=0.05",
                 "--engine", f"cmd={RANDOM}", "name=B", "option.score=-0.1", "option.seed=2",
                 "--depth", "1", "--games", "2", "--draw", "movenumber=10", "movecount=3", "score=10",
                 "--pdnout", str(draws))
    assert result.exit_code == 0, result.output
    assert "adjudication: draw by score 2" in result.output and "A vs B: +0 =2 -0" in result.output
    for outcome, moves, termination in games_of(draws).values():
        assert (outcome, termination, len(moves)) == ("1/2-1/2", "adjudication: draw by score", 19)
    wins = tmp_path / "win.pdn"
    result = run("--engine", f"cmd={RANDOM}", "name=A", "option.score=4",
                 "--engine", f"cmd={RANDOM}", "name=B", "option.score=-4", "--depth", "1",
                 "--games", "2", "--resign", "movecount=2", "score=300", "--pdnout", str(wins))
    assert result.exit_code == 0, result.output
    assert "A vs B: +2 =0 -0" in result.output
    for outcome, moves, termination in games_of(wins).values():
        assert termination == "adjudication: win by score"
        assert len(moves) == 3 + 4    # the opening, then two scores from each engine
    # both engines claim to be winning: no agreement, no adjudication
    disagree = tmp_path / "disagree.pdn"
    result = run("--engine", f"cmd={RANDOM}", "name=A", "option.score=4",
                 "--engine", f"cmd={RANDOM}", "name=B", "option.score=4", "--depth", "1",
                 "--games", "2", "--resign", "movecount=2", "score=300", "--pdnout", str(disagree))
    assert result.exit_code == 0, result.output
    assert all(termination == "normal" for _, _, termination in games_of(disagree).values())


def test_maximum_length(tmp_path: Path) -> None:
    short = tmp_path / "short.pdn"
    result = run("--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B",
                 "--depth", "1", "--games", "4", "--maxplies", "12", "--pdnout", str(short))
    assert result.exit_code == 0, result.output
    games = games_of(short).values()
    assert all(len(moves) <= 12 for _, moves, _ in games)
    assert all((outcome, termination) == ("1/2-1/2", "adjudication: maximum length")
               for outcome, moves, termination in games if len(moves) == 12)
    assert any(len(moves) == 12 for _, moves, _ in games)


def test_resume_plays_only_the_missing_games(tmp_path: Path) -> None:
    pdn, log = tmp_path / "resume.pdn", tmp_path / "engine.log"
    args = ["--engine", f"cmd={RANDOM}", "name=A", "option.seed=1", f"option.log={log}",
            "--engine", f"cmd={RANDOM}", "name=B", "option.seed=2",
            "--depth", "1", "--games", "8", "--pdnout", str(pdn)]
    full = run(*args)
    assert full.exit_code == 0, full.output
    reference = games_of(pdn)
    assert len(reference) == 8
    # an interrupted match: three finished games, the fourth cut off while being written
    text = pdn.read_text()
    starts = [i for i in range(len(text)) if text.startswith("[Event ", i)]
    pdn.write_text(text[:starts[3]] + text[starts[3]:starts[4]][:150])
    kept = text[:starts[3]]
    assert run(*args).exit_code != 0              # an existing file needs --resume
    log.unlink()
    resumed = run(*args, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "dropped 1 unfinished game" in resumed.output
    assert "resuming: 3 of 8 games already played" in resumed.output
    assert "5 games played" in resumed.output and "3 resumed" in resumed.output
    assert log.read_text().count("new-game") == 5  # engine A started exactly the 5 missing games
    assert pdn.read_text().startswith(kept)        # finished games untouched
    assert games_of(pdn) == reference              # same games (deterministic engines), none twice
    again = run(*args, "--resume")                 # nothing left to play
    assert again.exit_code == 0 and "0 games played" in again.output
    assert games_of(pdn) == reference


def test_resume_refuses_a_different_schedule(tmp_path: Path) -> None:
    pdn = tmp_path / "other.pdn"
    args = ["--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B",
            "--depth", "1", "--games", "2", "--pdnout", str(pdn)]
    assert run(*args).exit_code == 0
    result = run(*args, "--shuffle", "--seed", "5", "--resume")
    assert result.exit_code == 1
    assert "not in this match's schedule" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("interrupt", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "kill"])
def test_interrupted_match_keeps_finished_games_and_resume_completes(tmp_path: Path, interrupt: int) -> None:
    pdn = tmp_path / "int.pdn"
    command = [sys.executable, "-m", "pedina.protocol.cli", "match",
               "--engine", f"cmd={RANDOM}", "name=A", "option.mode=slow", "option.delay=0.05",
               "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", "--maxplies", "20",
               "--games", "12", "--pdnout", str(pdn)]
    # A shell running us in the background ignores SIGINT, and children inherit that;
    # a terminal's Ctrl-C reaches a process with the default handling, so restore it.
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_until(lambda: pdn.exists() and pdn.read_text().count("[Event ") >= 2, what="two finished games")
    process.send_signal(interrupt)
    output, _ = process.communicate(timeout=30)
    assert process.returncode == 130, output
    assert "--resume" in output and "Traceback" not in output
    saved = len(read_games(pdn.read_text()))
    assert 2 <= saved < 12
    finished = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert f"{12 - saved} games played" in finished.stdout
    assert len(games_of(pdn)) == 12


def test_sprt_stops_the_match_when_decided() -> None:
    result = run("--engine", f"cmd={RANDOM}", "name=good",
                 "--engine", f"cmd={RANDOM}", "name=bad", "option.mode=illegal",
                 "--depth", "1", "--games", "60", "--sprt", "elo0=0", "elo1=10", "alpha=0.05", "beta=0.05")
    assert result.exit_code == 0, result.output
    assert "H1 accepted" in result.output
    assert "16 games played" in result.output     # 16 straight wins decide it (see test_stats)
    # 8 pairs, every one won twice: the pentanomial counts and their own LLR
    assert "game pairs (LL LD DD/WL WD WW): pairs 8 [0, 0, 0, 0, 8]  Elo +inf" in result.output
    llr = re.search(r"SPRT on game pairs \(pentanomial\): LLR (\S+)", result.output)
    assert llr and float(llr.group(1)) == pytest.approx(Sprt(0, 10).pair_llr([0, 0, 0, 0, 8]), abs=0.01)


def test_plot_is_saved(tmp_path: Path) -> None:
    import matplotlib  # noqa: F401  (a test dependency: the plot must really be drawn)
    picture = tmp_path / "elo.png"
    result = run("--engine", f"cmd={RANDOM}", "name=A", "option.seed=3",
                 "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", "--games", "6",
                 "--plot", str(picture))
    assert result.exit_code == 0, result.output
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name, words", [("no/such/folder/elo.png", "there is no folder"),
                                         ("elo.xyz", "must end in a picture format")])
def test_a_bad_plot_path_is_refused_before_any_game(tmp_path: Path, name: str, words: str) -> None:
    result = run("--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
                 "--games", "2", "--plot", str(tmp_path / name))
    assert result.exit_code == 1 and words in result.output
    assert "games played" not in result.output and "0/2 games" not in result.output


def test_a_plot_that_cannot_be_saved_fails_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Figure, "savefig", refuse)
    result = run("--engine", f"cmd={RANDOM}", "name=A", "option.seed=3", "--engine", f"cmd={RANDOM}", "name=B",
                 "--depth", "1", "--games", "6", "--plot", str(tmp_path / "elo.png"))
    assert result.exit_code == 1, result.output
    assert "6 games played" in result.output
    assert result.output.splitlines()[-1] == f"Error: cannot save the picture {tmp_path / 'elo.png'}: Permission denied"


def test_an_infinite_elo_says_why_there_is_no_plot(tmp_path: Path) -> None:
    picture = tmp_path / "elo.png"
    result = run("--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B", "option.mode=illegal",
                 "--depth", "1", "--games", "4", "--plot", str(picture))
    assert result.exit_code == 0, result.output
    assert "no Elo plot: A won or lost every game (+4 =0 -0" in result.output and not picture.exists()
    assert "Warning" not in result.output


def test_plot_without_matplotlib_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = run("--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
                 "--plot", "x.png")
    assert result.exit_code == 1
    assert result.output.strip() == "Error: --plot needs matplotlib: pip install 'pedina[plot]'"


@pytest.mark.parametrize("args, message", [
    (["--engine", f"cmd={RANDOM}", "--depth", "1"], "at least two --engine"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}"], "no time control"),
    (["--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=A", "--depth", "1"],
     "names must differ"),
    (["--engine", "name=A", "--engine", f"cmd={RANDOM}", "--depth", "1"], "no cmd= or dxp= given"),
    (["--engine", f"cmd={RANDOM}", "colour=red", "--engine", f"cmd={RANDOM}", "--depth", "1"],
     "unknown engine setting 'colour'"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "--tc", "fast"], "bad time control"),
    (["--engine", f"cmd={RANDOM}", "option.hash=8", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1"],
     "no parameter 'hash'"),
    (["--engine", "cmd=no-such-engine-xyz", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1"],
     "cannot start"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
      "--draw", "movenumber=3"], "--draw needs exactly"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
      "--resign", "movecount=0", "score=300"], "movecount='0' (too small)"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
      "--sprt", "elo0=5", "elo1=0", "alpha=0.05", "beta=0.05"], "elo0 < elo1"),
    (["--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B", "--st", "0.05", "--tc", "10+0.1"],
     "not both"),
    (["--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B", "--st", "nan"],
     "not a finite number"),
    (["--engine", f"cmd={RANDOM}", "name=A", "st=nan", "--engine", f"cmd={RANDOM}", "name=B", "--st", "1"],
     "bad value st='nan' (must be a positive finite number)"),
    (["--engine", f"cmd={RANDOM}", "name=A", "--engine", f"cmd={RANDOM}", "name=B", "--each", "st=inf"],
     "bad value st='inf' (must be a positive finite number)"),
    (["--engine", f"cmd={RANDOM}", "name=A", "depth=0", "--engine", f"cmd={RANDOM}", "name=B", "--st", "1"],
     "bad value depth='0' (must be a positive finite number)"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", "--resume"],
     "--resume needs --pdnout"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
      "--pdnout", "/no/such/dir/games.pdn"], "cannot write /no/such/dir/games.pdn"),
    (["--engine", f"cmd={RANDOM}", "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1",
      "--openings", "/no/such/openings.fen"], "cannot read openings file"),
])
def test_setup_mistakes_are_one_line_errors(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert [line for line in result.output.splitlines() if line.strip()] == [f"Error: {result.output.split('Error: ')[1].strip()}"]


def test_more_processes_searching_at_once_than_cores_are_warned_of(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pedina.protocol.match.command.usable_cores", lambda: 2)
    args = ["--engine", f"cmd={PEDINA}", "name=A", "option.threads=2", "option.tt-size=4",
            "--engine", f"cmd={RANDOM}", "name=B", "--depth", "1", "--games", "2", "--maxplies", "20"]
    crowded = run(*args, "--concurrency", "2")
    assert crowded.exit_code == 0, crowded.output
    assert crowded.stderr == ("Warning: 2 game(s) at once, with engines of up to 2 thread(s), can have 4 processes "
                              "searching on the 2 core(s) this match may run on: they take turns on them, and a "
                              "timed engine no longer has its time to itself\n")
    assert "2 games played" in crowded.stdout
    fitting = run(*args)  # one game at a time: the engine of two threads has both cores when it thinks
    assert fitting.exit_code == 0, fitting.output
    assert fitting.stderr == "" and "2 games played" in fitting.stdout


def test_default_openings_are_every_3_ply_start() -> None:
    openings = all_openings()
    assert len(openings) == perft(Position.start(), 3) == 302
    assert len({tuple(m.hub() for m in o.moves) for o in openings}) == 302
    games = schedule(3, openings, rounds=2)
    assert [(g.round, g.white, g.black) for g in games[:6]] == [
        (1, 0, 1), (1, 1, 0), (1, 0, 2), (1, 2, 0), (1, 1, 2), (1, 2, 1)]
    assert len(games) == 12 and games[6].opening == openings[1]
    gauntlet = schedule(3, openings, gauntlet=True, games=5)
    assert [(g.white, g.black) for g in gauntlet] == [(0, 1), (1, 0), (0, 2), (2, 0), (0, 1)]


def test_openings_from_fen_lines_and_pdn_games(tmp_path: Path) -> None:
    fens = tmp_path / "open.fen"
    fens.write_text("# two positions\nW:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12\n"
                    "B:W18,22:B5,6\n")
    openings = read_openings(str(fens))
    assert [o.start.fen() for o in openings] == [Position.start().fen(), Position.parse("B:W18,22:B5,6").fen()]
    board = Board()
    for text in ("22-18", "12-16", "18-14"):
        board.push_text(text)
    games = tmp_path / "open.pdn"
    games.write_text(write_game(board, {"Event": "x"}, "*") + "\n" + write_game(Board(), None, "*"))
    read = read_openings(str(games))
    assert [[m.hub() for m in o.moves] for o in read] == [["22-18", "12-16", "18-14"], []]
    assert read[0].board().position == board.position
    over = tmp_path / "over.fen"
    over.write_text("B:W18:B\n")    # Black to move without pieces: the game is over
    with pytest.raises(MatchError, match="no playable opening"):
        read_openings(str(over))
    assert len(legal_moves(openings[1].start)) > 0
    bom = tmp_path / "bom.pdn"  # a PDN file from a Windows tool: byte-order mark, or Windows-1252
    bom.write_bytes(b"\xef\xbb\xbf" + write_game(board, {"Event": "Forl\u00ec"}, "*").encode("utf-8"))
    latin = tmp_path / "latin.pdn"
    latin.write_bytes(write_game(board, {"Event": "Forl\u00ec"}, "*").encode("cp1252"))
    for path in (bom, latin):
        assert [[m.hub() for m in o.moves] for o in read_openings(str(path))] == [["22-18", "12-16", "18-14"]]


def test_each_gives_common_settings_and_engines_override_them(tmp_path: Path) -> None:
    pdn = tmp_path / "each.pdn"
    result = run("--each", f"cmd={RANDOM}", "depth=2", "option.seed=4",
                 "--engine", "name=A", "--engine", "name=B", "st=0.5", "option.seed=5",
                 "--games", "2", "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    tags = {g.headers["White"]: g.headers["TimeControl"] for g in read_games(pdn.read_text())}
    assert tags == {"A": "depth 2 / 0.5s/move, depth 2", "B": "0.5s/move, depth 2 / depth 2"}


def test_progress_line_is_rewritten_on_a_terminal() -> None:
    import io

    from pedina.protocol.match.console import Console

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    console = Console(screen)
    console.progress("1/4 games")
    console.progress("2/4 games")
    console.message("a message")
    assert screen.getvalue() == "\r\x1b[K1/4 games\r\x1b[K2/4 games\r\x1b[Ka message\n"
    log = io.StringIO()
    console = Console(log, every=3600)
    console.progress("1/4 games", force=True)
    console.progress("2/4 games")          # too soon for another line
    console.progress("4/4 games", force=True)
    assert log.getvalue() == "1/4 games\n4/4 games\n"


def test_time_control_levels_and_allowances() -> None:
    from pedina.protocol.match.game import TimeControl
    from pedina.protocol.match.options import parse_tc

    assert parse_tc("10+0.1") == (10.0, 0.1, None)
    assert parse_tc("1:30") == (90.0, 0.0, None)
    assert parse_tc("40/60+1") == (60.0, 1.0, 40) and parse_tc("20/1:00") == (60.0, 0.0, 20)
    for bad in ("0/60", "40/", "/60", "40/60/2"):
        with pytest.raises(MatchError, match="bad time control"):
            parse_tc(bad)
    clock = TimeControl(base=10.0, inc=0.1)
    # the increment is credited before the move: time=9.5 inc=0.1 gives 9.6 s for this move
    assert clock.level(9.5) == {"time": "9.5", "inc": "0.1"}
    assert clock.allowed(9.5) == pytest.approx(9.6)
    assert clock.level(-0.05) == {"time": "-0.05", "inc": "0.1"}    # overrun within the margin
    fixed = TimeControl(move_time=0.25, depth=6, nodes=5000)
    assert fixed.level(None) == {"depth": 6, "nodes": 5000, "move-time": "0.25"}
    assert fixed.allowed(None) == 0.25
    assert TimeControl(depth=4).allowed(None) is None and str(TimeControl(depth=4)) == "depth 4"
    assert str(clock) == "10+0.1" and str(fixed) == "0.25s/move, depth 6, 5000 nodes"
    assert TimeControl(depth=3).merged(clock) == TimeControl(10.0, 0.1, None, 3, None)


def test_moves_per_session_time_control() -> None:
    from pedina.protocol.match.game import TimeControl

    session = TimeControl(base=60.0, inc=1.0, moves=40)
    assert str(session) == "40/60+1"
    assert session.level(60.0) == {"moves": 40, "time": "60", "inc": "1"}
    assert session.level(3.5, played=39)["moves"] == 1 and session.level(70.0, played=40)["moves"] == 40
    assert session.clock_after(10.0, 2.0, 39) == pytest.approx(9.0)        # mid-session: the increment only
    assert session.clock_after(10.0, 2.0, 40) == pytest.approx(69.0)       # the 40th move: the next 60 s
    assert TimeControl(depth=2).merged(session) == TimeControl(60.0, 1.0, None, 2, None, 40)


def test_a_moves_per_session_match_sends_level_moves_and_records_scores_as_comments(tmp_path: Path) -> None:
    import re

    from draughts.PDN import PDNReader

    pdn = tmp_path / "session.pdn"
    log = tmp_path / "hub.log"
    result = run("--engine", f"cmd={PEDINA} --log {shlex.quote(str(log))}", "name=A", "option.seed=4",
                 "--engine", f"cmd={PEDINA}", "name=B", "option.skill=12", "option.multipv=1",
                 "--tc", "5/1+0.02", "--games", "2", "--maxplies", "30", "--pdnout", str(pdn), "--no-book")
    assert result.exit_code == 0, result.output
    assert "Engine failures" not in result.output
    levels = re.findall(r"> level (.*)", log.read_text())
    assert levels and all(re.fullmatch(r"moves=[1-5] time=\S+ inc=0.02", level) for level in levels), levels
    assert {level.split()[0] for level in levels} == {f"moves={n}" for n in range(1, 6)}
    ours = read_games(pdn.read_text())
    assert len(ours) == len(PDNReader(filename=str(pdn)).games) == 2
    for game in ours:
        assert game.headers["TimeControl"] == "5/1+0.02"
        white_is_a = game.headers["White"] == "A"
        assert game.headers["WhiteOptions" if white_is_a else "BlackOptions"] == "seed=4"
        assert game.headers["BlackOptions" if white_is_a else "WhiteOptions"] == "skill=12 multipv=1"
    text = pdn.read_text()
    comments = re.findall(r"\{([^}]*)\}", text)
    # every engine move (27 a game after the 3-ply opening) has its score, depth and time
    assert len(comments) == sum(len(g.board.moves) - 3 for g in ours)
    assert all(re.fullmatch(r"[+-]\d+\.\d\d/\d+ \d+\.\d{3}s", comment) for comment in comments), comments


def test_fixed_node_games(tmp_path: Path) -> None:
    pdn = tmp_path / "nodes.pdn"
    result = run("--engine", f"cmd={PEDINA}", "name=A", "--engine", f"cmd={PEDINA}", "name=B",
                 "--nodes", "300", "--games", "2", "--maxplies", "40", "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    assert {g.headers["TimeControl"] for g in read_games(pdn.read_text())} == {"300 nodes"}


def test_final_table_shows_the_hand_computed_statistics() -> None:
    import math

    from pedina.protocol.match.game import EngineSpec, GameRecord, Opening, ScheduledGame
    from pedina.protocol.match.tally import Tally, final_table

    specs = [EngineSpec("A", "a"), EngineSpec("B", "b")]
    tally = Tally()
    results = ["1-0"] * 6 + ["1/2-1/2"] * 3 + ["0-1"]     # A: 6 wins, 3 draws, 1 loss
    for number, outcome in enumerate(results, start=1):
        white, black = (0, 1) if number % 2 else (1, 0)
        if white == 1:                                      # the same result from A's side
            outcome = {"1-0": "0-1", "0-1": "1-0"}.get(outcome, outcome)
        game = ScheduledGame(number, (number + 1) // 2, Opening(Position.start()), white, black)
        tally.add(GameRecord(game, Board(), outcome, "normal"))
    assert tally.wdl(0) == (6, 3, 1) and tally.wdl(1) == (1, 3, 6)
    # score 7.5 / 10 = 0.75: Elo = -400 log10(1/0.75 - 1) = 400 log10(3) = 190.8
    # variance (6 * 0.25^2 + 3 * 0.25^2 + 1 * 0.75^2) / 10 = 1.125 / 10 = 0.1125;
    # margin 1.96 sqrt(0.1125 / 10) = 0.20789; interval 0.54211 .. 0.95789 -> Elo 29.3 .. 542.8,
    # half width 256.7; LOS (1 + erf(5 / sqrt(14))) / 2 = (1 + erf(1.33631)) / 2 = 0.9706
    assert 400 * math.log10(3) == pytest.approx(190.85, abs=0.01)
    margin = 1.959964 * math.sqrt(0.1125 / 10)
    assert -400 * math.log10(1 / (0.75 - margin) - 1) == pytest.approx(29.33, abs=0.01)
    assert -400 * math.log10(1 / (0.75 + margin) - 1) == pytest.approx(542.75, abs=0.01)
    assert 0.5 * (1 + math.erf(5 / math.sqrt(14))) == pytest.approx(0.9706, abs=1e-4)
    rows = final_table(tally, specs)
    assert rows[1].split() == ["1", "A", "10", "7.5", "75.0%", "6", "3", "1", "+190.8", "256.7", "97.1%"]
    assert rows[2].split() == ["2", "B", "10", "2.5", "25.0%", "1", "3", "6", "-190.8", "256.7", "2.9%"]
    assert rows[4] == ("A vs B: +6 =3 -1  score 75.0%  Elo +190.8 ± 256.7 [+29.3, +542.8]  LOS 97.1%  "
                       "draws 30%")
    # The pairs (rounds): WW, WW, WW, DD, DL: pentanomial [0, 1, 1, 0, 3], mean 3.75 / 5 = 0.75 (the
    # same Elo); variance (0.5^2 + 0.25^2 + 3 * 0.25^2) / 5 = 0.1, margin 1.96 sqrt(0.1 / 5) = 0.277:
    # the upper bound passes a score of 1, so the interval is unbounded and not shown.
    assert 0.75 + 1.959964 * math.sqrt(0.1 / 5) > 1
    assert rows[5] == "     game pairs (LL LD DD/WL WD WW): pairs 5 [0, 1, 1, 0, 3]  Elo +190.8"
    assert rows[6] == "White vs Black: +4 =3 -3  score 55.0%"   # A won 3 as White, 3 as Black; lost game 10 as Black


@pytest.mark.slow
def test_pedina_on_a_clock_never_loses_on_time(tmp_path: Path) -> None:
    from draughts.PDN import PDNReader

    games = 4 if os.environ.get("PEDINA_CI") else 16
    pdn = tmp_path / "clock.pdn"
    result = run("--engine", f"cmd={PEDINA}", "name=A", "--engine", f"cmd={PEDINA}", "name=B",
                 "option.skill=15", "--tc", "2+0.05", "--games", str(games), "--shuffle", "--seed", "3",
                 "--concurrency", "2", "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    ours = read_games(pdn.read_text())
    assert len(ours) == len(PDNReader(filename=str(pdn)).games) == games
    assert {g.headers["Termination"] for g in ours} <= {"normal", "repetition", "40-move rule"}
    assert "Engine failures" not in result.output


def test_round_robin_of_three_from_fen_openings(tmp_path: Path) -> None:
    from draughts.PDN import PDNReader

    openings = tmp_path / "openings.fen"
    openings.write_text("B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12\n")
    pdn = tmp_path / "rr.pdn"
    result = run(*(word for name in "ABC" for word in ("--engine", f"cmd={RANDOM}", f"name={name}",
                                                       f"option.seed={ord(name)}")),
                 "--openings", str(openings), "--depth", "1", "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    assert "6 games played" in result.output
    for pair in ("A vs B: +", "A vs C: +", "B vs C: +"):
        assert pair in result.output
    ours = read_games(pdn.read_text())
    assert [(g.headers["White"], g.headers["Black"]) for g in ours] == [
        ("A", "B"), ("B", "A"), ("A", "C"), ("C", "A"), ("B", "C"), ("C", "B")]
    assert all(g.headers["FEN"].startswith("B:") and g.headers["SetUp"] == "1" for g in ours)
    theirs = PDNReader(filename=str(pdn)).games
    assert [g.game_ending for g in theirs] == [g.result for g in ours]
    # pydraughts 0.6.7 lists the first move of a game that Black starts twice (its reader's bug)
    assert [g.moves[0] for g in theirs] == [g.moves[1] for g in theirs]
    assert [len(g.moves) - 1 for g in theirs] == [len(g.board.moves) for g in ours]


def test_a_second_answer_and_an_unreadable_one_are_called_what_they_are(tmp_path: Path) -> None:
    """A second ``done`` for one ``go`` (at once, late, or from an engine that never answers
    ``ping``), a ``done`` that is not UTF-8 and a 50 MB line each lose the game, for that reason."""
    pdn = tmp_path / "answers.pdn"
    result = run("--engine", f"cmd={RANDOM}", "name=good", "option.seed=1",
                 "--engine", f"cmd={RANDOM}", "name=twice", "option.mode=twice", "option.after=6",
                 "--engine", f"cmd={RANDOM}", "name=late", "option.mode=twice", "option.after=6", "option.delay=0.3",
                 "--engine", f"cmd={RANDOM}", "name=noping", "option.mode=twice", "option.after=6",
                 "option.pong=no",
                 "--engine", f"cmd={RANDOM}", "name=garbled", "option.mode=garbled", "option.after=6",
                 "--engine", f"cmd={RANDOM}", "name=huge", "option.mode=huge", "option.after=6",
                 "--gauntlet", "--rounds", "1", "--depth", "1", "--timeout", "30", "--pdnout", str(pdn))
    assert result.exit_code == 0, result.output
    games = games_of(pdn)
    reasons = {"twice": "answered twice", "late": "answered twice", "noping": "answered twice",
               "garbled": "unreadable answer", "huge": "unreadable answer"}
    assert len(games) == 2 * len(reasons)
    for (_, white, black), (outcome, moves, termination) in games.items():
        loser = black if white == "good" else white
        assert (loser, termination) == (loser, reasons[loser])
        assert outcome == ("1-0" if white == "good" else "0-1")
        assert len(moves) >= 6  # the engines misbehave only from ply 6 on
    assert "over 1,048,576 characters" in result.output and "not UTF-8" in result.output


def test_clock_use_reads_each_engines_share_of_its_clock_from_a_match_pdn(
        tmp_path: Path, load_module: Callable[[Path, str], ModuleType]) -> None:
    """``scripts/clock_use.py``, what the time manager is tuned on: the engines' timed moves
    only (the opening's are not theirs), each given its base and an increment a move."""
    script = Path(__file__).parent.parent / "scripts" / "clock_use.py"
    clock_use = load_module(script, "clock_use")
    pdn = tmp_path / "games.pdn"
    pdn.write_text(
        '[White "a"]\n[Black "b"]\n[Result "*"]\n[TimeControl "1+0.1"]\n\n'
        "1. 23-20 12-16 {book 0.000s} 2. 22-18 {+0.10/9 0.300s} 16x23 {-0.05/9 0.200s}\n"
        "3. 28x19 {+0.20/10 0.500s} *\n\n"
        '[White "b"]\n[Black "a"]\n[Result "*"]\n\n1. 23-20 {+0.10/9 0.300s} *\n')

    use = clock_use.clock_use(pdn.read_text())
    assert set(use) == {"a", "b"}  # the game without a clock is left out
    assert (use["a"].games, use["a"].moves) == (1, 2) and use["a"].used == pytest.approx(0.8)
    assert use["a"].left == [pytest.approx(0.4 / 1.2)]
    assert (use["b"].moves, use["b"].left) == (2, [pytest.approx(1.0 / 1.2)])
    sessions = clock_use.clock_use(  # 0.5 s for every move, then a game at a time a move
        '[White "c"]\n[Black "d"]\n[TimeControl "1/0.5"]\n\n1. 23-20 {0.200s} 12-16 {0.100s} 2. 22-18 {0.400s} *\n\n'
        '[White "e"]\n[Black "f"]\n[TimeControl "0.1s/move"]\n\n1. 23-20 {0.100s} *\n')
    assert set(sessions) == {"c", "d"} and sessions["c"].left == [pytest.approx(0.4 / 1.0)]
    done = subprocess.run([sys.executable, str(script), str(pdn)], capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1].split() == ["a", "1", "2.0", "0.400s", "33.3%", "33.3%"]
    broken = tmp_path / "broken.pdn"
    broken.write_text('[White "a"]\n\n1. 23-20 {0.1s} 9-14 {0.1s} 30x19 *\n')
    refused = subprocess.run([sys.executable, str(script), str(broken)], capture_output=True, text=True, timeout=HANG)
    assert refused.returncode == 1 and refused.stderr.startswith("Error: ")
