"""Evaluation: symmetry, linearity in the weights, patterns, weight files, endgame knowledge."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from pedina import Position, legal_moves
from pedina.evaluate import (
    DEFAULT_WEIGHTS,
    FEATURES,
    PATTERN_CONFIGS,
    PATTERN_REGIONS,
    PATTERN_WEIGHTS,
    Evaluator,
    decode_patterns,
    default_evaluator,
    encode_patterns,
    features,
    pattern_indices,
    shipped_patterns,
    shipped_weights,
)
from pedina.scores import KNOWN_WIN, NO_MOVES
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


def random_patterns(seed: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(-300, 300) for _ in range(PATTERN_WEIGHTS)]


def test_colour_symmetry(random_positions: Callable[..., list[Position]]) -> None:
    evaluators = [default_evaluator(), Evaluator(patterns=random_patterns(3))]
    positions = quiet_positions(random_positions, 600, 11)
    assert len(positions) > 200
    for p in positions:
        assert pattern_indices(*sides(p)) == pattern_indices(*sides(mirrored(p))), p.fen()
        for evaluator in evaluators:
            assert evaluator.evaluate(*sides(p)) == evaluator.evaluate(*sides(mirrored(p))), p.fen()


# The third weights need more than one 30-bit digit per packed half: the packing widens.
@pytest.mark.parametrize("weights, patterns", [
    (DEFAULT_WEIGHTS, None), (None, None),
    ({"man_mg": 90000, "king_eg": -70000, "row3_eg": 5000, "edge_mg": -3}, None),
    (DEFAULT_WEIGHTS, random_patterns(4)),
])
def test_linear_in_features_and_patterns(random_positions: Callable[..., list[Position]],
                                         weights: dict[str, int] | None, patterns: list[int] | None) -> None:
    evaluator = Evaluator(dict(weights), patterns) if weights else default_evaluator()
    checked = 0
    for p in quiet_positions(random_positions, 600, 12):
        if (p.white | p.black).bit_count() <= 6:
            continue  # endgame rules override the linear score there
        value = evaluator.evaluate(*sides(p))
        dot = sum(evaluator.weights[name] * x for name, x in zip(FEATURES, features(*sides(p))))
        if evaluator.patterns:
            dot += sum(evaluator.patterns[i] for i in pattern_indices(*sides(p)))
        assert abs(value - dot) <= 1, p.fen()
        checked += 1
    assert checked > 100


def reference_pattern_indices(p: Position) -> list[int]:
    """The pattern indices the slow way: squares by row and column on the board seen by
    the side to move, blocks of 4 rows by 4 columns, digits in square number order."""
    def seen(bits: int) -> set[int]:
        return {n if p.white_to_move else 33 - n for n in squares_of(bits & ~p.kings)}
    us, them = (seen(p.white), seen(p.black)) if p.white_to_move else (seen(p.black), seen(p.white))

    def place(n: int) -> tuple[int, int]:
        row, i = divmod(n - 1, 4)
        return row, 2 * i + (row & 1)
    out = []
    for region, (top, left) in enumerate((top, left) for top in (0, 2, 4) for left in (0, 2, 4)):
        block = [n for n in range(1, 33)
                 if top <= place(n)[0] < top + 4 and left <= place(n)[1] < left + 4]
        assert len(block) == 8
        config = sum(3 ** k * (1 if n in us else 2 if n in them else 0) for k, n in enumerate(block))
        out.append(region * PATTERN_CONFIGS + config)
    return out


def test_pattern_indices_match_the_reference(random_positions: Callable[..., list[Position]]) -> None:
    positions = random_positions(600, 13)
    seen_digits: set[tuple[int, int, int]] = set()
    for p in positions:
        indices = pattern_indices(*sides(p))
        assert indices == reference_pattern_indices(p), p.fen()
        for region, index in enumerate(indices):
            config = index - region * PATTERN_CONFIGS
            assert 0 <= config < PATTERN_CONFIGS
            seen_digits.update((region, k, config // 3 ** k % 3) for k in range(8))
    # Every digit of every region took all three values (no square is left out), but
    # for a man on its promotion row: the top blocks' first two squares are never the
    # mover's man, the bottom blocks' last two never the opponent's.
    never = {(region, k, 1) for region in (0, 1, 2) for k in (0, 1)}
    never |= {(region, k, 2) for region in (6, 7, 8) for k in (6, 7)}
    assert seen_digits == {(region, k, digit) for region in range(PATTERN_REGIONS)
                           for k in range(8) for digit in range(3)} - never
    assert any(p.kings and not p.white_to_move for p in positions)


def test_shipped_patterns_load_and_are_used(random_positions: Callable[..., list[Position]]) -> None:
    patterns = shipped_patterns()
    assert len(patterns) == PATTERN_WEIGHTS
    assert sum(1 for value in patterns if value) > 1000
    evaluator = default_evaluator()
    assert evaluator.patterns == patterns
    linear = Evaluator(shipped_weights())
    positions = [p for p in quiet_positions(random_positions, 300, 14) if (p.white | p.black).bit_count() > 6]
    differ = sum(1 for p in positions if evaluator.evaluate(*sides(p)) != linear.evaluate(*sides(p)))
    assert differ > len(positions) // 2


def test_pattern_file_round_trip_and_errors() -> None:
    patterns = random_patterns(5)
    patterns[0], patterns[-1] = -32768, 32767
    assert decode_patterns(encode_patterns(patterns), "x") == patterns
    with pytest.raises(ValueError, match="x: 3 pattern weights"):
        decode_patterns(encode_patterns([1, 2, 3]), "x")
    with pytest.raises(ValueError, match="x: not a pattern weights file"):
        decode_patterns(b"not compressed", "x")
    with pytest.raises(ValueError, match=f"expected {PATTERN_WEIGHTS} pattern weights, not 2"):
        Evaluator(patterns=[1, 2])


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
