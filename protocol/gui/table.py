"""One page's game in ``pedina gui``: the board, the players, the clocks and the engines at work.

A :class:`Table` acts on the page's messages (JSON objects with a ``type``, see
:meth:`Table.handle`) and answers through a ``send`` callable with ``welcome``, ``state``,
``analysis``, ``notice``, ``error``, ``pdn`` and ``pdn_games`` messages. The rules stay on
this side: the page gets the legal moves of the position it shows, each with its landing
squares, and sends back the start and landing squares of the move entered.

A table is in one of three modes:

- ``free``: a person moves both sides (after a set-up, a loaded PDN, or a finished game);
  a move played in the middle of the game replaces the moves after it. The analysis
  engine, when on, thinks live on the position shown, and a line it shows may be played
  into the game (``play_line``) as the person's moves.
- ``play``: a person against an engine, with a time per move or a clock with increment
  (Hub semantics: the increment is credited before each move), take back, resign and
  draw offer.
- ``watch``: two engines play each other from the position shown.

Only one engine search runs at a time. Every change first halts it (``stop``, then its
process is ended if no ``done`` comes within :data:`STOP_GRACE` seconds; a DXP engine,
which cannot be stopped, finishes its move in the background); results of a halted
search are dropped. When a game with engines ends, they are told (``game_over``). An
engine that fails (exits, hangs, answers an illegal move) is reported to the page with
its last lines, and its process (or connection) is replaced at its next use.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime
import json
import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pedina.board import Board, Outcome, Termination
from pedina.move import Move, MoveError, format_pdn, legal_moves
from pedina.pdn import (RESULTS, PdnError, PdnGame, Variation, comment_notes, decode_pdn, read_game, read_games,
                        variation_text, write_game)
from pedina.protocol.gui.comments import comment_score
from pedina.position import Position, PositionError
from pedina.scores import Score
from pedina.smp import usable_cores
from pedina.protocol.gui.engines import GAME_OVER_TIMEOUT, EngineCatalog, EngineSlot, analysis_refusal
from pedina.protocol.gui.game_review import (MAX_REVIEW_DEPTH, MAX_REVIEW_TIME, GameReview, moves_json, pv_moves,
                                             review_line)
from pedina.protocol.hubclient import EngineError, EngineRefused, EngineTimeout
from pedina.protocol.match.game import TimeControl
from pedina.protocol.play import side_name

FREE, PLAY, WATCH = "free", "play", "watch"
#: The person's name in a game against an engine (on the page and in the PDN).
PERSON = "Player"

#: Seconds an engine has to answer ``stop`` before its process is ended.
STOP_GRACE = 5.0
#: Seconds an engine's move may overrun its clock before it loses on time.
MOVE_MARGIN = 0.5
#: Extra seconds granted to a move with a fixed time per move before the engine counts as hung.
MOVE_TIME_SLACK = 10.0
#: An analysis (``level infinite``) is waited for up to this many seconds.
ANALYSIS_TIMEOUT = 24 * 3600.0
#: Seconds between two analysis updates sent to the page.
ANALYSIS_INTERVAL = 0.15
#: An engine accepts a draw offer when its last score (its own view) is at most this (hundredths).
DRAW_ACCEPT = 20
#: Most moves of a principal variation shown.
MAX_PV = 24
#: The Hub parameter naming an engine's endgame tables folder (Pedina's): empty turns them off.
TABLES_PARAM = "egdb-path"
#: The Hub parameter of the processes an engine searches with (Pedina's: the main search and its helpers).
THREADS_PARAM = "threads"
#: Most analysis lines (multi-PV) a page may ask for.
MAX_LINES = 8
#: Longest PDN text a page may send (characters, or bytes of a file).
MAX_PDN = 2_000_000
#: Longest FEN or Hub text a page may send (characters).
MAX_POSITION_TEXT = 400

#: Most plies of a game the page loads (from a PDN) or restores after a reload: each is
#: kept per position and goes to the page (a longer one is refused with its length named).
MAX_GAME_PLIES = 2000
#: Most tags of a game the page restores after a reload.
MAX_RESTORED_TAGS = 50

#: PDN tags that :func:`pedina.write_game` writes from the game (start position and result).
_GAME_RECORD_TAGS = ("GameType", "SetUp", "FEN", "Result")

_LOG = logging.getLogger("pedina.gui")


class BadMessage(ValueError):
    """A message from the page that cannot be acted on; the page is told why."""


# -- reading the page's messages --------------------------------------------------------


def _whole(message: Mapping[str, object], key: str, low: int, high: int) -> int:
    value = message.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadMessage(f"{key} must be a whole number from {low} to {high}, not {json.dumps(value)}")
    return value


def _number(message: Mapping[str, object], key: str, low: float, high: float) -> float:
    value = message.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not low <= value <= high:
        raise BadMessage(f"{key} must be a number from {low:g} to {high:g}, not {json.dumps(value)}")
    return float(value)


def _text(message: Mapping[str, object], key: str, limit: int) -> str:
    value = message.get(key)
    if not isinstance(value, str):
        raise BadMessage(f"{key} must be a text")
    if len(value) > limit:
        raise BadMessage(f"{key} is too long ({len(value)} characters, at most {limit})")
    return value


def _pdn_file(message: Mapping[str, object]) -> str:
    """The text of the file whose bytes are ``data`` (base64): UTF-8 with or without a byte-order
    mark, UTF-16, or Windows-1252, as :func:`pedina.pdn.decode_pdn` reads files."""
    encoded = _text(message, "data", 4 * (MAX_PDN // 3 + 1))
    try:
        data = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        raise BadMessage("data must be a file's bytes in base64") from None
    if len(data) > MAX_PDN:
        raise BadMessage(f"the file is too large ({len(data)} bytes, at most {MAX_PDN})")
    return decode_pdn(data)


def _texts(message: Mapping[str, object], key: str, limit: int) -> list[str]:
    value = message.get(key)
    if not isinstance(value, list) or len(value) > limit or not all(
            isinstance(text, str) and len(text) <= MAX_POSITION_TEXT for text in value):
        raise BadMessage(f"{key} must be a list of at most {limit} texts")
    return value


def _choice(message: Mapping[str, object], key: str, choices: tuple[str, ...]) -> str:
    value = message.get(key)
    if value not in choices:
        raise BadMessage(f"{key} must be one of {', '.join(choices)}, not {json.dumps(value)}")
    assert isinstance(value, str)
    return value


def _flag(message: Mapping[str, object], key: str) -> bool:
    value = message.get(key, False)
    if not isinstance(value, bool):
        raise BadMessage(f"{key} must be true or false")
    return value


def time_control(value: object) -> TimeControl:
    """A time control from the page: ``{"kind": "move", "seconds": S}`` or
    ``{"kind": "clock", "minutes": M, "increment": I}``; raises :class:`BadMessage`."""
    if not isinstance(value, dict):
        raise BadMessage("time must be an object with a kind (move or clock)")
    if _choice(value, "kind", ("move", "clock")) == "move":
        return TimeControl(move_time=_number(value, "seconds", 0.05, 3600))
    minutes = _number(value, "minutes", 0, 600)
    increment = _number(value, "increment", 0, 600)
    if minutes == 0 and increment == 0:
        raise BadMessage("a clock needs some time: minutes, an increment, or both")
    return TimeControl(base=minutes * 60, inc=increment)


# -- what the page is sent ---------------------------------------------------------------


def _side_key(white: bool) -> str:
    return "white" if white else "black"


def move_json(move: Move, text: str) -> dict[str, object]:
    """A move for the page: its squares, its PDN text and its Hub text."""
    return {"start": move.start, "path": list(move.path), "captured": list(move.captured), "text": text,
            "hub": move.hub()}


def pv_json(position: Position, pv: str) -> list[dict[str, object]]:
    """The legal prefix of a principal variation (Hub move text), at most :data:`MAX_PV` moves."""
    return line_json(position, pv_moves(position, pv, MAX_PV))


def line_json(position: Position, moves: list[Move]) -> list[dict[str, object]]:
    """The moves of a line from ``position`` for the page."""
    return moves_json(position, moves, move_json)


def rules_reason(board: Board, outcome: Outcome) -> str:
    """Why the rules ended the game in ``board``, in words."""
    position = board.position
    if outcome.termination is Termination.NO_MOVES:
        loser = side_name(position.white_to_move)
        pieces = position.white if position.white_to_move else position.black
        return f"{loser} has no pieces left" if not pieces else f"{loser} cannot move"
    if outcome.termination is Termination.REPETITION:
        return f"the same position {board.repetitions} times (repetition)"
    return f"{board.draw_plies} plies without a man move or a capture (the 40-move rule)"


def white_view(score: Score | None, white_to_move: bool) -> Score | None:
    """A score of the side to move from White's point of view."""
    return score.for_white(white_to_move) if score is not None else None


def score_json(white: Score | None) -> dict[str, object] | None:
    """A score (White's view) for the page: ``white`` (hundredths), ``result`` (1 White
    wins, -1 Black wins, proven or by the database; 0 for an estimate) and ``text``, as
    the page shows it (:meth:`pedina.scores.Score.text`)."""
    if white is None:
        return None
    return {"white": white.value, "result": white.result, "text": white.text()}


class Table:
    """One page's game; ``send`` takes each message for the page (it must not block)."""

    def __init__(self, catalog: EngineCatalog, send: Callable[[dict[str, object]], None]) -> None:
        self.catalog = catalog
        self._send = send
        self.mode = FREE
        self.board = Board()
        self.texts: list[str] = []                      # PDN text of each move
        self.comments: list[str] = []                   # a loaded game's PDN comment after each move
        self.variations: list[list[tuple[Variation, str]]] = []  # a loaded game's lines instead of each move, shown
        self.evals: list[Score | None] = [None]        # per position: a search's score there, White's view
        self.clock_log: list[dict[bool, float | None]] = [{True: None, False: None}]  # clocks per position
        self.cursor = 0                                 # the position shown (0 = start)
        self.headers: dict[str, str] = {}               # PDN tags of a loaded game
        self.verdict: tuple[str, str] | None = None     # a result not by the rules: (result, reason)
        self.flagged: bool | None = None                # the side whose time ran out (its clock shows 0)
        self.players: dict[bool, str] = {True: "?", False: "?"}
        self.human: bool | None = None                  # play: the person's side
        self.engines_of: dict[bool, int] = {}           # play and watch: the engine index of each side
        self.tc = TimeControl(move_time=1.0)
        self.skill: int | None = None
        self.endgame_tables = True                      # whether the page's engines probe their tables
        self.threads: dict[int, int] = {}               # the page's threads per engine index (else its own)
        self.clocks: dict[bool, float | None] = {True: None, False: None}  # seconds, before the increment
        self.turn_start = time.monotonic()
        self.thinking: bool | None = None               # the side whose engine searches for a move
        self.failure: dict[str, object] | None = None   # the last engine failure, until the next game
        self.analysing = False
        self.analysis_engine = 0
        self.analysis_lines = 1
        self._lines: dict[int, dict[str, object]] = {}  # the running search's lines, by multi-PV rank
        self._lines_ply = 0                             # the position they are about
        self._stats: dict[str, object] = {}
        self._analysis_due: asyncio.TimerHandle | None = None
        self.pdn_choices: list[PdnGame] = []            # a file's games, to choose one from
        self.review: GameReview | None = None          # the last review of the game shown (running or not)
        self._game_number = 0
        self._slots: dict[tuple[int, int], EngineSlot] = {}
        self._search: asyncio.Task[None] | None = None
        self._search_slot: EngineSlot | None = None
        self._generation = 0
        self._flag_timer: asyncio.TimerHandle | None = None
        self._closing: set[asyncio.Task[None]] = set()  # engines being ended, searches given up on
        self._told_end: tuple[int, int] | None = None   # the game number and plies of the last end told
        self._endings: set[asyncio.Task[None]] = set()   # engines being told a game's end
        self._game_slots: list[EngineSlot] = []         # the engines that played game _game_slots_of
        self._game_slots_of = 0
        self._handlers: dict[str, Callable[[Mapping[str, object]], Awaitable[None]]] = {
            "new_game": self._on_new_game, "watch": self._on_watch, "move": self._on_move,
            "goto": self._on_goto, "takeback": self._on_takeback, "resign": self._on_resign,
            "draw": self._on_draw, "engine_move": self._on_engine_move, "analyse": self._on_analyse,
            "stop": self._on_stop, "setup": self._on_setup, "load_pdn": self._on_load_pdn,
            "pick_pdn": self._on_pick_pdn, "save_pdn": self._on_save_pdn, "restore": self._on_restore,
            "review": self._on_review, "review_pdn": self._on_review_pdn, "play_line": self._on_play_line}

    # -- entry points ----------------------------------------------------------------

    def welcome(self) -> None:
        """The first messages of a connection: the engines and the cores they share (the page
        offers no more threads than that), then the state."""
        self._send({"type": "welcome", "engines": self.catalog.as_json(), "cores": usable_cores()})
        self._push_state()

    async def handle(self, text: str) -> None:
        """Act on one message from the page; a bad one is answered with an ``error`` message.

        Messages: ``new_game`` (``mode`` play or free, ``from_current``; for play ``engine``,
        ``colour``, ``time``, ``skill``, ``tables``, ``threads``), ``watch`` (``white``, ``black``,
        ``time``), ``move`` (``start``, ``path``), ``goto`` (``ply``), ``takeback``, ``resign``, ``draw``,
        ``engine_move``, ``analyse`` (``on``, ``engine``, ``lines``, ``tables``, ``threads``), ``stop``, ``setup``
        (``position``: FEN or Hub text), ``load_pdn`` (``text``, or ``data``: a file's bytes in
        base64, decoded as the command line decodes files), ``pick_pdn`` (``index``),
        ``save_pdn``, ``restore`` (a game the page kept over a reload: ``start``, ``moves``,
        ``headers``, ``comments``, ``variations`` (optional), ``result``, ``reason``; it comes back
        as a loaded game),
        ``review`` (``depth`` or ``time`` a position, ``engine``, ``threads``: the game review, see
        :meth:`_on_review`), ``review_pdn`` (the reviewed game as annotated PDN), ``play_line``
        (``ply``, ``position``, ``moves``: an engine line played into the game, see
        :meth:`_on_play_line`).
        """
        try:
            message = json.loads(text)
        except json.JSONDecodeError as error:
            self.error(f"not a JSON message: {error.msg}")
            return
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            self.error("a message must be a JSON object with a type")
            return
        handler = self._handlers.get(message["type"])
        if handler is None:
            self.error(f"unknown message type {message['type']!r}")
            return
        try:
            await handler(message)
        except BadMessage as error:
            self.error(str(error))
        except Exception as error:  # a bug must not end the connection
            _LOG.exception("message %s", message["type"])
            self.error(f"internal error on {message['type']}: {type(error).__name__}: {error}")

    def send_engines(self) -> None:
        """Tell the page what is known of the engines (names, parameters, problems) now."""
        self._send({"type": "engines", "engines": self.catalog.as_json()})

    def error(self, message: str) -> None:
        """Tell the page that something it asked for was refused."""
        self._send({"type": "error", "message": message})

    async def close(self) -> None:
        """End every engine of this table at once (a search waiting on one fails, unheard), once the
        end of a game just over has reached them (for at most :data:`GAME_OVER_TIMEOUT` seconds)."""
        self._generation += 1
        for timer in (self._flag_timer, self._analysis_due):
            if timer is not None:
                timer.cancel()
        task, self._search, self._search_slot = self._search, None, None
        if self._endings:  # a game's end being told goes through first
            await asyncio.wait(set(self._endings), timeout=GAME_OVER_TIMEOUT)
        slots, self._slots = list(self._slots.values()), {}
        await asyncio.gather(*(slot.close() for slot in slots), *self._closing)
        if task is not None:
            await asyncio.wait({task}, timeout=STOP_GRACE)

    # -- positions and the game ---------------------------------------------------------

    def _position(self) -> Position:
        return self.board.positions[self.cursor]

    def _at_end(self) -> bool:
        return self.cursor == len(self.board.moves)

    def result(self) -> tuple[str, str] | None:
        """The game's result and why, if it has ended (by the rules, or by a verdict)."""
        if self.verdict is not None:
            return self.verdict
        outcome = self.board.outcome()
        return None if outcome is None else (outcome.result(), rules_reason(self.board, outcome))

    def _reset(self, board: Board) -> None:
        """A new game record: ``board`` with its moves, the cursor at its end, no verdict."""
        self.board = Board(board.start)
        self.texts, self.comments, self.variations, self.evals = [], [], [], [None]
        self.clock_log = [dict(self.clocks)]
        for move in board.moves:
            self._push(move)
        self.cursor = len(self.board.moves)
        self.verdict = self.flagged = None
        self.failure = None
        self._game_number += 1

    def _push(self, move: Move) -> None:
        self.texts.append(self.board.pdn(move))
        self.comments.append("")
        self.variations.append([])
        self.board.push(move)
        self.evals.append(None)
        self.clock_log.append(dict(self.clocks))

    def _truncate(self, plies: int) -> None:
        """Drop the moves after the first ``plies`` (and the verdict, which was about the longer game)."""
        while len(self.board.moves) > plies:
            self.board.pop()
            self.texts.pop()
            self.comments.pop()
            self.variations.pop()
            self.evals.pop()
            self.clock_log.pop()
        self.cursor = min(self.cursor, plies)
        self.verdict = self.flagged = None

    def _person_may_move(self) -> str | None:
        """``None`` when the page may enter a move in the position shown, else why not."""
        if self.mode == WATCH:
            return "the engines are playing: stop them to move"
        if self.mode == PLAY:
            if self.result() is not None:
                return "the game is over"
            if not self._at_end():
                return "go to the last move to play"
            if self._position().white_to_move != self.human:
                return "it is the engine's turn"
            return None
        if self._at_end() and self.result() is not None and self.verdict is None:
            return "the game is over"
        return None

    # -- engines -------------------------------------------------------------------------

    def _slot(self, index: int, seat: int) -> EngineSlot:
        key = (index, seat)
        slot = self._slots.get(key)
        if slot is None:
            slot = self._slots[key] = EngineSlot(self.catalog, index)
        return slot

    def _discard(self, slot: EngineSlot) -> None:
        """Forget ``slot`` and end its process in the background (the next use starts a fresh one)."""
        for key, held in list(self._slots.items()):
            if held is slot:
                del self._slots[key]
        self._keep(asyncio.get_running_loop().create_task(slot.close()))

    def _keep(self, task: asyncio.Task[None]) -> None:
        """Hold ``task`` (an engine's ending, or work left to finish) until it is done; :meth:`close` waits for it."""
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def _halt(self) -> None:
        """End the running search (its results are dropped) and the person's flag timer."""
        self._generation += 1
        if self._flag_timer is not None:
            self._flag_timer.cancel()
            self._flag_timer = None
        task, slot = self._search, self._search_slot
        self._search = self._search_slot = None
        self.thinking = None
        if task is None or slot is None or task.done():
            return
        if not slot.stoppable:  # its move comes in its own time, dropped; the slot's next use waits for it
            self._keep(task)
            return
        await slot.stop()
        done, _ = await asyncio.wait({task}, timeout=STOP_GRACE)
        if not done:
            self._fail(slot, f"{slot.spec.name} did not stop its search within {STOP_GRACE:g} s: "
                             "its process was ended", [])
            await asyncio.wait({task}, timeout=STOP_GRACE)

    def _fail(self, slot: EngineSlot, message: str, tail: list[str]) -> None:
        """Report an engine failure to the page and replace the engine's process at its next use."""
        self._discard(slot)
        self.failure = {"engine": slot.spec.name, "message": message, "tail": tail}
        self._send({"type": "error", "message": message, "tail": tail})

    def _start_search(self, slot: EngineSlot, work: Callable[[int, EngineSlot], Awaitable[None]]) -> None:
        """Run ``work(generation, slot)`` as the table's one search."""
        generation = self._generation

        async def run() -> None:
            try:
                await work(generation, slot)
            except Exception as error:  # a bug must not leave the table stuck without a word
                _LOG.exception("search")
                if generation == self._generation:
                    self.error(f"internal error in the search: {type(error).__name__}: {error}")
            finally:
                if self._search is task:
                    self._search = self._search_slot = None
                    self.thinking = None

        task = asyncio.get_running_loop().create_task(run())
        self._search_slot, self._search = slot, task

    async def _prepare(self, slot: EngineSlot, lines: int, skill: int | None) -> None:
        """Start the engine, turn its endgame tables on or off (:attr:`endgame_tables`), and set
        its multi-PV count, its skill and its threads (the page's choice for it in
        :attr:`threads`); a skill or threads of ``None`` is the engine's own
        (:meth:`EngineSlot.own_value`)."""
        if not slot.started:
            await slot.start()
            self.send_engines()
        folder = slot.own_value(TABLES_PARAM)
        # On, the folder the engine was started with; the page never names a folder itself.
        if folder is not None and await self._set_param(slot, TABLES_PARAM, folder if self.endgame_tables else ""):
            slot.forget_game()  # its table holds scores found with (or without) the tables
        await slot.new_game(self._game_number)
        await self._set_param(slot, "multipv", str(lines))
        for name, chosen in (("skill", skill), (THREADS_PARAM, self.threads.get(slot.index))):
            own = slot.own_value(name)
            if own is not None:
                await self._set_param(slot, name, own if chosen is None else str(chosen))

    async def _set_param(self, slot: EngineSlot, name: str, value: str) -> bool:
        """:meth:`EngineSlot.ensure_param`, where a value the engine refuses (a shared hash table
        for more threads that the memory cannot hold, say) is told to the page and the search goes
        on with the engine's value; a threads choice refused is dropped, so that the game's next
        moves do not ask again."""
        try:
            return await slot.ensure_param(name, value)
        except EngineRefused as error:
            if name == THREADS_PARAM:
                self.threads.pop(slot.index, None)
            self.error(str(error))
            return False

    def _schedule(self) -> None:
        """Start what the new state calls for: an engine's move, the analysis, the person's flag timer."""
        if self._search is not None:
            return
        over = self.result() is not None
        white = self.board.position.white_to_move
        if self.mode == PLAY and not over:
            if white != self.human:
                if self.failure is None:
                    self._start_search(self._slot(self.engines_of[white], 0), self._engine_move)
            elif self.clocks[white] is not None:
                left = self._available(white)
                self._flag_timer = asyncio.get_running_loop().call_later(
                    max(0.0, left), self._flag_fell, self._generation)
        elif self.mode == WATCH and not over and self.failure is None:
            self._start_search(self._slot(self.engines_of[white], 0 if white else 1), self._engine_move)
        elif self.mode == FREE and self.analysing and legal_moves(self._position()):
            self._lines, self._stats, self._lines_ply = {}, {}, self.cursor
            self._start_search(self._slot(self.analysis_engine, 0), self._analyse)

    def _available(self, white: bool) -> float:
        """Seconds ``white``'s side has for its move now (clock plus increment, less its turn so far)."""
        clock = self.clocks[white]
        assert clock is not None
        left = clock + self.tc.inc
        if white == self.board.position.white_to_move:
            left -= time.monotonic() - self.turn_start
        return left

    def _flag_fell(self, generation: int) -> None:
        if generation != self._generation or self.result() is not None or self.human is None:
            return
        self._flag_timer = None
        self.verdict = ("0-1" if self.human else "1-0", f"{side_name(self.human)} lost on time")
        self.flagged = self.human
        self._push_state()

    async def _engine_move(self, generation: int, slot: EngineSlot) -> None:
        """The engine of the side to move searches and its move is played (play and watch)."""
        white = self.board.position.white_to_move
        clock = self.clocks[white]
        allowed = self.tc.allowed(clock)
        # With a clock the engine loses on time past its margin; a time per move only bounds the wait.
        timeout = (allowed or 0.0) + (MOVE_MARGIN if clock is not None else MOVE_TIME_SLACK)
        ply = len(self.board.moves)
        if self._game_slots_of != self._game_number:
            self._game_slots, self._game_slots_of = [], self._game_number
        if slot not in self._game_slots:
            self._game_slots.append(slot)
        try:
            await self._prepare(slot, 1, self.skill if self.mode == PLAY else None)
            if generation != self._generation:
                return
            self.turn_start = time.monotonic()
            self.thinking = white
            self._push_state()
            watch = self.mode == WATCH
            if watch:
                self._lines, self._stats, self._lines_ply = {}, {}, ply
            report = await slot.search(
                self.board.start.hub(), [move.hub() for move in self.board.moves], self.tc.level(clock),
                "think", timeout, lambda args: self._on_info(generation, ply, args) if watch else None)
        except EngineTimeout as error:
            if generation == self._generation:
                if clock is not None:
                    self._discard(slot)
                    self._lose_on_time(white, f"{slot.spec.name} did not answer within its time")
                else:
                    self._fail(slot, str(error), error.tail)
                    self._after_failure()
            return
        except EngineError as error:
            if generation == self._generation:
                self._fail(slot, str(error), error.tail)
                self._after_failure()
            return
        if generation != self._generation:
            return
        self._search = self._search_slot = None
        self.thinking = None
        if clock is not None and allowed is not None and report.elapsed > allowed + MOVE_MARGIN:
            self._lose_on_time(white, f"{slot.spec.name} took {report.elapsed:.2f} s, "
                                      f"{allowed:.2f} s were left")
            return
        try:
            move = self.board.parse_move(report.move)
        except MoveError as error:
            self._fail(slot, f"{slot.spec.name} played an illegal move: {error}", slot.tail())
            self._after_failure()
            return
        if clock is not None:
            self.clocks[white] = clock + self.tc.inc - report.elapsed
        self.evals[ply] = white_view(report.score, white)
        follow = self._at_end()
        self._push(move)
        if follow:
            self.cursor = len(self.board.moves)
        self.turn_start = time.monotonic()
        if self.mode == WATCH and self.result() is not None:
            self.mode = FREE  # the engines are done: the game is the person's to go through
        self._schedule()
        self._push_state()

    def _lose_on_time(self, white: bool, detail: str) -> None:
        self._search = self._search_slot = None
        self.thinking = None
        self.verdict = ("0-1" if white else "1-0", f"{side_name(white)} lost on time ({detail})")
        self.flagged = white
        if self.mode == WATCH:
            self.mode = FREE
        self._push_state()

    def _after_failure(self) -> None:
        """After an engine failed: watching stops (back to free play); a game waits for ``engine_move``."""
        self._search = self._search_slot = None
        self.thinking = None
        if self.mode == WATCH:
            self.mode = FREE
        if self.mode == FREE:
            self.analysing = False
        self._push_state()

    async def _analyse(self, generation: int, slot: EngineSlot) -> None:
        """The analysis engine thinks on the position shown until stopped."""
        ply = self.cursor
        try:
            await self._prepare(slot, self.analysis_lines, None)
            if generation != self._generation:
                return
            self._push_analysis(True)
            await slot.search(self.board.start.hub(), [move.hub() for move in self.board.moves[:ply]],
                              {"infinite": True}, "analyze", ANALYSIS_TIMEOUT,
                              lambda args: self._on_info(generation, ply, args))
        except EngineError as error:
            if generation == self._generation:
                self._fail(slot, str(error), error.tail)
                self._after_failure()
            return
        if generation == self._generation:
            self._push_analysis(False)  # the engine ended the analysis itself (a proven result, say)

    def _on_info(self, generation: int, ply: int, args: dict[str, str]) -> None:
        """One ``info`` line of the running search at position ``ply``: lines, depth, speed, score."""
        if generation != self._generation:
            return
        position = self.board.positions[ply]
        multipv = int(args["multipv"]) if args.get("multipv", "").isdigit() else 1
        score = white_view(Score.from_hub(args), position.white_to_move)
        self._lines[multipv] = {"multipv": multipv, "depth": args.get("depth"), "score": score_json(score),
                                "pv": pv_json(position, args.get("pv", ""))}
        self._stats = {key: args[key] for key in ("depth", "nodes", "nps", "time") if key in args}
        if multipv == 1 and score is not None:
            self.evals[ply] = score
        if self._analysis_due is None:
            self._analysis_due = asyncio.get_running_loop().call_later(
                ANALYSIS_INTERVAL, self._push_analysis, True)

    # -- messages to the page ------------------------------------------------------------

    def _push_analysis(self, running: bool) -> None:
        if self._analysis_due is not None:
            self._analysis_due.cancel()
            self._analysis_due = None
        slot = self._search_slot
        lines = [self._lines[key] for key in sorted(self._lines)]
        self._send({"type": "analysis", "running": running and self._search is not None,
                    "engine": slot.spec.name if slot else None, "ply": self._lines_ply,
                    "lines": lines[:max(self.analysis_lines, 1)], "stats": self._stats,
                    "evals": [score_json(score) for score in self.evals]})

    def _clocks_json(self) -> dict[str, object] | None:
        if self.mode not in (PLAY, WATCH) or self.clocks[True] is None:
            return None
        white = self.board.position.white_to_move
        over = self.result() is not None
        running = None
        if not over and (self.thinking is not None or (self.mode == PLAY and white == self.human)):
            running = _side_key(white)
        left = {side: 0.0 if side == self.flagged else self._available(side) if running
                else (self.clocks[side] or 0.0) + self.tc.inc for side in (True, False)}
        return {"white": left[True], "black": left[False], "running": running}

    def state(self) -> dict[str, object]:
        """The whole state the page shows, as one ``state`` message."""
        position = self._position()
        legal = legal_moves(position) if self._person_may_move() is None else []
        result = self.result()
        shown = self.board.moves[:self.cursor]
        last = move_json(shown[-1], self.texts[self.cursor - 1]) if shown else None
        may_take_back = bool(self.board.moves) and (
            self.mode == FREE or (self.mode == PLAY and self.flagged is None and any(
                self.board.positions[ply].white_to_move == self.human for ply in range(len(self.board.moves)))))
        playing = self.mode == PLAY and result is None
        return {
            "type": "state", "mode": self.mode, "position": position.hub(), "fen": position.fen(),
            "white_to_move": position.white_to_move, "cursor": self.cursor,
            "start_fen": self.board.start.fen(), "game": self._game_number,
            "moves": [move_json(move, text) for move, text in zip(self.board.moves, self.texts)],
            "comments": list(self.comments),
            "variations": [[text for _, text in alternatives] for alternatives in self.variations],
            "legal": [move_json(move, format_pdn(move, legal)) for move in legal],
            "why_not": self._person_may_move(), "last": last,
            "evals": [score_json(score) for score in self.evals],
            "players": {"white": self.players[True], "black": self.players[False]}, "headers": self.headers,
            "human": None if self.human is None or self.mode != PLAY else _side_key(self.human),
            "clocks": self._clocks_json(),
            "thinking": None if self.thinking is None else _side_key(self.thinking),
            "result": None if result is None else {"result": result[0], "reason": result[1]},
            "analysing": self.analysing, "analysis_engine": self.analysis_engine,
            "analysis_lines": self.analysis_lines, "endgame_tables": self.endgame_tables, "failure": self.failure,
            "can": {"takeback": may_take_back and self.mode != WATCH, "resign": playing, "draw": playing,
                    "engine_move": playing and self.failure is not None and self.thinking is None
                    and self.board.position.white_to_move != self.human},
            "time": _tc_json(self.tc) if self.mode in (PLAY, WATCH) else None,
        }

    def _push_state(self) -> None:
        self._tell_game_over()
        if self.review is not None and not self.review.about(self.board):  # another game now
            self.review = None
            self._push_review()
        self._send(self.state())

    def _tell_game_over(self) -> None:
        """Tell the engines that played the game (``game_over``, in the background) that it has just
        ended: once for each end (a take back and another end is another), and after a watched game,
        once only (the person's moves from there are not the engines' game)."""
        result = self.result()
        end = (self._game_number, len(self.board.moves))
        if result is None or self._game_slots_of != self._game_number or self._told_end == end or (
                self.mode == FREE and self._told_end is not None and self._told_end[0] == self._game_number):
            return
        self._told_end = end
        start, moves = self.board.start.hub(), [move.hub() for move in self.board.moves]
        for slot in self._game_slots:
            if slot in self._slots.values() and slot.started:
                ending = asyncio.get_running_loop().create_task(self._game_over(slot, start, moves, result[0]))
                self._endings.add(ending)
                ending.add_done_callback(self._endings.discard)

    async def _game_over(self, slot: EngineSlot, start: str, moves: list[str], result: str) -> None:
        try:
            await slot.game_over(start, moves, result)
        except EngineError as error:  # the game is over anyway: a fresh engine for the next
            _LOG.warning("%s", error)
            if slot in self._slots.values():
                self._discard(slot)

    def _notice(self, message: str) -> None:
        self._send({"type": "notice", "message": message})

    # -- handlers ------------------------------------------------------------------------

    def _engine_index(self, message: Mapping[str, object], key: str) -> int:
        return _whole(message, key, 0, len(self.catalog.specs) - 1)

    def _engine_whole(self, message: Mapping[str, object], key: str, engine: int, low: int, high: int) -> int | None:
        """``message``'s whole number ``key`` for the parameter of that name of engine ``engine``,
        within the bounds the engine declared (``low`` to ``high`` for bounds it has not declared);
        ``None`` when the message has none."""
        if message.get(key) is None:
            return None
        declared = self.catalog.listings[engine].ident
        bounds = declared.params.get(key, {}) if declared else {}
        return _whole(message, key, int(bounds.get("min", low)), int(bounds.get("max", high)))

    def _choose_threads(self, engine: int, threads: int | None) -> None:
        """Keep ``threads`` as the page's choice for engine ``engine`` (``None``: the choice stays)."""
        if threads is not None:
            self.threads[engine] = threads

    async def _on_new_game(self, message: Mapping[str, object]) -> None:
        mode = _choice(message, "mode", (PLAY, FREE))
        start = self._position() if _flag(message, "from_current") else Position.start()
        if mode == FREE:
            await self._halt()
            self.analysing = False
            self._free_game(Board(start), {})
        else:
            engine = self._engine_index(message, "engine")
            human = _choice(message, "colour", ("white", "black")) == "white"
            tc = time_control(message.get("time"))
            skill = self._engine_whole(message, "skill", engine, 0, 1000)
            threads = self._engine_whole(message, THREADS_PARAM, engine, 1, 1000)
            tables = _flag(message, "tables") if "tables" in message else self.endgame_tables
            await self._halt()
            self.analysing = False
            self.mode, self.human, self.tc, self.skill, self.endgame_tables = PLAY, human, tc, skill, tables
            self._choose_threads(engine, threads)
            self.engines_of = {not human: engine}
            self.players = {human: PERSON, not human: self.catalog.spec(engine).name}
            self.clocks = {True: tc.base, False: tc.base}
            self.headers = {}
            self._reset(Board(start))
        self.turn_start = time.monotonic()
        self._schedule()
        self._push_state()

    async def _on_watch(self, message: Mapping[str, object]) -> None:
        white = self._engine_index(message, "white")
        black = self._engine_index(message, "black")
        if white == black and self.catalog.spec(white).dxp is not None:
            raise BadMessage(f"{self.catalog.spec(white).name} is a DXP engine, which plays one game at a time: "
                             "it cannot play both sides")
        tc = time_control(message.get("time"))
        shown = self.board.copy()
        while len(shown.moves) > self.cursor:
            shown.pop()
        if shown.outcome() is not None:
            raise BadMessage("the game is over here: go back, or set up another position, to watch from")
        await self._halt()
        self._truncate(self.cursor)
        self.analysing = False
        self.mode, self.tc, self.skill, self.human = WATCH, tc, None, None
        self.engines_of = {True: white, False: black}
        self.players = {True: self.catalog.spec(white).name, False: self.catalog.spec(black).name}
        self.clocks = {True: tc.base, False: tc.base}
        self.clock_log[-1] = dict(self.clocks)
        self.failure = None
        self._game_number += 1
        self._schedule()
        self._push_state()

    async def _on_move(self, message: Mapping[str, object]) -> None:
        start = _whole(message, "start", 1, 32)
        path = message.get("path")
        if not isinstance(path, list) or not 1 <= len(path) <= 12 or any(
                isinstance(square, bool) or not isinstance(square, int) or not 1 <= square <= 32
                for square in path):
            raise BadMessage("path must be a list of 1 to 12 squares (1 to 32)")
        refusal = self._person_may_move()
        if refusal is not None:
            raise BadMessage(f"no move now: {refusal}")
        try:
            wanted = Move(start, path)
        except ValueError as error:
            raise BadMessage(f"not a move: {error}") from None
        legal = legal_moves(self._position())
        if wanted not in legal:
            raise BadMessage(_illegal_reason(wanted, legal))
        await self._person_plays([legal[legal.index(wanted)]])

    async def _person_plays(self, moves: list[Move]) -> None:
        """Play ``moves`` (legal in turn) as the person's from the position shown: the moves after
        it are replaced, in a game the mover's clock is charged, and the engines take it from there.
        One place for it, so that a move entered and an engine line played end in the same state."""
        await self._halt()
        white = self._position().white_to_move
        if self.mode == PLAY:
            clock = self.clocks[white]
            if clock is not None:
                self.clocks[white] = clock + self.tc.inc - (time.monotonic() - self.turn_start)
        self._truncate(self.cursor)
        for move in moves:
            self._push(move)
        self.cursor = len(self.board.moves)
        self.turn_start = time.monotonic()
        self._schedule()
        self._push_state()

    async def _on_play_line(self, message: Mapping[str, object]) -> None:
        """Play an engine line the page shows (``moves``: at most :data:`MAX_PV` Hub or PDN texts)
        from the position it is about (``ply`` and ``position``, its Hub text), as if the person had
        entered its moves there. Only on the analysis board: in a game against an engine it would
        play the engine's moves for it. And only while that position is the one shown, so that a
        line that came before a change of position is never played into another one."""
        ply = _whole(message, "ply", 0, MAX_GAME_PLIES)
        position = _text(message, "position", MAX_POSITION_TEXT)
        texts = _texts(message, "moves", MAX_PV)
        if not texts:
            raise BadMessage("moves must hold at least one move of the line")
        if self.mode == PLAY:
            raise BadMessage("no engine line in a game against an engine: it would play the engine's moves "
                             "for it (analyse the game once it is over)")
        refusal = self._person_may_move()
        if refusal is not None:
            raise BadMessage(f"no move now: {refusal}")
        if ply != self.cursor or position != self._position().hub():
            raise BadMessage(f"the line is about another position than the one shown (ply {self.cursor}): "
                             "it was not played")
        board = self.board.copy()
        while len(board.moves) > self.cursor:
            board.pop()
        moves = []
        for number, text in enumerate(texts, start=1):
            outcome = board.outcome()
            if outcome is not None:
                raise BadMessage(f"move {number} of the line ({text}) comes after the end of the game: "
                                 f"{rules_reason(board, outcome)}")
            try:
                moves.append(board.parse_move(text))
            except MoveError as error:
                raise BadMessage(f"move {number} of the line: {error}") from None
            board.push(moves[-1])
        await self._person_plays(moves)

    async def _on_goto(self, message: Mapping[str, object]) -> None:
        ply = _whole(message, "ply", 0, len(self.board.moves))
        if self.mode == FREE and not self._reviewing():  # a review goes on through the game
            await self._halt()
            self.cursor = ply
            self._schedule()
        else:
            self.cursor = ply
        self._push_state()

    async def _on_takeback(self, message: Mapping[str, object]) -> None:
        if self.mode == WATCH:
            raise BadMessage("stop the engines first")
        if not self.board.moves:
            raise BadMessage("there is no move to take back")
        if self.mode == PLAY and self.flagged is not None:
            raise BadMessage(f"{side_name(self.flagged)} lost on time: start a new game (a take back "
                             "cannot give time back)")
        plies = len(self.board.moves) - 1
        if self.mode == PLAY:
            mine = [ply for ply in range(len(self.board.moves))
                    if self.board.positions[ply].white_to_move == self.human]
            if not mine:
                raise BadMessage("there is no move of yours to take back")
            plies = mine[-1]
        await self._halt()
        self._truncate(plies)
        self.cursor = plies
        self.clocks = dict(self.clock_log[plies])
        self.failure = None
        self.turn_start = time.monotonic()
        self._schedule()
        self._push_state()

    def _playing(self) -> bool:
        return self.mode == PLAY and self.result() is None and self.human is not None

    async def _on_resign(self, message: Mapping[str, object]) -> None:
        if not self._playing() or self.human is None:
            raise BadMessage("there is no game against an engine to resign")
        await self._halt()
        self.verdict = ("0-1" if self.human else "1-0", f"{side_name(self.human)} resigns")
        self._push_state()

    async def _on_draw(self, message: Mapping[str, object]) -> None:
        if not self._playing() or self.human is None:
            raise BadMessage("there is no game against an engine to offer a draw in")
        engine = not self.human
        scores = [score for ply, score in enumerate(self.evals)
                  if score is not None and self.board.positions[ply].white_to_move == engine]
        own = white_view(scores[-1], engine) if scores else None
        name = self.players[engine]
        if own is None or own.value > DRAW_ACCEPT:
            self._notice(f"{name} declines the draw")
            return
        await self._halt()
        self.verdict = ("1/2-1/2", f"agreed ({name} accepted the offer)")
        self._notice(f"{name} accepts the draw")
        self._push_state()

    async def _on_engine_move(self, message: Mapping[str, object]) -> None:
        if not self._playing() or self.board.position.white_to_move == self.human:
            raise BadMessage("there is no engine move to wait for")
        if self._search is not None:
            raise BadMessage("the engine is already thinking")
        self.failure = None
        self._schedule()
        self._push_state()

    async def _on_analyse(self, message: Mapping[str, object]) -> None:
        on = _flag(message, "on")
        engine = self._engine_index(message, "engine") if "engine" in message else self.analysis_engine
        lines = _whole(message, "lines", 1, MAX_LINES) if "lines" in message else self.analysis_lines
        tables = _flag(message, "tables") if "tables" in message else self.endgame_tables
        threads = self._engine_whole(message, THREADS_PARAM, engine, 1, 1000)
        if on and self._playing():
            raise BadMessage("finish the game (or resign) before analysing")
        refusal = analysis_refusal(self.catalog.spec(engine))
        if on and refusal is not None:
            raise BadMessage(refusal)
        await self._halt()
        if on and self.mode != FREE:
            self.mode = FREE
        self.analysing, self.analysis_engine, self.analysis_lines = on, engine, lines
        self.endgame_tables = tables
        self._choose_threads(engine, threads)
        self.failure = None
        self._schedule()
        if not on:
            self._push_analysis(False)
        self._push_state()

    async def _on_stop(self, message: Mapping[str, object]) -> None:
        if self.mode == PLAY and self._search_slot is not None:
            if not self._search_slot.stoppable:
                raise BadMessage(f"{self._search_slot.spec.name} is a DXP engine: DXP cannot ask it to "
                                 "move now (it moves in its own time)")
            await self._search_slot.stop()  # "move now": the search's move is still played
            return
        if self.mode == WATCH:
            await self._halt()
            self.mode = FREE
            self._push_state()
            return
        if self.mode == FREE and self.analysing:
            await self._halt()
            self.analysing = False
            self._push_analysis(False)
            self._push_state()
            return
        if self._reviewing():
            await self._halt()  # the review keeps the positions it finished
            self._push_state()
            return
        raise BadMessage("nothing to stop")

    async def _on_setup(self, message: Mapping[str, object]) -> None:
        text = _text(message, "position", MAX_POSITION_TEXT)
        try:
            position = Position.parse(text)
        except PositionError as error:
            raise BadMessage(f"impossible position: {error}") from None
        await self._halt()
        self._free_game(Board(position), {})
        self._schedule()
        self._push_state()

    def _free_game(self, board: Board, headers: dict[str, str]) -> None:
        self.mode = FREE
        self.human, self.engines_of, self.skill = None, {}, None
        self.clocks = {True: None, False: None}
        self.players = {True: headers.get("White", "?"), False: headers.get("Black", "?")}
        self.headers = headers
        self._reset(board)

    async def _on_load_pdn(self, message: Mapping[str, object]) -> None:
        # Reading 2 MB of PDN takes seconds: in a thread, the other pages are served meanwhile.
        choices, labels, problems = await asyncio.to_thread(_read_pdn, message)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self._notice(f"read around a broken game: {problems[0]}{more}")
        if len(choices) == 1:
            await self._load(choices[0])
            return
        self.pdn_choices = choices
        self._send({"type": "pdn_games", "games": labels})

    async def _on_pick_pdn(self, message: Mapping[str, object]) -> None:
        if not self.pdn_choices:
            raise BadMessage("no PDN file with several games was loaded")
        index = _whole(message, "index", 0, len(self.pdn_choices) - 1)
        _refuse_long(index + 1, self.pdn_choices[index])
        await self._load(self.pdn_choices[index])

    async def _load(self, game: PdnGame) -> None:
        """Show ``game``, with the comments after its moves, the scores they give and its variations
        (each shown as the PDN text it is saved as)."""
        await self._halt()
        self.pdn_choices = []
        # write_game sets these from the game itself when it is saved again.
        tags = {name: value for name, value in game.headers.items() if name not in _GAME_RECORD_TAGS}
        self._free_game(game.board, tags)
        for ply, alternatives in game.variations.items():
            position = self.board.positions[ply]
            self.variations[ply] = [(variation, variation_text(position, ply, self.board.start.white_to_move,
                                                               variation)) for variation in alternatives]
        if len(game.comments) == len(self.comments):
            self.comments = list(game.comments)
            for ply, comment in enumerate(game.comments):
                found = comment_score(comment, self.board.positions[ply].white_to_move, "Annotator" in tags)
                if found is not None:
                    self.evals[ply + found[0]] = found[1]
        outcome = self.board.outcome()
        if game.result != "*" and (outcome is None or outcome.result() != game.result):
            self.verdict = (game.result, game.headers.get("Termination") or "the result recorded in the PDN")
        self._schedule()
        self._push_state()

    async def _on_restore(self, message: Mapping[str, object]) -> None:
        try:
            board = Board(Position.parse(_text(message, "start", MAX_POSITION_TEXT)))
        except PositionError as error:
            raise BadMessage(f"cannot restore the game: its start: {error}") from None
        moves = _texts(message, "moves", MAX_GAME_PLIES)
        for number, text in enumerate(moves, start=1):
            try:
                board.push(board.parse_move(text))
            except MoveError as error:
                raise BadMessage(f"cannot restore the game: move {number}: {error}") from None
        headers = message.get("headers")
        if not isinstance(headers, dict) or len(headers) > MAX_RESTORED_TAGS or not all(
                isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_]+", name) and isinstance(value, str)
                and len(value) <= MAX_POSITION_TEXT for name, value in headers.items()):
            raise BadMessage(f"headers must be at most {MAX_RESTORED_TAGS} PDN tags")
        result = _choice(message, "result", RESULTS)
        if result != "*":
            headers = {**headers, "Termination": _text(message, "reason", MAX_POSITION_TEXT)}
        comments = _texts(message, "comments", MAX_GAME_PLIES)
        await self._load(PdnGame(headers, board, result, comments=comments,
                                 variations=_restored_variations(message, board)))

    def _pdn_tags(self) -> tuple[dict[str, str], str]:
        """The tags a saved game gets (its own, the event, the date, the players) and its result."""
        headers = dict(self.headers)
        headers.setdefault("Event", "Pedina GUI")
        headers.setdefault("Date", datetime.date.today().strftime("%Y.%m.%d"))
        headers["White"], headers["Black"] = self.players[True], self.players[False]
        result = self.result()
        return headers, result[0] if result else "*"

    async def _on_save_pdn(self, message: Mapping[str, object]) -> None:
        headers, result = self._pdn_tags()
        variations = {ply: [variation for variation, _ in alternatives]
                      for ply, alternatives in enumerate(self.variations) if alternatives}
        text = write_game(self.board, headers, result, comment_notes(self.comments), variations)
        self._send({"type": "pdn", "text": text})

    # -- the game review -------------------------------------------------------------------

    def _reviewing(self) -> bool:
        return self.review is not None and self.review.running

    async def _on_review(self, message: Mapping[str, object]) -> None:
        """Review the game shown: the engine (``engine``, else the analysis engine's; ``threads``
        is the page's choice of threads for it, kept) analyses every position in turn at a
        ``depth`` or a ``time`` (seconds) a position, and each answer goes to the page as a
        ``review`` message (progress, marks, summaries) with the graph's scores. The person may
        go through the game meanwhile; any other change, a ``stop``, a new game or a load ends
        it, keeping what was finished."""
        engine = self._engine_index(message, "engine") if "engine" in message else self.analysis_engine
        depth = _whole(message, "depth", 1, MAX_REVIEW_DEPTH) if "depth" in message else None
        move_time = _number(message, "time", 0.05, MAX_REVIEW_TIME) if "time" in message else None
        threads = self._engine_whole(message, THREADS_PARAM, engine, 1, 1000)
        if (depth is None) == (move_time is None):
            raise BadMessage("a review needs a depth or a time a position (one of them)")
        if self.mode == WATCH:
            raise BadMessage("the engines are playing: stop them before reviewing the game")
        if self._playing():
            raise BadMessage("finish the game (or resign) before reviewing it")
        refusal = analysis_refusal(self.catalog.spec(engine))
        if refusal is not None:
            raise BadMessage(refusal)
        if not self.board.moves:
            raise BadMessage("there is no move to review: play or load a game first")
        await self._halt()
        was_analysing = self.analysing
        self.mode, self.analysing, self.failure = FREE, False, None
        self._choose_threads(engine, threads)
        self.review = GameReview(self.board, self.catalog.spec(engine).name, depth, move_time)
        self._start_search(self._slot(engine, 0), self._review)
        if was_analysing:
            self._push_analysis(False)
        self._push_review()
        self._push_state()

    async def _review(self, generation: int, slot: EngineSlot) -> None:
        """Analyse the positions of :attr:`review` in turn, from a fresh game in the engine (its
        hash table empty, as ``pedina analyze`` starts), until all are done or the table moves on."""
        review = self.review
        assert review is not None
        try:
            slot.forget_game()
            await self._prepare(slot, 1, None)
            ident = self.catalog.listings[slot.index].ident
            if ident is not None and ident.name:
                review.engine = f"{ident.name} {ident.version}".strip()
            timeout = MOVE_TIME_SLACK + (review.move_time or ANALYSIS_TIMEOUT)
            board = review.next_board()
            while board is not None and generation == self._generation:
                ply = len(board.moves)
                line = None
                if board.outcome() is None:
                    report = await slot.search(board.start.hub(), [move.hub() for move in board.moves],
                                               review.level(), "analyze", timeout, lambda args: None)
                    if generation != self._generation:
                        break  # stopped: this position was not searched through
                    line = review_line(board.position, report, MAX_PV)
                    if line is None:
                        review.problem = f"{slot.spec.name} gave no score for position {ply}"
                        self.error(f"the review stopped: {review.problem}")
                        break
                review.add(board, line)
                self.evals[ply] = review.white_score(ply)
                self._push_review()
                board = review.next_board()
        except EngineError as error:
            if generation == self._generation:
                review.problem = str(error)
                self._fail(slot, str(error), error.tail)
                self._after_failure()
        finally:
            review.running = False
            if self.review is review:
                self._push_review()

    def _push_review(self) -> None:
        """The ``review`` message: the review (``null`` when there is none) and the graph's scores."""
        review = None if self.review is None else self.review.as_json(line_json, score_json)
        self._send({"type": "review", "review": review, "game": self._game_number,
                    "evals": [score_json(score) for score in self.evals]})

    async def _on_review_pdn(self, message: Mapping[str, object]) -> None:
        if self.review is None or not self.review.analysed:
            raise BadMessage("review the game first: there is no annotation yet")
        headers, result = self._pdn_tags()
        self._send({"type": "pdn", "text": self.review.annotated(headers, result), "annotated": True})


def _read_pdn(message: Mapping[str, object]) -> tuple[list[PdnGame], list[str], list[str]]:
    """The games of a ``load_pdn`` message (with their comments and variations), their
    labels to choose from, and what could not be read. As ``pedina show`` and ``analyze`` do, a
    broken game costs only itself (or its moves from the one that cannot be played), not the
    file; raises :class:`BadMessage` when no game is left, or a single game is longer than
    :data:`MAX_GAME_PLIES`."""
    text = _pdn_file(message) if "data" in message else _text(message, "text", MAX_PDN)
    problems: list[PdnError] = []
    games = read_games(text, on_error=problems.append)
    if not games:
        raise BadMessage(f"cannot read the PDN: {problems[0]}" if problems else "no game found in the PDN text")
    if len(games) == 1:
        _refuse_long(1, games[0])
    return games, [_game_label(number, game) for number, game in enumerate(games, start=1)], \
        [str(problem) for problem in problems]


def _restored_variations(message: Mapping[str, object], board: Board) -> dict[int, list[Variation]]:
    """The variations of a game the page kept over a reload: ``variations`` holds, for each move, the
    texts the page was sent (:func:`pedina.pdn.variation_text`), each read back by the PDN reader
    from the position before its move. One that no longer reads is left out: it was only shown."""
    value = message.get("variations", [])
    if not isinstance(value, list) or len(value) > len(board.moves) or not all(
            isinstance(texts, list) and all(isinstance(text, str) for text in texts) for texts in value) or sum(
            len(text) for texts in value for text in texts) > MAX_PDN:
        raise BadMessage(f"variations must be a list of lists of texts, one list for each move, "
                         f"at most {MAX_PDN} characters in all")
    found: dict[int, list[Variation]] = {}
    for ply, texts in enumerate(value):
        for text in texts:
            inside = text.strip().removeprefix("(").removesuffix(")")
            try:
                line = read_game(f'[FEN "{board.positions[ply].fen()}"]\n{inside}\n')
            except PdnError:
                continue
            if line.board.moves:
                found.setdefault(ply, []).append(Variation(line.board.moves, line.comments, line.variations))
    return found


def _refuse_long(number: int, game: PdnGame) -> None:
    """Refuse game ``number`` of a file if it has more than :data:`MAX_GAME_PLIES` plies."""
    plies = len(game.board.moves)
    if plies > MAX_GAME_PLIES:
        raise BadMessage(f"game {number} of the PDN has {plies} plies: at most {MAX_GAME_PLIES} can be shown")


def _illegal_reason(wanted: Move, legal: list[Move]) -> str:
    captures = [move for move in legal if move.captured]
    if captures and not wanted.captured:
        texts = ", ".join(format_pdn(move, legal) for move in captures[:6])
        return f"a capture is compulsory: {texts}"
    return f"{wanted.full_path()} is not a legal move here"


def _game_label(number: int, game: PdnGame) -> str:
    headers = game.headers
    players = f"{headers.get('White', '?')} - {headers.get('Black', '?')}"
    extra = ", ".join(value for value in (headers.get("Event"), headers.get("Date")) if value)
    moves = len(game.board.moves)
    return f"{number}. {players}{' (' + extra + ')' if extra else ''} {game.result}, {moves} plies"


def _tc_json(tc: TimeControl) -> dict[str, Any]:
    if tc.base is not None:
        return {"kind": "clock", "minutes": tc.base / 60, "increment": tc.inc}
    return {"kind": "move", "seconds": tc.move_time}
