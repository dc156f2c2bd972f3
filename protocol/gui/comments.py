"""The scores in a PDN game's comments, for the GUI to plot.

:func:`pedina.pdn.read_games` gives the comment after each move (:attr:`pedina.pdn.PdnGame.comments`);
:func:`comment_score` reads the engine score that match and analysis comments start with
(``{+0.35/12 0.512s}``), as a score of White's for the position it is about.
"""

from __future__ import annotations

import re

from pedina.scores import Score

#: A score in men and a depth at the start of a comment, after an optional ``book``.
_SCORE = re.compile(r"\s*(?:book\s+)?([+-]?\d{1,3}(?:\.\d+)?)/\d+\b")


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


__all__ = ["comment_score"]
