"""The GUI's game review in a real browser (``-m browser``): a 101-ply game of ``pedina match``
loaded in the page and reviewed at depth 6 shows the marks and the summaries of ``pedina
analyze --annotate`` at depth 6, fills the graph, shows a mark's better line, and gives the
same annotated PDN; a review shows its progress and stops with a new game. The server and the
browser are those of :mod:`test_gui_browser`; screenshots go to its ``SHOTS`` folder."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from test_gui_browser import (PEDINA, RANDOM, SCREENS, WAIT, browser, follower, page,  # noqa: F401
                              pedina_log, server, shot, start_game, wait_board)
from test_review import MATCH_GAME, REVIEW_DEPTH

pytestmark = pytest.mark.browser

#: How each NAG is written in the move list.
SYMBOLS = {6: "?!", 2: "?", 4: "??"}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], str]]:
    """``pedina analyze --annotate --json`` of the match game at the review's depth: its game's
    JSON and its annotated PDN."""
    out = tmp_path_factory.mktemp("analyze") / "annotated.pdn"
    done = subprocess.run([sys.executable, "-m", "pedina.protocol.cli", "analyze", str(MATCH_GAME), "--depth",
                           str(REVIEW_DEPTH), "--no-book", "--json", "--annotate", str(out)],
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    (game,) = json.loads(done.stdout)["games"]
    yield game, out.read_text()


def review(page: Page, strength: str) -> None:
    page.select_option("#analysis-engine", PEDINA)
    page.select_option("#review-strength", strength)
    page.click("#btn-review")


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_a_match_game_reviewed_in_the_page_is_marked_as_analyze_marks_it(
        page: Page, analysed: tuple[dict[str, Any], str], tmp_path: Path) -> None:
    game, annotated = analysed
    page.set_input_files("#file-pdn", str(MATCH_GAME))
    wait_board(page, "b.cursor === '101'")
    review(page, f"depth:{REVIEW_DEPTH}")
    page.wait_for_selector('#review-panel[data-running="0"][data-done="102"]', timeout=WAIT * 4)
    shot(page, "review-done.png")

    # The marks in the move list: the same moves, the same marks.
    marks = page.locator("#move-list button.mv .nag").evaluate_all(
        "nodes => nodes.map(n => [Number(n.parentElement.dataset.ply) - 1, n.textContent])")
    expected = [[mark["ply"], SYMBOLS[mark["nag"]]] for mark in game["summary"]["marks"]]
    assert marks == expected and len(marks) > 10
    # The summaries: the same counts and average losses.
    rows = page.locator("#review-summary tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    for row, side in zip(rows, ("white", "black")):
        summary = game["summary"][side]
        assert row[1:] == [str(summary["inaccuracies"]), str(summary["mistakes"]), str(summary["blunders"]),
                           f"{summary['average_loss']:.2f} men"], row
    assert rows[0][0] == "White (Full)" and rows[1][0] == "Black (Skill8)"
    # Every position's score is in the graph, and every mark on it.
    assert page.get_attribute("#graph", "data-points") == "102"
    assert page.locator("#graph circle[data-mark]").count() == len(expected)

    # A mark shows the position before the move, with the engine's better move drawn and its line.
    blunder = next(mark for mark in game["summary"]["marks"] if mark["nag"] == 4)
    ply = blunder["ply"]
    page.click(f'#review-marks button[data-mark="{ply}"]')
    wait_board(page, f"b.cursor === '{ply}'")
    best = game["positions"][ply]["lines"][0]
    assert page.get_attribute("#board .arrow", "data-arrow") is not None
    better = page.inner_text("#review-better")
    assert "??" in better and best["pv"][0] in better.split("Better:")[1].split(), better
    shot(page, "review-mark.png")

    # The annotated PDN downloaded is analyze's (the tags in the page's order).
    with page.expect_download() as saving:
        page.click("#btn-review-pdn")
    saved = tmp_path / "review.pdn"
    saving.value.save_as(saved)
    page_tags, page_moves = saved.read_text().split("\n\n", 1)
    tags, moves = annotated.split("\n\n", 1)
    assert sorted(page_tags.splitlines()) == sorted(tags.splitlines()) and page_moves == moves


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_a_review_shows_its_progress_and_a_new_game_stops_it(page: Page) -> None:
    # no game, no review; during a game against an engine, no review either
    assert page.is_disabled("#btn-review")
    start_game(page, RANDOM, "white")
    assert page.is_disabled("#btn-review")
    page.click("#btn-new")
    page.check('input[name="new-mode"][value="free"]')
    page.click("#new-start")
    wait_board(page, "b.mode === 'free' && b.cursor === '0'")
    page.set_input_files("#file-pdn", str(MATCH_GAME))
    wait_board(page, "b.cursor === '101'")
    review(page, "time:1")
    page.wait_for_selector('#review-panel[data-running="1"]', timeout=WAIT)
    page.wait_for_function("() => Number(document.getElementById('review-panel').dataset.done) >= 2", timeout=WAIT)
    assert page.inner_text("#btn-review") == "Stop the review"
    shot(page, "review-progress.png")
    # going through the game leaves the review running
    page.keyboard.press("Home")
    wait_board(page, "b.cursor === '0'")
    assert page.get_attribute("#review-panel", "data-running") == "1"
    page.click("#btn-new")
    page.check('input[name="new-mode"][value="free"]')
    page.click("#new-start")
    wait_board(page, "b.cursor === '0' && b.position.length > 0")
    page.wait_for_selector('#review-panel[data-done=""]', timeout=WAIT)
    assert page.is_hidden("#review-progress-row") and page.locator("#move-list .nag").count() == 0
    assert page.inner_text("#btn-review") == "Review the game" and page.is_disabled("#btn-review")
