"""The public API: one namespace, documented names, the board drawing, reprs, PDN move text."""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import pedina
from pedina import Board, IllegalMoveError, Move, Outcome, Position, Termination

README = Path(__file__).parent.parent / "README.md"

PUBLIC = {
    "AmbiguousMoveError", "Answer", "Board", "EngineSettings", "IllegalMoveError", "Info", "Limits", "Move", "MoveError",
    "Outcome",
    "PdnError", "PdnGame", "Position", "PositionError", "Result", "START_FEN", "START_HUB", "Searcher",
    "Session", "Termination", "build_flavour", "format_pdn", "legal_moves", "parse_move", "perft", "read_game",
    "read_games", "write_game",
}


def test_all_lists_the_public_api() -> None:
    assert set(pedina.__all__) == PUBLIC and len(pedina.__all__) == len(PUBLIC)
    for name in pedina.__all__:
        assert getattr(pedina, name) is not None, name
    # Everything public in the namespace is listed (modules and the version aside).
    listed = {name for name, value in vars(pedina).items()
              if not name.startswith("_") and not inspect.ismodule(value)}
    assert listed == PUBLIC


def _source_docstring(value: object) -> str | None:
    """The docstring written in the source, for a compiled object whose ``__doc__`` mypyc dropped
    (or filled in): its module's ``.py`` file is installed beside the compiled one."""
    parts = str(getattr(value, "__module__", "")).split(".")
    if parts[0] != "pedina":
        return None
    source = Path(pedina.__file__).parent.joinpath(*parts[1:]).with_suffix(".py")
    if not source.exists():
        return None
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == getattr(value, "__name__", None):
            return ast.get_docstring(node)
    return None


def _documented(value: object) -> bool:
    return bool(_source_docstring(value) or inspect.getdoc(value))


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name in pedina.__all__:
        value = getattr(pedina, name)
        if isinstance(value, str):  # START_FEN, START_HUB: documented by their ``#:`` comments
            continue
        if not _documented(value):
            missing.append(name)
        if inspect.isclass(value):
            for member, attribute in vars(value).items():
                if member.startswith("_"):
                    continue
                if isinstance(attribute, (classmethod, staticmethod)):
                    attribute = attribute.__func__
                if (inspect.isfunction(attribute) or isinstance(attribute, property)) and not attribute.__doc__:
                    missing.append(f"{name}.{member}")
    assert missing == []


def test_the_library_never_imports_the_adapters() -> None:
    code = "import sys, pedina; print(sorted(m for m in sys.modules if m.startswith('pedina.protocol')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    package = Path(pedina.__file__).parent
    sources = sorted(package.glob("*.py"))
    assert len(sources) > 5
    for source in sources:
        assert "pedina.protocol" not in source.read_text(encoding="utf-8"), source.name


def _cells(diagram: str) -> dict[tuple[int, int], str]:
    """(row from the top, column from the left) -> the 6-character cell of each drawn square."""
    lines = diagram.splitlines()
    assert len(lines) == 12
    return {(row, column): lines[2 + row][4 + 6 * column:10 + 6 * column]
            for row in range(8) for column in range(8)}


def test_board_prints_as_the_diagram_with_fid_numbers() -> None:
    board = Board()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print(board)
    assert out.getvalue() == board.position.diagram() + "\n" == str(board.position) + "\n"
    lines = out.getvalue().splitlines()
    assert lines[0].split() == list("abcdefgh") == lines[-1].split()
    assert [line[:3] for line in lines[2:10]] == [f" {rank} " for rank in range(8, 0, -1)]
    cells = _cells(str(board))
    for square in range(1, 33):
        # The rule book's numbering: row by row from the top, dark squares left to right;
        # even rows (counted from 0) start with a dark square, odd rows with a light one.
        row, index = divmod(square - 1, 4)
        column = 2 * index + row % 2
        piece = "b" if square <= 12 else "w" if square >= 21 else "."
        assert cells[row, column] == f" {piece}{square:>3} ", (square, cells[row, column])
    light = [cell for (row, column), cell in cells.items() if (row + column) % 2]
    assert len(light) == 32 and set(light) == {" " * 6}
    assert cells[0, 0] == " b  1 " and cells[7, 7] == " w 32 "


def test_diagram_flipped_marked_and_kings() -> None:
    position = Position.from_fen("W:WK1,22:B18,K29")
    cells = _cells(position.diagram(marked=(22, 18)))
    assert (cells[0, 0], cells[4, 2], cells[5, 3], cells[7, 1]) == (" W  1 ", "[b 18]", "[w 22]", " B 29 ")
    assert sum(cell.startswith("[") for cell in cells.values()) == 2
    flipped = position.diagram(flipped=True)
    assert flipped.splitlines()[0].split() == list("hgfedcba")
    turned = _cells(flipped)
    # Seen from Black the board is turned round: each square changes corner.
    assert all(turned[7 - row, 7 - column] == cell.replace("[", " ").replace("]", " ")
               for (row, column), cell in cells.items())
    assert turned[0, 0] == " . 32 " and turned[7, 7] == " W  1 "


def test_reprs_give_the_fen_and_evaluate_back() -> None:
    board = Board()
    assert repr(board) == f"Board({pedina.START_FEN!r})"
    board.push_text("23-19")
    board.push_text("10-14")
    fen = board.position.fen()
    assert repr(board) == f"Board({fen!r})" and repr(board.position) == f"Position.from_fen({fen!r})"
    assert eval(repr(board), {"Board": Board}).position == board.position
    assert eval(repr(board.position), {"Position": Position}) == board.position
    for move in board.legal_moves():
        assert eval(repr(move), {"Move": Move}) == move


def test_outcome_is_exported_and_documented() -> None:
    board = Board("B:W31,32:B28")
    outcome = board.outcome()
    assert outcome == Outcome(Termination.NO_MOVES, True) and outcome.result() == "1-0"
    assert {t.value for t in Termination} == {"normal", "repetition", "40-move rule"}
    assert [str(t) for t in Termination] == ["no moves", "repetition", "40-move rule"]
    assert "winner" in (_source_docstring(Outcome) or "") and "PDN" in (_source_docstring(Termination) or "")


def test_board_pdn_text() -> None:
    diamond = Board("W:W26:B13,14,21,22")
    assert sorted(diamond.pdn(move) for move in diamond.legal_moves()) == ["26x17x10", "26x19x10"]
    ring = Board("W:WK26:B13,14,21,22")
    (legal,) = ring.legal_moves()
    assert ring.pdn(Move(26, tuple(reversed(legal.path[:-1])) + (26,))) == "26x26"
    board = Board()
    assert board.pdn(Move(23, (19,))) == "23-19"
    board.push_text("23-19")
    board.push_text("12-16")
    board.push_text("19-15")
    assert [board.pdn(m) for m in board.legal_moves()] == ["11x20"]
    with pytest.raises(IllegalMoveError, match=r"illegal move 9-13 in position B:"):
        board.pdn(Move(9, (13,)))  # a step when the capture is compulsory


def test_moves_show_no_move_generator_internals() -> None:
    move = Board().legal_moves()[0]
    public = {name for name in dir(move) if not name.startswith("_")}
    assert public == {"captured", "end", "full_path", "hub", "is_capture", "path", "start"}
    for move in Board("W:WK26:B13,14,21,22").legal_moves() + Board().legal_moves():
        # Square numbers, never bitboard bits.
        assert all(1 <= square <= 32 for square in (move.start, move.end, *move.path, *move.captured))
    assert not [name for name in dir(Position) if "raw" in name and not name.startswith("_")]


def test_searcher_and_limits_from_the_namespace() -> None:
    board = Board()
    result = pedina.Searcher(pedina.EngineSettings(hash_mb=1, egdb_path="")).search(board, pedina.Limits(depth=3))
    assert isinstance(result, pedina.Result) and result.best in board.legal_moves()
    infos: list[pedina.Info] = []
    pedina.Searcher(pedina.EngineSettings(hash_mb=1, egdb_path="")).search(board, pedina.Limits(depth=2), infos.append)
    assert [info.depth for info in infos] == [1, 2]


def test_readme_library_example_runs() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("As a library"):text.index("## Layout")]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert "import pedina" in code and "pedina.Board()" in code and "board.outcome()" in code
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})
    printed = out.getvalue().splitlines()
    assert printed[:12] == str(Board()).replace("w 23", ". 23").replace(". 19", "w 19").splitlines()
    assert printed[-2].startswith("Board('W:") and printed[-1] == "None"
