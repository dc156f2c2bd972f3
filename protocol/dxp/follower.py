"""The DXP Follower: plays the games an Initiator asks for, one connection at a time.

:class:`DxpFollower` reads messages from a connection in a ``select`` loop and
does the protocol's work: it accepts or refuses each GAMEREQ, checks the other
side's moves against our rules, ends games, takes moves back, and keeps our
clock from the GAMEREQ minutes, since the other side's MOVE messages carry no
usable time. The searching is a :class:`~pedina.session.Session`'s: it answers
every ``go`` exactly once and on time, even from a stuck searcher, on one of
its own threads; the answer is handed to the loop through a queue and a wake-up
socket, and the answer of a search the loop has abandoned (a new GAMEREQ, a
GAMEEND, a BACKREQ, a closed connection) is dropped there.
"""

from __future__ import annotations

import queue
import select
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, TextIO

from pedina.board import Board, Outcome
from pedina.pdn import write_game
from pedina.position import Position
from pedina.search import DEFAULT_SETTINGS, Searcher
from pedina.settings import EngineSettings
from pedina.session import Answer, Session, SupportsSearch
from pedina.timeman import Limits
from pedina.protocol.pdnfile import PdnOut
from pedina.protocol.dxp.messages import (BackAccept, BackRequest, Chat, DxpError, GameAccept, GameEnd, GameRequest,
                                          Message, MessageReader, MoveMessage, UnsupportedVersion, backreq_ply,
                                          decode_frame, encode, find_move, move_message, parse_message, printable)

#: Our name in GAMEACC.
ENGINE_NAME = "Pedina"
#: Pause between two messages we send with nothing received in between (seconds):
#: pydraughts' reader fuses two messages that arrive in one ``recv`` and loses the second.
#: The second waits in an outbox meanwhile: the connection loop never sleeps.
MESSAGE_GAP = 0.2
#: Seconds the other side may stay silent when it is not waiting for our move (a game's
#: clock adds its minutes): then the connection is closed, freeing the server.
IDLE_TIMEOUT = 600.0
#: Seconds a send may wait for the other side to read: a client that never reads is dropped.
SEND_TIMEOUT = 10.0
#: Unreadable messages and refused GAMEREQs a connection may send before it is closed, which
#: bounds what a flood of bad messages costs the log.
MAX_FAULTS = 50


def think_limits(clock: float | None, margin: float, moves_left: int | None, move_time: float) -> Limits:
    """Limits for one move: on our ``clock`` (seconds left, less ``margin`` kept in reserve)
    with ``moves_left`` to play in it, or ``move_time`` a move when the game has no clock."""
    if clock is None:
        return Limits(move_time=move_time)
    return Limits(clock=max(0.0, clock - margin), moves_to_go=moves_left if moves_left and moves_left > 0 else None)


def _excerpt(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _end_reason(outcome: Outcome, engine_white: bool) -> int:
    """GAMEEND reason from our side: 1 we lose, 2 draw, 3 we win."""
    if outcome.winner is None:
        return 2
    return 3 if outcome.winner == engine_white else 1


@dataclass
class _Game:
    """The game in play on the connection: its record, our colour and our clock."""

    number: int
    board: Board
    engine_white: bool
    opponent: str
    minutes: int
    moves_per_game: int
    clock: float | None            # seconds left on our clock; None: no clock given
    turn_started: float = 0.0      # when our turn began (monotonic)
    used: float = 0.0

    def engine_to_move(self) -> bool:
        return self.board.position.white_to_move == self.engine_white

    def moves_left(self) -> int | None:
        """Moves still to play within the GAMEREQ's move count (``None``: no count)."""
        if not self.moves_per_game:
            return None
        played = sum(1 for position in self.board.positions[:-1] if position.white_to_move == self.engine_white)
        return self.moves_per_game - played


class DxpFollower:
    """Plays DXP games as the Follower on one connection at a time (:meth:`serve_connection`).

    ``log`` gets both directions with timestamps (``>`` received, ``<`` sent,
    ``#`` events, the session's reports among them); ``status`` one line per
    finished game. ``time_margin`` seconds of the clock are kept in reserve; a
    GAMEREQ with 0 minutes is played at ``move_time`` seconds a move.
    ``settings`` and ``searcher_factory`` are the session's (tests pass stub
    searchers). ``pdnout`` receives every game as it ends (its result by the
    rules, Pedina's win when the opponent resigns, else ``*``). ``resident``: this follower is its process's for life, and
    prepares its session at once (:meth:`pedina.session.Session.prepare`). ``idle_timeout``,
    ``send_timeout`` and ``max_faults``: see :data:`IDLE_TIMEOUT`, :data:`SEND_TIMEOUT` and
    :data:`MAX_FAULTS`.
    """

    def __init__(self, settings: EngineSettings = DEFAULT_SETTINGS, *, log: TextIO | None = None,
                 status: TextIO | None = None, time_margin: float = 1.0, move_time: float = 1.0,
                 message_gap: float = MESSAGE_GAP, searcher_factory: Callable[[EngineSettings], SupportsSearch] = Searcher,
                 pdnout: PdnOut | None = None, resident: bool = False, idle_timeout: float = IDLE_TIMEOUT,
                 send_timeout: float = SEND_TIMEOUT, max_faults: int = MAX_FAULTS) -> None:
        self.pdnout = pdnout
        self.time_margin = time_margin
        self.move_time = move_time
        self.message_gap = message_gap
        self.idle_timeout = idle_timeout
        self.send_timeout = send_timeout
        self.max_faults = max_faults
        self._interrupted = threading.Event()
        self._log_stream = log
        # The session reports from its own threads: one line at a time in the log.
        self._log_lock = threading.Lock()
        self._status = status
        self._session = Session(settings, searcher_factory=searcher_factory, report=self._event)
        if resident:
            self._session.prepare()
        self._searches = 0                # searches started, numbering their answers
        self._answers: queue.SimpleQueue[tuple[int, Answer]] = queue.SimpleQueue()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._games_played = 0
        self._connections = 0
        self._reset(None)

    def _reset(self, conn: socket.socket | None) -> None:
        self._conn = conn
        self._reader = MessageReader()
        self._game: _Game | None = None
        self._awaited: int | None = None  # the search whose answer is our move; None: not thinking
        self._awaiting_end = False        # we sent the first GAMEEND; the next one received confirms it
        self._last_send: float | None = None  # our last message, if nothing was received since
        self._outbox: deque[bytes] = deque()  # messages waiting for the gap after the last one
        self._last_heard = time.monotonic()
        self._faults = 0
        self._closed = False

    def interrupt(self) -> None:
        """From another thread: end the connection being served (as Ctrl-C would) and refuse
        later ones at once."""
        self._interrupted.set()
        self._wake()

    def close(self) -> None:
        """Stop any search, wait (bounded) for its thread, and release the wake-up sockets."""
        self._session.close()
        self._wake_read.close()
        self._wake_write.close()

    # -- the connection loop --------------------------------------------------------

    def serve_connection(self, conn: socket.socket, peer: str = "?") -> None:
        """Play on ``conn`` until the other side closes it (``conn`` is closed on return)."""
        self._connections += 1
        self._reset(conn)
        conn.settimeout(self.send_timeout)  # a send waits at most this long; reads wait in select
        self._event(f"connection {self._connections} from {peer}")
        why = "connection closed"
        try:
            while not self._closed:
                readable, _, _ = select.select([conn, self._wake_read], [], [], self._wait())
                if self._interrupted.is_set():
                    why = "interrupted"
                    break
                if self._wake_read in readable:
                    self._drain_wake()
                self._collect_answers()
                self._send_due()
                if conn in readable and not self._closed:
                    try:
                        data = conn.recv(4096)
                    except OSError as error:
                        self._event(f"receive failed: {error}")
                        break
                    if not data:
                        break
                    self._last_heard = time.monotonic()
                    for frame in self._reader.feed(data):
                        self._handle_frame(frame)
                        if self._faults >= self.max_faults:
                            self._event(f"{self._faults} unreadable or refused messages: closing the connection")
                            self._closed = True
                            break
                elif not readable and self._idle() > self._idle_limit():
                    self._event(f"nothing received for {self._idle():.0f} s: closing the connection")
                    break
        except KeyboardInterrupt:
            why = "interrupted"
            raise
        except Exception as error:  # an engine bug ends this connection, not the server
            why = f"internal error: {type(error).__name__}: {error}"
            self._event(why)
        finally:
            self._abandon_search()
            if self._game is not None:
                self._finish_game(f"unfinished: {why}")
            if self._reader.pending:
                self._event(f"connection closed in the middle of a message: {printable(self._reader.pending)}")
            self._event(f"connection {self._connections} closed")
            conn.close()
            self._reset(None)

    def _idle(self) -> float:
        """Seconds the other side has been silent while not waiting for our move (0 while it is)."""
        return 0.0 if self._awaited is not None else time.monotonic() - self._last_heard

    def _idle_limit(self) -> float:
        game = self._game
        return self.idle_timeout + (game.minutes * 60.0 if game is not None else 0.0)

    def _wait(self) -> float | None:
        """How long the loop may wait for input: until the outbox's next message is due, or the
        connection's idle limit (none while we think: the session wakes the loop)."""
        if self._outbox and self._last_send is not None:
            return max(0.0, self._last_send + self.message_gap - time.monotonic())
        if self._awaited is not None:
            return None
        return max(0.0, self._idle_limit() - self._idle()) + 0.01

    def _wake(self) -> None:
        try:
            self._wake_write.send(b"!")
        except OSError:  # closed: nothing is waiting any more
            pass

    def _drain_wake(self) -> None:
        try:
            while self._wake_read.recv(256):
                pass
        except BlockingIOError:
            pass

    # -- received messages ----------------------------------------------------------

    def _handle_frame(self, frame: bytes) -> None:
        self._log(">", printable(frame))
        self._last_send = None
        self._send_due()  # a message received in between: what waited for the gap goes now
        try:
            message = parse_message(decode_frame(frame))
        except UnsupportedVersion as error:
            self._refuse(1, str(error))
            return
        except DxpError as error:
            self._bad_message(frame, error)
            return
        try:
            self._route(message)
        except Exception as error:  # an engine bug must not end the session
            self._event(f"internal error on {printable(frame)}: {type(error).__name__}: {error}")
            self._send_message(Chat(f"Pedina internal error: {type(error).__name__}: {error}"))

    def _route(self, message: Message) -> None:
        if isinstance(message, GameRequest):
            self._on_gamereq(message)
        elif isinstance(message, MoveMessage):
            self._on_move(message)
        elif isinstance(message, GameEnd):
            self._on_gameend(message)
        elif isinstance(message, BackRequest):
            self._on_backreq(message)
        elif isinstance(message, Chat):
            self._event(f"chat: {message.text}")
        else:
            self._event(f"ignored: {type(message).__name__} is only sent by a Follower or to an Initiator")

    def _bad_message(self, frame: bytes, error: DxpError) -> None:
        """Explain in a CHAT; a bad GAMEREQ is refused, a bad MOVE in a game ends the game."""
        text = printable(frame)
        self._faults += 1
        self._event(f"bad message {text!r}: {error}")
        if frame[:1] == b"R":
            self._refuse(2, f"cannot read GAMEREQ: {error}")
        elif frame[:1] == b"M" and self._their_turn():
            self._send_message(Chat(f"cannot read MOVE: {error} ({_excerpt(text)})"))
            self._end_game(0, f"unreadable move from the opponent: {error}")
        else:
            self._send_message(Chat(f"cannot read message: {error} ({_excerpt(text)})"))

    def _their_turn(self) -> bool:
        return self._game is not None and not self._game.engine_to_move()

    def _refuse(self, code: int, why: str) -> None:
        self._faults += 1
        self._event(f"GAMEREQ refused (code {code}): {why}")
        self._send_message(Chat(why))
        self._send_message(GameAccept(ENGINE_NAME, code))

    def _on_gamereq(self, request: GameRequest) -> None:
        self._awaiting_end = False
        if self._game is not None:
            self._abandon_search()
            self._finish_game("unfinished: a new GAMEREQ replaced it")
        board = Board(request.position or Position.start())
        if not board.legal_moves():
            self._refuse(2, "the side to move has no legal moves in the GAMEREQ position")
            return
        self._games_played += 1
        clock = request.minutes * 60.0 if request.minutes else None
        self._game = game = _Game(self._games_played, board, request.follower_white, request.initiator or "?",
                                  request.minutes, request.moves, clock)
        self._event(f"game {game.number}: Pedina plays {'White' if game.engine_white else 'Black'} against "
                    f"{game.opponent}, {f'{request.minutes} min' if clock else f'{self.move_time:g} s a move'}"
                    f"{f' for {request.moves} moves' if request.moves else ''}, from {board.position.fen()}")
        self._send_message(GameAccept(ENGINE_NAME, 0))
        # After the GAMEACC: the session may first wait (briefly) for a search of the
        # game just abandoned, and the GAMEACC need not wait with it.
        self._session.new_game()
        if game.engine_to_move():
            self._our_turn()

    def _on_move(self, message: MoveMessage) -> None:
        game = self._game
        if game is None:
            self._send_message(Chat("MOVE without a game: send a GAMEREQ first"))
            return
        if not self._their_turn():
            self._event("MOVE out of turn ignored")
            self._send_message(Chat("MOVE out of turn (it is Pedina's move): ignored"))
            return
        outcome = game.board.outcome()
        if outcome is not None:  # ended by our last move; they played on
            self._send_message(Chat(f"the game was already over: {outcome.result()} by {outcome.termination}"))
            self._end_game(_end_reason(outcome, game.engine_white), f"{outcome.termination}, opponent played on")
            return
        try:
            move = find_move(game.board.legal_moves(), message)
        except DxpError as error:
            self._event(f"illegal move from the opponent in {game.board.position.fen()}: {error}")
            self._send_message(Chat(f"{error} in {game.board.position.fen()}"))
            self._end_game(0, f"illegal move from the opponent: {error}")
            return
        game.board.push(move)
        self._our_turn()

    def _on_gameend(self, message: GameEnd) -> None:
        if self._awaiting_end:
            self._awaiting_end = False
            self._event("GAMEEND confirmed")
            return
        if self._game is None:
            self._event("GAMEEND with no game in play: ignored")
            return
        self._abandon_search()
        self._send_message(GameEnd(0, 0))
        if self._game.board.outcome() is not None:
            self._finish_game("GAMEEND from the opponent")
        else:
            reasons = {0: "no reason given", 1: "it resigns", 2: "it claims a draw", 3: "it claims a win"}
            resigned = message.reason == 1
            self._finish_game(f"ended by the opponent ({reasons[message.reason]})",
                              ("1-0" if self._game.engine_white else "0-1") if resigned else None)

    def _on_backreq(self, request: BackRequest) -> None:
        game = self._game
        if game is None:
            self._send_message(Chat("BACKREQ without a game"))
            self._send_message(BackAccept(2))
            return
        ply = backreq_ply(game.board.start.white_to_move, request)
        if not 0 <= ply <= len(game.board.moves):
            side = "White" if request.white_to_move else "Black"
            self._send_message(Chat(f"cannot take back to move {request.number} with {side} to move: "
                                    f"the game has {len(game.board.moves)} plies"))
            self._send_message(BackAccept(2))
            return
        self._abandon_search()
        while len(game.board.moves) > ply:
            game.board.pop()
        self._event(f"took back to ply {ply}: {game.board.position.fen()}")
        self._send_message(BackAccept(0))
        if game.engine_to_move():
            self._our_turn()

    # -- our moves ------------------------------------------------------------------

    def _our_turn(self) -> None:
        """Our move: end the game if our rules say it is over, else start thinking."""
        game = self._game
        assert game is not None
        game.turn_started = time.monotonic()
        outcome = game.board.outcome()
        if outcome is not None:
            self._end_game(_end_reason(outcome, game.engine_white), str(outcome.termination))
            return
        self._searches += 1
        number = self._awaited = self._searches
        limits = think_limits(game.clock, self.time_margin, game.moves_left(), self.move_time)
        self._session.go(game.board, limits, on_answer=lambda answer: self._hand_over(number, answer))

    def _hand_over(self, number: int, answer: Answer) -> None:
        """On the session's thread: queue search ``number``'s answer and wake the loop."""
        self._answers.put((number, answer))
        self._wake()

    def _collect_answers(self) -> None:
        while True:
            try:
                number, answer = self._answers.get_nowait()
            except queue.Empty:
                return
            if number == self._awaited:  # else abandoned: its answer is dropped
                self._awaited = None
                self._play_answer(answer)

    def _play_answer(self, answer: Answer) -> None:
        """Play the session's move on our board and send it, charging our clock."""
        game = self._game
        # Only a game in play with a legal move starts a search, and every way out of
        # the game abandons it first.
        assert game is not None and answer.move is not None
        used = time.monotonic() - game.turn_started
        game.board.push(answer.move)
        self._send_message(move_message(answer.move, used))
        game.used += used
        if game.clock is not None:
            game.clock -= used
            self._event(f"clock: {used:.3f} s used, {game.clock:.3f} s left")
        outcome = game.board.outcome()
        if outcome is not None:
            self._event(f"game over by our rules ({outcome.result()}, {outcome.termination}): "
                        "waiting for the opponent's GAMEEND")

    def _abandon_search(self) -> None:
        """Stop the search we are waiting for, if any; its answer will be dropped."""
        if self._awaited is not None:
            self._awaited = None
            self._session.stop()

    # -- game end -------------------------------------------------------------------

    def _end_game(self, reason: int, why: str) -> None:
        """Send the first GAMEEND (it is our turn) and close the game."""
        self._abandon_search()
        self._send_message(GameEnd(reason, 0))
        self._awaiting_end = True
        self._finish_game(why)

    def _finish_game(self, why: str, result_text: str | None = None) -> None:
        """Close the game in play: log it, report it on ``status``, append it to ``pdnout``.
        ``result_text`` is the PDN result when the rules did not end the game (``*`` without one)."""
        game = self._game
        if game is None:
            return
        self._game = None
        outcome = game.board.outcome()
        pdn_result = outcome.result() if outcome else result_text or "*"
        result = f"{outcome.result()} ({outcome.termination})" if outcome else pdn_result
        names = ("Pedina", game.opponent) if game.engine_white else (game.opponent, "Pedina")
        clock = f"{game.used:.1f} s of {game.minutes * 60} s" if game.clock is not None else f"{game.used:.1f} s"
        line = (f"game {game.number}: {names[0]} - {names[1]}  {result}, {len(game.board.moves)} plies, "
                f"Pedina used {clock}; {why}")
        self._event(line)
        if self._status is not None:
            try:
                self._status.write(line + "\n")
                self._status.flush()
            except (OSError, ValueError):
                self._status = None
        if self.pdnout is not None:
            tags = {"Event": "DXP game", "Date": time.strftime("%Y.%m.%d"), "Round": str(game.number),
                    "White": names[0], "Black": names[1], "Termination": why}
            try:
                self.pdnout.write(write_game(game.board, tags, pdn_result))
            except OSError as error:
                self._event(f"cannot append the game to {self.pdnout.path}: {error.strerror or error}")

    # -- output ---------------------------------------------------------------------

    def _send_message(self, message: Message) -> None:
        """Send now, or once the gap after our last message has passed (see :data:`MESSAGE_GAP`)."""
        if self._conn is None or self._closed:
            return
        self._outbox.append(encode(message))
        self._send_due()

    def _send_due(self) -> None:
        """Send what the outbox holds whose gap has passed."""
        while self._outbox and self._conn is not None and not self._closed:
            if self._last_send is not None and time.monotonic() < self._last_send + self.message_gap:
                return
            data = self._outbox.popleft()
            self._log("<", data[:-1].decode("ascii"))
            try:
                self._conn.sendall(data)
            except OSError as error:  # the timeout of a client that does not read among them
                self._event(f"send failed: {error}")
                self._closed = True
            self._last_send = time.monotonic()

    def _event(self, text: str) -> None:
        self._log("#", text)

    def _log(self, direction: str, text: str) -> None:
        with self._log_lock:
            if self._log_stream is None:
                return
            now = time.time()
            stamp = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now % 1 * 1000):03d}"
            try:
                self._log_stream.write(f"{stamp} {direction} {text}\n")
                self._log_stream.flush()
            except (OSError, ValueError):
                self._log_stream = None


__all__ = ["DxpFollower", "ENGINE_NAME", "MESSAGE_GAP", "think_limits"]
