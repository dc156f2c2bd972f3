"""``pedina gui`` in a real browser: Debian's chromium driven by Playwright (``-m browser``).

One ``pedina gui`` server for the module, with Pedina (every process of it logging its Hub lines
to one file), the random fixture engine, a fixture engine that crashes and a running ``pedina dxp``
(a DXP engine); every test opens a fresh page (a fresh game on the server). Screenshots
go to ``$PEDINA_GUI_SHOTS`` (default ``/tmp/pedina-gui-shots``).
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Dialog, FloatRect, Page, sync_playwright

import pedina
from pedina import Position, legal_moves, read_game
from test_dxp import Server, start_server
from timing import HANG, starved, wait_until

pytestmark = pytest.mark.browser

FIXTURE = str(Path(__file__).parent / "fixtures" / "random_engine.py")
CHROMIUM = os.environ.get("PEDINA_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(os.environ.get("PEDINA_GUI_SHOTS", "/tmp/pedina-gui-shots"))
#: The engines of the server, by their index in the page's lists.
PEDINA, RANDOM, CRASHING, DXP = "0", "1", "2", "3"
#: Milliseconds to wait for the page to show what the server sent (a safety net for a hang).
WAIT = int(HANG * 1000)


@pytest.fixture(scope="module")
def follower(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``pedina dxp`` on a free port, playing 0-minute games at 0.05 s a move."""
    running = start_server(tmp_path_factory.mktemp("dxp") / "dxp.log", "--move-time", "0.05", "--hash", "16")
    yield running
    if running.process.poll() is None:
        running.stop()


@pytest.fixture(scope="module")
def pedina_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file where the server's Pedina processes log the Hub lines they read and write."""
    return tmp_path_factory.mktemp("pedina") / "hub.log"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, follower: Server, pedina_log: Path) -> Iterator[str]:
    """The address (with its token) of a ``pedina gui`` server."""
    engine = f"{sys.executable} {FIXTURE}"
    log = tmp_path_factory.mktemp("gui") / "stderr.txt"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "pedina.protocol.cli", "gui", "--no-browser",
             "--engine", f"cmd={sys.executable} -m pedina.protocol.cli hub --log {pedina_log}", "name=Pedina",
             "--engine", f"cmd={engine}", "name=Random", "option.seed=4",
             "--engine", f"cmd={engine} threads", "name=Crashing", "option.mode=crash", "option.after=2",
             "--engine", f"dxp=127.0.0.1:{follower.port}", "name=D"],
            stdout=subprocess.PIPE, stderr=stderr, text=True)
    assert process.stdout is not None
    found = re.search(r"http://\S+", process.stdout.readline())
    try:
        assert found, f"pedina gui printed no address: {log.read_text()}"
        yield found.group()
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stdout.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        yield chromium
        chromium.close()


#: The screens a page is tried on: a desktop and a phone (``@pytest.mark.parametrize("page", SCREENS,
#: indirect=True)``; a test that does not ask gets the desktop).
SCREENS = ["1280x900", "390x844"]


@pytest.fixture
def page(server: str, browser: Browser, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page on the server, connected, with no JavaScript error allowed."""
    width, height = (int(side) for side in getattr(request, "param", SCREENS[0]).split("x"))
    context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(server)
    wait_connected(tab)
    yield tab
    context.close()
    assert not errors, errors


def wait_connected(page: Page) -> None:
    page.wait_for_selector("#connection:text-is('connected')", timeout=WAIT)
    page.wait_for_selector('#board rect[data-square="32"]', timeout=WAIT)


def shot(page: Page, name: str) -> None:
    """A screenshot, named with the page's width when it is not the desktop's (a phone's shows
    the whole page, which is longer than its screen)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    phone = size is not None and size["width"] != 1280
    if phone and size is not None:
        name = name.replace(".png", f"-{size['width']}.png")
    page.screenshot(path=str(SHOTS / name), full_page=phone)


def board(page: Page, key: str) -> str:
    """A ``data-`` attribute of the board: position, cursor, legal, mode, thinking, result, entry."""
    value = page.get_attribute("#board", f"data-{key}")
    assert value is not None
    return value


def click(page: Page, square: int) -> None:
    page.click(f'#board rect[data-square="{square}"]')


def wait_board(page: Page, condition: str) -> None:
    """Wait until the JavaScript ``condition`` on the board's dataset ``b`` holds."""
    page.wait_for_function(f"() => {{ const b = document.getElementById('board').dataset; return {condition}; }}",
                           timeout=WAIT)


def set_up(page: Page, fen: str) -> None:
    page.click("#btn-setup")
    page.fill("#setup-text", fen)
    page.click("#setup-paste")
    expected = Position.parse(fen).hub()
    wait_board(page, f"b.position === {json.dumps(expected)}")
    assert not page.is_visible("#dlg-setup")


def piece_at(page: Page, square: int) -> str | None:
    """The piece letter drawn on ``square`` (None for none), from where the pieces are drawn."""
    letter: str | None = page.evaluate("""(square) => {
        const rect = document.querySelector(`#board rect[data-square="${square}"]`);
        const x = Number(rect.getAttribute('x')) + 50, y = Number(rect.getAttribute('y')) + 50;
        for (const piece of document.querySelectorAll('#board > g > g.piece')) {
            if (piece.getAttribute('transform') === `translate(${x} ${y})`) return piece.dataset.piece;
        }
        return null;
    }""", square)
    return letter


def enter(page: Page, start: int, path: tuple[int, ...] | list[int]) -> None:
    """Click a move in: the start square, then every landing square."""
    click(page, start)
    for square in path:
        click(page, square)


def test_the_board_is_in_fid_orientation_with_numbers_on_demand(page: Page) -> None:
    def corner(square: int) -> tuple[str | None, str | None]:
        selector = f'#board rect[data-square="{square}"]'
        return page.get_attribute(selector, "x"), page.get_attribute(selector, "y")

    assert corner(1) == ("0", "0") and corner(4) == ("600", "0")        # a8, g8
    assert corner(29) == ("100", "700") and corner(32) == ("700", "700")  # b1, h1: dark corner lower right
    assert page.locator("#board rect.sq-dark, #board rect.sq-last").count() == 32
    assert piece_at(page, 1) == "b" and piece_at(page, 32) == "w" and piece_at(page, 15) is None
    assert page.locator("#board text.sq-number").count() == 0
    page.check("#opt-numbers")
    assert page.locator("#board text.sq-number").count() == 32
    page.click("#btn-flip")
    assert corner(1) == ("700", "700") and corner(32) == ("0", "0")
    assert page.inner_text("#player-bottom .name").startswith("Black")


def test_an_illegal_click_is_refused_and_a_capture_is_compulsory(page: Page) -> None:
    click(page, 15)
    assert "Choose one of White's pieces" in page.inner_text("#message")
    click(page, 9)
    assert "Choose one of White's pieces" in page.inner_text("#message")
    click(page, 22)
    assert page.locator("#board circle[data-target]").evaluate_all(
        "nodes => nodes.map(n => Number(n.dataset.target)).sort((a, b) => a - b)") == [18, 19]
    click(page, 17)                                       # not a square 22 can reach
    assert "Not a legal move: 22-17" in page.inner_text("#message")
    assert board(page, "cursor") == "0"
    set_up(page, "W:W22,K30:B18,14")
    click(page, 30)                                       # the king could step, but 22 must capture
    assert page.inner_text("#message") == "A capture is compulsory: 22x13."
    assert page.get_attribute("#message", "class") == "error"
    assert board(page, "entry") == ""
    click(page, 22)
    click(page, 18)                                       # the captured piece's square: refused
    assert "Not a legal move" in page.inner_text("#message")
    click(page, 13)
    wait_board(page, "b.cursor === '1'")
    assert board(page, "position") == Position.parse("B:W13,K30:B14").hub()
    assert page.inner_text("#move-list button.mv") == "22x13"


def test_a_multi_capture_entered_square_by_square_with_promotion(page: Page) -> None:
    set_up(page, "W:W17,20,27,31:B4,5,6,14,16,22,26,K29")
    click(page, 27)
    click(page, 18)
    assert board(page, "entry") == "27-18" and page.locator("#board g.piece.taken").count() == 1
    assert page.inner_text("#message").startswith("Go on: 11")
    click(page, 11)
    assert board(page, "entry") == "27-18-11" and page.locator("#board g.piece.taken").count() == 2
    assert board(page, "cursor") == "0"                   # nothing played yet
    click(page, 2)
    wait_board(page, "b.cursor === '1'")
    assert piece_at(page, 2) == "W"                       # promoted: a king
    assert all(piece_at(page, square) is None for square in (27, 22, 14, 6))
    assert page.inner_text("#move-list button.mv") == "27x2"


def test_two_captures_with_the_same_start_and_end_are_told_apart(page: Page) -> None:
    set_up(page, "W:W27,30:B14,15,22,23,1")
    click(page, 27)
    click(page, 11)                                       # the end square: two captures get there
    assert "2 captures end on 11: click the landing squares one by one" in page.inner_text("#message")
    assert board(page, "cursor") == "0"
    click(page, 20)
    click(page, 11)
    wait_board(page, "b.cursor === '1'")
    assert page.inner_text("#move-list button.mv") == "27x20x11"
    assert piece_at(page, 22) == "b" and piece_at(page, 23) is None and piece_at(page, 15) is None


def test_a_move_by_drag_and_drop(page: Page) -> None:
    start = page.locator('#board rect[data-square="23"]').bounding_box()
    end = page.locator('#board rect[data-square="19"]').bounding_box()
    assert start is not None and end is not None
    page.mouse.move(start["x"] + 50, start["y"] + 50)
    page.mouse.down()
    page.mouse.move(end["x"] + 20, end["y"] + 20, steps=5)
    page.mouse.move(end["x"] + 40, end["y"] + 40, steps=5)
    page.mouse.up()
    wait_board(page, "b.cursor === '1'")
    assert page.inner_text("#move-list button.mv") == "23-19"


def play_moves(page: Page, moves: tuple[tuple[int, int], ...]) -> None:
    """Click simple moves in from the position shown, each once the server has played the one before
    (a click before then is about the old position, and refused)."""
    for start, end in moves:
        ply = int(board(page, "cursor"))
        enter(page, start, (end,))
        wait_board(page, f"b.cursor === '{ply + 1}'")


def start_game(page: Page, engine: str, colour: str, clock: tuple[int, int] | None = None,
               seconds: float = 0.1) -> None:
    page.click("#btn-new")
    page.check('input[name="new-mode"][value="play"]')
    page.select_option("#new-engine", engine)
    page.select_option("#new-colour", colour)
    if clock:
        page.check('input[name="new-time-kind"][value="clock"]')
        page.fill("#new-time-minutes", str(clock[0]))
        page.fill("#new-time-increment", str(clock[1]))
    else:
        page.check('input[name="new-time-kind"][value="move"]')
        page.fill("#new-time-seconds", str(seconds))
    page.click("#new-start")
    wait_board(page, "b.mode === 'play'")


def wait_my_turn(page: Page, after: int) -> bool:
    """Wait until the engine has answered the position at ply ``after``; ``False`` once the game is over."""
    wait_board(page, f"b.result !== '' || (Number(b.cursor) > {after} && b.legal !== '0' && b.thinking === '')")
    return board(page, "result") == ""


def test_a_whole_game_against_the_engine_by_clicks(page: Page) -> None:
    rng = random.Random(11)
    start_game(page, RANDOM, "white", clock=(5, 3))
    assert page.inner_text("#status").startswith("Your move (White)")
    assert re.fullmatch(r"5:0[23]", page.inner_text("#player-bottom .clock"))
    plies = -1
    while wait_my_turn(page, plies):
        position = Position.from_hub(board(page, "position"))
        moves = legal_moves(position)
        assert board(page, "legal") == str(len(moves))
        move = rng.choice(moves)
        plies = int(board(page, "cursor"))
        enter(page, move.start, move.path)
        if plies == 20:
            wait_board(page, "Number(b.cursor) >= 21")
            shot(page, "play.png")
            assert "running" in (page.get_attribute("#player-top .clock", "class") or "") or \
                "running" in (page.get_attribute("#player-bottom .clock", "class") or "")
    result = board(page, "result")
    status = page.inner_text("#status")
    assert result in ("1-0", "0-1", "1/2-1/2") and status.startswith(result)
    assert re.search(r"(White|Black) (cannot move|has no pieces left)|\(repetition\)|\(the 40-move rule\)",
                     status), status
    assert page.inner_text("#move-list .result") == result
    shot(page, "play-end.png")


def test_take_back_and_resign(page: Page) -> None:
    start_game(page, RANDOM, "black")
    wait_my_turn(page, 0)
    assert page.inner_text("#player-bottom .name") == "Black: Player"
    move = legal_moves(Position.from_hub(board(page, "position")))[0]
    enter(page, move.start, move.path)
    wait_my_turn(page, 2)
    assert board(page, "cursor") == "3"
    page.click("#btn-takeback")
    wait_board(page, "b.cursor === '1'")
    resign(page)
    wait_board(page, "b.result === '1-0'")
    assert page.inner_text("#status") == "1-0 · White wins: Black resigns"


def test_analysis_lines_appear_and_update_then_stop(page: Page) -> None:
    play_moves(page, ((22, 18), (12, 16), (21, 17), (7, 12)))
    page.select_option("#analysis-engine", PEDINA)
    page.select_option("#analysis-lines", "3")
    page.click("#btn-analyse")
    page.wait_for_function("() => document.querySelectorAll('#analysis-lines-list li').length === 3", timeout=WAIT)
    depth = int(re.findall(r"depth (\d+)", page.inner_text("#analysis-stats"))[0])
    page.wait_for_function(f"() => /depth (\\d+)/.exec(document.getElementById('analysis-stats').textContent)[1] > {depth}",
                           timeout=WAIT)
    lines = page.locator("#analysis-lines-list li").all_inner_texts()
    assert all(re.match(r"[+-]\d+\.\d\d|(White|Black) wins in \d+ pl", line) for line in lines), lines
    assert all(" 3. " in line for line in lines), lines     # White to move at ply 4: 3. first
    arrow = page.get_attribute("#board polyline.arrow", "data-arrow")
    assert arrow and legal_moves(Position.from_hub(board(page, "position")))  # an arrow on the board
    assert arrow.split("-")[0].split("x")[0] in {str(m.start) for m in legal_moves(Position.from_hub(board(page, "position")))}
    # Step back through the game: the analysis follows, and the graph gets a point per position.
    for ply in (3, 2, 1):
        page.keyboard.press("ArrowLeft")
        wait_board(page, f"b.cursor === '{ply}'")
        page.wait_for_function(f"() => document.getElementById('graph').querySelector('circle[data-ply=\"{ply}\"]')",
                               timeout=WAIT)
    assert int(page.get_attribute("#graph", "data-points") or 0) >= 4
    shot(page, "analysis.png")
    page.click("#btn-analyse")
    page.wait_for_function("() => document.getElementById('analysis-stats').textContent.endsWith('stopped')",
                           timeout=WAIT)
    # The analysis's last report and the table's state are two messages: the button follows the second.
    page.wait_for_function("() => document.getElementById('btn-analyse').textContent === 'Analyse'", timeout=WAIT)
    assert page.inner_text("#btn-analyse") == "Analyse"
    assert page.locator("#analysis-lines-list li").count() == 3
    # The graph takes the page to a position when clicked.
    point = page.locator('#graph circle[data-ply="4"]').bounding_box()
    assert point is not None
    page.mouse.click(point["x"] + point["width"] / 2, point["y"] + point["height"] / 2)
    wait_board(page, "b.cursor === '4'")


def analysed_score(page: Page, fen: str, expected: str) -> str:
    """Set up ``fen``, analyse it with Pedina, and return the best line's score once it reads ``expected``."""
    set_up(page, fen)
    page.select_option("#analysis-engine", PEDINA)
    page.click("#btn-analyse")
    page.wait_for_function(
        "(expected) => { const score = document.querySelector('#analysis-lines-list li .score');"
        " return score !== null && score.textContent.includes(expected); }", arg=expected, timeout=WAIT)
    return page.inner_text("#analysis-lines-list li .score")


def test_a_database_result_is_shown_as_one(page: Page) -> None:
    # The shipped tables settle it (the Hub line says egdb=win): no number of plies, no "in 512".
    assert analysed_score(page, "W:WK10,22,27:B11,K14,18", "endgame database") == "White wins (endgame database)"
    assert not re.search(r"wins in \d", page.inner_text("#analysis-lines-list"))
    shot(page, "database-result.png")
    # The engine says what it is; its tables can be turned off, and the analysis starts again without them.
    assert page.inner_text("#analysis-engine-id") == f"Pedina {pedina.__version__} by The Pedina developers"
    page.uncheck("#analysis-tables")
    page.wait_for_function(
        "() => { const stats = document.getElementById('analysis-stats').textContent;"
        " const depth = stats.match(/depth (\\d+)/);"
        " return stats.includes('running') && depth !== null && Number(depth[1]) >= 6"
        " && !document.getElementById('analysis-lines-list').textContent.includes('endgame database'); }",
        timeout=WAIT)
    shot(page, "database-off.png")
    page.check("#analysis-tables")
    page.wait_for_function(
        "() => document.getElementById('analysis-lines-list').textContent.includes('endgame database')",
        timeout=WAIT)


def test_a_proven_win_is_shown_in_plies(page: Page) -> None:
    # Eleven pieces, out of the tables' reach: 18x11 is forced and the search proves the win.
    assert analysed_score(page, "W:W18,25,26,27,28,29,30,31,32:B14,1", "wins in") == "White wins in 9 plies"


def test_a_pdn_saved_and_loaded_back_is_identical(page: Page, tmp_path: Path) -> None:
    play_moves(page, ((21, 17), (10, 14), (17, 13), (9, 18), (22, 13)))
    with page.expect_download() as saving:
        page.click("#btn-save")
    saved = tmp_path / "game.pdn"
    saving.value.save_as(saved)
    text = saved.read_text()
    game = read_game(text)
    assert [move.hub() for move in game.board.moves] == ["21-17", "10-14", "17-13", "9x18x13", "22x13x18"]
    page.click("#btn-new")
    page.check('input[name="new-mode"][value="free"]')
    page.click("#new-start")
    wait_board(page, "b.cursor === '0'")
    page.set_input_files("#file-pdn", str(saved))
    wait_board(page, "b.cursor === '5'")
    assert page.locator("#move-list button.mv").all_inner_texts() == [
        "21-17", "10-14", "17-13", "9x18", "22x13"]
    with page.expect_download() as again:
        page.click("#btn-save")
    resaved = tmp_path / "again.pdn"
    again.value.save_as(resaved)
    assert resaved.read_text() == text
    # The move list and the keys move through the game.
    page.click('#move-list button.mv[data-ply="2"]')
    wait_board(page, "b.cursor === '2'")
    page.keyboard.press("End")
    wait_board(page, "b.cursor === '5'")
    page.keyboard.press("Home")
    wait_board(page, "b.cursor === '0'")
    page.keyboard.press("ArrowRight")
    wait_board(page, "b.cursor === '1'")


def test_a_game_is_chosen_from_a_multi_game_pdn_file(page: Page, tmp_path: Path) -> None:
    games = tmp_path / "two.pdn"
    games.write_text('[Event "first"]\n[White "Anna"]\n[Black "Bruno"]\n\n1. 22-18 10-14 *\n\n'
                     '[Event "second"]\n[White "Carla"]\n[Black "Dario"]\n\n1. 23-19 11-15 2. 21-17 1-0\n')
    page.set_input_files("#file-pdn", str(games))
    page.wait_for_selector("#dlg-pdn[open]", timeout=WAIT)
    assert page.locator("#pdn-games option").all_inner_texts() == [
        "1. Anna - Bruno (first) *, 2 plies", "2. Carla - Dario (second) 1-0, 3 plies"]
    page.select_option("#pdn-games", "1")
    page.click("#pdn-load")
    wait_board(page, "b.cursor === '3'")
    assert page.inner_text("#player-bottom .name") == "White: Carla"
    assert page.locator("#move-list button.mv").all_inner_texts() == ["23-19", "11-15", "21-17"]
    assert page.inner_text("#status") == "1-0 · White wins: the result recorded in the PDN"


def test_a_fen_is_set_up_and_its_legal_moves_offered(page: Page) -> None:
    fen = "B:W18,22,K31:B9,K13,14"
    set_up(page, fen)
    position = Position.parse(fen)
    assert board(page, "legal") == str(len(legal_moves(position)))
    assert page.inner_text("#fen") == position.fen()
    click(page, 14)
    targets = page.locator("#board circle[data-target]").evaluate_all(
        "nodes => nodes.map(n => Number(n.dataset.target)).sort((a, b) => a - b)")
    assert targets == sorted({move.path[0] for move in legal_moves(position) if move.start == 14})
    page.click("#btn-setup")
    page.fill("#setup-text", "W:W21-33:B1-12")
    page.click("#setup-paste")
    page.wait_for_function("() => document.getElementById('setup-error').textContent !== ''", timeout=WAIT)
    assert "impossible position" in page.inner_text("#setup-error")
    assert page.is_visible("#dlg-setup")


def test_the_position_editor(page: Page) -> None:
    page.click("#btn-setup")
    page.click("#editor-clear")
    assert page.get_attribute("#editor-board", "data-position") == "W" + "e" * 32

    def place(piece: str, square: int) -> None:
        page.check(f'input[name="editor-piece"][value="{piece}"]')
        page.click(f'#editor-board rect[data-square="{square}"]')

    for piece, square in (("w", 2), ("w", 22), ("W", 30), ("b", 9), ("b", 10), ("B", 27)):
        place(piece, square)
    page.check('input[name="editor-turn"][value="B"]')
    assert page.inner_text("#editor-fen") == "FEN B:W2,22,K30:B9,10,K27"
    page.click("#setup-done")
    page.wait_for_function("() => document.getElementById('setup-error').textContent !== ''", timeout=WAIT)
    assert page.inner_text("#setup-error") == ("impossible position: white man on square 2, "
                                              "its promotion row (1-4)")
    shot(page, "editor.png")
    place("w", 2)                                         # the same piece again: the square is emptied
    assert page.inner_text("#editor-fen") == "FEN B:W22,K30:B9,10,K27"
    page.click("#setup-done")
    wait_board(page, f"b.position === {json.dumps(Position.parse('B:W22,K30:B9,10,K27').hub())}")
    assert not page.is_visible("#dlg-setup")
    assert board(page, "legal") == str(len(legal_moves(Position.parse("B:W22,K30:B9,10,K27"))))


def test_two_engines_play_each_other(page: Page) -> None:
    page.click("#btn-watch")
    page.select_option("#watch-white", RANDOM)
    page.select_option("#watch-black", PEDINA)
    # A second a move for Pedina: the game cannot be over by the time the button is clicked, however
    # slow the machine (at 0.1 s Pedina could beat Random before the click landed).
    page.fill("#watch-time-seconds", "1")
    page.click("#watch-start")
    wait_board(page, "b.mode === 'watch'")
    assert page.inner_text("#player-bottom .name").startswith("White: Random")
    wait_board(page, "Number(b.cursor) >= 6 || b.result !== ''")
    assert board(page, "result") == "", "the watched game ended before it could be stopped"
    assert board(page, "legal") == "0"
    page.click("#btn-stop-watch")
    wait_board(page, "b.mode === 'free'")
    plies = board(page, "cursor")
    # A window for a late move to show, longer than either engine's move (Random's is instant,
    # Pedina's a second): it waits for nothing, and a slow machine could only hide a late move.
    time.sleep(1.5)
    assert board(page, "cursor") == plies                 # stopped
    assert int(page.get_attribute("#graph", "data-points") or 0) >= 3


def test_an_engine_that_crashes_mid_game_is_reported_and_the_server_goes_on(page: Page, server: str,
                                                                            browser: Browser) -> None:
    start_game(page, CRASHING, "white")
    for plies in (-1, 1):
        wait_my_turn(page, plies)
        move = legal_moves(Position.from_hub(board(page, "position")))[0]
        enter(page, move.start, move.path)
    page.wait_for_function("() => document.getElementById('message').textContent.includes('exited with code 3')",
                           timeout=WAIT)
    assert page.get_attribute("#message", "class") == "error"
    assert "> go think" in page.inner_text("#failure-tail")
    assert page.is_visible("#btn-retry")
    shot(page, "crash.png")
    # The same page goes on: back to an analysis board, and a move.
    page.click("#btn-new")
    page.check('input[name="new-mode"][value="free"]')
    page.click("#new-start")
    wait_board(page, "b.mode === 'free' && b.cursor === '0'")
    enter(page, 21, (17,))
    wait_board(page, "b.cursor === '1'")
    # And so does the server, for another page.
    other = browser.new_page()
    other.goto(server)
    other.wait_for_selector("#connection:text-is('connected')", timeout=WAIT)
    assert other.get_attribute("#board", "data-position") == Position.start().hub()
    other.close()


def test_a_request_without_the_token_is_refused(server: str, browser: Browser) -> None:
    bare = server.split("?")[0]
    stranger = browser.new_page()   # a context of its own: no cookie
    response = stranger.goto(bare)
    assert response is not None and response.status == 403
    assert "missing or wrong token" in stranger.inner_text("body")
    response = stranger.goto(bare + "?token=guess")
    assert response is not None and response.status == 403
    stranger.close()


def message(page: Page) -> str:
    return page.inner_text("#message")


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_a_windows_1252_pdn_is_read_like_the_command_line_reads_it(page: Page, tmp_path: Path) -> None:
    text = '[Event "Torneo di Cesenatico"]\n[White "José Müller"]\n[Black "Ægidius Çelik"]\n\n1. 22-18 10-14 *\n'
    for name, data in (("checkerboard.pdn", text.encode("cp1252")), ("utf16.pdn", text.encode("utf-16")),
                       ("bom.pdn", b"\xef\xbb\xbf" + text.encode())):
        page.click("#btn-new")
        page.check('input[name="new-mode"][value="free"]')
        page.click("#new-start")
        wait_board(page, "b.cursor === '0'")
        path = tmp_path / name
        path.write_bytes(data)
        page.set_input_files("#file-pdn", str(path))
        wait_board(page, "b.cursor === '2'")
        assert page.inner_text("#player-bottom .name") == "White: José Müller", name
        assert page.inner_text("#player-top .name") == "Black: Ægidius Çelik", name
    shot(page, "pdn-cp1252.png")


def new_free_game(page: Page) -> None:
    page.click("#btn-new")
    page.check('input[name="new-mode"][value="free"]')
    page.click("#new-start")
    wait_board(page, "b.mode === 'free' && b.cursor === '0'")


def test_a_message_goes_with_the_game_it_is_about(page: Page, tmp_path: Path) -> None:
    empty = tmp_path / "empty.pdn"
    empty.write_text("{only a comment}\n")
    page.set_input_files("#file-pdn", str(empty))
    page.wait_for_function("() => document.getElementById('message').textContent !== ''", timeout=WAIT)
    assert message(page) == "no game found in the PDN text"
    game = tmp_path / "game.pdn"
    game.write_text('[White "Anna"]\n\n1. 22-18 10-14 2. 23-19 *\n')
    page.set_input_files("#file-pdn", str(game))
    wait_board(page, "b.cursor === '3'")
    assert message(page) == ""
    page.click("#btn-setup")
    page.fill("#setup-text", "W:W21-33:B1-12")
    page.click("#setup-paste")
    page.wait_for_function("() => document.getElementById('setup-error').textContent !== ''", timeout=WAIT)
    page.click("#setup-cancel")
    assert message(page).startswith("impossible position")
    new_free_game(page)
    assert message(page) == ""
    enter(page, 22, (18,))
    wait_board(page, "b.cursor === '1'")
    with page.expect_download():
        page.click("#btn-save")
    assert message(page) == "Game saved as PDN."
    page.set_input_files("#file-pdn", str(game))
    wait_board(page, "b.cursor === '3'")
    assert message(page) == ""
    shot(page, "message-cleared.png")


def test_a_game_lost_on_time_shows_0_00_and_take_back_cannot_revive_it(page: Page) -> None:
    start_game(page, RANDOM, "white", clock=(0, 3))
    move = legal_moves(Position.start())[0]
    enter(page, move.start, move.path)
    wait_board(page, "b.result === '0-1'")
    assert page.inner_text("#status") == "0-1 · Black wins: White lost on time"
    assert board(page, "cursor") == "2"
    assert page.inner_text("#player-bottom .clock") == "0:00.0"
    assert page.is_disabled("#btn-takeback")
    shot(page, "lost-on-time.png")


def resign(page: Page) -> None:
    """Resign, confirming it."""
    page.click("#btn-resign")
    assert page.inner_text("#btn-resign") == "Confirm resign?"
    page.click("#btn-resign")


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_resigning_asks_for_a_confirmation(page: Page) -> None:
    start_game(page, RANDOM, "black")
    wait_my_turn(page, 0)
    page.click("#btn-resign")
    assert page.inner_text("#btn-resign") == "Confirm resign?"
    shot(page, "resign-confirm.png")
    # A message to the server and its answer: had the first click resigned, this state would say so.
    page.keyboard.press("Home")
    wait_board(page, "b.cursor === '0'")
    assert board(page, "result") == ""
    page.click("#player-top .name")                     # a click elsewhere takes the question back
    assert page.inner_text("#btn-resign") == "Resign"
    page.keyboard.press("End")
    wait_board(page, "b.cursor === '1'")
    resign(page)
    wait_board(page, "b.result === '1-0'")
    assert page.inner_text("#status") == "1-0 · White wins: Black resigns"


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).bounding_box()
    assert found is not None, selector
    return found


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_the_set_up_dialog_fits_the_screen(page: Page) -> None:
    page.click("#btn-setup")
    size = page.viewport_size
    assert size is not None
    dialog = box(page, "#dlg-setup")
    assert dialog["x"] >= 0 and dialog["x"] + dialog["width"] <= size["width"], dialog
    assert dialog["y"] >= 0 and dialog["y"] + dialog["height"] <= size["height"], dialog
    # Everything in it is inside it (nothing clipped), the buttons on the screen without scrolling.
    for selector in ("#setup-text", "#setup-paste", "#editor-board", ".palette", "#setup-done", "#setup-cancel"):
        inner = box(page, selector)
        assert inner["x"] >= dialog["x"] and inner["x"] + inner["width"] <= dialog["x"] + dialog["width"], selector
        assert inner["y"] + inner["height"] <= dialog["y"] + dialog["height"], selector
    assert page.evaluate("() => { const d = document.getElementById('dlg-setup'); "
                         "return d.scrollWidth <= d.clientWidth && d.scrollHeight <= d.clientHeight; }")
    shot(page, "setup-dialog.png")
    page.fill("#setup-text", "W:W21,22:B1,2")
    page.click("#setup-paste")
    wait_board(page, f"b.position === {json.dumps(Position.parse('W:W21,22:B1,2').hub())}")
    assert not page.is_visible("#dlg-setup")


MATCH_GAME = ('[Event "match"]\n[White "Pedina"]\n[Black "Other"]\n\n'
              '1. 21-17 {book 0.001s} 10-14 {-0.35/12 0.512s} 2. 17-13 {+4.50/14 0.498s} 9x18\n'
              '{-5.20/13 0.501s} 3. 22x13 {+0.10/12 0.4s} *\n')


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_a_games_comments_are_kept_and_its_scores_plotted(page: Page, tmp_path: Path) -> None:
    match = tmp_path / "match.pdn"
    match.write_text(MATCH_GAME)
    page.set_input_files("#file-pdn", str(match))
    wait_board(page, "b.cursor === '5'")
    # Scores from the mover's view before its move: ply 1 Black's -0.35 is White's +0.35.
    assert page.get_attribute("#graph", "data-points") == "4"
    titles = page.locator("#graph circle title").evaluate_all("nodes => nodes.map(n => n.textContent)")
    assert titles == ["position 1: +0.35", "position 2: +4.50", "position 3: +5.20", "position 4: +0.10"]
    assert page.inner_text("#move-comment") == "+0.10/12 0.4s"
    assert page.get_attribute('#move-list button.mv[data-ply="2"]', "title") == "-0.35/12 0.512s"
    shot(page, "comments-graph.png")
    with page.expect_download() as saving:
        page.click("#btn-save")
    saved = tmp_path / "saved.pdn"
    saving.value.save_as(saved)
    text = saved.read_text()
    for comment in ("{book 0.001s}", "{-0.35/12 0.512s}", "{+4.50/14 0.498s}", "{-5.20/13 0.501s}", "{+0.10/12 0.4s}"):
        assert comment in text, text
    assert [move.hub() for move in read_game(text).board.moves] == ["21-17", "10-14", "17-13", "9x18x13",
                                                                      "22x13x18"]


def overlap(one: FloatRect, other: FloatRect) -> bool:
    return (one["x"] < other["x"] + other["width"] and other["x"] < one["x"] + one["width"]
            and one["y"] < other["y"] + other["height"] and other["y"] < one["y"] + one["height"])


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_the_graphs_labels_stay_clear_of_the_cursor_and_the_points(page: Page, tmp_path: Path) -> None:
    match = tmp_path / "match.pdn"
    match.write_text(MATCH_GAME)            # +4.50 and +5.20: points at the top edge
    page.set_input_files("#file-pdn", str(match))
    wait_board(page, "b.cursor === '5'")
    for ply in ("0", "1", "3"):
        page.click(f'#move-list button.mv[data-ply="{ply}"]') if ply != "0" else page.keyboard.press("Home")
        wait_board(page, f"b.cursor === '{ply}'")
        labels = [box(page, f"#graph text.graph-label >> nth={index}") for index in (0, 1)]
        covers = [box(page, "#graph line.graph-cursor")] + [
            box(page, f"#graph circle >> nth={index}") for index in range(4)]
        assert not any(overlap(label, cover) for label in labels for cover in covers), (ply, labels, covers)
    assert page.locator("#graph text.graph-label").evaluate_all("nodes => nodes.map(n => n.textContent)") == ["+4", "−4"]
    # A click on the graph still goes to the position under it.
    point = box(page, '#graph circle[data-ply="3"]')
    page.mouse.click(point["x"] + point["width"] / 2, point["y"] + point["height"] / 2)
    wait_board(page, "b.cursor === '3'")
    shot(page, "graph-labels.png")


def test_the_game_and_the_settings_survive_a_reload_and_leaving_a_running_game_asks(page: Page) -> None:
    dialogs: list[str] = []

    def answer(dialog: Dialog) -> None:
        dialogs.append(dialog.type)
        dialog.accept()

    page.on("dialog", answer)
    play_moves(page, ((21, 17), (10, 14), (17, 13)))
    page.click('#move-list button.mv[data-ply="2"]')
    wait_board(page, "b.cursor === '2'")
    page.click("#btn-flip")
    page.check("#opt-numbers")
    page.select_option("#analysis-lines", "2")
    page.reload()
    wait_connected(page)
    wait_board(page, "b.cursor === '2'")
    assert dialogs == []                                   # an analysis board: nothing to lose
    assert page.locator("#move-list button.mv").all_inner_texts() == ["21-17", "10-14", "17-13"]
    assert page.inner_text("#message") == "The game was restored after the reload."
    assert page.inner_text("#player-bottom .name").startswith("Black")   # still flipped
    assert page.locator("#board text.sq-number").count() == 32
    assert page.input_value("#analysis-lines") == "2"
    # A game against the engine: leaving asks first, and the game comes back to go through.
    start_game(page, RANDOM, "white", seconds=0.2)
    enter(page, 22, (18,))
    wait_my_turn(page, 0)
    moves = page.locator("#move-list button.mv").all_inner_texts()
    page.reload()
    assert dialogs == ["beforeunload"]
    wait_connected(page)
    wait_board(page, f"b.cursor === '{len(moves)}'")
    assert page.locator("#move-list button.mv").all_inner_texts() == moves
    assert board(page, "mode") == "free" and page.inner_text("#player-top .name") == "Black: Random"
    shot(page, "restored.png")


def bar_share(page: Page) -> float:
    return float(page.get_attribute("#eval-bar", "data-white") or "nan")


@pytest.mark.parametrize("page", SCREENS, indirect=True)
def test_the_evaluation_bar_shows_whites_share_of_the_shown_position(page: Page, tmp_path: Path) -> None:
    board_box, bar = box(page, "#board"), box(page, "#eval-bar")
    assert bar["x"] + bar["width"] <= board_box["x"] and bar["height"] == pytest.approx(board_box["height"], abs=2)
    assert page.get_attribute("#eval-bar", "data-known") == "0" and bar_share(page) == 50
    match = tmp_path / "match.pdn"
    match.write_text(MATCH_GAME)
    page.set_input_files("#file-pdn", str(match))
    wait_board(page, "b.cursor === '5'")
    assert page.get_attribute("#eval-bar", "data-known") == "0"    # no score after the last move
    page.click('#move-list button.mv[data-ply="2"]')                # +4.50: White far ahead
    wait_board(page, "b.cursor === '2'")
    assert bar_share(page) > 90
    white = box(page, "#eval-white")
    bar = box(page, "#eval-bar")
    assert white["y"] + white["height"] == pytest.approx(bar["y"] + bar["height"], abs=2)  # from White's side
    assert white["height"] > 0.85 * bar["height"]
    page.click('#move-list button.mv[data-ply="1"]')                # +0.35: a little
    wait_board(page, "b.cursor === '1'")
    assert 50 < bar_share(page) < 70
    shot(page, "eval-bar-partial.png")
    page.click("#btn-flip")                                        # White at the top: so is its share
    white = box(page, "#eval-white")
    assert white["y"] == pytest.approx(box(page, "#eval-bar")["y"], abs=2)
    page.click("#btn-flip")
    # The live analysis fills it: Black to move, a man down against four.
    set_up(page, "B:W21,22,23,28:B1")
    page.select_option("#analysis-engine", PEDINA)
    page.click("#btn-analyse")
    page.wait_for_function("() => Number(document.getElementById('eval-bar').dataset.white) > 90", timeout=WAIT)
    shot(page, "eval-bar.png")
    page.click("#btn-analyse")
    page.wait_for_function("() => document.getElementById('btn-analyse').textContent === 'Analyse'", timeout=WAIT)


def test_a_whole_game_against_a_dxp_engine_with_a_take_back(page: Page, follower: Server) -> None:
    requests = len([line for line in follower.log_lines() if re.search(r" > R01", line)])
    rng = random.Random(5)
    start_game(page, DXP, "white", seconds=1)
    assert page.inner_text("#player-top .name") == "Black: D"
    plies, taken_back = -1, False
    while wait_my_turn(page, plies):
        plies = int(board(page, "cursor"))
        if plies == 6 and not taken_back:      # White's move 4: back to White's move 3
            page.click("#btn-takeback")
            wait_board(page, "b.cursor === '4'")
            taken_back, plies = True, 3
            continue
        position = Position.from_hub(board(page, "position"))
        move = rng.choice(legal_moves(position))
        enter(page, move.start, move.path)
    result = board(page, "result")
    status = page.inner_text("#status")
    assert taken_back and result in ("1-0", "0-1", "1/2-1/2") and status.startswith(result), status
    assert page.inner_text("#move-list .result") == result
    shot(page, "dxp-end.png")
    # The take back asked the engine for the game anew; the game's end reached it.
    assert len([line for line in follower.log_lines() if re.search(r" > R01", line)]) == requests + 2
    wait_until(lambda: any(re.search(r"# game \d+: .* (1-0|0-1|1/2-1/2) \(.*GAMEEND", line)
                           for line in follower.log_lines()[-3:]), what="the game's end at the DXP engine")


def test_a_dxp_engine_cannot_analyse_and_the_page_says_so_and_goes_on(page: Page) -> None:
    page.select_option("#analysis-engine", DXP)
    assert page.is_visible("#analysis-note") and page.is_disabled("#btn-analyse")
    assert page.inner_text("#analysis-note").startswith("D is a DXP engine: DXP sends no analysis")
    page.select_option("#analysis-engine", PEDINA)
    assert not page.is_visible("#analysis-note") and page.is_enabled("#btn-analyse")
    page.click("#btn-analyse")
    page.wait_for_function("() => document.getElementById('analysis-stats').textContent.includes('running')",
                           timeout=WAIT)
    # Asked while analysing (the engine changed in the list), the server refuses: Pedina goes on.
    page.select_option("#analysis-engine", DXP)
    page.wait_for_function("() => document.getElementById('message').textContent.includes('DXP engine')",
                           timeout=WAIT)
    assert page.get_attribute("#message", "class") == "error"
    assert message(page).startswith("D is a DXP engine: DXP sends no analysis")
    shot(page, "dxp-no-analysis.png")
    assert page.inner_text("#btn-analyse") == "Stop" and page.is_enabled("#btn-analyse")
    page.click("#btn-analyse")
    page.wait_for_function("() => document.getElementById('btn-analyse').textContent === 'Analyse'", timeout=WAIT)
    play_moves(page, ((22, 18),))


def options(page: Page, selector: str) -> list[str]:
    return page.locator(f"{selector} option").all_inner_texts()


def log_size(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


def assert_threads_then_answer(log: Path, since: int, answer: str) -> None:
    """Pedina's log from byte ``since`` on says that the engine was set to 2 threads and then
    answered a search (an ``answer`` line: ``done`` or ``info``), saying no error."""
    lines = log.read_bytes()[since:].decode().splitlines()
    chosen = [number for number, line in enumerate(lines) if line.endswith("> set-param name=threads value=2")]
    assert chosen, lines[-20:]
    assert any(f" < {answer} " in line for line in lines[chosen[0]:]), lines[chosen[0]:][-20:]
    assert not [line for line in lines if " < error " in line and not starved(line)], lines


def test_the_threads_chosen_reach_pedina_and_are_offered_only_for_an_engine_that_has_them(
        page: Page, pedina_log: Path) -> None:
    # From 1 to the cores the engines share (Pedina's maximum, 64, is more), at Pedina's default, 1.
    cores = [str(count) for count in range(1, min(64, len(os.sched_getaffinity(0))) + 1)]
    assert "2" in cores, "choosing 2 threads needs a machine with 2 cores"
    page.click("#btn-new")
    page.select_option("#new-engine", RANDOM)    # the fixture engine declares no threads, skill or tables
    for choice in ("#new-threads-label", "#new-skill-label", "#new-tables-label"):
        assert page.is_hidden(choice), choice
    page.select_option("#new-engine", PEDINA)
    page.wait_for_selector("#new-threads-label", state="visible", timeout=WAIT)
    assert options(page, "#new-threads") == cores and page.input_value("#new-threads") == "1"
    page.select_option("#new-threads", "2")
    shot(page, "threads-new-game.png")
    page.select_option("#new-engine", CRASHING)  # it declares threads too: its own value, not Pedina's choice
    assert page.input_value("#new-threads") == "1"
    page.select_option("#new-engine", PEDINA)
    assert page.input_value("#new-threads") == "2"
    page.click("#new-cancel")
    since = log_size(pedina_log)
    start_game(page, PEDINA, "black")
    assert page.input_value("#new-threads") == "2"           # the choice stays in the dialog
    wait_my_turn(page, 0)                                    # the engine, on 2 processes, has moved
    assert_threads_then_answer(pedina_log, since, "done")
    resign(page)
    wait_board(page, "b.result === '1-0'")

    # The choice is the engine's, in the analysis panel too, and kept over a reload (another engine
    # process then).
    page.select_option("#analysis-engine", RANDOM)
    assert page.is_hidden("#analysis-threads-label")
    page.select_option("#analysis-engine", PEDINA)
    assert page.is_visible("#analysis-threads-label") and page.input_value("#analysis-threads") == "2"
    page.select_option("#analysis-engine", CRASHING)
    assert page.input_value("#analysis-threads") == "1"
    page.select_option("#analysis-engine", PEDINA)
    page.reload()
    wait_connected(page)
    page.wait_for_selector("#analysis-threads-label", state="visible", timeout=WAIT)
    assert page.input_value("#analysis-engine") == PEDINA and page.input_value("#analysis-threads") == "2"
    since = log_size(pedina_log)
    page.click("#btn-analyse")
    page.wait_for_function("() => document.querySelectorAll('#analysis-lines-list li').length > 0", timeout=WAIT)
    assert_threads_then_answer(pedina_log, since, "info")
    shot(page, "threads-analysis.png")
    page.click("#btn-analyse")
    page.wait_for_function("() => document.getElementById('btn-analyse').textContent === 'Analyse'", timeout=WAIT)
