"""Evaluation: symmetry, linearity in the weights, weight files, endgame knowledge."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from pedina import Position, legal_moves
from pedina.evaluate import (
    DEFAULT_WEIGHTS,
    FEATURES,
    KNOWN_WIN,
    NO_MOVES,
    Evaluator,
    default_evaluator,
    shipped_weights,
    features,
)
from pedina.squares import squares_of


def sides(p: Position) -> tuple[int, int, int, bool]:
    us, them = (p.white, p.black) if p.white_to_move else (p.black, p.white)
    return us, them, p.kings, p.white_to_move


def mirrored(p: Position) -> Position:
    """Colours swapped and the board turned: the same position for the other side."""
    def flip(bits: int) -> list[int]:
        return [33 - s for s in squares_of(bits)]
    return Position.from_squares(flip(p.black & ~p.kings), flip(p.black & p.kings),
                                 flip(p.white & ~p.kings), flip(p.white & p.kings), not p.white_to_move)


def quiet_positions(random_positions: Callable[..., list[Position]], count: int, seed: int) -> list[Position]:
    """Positions where the side to move has no capture (where the evaluation is used)."""
    return [p for p in random_positions(count, seed) if p.count_moves() and not legal_moves(p)[0].is_capture]


def test_colour_symmetry(random_positions: Callable[..., list[Position]]) -> None:
    evaluator = default_evaluator()
    positions = quiet_positions(random_positions, 600, 11)
    assert len(positions) > 200
    for p in positions:
        assert evaluator.evaluate(*sides(p)) == evaluator.evaluate(*sides(mirrored(p))), p.fen()


# The last weights need more than one 30-bit digit per packed half: the packing widens.
@pytest.mark.parametrize("weights", [DEFAULT_WEIGHTS, None,
                                     {"man_mg": 90000, "king_eg": -70000, "row3_eg": 5000, "edge_mg": -3}])
def test_linear_in_features(random_positions: Callable[..., list[Position]],
                            weights: dict[str, int] | None) -> None:
    evaluator = Evaluator(dict(weights)) if weights else default_evaluator()
    checked = 0
    for p in quiet_positions(random_positions, 600, 12):
        if (p.white | p.black).bit_count() <= 6:
            continue  # endgame rules override the linear score there
        value = evaluator.evaluate(*sides(p))
        dot = sum(evaluator.weights[name] * x for name, x in zip(FEATURES, features(*sides(p))))
        assert abs(value - dot) <= 1, p.fen()
        checked += 1
    assert checked > 100


def test_weights_file_round_trip(tmp_path: Path) -> None:
    weights = dict(DEFAULT_WEIGHTS, king_mg=123)
    path = tmp_path / "w.json"
    path.write_text(json.dumps(weights))
    assert Evaluator.from_file(str(path)).weights["king_mg"] == 123
    path.write_text(json.dumps({"weights": {"king_eg": 321}}))
    loaded = Evaluator.from_file(str(path)).weights
    assert loaded["king_eg"] == 321 and loaded["man_mg"] == DEFAULT_WEIGHTS["man_mg"]


def test_unknown_weight_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown evaluation weights: bogus"):
        Evaluator({"bogus": 1.0})


def test_shipped_weights_are_complete_and_sensible() -> None:
    data = shipped_weights()
    assert set(data) == set(FEATURES)
    for weights in (DEFAULT_WEIGHTS, data):
        # A king is worth well under two men early and more later.
        assert weights["man_mg"] < weights["king_mg"] < 2 * weights["man_mg"]
        assert weights["king_eg"] > weights["king_mg"]


def test_material_and_kings_by_phase() -> None:
    evaluator = Evaluator()
    up_a_man = Position.from_fen("W:W21-32:B1-11")
    assert evaluator.evaluate(*sides(up_a_man)) > 60
    # Trading a man for a king is good, more so in the endgame.
    early = Position.from_fen("W:WK1,22-32:B5-12,13,14,15,16")
    late = Position.from_fen("W:WK1,30:B5,6")
    early_men = Position.from_fen("W:W21,22-32:B5-12,13,14,15,16")
    late_men = Position.from_fen("W:W21,30:B5,6")
    gain_early = evaluator.evaluate(*sides(early)) - evaluator.evaluate(*sides(early_men))
    gain_late = evaluator.evaluate(*sides(late)) - evaluator.evaluate(*sides(late_men))
    assert 0 < gain_early < gain_late


def test_runaway_man_counts() -> None:
    evaluator = Evaluator()
    runaway = Position.from_fen("B:W6:B12")   # 6 promotes next move on 2 or 3
    blocked = Position.from_fen("B:W6:B12,K2,K3")
    assert features(*sides(runaway))[FEATURES.index("runaway1")] == -1.0  # Black's view
    assert features(*sides(blocked))[FEATURES.index("runaway1")] == 0.0
    assert evaluator.evaluate(*sides(runaway)) < 0


def test_endgame_knowledge() -> None:
    evaluator = Evaluator()
    assert evaluator.evaluate(*sides(Position.from_fen("W:WK10:BK27"))) == 0
    assert evaluator.evaluate(*sides(Position.from_fen("W:WK10,K19:BK27"))) > KNOWN_WIN - 400
    assert evaluator.evaluate(*sides(Position.from_fen("B:WK10,K19:BK27"))) < -(KNOWN_WIN - 400)
    assert evaluator.evaluate(*sides(Position.from_fen("B:WK10,K19,K20:B9"))) < -(KNOWN_WIN - 400)


def test_no_moves_is_reported() -> None:
    # White's man on 29 cannot step (25, 26 taken) nor jump (25 is on the edge, 22 taken).
    p = Position.from_squares([29], [], [25, 26, 21, 22], [], True)
    assert p.count_moves() == 0
    assert Evaluator().evaluate(*sides(p)) == NO_MOVES
