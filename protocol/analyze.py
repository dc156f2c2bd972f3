"""``pedina analyze``: the engine's view of a position, of a file of positions, or of PDN games.

TARGET is a FEN or Hub position, or a file (``-`` for standard input) that holds
FEN or Hub lines (each one a position to analyse, as ``match --openings`` reads
them) or PDN games in any encoding :func:`~pedina.pdn.decode_pdn` reads. The
games are analysed one after the other (``--game N`` picks one): every position
before a move, and the final one. A position where the game is over by the
rules gets no search; its row says how the game ended.

The outputs go together:

- the table (unless ``--json`` or ``--jsonl``): a row per position, printed as
  soon as it is analysed;
- ``--json``: one JSON document at the end; ``--jsonl``: a JSON object a line,
  each printed as soon as its position (or game) is reached;
- ``--annotate FILE``: the games as PDN, each move followed by the score and
  depth of the position it led to (``{+0.35/12}``), ``$6`` (``?!``), ``$2``
  (``?``) or ``$4`` (``??``) after a move that lost ``--inaccuracy``,
  ``--mistake`` or ``--blunder`` men against the engine's best move, and the
  engine's line as a variation after a move that lost at least
  ``--better-line`` men (see :mod:`pedina.protocol.review`, which the GUI's game
  review shares);
- ``--plot FILE``: a picture of the evaluation over each game, the marked moves shown.

With games, the table ends each with a line per player (the inaccuracies,
mistakes and blunders, and the average loss in men; ``summary`` in JSON), then
its result.

Ctrl-C (or SIGTERM) stops the analysis: every output keeps what was finished
(the annotated PDN has every move, annotated as far as the analysis went) and
the exit status is 130.

Scores are in men. The table, the annotations and the plot show White's point
of view; in JSON, ``score`` is the side to move's and ``white`` White's, and
``proven`` names the winner and the plies of a proven result (``null`` for an
estimate). A proven win in N plies is ``100 - N/100`` men (``99.97``); no
estimate is ever that large. The endgame database's results (the shipped
tables, ``--egdb DIR`` for others, ``--no-egdb`` for none) are exact too, about
``94`` men, but carry no number of plies: the table says "(White wins (endgame
database))" and JSON ``database`` names the winner.

A played move that is a move of the opening book (the shipped one, see
:mod:`pedina.book`; ``--no-book`` leaves this out) is marked ``(book)`` in the
table, ``"book": true`` in JSON and ``book`` at the start of its annotation.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import threading
from dataclasses import dataclass
from typing import IO, TextIO

import click

from pedina import __version__
from pedina.board import Board, Outcome
from pedina.book import Book, BookError
from pedina.move import Move
from pedina.pdn import MoveNote, PdnError, decode_pdn, move_label, read_fen_lines, read_game, read_games, write_game
from pedina.position import Position, PositionError
from pedina.search import Info
from pedina.session import Session
from pedina.settings import EngineSettings
from pedina.timeman import Limits
from pedina.protocol.cli import FiniteRange
from pedina.protocol.engine_options import engine_options
from pedina.protocol.plotting import check_plot_path, saved_figure
from pedina.protocol.interrupts import interrupt_requests
from pedina.protocol.review import (DEFAULT_BETTER_LINE, DEFAULT_BLUNDER, DEFAULT_INACCURACY, DEFAULT_MISTAKE,
                                     MARKS, Analysed, Line, Thresholds, annotated_game, annotator, assess, ending_text,
                                     summarise)
from pedina.scores import for_white, men

#: The plot's vertical scale: ``tanh(men / PLOT_SCALE)``, so that a third of a man in the
#: opening shows as clearly as the difference between a piece and two later on, and a won
#: game (a proven result, a known ending) nears the edge without flattening the rest.
PLOT_SCALE = 3.0
#: The scores in men marked on the plot's vertical axis.
PLOT_TICKS = (-10.0, -3.0, -1.0, 0.0, 1.0, 3.0, 10.0)
#: The labels' font size (points), and how wide a character of it is taken to be.
PLOT_LABEL_SIZE = 7.0
_PLOT_CHAR_WIDTH = 0.62


@dataclass
class Subject:
    """One thing to analyse: a game of a PDN file, or a position.

    ``number`` counts the games (or the positions of a file of positions) from 1;
    it is 0 for a position given on the command line. ``result`` is ``None`` for a
    position, which is analysed on its own.
    """

    number: int
    board: Board
    headers: dict[str, str]
    result: str | None

    @property
    def title(self) -> str:
        """``game 2: A - B``, ``position 3``, or empty for a position of the command line."""
        if self.result is None:
            return f"position {self.number}" if self.number else ""
        players = f"{self.headers.get('White', '?')} - {self.headers.get('Black', '?')}"
        return f"game {self.number}: {players}"


def pdn_line(position: Position, moves: list[Move]) -> list[str]:
    """The moves of a line from ``position`` in PDN text."""
    texts = []
    board = Board(position)
    for move in moves:
        texts.append(board.pdn(move))
        board.push(move)
    return texts


def analyse(session: Session, board: Board, limits: Limits, cancel: threading.Event | None = None) -> list[Line]:
    """The best lines of ``board``'s position (as many as ``session.multipv``), best first; a
    set ``cancel`` stops the search (see :meth:`~pedina.session.Session.think`)."""
    latest: dict[int, Info] = {}

    def on_info(info: Info) -> None:
        latest[info.multipv] = info

    result = session.think(board, limits, on_info, cancel).result
    lines = [Line(i.multipv, i.score, i.depth, i.nodes, i.time, list(i.pv), i.database_draw)
             for _, i in sorted(latest.items())]
    if result is not None and result.best is not None and (not lines or lines[0].pv[:1] != [result.best]):
        # The result is the authority for the main line (a search stopped before its first
        # iteration finished has reported none).
        main = Line(1, result.score, result.depth, result.nodes, result.time, list(result.pv) or [result.best],
                    result.database_draw)
        lines = [main] + [line for line in lines if line.multipv != 1]
    return lines


# -- what to analyse ----------------------------------------------------------------------------


def _looks_like_a_file(target: str) -> bool:
    return os.sep in target or bool(re.search(r"\.[A-Za-z]\w{0,4}$", target))


def load_subjects(target: str, game_number: int | None = None) -> tuple[str, list[Subject]]:
    """What TARGET asks to analyse: ``("position", [one])`` for a position, ``("positions", ...)``
    for a file of FEN lines, ``("games", ...)`` for PDN; ``game_number`` keeps only that one.

    Raises :class:`click.BadParameter` saying what is wrong: a missing or unreadable file,
    text that is neither a position nor PDN, a game number the file does not have.
    """
    if target == "-" or os.path.isfile(target):
        source = "standard input" if target == "-" else target
        try:
            data = sys.stdin.buffer.read() if target == "-" else open(target, "rb").read()
        except OSError as error:
            raise click.BadParameter(f"cannot read {source}: {error.strerror or error}",
                                     param_hint="TARGET") from None
        return _subjects_of_text(decode_pdn(data), source, game_number)
    if os.path.isdir(target):
        raise click.BadParameter(f"{target} is a folder, not a PDN file", param_hint="TARGET")
    try:
        position = Position.parse(target)
    except PositionError as error:
        if _looks_like_a_file(target):
            raise click.BadParameter(f"{target}: no such file", param_hint="TARGET") from None
        raise click.BadParameter(str(error), param_hint="TARGET") from None
    if game_number is not None:
        raise click.BadParameter("--game is for a file of games or positions, not for one position",
                                 param_hint="--game")
    return "position", [Subject(0, Board(position), {}, None)]


def _subjects_of_text(text: str, source: str, game_number: int | None) -> tuple[str, list[Subject]]:
    """The positions or games of a file's text; a broken game costs itself (or the moves from
    the one that cannot be played), with a warning, not the file."""

    def warn(error: PdnError) -> None:
        click.echo(f"Warning: {source}: {error}", err=True)

    try:
        positions = read_fen_lines(text)
    except PdnError as error:
        raise click.BadParameter(f"{source}: {error}", param_hint="TARGET") from None
    try:
        if positions is None and game_number is not None:
            games = [read_game(text, game_number, on_error=warn)]  # another game's mistake is no matter
        else:
            games = read_games(text, on_error=warn) if positions is None else []
    except PdnError as error:
        raise click.BadParameter(f"{source}: {error}", param_hint="--game") from None
    if positions is not None:
        kind, subjects = "positions", [Subject(n, Board(p), {}, None) for n, p in enumerate(positions, start=1)]
    else:
        kind = "games"
        subjects = [Subject(game.number, game.board, dict(game.headers), game.result) for game in games]
    what = "game" if kind == "games" else "position"
    if not subjects:
        raise click.BadParameter(f"{source} holds no {what}", param_hint="TARGET")
    if game_number is not None and kind == "positions":
        if game_number > len(subjects):
            raise click.BadParameter(f"there is no {what} {game_number}: {source} has {len(subjects)} {what}"
                                     f"{'' if len(subjects) == 1 else 's'}", param_hint="--game")
        subjects = [subjects[game_number - 1]]
    return kind, subjects


# -- the outputs ---------------------------------------------------------------------------------


def line_json(position: Position, line: Line) -> dict[str, object]:
    """One line as JSON: scores from the side to move's view (``score``) and White's (``white``)."""
    pv = pdn_line(position, line.pv)
    return {"multipv": line.multipv, "move": pv[0] if pv else None,
            **line.scored().json_fields(position.white_to_move), "depth": line.depth,
            "nodes": line.nodes, "time": round(line.time, 3), "pv": pv}


def position_json(item: Analysed) -> dict[str, object]:
    """One analysed position as JSON (``outcome`` set, and no lines, where the game is over)."""
    position = item.position
    played = Board(position).pdn(item.played) if item.played is not None else None
    outcome = None
    if item.outcome is not None:
        winner = item.outcome.winner
        outcome = {"termination": item.outcome.termination.value,
                   "winner": None if winner is None else "white" if winner else "black"}
    return {"ply": item.ply, "fen": position.fen(), "hub": position.hub(),
            "to_move": "white" if position.white_to_move else "black", "played": played, "book": item.book,
            "lines": [line_json(position, line) for line in item.lines], "outcome": outcome}


def table_row(label: str, played: str, item: Analysed, line: Line | None) -> str:
    """A row of the table: scores from White's view, a proven result spelled out."""
    position = item.position
    if line is None:
        ending = ending_text(item.outcome, position.white_to_move) if item.outcome else "no line"
        return f"{label:>5}  {played:<12} {'':>7} {'':>5}  ({ending})"
    white = for_white(line.score, position.white_to_move)
    pv = pdn_line(position, line.pv)
    note = line.scored().for_white(position.white_to_move).note("White", "Black")
    return (f"{label:>5}  {played:<12} {men(white):>7} {line.depth:>5}  {pv[0] if pv else '-':<12} "
            f"{' '.join(pv)}{'  (' + note + ')' if note else ''}")


def plot_game(subject: Subject, analysed: list[Analysed], thresholds: Thresholds, path: str) -> None:
    """Save a picture of the evaluation (White's view, in men, on the :data:`PLOT_SCALE` scale)
    after each ply of ``subject``, the mistakes and blunders marked with their moves."""
    plies = [item.ply for item in analysed]
    values = [_plotted(for_white(item.score, item.position.white_to_move) / 100) for item in analysed]
    white_first = subject.board.start.white_to_move
    width, height = 10.0, 4.5
    with saved_figure(path, width, height) as (figure, axes):
        axes.axhline(0.0, color="grey", linewidth=0.8)
        axes.fill_between(plies, values, 0.0, alpha=0.2)
        axes.plot(plies, values, color="black", linewidth=1.2, label="evaluation (White's view)")
        judged = [item for item in assess(analysed, thresholds) if item.nag]
        for nag, colour, label in ((6, "gold", "inaccuracy (?!)"), (2, "orange", "mistake (?)"),
                                   (4, "red", "blunder (??)")):
            marked = [item for item in judged if item.nag == nag]
            if marked:
                axes.scatter([item.ply + 1 for item in marked], [values[item.ply + 1] for item in marked],
                             color=colour, zorder=3, label=label)
        span = max(1, len(subject.board.moves))
        # Where things are on the axes, in points (the axes take about 85% by 80% of the figure).
        axes_width, axes_height = width * 72 * 0.85, height * 72 * 0.8
        placed: list[tuple[float, float, float, float]] = []
        # Each label goes at the first height, towards the middle of the plot first, where it
        # stays inside the axes and clears every label placed; where there is none, the mark
        # stays unlabelled (the annotated game names every one) rather than be written over.
        for item in judged:
            move = subject.board.moves[item.ply]
            text = (f"{move_label(item.ply, white_first)} {Board(analysed[item.ply].position).pdn(move)}"
                    + (MARKS[item.nag] if item.nag else ""))
            x = item.ply + 1
            centre = x / span * axes_width
            half = len(text) * PLOT_LABEL_SIZE * _PLOT_CHAR_WIDTH / 2
            mark = (values[x] + 1.05) / 2.1 * axes_height
            offsets = sorted((10, 22, 34, -12, -24, -36), key=lambda offset: (offset * values[x] > 0, abs(offset)))
            for offset in offsets:
                box = (centre - half, mark + offset - PLOT_LABEL_SIZE / 2, centre + half, mark + offset + PLOT_LABEL_SIZE / 2)
                inside = box[0] >= 0 and box[2] <= axes_width and box[1] >= 0 and box[3] <= axes_height
                if inside and not any(box[0] < other[2] and other[0] < box[2] and box[1] < other[3]
                                      and other[1] < box[3] for other in placed):
                    placed.append(box)
                    axes.annotate(text, (x, values[x]), textcoords="offset points", xytext=(0, offset),
                                  ha="center", va="center", fontsize=PLOT_LABEL_SIZE)
                    break
        axes.set_xlim(0, span)
        axes.set_ylim(-1.05, 1.05)
        axes.set_yticks([_plotted(men) for men in PLOT_TICKS], [f"{men:+g}" if men else "0" for men in PLOT_TICKS])
        axes.set_xlabel("ply")
        axes.set_ylabel("men, White's view")
        axes.set_title(subject.title or "evaluation")
        axes.legend(loc="best", fontsize=8)


def _plotted(men: float) -> float:
    """Where a score of ``men`` goes on the plot's vertical axis (see :data:`PLOT_SCALE`)."""
    return math.tanh(men / PLOT_SCALE)


def plot_path_for(path: str, subject: Subject, several: bool) -> str:
    """The picture file of ``subject``: ``path`` itself, or ``name-N.ext`` when there are several."""
    if not several:
        return path
    stem, extension = os.path.splitext(path)
    return f"{stem}-{subject.number}{extension}"


# -- the command ----------------------------------------------------------------------------------


@dataclass
class AnalysisSettings:
    """How ``pedina analyze`` was asked to work and what to write."""

    limits: Limits
    engine_settings: EngineSettings
    table: bool
    json_document: bool
    jsonl: bool
    annotate: str | None
    plot: str | None
    thresholds: Thresholds


def _emit(stream: TextIO, text: str) -> None:
    stream.write(text + "\n")
    stream.flush()


def run_analysis(kind: str, subjects: list[Subject], settings: AnalysisSettings) -> bool:
    """Analyse ``subjects`` (of ``kind``, see :func:`load_subjects`) and write every output asked
    for; ``False`` when interrupted (the outputs then hold what was finished)."""
    out = sys.stdout
    session = Session(settings.engine_settings, report=lambda text: click.echo(f"Warning: {text}", err=True))
    session.prepare()  # the tables opened (a broken one dropped, with a warning) and the book read now
    try:
        book = session.opening_book()  # the played moves found in it are marked
    except (OSError, BookError) as error:
        raise click.ClickException(f"the opening book cannot be read: {error}") from None
    annotated: IO[str] | None = None
    if settings.annotate is not None:
        try:
            annotated = open(settings.annotate, "w", encoding="utf-8")
        except OSError as error:
            raise click.BadParameter(f"cannot write {settings.annotate}: {error.strerror or error}",
                                     param_hint="--annotate") from None
    tag = annotator(f"Pedina {__version__}", settings.limits.depth, settings.limits.move_time)
    done: list[tuple[Subject, list[Analysed]]] = []
    total = sum(len(subject.board.moves) + 1 for subject in subjects)
    progress = not settings.table and sys.stderr.isatty()
    count = 0
    interrupted = False
    if settings.table:
        _emit(out, f"{'ply':>5}  {'played':<12} {'white':>7} {'depth':>5}  {'best':<12} pv")
    try:
        with interrupt_requests() as interruption:
            for subject in subjects:
                if interruption.is_set():
                    break
                analysed: list[Analysed] = []
                done.append((subject, analysed))
                if settings.table and subject.title and len(subjects) > 1:
                    _emit(out, subject.title)
                if settings.jsonl and subject.result is not None:
                    _emit(out, json.dumps({"game": subject.number, "headers": subject.headers,
                                           "result": subject.result}))
                board = Board(subject.board.start)  # replayed, so the search sees the game's history
                moves = subject.board.moves
                for ply in range(len(moves) + 1):
                    outcome = board.outcome()
                    lines = analyse(session, board, settings.limits, interruption) if outcome is None else []
                    if interruption.is_set():
                        break  # this position's search was cut short: it is not reported as analysed
                    played = moves[ply] if ply < len(moves) else None
                    item = Analysed(ply, board.position, played, lines, outcome, _in_book(book, board, played))
                    analysed.append(item)
                    if settings.table:
                        label = move_label(ply, subject.board.start.white_to_move)
                        played_text = board.pdn(played) + (" (book)" if item.book else "") if played is not None else ""
                        _emit(out, table_row(label, played_text, item, lines[0] if lines else None))
                        for line in lines[1:]:
                            _emit(out, table_row("", f"  #{line.multipv}", item, line))
                    if settings.jsonl:
                        _emit(out, json.dumps({**_place(subject), **position_json(item)}))
                    count += 1
                    if progress:
                        click.echo(f"\ranalysed {count}/{total}", nl=False, err=True)
                    if played is not None:
                        board.push(played)
                _finish_subject(subject, analysed, settings, annotated, tag, len(subjects) > 1, out)
            interrupted = interruption.is_set()
    finally:
        session.close()
        if progress:
            click.echo(err=True)
        if annotated is not None:
            for subject in subjects[len(done):]:  # not reached: kept as they were, so no game is lost
                if subject.result is not None:
                    _append_game(annotated, write_game(subject.board, subject.headers, subject.result))
            annotated.close()
    if settings.json_document:
        _emit(out, json.dumps(_document(kind, done, settings, interrupted), indent=2))
    return not interrupted


def _in_book(book: Book | None, board: Board, move: Move | None) -> bool:
    """``move`` is one of the book's moves in ``board``'s position (a broken line of the book: no)."""
    if book is None or move is None:
        return False
    try:
        return any(choice.move == move for choice in book.moves(board))
    except BookError:
        return False


def _finish_subject(subject: Subject, analysed: list[Analysed], settings: AnalysisSettings, annotated: IO[str] | None,
                    tag: str, several: bool, out: TextIO) -> None:
    """What is written once a subject is analysed (or interrupted): the table's players'
    summaries and result line, the annotated game (``tag`` its annotator), the picture."""
    if settings.table and subject.result is not None:
        summaries = summarise(assess(analysed, settings.thresholds))
        for white in (True, False):
            _emit(out, f"{'White' if white else 'Black'} ({subject.headers.get('White' if white else 'Black', '?')}): "
                       f"{summaries[white].text()}")
        if len(analysed) == len(subject.board.moves) + 1:
            _emit(out, f"result {subject.result}")
    if annotated is not None and subject.result is not None:
        _append_game(annotated, annotated_game(subject.board, subject.headers, subject.result, analysed,
                                               settings.thresholds, tag))
    if settings.plot is not None and subject.result is not None and len(analysed) > 1:
        plot_game(subject, analysed, settings.thresholds, plot_path_for(settings.plot, subject, several))


def _append_game(stream: IO[str], text: str) -> None:
    """A game's PDN after those already in ``stream``, a blank line between them."""
    stream.write(("\n" if stream.tell() else "") + text)
    stream.flush()


def _document(kind: str, done: list[tuple[Subject, list[Analysed]]], settings: AnalysisSettings,
              interrupted: bool) -> dict[str, object]:
    """The ``--json`` document of what was analysed."""
    document: dict[str, object] = {"limits": {"depth": settings.limits.depth, "time": settings.limits.move_time},
                                   "multipv": settings.engine_settings.multipv, "interrupted": interrupted}

    if kind == "position":
        if done and done[0][1]:
            document.update(position_json(done[0][1][0]))
    elif kind == "positions":
        document["positions"] = [{**_place(subject), **position_json(analysed[0])}
                                 for subject, analysed in done if analysed]
    else:
        document["games"] = [{**_place(subject), "headers": subject.headers, "result": subject.result,
                              "positions": [position_json(item) for item in analysed],
                              "summary": _summary_json(analysed, settings.thresholds)}
                             for subject, analysed in done]
    return document


def _summary_json(analysed: list[Analysed], thresholds: Thresholds) -> dict[str, object]:
    """Each player's summary (see :func:`pedina.protocol.review.summarise`) and the marked moves
    (``marks``: ply and NAG), as JSON."""
    assessments = assess(analysed, thresholds)
    summaries = summarise(assessments)
    return {"white": summaries[True].as_json(), "black": summaries[False].as_json(),
            "marks": [{"ply": item.ply, "nag": item.nag} for item in assessments if item.nag]}


def _place(subject: Subject) -> dict[str, object]:
    """Where a subject is in its file, as JSON: ``{"game": 2}``, ``{"position": 3}``, or nothing."""
    if not subject.number:
        return {}
    return {"game" if subject.result is not None else "position": subject.number}


@click.command()
@click.argument("target")
@click.option("--depth", type=click.IntRange(1, 60), default=None, help="Search depth per position.")
@click.option("--time", "move_time", type=FiniteRange(0.01, 3600), default=None,
              help="Seconds per position (default 1 when no depth is given).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (at the end) instead of a table.")
@click.option("--jsonl", "as_jsonl", is_flag=True,
              help="Print a JSON object a line, each as soon as its position is analysed, instead of a table.")
@click.option("--game", "game_number", type=click.IntRange(1), default=None,
              help="Analyse only this game of a PDN file (or position of a file of positions), counted from 1.")
@click.option("--annotate", "annotate_path", type=click.Path(dir_okay=False), default=None,
              help="Write the games as PDN with scores, ?/?? marks and better lines.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False), default=None,
              help="Save a picture of the evaluation over the game (several games: FILE-N.png). "
                   "Needs matplotlib.")
@click.option("--better-line", type=FiniteRange(0.01, 100), default=DEFAULT_BETTER_LINE, show_default=True,
              help="Men a move must lose against the best one for --annotate to give the best line.")
@click.option("--inaccuracy", type=FiniteRange(0.01, 100), default=None,
              help=f"Men a move must lose against the best one to be marked ?! ($6) by --annotate and --plot "
                   f"(default {DEFAULT_INACCURACY:g}, or --mistake if lower).")
@click.option("--mistake", type=FiniteRange(0.01, 100), default=DEFAULT_MISTAKE, show_default=True,
              help="Men a move must lose against the best one to be marked ? ($2).")
@click.option("--blunder", type=FiniteRange(0.01, 100), default=DEFAULT_BLUNDER, show_default=True,
              help="Men a move must lose against the best one to be marked ?? ($4).")
@engine_options(without=("play",))
def analyze(target: str, depth: int | None, move_time: float | None, as_json: bool, as_jsonl: bool,
            game_number: int | None, annotate_path: str | None, plot_path: str | None, better_line: float,
            inaccuracy: float | None, mistake: float, blunder: float, settings: EngineSettings) -> None:
    """Evaluate TARGET: a FEN or Hub position, a file of FEN lines, or the games of a PDN file
    (every move; - reads standard input).

    \b
    Examples:
      pedina analyze "W:W21-32:B1-12" --depth 8 --multipv 3
      pedina analyze game.pdn --time 0.5 --json
      pedina analyze match.pdn --game 17 --depth 8 --annotate g17.pdn --plot g17.png
      pedina analyze games.pdn --depth 6 --jsonl > analysis.jsonl
    """
    if depth is not None and move_time is not None:
        raise click.UsageError("give --depth or --time, not both")
    if as_json and as_jsonl:
        raise click.UsageError("give --json or --jsonl, not both")
    try:
        thresholds = Thresholds.in_men(better_line, min(DEFAULT_INACCURACY, mistake) if inaccuracy is None
                                       else inaccuracy, mistake, blunder)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--blunder" if blunder < mistake else "--mistake") from None
    if plot_path is not None:
        check_plot_path(plot_path, "--plot")
    kind, subjects = load_subjects(target, game_number)
    if (annotate_path or plot_path) and kind != "games":
        raise click.UsageError("--annotate and --plot are for the games of a PDN file")
    limits = (Limits(depth=depth, analysis=True) if depth is not None
              else Limits(move_time=move_time or 1.0, analysis=True))
    request = AnalysisSettings(limits, settings, not (as_json or as_jsonl), as_json, as_jsonl, annotate_path,
                               plot_path, thresholds)
    if not run_analysis(kind, subjects, request):
        click.echo("interrupted: the outputs hold the positions analysed so far", err=True)
        sys.exit(130)
