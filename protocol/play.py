"""``pedina play``: a game against the engine in the terminal.

The board is drawn with its coordinates (a-h, 1-8) and the square numbers;
moves are typed as PDN text (``23-19``, ``22x13``), Hub text or a full path.
Commands: ``help``, ``undo`` (or ``takeback``), ``hint``, ``resign``, ``draw``,
``moves``, ``flip``, ``switch``, ``save FILE``, ``new``, ``quit``. ``--tc`` puts both
players on a clock; ``--show-line`` shows the line the engine expects after its moves. With ``--pdnout FILE`` every game is
appended to FILE when it ends, or when it is left unfinished (``new``, ``quit``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace

import click

from pedina.board import Board
from pedina.move import AmbiguousMoveError, IllegalMoveError, Move, MoveError
from pedina.pdn import write_game
from pedina.position import Position, PositionError
from pedina.session import Session
from pedina.settings import EngineSettings
from pedina.timeman import Limits
from pedina.protocol.cli import FiniteRange
from pedina.protocol.engine_options import engine_options
from pedina.protocol.analyze import pdn_line
from pedina.protocol.match.options import parse_tc
from pedina.protocol.pdnfile import PdnOut
from pedina.scores import men

HELP = """\
Type a move as 23-19 (step) or 22x13 (capture; add landing squares, 22x13x6, when two
captures share start and end). Commands:
  moves           list the legal moves
  hint            ask the engine for a move
  resign          give up the game
  draw            offer a draw (Pedina takes it when it sees nothing better)
  undo, takeback  take back your last move (and the engine's answer)
  flip            turn the board round
  switch          change sides: the engine takes over your side
  save FILE       write the game so far to FILE (PDN)
  new             start a new game (same colours)
  help            this text
  quit            leave"""


def side_name(white: bool) -> str:
    return "White" if white else "Black"


def game_tags(players: dict[bool, list[str]]) -> dict[str, str]:
    """The PDN tags of a game in the terminal; ``players`` names who played each side (by
    ``white``), in turn when the person switched sides during the game."""
    return {"Event": "pedina play", "Date": time.strftime("%Y.%m.%d"),
            "White": " / ".join(players[True]), "Black": " / ".join(players[False])}


#: The engine takes a draw offered when its score is at most this (hundredths of a man).
DRAW_ACCEPTED = 10


class Clock:
    """Both sides' time on a clock of ``base`` seconds and ``inc`` seconds a move, as a chess
    clock keeps it: what a side spends on its move is taken off, then the increment added."""

    def __init__(self, base: float, inc: float) -> None:
        self.base = base
        self.inc = inc
        self.left = {True: base, False: base}

    def spend(self, white: bool, seconds: float) -> bool:
        """Take ``seconds`` off ``white``'s time; ``False`` when that ran out (no increment then)."""
        self.left[white] -= seconds
        if self.left[white] < 0:
            self.left[white] = 0.0
            return False
        self.left[white] += self.inc
        return True

    def limits(self, white: bool) -> Limits:
        """The engine's search limits when it plays ``white``."""
        return Limits(clock=self.left[white], inc=self.inc)

    def text(self) -> str:
        return f"clock: White {_minutes(self.left[True])}, Black {_minutes(self.left[False])}"


def _minutes(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}" + (f".{int(seconds * 10) % 10}" if seconds < 10 else "")


def read_move(board: Board, text: str) -> Move:
    """The legal move a person means by ``text``: any form :meth:`Board.parse_move` reads, or
    the first landing squares of a capture when they name one capture only (``22x13`` for
    ``22x13x6``). Raises :class:`MoveError` saying why in the form ``help`` teaches."""
    legal = board.legal_moves()
    squares = [int(number) for number in re.findall(r"\d+", text)]
    try:
        return board.parse_move(text)
    except AmbiguousMoveError:
        alike = [move.full_path() for move in legal if (move.start, move.end) == (squares[0], squares[-1])]
        raise MoveError(f"{text} could be {' or '.join(alike)}: give every landing square") from None
    except IllegalMoveError:
        pass
    except MoveError:
        raise MoveError(f"cannot read {text!r}: type a move as 23-19, or 22x13 for a capture (22x13x6 with "
                        "its landing squares)") from None
    begun = [move for move in legal if move.captured and [move.start, *move.path[:len(squares) - 1]] == squares]
    if len(begun) == 1:
        return begun[0]
    if begun:
        raise MoveError(f"{text} could be {' or '.join(move.full_path() for move in begun)}: "
                        "give more landing squares")
    if legal and legal[0].captured:
        raise MoveError(f"{text} is not a legal move: a capture is compulsory ("
                        + ", ".join(board.pdn(move) for move in legal) + ")")
    raise MoveError(f"{text} is not a legal move here")


class TerminalGame:
    """One person against the engine; ``ask`` reads a line (``None`` at end of input), ``say`` prints.

    The engine plays with ``settings`` (its skill, tables, book: see
    :class:`~pedina.settings.EngineSettings`) under ``limits``, or on the ``clock`` when
    there is one, which the person plays on too; ``pdnout`` receives every game that was
    played (see the module's docstring); ``show_line`` prints the line the engine expects
    after each of its moves.
    """

    def __init__(self, human_white: bool, limits: Callable[[], Limits], settings: EngineSettings, *,
                 start: Position | None = None, pdnout: PdnOut | None = None, clock: tuple[float, float] | None = None,
                 show_line: bool = False, ask: Callable[[str], str | None], say: Callable[[str], None]) -> None:
        self.human_white = human_white
        self.players = self._players()
        self.limits = limits
        self.clock_setting = clock
        self.clock = Clock(*clock) if clock else None
        self.show_line = show_line
        self.ended: tuple[str, str] | None = None  # (result, why) of a game ended off the board
        self.engine_score: int | None = None  # the engine's last score, from its side
        self.session = Session(settings)
        self.start = start or Position.start()
        self.board = Board(self.start)
        self.flipped = not human_white
        self.pdnout = pdnout
        self._recorded: list[Move] = []  # the moves of the game as last appended to pdnout
        self.ask = ask
        self.say = say

    def _players(self) -> dict[bool, list[str]]:
        return {True: ["You" if self.human_white else "Pedina"], False: ["Pedina" if self.human_white else "You"]}

    def run(self) -> None:
        """Play until the person leaves; Ctrl-C while the engine thinks leaves too, and the game
        is still appended to ``pdnout``."""
        self.say(f"You play {side_name(self.human_white)}. Type 'help' for the commands.")
        self.show()
        try:
            while True:
                over = self.over()
                if not over and self.board.position.white_to_move != self.human_white:
                    self.engine_move()
                    continue
                prompt = "Game over (new, undo or quit)> " if over else f"Your move ({side_name(self.human_white)})> "
                asked = time.perf_counter()
                line = self.ask(prompt)
                if line is None or not self.handle(line.strip(), time.perf_counter() - asked):
                    break
        except KeyboardInterrupt:
            self.say("\nInterrupted.")
        self.session.close()
        self.record()
        self.say("Bye.")

    def over(self) -> bool:
        """The game has ended, on the board or off it (resigned, drawn by agreement, on time)."""
        return self.ended is not None or self.board.outcome() is not None

    def handle(self, line: str, thought: float = 0.0) -> bool:
        """Act on one input line, typed after ``thought`` seconds (on the clock, when it is a
        move); ``False`` to leave."""
        word = line.lower()
        if not word:
            return True
        if word in ("quit", "exit", "q"):
            return False
        if word in ("help", "?", "h"):
            self.say(HELP)
        elif word in ("undo", "takeback", "back"):
            self.take_back()
        elif word == "hint":
            self.hint()
        elif word == "resign" and not self.over():
            self.end_off_board("0-1" if self.human_white else "1-0", "you resign")
        elif word == "draw" and not self.over():
            self.offer_draw()
        elif word in ("moves", "legal"):
            self.say("Legal moves: " + (" ".join(self.board.pdn(m) for m in self.board.legal_moves()) or "none"))
        elif word == "flip":
            self.flipped = not self.flipped
            self.show()
        elif word in ("switch", "swap"):
            self.human_white = not self.human_white
            if not self.board.moves:
                self.players = self._players()
            for white, name in ((True, "You" if self.human_white else "Pedina"),
                                (False, "Pedina" if self.human_white else "You")):
                if self.players[white][-1] != name:
                    self.players[white].append(name)
            self.flipped = not self.flipped
            self.say(f"You now play {side_name(self.human_white)}.")
            self.show()
        elif word == "save" or word.startswith("save "):
            self.save(line[4:].strip())
        elif word == "new":
            self.record()
            self.board = Board(self.start)
            self.players = self._players()
            self.ended = None
            self.engine_score = None
            self.clock = Clock(*self.clock_setting) if self.clock_setting else None
            self.session.new_game()
            self.say("New game.")
            self.show()
        elif self.over():
            self.say(f"The game is over ({self.result()}): type new, undo or quit.")
        else:
            try:
                move = read_move(self.board, line)
            except MoveError as error:
                self.say(f"{error}. Type 'moves' for the legal moves or 'help'.")
                return True
            if self.clock is not None and not self.clock.spend(self.human_white, thought):
                self.end_off_board("0-1" if self.human_white else "1-0", "your time ran out")
                return True
            self.play(move, "You play")
        return True

    def result(self) -> str:
        return self.ended[0] if self.ended is not None else self.board.result()

    def end_off_board(self, result: str, why: str) -> None:
        """End the game with ``result`` though the board would go on: resigned, agreed, on time."""
        self.ended = (result, why)
        self.say(f"Game over: {why}. Result {result}.")
        self.record()

    def offer_draw(self) -> None:
        if self.engine_score is not None and self.engine_score <= DRAW_ACCEPTED:
            self.end_off_board("1/2-1/2", "draw agreed")
        else:
            self.say("Pedina declines the draw and plays on.")

    def play(self, move: Move, who: str, detail: str = "") -> None:
        text = self.board.pdn(move)
        self.board.push(move)
        self.say(f"{who} {text}{detail}")
        self.show((move.start, move.end))
        self.announce_end()

    def engine_move(self) -> None:
        self.say("Pedina is thinking...")
        white = self.board.position.white_to_move
        started = time.perf_counter()
        answer = self.session.think(self.board, self.clock.limits(white) if self.clock else self.limits())
        if self.clock is not None and not self.clock.spend(white, time.perf_counter() - started):
            self.end_off_board("0-1" if white else "1-0", "Pedina's time ran out")
            return
        assert answer.move is not None  # the game goes on, so there is a move
        result = answer.result
        self.engine_score = result.score if result is not None else None
        detail = ""
        if result is not None and answer.book:
            detail = f"   (from the opening book, value {men(result.score)} for Pedina)"
        elif result is not None:
            note = result.scored().note("Pedina", "you")
            detail = f"   (score {men(result.score)} for Pedina{', ' + note if note else ''}, depth {result.depth})"
        before = self.board.position
        self.play(answer.move, "Pedina plays", detail)
        if self.show_line and result is not None and len(result.pv) > 1:
            self.say("Pedina expects: " + " ".join(pdn_line(before, list(result.pv))[1:]))

    def save(self, path: str) -> None:
        """``save FILE``: the game so far, written to FILE (replacing it)."""
        if not path:
            self.say("Say where: save FILE")
            return
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(write_game(self.board, self.tags(), self.result()))
        except OSError as error:
            self.say(f"Cannot save to {path}: {error.strerror or error}.")
            return
        self.say(f"Game saved to {path}.")

    def record(self) -> None:
        """Append the game to ``pdnout`` unless it has no moves or is there already as it stands."""
        if self.pdnout is None or not self.board.moves or self.board.moves == self._recorded:
            return
        self.pdnout.write(write_game(self.board, self.tags(), self.result()))
        self._recorded = list(self.board.moves)
        self.say(f"Game appended to {self.pdnout.path}.")

    def tags(self) -> dict[str, str]:
        tags = game_tags(self.players)
        if self.ended is not None:
            tags["Termination"] = self.ended[1]
        if self.clock_setting is not None:
            tags["TimeControl"] = f"{self.clock_setting[0]:g}+{self.clock_setting[1]:g}"
        return tags

    def hint(self) -> None:
        if self.over():
            self.say("The game is over: no hint.")
            return
        # An analysis is never weakened: the hint is the full-strength engine's, whatever the skill.
        answer = self.session.think(self.board, replace(self.limits(), analysis=True))
        if answer.move is None:
            self.say("No hint available.")
            return
        score = ""
        if answer.result is not None:
            note = answer.result.scored().note("you", "Pedina")
            score = (f"   (score {men(answer.result.score)} for you{', ' + note if note else ''}, "
                     f"depth {answer.result.depth})")
        self.say(f"Hint: {self.board.pdn(answer.move)}{score}")

    def take_back(self) -> None:
        if self.ended is not None:
            self.say(f"The game is over ({self.ended[1]}): type new or quit.")
            return
        if not self.board.moves:
            self.say("Nothing to take back.")
            return
        self.board.pop()
        # Back to a position where it is the person's turn (their move and the engine's reply).
        if self.board.position.white_to_move != self.human_white and self.board.moves:
            self.board.pop()
        self.say("Taken back.")
        self.show()

    def announce_end(self) -> None:
        outcome = self.board.outcome()
        if outcome is None:
            return
        self.record()
        if outcome.winner is None:
            why = str(outcome.termination)
            self.say(f"Game over: draw by {why}. Result {outcome.result()}.")
        else:
            you = "You win" if outcome.winner == self.human_white else "Pedina wins"
            self.say(f"Game over: {side_name(outcome.winner)} wins, {side_name(not outcome.winner)} "
                     f"cannot move. {you}. Result {outcome.result()}.")

    def show(self, marked: tuple[int, ...] = ()) -> None:
        self.say("")
        self.say(self.board.position.diagram(self.flipped, marked))
        clock = f"   ({self.clock.text()})" if self.clock is not None else ""
        self.say(f"Ply {len(self.board.moves)}, {side_name(self.board.position.white_to_move)} to move.{clock}")


def _read(prompt: str) -> str | None:
    try:
        return input(prompt)
    except (EOFError, KeyboardInterrupt):
        click.echo()
        return None


@click.command()
@click.option("--color", "--colour", "colour", type=click.Choice(["white", "black"]), default="white",
              show_default=True, help="The side you play.")
@click.option("--time", "move_time", type=FiniteRange(0.01, 600), default=None,
              help="Engine seconds per move (default 1).")
@click.option("--depth", type=click.IntRange(1, 60), default=None, help="Engine search depth instead of a time.")
@click.option("--tc", default=None, metavar="SECONDS[+INC]",
              help="Play on a clock, both of you: e.g. 5:00+3 (five minutes, 3 s more a move) or 60+1.")
@click.option("--position", "start", default=None, help="Start from this FEN or Hub position.")
@click.option("--pdnout", "pdn_path", type=click.Path(dir_okay=False), default=None,
              help="Append every game to this PDN file when it ends or is left.")
@click.option("--show-line", is_flag=True, help="After each engine move, show the line it expects.")
@engine_options()
def play(colour: str, move_time: float | None, depth: int | None, tc: str | None, start: str | None,
         pdn_path: str | None, show_line: bool, settings: EngineSettings) -> None:
    """Play a game against Pedina in the terminal."""
    if sum(given is not None for given in (move_time, depth, tc)) > 1:
        raise click.UsageError("give one of --time, --depth and --tc")
    clock: tuple[float, float] | None = None
    if tc is not None:
        base, inc, moves = parse_tc(tc)
        if moves is not None:
            raise click.BadParameter("a clock of moves in a session is for matches: give SECONDS[+INC]",
                                     param_hint="--tc")
        clock = (base, inc)
    try:
        position = Position.parse(start) if start else None
    except PositionError as error:
        raise click.BadParameter(str(error), param_hint="--position") from None

    def limits() -> Limits:
        return Limits(depth=depth) if depth is not None else Limits(move_time=move_time or 1.0)

    pdnout = PdnOut.open_option(pdn_path)
    try:
        TerminalGame(colour == "white", limits, settings, start=position, pdnout=pdnout, clock=clock,
                     show_line=show_line, ask=_read, say=click.echo).run()
    finally:
        if pdnout is not None:
            pdnout.close()
