"""The game review: the thresholds and marks of :mod:`pedina.protocol.review`, and the GUI's
review (a :class:`Table` driven without a browser) marking a match game exactly as
``pedina analyze --annotate`` does at the same depth."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pedina import read_game
from pedina.protocol.gui import DEFAULT_ENGINE
from pedina.protocol.review import BLUNDER, INACCURACY, MISTAKE, Thresholds
from test_gui import FakePage, random_spec, run

#: A 101-ply game of ``pedina match`` (Pedina at full strength against skill 8, depth 4 a move).
MATCH_GAME = Path(__file__).parent / "fixtures" / "review-match.pdn"
#: The depth of the reviews compared: small enough to be quick, fixed so that they are deterministic.
REVIEW_DEPTH = 6

Message = dict[str, Any]


def analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pedina.protocol.cli", "analyze", *args], capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL)


def test_a_move_is_marked_from_the_threshold_it_reaches() -> None:
    thresholds = Thresholds.in_men(0.1, 0.3, 0.5, 1.0)
    assert [thresholds.nag(loss) for loss in (-5, 0, 29, 30, 49, 50, 99, 100, 9999)] == [
        None, None, None, INACCURACY, INACCURACY, MISTAKE, MISTAKE, BLUNDER, BLUNDER]
    with pytest.raises(ValueError, match="below the inaccuracy one"):
        Thresholds.in_men(0.1, 0.6, 0.5, 1.0)
    with pytest.raises(ValueError, match="below the mistake one"):
        Thresholds.in_men(0.1, 0.3, 0.5, 0.4)


@pytest.mark.parametrize(("args", "words"), [
    (["--inaccuracy", "0.7"], "below the inaccuracy one"),
    (["--inaccuracy", "nan"], "--inaccuracy"),
    (["--mistake", "2", "--blunder", "1"], "below the mistake one"),
])
def test_bad_thresholds_are_one_line_errors(tmp_path: Path, args: list[str], words: str) -> None:
    done = analyze(str(MATCH_GAME), "--depth", "1", "--annotate", str(tmp_path / "a.pdn"), *args)
    assert done.returncode == 2 and words in done.stderr and len(done.stderr.strip().splitlines()) <= 3, done.stderr


def test_analyze_marks_inaccuracies_and_sums_up_each_player(tmp_path: Path) -> None:
    out = tmp_path / "a.pdn"
    done = analyze(str(MATCH_GAME), "--depth", str(REVIEW_DEPTH), "--no-book", "--annotate", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    *_, white, black, result = done.stdout.splitlines()
    assert result == "result 1-0"
    summary = {line.split()[0]: line for line in (white, black)}
    for side, player in (("White", "Full"), ("Black", "Skill8")):
        line = summary[side]
        assert line.startswith(f"{side} ({player}): ")
        counts = re.search(r"(\d+) inaccurac\w+, (\d+) mistakes?, (\d+) blunders?, average loss (\d+\.\d\d) men", line)
        assert counts, line
    # each kind of mark is in the annotated game as often as the summaries count it
    found = {nag: len(re.findall(rf"\${nag}(?!\d)", text)) for nag in (INACCURACY, MISTAKE, BLUNDER)}
    words = {INACCURACY: "inaccurac", MISTAKE: "mistake", BLUNDER: "blunder"}
    for nag, word in words.items():
        numbers = [re.search(rf"(\d+) {word}", line) for line in summary.values()]
        counted = sum(int(number.group(1)) for number in numbers if number is not None)
        assert counted == found[nag] > 0, (nag, found, summary)
    # a lower inaccuracy threshold marks more moves ?!, and none when it equals the mistake one
    more = analyze(str(MATCH_GAME), "--depth", str(REVIEW_DEPTH), "--no-book", "--inaccuracy", "0.1",
                   "--annotate", str(out))
    assert more.returncode == 0 and len(re.findall(r"\$6(?!\d)", out.read_text())) > found[INACCURACY]
    none = analyze(str(MATCH_GAME), "--depth", str(REVIEW_DEPTH), "--no-book", "--inaccuracy", "0.5",
                   "--annotate", str(out))
    assert none.returncode == 0 and "$6" not in out.read_text()


def test_the_gui_review_marks_a_match_game_as_analyze_does(tmp_path: Path) -> None:
    """The summaries, the marks and the annotated PDN (all but the tags' order) of the page's
    review equal those of ``pedina analyze --annotate --json`` at the same depth (without the
    book's marks, which the page does not make)."""
    out = tmp_path / "analyze.pdn"
    done = analyze(str(MATCH_GAME), "--depth", str(REVIEW_DEPTH), "--no-book", "--json", "--annotate", str(out))
    assert done.returncode == 0, done.stderr
    (expected,) = json.loads(done.stdout)["games"]
    found: dict[str, Any] = {}

    async def body(page: FakePage) -> None:
        await page.send(type="load_pdn", text=MATCH_GAME.read_text())
        await page.expect("state", lambda m: len(m["moves"]) == 101)
        await page.send(type="review", depth=REVIEW_DEPTH, engine=0)
        progress = await page.expect("review", lambda m: m["review"] is not None and m["review"]["done"] == 1)
        assert progress["review"]["running"] and progress["review"]["total"] == 102
        review = await page.expect("review", lambda m: m["review"] is not None and not m["review"]["running"])
        found["review"] = review
        await page.send(type="review_pdn")
        found["pdn"] = (await page.expect("pdn"))["text"]

    run(body, [DEFAULT_ENGINE])
    review = found["review"]["review"]
    assert review["done"] == 102 and review["problem"] is None
    assert [{"ply": mark["ply"], "nag": mark["nag"]} for mark in review["marks"]] == expected["summary"]["marks"]
    assert review["summary"] == {"white": expected["summary"]["white"], "black": expected["summary"]["black"]}
    # the same tags (the page's in its own order) and the same movetext, marks, scores and lines
    page_tags, page_moves = found["pdn"].split("\n\n", 1)
    tags, moves = out.read_text().split("\n\n", 1)
    assert sorted(page_tags.splitlines()) == sorted(tags.splitlines())
    assert page_moves == moves
    # every position's score is in the graph, as the annotation gives it
    assert all(score is not None for score in found["review"]["evals"])
    game = read_game(found["pdn"])
    assert len(game.board.moves) == 101


def test_a_review_is_refused_with_a_reason_and_the_table_goes_on() -> None:
    async def body(page: FakePage) -> None:
        assert "no move to review" in await page.error(json.dumps({"type": "review", "depth": 2}))
        assert "depth or a time" in await page.error(json.dumps({"type": "review", "depth": 2, "time": 1}))
        assert "depth or a time" in await page.error(json.dumps({"type": "review"}))
        assert "depth must be" in await page.error(json.dumps({"type": "review", "depth": 99}))
        assert "time must be" in await page.error(json.dumps({"type": "review", "time": "nan"}))
        await page.send(type="new_game", mode="play", engine=0, colour="black", time={"kind": "move", "seconds": 0.05})
        await page.expect("state", lambda m: len(m["moves"]) == 1)
        assert "finish the game" in await page.error(json.dumps({"type": "review", "depth": 2}))
        assert "no annotation yet" in await page.error(json.dumps({"type": "review_pdn"}))
        await page.send(type="resign")
        await page.expect("state", lambda m: m["result"] is not None)
        await page.send(type="review", depth=2)  # the game is over: now it may be reviewed
        review = await page.expect("review", lambda m: m["review"] is not None and not m["review"]["running"])
        assert review["review"]["done"] == review["review"]["total"] == 2

    run(body, [random_spec()])


def test_a_review_is_stopped_by_stop_and_by_a_new_game_but_not_by_going_through_the_game() -> None:
    async def body(page: FakePage) -> None:
        await page.send(type="load_pdn", text=MATCH_GAME.read_text())
        await page.expect("state", lambda m: len(m["moves"]) == 101)
        await page.send(type="review", time=0.2)
        await page.expect("review", lambda m: m["review"] is not None and m["review"]["done"] >= 1)
        await page.send(type="goto", ply=3)
        await page.expect("state", lambda m: m["cursor"] == 3)
        later = await page.expect("review", lambda m: m["review"] is not None and m["review"]["done"] >= 3)
        assert later["review"]["running"]
        await page.send(type="stop")
        stopped = await page.expect("review", lambda m: m["review"] is not None and not m["review"]["running"])
        assert 3 <= stopped["review"]["done"] < 102
        await page.send(type="review_pdn")  # what was finished can be had
        assert "$" in (await page.expect("pdn"))["text"] or stopped["review"]["marks"] == []
        assert "nothing to stop" in await page.error(json.dumps({"type": "stop"}))
        await page.send(type="review", time=0.2)
        await page.expect("review", lambda m: m["review"] is not None and m["review"]["done"] >= 1)
        await page.send(type="new_game", mode="free")
        cleared = await page.expect("review", lambda m: m["review"] is None)
        assert all(score is None for score in cleared["evals"])
        await page.expect("state", lambda m: m["moves"] == [])
        assert not page.table._reviewing()

    run(body, [DEFAULT_ENGINE])
