"""``pedina play``: a game against the engine in the terminal.

The board is drawn with its coordinates (a-h, 1-8) and the square numbers;
moves are typed as PDN text (``23-19``, ``22x13``), Hub text or a full path.
Commands: ``help``, ``undo`` (or ``takeback``), ``hint``, ``moves``, ``flip``,
``switch``, ``save FILE``, ``new``, ``quit``. With ``--pdnout FILE`` every game is
appended to FILE when it ends, or when it is left unfinished (``new``, ``quit``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import click

from pedina.board import Board
from pedina.move import Move, MoveError
from pedina.pdn import write_game
from pedina.position import Position, PositionError
from pedina.search import EndgameTables
from pedina.session import Session
from pedina.timeman import Limits
from pedina.protocol.book_command import book_options
from pedina.protocol.egdb_command import egdb_option, open_egdb
from pedina.protocol.pdnfile import PdnOut
from pedina.scores import Score, men

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


def game_tags(human_white: bool) -> dict[str, str]:
    """The PDN tags of a game in the terminal."""
    return {"Event": "pedina play", "Date": time.strftime("%Y.%m.%d"),
            "White": "You" if human_white else "Pedina", "Black": "Pedina" if human_white else "You"}


class TerminalGame:
    """One person against the engine; ``ask`` reads a line (``None`` at end of input), ``say`` prints.

    ``skill`` (0-20) weakens the engine (see :class:`~pedina.search.Searcher`); ``pdnout``
    receives every game that was played (see the module's docstring); ``egdb`` is an
    endgame database for the engine; ``book`` and ``book_variety`` are its opening
    book settings (see :class:`~pedina.session.Session`).
    """

    def __init__(self, human_white: bool, limits: Callable[[], Limits], *, start: Position | None = None,
                 hash_mb: int = 16, skill: int = 20, pdnout: PdnOut | None = None, egdb: EndgameTables | None = None,
                 book: bool = True, book_variety: int = 0,
                 ask: Callable[[str], str | None], say: Callable[[str], None]) -> None:
        self.human_white = human_white
        self.limits = limits
        self.engine = Session(hash_mb=hash_mb)
        self.engine.configure(skill=skill, book=book, book_variety=book_variety)
        self.engine.use_database(egdb)
        self.start = start or Position.start()
        self.board = Board(self.start)
        self.flipped = not human_white
        self.pdnout = pdnout
        self._recorded: list[Move] = []  # the moves of the game as last appended to pdnout
        self.ask = ask
        self.say = say

    def run(self) -> None:
        self.say(f"You play {side_name(self.human_white)}. Type 'help' for the commands.")
        self.show()
        while True:
            outcome = self.board.outcome()
            if outcome is None and self.board.position.white_to_move != self.human_white:
                self.engine_move()
                continue
            prompt = "Game over (new, undo or quit)> " if outcome else f"Your move ({side_name(self.human_white)})> "
            line = self.ask(prompt)
            if line is None or not self.handle(line.strip()):
                self.record()
                self.say("Bye.")
                return

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
            self.flipped = not self.flipped
            self.say(f"You now play {side_name(self.human_white)}.")
            self.show()
        elif word == "save" or word.startswith("save "):
            self.save(line[4:].strip())
        elif word == "new":
            self.record()
            self.board = Board(self.start)
            self.engine.new_game()
            self.say("New game.")
            self.show()
        elif self.board.outcome() is not None:
            self.say(f"The game is over ({self.board.result()}): type new, undo or quit.")
        else:
            try:
                move = self.board.parse_move(line)
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
        answer = self.engine.think(self.board, self.limits())
        assert answer.move is not None  # the game goes on, so there is a move
        result = answer.result
        detail = ""
        if result is not None and answer.book:
            detail = f"   (from the opening book, value {men(result.score)} for Pedina)"
        elif result is not None:
            note = Score.of(result.score).note("Pedina", "you")
            detail = f"   (score {men(result.score)} for Pedina{', ' + note if note else ''}, depth {result.depth})"
        self.play(answer.move, "Pedina plays", detail)

    def save(self, path: str) -> None:
        """``save FILE``: the game so far, written to FILE (replacing it)."""
        if not path:
            self.say("Say where: save FILE")
            return
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(write_game(self.board, game_tags(self.human_white)))
        except OSError as error:
            self.say(f"Cannot save to {path}: {error.strerror or error}.")
            return
        self.say(f"Game saved to {path}.")

    def record(self) -> None:
        """Append the game to ``pdnout`` unless it has no moves or is there already as it stands."""
        if self.pdnout is None or not self.board.moves or self.board.moves == self._recorded:
            return
        self.pdnout.write(write_game(self.board, game_tags(self.human_white)))
        self._recorded = list(self.board.moves)
        self.say(f"Game appended to {self.pdnout.path}.")

    def hint(self) -> None:
        if self.board.outcome() is not None:
            self.say("The game is over: no hint.")
            return
        answer = self.engine.think(self.board, self.limits())
        if answer.move is None:
            self.say("No hint available.")
            return
        score = ""
        if answer.result is not None:
            note = Score.of(answer.result.score).note("you", "Pedina")
            score = f"   (score {men(answer.result.score)} for you{', ' + note if note else ''})"
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
@click.option("--time", "move_time", type=click.FloatRange(0.01, 600), default=None,
              help="Engine seconds per move (default 1).")
@click.option("--depth", type=click.IntRange(1, 60), default=None, help="Engine search depth instead of a time.")
@click.option("--position", "start", default=None, help="Start from this FEN or Hub position.")
@click.option("--skill", type=click.IntRange(0, 20), default=20, show_default=True,
              help="Engine strength: 20 is full strength, lower plays weaker (see the README).")
@click.option("--hash", "hash_mb", type=click.IntRange(1, 4096), default=16, show_default=True,
              help="Hash table size in MB.")
@click.option("--pdnout", "pdn_path", type=click.Path(dir_okay=False), default=None,
              help="Append every game to this PDN file when it ends or is left.")
@egdb_option
@book_options
def play(colour: str, move_time: float | None, depth: int | None, start: str | None, skill: int, hash_mb: int,
         pdn_path: str | None, egdb_dir: str | None, no_egdb: bool, no_book: bool, book_variety: int) -> None:
    """Play a game against Pedina in the terminal."""
    if move_time is not None and depth is not None:
        raise click.UsageError("give --time or --depth, not both")
    try:
        position = Position.parse(start) if start else None
    except PositionError as error:
        raise click.BadParameter(str(error), param_hint="--position") from None

    def limits() -> Limits:
        return Limits(depth=depth) if depth is not None else Limits(move_time=move_time or 1.0)

    egdb = open_egdb(egdb_dir, no_egdb)
    pdnout = PdnOut.open_option(pdn_path)
    try:
        TerminalGame(colour == "white", limits, start=position, hash_mb=hash_mb, skill=skill, pdnout=pdnout,
                     egdb=egdb, book=not no_book, book_variety=book_variety, ask=_read, say=click.echo).run()
    finally:
        if pdnout is not None:
            pdnout.close()
