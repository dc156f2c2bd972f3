"""Perft against the published counts (docs/rules.md, "Perft")."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import CliRunner

import pedina.protocol.bench_movegen as bench
from pedina import Position, legal_moves, perft
from pedina.protocol.bench_movegen import format_table, run_movegen_bench
from pedina.protocol.cli import main

START = [7, 49, 302, 1469, 7361, 36473, 177532, 828783, 3860875, 17761384, 81647058]
FIRST_FEN = "W:W30,26,27,22,23,24,17,18,20:B14,15,16,9,11,5,6,1,3"
FIRST = [5, 13, 42, 107, 360, 1099, 3736, 12495, 43686, 164173]
SECOND_FEN = "B:W30,21,22,17,20,K6:B25,28,9,5,1,3"
SECOND = [6, 47, 271, 1916, 10810, 73137, 389809, 2469050, 12803372]


def _cases(fen: str | None, counts: list[int], slow_from: int) -> list[object]:
    return [pytest.param(fen, depth, count, id=f"d{depth}",
                         marks=[pytest.mark.slow] if depth >= slow_from else [])
            for depth, count in enumerate(counts, start=1)]


@pytest.mark.parametrize(("fen", "depth", "expected"), _cases(None, START, slow_from=10))
def test_start_position(fen: None, depth: int, expected: int) -> None:
    # Depths 10 and 11 run in full under CI too (about 40 s together).
    assert perft(Position.start(), depth) == expected


@pytest.mark.parametrize(("fen", "depth", "expected"), _cases(FIRST_FEN, FIRST, slow_from=99))
def test_first_published_position(fen: str, depth: int, expected: int) -> None:
    # Depth 10 is the merged count (164177 when duplicate capture paths are kept).
    assert perft(Position.from_fen(fen), depth) == expected


@pytest.mark.parametrize(("fen", "depth", "expected"), _cases(SECOND_FEN, SECOND, slow_from=99))
def test_second_published_position(fen: str, depth: int, expected: int) -> None:
    assert perft(Position.from_fen(fen), depth) == expected


def test_depth_zero_is_one_leaf() -> None:
    assert perft(Position.start(), 0) == 1


def test_divide_sums_to_perft() -> None:
    # The bulk count of the last ply must agree with playing every move out.
    root = Position.from_fen(SECOND_FEN)
    per_move = [perft(root.play(move), 4) for move in legal_moves(root)]
    assert len(per_move) == SECOND[0]
    assert sum(per_move) == SECOND[4]


def test_bulk_count_matches_generated_moves(random_positions: Callable[..., list[Position]]) -> None:
    # count_moves has its own shortcuts (popcounts of single jumps and steps);
    # it must give the number of generated moves in every kind of position.
    for position in random_positions(3000, 11):
        assert position.count_moves() == len(legal_moves(position)), position.fen()


def test_perft_command() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["perft", "-d", "4"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert [line.split()[3] for line in lines] == ["7", "49", "302", "1,469"]
    result = runner.invoke(main, ["perft", SECOND_FEN, "-d", "3", "--divide"])
    assert result.exit_code == 0
    *per_move, total = result.output.splitlines()
    assert len(per_move) == SECOND[0] and sum(int(line.split()[1].replace(",", "")) for line in per_move) == SECOND[2]
    assert total.startswith("depth 3: 271 leaves")


def test_perft_command_rejects_bad_input() -> None:
    result = CliRunner().invoke(main, ["perft", "W:W21-32:B1-13", "-d", "2"])
    assert result.exit_code == 2 and "Black has 13 pieces" in result.output and "Traceback" not in result.output
    assert CliRunner().invoke(main, ["perft", "-d", "0"]).exit_code == 2


def test_bench_movegen_table() -> None:
    rows = run_movegen_bench(quick=True, min_seconds=0.0)
    expected = {("start", 7): START[6], ("start", 3): START[2], ("published 1", 8): FIRST[7],
                ("published 1", 5): FIRST[4], ("published 2", 6): SECOND[5], ("published 2", 3): SECOND[2]}
    assert {(row.position, row.depth): row.leaves for row in rows} == expected
    shared = [row for row in rows if row.their_leaves is not None]
    assert len(shared) == 3 and all(row.their_leaves == row.leaves and row.ratio for row in shared)
    table = format_table(rows)
    assert len(table) == 7 and all(line.endswith("x") for line in table if " 3 " in line[:20])


def test_bench_movegen_without_pydraughts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "load_pydraughts", lambda: None)
    result = CliRunner().invoke(main, ["bench", "movegen", "--quick"])
    assert result.exit_code == 0, result.output
    assert "pydraughts is not installed" in result.output and "leaves/s" in result.output
