"""``pedina hub`` driven by the pydraughts client (``HubEngine``, ``tournament.RoundRobin``).

Complete Italian games on short time controls: Pedina against Pedina and against
a random mover. Each engine writes a ``--log``; from the logs we rebuild every
search and the whole game, then check that every move is legal under our rules
and pydraughts' (whose only known difference is extra moves in some multi-king
captures, rule criterion 4), that no search took longer than the clock the
``level`` gave, that no engine reported an error, and that each game finished.
"""

from __future__ import annotations

import re
import shutil
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import draughts
import pytest
from draughts.engine import HubEngine, Limit
from draughts.tournament import RoundRobin

from pedina import START_HUB, Board, Position
from pedina.move import Move
from pedina.pdn import read_games
from pedina.protocol.hubline import parse_line
from timing import allowed, starved

PEDINA = shutil.which("pedina")
RANDOM_ENGINE = Path(__file__).parent / "fixtures" / "random_engine.py"
MAX_PLIES = 120
LOG_LINE = re.compile(r"(\d\d):(\d\d):(\d\d\.\d\d\d) ([<>]) (.*)")
# Time per search beyond the level's clock allowed for the log's own latency (seconds).
LOG_SLACK = 0.02
#: The engine's error for a ``level`` whose clock pydraughts took far below zero (it then moves
#: at once, as on any clock below zero). pydraughts charges
#: its own work and the pipe's delays to the clock, which a machine busy with other processes
#: drains over a 2-second game (seen at a load of 6 on 2 cores); the engine's own share of the
#: clock is checked by :func:`assert_within_own_clock`.
CLIENT_CLOCK_SPENT = re.compile(r"the clock is [0-9.e+-]+ s below zero")

if PEDINA is None:  # these tests drive the installed console script, as a GUI would
    raise RuntimeError("the pedina console script is not on PATH: install the project first")


@dataclass
class Search:
    """One ``go`` as an engine's log shows it."""

    pos: str
    level: str
    go_at: float
    done: str
    done_at: float


def read_log(path: Path) -> tuple[list[Search], list[str]]:
    """The searches of a ``pedina hub --log`` file, and every ``error`` line it sent."""
    searches: list[Search] = []
    errors: list[str] = []
    pos = level = ""
    go_at = 0.0
    for line in path.read_text(encoding="utf-8").splitlines():
        match = LOG_LINE.fullmatch(line)
        assert match, f"{path.name}: unexpected log line {line!r}"
        hours, minutes, seconds, direction, text = match.groups()
        at = int(hours) * 3600 + int(minutes) * 60 + float(seconds)
        if direction == ">" and text.startswith("pos "):
            pos, level = text, ""
        elif direction == ">" and text.startswith("level "):
            level = text
        elif direction == ">" and text.startswith("go "):
            go_at = at
        elif direction == "<" and text.startswith("done "):
            searches.append(Search(pos, level, go_at, text, at))
        elif direction == "<" and text.startswith("error "):
            errors.append(text)
    return searches, errors


def board_of(pos_line: str) -> Board:
    fields = dict(parse_line(pos_line)[1])
    board = Board(fields["pos"] or "")
    for text in (fields.get("moves") or "").split():
        board.push_text(text)
    return board


def done_move(board: Board, done_line: str) -> Move:
    fields = dict(parse_line(done_line)[1])
    move = board.parse_move(fields["move"] or "")
    assert move.hub() == fields["move"]
    return move


def clock_of(level_line: str) -> float | None:
    """Seconds available for the move under a ``level`` line (time plus the increment credited first)."""
    fields = dict(parse_line(level_line)[1]) if level_line else {}
    if "time" in fields:
        return float(fields["time"] or 0) + float(fields.get("inc") or 0)
    if "move-time" in fields:
        return float(fields["move-time"] or 0)
    return None


def identity(hub_text: str) -> tuple[int, int, frozenset[int]]:
    numbers = [int(n) for n in re.findall(r"\d+", hub_text)]
    return numbers[0], numbers[1], frozenset(numbers[2:])


def check_game(moves: list[Move]) -> draughts.Board:
    """Replay ``moves`` on our board and on pydraughts'; both must find each legal. Returns pydraughts' board."""
    ours = Board()
    theirs = draughts.Board("italian")
    for move in moves:
        our_set = {identity(m.hub()) for m in ours.legal_moves()}
        their_set = {identity(m.hub_move) for m in theirs.legal_moves()}
        # pydraughts may list extra multi-king captures (criterion 4); everything else agrees.
        assert our_set <= their_set
        extra = their_set - our_set
        assert all(len(captured) >= 2 for _, _, captured in extra), extra
        assert identity(move.hub()) in our_set & their_set
        ours.push(move)
        theirs.push(draughts.Move(theirs, hub_move=move.hub()))
        assert Position.parse(theirs.fen) == ours.position
    return theirs


def check_engine_log(path: Path) -> list[Search]:
    """Every search of one engine: legal position and answer, within its clock, no errors."""
    searches, errors = read_log(path)
    assert searches, f"{path.name}: no search"
    assert [error for error in errors if not starved(error) and not CLIENT_CLOCK_SPENT.search(error)] == [], errors
    for search in searches:
        board = board_of(search.pos)
        assert board.start.hub() == START_HUB  # pydraughts sends the whole game from the start
        done_move(board, search.done)
        clock = clock_of(search.level)
        assert clock is not None, search.level
        elapsed = search.done_at - search.go_at
        # pydraughts charges its own work to the clock too, which can take it below zero on a busy
        # machine; the engine then owes an answer at once. The slack is the idle machine's, allowed for load.
        assert elapsed <= max(clock, 0.0) + allowed(LOG_SLACK), f"{path.name}: {elapsed:.3f} s used with {search.level}"
    assert_within_own_clock(searches, path.name)
    return searches


def assert_within_own_clock(searches: list[Search], name: str) -> None:
    """The clock charged with the engine's own thinking alone (from the first ``level``) never runs out."""
    fields = dict(parse_line(searches[0].level)[1])
    if "time" not in fields:
        return
    left, inc = float(fields["time"] or 0), float(fields.get("inc") or 0)
    for number, search in enumerate(searches, 1):
        left += inc - (search.done_at - search.go_at)
        assert left > 0, f"{name}: the engine's own thinking ran out of its clock at search {number}"


def game_from_logs(*paths: Path) -> list[Move]:
    """The whole game: the last position any engine searched, plus its answer."""
    last = max((search for path in paths for search in read_log(path)[0]),
               key=lambda search: len(board_of(search.pos).moves))
    board = board_of(last.pos)
    board.push(done_move(board, last.done))
    return board.moves


def tournament_games(path: Path) -> list[list[Move]]:
    """The games of RoundRobin's PDN file (which says GameType 20 for Italian, a pydraughts quirk)."""
    text = path.read_text(encoding="utf-8").replace('[GameType "20"]', '[GameType "22"]')
    return [game.board.moves for game in read_games(text)]


def finished(theirs: draughts.Board, plies: int) -> bool:
    return bool(theirs.is_over()) or plies >= MAX_PLIES


def random_engine_command(tmp_path: Path) -> str:
    """An executable wrapper (pydraughts runs the real path of argv[0] through a shell)."""
    wrapper = tmp_path / "random-engine"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{RANDOM_ENGINE}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


def pedina_player(log: Path, **options: object) -> tuple[list[str], str, dict[str, object], None]:
    assert PEDINA is not None
    return [PEDINA, "hub", "--log", str(log)], "hub", {"variant": "italian", **options}, None


def test_round_robin_pedina_against_pedina(tmp_path: Path) -> None:
    logs = [tmp_path / "white.log", tmp_path / "black.log"]
    players = [pedina_player(logs[0], **{"tt-size": 16}), pedina_player(logs[1], skill=20)]
    tournament = RoundRobin(str(tmp_path / "games.pdn"), players, start_time=2, increment=0.05,
                            variant="italian", games_per_pair=1, max_moves=MAX_PLIES)
    scores = tournament.play()
    assert sum(scores) == 2  # one game, two points shared out
    white, black = check_engine_log(logs[0]), check_engine_log(logs[1])
    moves = game_from_logs(*logs)
    assert tournament_games(tmp_path / "games.pdn") == [moves]
    assert len(white) == (len(moves) + 1) // 2 and len(black) == len(moves) // 2
    assert finished(check_game(moves), len(moves))
    assert "set-param name=tt-size value=16" in logs[0].read_text(encoding="utf-8")


def test_round_robin_pedina_against_a_random_mover(tmp_path: Path) -> None:
    pedina_log = tmp_path / "pedina.log"
    players = [pedina_player(pedina_log), ([random_engine_command(tmp_path)], "hub", {"variant": "italian"}, None)]
    tournament = RoundRobin(str(tmp_path / "games.pdn"), players, start_time=2, increment=0.05,
                            variant="italian", games_per_pair=2, max_moves=MAX_PLIES)
    scores = tournament.play()
    assert sum(scores) == 4  # two games, Pedina White then Black
    games = tournament_games(tmp_path / "games.pdn")
    assert len(games) == 2
    for game in games:
        assert finished(check_game(game), len(game))
    check_engine_log(pedina_log)
    pedina_moves = sum((len(game) + colour) // 2 for game, colour in zip(games, (1, 0)))
    assert len(read_log(pedina_log)[0]) == pedina_moves


def test_hub_engine_client_side_clock_never_falls(tmp_path: Path) -> None:
    """pydraughts' HubEngine played move by move, with the client's own clock as RoundRobin keeps it."""
    import random

    assert PEDINA is not None
    engine = HubEngine([PEDINA, "hub", "--log", str(tmp_path / "pedina.log")])
    try:
        assert engine.id["name"] == "Pedina" and "italian" in engine.variants
        engine.configure({"variant": "italian"})
        engine.init()
        engine.ping()
        board = draughts.Board("italian")
        limit = Limit(1.5, 0.05)
        rng = random.Random(3)
        ours = Board()
        used: list[float] = []
        while not board.is_over() and len(board.move_stack) < MAX_PLIES:
            if board.turn == draughts.WHITE:
                started = time.perf_counter()
                result = engine.play(board, limit, False)
                spent = time.perf_counter() - started
                used.append(spent)
                assert limit.time is not None
                limit.time = limit.time - spent + (limit.inc or 0)
                # Measured by the client, so the pipe's and pydraughts' own time count too: never
                # below zero on an idle machine; 10 ms below it, allowed for load, on a loaded one.
                assert limit.time > -allowed(0.01), f"clock fell after {len(board.move_stack)} plies"
                move_text = result.move.hub_move
            else:
                move_text = rng.choice(sorted(m.hub() for m in ours.legal_moves()))
            ours.push(ours.parse_move(move_text))
            board.push(draughts.Move(board, hub_move=move_text))
        assert finished(board, len(board.move_stack))
        assert used and max(used) < 1.5 + 0.05 + allowed(0.01)
        engine.quit()
    finally:
        engine.kill_process()
    check_engine_log(tmp_path / "pedina.log")


def test_readme_pydraughts_example_plays_a_move() -> None:
    import contextlib
    import io
    import warnings

    text = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    section = text[text.index("From Python, pydraughts"):]
    code = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[0]
    assert "shutil.which(\"pedina\")" in code
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # pydraughts leaves the engine's pipes to the collector
        exec(compile(code, "README.md", "exec"), {})
    move = out.getvalue().strip()
    Board().parse_move(move)  # a legal first move, in PDN
