"""The analysis's engine lines in a real browser (``-m browser``): a click on a move of a line shows
the line up to it on the board, marked as a preview and left with Esc or a click on the board, the
game untouched; Play puts the line into the game, and "Play up to here" the line up to the move
shown. The server and the browser are those of :mod:`test_gui_browser`; screenshots go to its
``SHOTS`` folder as ``lines-*.png``."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page

from pedina import Board, Position
from test_gui_browser import (PEDINA, SCREENS, WAIT, board, browser, click, follower, page,  # noqa: F401
                              pedina_log, piece_at, server, shot, wait_board)

pytestmark = pytest.mark.browser

#: The lines asked for, and the fewest moves each must show before the test goes on.
LINES, MOVES = 2, 3


def analyse(page: Page) -> None:
    """Start Pedina's analysis of the position shown and wait for its lines to be long enough."""
    page.select_option("#analysis-engine", PEDINA)
    page.select_option("#analysis-lines", str(LINES))
    page.click("#btn-analyse")
    page.wait_for_function(
        f"""() => {{ const lines = document.querySelectorAll('#analysis-lines-list li');
                     return lines.length === {LINES} && [...lines].every(
                         (line) => line.querySelectorAll('button.pv-move').length >= {MOVES}); }}""", timeout=WAIT)


def stop(page: Page) -> None:
    """Stop the analysis; its last lines stay shown."""
    page.click("#btn-analyse")
    page.wait_for_function("() => document.getElementById('btn-analyse').textContent === 'Analyse'", timeout=WAIT)
    assert page.locator("#analysis-lines-list li").count() == LINES


def line_moves(page: Page, line: int) -> list[str]:
    """The Hub texts of line ``line`` (0 = the best) as shown."""
    hubs: list[str] = page.locator(f"#analysis-lines-list li >> nth={line}").locator("button.pv-move").evaluate_all(
        "nodes => nodes.map(n => n.dataset.hub)")
    return hubs


def move_button(page: Page, line: int, move: int) -> str:
    return f"#analysis-lines-list li:nth-child({line + 1}) button.pv-move >> nth={move}"


def game_moves(page: Page) -> list[str]:
    """The game's moves (Hub texts) as the page keeps them from the server's state."""
    moves: list[str] = page.evaluate("() => JSON.parse(localStorage.getItem('pedina-gui-game')).moves")
    return moves


def assert_board_shows(page: Page, hub: str) -> None:
    """The board's squares hold the pieces of the Hub position ``hub``."""
    drawn = [piece_at(page, square) or "e" for square in range(1, 33)]
    assert "".join(drawn) == hub[1:]


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_an_engine_lines_moves_are_previewed_and_the_line_played(page: Page) -> None:
    start = Position.start().hub()
    analyse(page)
    # A click on the third move of the best line, while the analysis runs: the board shows the line
    # up to it (from the position shown), the game does not move.
    page.click(move_button(page, 0, 2))
    page.wait_for_selector("#preview-banner:visible", timeout=WAIT)
    assert "Preview of the engine line after 2. " in page.inner_text("#preview-banner")
    previewed = board(page, "preview").split()
    assert len(previewed) == 3
    line = Board()
    for hub in previewed:
        line.push(line.parse_move(hub))
    assert board(page, "shown") == line.position.hub()
    assert_board_shows(page, line.position.hub())
    assert board(page, "position") == start and board(page, "cursor") == "0"
    assert "preview" in (page.get_attribute("#board", "class") or "")
    assert page.locator("#move-list button.mv").count() == 0
    shot(page, "lines-preview.png")
    # Esc: the game again.
    page.keyboard.press("Escape")
    page.wait_for_selector("#preview-banner", state="hidden", timeout=WAIT)
    assert board(page, "preview") == "" and board(page, "shown") == start
    assert_board_shows(page, start)

    stop(page)
    best, second = line_moves(page, 0), line_moves(page, 1)
    assert len(best) >= MOVES and len(second) >= MOVES and best[0] != second[0]
    # The keyboard reaches a move too; a click on the board goes back to the game.
    page.focus(move_button(page, 1, 1))
    page.keyboard.press("Enter")
    wait_board(page, f"b.preview === {json.dumps(' '.join(second[:2]))}")
    assert page.locator("#analysis-lines-list button.pv-move.current").count() == 1
    click(page, 32)
    page.wait_for_selector("#preview-banner", state="hidden", timeout=WAIT)
    assert board(page, "cursor") == "0" and game_moves(page) == []

    # Play: the best line becomes the game.
    page.click("#analysis-lines-list li:nth-child(1) button.play-line")
    wait_board(page, f"b.cursor === '{len(best)}'")
    assert page.locator("#move-list button.mv").count() == len(best)
    assert game_moves(page) == best
    assert board(page, "preview") == "" and board(page, "mode") == "free"
    shot(page, "lines-played.png")

    # From the preview, "Play up to here": the line of the new last position, up to its second move.
    analyse(page)
    stop(page)
    following = line_moves(page, 0)
    page.click(move_button(page, 0, 1))
    page.wait_for_selector("#preview-banner:visible", timeout=WAIT)
    shot(page, "lines-preview-after.png")
    page.click("#preview-play")
    wait_board(page, f"b.cursor === '{len(best) + 2}'")
    assert game_moves(page) == best + following[:2]
    assert page.locator("#move-list button.mv").count() == len(best) + 2
    assert not page.is_visible("#preview-banner")
    shot(page, "lines-played-up-to.png")
