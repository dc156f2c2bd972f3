"""A game's review: every position's analysis, each move judged against the engine's best, the
marks (``?!``, ``?``, ``??``), each player's summary and the annotated PDN.

One implementation for ``pedina analyze --annotate`` (which searches in the process) and the
GUI's game review (which asks a Hub engine): both fill a list of :class:`Analysed`, one per
position of the game, and everything after that is here.

A move's loss is the mover's best score before it less the mover's score after it (hundredths
of a man; 0 when the move is the engine's best). A move is marked from the threshold it
reaches: ``??`` (NAG 4) from :attr:`Thresholds.blunder`, ``?`` (NAG 2) from
:attr:`Thresholds.mistake`, ``?!`` (NAG 6) from :attr:`Thresholds.inaccuracy`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pedina.board import Board, Outcome
from pedina.move import Move
from pedina.pdn import MoveNote, write_game
from pedina.position import Position
from pedina.scores import Score, for_white, loss_in, men

#: The NAGs of the marks, and how each is written after a move.
INACCURACY, MISTAKE, BLUNDER = 6, 2, 4
MARKS = {INACCURACY: "?!", MISTAKE: "?", BLUNDER: "??"}
#: The default thresholds, in men (``pedina analyze`` and the GUI).
DEFAULT_BETTER_LINE, DEFAULT_INACCURACY, DEFAULT_MISTAKE, DEFAULT_BLUNDER = 0.1, 0.3, 0.5, 1.0
#: Scores are taken within this many hundredths of a man (10 men) for a player's average loss:
#: a won game is won, and a proven win in 9 plies against a database win (about 94 men) is no
#: loss of 6 men worth averaging (the marks use the scores as they are).
AVERAGE_CLAMP = 1000


@dataclass
class Line:
    """One analysed line: its rank, score (side to move's view), depth, work and moves."""

    multipv: int
    score: int
    depth: int
    nodes: int
    time: float
    pv: list[Move]
    database_draw: bool = False  # as :attr:`pedina.search.Info.database_draw`

    def scored(self) -> Score:
        """The score with its kind (side to move's view)."""
        return Score.of(self.score, self.database_draw)


@dataclass
class Analysed:
    """A position of a game and what was found there: the engine's best lines, best first,
    or (with no lines) the game's end by the rules."""

    ply: int
    position: Position
    played: Move | None
    lines: list[Line]
    outcome: Outcome | None
    book: bool = False  # the played move is a move of the opening book

    @property
    def score(self) -> int:
        """The side to move's score: the best line's, or the game's end (a loss without moves, a draw)."""
        if self.lines:
            return self.lines[0].score
        return loss_in(0) if self.outcome is not None and self.outcome.winner is not None else 0

    @property
    def depth(self) -> int:
        """The depth of the best line (0 when the game is over)."""
        return self.lines[0].depth if self.lines else 0


@dataclass(frozen=True)
class Thresholds:
    """What a move must lose against the engine's best, in hundredths of a man, for the best
    line to be given as a variation (``better_line``) and to be marked ``?!``, ``?`` or ``??``."""

    better_line: int
    inaccuracy: int
    mistake: int
    blunder: int

    @staticmethod
    def in_men(better_line: float, inaccuracy: float, mistake: float, blunder: float) -> Thresholds:
        """The thresholds given in men; raises :class:`ValueError` unless ``inaccuracy <= mistake <= blunder``."""
        if blunder < mistake:
            raise ValueError(f"the blunder threshold ({blunder:g}) is below the mistake one ({mistake:g})")
        if mistake < inaccuracy:
            raise ValueError(f"the mistake threshold ({mistake:g}) is below the inaccuracy one ({inaccuracy:g})")
        return Thresholds(round(better_line * 100), round(inaccuracy * 100), round(mistake * 100), round(blunder * 100))

    def nag(self, loss: int) -> int | None:
        """The mark a move that lost ``loss`` hundredths earns: a NAG of :data:`MARKS`, or ``None``."""
        if loss >= self.blunder:
            return BLUNDER
        if loss >= self.mistake:
            return MISTAKE
        if loss >= self.inaccuracy:
            return INACCURACY
        return None


DEFAULT_THRESHOLDS = Thresholds.in_men(DEFAULT_BETTER_LINE, DEFAULT_INACCURACY, DEFAULT_MISTAKE, DEFAULT_BLUNDER)


@dataclass(frozen=True)
class Assessment:
    """A move of a game judged against the engine's best move in the position before it.

    ``loss`` is what the move gave away, in hundredths of a man from the mover's
    view (0 or less when it was as good as the best), ``average_loss`` the same
    with both scores within :data:`AVERAGE_CLAMP` and never below 0; ``nag`` is the
    move's mark (see :meth:`Thresholds.nag`); ``best`` is the engine's line from
    the position before, given from the better-line threshold on.
    """

    ply: int
    white: bool  # the mover
    loss: int
    average_loss: int
    nag: int | None
    best: Line | None


def _clamped(score: int) -> int:
    return max(-AVERAGE_CLAMP, min(AVERAGE_CLAMP, score))


def assess(analysed: list[Analysed], thresholds: Thresholds) -> list[Assessment]:
    """Every move of a game whose position before and after were analysed."""
    out = []
    for before, after in zip(analysed, analysed[1:]):
        if before.played is None or not before.lines:
            continue
        white = before.position.white_to_move
        best = before.lines[0]
        if best.pv[:1] == [before.played]:
            out.append(Assessment(before.ply, white, 0, 0, None, None))
            continue
        loss = before.score + after.score  # the mover's best, less the mover's score after the move
        average_loss = max(0, _clamped(before.score) + _clamped(after.score))
        out.append(Assessment(before.ply, white, loss, average_loss, thresholds.nag(loss),
                              best if loss >= thresholds.better_line else None))
    return out


@dataclass(frozen=True)
class PlayerSummary:
    """One player's moves judged: how many, the marks of each kind, and the average loss."""

    moves: int
    inaccuracies: int
    mistakes: int
    blunders: int
    average_loss: float  # in men, two decimals

    def text(self) -> str:
        """``3 inaccuracies, 1 mistake, 0 blunders, average loss 0.21 men (40 moves)``."""
        return (f"{_counted(self.inaccuracies, 'inaccuracy', 'inaccuracies')}, "
                f"{_counted(self.mistakes, 'mistake', 'mistakes')}, {_counted(self.blunders, 'blunder', 'blunders')}, "
                f"average loss {self.average_loss:.2f} men ({_counted(self.moves, 'move', 'moves')})")

    def as_json(self) -> dict[str, object]:
        """The summary as JSON (the GUI's, and ``pedina analyze --json``'s)."""
        return {"moves": self.moves, "inaccuracies": self.inaccuracies, "mistakes": self.mistakes,
                "blunders": self.blunders, "average_loss": self.average_loss}


def _counted(number: int, one: str, several: str) -> str:
    return f"{number} {one if number == 1 else several}"


def summarise(assessments: list[Assessment]) -> dict[bool, PlayerSummary]:
    """Each side's summary (``True`` White) of the moves judged."""
    summaries = {}
    for white in (True, False):
        mine = [item for item in assessments if item.white == white]
        marks = [item.nag for item in mine]
        average = sum(item.average_loss for item in mine) / len(mine) / 100 if mine else 0.0
        summaries[white] = PlayerSummary(len(mine), marks.count(INACCURACY), marks.count(MISTAKE),
                                         marks.count(BLUNDER), round(average, 2))
    return summaries


def ending_text(outcome: Outcome, white_to_move: bool) -> str:
    """How the game ended, in words: ``White wins: Black cannot move``, ``draw by repetition``."""
    if outcome.winner is None:
        return f"draw by {outcome.termination}"
    mover, other = ("White", "Black") if white_to_move else ("Black", "White")
    return f"{other} wins: {mover} cannot move"


def score_comment(item: Analysed) -> str:
    """The PDN comment for the position ``item`` (White's view): ``+0.35/12``, the proven
    result spelled out after the number, or how the game ended."""
    if not item.lines:
        return ending_text(item.outcome, item.position.white_to_move) if item.outcome else ""
    white = for_white(item.score, item.position.white_to_move)
    note = item.lines[0].scored().for_white(item.position.white_to_move).note("White", "Black")
    return f"{men(white)}/{item.depth}" + (f" {note}" if note else "")


def annotator(engine: str, depth: int | None, move_time: float | None) -> str:
    """The ``Annotator`` tag of a game reviewed by ``engine`` at a ``depth`` or a ``move_time`` a position."""
    strength = f"depth {depth}" if depth else f"{move_time:g} s a position"
    return f"{engine}, {strength}; scores in men from White's view"


def annotated_game(board: Board, headers: dict[str, str], result: str, analysed: list[Analysed],
                   thresholds: Thresholds, annotator: str) -> str:
    """The PDN text of the game ``board`` with each analysed move annotated: after it its mark
    (a NAG), ``book`` for a move of the opening book, the score and depth of the position it
    led to (``{+0.35/12}``), and the engine's line as a variation from the better-line threshold
    on; ``annotator`` goes in an ``Annotator`` tag."""
    notes: list[MoveNote | None] = [None] * len(board.moves)
    for judged in assess(analysed, thresholds):
        before, after = analysed[judged.ply], analysed[judged.ply + 1]
        best = judged.best
        notes[judged.ply] = MoveNote(
            nags=(judged.nag,) if judged.nag else (), comment=("book " if before.book else "") + score_comment(after),
            variation=tuple(best.pv) if best else (),
            variation_comment=f"{men(for_white(best.score, before.position.white_to_move))}/{best.depth}"
            if best else "")
    return write_game(board, {**headers, "Annotator": annotator}, result, notes)


__all__ = ["AVERAGE_CLAMP", "Analysed", "Assessment", "BLUNDER", "DEFAULT_THRESHOLDS", "INACCURACY", "Line",
           "MARKS", "MISTAKE", "PlayerSummary", "Thresholds", "annotated_game", "annotator", "assess", "ending_text",
           "score_comment", "summarise"]
