"""``pedina analyze`` and ``pedina show``: true scores, inputs, streaming, interruption, annotation, plots."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
from pathlib import Path

import draughts
import pytest
from draughts.PDN import PDNReader

from pedina import Board, Position
from pedina.pdn import read_game, read_games, write_game
from test_pdn import VARIATIONS
from timing import HANG

PEDINA = shutil.which("pedina")

#: A game in which Black's 9-13 (ply 17) gives White a king: a blunder at any depth from 3 on.
BLUNDER_GAME = ("21-18 12-16 23-19 11-14 18x11x14 7x23x11x19 27x20x23 16x23x20 28x19x23 10-14 19x10x14 "
                "5x14x10 22-18 14x21x18 26x17x21 1-5 24-20 9-13 17x1x5x13 8-12 1-5 6-11 5-10 12-15").split()
BLUNDER_PLY = 17
#: 18x11 is forced, and wins in 9 plies.
FORCED_WIN = "W:W18,25,26,27,28,29,30,31,32:B14,1"


def run(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    assert PEDINA is not None
    return subprocess.run([PEDINA, *args], capture_output=True, text=True, timeout=timeout,
                          input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)


def terminal_sigint() -> None:
    """In the child: Ctrl-C's default handling, as a terminal gives it (a test run in the
    background starts with SIGINT ignored, and children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def read_terminal_until(terminal: int, pattern: re.Pattern[str] | None) -> str:
    """What a child writes to the pseudo-terminal ``terminal`` until it shows ``pattern``
    (``None``: until the child has closed it)."""
    text = ""
    while pattern is None or not pattern.search(text):
        ready, _, _ = select.select([terminal], [], [], HANG)
        assert ready, f"nothing on the terminal within {HANG} s after {text!r}"
        try:
            data = os.read(terminal, 4096)
        except OSError:  # EIO: every end of the terminal's other side is closed
            data = b""
        if not data:
            assert pattern is None, f"the terminal closed before {pattern.pattern!r}: {text!r}"
            return text
        text += data.decode("utf-8", "replace")
    return text


def blunder_board() -> Board:
    board = Board()
    for text in BLUNDER_GAME:
        board.push_text(text)
    return board


def game_file(tmp_path: Path, *boards: Board) -> Path:
    path = tmp_path / "games.pdn"
    path.write_text("\n".join(write_game(board, {"White": f"W{n}", "Black": f"B{n}"}, "*")
                              for n, board in enumerate(boards, start=1)), encoding="utf-8")
    return path


# -- what the numbers say -----------------------------------------------------------------------


def test_a_known_ending_is_an_estimate_in_every_output() -> None:
    """Without the endgame database (which knows this one exactly)."""
    table = run("analyze", "W:WK29,K32:BK4", "--depth", "6", "--no-egdb")
    row = table.stdout.splitlines()[1]
    assert table.returncode == 0 and "wins in" not in row
    assert 40 < float(row.split()[1]) < 90  # a clear advantage, never in the proven range
    (line,) = json.loads(run("analyze", "W:WK29,K32:BK4", "--depth", "6", "--json", "--no-egdb").stdout)["lines"]
    assert line["proven"] is None and 40 < line["score"] < 90


def test_a_proven_result_names_its_winner_in_white_s_view() -> None:
    # Black to move wins in 5 plies (the mirror image of W:W26,27:B16,18); without the
    # endgame database, which proves who wins but not in how many plies
    fen = "B:W15,17:B6,7"
    row = run("analyze", fen, "--depth", "7", "--no-egdb").stdout.splitlines()[1]
    assert row.split()[1] == "-99.95" and row.endswith("(Black wins in 5 plies)")
    (line,) = json.loads(run("analyze", fen, "--depth", "7", "--json", "--no-egdb").stdout)["lines"]
    assert (line["score"], line["white"], line["proven"]) == (99.95, -99.95, {"winner": "black", "plies": 5})


def test_a_forced_move_is_analysed_like_any_position_on_a_time_limit() -> None:
    row = run("analyze", FORCED_WIN, "--time", "0.5").stdout.splitlines()[1]
    fields = row.split()
    assert fields[1] == "+99.91" and int(fields[2]) >= 9 and row.endswith("(White wins in 9 plies)")


# -- inputs ---------------------------------------------------------------------------------------


def test_a_pdn_file_from_other_tools_byte_order_mark_and_windows_1252(tmp_path: Path) -> None:
    text = write_game(blunder_board(), {"Event": "Forlì", "White": "Niccolò", "Black": "Müller – “Sr”"}, "*")
    for name, data in (("bom.pdn", b"\xef\xbb\xbf" + text.encode("utf-8")), ("cp1252.pdn", text.encode("cp1252"))):
        path = tmp_path / name
        path.write_bytes(data)
        result = run("analyze", str(path), "--depth", "1", "--json")
        assert result.returncode == 0, result.stderr
        (game,) = json.loads(result.stdout)["games"]
        assert game["headers"]["White"] == "Niccolò" and game["headers"]["Black"] == "Müller – “Sr”"
        assert len(game["positions"]) == len(BLUNDER_GAME) + 1


def test_standard_input_and_a_file_of_fen_lines(tmp_path: Path) -> None:
    fens = "# two positions\nW:W21-32:B1-12\n\n" + FORCED_WIN + "\n"
    from_stdin = run("analyze", "-", "--depth", "2", "--jsonl", stdin=fens)
    assert from_stdin.returncode == 0, from_stdin.stderr
    lines = [json.loads(line) for line in from_stdin.stdout.splitlines()]
    assert [(line["position"], line["fen"]) for line in lines] == [
        (1, Position.start().fen()), (2, Position.from_fen(FORCED_WIN).fen())]
    path = tmp_path / "positions.fen"
    path.write_text(fens)
    document = json.loads(run("analyze", str(path), "--depth", "2", "--json", "--game", "2").stdout)
    assert [p["position"] for p in document["positions"]] == [2]
    pdn = run("analyze", "-", "--depth", "1", "--json", stdin=write_game(blunder_board()))
    assert len(json.loads(pdn.stdout)["games"][0]["positions"]) == len(BLUNDER_GAME) + 1


# -- streaming and interruption -------------------------------------------------------------------


def test_jsonl_streams_each_position_as_it_is_analysed(tmp_path: Path) -> None:
    assert PEDINA is not None
    path = game_file(tmp_path, blunder_board())
    child = subprocess.Popen([PEDINA, "analyze", str(path), "--time", "0.4", "--jsonl"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=terminal_sigint)
    assert child.stdout is not None
    game = json.loads(child.stdout.readline())
    first = json.loads(child.stdout.readline())
    assert game == {"game": 1, "headers": {"White": "W1", "Black": "B1", "GameType": "22", "Result": "*"},
                    "result": "*"}
    assert first["game"] == 1 and first["ply"] == 0 and first["lines"]
    assert child.poll() is None  # the first position came out while the rest is still being analysed
    child.send_signal(signal.SIGINT)
    rest, errors = child.communicate(timeout=10)
    assert child.returncode == 130 and "interrupted" in errors and "Traceback" not in errors, errors
    plies = [json.loads(line)["ply"] for line in rest.splitlines()]
    assert plies == list(range(1, len(plies) + 1))  # whole lines only, in order


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_analysis_keeps_what_it_finished(tmp_path: Path, signum: int) -> None:
    assert PEDINA is not None
    path = game_file(tmp_path, blunder_board())
    annotated = tmp_path / "annotated.pdn"
    # stderr on a terminal, where the command shows its progress: the signal goes once two
    # positions are analysed, however long the machine takes to get there.
    terminal, stderr = pty.openpty()
    child = subprocess.Popen([PEDINA, "analyze", str(path), "--time", "0.25", "--json", "--annotate",
                              str(annotated)], stdout=subprocess.PIPE, stderr=stderr, text=True,
                             preexec_fn=terminal_sigint)
    os.close(stderr)
    shown = read_terminal_until(terminal, re.compile(r"analysed 2/"))
    child.send_signal(signum)
    out, _ = child.communicate(timeout=HANG)
    errors = (shown + read_terminal_until(terminal, None)).replace("\r\n", "\n")
    os.close(terminal)
    assert child.returncode == 130 and "interrupted" in errors and "Traceback" not in errors, errors
    document = json.loads(out)
    assert document["interrupted"] is True
    (game,) = document["games"]
    finished = len(game["positions"])
    assert 2 <= finished < len(BLUNDER_GAME) + 1
    assert [p["ply"] for p in game["positions"]] == list(range(finished)) and all(
        p["lines"] for p in game["positions"])
    # the annotated game has every move, and a comment on each move whose result was analysed
    kept = read_game(annotated.read_text(encoding="utf-8"))
    assert kept.board.moves == blunder_board().moves
    main_line = re.sub(r"\([^()]*\)", "", annotated.read_text())  # the variations taken out
    assert len(re.findall(r"\{[^}]*\}", main_line)) == finished - 1


def test_an_interrupted_annotation_keeps_every_game_of_the_file(tmp_path: Path) -> None:
    assert PEDINA is not None
    boards = [blunder_board() for _ in range(3)]
    path = game_file(tmp_path, *boards)
    annotated = tmp_path / "annotated.pdn"
    child = subprocess.Popen([PEDINA, "analyze", str(path), "--time", "0.5", "--jsonl", "--annotate", str(annotated)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=terminal_sigint)
    assert child.stdout is not None
    assert json.loads(child.stdout.readline())["game"] == 1  # game 1 begun: games 2 and 3 are not reached
    child.send_signal(signal.SIGINT)
    _, errors = child.communicate(timeout=30)
    assert child.returncode == 130 and "Traceback" not in errors, errors
    kept = read_games(annotated.read_text(encoding="utf-8"))
    assert [game.board.moves for game in kept] == [board.moves for board in boards]
    assert [game.headers["White"] for game in kept] == ["W1", "W2", "W3"]
    assert "Annotator" in kept[0].headers and "Annotator" not in kept[2].headers


# -- annotation and plot --------------------------------------------------------------------------


def test_annotated_pdn_and_plot(tmp_path: Path) -> None:
    board = blunder_board()
    path = game_file(tmp_path, board)
    annotated, picture = tmp_path / "annotated.pdn", tmp_path / "eval.png"
    result = run("analyze", str(path), "--depth", "4", "--annotate", str(annotated), "--plot", str(picture))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    text = annotated.read_text(encoding="utf-8")
    ours = read_game(text)
    assert ours.board.moves == board.moves and ours.headers["White"] == "W1"
    assert ours.headers["Annotator"].startswith("Pedina ") and "from White's view" in ours.headers["Annotator"]
    (theirs,) = PDNReader(pdn_text=text).games
    replay = draughts.Board("italian", "startpos")
    for move in theirs.moves:
        replay.push(draughts.Move(replay, pdn_move=move))
    assert len(theirs.moves) == len(board.moves) and Position.from_fen(replay.fen) == board.position
    # the blunder: marked ??, followed by the engine's score after it and the better line
    movetext = " ".join(line for line in text.splitlines() if not line.startswith("["))
    # (a Black move after a variation carries no number: pydraughts' reader garbles repeated ones)
    blunder = re.search(r"[)}] 9-13 \$4 \{\+(\d+\.\d\d)/4\} \(9\.\.\. (\S+) \{[+-]\d+\.\d\d/4\}", movetext)
    assert blunder and float(blunder.group(1)) > 1.0 and blunder.group(2) != "9-13", movetext
    # every move has a score (after "book " for a move of the opening book)
    assert len(re.findall(r"\{(?:book )?[+-]\d+\.\d\d/\d+\}", movetext)) >= len(board.moves)
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_thresholds_decide_the_marks_and_the_variations(tmp_path: Path) -> None:
    path = game_file(tmp_path, blunder_board())
    annotated = tmp_path / "annotated.pdn"
    result = run("analyze", str(path), "--depth", "4", "--annotate", str(annotated), "--better-line", "5",
                 "--mistake", "2", "--blunder", "5")
    assert result.returncode == 0, result.stderr
    text = annotated.read_text()
    # the blunder lost about 2.9 men: a mistake now, with no variation (it lost less than 5)
    assert "(" not in text and "$4" not in text and re.search(r" 9-13 \$2 \{", text)


def test_several_games_give_a_picture_each_and_annotate_them_all(tmp_path: Path) -> None:
    short = Board()
    for text in BLUNDER_GAME[:6]:
        short.push_text(text)
    path = game_file(tmp_path, short, blunder_board())
    annotated = tmp_path / "all.pdn"
    result = run("analyze", str(path), "--depth", "2", "--annotate", str(annotated), "--plot",
                 str(tmp_path / "eval.png"))
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.startswith("game ")] == [
        "game 1: W1 - B1", "game 2: W2 - B2"]
    assert (tmp_path / "eval-1.png").exists() and (tmp_path / "eval-2.png").exists()
    assert [len(g.board.moves) for g in read_games(annotated.read_text())] == [6, len(BLUNDER_GAME)]


@pytest.mark.parametrize("args, words", [
    (["--plot", "/no/such/folder/x.png"], "there is no folder /no/such/folder"),
    (["--plot", "x.txt"], "must end in a picture format"),
    (["--annotate", "/no/such/folder/x.pdn"], "cannot write /no/such/folder/x.pdn"),
    (["--mistake", "2", "--blunder", "1"], "below the mistake one"),
])
def test_output_mistakes_are_refused_before_the_analysis(tmp_path: Path, args: list[str], words: str) -> None:
    path = game_file(tmp_path, blunder_board())
    result = run("analyze", str(path), "--depth", "1", *args)
    assert result.returncode != 0 and result.stdout == "" and words in result.stderr
    assert len(result.stderr.splitlines()) == 1


# -- show -----------------------------------------------------------------------------------------


def test_show_draws_a_position_of_a_game(tmp_path: Path) -> None:
    board = blunder_board()
    path = game_file(tmp_path, Board(), board)
    result = run("show", str(path), "--game", "2", "--ply", str(BLUNDER_PLY + 1))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "game 2: W2 - B2, *" and lines[1] == f"after 9... 9-13 (ply {BLUNDER_PLY + 1} of 24)"
    assert "[.  9]" in result.stdout and "[b 13]" in result.stdout  # the move is marked
    assert lines[-1] == f"White to move.  FEN {board.positions[BLUNDER_PLY + 1].fen()}"
    start = run("show", "W:W21-32:B1-12").stdout
    assert "b  1" in start and "w 32" in start and start.splitlines()[-1].startswith("White to move.")
    bad = run("show", str(path), "--game", "2", "--ply", "99")
    assert bad.returncode != 0 and "there is no ply 99: the game has 24" in bad.stderr


def test_a_bad_line_of_a_file_of_positions_is_named(tmp_path: Path) -> None:
    path = tmp_path / "positions.fen"
    path.write_text("W:W21-32:B1-12\n# a comment\nB:W21-32:B1-12\nW:W21-32:B1-99\n", encoding="utf-8")
    result = run("analyze", str(path), "--depth", "1")
    errors = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(errors) == 1, result.stderr
    assert "line 4 is not a position" in errors[0] and "square" in errors[0]


def test_a_broken_game_costs_itself_not_the_file(tmp_path: Path) -> None:
    good = write_game(blunder_board(), {"White": "W1", "Black": "B1"}, "*")
    broken = good.replace("W1", "W2").replace(f" {BLUNDER_GAME[3]} ", " 1-5 ", 1)  # an illegal fourth move
    cut = good.replace("W1", "W3").rstrip().rsplit(" ", 2)[0] + " 2"  # the last move cut short, no result
    path = tmp_path / "mixed.pdn"
    path.write_text("\n".join([good, broken, cut]) + "\n", encoding="utf-8")
    document = run("analyze", str(path), "--depth", "1", "--json")
    assert document.returncode == 0, document.stderr
    games = json.loads(document.stdout)["games"]
    assert [(game["game"], len(game["positions"])) for game in games] == [
        (1, len(BLUNDER_GAME) + 1), (2, 4), (3, len(BLUNDER_GAME))]
    warnings = document.stderr.strip().splitlines()
    assert len(warnings) == 2 and warnings[0].startswith(f"Warning: {path}: game 2 ") and "kept up to ply 3" in warnings[0]
    assert "game 3 " in warnings[1] and f"kept up to ply {len(BLUNDER_GAME) - 1}" in warnings[1]
    shown = run("show", str(path), "--game", "1")
    assert shown.returncode == 0 and not shown.stderr  # only game 1 is read


def test_show_and_analyze_read_a_game_with_variations(tmp_path: Path) -> None:
    # On 7585fe0 the variations were skipped unread: a bad move in one went unseen, with no warning.
    path = tmp_path / "lines.pdn"
    path.write_text(VARIATIONS.replace("2. 22-18 {deepest}", "2. 22-18 {deepest} 11-99"), encoding="utf-8")
    for args in (["show", str(path), "--game", "1"], ["analyze", str(path), "--depth", "1", "--json"],
                 ["analyze", str(path), "--depth", "1", "--json", "--game", "1"]):
        result = run(*args)
        assert result.returncode == 0, result.stderr
        warning = f"Warning: {path}: game 1 (line 2), variation move 2... 11-99"
        assert result.stderr.startswith(warning) and "kept up to it" in result.stderr, (args, result.stderr)
        if args[0] == "analyze":
            (game,) = json.loads(result.stdout)["games"]
            assert len(game["positions"]) == 4  # the main line, its 3 moves
