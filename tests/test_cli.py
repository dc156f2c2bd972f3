"""The ``pedina`` command: help, analyze (text and JSON), errors, play (pexpect), demo."""

from __future__ import annotations

import json
import re
import signal
import shutil
import subprocess
from pathlib import Path

import pexpect
import pytest
import click
from click.testing import CliRunner

from pedina import START_FEN, Board, Position, format_pdn
from pedina.pdn import read_game, read_games, write_game
from pedina.protocol.cli import main

PEDINA = shutil.which("pedina")


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    assert PEDINA is not None
    return subprocess.run([PEDINA, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def replay(position: Position, pv: list[str]) -> Board:
    """Play a list of move texts from ``position``; raises if one is illegal."""
    board = Board(position)
    for text in pv:
        board.push_text(text)
    return board


@pytest.mark.parametrize("command", main.list_commands(click.Context(main)))
def test_every_subcommand_has_help(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: main {command}") or result.output.startswith(f"Usage: pedina {command}")


def test_top_level_help_lists_the_commands() -> None:
    result = run("--help")
    assert result.returncode == 0
    for command in ("hub", "play", "analyze", "demo", "perft", "bench", "match", "dxp"):
        assert re.search(rf"^\s+{command}\s", result.stdout, re.M), command


def test_bare_pedina_with_piped_stdin_is_a_hub_engine() -> None:
    assert PEDINA is not None
    result = subprocess.run([PEDINA], input="hub\nping\nquit\n", capture_output=True, text=True, timeout=30)
    assert result.returncode == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("id name=Pedina ") and lines[-2:] == ["wait", "pong"]


def test_analyze_position_text_table() -> None:
    result = run("analyze", START_FEN, "--depth", "3", "--multipv", "2")
    assert result.returncode == 0, result.stderr
    header, first, second = result.stdout.splitlines()
    assert header.split() == ["ply", "played", "white", "depth", "best", "pv"]
    fields = first.split()
    assert fields[0] == "1." and re.fullmatch(r"[+-]\d+\.\d\d", fields[1]) and fields[2] == "3"
    replay(Position.start(), fields[4:])
    assert fields[3] == fields[4]  # best = first move of the pv
    assert second.split()[0] == "#2"
    replay(Position.start(), second.split()[4:])
    assert second.split()[3] != fields[3]  # another root move


def test_analyze_position_json_for_scripts() -> None:
    hub = Position.start().hub()
    result = run("analyze", hub, "--depth", "2", "--multipv", "3", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["hub"] == hub and document["to_move"] == "white" and document["multipv"] == 3
    lines = document["lines"]
    assert [line["multipv"] for line in lines] == [1, 2, 3]
    assert len({line["move"] for line in lines}) == 3
    for line in lines:
        assert line["pv"][0] == line["move"] and line["depth"] >= 1 and isinstance(line["score"], float)
        assert line["white"] == line["score"]  # White to move
        replay(Position.start(), line["pv"])


def test_analyze_every_move_of_a_pdn_game(tmp_path: Path) -> None:
    board = Board()
    for text in ("23-19", "10-14", "19x10", "5x14"):
        board.push_text(text)
    pdn = tmp_path / "game.pdn"
    pdn.write_text(write_game(board, {"White": "A", "Black": "B"}, "*"), encoding="utf-8")
    result = run("analyze", str(pdn), "--depth", "2", "--json")
    assert result.returncode == 0, result.stderr
    (game,) = json.loads(result.stdout)["games"]
    assert game["game"] == 1 and game["headers"]["White"] == "A" and game["result"] == "*"
    positions = game["positions"]
    assert [p["played"] for p in positions] == ["23-19", "10-14", "19x10", "5x14", None]
    for ply, report in enumerate(positions):
        assert report["fen"] == board.positions[ply].fen()
        replay(board.positions[ply], report["lines"][0]["pv"])
        score, white = report["lines"][0]["score"], report["lines"][0]["white"]
        assert white == (score if report["to_move"] == "white" else -score)
    table = run("analyze", str(pdn), "--depth", "2")
    assert table.returncode == 0
    rows = table.stdout.splitlines()
    assert [row.split()[0] for row in rows[1:6]] == ["1.", "1...", "2.", "2...", "3."]
    assert rows[-1] == "result *"


def test_analyze_picks_a_game_of_a_multi_game_pdn_file(tmp_path: Path) -> None:
    games = []
    for opening in (["21-17", "12-16"], ["22-18", "12-16", "21-17"]):
        board = Board()
        for text in opening:
            board.push_text(text)
        games.append(write_game(board, {"Event": f"game of {len(opening)} plies"}, "*"))
    pdn = tmp_path / "two.pdn"
    pdn.write_text("\n".join(games), encoding="utf-8")
    result = run("analyze", str(pdn), "--game", "2", "--depth", "1", "--json")
    assert result.returncode == 0, result.stderr
    (game,) = json.loads(result.stdout)["games"]
    assert game["game"] == 2 and game["headers"]["Event"] == "game of 3 plies"
    assert [p["played"] for p in game["positions"]] == ["22-18", "12-16", "21-17", None]
    both = json.loads(run("analyze", str(pdn), "--depth", "1", "--json").stdout)["games"]
    assert [(g["game"], len(g["positions"])) for g in both] == [(1, 3), (2, 4)]  # game by game
    missing = run("analyze", str(pdn), "--game", "3", "--depth", "1")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert missing.stderr == f"Error: Invalid value for --game: {pdn}: there is no game 3: the PDN text has 2 games\n"


def test_analyze_reports_a_position_without_moves() -> None:
    lost = Position.from_squares(white_men=[21], white_to_move=False)
    result = run("analyze", lost.fen(), "--json", "--depth", "1")
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert document["lines"] == [] and document["outcome"] == {"termination": "normal", "winner": "white"}
    assert "(White wins: Black cannot move)" in run("analyze", lost.fen(), "--depth", "1").stdout


def test_analyse_is_analyze_and_the_help_lists_one_of_them() -> None:
    british = run("analyse", START_FEN, "--depth", "3", "--json")
    assert british.returncode == 0, british.stderr
    american = run("analyze", START_FEN, "--depth", "3", "--json")
    searched = [[{key: value for key, value in line.items() if key != "time"}
                 for line in json.loads(result.stdout)["lines"]] for result in (british, american)]
    assert searched[0] == searched[1] and searched[0]
    commands = [line.split()[0] for line in run("--help").stdout.split("Commands:")[1].splitlines() if line.strip()]
    assert "analyze" in commands and "analyse" not in commands


@pytest.mark.parametrize("args, words", [
    (["analyze", "nonsense"], "'nonsense' is neither a FEN (such as 'W:W21-32:B1-12') nor a 33-character Hub"),
    (["analyze", "nosuch.pdn"], "Invalid value for TARGET: nosuch.pdn: no such file"),
    (["analyze", "games/nosuch"], "games/nosuch: no such file"),
    (["perft", "-d", "1", "junk"], "'junk' is neither a FEN"),
    (["play", "--position", "junk"], "Invalid value for --position: 'junk' is neither a FEN"),
    (["analyze", "W" + "e" * 50], "33 characters"),
    (["analyze", START_FEN, "--depth", "2", "--time", "1"], "not both"),
    (["analyze", START_FEN, "--multipv", "0"], "--multipv"),
    (["play", "--depth", "0"], "--depth"),
    (["play", "--position", "W:W1:B2"], "promotion row"),
    (["perft", "-d", "2", "Wxyz"], "position"),
    (["hub", "--hash", "0"], "--hash"),
    (["no-such-command"], "No such command 'no-such-command'."),
    (["analyz"], "No such command 'analyz'. Did you mean 'analyze'?"),  # a command imported on use
    (["perf"], "No such command 'perf'. Did you mean 'perft'?"),
])
def test_user_mistakes_give_one_line_and_non_zero_exit(args: list[str], words: str) -> None:
    result = run(*args)
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and words in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_analyze_bad_pdn_file_is_one_line_error(tmp_path: Path) -> None:
    pdn = tmp_path / "bad.pdn"
    pdn.write_text('[GameType "22"]\n\n1. 23-19 23-19 *\n', encoding="utf-8")
    kept = run("analyze", str(pdn), "--depth", "1")  # the game up to its bad move, with a warning
    assert kept.returncode == 0 and len(kept.stderr.splitlines()) == 1, kept.stderr
    assert kept.stderr.startswith("Warning: ") and "bad.pdn" in kept.stderr and "kept up to ply 1" in kept.stderr
    pdn.write_text('[GameType "25"]\n\n1. 23-19 *\n', encoding="utf-8")
    result = run("analyze", str(pdn), "--depth", "1")
    assert result.returncode != 0 and len(result.stderr.splitlines()) == 2, result.stderr  # the warning, the error
    assert result.stderr.splitlines()[-1].startswith("Error: ") and "bad.pdn holds no game" in result.stderr
    assert "Traceback" not in result.stderr


def _sigint_as_from_a_terminal() -> None:
    """Ctrl-C's default action (CI may run the tests with SIGINT ignored, which a child inherits)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Player:
    """``pedina play`` under pexpect."""

    def __init__(self, *args: str) -> None:
        assert PEDINA is not None
        self.child = pexpect.spawn(PEDINA, ["play", *args], encoding="utf-8", timeout=30, echo=False,
                                   preexec_fn=_sigint_as_from_a_terminal)
        self.child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default

    def prompt(self) -> str:
        """Everything printed up to the next move prompt."""
        self.child.expect(r"(Your move \((White|Black)\)|Game over \(new, undo or quit\))> ")
        return str(self.child.before)

    def say(self, line: str) -> str:
        self.child.sendline(line)
        return self.prompt()


def engine_move(output: str) -> str:
    match = re.search(r"Pedina plays (\S+)", output)
    assert match, output
    return match.group(1)


def test_play_moves_hint_takeback_and_bad_input() -> None:
    player = Player("--depth", "2")
    start = player.prompt()
    assert "You play White" in start and " a     b     c" in start and "w 21" in start and "b 12" in start
    board = Board()
    board.push_text("23-19")
    output = player.say("23-19")
    assert "You play 23-19" in output
    board.push_text(engine_move(output))
    assert "Ply 2, White to move." in output
    assert "1-5 is not a legal move" in player.say("1-5")
    assert "cannot read 'hello': type a move as 23-19" in player.say("hello")
    hint = re.search(r"Hint: (\S+)", player.say("hint"))
    assert hint, "a hint names a move"
    board.parse_move(hint.group(1))  # legal in the current position
    moves = player.say("moves")
    listed = moves.split("Legal moves: ")[1].split()
    legal = board.legal_moves()
    assert sorted(listed) == sorted(format_pdn(m, legal) for m in legal)
    taken = player.say("undo")
    assert "Taken back." in taken and "Ply 0, White to move." in taken
    assert "Nothing to take back." in player.say("takeback")
    assert " h     g     f" in player.say("flip")
    assert "Type a move" in player.say("help")
    player.child.sendline("quit")
    player.child.expect("Bye.")
    player.child.expect(pexpect.EOF)


def test_play_as_black_engine_moves_first_and_game_end_is_shown() -> None:
    player = Player("--color", "black", "--depth", "1")
    output = player.prompt()
    assert "You play Black" in output
    board = Board()
    board.push_text(engine_move(output))
    assert "Ply 1, Black to move." in output
    player.child.sendeof()
    player.child.expect("Bye.")
    player.child.expect(pexpect.EOF)
    # one capture from the end: White takes Black's last piece and wins
    ending = Position.from_squares(white_men=[22, 30], black_men=[18]).fen()
    player = Player("--depth", "1", "--position", ending)
    player.prompt()
    over = player.say("22x13")
    assert "Game over: White wins" in over and "You win" in over and "1-0" in over
    assert "The game is over" in player.say("21-17")
    assert "Ply 0, White to move." in player.say("undo")
    player.child.sendline("quit")
    player.child.expect(pexpect.EOF)


def test_play_saves_switches_sides_and_records_its_games(tmp_path: Path) -> None:
    saved, record = tmp_path / "saved.pdn", tmp_path / "games.pdn"
    player = Player("--depth", "1", "--skill", "0", "--pdnout", str(record))
    player.prompt()
    board = Board()
    board.push_text("23-19")
    board.push_text(engine_move(player.say("23-19")))
    assert "Game saved to" in player.say(f"save {saved}")
    assert read_game(saved.read_text()).board.moves == board.moves
    switched = player.say("switch")  # the engine takes White and moves at once
    assert "You now play Black." in switched
    board.push_text(engine_move(switched))
    assert "Ply 3, Black to move." in switched
    assert "Cannot save to /no/such/folder/x.pdn" in player.say("save /no/such/folder/x.pdn")
    player.child.sendline("quit")
    player.child.expect("Bye.")
    player.child.expect(pexpect.EOF)
    (game,) = read_games(record.read_text())
    assert game.board.moves == board.moves and game.result == "*"
    assert (game.headers["White"], game.headers["Black"]) == ("You / Pedina", "Pedina / You")


def test_play_explains_a_compulsory_capture_and_takes_its_first_jump() -> None:
    player = Player("--depth", "1", "--no-book", "--position", "W:W22,27:B10,17,18")
    player.prompt()
    assert "27-23 is not a legal move: a capture is compulsory (22x6)" in player.say("27-23")
    assert "You play 22x6" in player.say("22x13")  # the first landing square names the one capture
    player.child.sendline("quit")
    player.child.expect(pexpect.EOF)


def test_a_weakened_engine_still_hints_at_full_strength() -> None:
    player = Player("--depth", "5", "--skill", "0", "--no-book")
    player.prompt()
    hint = re.search(r"Hint: \S+ .*depth (\d+)\)", player.say("hint"))
    assert hint and int(hint.group(1)) == 5  # skill 0 would stop at depth 1
    player.child.sendline("quit")
    player.child.expect(pexpect.EOF)


def test_ctrl_c_while_the_engine_thinks_keeps_the_game(tmp_path: Path) -> None:
    record = tmp_path / "games.pdn"
    player = Player("--time", "600", "--no-book", "--pdnout", str(record))
    player.prompt()
    player.child.sendline("23-19")
    player.child.expect("Pedina is thinking")
    player.child.sendintr()
    player.child.expect("Interrupted.")
    player.child.expect("Bye.")
    player.child.expect(pexpect.EOF)
    player.child.close()
    assert player.child.exitstatus == 0
    (game,) = read_games(record.read_text())
    assert [move.hub() for move in game.board.moves] == ["23-19"]


def test_demo_saves_its_game(tmp_path: Path) -> None:
    record = tmp_path / "demo.pdn"
    result = run("demo", "--plies", "6", "--depth", "2", "--no-board", "--pdnout", str(record))
    assert result.returncode == 0, result.stderr
    moves = [line.split()[1] for line in result.stdout.splitlines() if re.match(r"\d+\.(\.\.)?\s", line)]
    (game,) = read_games(record.read_text())
    assert len(game.board.moves) == len(moves) == 6
    replayed = Board()
    for text in moves:
        replayed.push_text(text)
    assert game.board.moves == replayed.moves and game.headers["Event"] == "pedina demo"


def test_demo_explains_its_words_and_redraws_a_terminal_in_place() -> None:
    piped = run("demo", "--plies", "2", "--depth", "1", "--no-board")
    assert piped.returncode == 0, piped.stderr
    assert "to depth 1 a move" in piped.stdout.splitlines()[0]
    for word in ("score", "depth", "book", "forced", "pv"):
        assert re.search(rf"^  {word}\s+\S", piped.stdout, re.M), word
    assert "\x1b[2J" not in piped.stdout
    assert PEDINA is not None
    live = pexpect.spawn(PEDINA, ["demo", "--plies", "2", "--depth", "1", "--pause", "0"], encoding="utf-8",
                         timeout=30)
    live.expect_exact("\x1b[2J")  # the screen cleared: the board is redrawn in place
    live.expect("Pedina plays itself, to depth 1 a move")
    live.expect(r"1\.\.\.\s+\S+")  # the second move, on a screen of its own
    live.expect(pexpect.EOF)


def test_demo_plays_and_reports_the_result() -> None:
    short = run("demo", "--plies", "4", "--depth", "2")
    assert short.returncode == 0, short.stderr
    lines = short.stdout.splitlines()
    moves = [line for line in lines if re.match(r"\d+\.(\.\.)?\s", line)]
    assert len(moves) == 4 and "Stopped after 4 plies" in lines[-1]
    assert sum(" a     b     c" in line for line in lines) >= 5  # the start and each move
    board = Board()
    for line in moves:
        board.push_text(line.split()[1])
    full = run("demo", "--depth", "1", "--plies", "1000", "--no-board")
    assert full.returncode == 0, full.stderr
    assert re.search(r"(wins after \d+ plies|Draw by .* after \d+ plies)", full.stdout.splitlines()[-1])


@pytest.mark.parametrize("args", [("analyze", "W:W21-32:B1-12", "--time", "nan"), ("play", "--time", "nan"),
                                  ("demo", "--time", "NaN"), ("dxp", "--move-time", "nan"),
                                  ("analyze", "W:W21-32:B1-12", "--mistake", "nan")],
                         ids=lambda args: " ".join(args))
def test_a_number_that_is_not_one_is_refused(args: tuple[str, ...]) -> None:
    result = run(*args)
    errors = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(errors) == 1 and "is not a finite number" in errors[0], result.stderr


def test_play_on_a_clock_with_resign_draw_and_the_engine_line(tmp_path: Path) -> None:
    record = tmp_path / "games.pdn"
    player = Player("--tc", "2:00+1", "--no-book", "--show-line", "--pdnout", str(record))
    start = player.prompt()
    assert "clock: White 2:00, Black 2:00" in start
    assert "Pedina declines the draw" in player.say("draw")  # no score of its own yet
    answer = player.say("23-19")
    assert re.search(r"Pedina expects: \S+", answer)
    clocks = re.findall(r"clock: White (\d+):(\d\d), Black (\d+):(\d\d)", answer)
    white_m, white_s, black_m, black_s = map(int, clocks[-1])
    assert 60 * black_m + black_s <= 121  # the engine spent its time, and gained a second
    over = player.say("resign")
    assert "Game over: you resign. Result 0-1." in over
    assert "The game is over (you resign)" in player.say("undo")
    player.child.sendline("quit")
    player.child.expect(pexpect.EOF)
    (game,) = read_games(record.read_text())
    assert game.result == "0-1" and game.headers["Termination"] == "you resign"
    assert game.headers["TimeControl"] == "120+1" and len(game.board.moves) == 2


def test_a_draw_offer_is_taken_when_the_engine_sees_nothing_better() -> None:
    player = Player("--depth", "4", "--no-book", "--no-egdb", "--position", "W:WK29:BK4")
    player.prompt()
    player.say("29-25")
    assert "Game over: draw agreed. Result 1/2-1/2." in player.say("draw")
    player.child.sendline("quit")
    player.child.expect(pexpect.EOF)
