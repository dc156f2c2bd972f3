"""The comments of a PDN text's main lines, for the GUI to show, plot and save again.

:func:`pedina.pdn.read_games` reads the moves and skips the comments; :func:`read_comments`
walks the same text with the reader's tokens and by the reader's rules for where a game
ends (a result, or a tag after movetext or given twice), and gives each game's comment
after each move of its main line. Comments inside a variation, and before a game's first
move, are not kept. When the reader gives move notes itself, this module can go.

:func:`comment_score` reads the engine score that match and analysis comments start with
(``{+0.35/12 0.512s}``), as a score of White's for the position it is about.
"""

from __future__ import annotations

import re

from pedina.pdn import _TAG_CLOSE, _TOKEN, _tag_value_end, PdnError
from pedina.scores import Score

#: A score in men and a depth at the start of a comment, after an optional ``book``.
_SCORE = re.compile(r"\s*(?:book\s+)?([+-]?\d{1,3}(?:\.\d+)?)/\d+\b")


def read_comments(text: str) -> list[list[str]]:
    """For each game of ``text`` (as :func:`pedina.pdn.read_games` numbers them), the comment
    after each move of its main line (``""`` for none; several are joined by a space).

    Raises :class:`~pedina.pdn.PdnError` where the reader does (an unclosed tag, say)."""
    text = "\n".join("" if line.startswith("%") else line for line in text.splitlines())
    games: list[list[str]] = []
    comments: list[str] = []
    tags: set[str] = set()
    depth = 0
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise PdnError(f"game {len(games) + 1}: unexpected text {text[pos:pos + 20]!r}")
        kind, pos = match.lastgroup, match.end()
        if kind == "tag":
            value_end = _tag_value_end(text, pos)
            close = _TAG_CLOSE.match(text, value_end + 1) if value_end >= 0 else None
            if close is None:
                raise PdnError(f"game {len(games) + 1}: tag {match.group('name')} not closed")
            pos = close.end()
            if comments or match.group("name") in tags:
                games.append(comments)
                comments, tags = [], set()
            tags.add(match.group("name"))
        elif kind == "open":
            depth += 1
        elif kind == "close":
            depth -= 1
        elif depth:
            continue
        elif kind == "result":
            games.append(comments)
            comments, tags = [], set()
        elif kind == "move":
            comments.append("")
        elif kind == "comment" and comments:
            said = " ".join(match.group().strip("{}").split())
            comments[-1] = f"{comments[-1]} {said}".strip()
    if comments or tags:
        games.append(comments)
    return games


def comment_score(comment: str, white_moved: bool, annotated: bool) -> tuple[int, Score] | None:
    """The score a move's comment starts with, as ``(ply offset, White's score)``:
    the offset from the move's ply to the position the score is about. A match's comment
    (``+0.35/12 0.512s``) is the mover's score before its move (offset 0); an annotated
    game's (``annotated``: ``pedina analyze --annotate``, which names itself in an
    ``Annotator`` tag) is White's after the move (offset 1). A score beyond 90 men is a
    proven result, as in a Hub ``score=`` (Scan's convention). ``None`` without a score."""
    found = _SCORE.match(comment)
    score = Score.from_hub({"score": found.group(1)}) if found is not None else None
    if score is None:
        return None
    if annotated:
        return 1, score
    return 0, score.for_white(white_moved)


__all__ = ["comment_score", "read_comments"]
