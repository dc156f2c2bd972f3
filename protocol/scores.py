"""Scores as the command line shows them: in men, from a side that is named.

The engine's scores are integers in hundredths of a man from the side to move's
point of view (:mod:`pedina.search`). A command shows them in men with two
decimals and a sign (:func:`men`), from one stated point of view (White's, or a
named player's: :func:`for_white` turns the side to move's into White's), and
spells out a proven result (:func:`proven_note`) instead of leaving it to be read
from the number: a proven win in N plies is ``100 - N/100`` men, e.g. ``+99.95``,
while an estimate, however large (a known won ending scores about ``+50``), is
never written as one. An endgame database's result (about ``+94``) is exact but
says no number of plies: it is written as the database's.
"""

from __future__ import annotations

from pedina.search import database_result, proven_plies


def men(score: int) -> str:
    """``score`` (hundredths of a man) in men with a sign: ``+0.35``, ``-1.00``."""
    return f"{score / 100:+.2f}"


def for_white(score: int, white_to_move: bool) -> int:
    """A score from the side to move's point of view, from White's."""
    return score if white_to_move else -score


def proven_note(score: int, side: str, other: str) -> str:
    """``"White wins in 5 plies"`` for a proven ``score`` from ``side``'s point of view (``other``
    wins when it is negative), ``"White wins (endgame database)"`` for a database result;
    empty for an estimate."""
    plies = proven_plies(score)
    if plies is None:
        result = database_result(score)
        return f"{side if result > 0 else other} wins (endgame database)" if result else ""
    return f"{side if score > 0 else other} wins in {plies} pl{'y' if plies == 1 else 'ies'}"


__all__ = ["for_white", "men", "proven_note"]
