"""Search: legality, tactics, endgames, draws, limits, threads, multi-PV, skill."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from dataclasses import replace
from pedina.settings import EngineSettings
import pedina
from pedina import Board, Position
from pedina.evaluate import Evaluator
from pedina.movegen import generate_captures, generate_non_captures, step_move
from pedina.scores import KNOWN_WIN, MATE_BOUND, MAX_PLY, NO_MOVES, PROGRESS_FLOOR, WIN, proven_plies
from pedina.search import CHECK_MASK, FORCED_MOVE_DEPTH, Info, Result, Searcher
from pedina.timeman import Limits
from pedina.squares import BOARD, squares_of
from pedina.timeman import time_budget
from pedina.movegen import RawMove, generate
from pedina.tt import ENTRY_BYTES, EXACT, position_key
from timing import HANG, allowed


def mirrored_fen(fen: str) -> str:
    """Colours swapped and the board turned half a turn."""
    p = Position.from_fen(fen)

    def flip(bits: int) -> list[int]:
        return [33 - s for s in squares_of(bits)]
    return Position.from_squares(flip(p.black & ~p.kings), flip(p.black & p.kings),
                                 flip(p.white & ~p.kings), flip(p.white & p.kings), not p.white_to_move).fen()


def mirrored_move(move: str) -> str:
    sep = "x" if "x" in move else "-"
    return sep.join(str(33 - int(s)) for s in move.split(sep))


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    return Searcher(EngineSettings(hash_mb=16, egdb_path=""))


def search(searcher: Searcher, fen: str, **limits: object) -> Result:
    searcher.new_game()
    return searcher.search(Board(fen), Limits(**limits))  # type: ignore[arg-type]


def test_best_move_is_legal(searcher: Searcher, random_positions: Callable[..., list[Position]]) -> None:
    for p in random_positions(150, 21):
        result = searcher.search(Board(p), Limits(depth=3))
        legal = Board(p).legal_moves()
        if not legal:
            assert result.best is None and result.score == -WIN
            continue
        assert result.best in legal, p.fen()
        if result.ponder is not None:
            after = Board(p)
            after.push(result.best)
            assert result.ponder in after.legal_moves()


# Shots found by a search over self-play positions and random placements, then
# checked by hand: the move gives one man and the forced reply lets us take two.
SHOTS = [
    # 21-18 14x21 25x9x13x21 (gives 18, takes 13 and 21)
    ("W:W21,22,24,25,26,28,29,30,31,32:B1,2,3,4,7,8,12,13,14,15", "21-18", 90),
    # 22-18 17x26x21 18x2x6x14: gives 21, takes two and crowns
    ("W:W13,21,22:B6,14,17", "22-18", 100),
    # 14-11 7x14x11 18x2x6x14: gives 11, takes two and crowns
    ("W:W14,15,18:B6,7,21", "14-11", 100),
    # 21-18 14x21x18 25x9x13x21
    ("W:W16,21,22,25:B6,7,13,14", "21-18", 100),
]
# Break-throughs: the man gets through to promote whatever the defence.
PROMOTIONS = [
    ("W:W13,22:B6,11", "22-19", 100),
    ("W:W17,19:B6,11", "17-13", 100),
    ("W:W18,20:B6,10", "20-15", 100),
]


@pytest.mark.parametrize("fen,move,gain", SHOTS + PROMOTIONS)
@pytest.mark.parametrize("colour", ["white", "black"])
def test_tactics(searcher: Searcher, fen: str, move: str, gain: int, colour: str) -> None:
    if colour == "black":
        fen, move = mirrored_fen(fen), mirrored_move(move)
    result = search(searcher, fen, depth=6)
    assert result.best is not None and result.best.hub() == move
    assert result.score >= gain


def test_win_in_one_scored_as_win_in_one_ply(searcher: Searcher) -> None:
    result = search(searcher, "W:W22:B18", depth=3)
    assert result.best is not None and result.best.hub() == "22x13x18"
    assert result.score == WIN - 1


def test_forced_win_found_as_proven(searcher: Searcher) -> None:
    # 27-23 leaves Black's two men without a safe move: a win in 5 plies.
    result = search(searcher, "W:W26,27:B16,18", depth=7)
    assert result.best is not None and result.best.hub() == "27-23"
    assert result.score == WIN - 5


@pytest.mark.parametrize("fen", [
    "W:WK10,K19:BK27",         # two kings v one
    "B:WK10:BK1,K5,K27",       # three kings v one, Black to move
    "W:WK1,K3,K14:B20",        # kings v a lone man
])
def test_small_endings_won_by_force_are_proven(searcher: Searcher, fen: str) -> None:
    score = search(searcher, fen, depth=4).score
    assert score > MATE_BOUND and proven_plies(score) == WIN - score


def test_known_losses_and_draws(searcher: Searcher) -> None:
    assert search(searcher, "B:WK10,K19:BK27", depth=4).score < -MATE_BOUND
    assert search(searcher, "W:WK10:BK27", depth=6).score == 0


@pytest.mark.parametrize("fen, sign", [("W:WK29,K32:BK4", 1), ("B:WK29,K32:BK4", -1), ("B:WK4:BK29,K25,K32", 1)])
def test_known_endings_not_yet_won_are_estimates_not_proofs(searcher: Searcher, fen: str, sign: int) -> None:
    score = search(searcher, fen, depth=4).score
    # A clear advantage, among the estimates: below the database's results and the proofs.
    assert KNOWN_WIN - 400 < sign * score < PROGRESS_FLOOR and proven_plies(score) is None


def test_proven_scores_say_the_plies_to_the_end() -> None:
    assert proven_plies(WIN - 5) == proven_plies(-(WIN - 5)) == 5
    assert proven_plies(MATE_BOUND + 1) == WIN - MATE_BOUND - 1 and proven_plies(MATE_BOUND) is None
    assert proven_plies(KNOWN_WIN + 200) is None and proven_plies(0) is None


def test_fixed_depth_is_deterministic() -> None:
    fen = "W:W20,23,25,26,29,30,31,32:B2,3,4,5,8,12,13,14,27"
    first = Searcher(EngineSettings(hash_mb=8, egdb_path=""))
    a = search(first, fen, depth=6)
    b = search(first, fen, depth=6)   # after new_game
    c = search(Searcher(EngineSettings(hash_mb=8, egdb_path="")), fen, depth=6)
    for other in (b, c):
        assert (other.best, other.score, other.nodes, other.pv) == (a.best, a.score, a.nodes, a.pv)


def repetition_board() -> Board:
    """White's lone king against three kings, after the kings have shuffled back and forth.

    The current position (White to move) has been seen before; 25-29 leads back
    to a position of the game, which the search must score as a draw.
    """
    board = Board("W:WK29:BK4,K11,K15")
    for text in ("29-25", "4-8", "25-29", "8-4", "29-25", "4-8"):
        board.push_text(text)
    return board


def test_search_uses_game_history_for_repetitions(searcher: Searcher) -> None:
    board = repetition_board()
    searcher.new_game()
    fresh = searcher.search(Board(board.position), Limits(depth=6))
    assert fresh.score < -(KNOWN_WIN - 400)      # the position itself is lost
    searcher.new_game()
    result = searcher.search(board, Limits(depth=6))
    assert result.score == 0 and result.best is not None and result.best.hub() == "25-29"


def test_forty_move_count_draws(searcher: Searcher) -> None:
    board = Board("W:WK29,K32:BK4,K1,K11")
    rng = random.Random(5)
    seen = {board.position}

    def extend() -> bool:
        """Depth-first: reversible king moves to fresh positions until 78 quiet plies."""
        if board.reversible_plies == 78:
            return board.position.white_to_move
        moves = [m for m in board.legal_moves() if not m.captured]
        rng.shuffle(moves)
        for move in moves:
            board.push(move)
            if board.position not in seen and board.legal_moves():
                seen.add(board.position)
                if extend():
                    return True
            board.pop()
        return False

    assert extend()
    searcher.new_game()
    fresh = searcher.search(Board(board.position), Limits(depth=4))
    searcher.new_game()
    result = searcher.search(board, Limits(depth=4))
    assert fresh.score != 0 and result.score == 0  # two more plies reach the 80-ply count


def run_in_thread(searcher: Searcher, board: Board, limits: Limits,
                  reached: Callable[[Info], bool]) -> tuple[threading.Thread, list[Result], threading.Event]:
    """The search on a thread of its own; the event is set at its first info for which ``reached`` holds."""
    out: list[Result] = []
    event = threading.Event()

    def on_info(info: Info) -> None:
        if reached(info):
            event.set()

    thread = threading.Thread(target=lambda: out.append(searcher.search(board, limits, on_info)))
    thread.start()
    return thread, out, event


#: How far past its hard limit a search may return on an idle machine: its next look at the
#: clock (every CHECK_MASK + 1 nodes), then the reply's line (seconds).
PAST_HARD = 0.1


def test_stop_is_honoured_quickly() -> None:
    searcher = Searcher(EngineSettings(hash_mb=16, egdb_path=""))
    thread, out, depth_3 = run_in_thread(searcher, Board(), Limits(infinite=True), lambda info: info.depth >= 3)
    assert depth_3.wait(HANG)
    assert thread.is_alive()
    started = time.perf_counter()
    searcher.stop()
    stopped_at = searcher.nodes
    thread.join(HANG)
    assert not thread.is_alive()
    # The flag is read every CHECK_MASK + 1 nodes, whatever the machine's speed; the wall
    # clock's bound (50 ms idle) allows for a loaded machine, where the thread may wait for a core.
    assert out and out[0].nodes - stopped_at <= CHECK_MASK + 1
    assert time.perf_counter() - started < allowed(0.05)
    assert out[0].best is not None and out[0].depth >= 3


def test_move_time_is_respected(searcher: Searcher) -> None:
    result = search(searcher, "W:W21-32:B1-12", move_time=0.2)
    # The search's own clock: it stops starting iterations past half its time, and stops
    # itself at the hard limit (a loaded machine only makes the time pass sooner).
    assert 0.1 < result.time < 0.2 + allowed(PAST_HARD) and result.best is not None


def test_clock_is_respected(searcher: Searcher) -> None:
    limits = Limits(clock=5.0, inc=0.0)  # a clock long enough that the allowed overrun stays inside it
    budget = time_budget(limits)
    assert budget is not None and budget.hard < 1.0
    searcher.new_game()
    result = searcher.search(Board("W:W21-32:B1-12"), limits)
    assert result.time < budget.hard + allowed(PAST_HARD) < 5.0 and result.best is not None


def test_single_legal_move_is_played_at_once(searcher: Searcher) -> None:
    fen = "W:W22:B18,9"  # the capture 22x13 is forced
    result = search(searcher, fen, move_time=5.0)
    # Only the short search that gives the move its score, not the move's 5 s.
    assert result.depth <= FORCED_MOVE_DEPTH and result.time < allowed(0.05)
    assert result.best is not None and result.best.hub() == "22x13x18"


FORCED_WIN = "W:W18,25,26,27,28,29,30,31,32:B14,1"  # 18x11 is forced, and wins in 9 plies


def test_a_forced_move_on_the_clock_gets_a_true_score_from_a_short_search(searcher: Searcher) -> None:
    infos: list[Info] = []
    searcher.new_game()
    timed = searcher.search(Board(FORCED_WIN), Limits(move_time=5.0), on_info=infos.append)
    short = search(searcher, FORCED_WIN, depth=FORCED_MOVE_DEPTH)
    assert (timed.depth, timed.score) == (FORCED_MOVE_DEPTH, short.score) and timed.score > 500
    assert infos and infos[-1].depth == FORCED_MOVE_DEPTH and infos[-1].score == timed.score


def test_analysis_searches_a_forced_move_like_any_position(searcher: Searcher) -> None:
    result = search(searcher, FORCED_WIN, move_time=0.5, analysis=True)
    assert result.depth >= 9 and result.score == WIN - 9


def test_node_limit(searcher: Searcher) -> None:
    result = search(searcher, "W:W21-32:B1-12", nodes=5000)
    assert result.best is not None and result.nodes <= 5000 + 256


def test_ponder_then_ponder_hit() -> None:
    searcher = Searcher(EngineSettings(hash_mb=16, egdb_path=""))
    thread, out, past_the_move_time = run_in_thread(searcher, Board(), Limits(ponder=True, move_time=0.2),
                                                    lambda info: info.time > 0.4)
    assert past_the_move_time.wait(HANG)
    assert thread.is_alive()  # pondering ignores the clock: twice the move time by the search's own clock
    hit = time.perf_counter()
    searcher.ponder_hit()
    thread.join(HANG)
    # On the clock from the hit: no new iteration before half the move time, none after the hard limit.
    assert 0.1 < time.perf_counter() - hit < 0.2 + allowed(PAST_HARD)
    assert out and out[0].best is not None


def test_multipv_gives_distinct_lines(searcher: Searcher) -> None:
    infos: list[Info] = []
    searcher.configure(replace(searcher.settings, multipv=3))
    try:
        searcher.new_game()
        result = searcher.search(Board(), Limits(depth=5), on_info=infos.append)
    finally:
        searcher.configure(replace(searcher.settings, multipv=1))
    last = [info for info in infos if info.depth == 5]
    assert [info.multipv for info in last] == [1, 2, 3]
    assert len({info.pv[0] for info in last}) == 3
    assert last[0].score >= last[1].score >= last[2].score
    assert result.best == last[0].pv[0]


def test_info_after_each_iteration(searcher: Searcher) -> None:
    infos: list[Info] = []
    searcher.new_game()
    searcher.search(Board(), Limits(depth=5), on_info=infos.append)
    assert [info.depth for info in infos] == [1, 2, 3, 4, 5]
    assert all(info.nodes > 0 and info.pv and info.mean_depth > 0 for info in infos)
    assert infos[-1].seldepth >= 5


def test_with_a_skill_the_last_info_is_the_move_played() -> None:
    drawn_elsewhere = 0
    for seed in range(6):
        weak = Searcher(EngineSettings(hash_mb=8, egdb_path=""))
        weak.configure(replace(weak.settings, skill=2, seed=seed))
        infos: list[Info] = []
        result = weak.search(Board(), Limits(depth=6), on_info=infos.append)
        # One line an iteration (multipv 1), then the move drawn when it is not the line shown.
        depths = [info.depth for info in infos]
        assert depths in ([1, 2], [1, 2, 2]) and all(info.multipv == 1 for info in infos)
        drawn_elsewhere += len(depths) == 3
        last = infos[-1]
        assert last.pv[:1] == [result.best] and last.score == result.score and last.pv == result.pv
    assert drawn_elsewhere > 0


def test_an_analysis_is_not_weakened_by_the_skill() -> None:
    weak = Searcher(EngineSettings(hash_mb=8, egdb_path=""))
    weak.configure(replace(weak.settings, skill=0))
    assert weak.search(Board(), Limits(depth=5, analysis=True)).depth == 5
    assert weak.search(Board(), Limits(depth=5)).depth == 1


def test_multipv_and_skill_search_each_root_move_once_an_iteration() -> None:
    """One exact pass scores every root move, so the tree is the same for any number of lines."""
    board = Board("W:W20,23,25,26,29,30,31,32:B2,3,4,5,8,12,13,14")
    moves = len(board.legal_moves())
    assert moves >= 6
    nodes = []
    for multipv, skill in ((2, 20), (moves, 20), (1, 19)):
        searcher = Searcher(EngineSettings(hash_mb=8, egdb_path=""))
        searcher.configure(replace(searcher.settings, multipv=multipv, skill=skill))
        nodes.append(searcher.search(board, Limits(depth=6)).nodes)
    assert nodes[0] == nodes[1] == nodes[2]


def test_a_capture_at_the_deepest_ply_is_played_out_not_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluation's precondition (no capture for the mover) holds at the deepest ply too:
    ``W:W9:B1,5`` has the capture 9x2 and no step, which the evaluation would score as no moves.
    The pure flavour also checks every position the search evaluates (a compiled class takes
    no new method); the scores are checked in both."""
    p = Position.from_fen("W:W9:B1,5")
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    evaluate = Evaluator.evaluate
    calls = []

    def checked(evaluator: Evaluator, us: int, them: int, kings: int, white: bool) -> int:
        assert not generate_captures(us, them, kings, white, BOARD ^ us ^ them), "evaluated with a capture"
        calls.append(us)
        return evaluate(evaluator, us, them, kings, white)

    pure = pedina.build_flavour() == "pure"
    if pure:
        monkeypatch.setattr(Evaluator, "evaluate", checked)
    assert evaluate(searcher.evaluator, p.white, p.black, p.kings, True) == NO_MOVES  # why it matters
    searcher._begin_iteration([])
    for value in (searcher._pvs(p.white, p.black, p.kings, True, 3, -WIN, WIN, MAX_PLY, 0),
                  searcher._quiesce(p.white, p.black, p.kings, True, -WIN, WIN, MAX_PLY)):
        assert value > -MATE_BOUND, "a position with a capture scored as lost"
    assert calls or not pure


def test_skill_is_weaker_but_legal_and_seeded() -> None:
    weak = Searcher(EngineSettings(hash_mb=8, egdb_path=""))
    weak.configure(replace(weak.settings, skill=0))
    board = Board()
    first = weak.search(board, Limits(move_time=1.0))
    assert first.best in board.legal_moves() and first.depth == 1
    assert weak.search(board, Limits(move_time=1.0)).best == first.best
    picks = set()
    for seed in range(12):
        weak.configure(replace(weak.settings, seed=seed))
        picks.add(weak.search(board, Limits(depth=3)).best)
    assert len(picks) > 1  # the choice varies with the seed


def test_lost_position_has_no_move(searcher: Searcher) -> None:
    result = search(searcher, "W:W29:B25,26,21,22", depth=4)
    assert result.best is None and result.score == -WIN


@pytest.mark.parametrize("fen", ["W:WK31,K17:BK15", "W:WK13,K31:BK26", "W:WK1,K5:BK11", "B:WK22,K23:BK4"])
def test_two_kings_beat_one_over_the_board(fen: str) -> None:
    """The known win converted: White (two kings) at depth 12, Black at depth 6."""
    strong, weak = Searcher(EngineSettings(hash_mb=8, egdb_path="")), Searcher(EngineSettings(hash_mb=8, egdb_path=""))
    board = Board(fen)
    while board.outcome() is None and len(board.moves) < 80:
        result = (strong if board.position.white_to_move else weak).search(
            board, Limits(depth=12 if board.position.white_to_move else 6))
        assert result.best is not None
        board.push(result.best)
    outcome = board.outcome()
    assert outcome is not None and outcome.winner is True, board.position.fen()


def test_hash_size_is_bounded() -> None:
    """The size asked for in MB is the buffer's, and holds 16-byte entries."""
    small = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    big = Searcher(EngineSettings(hash_mb=64, egdb_path=""))
    assert big.tt.entries == 64 * 1024 * 1024 // ENTRY_BYTES == 4_194_304
    assert len(big.tt.words) * 8 == 64 * 1024 * 1024
    small.configure(replace(small.settings, hash_mb=8))
    assert small.tt.entries == big.tt.entries // 8
    small.search(Board(), Limits(depth=6))
    assert len(small.tt.words) * 8 == 8 * 1024 * 1024


def test_position_keys_are_the_same_in_both_flavours_and_tell_positions_apart(
        load_module: Callable[[Path, str], ModuleType]) -> None:
    """Compiled, the key's products wrap at 64 bits; the module's own source run as plain
    Python computes them exactly: both must give every position the same key."""
    plain = load_module(Path(__file__).parent.parent / "engine" / "tt.py", "plain_tt")
    rng = random.Random(62)
    keys = set()
    for _ in range(20_000):
        us, them, kings, white = rng.getrandbits(36), rng.getrandbits(36), rng.getrandbits(36), rng.random() < 0.5
        key = position_key(us, them, kings, white)
        assert key == plain.position_key(us, them, kings, white) and 0 <= key < 1 << 62
        keys.add(key)
    assert len(keys) == 20_000
    start = Position.start()
    assert position_key(start.white, start.black, 0, True) != position_key(start.white, start.black, 0, False)
    buckets = {position_key(1 << square, 1 << 35, 0, True) & 1023 for square in range(35)}
    assert len(buckets) >= 30  # positions a square apart spread over the low bits, which pick the bucket


def test_the_last_line_reported_is_the_line_played() -> None:
    """Clients keep the last line they are sent. A search stopped in an unfinished iteration
    plays that iteration's line (a new best move, or the old one with a new score and line):
    it is reported too. Node limits stop the search at the same point every run; this range
    stops it at every stage of iterations 4 to 8."""
    for nodes in range(2000, 40001, 500):
        infos: list[Info] = []
        result = Searcher(EngineSettings(hash_mb=1, egdb_path="")).search(Board(), Limits(nodes=nodes), on_info=infos.append)
        last = infos[-1]
        assert (last.pv, last.score) == (result.pv, result.score) and result.pv[0] == result.best, nodes


def test_a_new_game_and_a_new_size_empty_the_hash_table() -> None:
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    searcher.search(Board(), Limits(depth=4))
    assert any(searcher.tt.words)
    searcher.new_game()
    assert not any(searcher.tt.words) and len(searcher.tt.words) * 8 == 1024 * 1024
    searcher.search(Board(), Limits(depth=4))
    searcher.configure(replace(searcher.settings, hash_mb=2))
    assert not any(searcher.tt.words) and len(searcher.tt.words) * 8 == 2 * 1024 * 1024


def _illegal_move(us: int, them: int, kings: int, white: bool) -> RawMove | None:
    """A move a false hit could bring to this position: a man's step where a capture is due, a
    capture of the wrong pieces, or a man stepping back; ``None`` when none of them fits."""
    empty = BOARD ^ us ^ them
    captures = generate_captures(us, them, kings, white, empty)
    men = us & ~kings
    for frm in (1 << bit for bit in range(36)):
        ahead, behind = ((frm >> 4, frm >> 5), (frm << 4, frm << 5)) if white else ((frm << 4, frm << 5), (frm >> 4, frm >> 5))
        for to in ahead if captures else behind:
            if frm & men and to & empty:
                return frm, to, 0, 0, ()
    if captures:
        frm, to, taken, toggle, path = captures[0]
        return frm, to, them ^ taken, toggle, path
    return None


def test_step_move_is_exactly_the_generated_steps(random_positions: Callable[..., list[Position]]) -> None:
    """Every pair of squares: :func:`step_move` gives the generator's own step, or ``None``
    when the generator has no such step (a table's move is checked with it). Both give the
    step's one shared tuple, compiled too, where the search's history and killers find it by
    identity."""
    bits = [1 << i for i in range(36) if 1 << i & BOARD]
    for position in random_positions(40, 11):
        white = position.white_to_move
        us, them = (position.white, position.black) if white else (position.black, position.white)
        empty = BOARD ^ us ^ them
        steps = {(m[0], m[1]): m for m in generate_non_captures(us, position.kings, white, empty)}
        for frm in bits:
            for to in bits:
                move = step_move(us, position.kings, white, empty, frm, to)
                assert move == steps.get((frm, to))
                assert move is None or move is steps[frm, to]


def test_a_table_move_of_another_position_is_never_played() -> None:
    """A false hit (another position's entry under the same key bits) can only cost a wrong
    cut: its move is tried only when it is legal here. Every position within four plies of one
    with captures due gets an entry with an illegal move and no depth to cut with: the search
    is then exactly a clean one's, and its line is legal."""
    board = Board("W:W13,18,20,21,22,27,28,30,31,32:B1,2,3,5,6,8,9,10,11,15")
    clean = Searcher(EngineSettings(hash_mb=1, egdb_path="")).search(board, Limits(depth=6))
    forged = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    position = board.position
    white = position.white_to_move
    us, them = (position.white, position.black) if white else (position.black, position.white)
    frontier = [(us, them, position.kings, white)]
    planted = 0
    for _ in range(4):
        children = []
        for us, them, kings, white in frontier:
            move = _illegal_move(us, them, kings, white)
            if move is not None:
                forged.tt.store(position_key(us, them, kings, white), 0, EXACT, 0, move, False)
                planted += 1
            children += [(them ^ taken, us ^ frm ^ to, kings ^ toggle, not white)
                         for frm, to, taken, toggle, _ in generate(us, them, kings, white)]
        frontier = children
    assert planted > 50
    found = forged.search(board, Limits(depth=6))
    assert (found.pv, found.score, found.nodes) == (clean.pv, clean.score, clean.nodes)
    for played in found.pv:
        board.push(played)


def test_a_new_game_leaves_the_same_searches_as_a_new_searcher() -> None:
    """The entries a new game puts aside are never seen again: after a game's worth of
    searching, a new game searches exactly as a searcher just made (fixed depth)."""
    fresh = Searcher(EngineSettings(hash_mb=1, egdb_path="")).search(Board(), Limits(depth=7))
    used = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    board = Board()
    for _ in range(6):
        best = used.search(board, Limits(depth=5)).best
        assert best is not None
        board.push(best)
    used.new_game()
    again = used.search(Board(), Limits(depth=7))
    assert (again.pv, again.score, again.nodes) == (fresh.pv, fresh.score, fresh.nodes)


def test_a_clock_that_started_before_the_search_counts_against_it() -> None:
    """``start(..., clock_from)``: a move time already spent before the search starts leaves
    it no time at all, so it stops at its first look at the clock, whatever the machine's speed."""
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    done: list[Result | None] = []
    finished = threading.Event()

    def on_done(result: Result | None, error: Exception | None) -> None:
        done.append(result)
        finished.set()

    searcher.start(Board(), Limits(move_time=1.0), None, on_done, time.perf_counter() - 5.0)
    assert finished.wait(HANG)
    result = done[0]
    assert result is not None and result.best in Board().legal_moves() and result.depth <= 1
    # By default, the clock starts with the search: it is not spent at once. (The search stops
    # itself at depth 3, so that this holds on any machine.)
    stop_at_3 = searcher.search(Board(), Limits(move_time=10.0),
                                lambda info: searcher.stop() if info.depth >= 3 else None)
    assert stop_at_3.depth == 3


def test_principal_variation_is_a_legal_line(random_positions: Callable[..., list[Position]]) -> None:
    searcher = Searcher(EngineSettings(hash_mb=8, egdb_path=""))
    long_lines = 0
    for p in random_positions(40, 31) + [Position.start()]:
        searcher.new_game()
        result = searcher.search(Board(p), Limits(depth=6))
        board = Board(p)
        for move in result.pv:
            assert move in board.legal_moves(), (p.fen(), [m.hub() for m in result.pv])
            board.push(move)
        long_lines += len(result.pv) >= 6
    assert long_lines >= 20


def test_stop_sent_right_after_start_is_not_lost() -> None:
    """start() clears old requests in the caller's thread, so an immediate stop ends the search."""
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    results: list[Result | None] = []
    for _ in range(5):
        thread = searcher.start(Board(), Limits(infinite=True), None,
                                lambda result, error: results.append(result))
        searcher.stop()
        thread.join(HANG)
        assert not thread.is_alive()
    assert len(results) == 5 and all(r is not None and r.best is not None for r in results)


def test_ponder_hit_sent_right_after_start_puts_the_search_on_the_clock() -> None:
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path=""))
    done = threading.Event()
    thread = searcher.start(Board(), Limits(ponder=True, move_time=0.1), None, lambda result, error: done.set())
    searcher.ponder_hit()
    assert done.wait(HANG), "a ponder-hit sent before the thread ran was lost"
    thread.join(HANG)


def test_searches_leave_the_shared_empty_capture_list_empty() -> None:
    """A position without a capture gets one shared empty list (no list a quiet node): were a
    search ever to add to it, every later quiet position would seem to have that capture."""
    quiet = Position.from_fen("W:WK28,21,22:BK5,9,10")
    searcher = Searcher(EngineSettings(hash_mb=1, egdb_path="", book=False))
    for fen in ("W:WK28,21,22:BK5,9,10", "B:W21-32:B1-12", "W:W9:B1,5"):
        searcher.search(Board(fen), Limits(depth=6))
    assert generate_captures(quiet.white, quiet.black, quiet.kings, True, BOARD ^ quiet.white ^ quiet.black) == []
    assert generate(quiet.white, quiet.black, quiet.kings, True) is not generate(quiet.white, quiet.black, quiet.kings, True)


def test_packed_moves_make_the_children_the_tuples_make(load_module: Callable[[Path, str], ModuleType]) -> None:
    """``scripts/move_packing.py`` times moves held as packed ints, whose king toggle comes from
    the position: they make the children the generator's tuples make, at every rule vector's
    position, a king's ring capture of four kings, and the positions near the bench's."""
    script = Path(__file__).parent.parent / "scripts" / "move_packing.py"
    packing = load_module(script, "move_packing")
    vectors = json.loads((Path(__file__).parent / "italian-rules.json").read_text())
    sides = [packing.sides_of(Position.from_fen(fen))
             for fen in [v["fen"] for v in vectors] + ["W:WK19:BK4,K13,K14,K21,K22"]]
    as_tuples, as_packed = packing.nodes_of(sides + packing.bench_positions(1))
    assert any(frm == to for node in as_tuples for frm, to, _, _, _ in node[4])  # the ring capture is there
    for tuple_node, packed_node in zip(as_tuples, as_packed):
        assert packing.tuple_children([tuple_node]) == packing.packed_children([packed_node]), tuple_node
    done = subprocess.run([sys.executable, str(script), "--runs", "1", "--rounds", "1", "--plies", "1"],
                          capture_output=True, text=True, timeout=HANG)
    assert done.returncode == 0, done.stderr
    assert "packed ints / tuples:" in done.stdout.splitlines()[-1]
