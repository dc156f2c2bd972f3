"""Shared fixtures: reproducible random positions and games for the rules tests, and a file
run as a module of its own (the scripts, an engine module as plain Python)."""

from __future__ import annotations

import importlib.util
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from pedina import Board, Position

#: CI runs the slow tests at a reduced size (see the developers' guide).
CI = os.environ.get("PEDINA_CI") == "1"


def random_placement(rng: random.Random, king_share: float | None = None,
                     white_to_move: bool | None = None) -> Position:
    """A random valid placement: 1-12 pieces a side, each a king with probability
    ``king_share`` (random per position when ``None``); a man that would stand on
    its own promotion row is made a king."""
    share = rng.uniform(0.0, 0.6) if king_share is None else king_share
    squares = rng.sample(range(1, 33), rng.randint(1, 12) + rng.randint(1, 12))
    split = rng.randint(1, len(squares) - 1)
    split = max(len(squares) - 12, min(12, split))
    white, black = squares[:split], squares[split:]
    white_kings = [s for s in white if s <= 4 or rng.random() < share]
    black_kings = [s for s in black if s >= 29 or rng.random() < share]
    return Position.from_squares(
        [s for s in white if s not in white_kings], white_kings,
        [s for s in black if s not in black_kings], black_kings,
        rng.random() < 0.5 if white_to_move is None else white_to_move)


def random_game(rng: random.Random, start: Position | None = None, max_plies: int = 200) -> Board:
    """A game of uniformly random legal moves, until it ends or ``max_plies``."""
    board = Board(start)
    while len(board.moves) < max_plies and not board.is_game_over():
        board.push(rng.choice(board.legal_moves()))
    return board


def _positions(count: int, seed: int, kind: str = "mixed") -> list[Position]:
    """``count`` reproducible positions.

    ``play``: every position of random games from the start; ``placement``:
    random placements; ``kings``: placements where most pieces are kings (the
    capture-precedence cases); ``mixed``: a third of each.
    """
    rng = random.Random(seed)
    if kind == "mixed":
        third = count // 3
        return (_positions(third, seed + 1, "play") + _positions(third, seed + 2, "placement")
                + _positions(count - 2 * third, seed + 3, "kings"))
    out: list[Position] = []
    while len(out) < count:
        if kind == "play":
            out.extend(random_game(rng).positions)
        elif kind == "placement":
            out.append(random_placement(rng))
        elif kind == "kings":
            out.append(random_placement(rng, king_share=rng.uniform(0.5, 1.0)))
        else:
            raise ValueError(kind)
    return out[:count]


@pytest.fixture
def random_positions() -> Callable[..., list[Position]]:
    """``random_positions(count, seed, kind="mixed")`` -> list of positions."""
    return _positions


@pytest.fixture
def random_games() -> Callable[..., list[Board]]:
    """``random_games(count, seed, start=None, max_plies=200)`` -> list of finished or long games."""
    def make(count: int, seed: int, start: Position | None = None, max_plies: int = 200) -> list[Board]:
        rng = random.Random(seed)
        return [random_game(rng, start, max_plies) for _ in range(count)]
    return make


@pytest.fixture
def load_module(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path, str], ModuleType]:
    """Run the Python file at a path as a new module of the given name, in ``sys.modules`` while
    the test runs (a dataclass of the module looks it up there)."""
    def load(path: Path, name: str) -> ModuleType:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        return module
    return load
