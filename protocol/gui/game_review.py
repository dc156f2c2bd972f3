"""The game review of ``pedina gui``: what one review of a page's game has found so far.

The table (:mod:`pedina.protocol.gui.table`) asks its engine for every position of the game
in turn, at a fixed depth or time a position, and hands each answer to
:meth:`GameReview.add`; the judging (losses, marks, summaries, the annotated PDN) is
:mod:`pedina.protocol.review`'s, which ``pedina analyze --annotate`` uses too, so that the
page and the command line mark a game alike at the same settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pedina.board import Board
from pedina.move import Move, MoveError, format_pdn, legal_moves, parse_move
from pedina.position import Position
from pedina.protocol.engineclient import SearchReport
from pedina.protocol.review import (DEFAULT_THRESHOLDS, MARKS, Analysed, Line, Thresholds, annotated_game,
                                    annotator, assess, summarise)
from pedina.scores import DATABASE, Score

#: The deepest search, and the longest time a position (seconds), a page may ask a review for.
MAX_REVIEW_DEPTH = 30
MAX_REVIEW_TIME = 60.0


def pv_moves(position: Position, pv: str, limit: int) -> list[Move]:
    """The legal prefix of a principal variation (Hub move text), at most ``limit`` moves."""
    moves: list[Move] = []
    for word in pv.split()[:limit]:
        try:
            move = parse_move(position, word, legal_moves(position))
        except MoveError:
            break
        moves.append(move)
        position = position.play(move)
    return moves


def moves_json(position: Position, moves: list[Move],
               as_json: Callable[[Move, str], dict[str, object]]) -> list[dict[str, object]]:
    """Each move of a line from ``position`` for the page (``as_json(move, its PDN text)``)."""
    out = []
    for move in moves:
        out.append(as_json(move, format_pdn(move, legal_moves(position))))
        position = position.play(move)
    return out


def review_line(position: Position, report: SearchReport, limit: int) -> Line | None:
    """The engine's main line in ``position`` from its answer (its last ``info`` and its move, as
    :func:`pedina.protocol.analyze.analyse` takes a search's), ``None`` without a score."""
    if report.score is None:
        return None
    pv = pv_moves(position, report.pv, limit)
    played = pv_moves(position, report.move, 1)
    if played and pv[:1] != played:  # the move is the authority for the main line
        pv = played
    database_draw = report.score.kind == DATABASE and report.score.value == 0
    return Line(1, report.score.value, report.depth or 0, report.nodes or 0, report.elapsed, pv, database_draw)


class GameReview:
    """One review of a game: the game as it was asked for, how (``depth`` or ``move_time`` a
    position, by ``engine``), and the positions analysed so far, in order from the start."""

    def __init__(self, board: Board, engine: str, depth: int | None, move_time: float | None,
                 thresholds: Thresholds = DEFAULT_THRESHOLDS) -> None:
        self.board = board.copy()
        self.engine = engine
        self.depth, self.move_time = depth, move_time
        self.thresholds = thresholds
        self.analysed: list[Analysed] = []
        self.running = True
        self.problem: str | None = None  # why the review stopped short, when it did

    @property
    def total(self) -> int:
        """The positions to analyse: every one before a move, and the last."""
        return len(self.board.moves) + 1

    def level(self) -> dict[str, object]:
        """The Hub ``level`` of every search."""
        return {"depth": self.depth} if self.depth else {"move-time": f"{self.move_time:g}"}

    def about(self, board: Board) -> bool:
        """Whether the review is of ``board``'s game (the same start and moves)."""
        return board.start == self.board.start and board.moves == self.board.moves

    def next_board(self) -> Board | None:
        """The game up to the next position to analyse (its history, for repetitions), or ``None``
        when every one is done."""
        ply = len(self.analysed)
        if ply >= self.total:
            return None
        board = Board(self.board.start)
        for move in self.board.moves[:ply]:
            board.push(move)
        return board

    def add(self, board: Board, line: Line | None) -> None:
        """The next position (``board``, from :meth:`next_board`) analysed: the engine's ``line``,
        or ``None`` where the game is over by the rules."""
        ply = len(self.analysed)
        played = self.board.moves[ply] if ply < len(self.board.moves) else None
        self.analysed.append(Analysed(ply, board.position, played, [line] if line else [], board.outcome()))

    def white_score(self, ply: int) -> Score:
        """The score found at position ``ply`` (analysed), from White's view."""
        item = self.analysed[ply]
        score = item.lines[0].scored() if item.lines else Score.of(item.score)
        return score.for_white(item.position.white_to_move)

    def as_json(self, line_json: Callable[[Position, list[Move]], list[dict[str, object]]],
                score_json: Callable[[Score], Mapping[str, object] | None]) -> dict[str, object]:
        """The ``review`` message: progress, each player's summary and the marked moves, each with
        its mark, loss (men), and the engine's better line from the position before it."""
        assessments = assess(self.analysed, self.thresholds)
        summaries = summarise(assessments)
        marks = []
        for item in assessments:
            if item.nag is None:
                continue
            before = self.analysed[item.ply]
            best = before.lines[0]
            marks.append({"ply": item.ply, "nag": item.nag, "mark": MARKS[item.nag], "loss": round(item.loss / 100, 2),
                          "better": line_json(before.position, best.pv),
                          "better_score": score_json(best.scored().for_white(before.position.white_to_move))})
        strength = f"depth {self.depth}" if self.depth else f"{self.move_time:g} s a position"
        return {"type": "review", "running": self.running, "done": len(self.analysed), "total": self.total,
                "engine": self.engine, "strength": strength, "problem": self.problem, "marks": marks,
                "summary": {"white": summaries[True].as_json(), "black": summaries[False].as_json()}}

    def annotated(self, headers: dict[str, str], result: str) -> str:
        """The game as PDN, annotated as far as the review went (as ``pedina analyze --annotate``)."""
        return annotated_game(self.board, headers, result, self.analysed, self.thresholds,
                              annotator(self.engine, self.depth, self.move_time))


__all__ = ["GameReview", "MAX_REVIEW_DEPTH", "MAX_REVIEW_TIME", "moves_json", "pv_moves", "review_line"]
