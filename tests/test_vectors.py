"""Every rule vector of italian-rules.json (a copy of ../shared/vectors/italian-rules.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pedina import Board, Position, Termination, legal_moves, parse_move

VECTORS: list[dict[str, Any]] = json.loads((Path(__file__).parent / "italian-rules.json").read_text())


def test_vectors_are_loaded() -> None:
    assert len(VECTORS) == 14


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_legal_moves_exactly(vector: dict[str, Any]) -> None:
    position = Position.from_fen(vector["fen"])
    moves = legal_moves(position)
    assert sorted(m.hub() for m in moves) == sorted(vector["legal_hub"]), vector["rule"]
    assert sorted(m.full_path() for m in moves) == sorted(vector["legal_paths"]), vector["rule"]
    assert position.count_moves() == len(vector["legal_hub"])
    # Both texts name the same move.
    for hub_text, path_text in zip(sorted(vector["legal_hub"]), sorted(vector["legal_paths"])):
        assert parse_move(position, hub_text) == parse_move(position, path_text)


def test_no_legal_move_loses() -> None:
    (vector,) = [v for v in VECTORS if v["name"] == "blocked_no_moves_loses"]
    outcome = Board(vector["fen"]).outcome()
    assert outcome is not None
    assert (outcome.termination, outcome.winner, outcome.result()) == (Termination.NO_MOVES, False, "0-1")
