"""Scores: what an engine score means, and how it is written and read back.

A score is an int in hundredths of a man from the side to move's point of view.
Its size says what it is, in bands from the top (a loss is the negation of the
win, and a draw is 0, whatever proves it):

========================================  =================================================
``WIN - N`` (above :data:`MATE_BOUND`)     a win in N plies, proven by the search
``DATABASE_WIN - D``                       an endgame database's win, D plies before the
                                           next capture or man move (0 right after one)
the progress band (:data:`PROGRESS_BAND`   a database win from a table without distances,
wide, below every distance)                ordered by the evaluation (:func:`progress_score`)
below :data:`PROGRESS_FLOOR`               an estimate: the evaluation's, up to about
                                           :data:`KNOWN_WIN` for an ending it knows is won
========================================  =================================================

The search works on the ints (:func:`win_in`, :func:`database_score`,
:func:`to_table`...: plain functions and Final ints, compiled with it). Everything
that shows a score goes through a :class:`Score`, which knows its kind
(:data:`ESTIMATE`, :data:`PROVEN` or :data:`DATABASE`) and gives the Hub fields,
the JSON fields and the human text:

- Hub (Scan's protocol): ``score=`` in men with two decimals, so a win in N plies
  is ``100 - N/100`` (``99.97``) as Scan writes it; a database result adds the
  field ``egdb=win`` (or ``loss``): it is exact, about ``94`` men, but says no
  number of plies. Clients ignore fields they do not know; pydraughts reads any
  score above 90 men as a win, which both are. A draw scores 0 whatever proves
  it; ``egdb=draw`` marks one the tables prove (the search's root is in them).
- Text: ``+0.35`` for an estimate, ``White wins in 5 plies`` for a proof,
  ``White wins (endgame database)`` or ``Draw (endgame database)`` for a database
  result. An estimate, however large, is never written as a win.
- JSON: ``score`` (the side to move's men), ``white`` (White's), ``proven``
  (``{"winner", "plies"}``) and ``database`` (``{"winner"}``, ``null`` for a
  draw), ``null`` when not so.

A score read back from a Hub engine (:meth:`Score.from_hub`) takes its kind from
the marks, not from the bands, which are this engine's own: ``egdb=`` for a
database result, above :data:`MATE_BOUND` (Scan's convention) for a proof.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

#: The deepest ply of the search (the quiescence search may go on from there):
#: a proof is at most ``2 * MAX_PLY`` plies long, a database distance at most ``MAX_PLY``.
MAX_PLY: Final = 128
#: A win right now (a loss with no move: ``-WIN``).
WIN: Final = 10000
#: Beyond every score: the search's window before anything is known.
INF: Final = WIN + 1
#: Scores beyond this are proven wins or losses, ``WIN - N``; the transposition
#: table stores them relative to the node (:func:`to_table`).
MATE_BOUND: Final = WIN - 2 * MAX_PLY
#: A database win at distance 0, below every proof: a database proves who wins, not in how many plies.
DATABASE_WIN: Final = MATE_BOUND - 2 * MAX_PLY
#: The distance of a database win whose table stores none: beyond any stored one.
UNKNOWN_DISTANCE: Final = MAX_PLY
#: A database win without a distance scores within the progress band, below every win
#: with one, by the evaluation clipped to +/- PROGRESS_CLIP in steps of PROGRESS_STEP.
PROGRESS_CLIP: Final = 5400
PROGRESS_STEP: Final = 4
PROGRESS_BAND: Final = 2 * PROGRESS_CLIP // PROGRESS_STEP
#: The bottom of the progress band: every database result is at least this large, every estimate smaller.
PROGRESS_FLOOR: Final = DATABASE_WIN - UNKNOWN_DISTANCE - PROGRESS_BAND
#: The evaluation's size of a known won ending (about 50 men): above any material
#: score, so the search heads for it, and well below :data:`PROGRESS_FLOOR`: an
#: estimate until a search or a database proves it.
KNOWN_WIN: Final = 5000
#: The evaluation's answer when the side to move has no move at all (it has lost): never a score.
NO_MOVES: Final = -30000
#: A draw, by the rules or by a database.
DRAW: Final = 0

#: The kinds of :class:`Score`.
ESTIMATE: Final = "estimate"
PROVEN: Final = "proven"
DATABASE: Final = "database"


# -- the search's ints ----------------------------------------------------------------------------


def win_in(plies: int) -> int:
    """A win in ``plies`` plies, proven."""
    return WIN - plies


def loss_in(plies: int) -> int:
    """A loss in ``plies`` plies, proven (``loss_in(0)``: no move now)."""
    return plies - WIN


def proven_plies(score: int) -> int | None:
    """The plies to the proven end of the game that ``score`` says (for a win or a
    loss alike), or ``None`` when it is not a proof."""
    return WIN - abs(score) if abs(score) > MATE_BOUND else None


def within_estimates(low: int, high: int) -> bool:
    """Neither ``low`` nor ``high`` (``low <= high``) is a proven result."""
    return -MATE_BOUND < low and high < MATE_BOUND


def to_table(score: int, ply: int) -> int:
    """``score`` of a node at ``ply`` as the transposition table keeps it: a proof
    counted from the node, not from the root."""
    if score > MATE_BOUND:
        return score + ply
    if score < -MATE_BOUND:
        return score - ply
    return score


def from_table(score: int, ply: int) -> int:
    """A score the table kept (:func:`to_table`) for a node at ``ply``."""
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


def database_score(result: int, distance: int) -> int:
    """A database's ``result`` (1 win, 0 draw, -1 loss for the side to move) with the
    ``distance`` in plies to the next capture or man move (0 right after one)."""
    return result * (DATABASE_WIN - distance)


def progress_score(result: int, estimate: int) -> int:
    """A database win (``result`` 1) or loss (-1) whose table has no distance, ordered
    by the evaluation's ``estimate`` (side to move's view) within the progress band."""
    clipped = min(max(result * estimate, -PROGRESS_CLIP), PROGRESS_CLIP)
    return result * (PROGRESS_FLOOR + (clipped + PROGRESS_CLIP) // PROGRESS_STEP)


def database_result(score: int) -> int:
    """1 when ``score`` is a database win (with a distance or not), -1 a database loss, else 0."""
    if PROGRESS_FLOOR <= abs(score) <= DATABASE_WIN:
        return 1 if score > 0 else -1
    return 0


# -- showing and reading scores -------------------------------------------------------------------


def men(score: int) -> str:
    """``score`` (hundredths of a man) in men with a sign: ``+0.35``, ``-1.00``."""
    return f"{score / 100:+.2f}"


def for_white(score: int, white_to_move: bool) -> int:
    """A score from the side to move's point of view, from White's."""
    return score if white_to_move else -score


def hub_value(text: str) -> int | None:
    """Hub ``score=`` text (men, two decimals) in hundredths of a man, ``None`` if unreadable."""
    try:
        value = float(text)
    except ValueError:
        return None
    return round(value * 100) if abs(value) < 1e9 else None


@dataclass(frozen=True)
class Score:
    """A score and what it is: ``value`` in hundredths of a man from one side's point
    of view (the side to move's, unless turned with :meth:`for_white`), ``kind`` one of
    :data:`ESTIMATE`, :data:`PROVEN` and :data:`DATABASE`."""

    value: int
    kind: str = ESTIMATE

    def __reduce__(self) -> tuple[type[Score], tuple[int, str]]:
        # Compiled by mypyc, a frozen dataclass cannot be unpickled field by field, and the
        # match's cluster sends scores between processes: it is rebuilt by its constructor.
        return Score, (self.value, self.kind)

    @staticmethod
    def of(value: int, database_draw: bool = False) -> Score:
        """One of this engine's scores, its kind told by its band; a draw is a database result
        only when the search says so (``database_draw``: its root is a draw in the tables)."""
        if database_draw and value == DRAW:
            return Score(DRAW, DATABASE)
        if proven_plies(value) is not None:
            return Score(value, PROVEN)
        if database_result(value):
            return Score(value, DATABASE)
        return Score(value, ESTIMATE)

    @staticmethod
    def from_hub(fields: Mapping[str, str]) -> Score | None:
        """The score of a Hub ``info`` line's fields (``score=``, ``egdb=``), or ``None``
        when it has none or it is unreadable."""
        value = hub_value(fields.get("score", ""))
        if value is None:
            return None
        if fields.get("egdb") in ("win", "loss", "draw"):
            return Score(value, DATABASE)
        return Score(value, PROVEN if proven_plies(value) is not None else ESTIMATE)

    @property
    def plies(self) -> int | None:
        """The plies to the end of a proven result, else ``None``."""
        return proven_plies(self.value) if self.kind == PROVEN else None

    @property
    def result(self) -> int:
        """1 for a win, -1 for a loss (proven or by the database), 0 for an estimate."""
        if self.kind == ESTIMATE or not self.value:
            return 0
        return 1 if self.value > 0 else -1

    def for_white(self, white_to_move: bool) -> Score:
        """This score of the side to move, from White's point of view."""
        return self if white_to_move else Score(-self.value, self.kind)

    def hub_fields(self) -> list[tuple[str, str]]:
        """The ``info`` fields: ``score`` (men, two decimals, as Scan writes them), and
        ``egdb=win``/``loss``/``draw`` for a database result."""
        fields = [("score", f"{self.value / 100:.2f}")]
        if self.kind == DATABASE:
            fields.append(("egdb", {1: "win", -1: "loss", 0: "draw"}[self.result]))
        return fields

    def note(self, side: str, other: str) -> str:
        """``"White wins in 5 plies"`` for a proof from ``side``'s point of view (``other``
        wins when it is a loss), ``"White wins (endgame database)"`` for a database
        result, ``"Draw (endgame database)"``; empty for an estimate."""
        if not self.result:
            return "Draw (endgame database)" if self.kind == DATABASE else ""
        winner = side if self.result > 0 else other
        plies = self.plies
        if plies is None:
            return f"{winner} wins (endgame database)"
        return f"{winner} wins in {plies} pl{'y' if plies == 1 else 'ies'}"

    def text(self, side: str = "White", other: str = "Black") -> str:
        """The score as a person reads it: the :meth:`note` of a result, else the men (``+0.35``)."""
        return self.note(side, other) or men(self.value)

    def json_fields(self, white_to_move: bool) -> dict[str, object]:
        """``score`` (the side to move's men), ``white`` (White's men), ``proven``
        (``{"winner", "plies"}``) and ``database`` (``{"winner"}``, ``None`` for a draw), ``None``
        when not so; this score is the side to move's."""
        white = for_white(self.value, white_to_move)
        winner = "white" if white > 0 else "black"
        plies = self.plies
        proven: dict[str, object] | None = None if plies is None else {"winner": winner, "plies": plies}
        database: dict[str, object] | None = (
            {"winner": winner if self.result else None} if self.kind == DATABASE else None)
        return {"score": round(self.value / 100, 2), "white": round(white / 100, 2), "proven": proven,
                "database": database}


__all__ = [
    "DATABASE", "DATABASE_WIN", "DRAW", "ESTIMATE", "INF", "KNOWN_WIN", "MATE_BOUND", "MAX_PLY", "NO_MOVES",
    "PROGRESS_BAND", "PROGRESS_CLIP", "PROGRESS_FLOOR", "PROGRESS_STEP", "PROVEN", "Score", "UNKNOWN_DISTANCE",
    "WIN", "database_result", "database_score", "for_white", "from_table", "hub_value", "loss_in", "men",
    "progress_score", "proven_plies", "to_table", "win_in", "within_estimates",
]
