"""Strength, in small: deeper search must beat shallower search over paired openings.

The full-size matches (100+ games, 0.1 s per move) are run with
``scripts/strength.py``; this is the reduced check CI can afford.
"""

from __future__ import annotations

import pytest

from conftest import CI
from pedina.settings import EngineSettings
from pedina.evaluate import Evaluator
from pedina.protocol.match.game import TimeControl
from pedina.protocol.match.inprocess import Player, play_searcher_game, play_searcher_match
from pedina.protocol.match.schedule import opening_lines
from pedina.search import Searcher
from pedina.session import Session


def test_openings_are_the_3_ply_tree() -> None:
    every = opening_lines(3)
    assert len(every) == 302  # perft(3) of the start position
    assert len({tuple(m.hub() for m in line) for line in every}) == 302


def test_a_game_ends_by_the_rules_or_the_ply_cap() -> None:
    white = Player(Session(EngineSettings(hash_mb=4, egdb_path="")), TimeControl(depth=1))
    black = Player(Session(EngineSettings(hash_mb=4, egdb_path="")), TimeControl(depth=1))
    record = play_searcher_game(white, black, opening_lines(3)[0], max_plies=40)
    assert record.result in ("1-0", "0-1", "1/2-1/2") and record.failure is None
    board = record.board
    assert board.outcome() is not None or (len(board.moves) == 40 and record.termination == "adjudication: maximum length")


@pytest.mark.slow
def test_depth_4_beats_depth_1() -> None:
    pairs = 6 if CI else 12
    every = opening_lines(3)
    chosen = [every[i * len(every) // pairs] for i in range(pairs)]
    strong = Player(Session(EngineSettings(hash_mb=8, egdb_path="", book=False)), TimeControl(depth=4))
    weak = Player(Session(EngineSettings(hash_mb=8, egdb_path="", book=False)), TimeControl(depth=1))
    result = play_searcher_match(strong, weak, chosen, max_plies=160)
    assert result.games == 2 * pairs
    assert result.score >= 0.8, result.summary()


@pytest.mark.slow
def test_tuned_weights_score_at_least_even_against_hand_set() -> None:
    pairs = 6 if CI else 12
    every = opening_lines(3)
    chosen = [every[i * len(every) // pairs + 1] for i in range(pairs)]
    tuned = Player(Session(EngineSettings(hash_mb=8, egdb_path="", book=False)), TimeControl(depth=3))
    hand_set = Player(Session(EngineSettings(hash_mb=8, egdb_path="", book=False), searcher_factory=lambda settings: Searcher(settings, evaluator=Evaluator())), TimeControl(depth=3))
    result = play_searcher_match(tuned, hand_set, chosen, max_plies=160)
    assert result.score >= 0.5, result.summary()
