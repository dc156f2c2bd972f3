"""The move list shows a loaded game's variations, with their comments, and saves them again (``-m browser``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page

from pedina import read_game
from test_gui_browser import (SCREENS, WAIT, browser, follower, page,  # noqa: F401
                              pedina_log, server, shot, wait_board, wait_connected)
from test_pdn import VARIATIONS

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_the_move_list_shows_each_variation_under_the_move_it_replaces(page: Page, tmp_path: Path) -> None:
    # On 7585fe0 the page showed the main line only: the variations were lost on load and on save.
    path = tmp_path / "lines.pdn"
    path.write_text(VARIATIONS, encoding="utf-8")
    page.set_input_files("#file-pdn", str(path))
    wait_board(page, "b.cursor === '3'")
    page.wait_for_selector("#move-list .variation", timeout=WAIT)
    assert shown_variations(page) == [
        "(1. 21-17 instead 10-14 (1... 9-13 deeper 2. 22-18 deepest) 2. 24-20)",
        "(1... 12-16 black 2. 23-19)", "(2. 21-17)", "(2. 24-20 a second one)"]
    assert page.locator("#move-list .variation .comment").count() == 5
    # Each variation comes after the move it replaces: White's first move, then Black's (on a row of its own).
    order = page.locator("#move-list > *").evaluate_all(
        "nodes => nodes.map(n => n.classList.contains('variation') ? 'v' : n.textContent.trim()).filter(t => t)")
    assert order[:8] == ["1.", "22-18", "v", "1.", "…", "10-14", "v", "2."], order
    shot(page, "variations-move-list.png")

    with page.expect_download() as download:
        page.click("#btn-save")
    saved = read_game(Path(download.value.path()).read_text(encoding="utf-8"))
    loaded = read_game(VARIATIONS)
    assert saved.variations == loaded.variations and saved.comments == loaded.comments

    # A reload restores the game with its variations (the page keeps them with the moves).
    shown = shown_variations(page)
    page.reload()
    wait_connected(page)
    wait_board(page, "b.cursor === '3'")
    page.wait_for_selector("#move-list .variation", timeout=WAIT)
    assert shown_variations(page) == shown


def shown_variations(page: Page) -> list[str]:
    """The variations of the move list, as their text reads (spaces made single)."""
    return [" ".join(line.split()) for line in page.locator("#move-list .variation").all_inner_texts()]
