"""``pedina play``: a game against the engine in the terminal.

The board is drawn with its coordinates (a-h, 1-8) and the square numbers;
moves are typed as PDN text (``23-19``, ``22x13``), Hub text or a full path.
Commands: ``help``, ``undo`` (or ``takeback``), ``hint``, ``moves``, ``flip``,
``switch``, ``save FILE``, ``new``, ``quit``. With ``--pdnout FILE`` every game is
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
from pedina.protocol.pdnfile import PdnOut
from pedina.protocol.scores import men, proven_note

HELP = """\
Type a move as 23-19 (step) or 22x13 (capture; add landing squares, 22x13x6, when two
captures share start and end). Commands:
  moves           list the legal moves
  hint            ask the engine for a move
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
    :class:`~pedina.settings.EngineSettings`); ``pdnout`` receives every game that was
    played (see the module's docstring).
    """

    def __init__(self, human_white: bool, limits: Callable[[], Limits], settings: EngineSettings, *,
                 start: Position | None = None, pdnout: PdnOut | None = None,
                 ask: Callable[[str], str | None], say: Callable[[str], None]) -> None:
        self.human_white = human_white
        self.players = self._players()
        self.limits = limits
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
                outcome = self.board.outcome()
                if outcome is None and self.board.position.white_to_move != self.human_white:
                    self.engine_move()
                    continue
                prompt = ("Game over (new, undo or quit)> " if outcome
                          else f"Your move ({side_name(self.human_white)})> ")
                line = self.ask(prompt)
                if line is None or not self.handle(line.strip()):
                    break
        except KeyboardInterrupt:
            self.session.stop()
            self.say("\nInterrupted.")
        self.record()
        self.say("Bye.")

    def handle(self, line: str) -> bool:
        """Act on one input line; ``False`` to leave."""
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
            self.session.new_game()
            self.say("New game.")
            self.show()
        elif self.board.outcome() is not None:
            self.say(f"The game is over ({self.board.result()}): type new, undo or quit.")
        else:
            try:
                move = read_move(self.board, line)
            except MoveError as error:
                self.say(f"{error}. Type 'moves' for the legal moves or 'help'.")
                return True
            self.play(move, "You play")
        return True

    def play(self, move: Move, who: str, detail: str = "") -> None:
        text = self.board.pdn(move)
        self.board.push(move)
        self.say(f"{who} {text}{detail}")
        self.show((move.start, move.end))
        self.announce_end()

    def engine_move(self) -> None:
        self.say("Pedina is thinking...")
        answer = self.session.think(self.board, self.limits())
        assert answer.move is not None  # the game goes on, so there is a move
        result = answer.result
        detail = ""
        if result is not None and answer.book:
            detail = f"   (from the opening book, value {men(result.score)} for Pedina)"
        elif result is not None:
            note = proven_note(result.score, "Pedina", "you")
            detail = f"   (score {men(result.score)} for Pedina{', ' + note if note else ''}, depth {result.depth})"
        self.play(answer.move, "Pedina plays", detail)

    def save(self, path: str) -> None:
        """``save FILE``: the game so far, written to FILE (replacing it)."""
        if not path:
            self.say("Say where: save FILE")
            return
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(write_game(self.board, game_tags(self.players)))
        except OSError as error:
            self.say(f"Cannot save to {path}: {error.strerror or error}.")
            return
        self.say(f"Game saved to {path}.")

    def record(self) -> None:
        """Append the game to ``pdnout`` unless it has no moves or is there already as it stands."""
        if self.pdnout is None or not self.board.moves or self.board.moves == self._recorded:
            return
        self.pdnout.write(write_game(self.board, game_tags(self.players)))
        self._recorded = list(self.board.moves)
        self.say(f"Game appended to {self.pdnout.path}.")

    def hint(self) -> None:
        if self.board.outcome() is not None:
            self.say("The game is over: no hint.")
            return
        # An analysis is never weakened: the hint is the full-strength engine's, whatever the skill.
        answer = self.session.think(self.board, replace(self.limits(), analysis=True))
        if answer.move is None:
            self.say("No hint available.")
            return
        score = ""
        if answer.result is not None:
            note = proven_note(answer.result.score, "you", "Pedina")
            score = (f"   (score {men(answer.result.score)} for you{', ' + note if note else ''}, "
                     f"depth {answer.result.depth})")
        self.say(f"Hint: {self.board.pdn(answer.move)}{score}")

    def take_back(self) -> None:
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
        self.say(f"Ply {len(self.board.moves)}, {side_name(self.board.position.white_to_move)} to move.")


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
@click.option("--position", "start", default=None, help="Start from this FEN or Hub position.")
@click.option("--pdnout", "pdn_path", type=click.Path(dir_okay=False), default=None,
              help="Append every game to this PDN file when it ends or is left.")
@engine_options()
def play(colour: str, move_time: float | None, depth: int | None, start: str | None, pdn_path: str | None,
         settings: EngineSettings) -> None:
    """Play a game against Pedina in the terminal."""
    if move_time is not None and depth is not None:
        raise click.UsageError("give --time or --depth, not both")
    try:
        position = Position.parse(start) if start else None
    except PositionError as error:
        raise click.BadParameter(str(error), param_hint="--position") from None

    def limits() -> Limits:
        return Limits(depth=depth) if depth is not None else Limits(move_time=move_time or 1.0)

    pdnout = PdnOut.open_option(pdn_path)
    try:
        TerminalGame(colour == "white", limits, settings, start=position, pdnout=pdnout, ask=_read,
                     say=click.echo).run()
    finally:
        if pdnout is not None:
            pdnout.close()
