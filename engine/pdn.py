"""PDN reading and writing for Italian draughts games (``[GameType "22"]``).

Reading is tolerant: tag pairs, comments ``{...}`` and ``;`` to end of line,
variations ``(...)`` (nested), move numbers ``12.`` / ``12...``, NAGs
``$1``, ``!``/``?`` annotations, ``%`` escape lines and several games in one
text. A game keeps the ``{...}`` comment after each move and each variation, as the line
played instead of the move before it (:class:`Variation`, nested ones in it), so that what
was read can be written again (:func:`write_game`) and read the same; NAGs, ``;`` comments
and a comment before a line's first move are not kept. Moves are resolved against the
legal moves with :func:`pedina.move.parse_move`, so Hub, PDN and full-path move text are
all accepted; a variation's from the position before the move it replaces. A game (or a
variation) ends where the rules end it (:meth:`pedina.board.Board.outcome`): a move after
that is refused.

Writing gives the tags in a fixed shape (the caller's tags in order, then
``GameType``, ``SetUp``/``FEN`` for a non-initial start, ``Result``), numbered
movetext in PDN move text (:func:`pedina.move.format_pdn`), optional
annotations after each move (:class:`MoveNote`: NAGs, a comment, a variation; or
:class:`Variation` trees as read),
wrapped lines and the result. The output is readable by pydraughts' PDN reader
(one tag per line, one space between tag name and value, no move number given
twice: pydraughts' reader garbles a game where one is, so a Black move after a
comment or a variation carries no number of its own).

Files from other tools come in several encodings: :func:`decode_pdn` reads UTF-8
(with or without a byte-order mark), UTF-16 with its mark, and otherwise
Windows-1252 (what CheckerBoard writes; Latin-1 where that has no character).
Games are written as text for a UTF-8 file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pedina.board import Board
from pedina.move import Move, MoveError, format_pdn, legal_moves
from pedina.position import Position, PositionError

#: Results as written, and the other spellings accepted on input (points out of 2).
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
_RESULT_ALIASES = {"2-0": "1-0", "0-2": "0-1", "1-1": "1/2-1/2"}

#: Tags that :func:`write_game` sets itself, whatever the caller passes.
_OWN_TAGS = ("GameType", "SetUp", "FEN", "Result")
_LINE_WIDTH = 79

_TOKEN = re.compile(
    r"""
      (?P<space>[\s\ufeff]+)
    | (?P<tag>\[\s*(?P<name>[A-Za-z0-9_]+)\s*")
    | (?P<comment>\{[^}]*\}?)
    | (?P<line_comment>;[^\n]*)
    | (?P<open>\()
    | (?P<close>\))
    | (?P<result>(?:1/2-1/2|1-0|0-1|2-0|0-2|1-1|\*)(?![\w/-]))
    | (?P<number>\d+\s*\.+)
    | (?P<move>\d+(?:\s*[-xX:]\s*\d+){1,12}[!?]*)  # 13 squares at most: a side has 12 pieces to take
    | (?P<ellipsis>\.+)
    | (?P<nag>\$\d+|[!?]+)
    """,
    re.VERBOSE,
)
#: What ends a tag value (a quote) or escapes a character in it (a backslash), and the tag's
#: end after the value. The value is scanned by :func:`_tag_value_end`: a regular expression
#: repeating a group over it would keep hundreds of bytes for every character.
_TAG_STOP = re.compile(r'["\\]')
_TAG_CLOSE = re.compile(r'\s*\]')


def decode_pdn(data: bytes) -> str:
    """The text of a PDN file's bytes: UTF-8 (a byte-order mark is dropped), UTF-16 when
    its byte-order mark says so, else Windows-1252, or Latin-1 for a file with one of
    the five bytes Windows-1252 leaves undefined."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16")
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            pass
    return data.decode("latin-1")


class PdnError(ValueError):
    """A PDN text cannot be read (the message names the game and the move), or
    :func:`write_game` was given an invalid tag or result."""


@dataclass
class Variation:
    """A line of moves played instead of one move of another line, from the position before it.

    ``comments[i]`` is the comment after ``moves[i]`` (``""`` for none); ``variations[i]``
    are the lines played instead of ``moves[i]``, nested in this one. A variation read from
    PDN has legal moves: one that is not ends it there (see :func:`read_games`).
    """

    moves: list[Move]
    comments: list[str] = field(default_factory=list)
    variations: dict[int, list[Variation]] = field(default_factory=dict)


@dataclass
class PdnGame:
    """One game read from PDN.

    ``headers`` are the tag pairs in the order given; ``board`` starts at the
    position of the ``FEN`` tag (the initial position without one) and has every
    move of the main line played; ``result`` is ``1-0``, ``0-1``, ``1/2-1/2`` or
    ``*`` (from the movetext, else the ``Result`` tag, else ``*``). ``number`` is the
    game's place in its text (from 1). A game read leniently (see :func:`read_games`)
    may stop before its movetext does: ``error`` then says at which move and why.
    ``comments[i]`` is the comment after main-line move ``i`` (counted from 0, ``""`` for
    none; several are joined by a space) and ``variations[i]`` the lines played instead of
    it, as :func:`write_game` takes them back.
    """

    headers: dict[str, str]
    board: Board
    result: str
    number: int = 1
    error: str = ""
    comments: list[str] = field(default_factory=list)
    variations: dict[int, list[Variation]] = field(default_factory=dict)


class _RawLine:
    """The move texts of one line (a game's main line or a variation), before they are resolved,
    with the comment after each and the lines played instead of each (by index in ``moves``)."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, int]] = []  # move text, line number
        self.comments: list[str] = []
        self.variations: dict[int, list[_RawLine]] = {}

    def add_comment(self, text: str) -> None:
        """Keep a ``{...}`` comment after the line's last move (one before its first is dropped)."""
        if self.moves:
            said = " ".join(text.strip("{}").split())
            self.comments[-1] = f"{self.comments[-1]} {said}".strip()


class _RawGame(_RawLine):
    """Tags and main line (with its variations) of one game, before the moves are resolved."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.headers: dict[str, str] = {}
        self.result: str | None = None
        self.problem = ""  # read leniently: the first text that could not be read (no move after it counts)

    def is_empty(self) -> bool:
        return not self.headers and not self.moves


def _tag_value_end(text: str, start: int) -> int:
    """The closing quote of the tag value that starts at ``start``, ``-1`` when there is none."""
    stop = _TAG_STOP.search(text, start)
    while stop is not None and stop.group() == "\\":
        stop = _TAG_STOP.search(text, stop.end() + 1)
    return -1 if stop is None else stop.start()


def _split_games(text: str, lenient: bool = False) -> list[_RawGame]:
    """The games of a text, tags, moves, comments and variations; a text that cannot be read raises
    :class:`PdnError`, or when ``lenient`` is kept as its game's problem and skipped."""
    # Escape lines (``%`` in the first column) are for other programs.
    text = "\n".join("" if line.startswith("%") else line for line in text.splitlines())
    games: list[_RawGame] = []
    game = _RawGame(1)
    lines: list[_RawLine] = [game]  # the main line, then each variation open in it
    pos = 0
    line = 1

    def fail(message: str) -> None:
        if not lenient:
            raise PdnError(message)
        game.problem = game.problem or message

    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            words = text[pos:pos + 20].split()
            snippet = words[0] if words else text[pos:pos + 20]
            fail(f"game {len(games) + 1} (line {line}): unexpected text {snippet!r}")
            skipped = re.compile(r"\S+").match(text, pos)
            pos = skipped.end() if skipped is not None else pos + 1
            continue
        kind = match.lastgroup
        end = match.end()
        if kind == "tag":
            value_end = _tag_value_end(text, end)
            close = _TAG_CLOSE.match(text, value_end + 1) if value_end >= 0 else None
            if close is None:
                fail(f"game {len(games) + 1} (line {line}): tag {match.group('name')} not closed")
                newline = text.find("\n", end)
                pos = len(text) if newline < 0 else newline
                continue
            end = close.end()
        token_line = line
        line += text.count("\n", pos, end)
        pos = end
        if kind in ("space", "comment", "line_comment", "nag", "number", "ellipsis"):
            if kind == "comment" and not match.group().endswith("}"):
                fail(f"game {len(games) + 1} (line {token_line}): comment not closed")
            if kind == "comment" and not game.problem:
                lines[-1].add_comment(match.group())
            continue
        if kind == "open":
            # An alternative to the line's last move; one before any move is read and dropped.
            variation = _RawLine()
            if lines[-1].moves:
                lines[-1].variations.setdefault(len(lines[-1].moves) - 1, []).append(variation)
            lines.append(variation)
            continue
        if kind == "close":
            if len(lines) == 1:
                fail(f"game {len(games) + 1} (line {token_line}): ')' without a variation to close")
            else:
                lines.pop()
            continue
        if len(lines) > 1:
            if kind == "move" and not game.problem:
                lines[-1].moves.append((match.group(), token_line))
                lines[-1].comments.append("")
            continue
        if kind == "tag":
            # A tag after movetext, or one the game already has, starts the next
            # game (this one's result was left out).
            if game.moves or match.group("name") in game.headers:
                games.append(game)
                game = _RawGame(token_line)
                lines = [game]
            elif not game.headers:
                game.line = token_line
            game.headers[match.group("name")] = re.sub(r"\\(.)", r"\1", text[match.end():value_end])
        elif kind == "result":
            result = match.group()
            game.result = _RESULT_ALIASES.get(result, result)
            games.append(game)
            game = _RawGame(token_line)
            lines = [game]
        elif not game.problem:  # a move
            if game.is_empty():
                game.line = token_line
            game.moves.append((match.group(), token_line))
            game.comments.append("")
    if len(lines) > 1:
        fail(f"game {len(games) + 1}: variation '(' not closed at the end of the text")
    if not game.is_empty() or game.problem:
        games.append(game)
    return games


def _build(raw: _RawGame, number: int, lenient: bool = False, cut: list[str] | None = None) -> PdnGame:
    """The game of ``raw`` (see :func:`read_games` for ``lenient``); variations cut short are named in ``cut``."""
    cut = [] if cut is None else cut
    if raw.problem and not lenient:
        raise PdnError(raw.problem)
    where = f"game {number} (line {raw.line})"
    game_type = raw.headers.get("GameType", "22").strip()
    if game_type.split(",")[0].strip() != "22":
        raise PdnError(f"{where}: GameType {game_type!r} is not Italian draughts (22)")
    fen = raw.headers.get("FEN")
    try:
        start = Position.from_fen(fen) if fen else Position.start()
    except PositionError as error:
        raise PdnError(f"{where}: bad FEN tag: {error}") from error
    board = Board(start)
    main, main_error = _play_line(raw, board, f"game {number}", lenient, cut)
    problem = main_error or raw.problem
    result = raw.result
    if result is None:
        tag = raw.headers.get("Result", "*").strip()
        result = _RESULT_ALIASES.get(tag, tag) if _RESULT_ALIASES.get(tag, tag) in RESULTS else "*"
    return PdnGame(dict(raw.headers), board, result if not problem else "*", number, problem, main.comments,
                   main.variations)


def _play_line(raw: _RawLine, board: Board, game: str, lenient: bool, cut: list[str]) -> tuple[Variation, str]:
    """Play ``raw``'s moves on ``board`` (``game`` names the game in errors), each of its variations
    on a copy of the board before the move it replaces. A move that cannot be played raises
    :class:`PdnError`, or when ``lenient`` ends the line there: the main line's error is the
    result's, a variation's goes to ``cut`` (the variation is kept up to it). Returns the line
    played and its error (``""`` when it was played to its end)."""
    played = Variation([])
    problem = ""
    first = len(board.moves)
    where = "move" if isinstance(raw, _RawGame) else "variation move"
    for index, (text, line) in enumerate(raw.moves):
        ply = len(board.moves)
        label = move_label(ply, board.start.white_to_move)
        ended = board.outcome()
        move = None
        if ended is not None:
            problem = (f"{game} (line {line}), {where} {label} {text}: the game ended after ply {ply} "
                       f"({ended.termination}, {ended.result()})")
        else:
            try:
                move = board.parse_move(re.sub(r"[!?]+$", "", text))
            except MoveError as error:
                problem = f"{game} (line {line}), {where} {label} {text}: {error}"
        if move is None:
            if not lenient:
                raise PdnError(problem)
            if where != "move":
                cut.append(f"{problem}; the variation is kept up to it")
            break
        alternatives = [_play_line(variation, board.copy(), game, lenient, cut)[0]
                        for variation in raw.variations.get(index, ())]
        if any(alternative.moves for alternative in alternatives):
            played.variations[index] = [alternative for alternative in alternatives if alternative.moves]
        board.push(move)
        played.comments.append(raw.comments[index])
    played.moves = board.moves[first:]
    return played, problem


def move_label(ply: int, white_first: bool) -> str:
    """The number of move ``ply`` (counted from 0) of a game whose first move is White's when
    ``white_first``: ``12.`` for a White move, ``12...`` for a Black one (moves numbered from 1)."""
    index = ply if white_first else ply + 1
    return f"{index // 2 + 1}{'.' if index % 2 == 0 else '...'}"


def read_fen_lines(text: str) -> list[Position] | None:
    """The positions of a text of FEN or Hub lines, one a line (blank lines and lines
    starting with ``#`` are skipped), or ``None`` when its first such line is not a
    position (the text may then be PDN).

    Raises :class:`PdnError` naming the line when a later line is not a position.
    """
    positions: list[Position] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip().lstrip("\ufeff")
        if not line or line.startswith("#"):
            continue
        try:
            positions.append(Position.parse(line))
        except PositionError as error:
            if not positions:
                return None
            raise PdnError(f"line {number} is not a position: {error}") from None
    return positions


def read_games(text: str, on_error: Callable[[PdnError], None] | None = None) -> list[PdnGame]:
    """Every game of a PDN text, moves resolved and played.

    Raises :class:`PdnError` naming the game (and move) at fault: also for a move played
    after the rules ended the game (by repetition, say), naming the ply it ended at. With
    ``on_error``, the reader goes on past a broken game instead, as a person reading a
    file of many games would want: a game whose move cannot be played is kept up to that
    move (:attr:`PdnGame.error` says why, its result is ``*``), one whose start cannot be
    read is left out, a variation is kept up to its move that cannot be played, and
    ``on_error`` is given each error.
    """
    games = []
    for number, raw in enumerate(_split_games(text, lenient=on_error is not None), start=1):
        try:
            games.append(_read_one(raw, number, on_error))
        except PdnError as error:
            if on_error is None:
                raise
            on_error(error)
    return games


def _read_one(raw: _RawGame, number: int, on_error: Callable[[PdnError], None] | None) -> PdnGame:
    """Game ``number`` of a text, read strictly, or with ``on_error`` as :func:`read_games` reads it:
    each move that cannot be played is told to ``on_error``; a start that cannot be read raises."""
    cut: list[str] = []
    game = _build(raw, number, lenient=on_error is not None, cut=cut)
    if on_error is not None:
        for problem in cut:
            on_error(PdnError(problem))
        if game.error:
            on_error(PdnError(game.error + f"; the game is kept up to ply {len(game.board.moves)}"))
    return game


def read_game(text: str, number: int = 1, on_error: Callable[[PdnError], None] | None = None) -> PdnGame:
    """Game ``number`` (counted from 1) of a PDN text; only that game's moves are checked.

    Raises :class:`PdnError` when the text has no such game, or that game cannot be read;
    with ``on_error``, a move that cannot be played is told to it instead, as :func:`read_games`
    does (the game is kept up to it, or the variation it is in).
    """
    games = _split_games(text, lenient=True)
    if not games:
        raise PdnError("no game found in the PDN text")
    if not 1 <= number <= len(games):
        raise PdnError(f"there is no game {number}: the PDN text has {len(games)} game"
                       f"{'' if len(games) == 1 else 's'}")
    return _read_one(games[number - 1], number, on_error)


def _tag(name: str, value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise PdnError(f"bad PDN tag name {name!r} (letters, digits and _ only)")
    clean = " ".join(str(value).split()).replace("\\", "\\\\").replace('"', '\\"')
    return f'[{name} "{clean}"]'


@dataclass(frozen=True)
class MoveNote:
    """What the movetext says about one move besides the move itself.

    ``nags`` are numeric annotation glyphs written after the move (``$2`` is
    ``?``, ``$4`` is ``??``); ``comment`` is written in braces after them; a
    ``variation`` is a line of moves played instead of this one, from the
    position before it, with ``variation_comment`` after its first move.
    Braces in comments become parentheses.
    """

    nags: tuple[int, ...] = ()
    comment: str = ""
    variation: tuple[Move, ...] = ()
    variation_comment: str = ""


def _comment(text: str) -> str:
    return "{" + " ".join(text.replace("{", "(").replace("}", ")").split()) + "}"


def _line_tokens(position: Position, ply: int, white_first: bool, moves: Sequence[Move],
                 notes: Sequence[MoveNote | None], variations: Mapping[int, Sequence[Variation]]) -> list[str]:
    """The tokens of a line of ``moves`` from ``position`` (the one before move ``ply`` of the game),
    with ``notes[i]`` and the lines ``variations[i]`` after move ``i``, each in ``(`` and ``)`` tokens."""
    tokens: list[str] = []
    for index, move in enumerate(moves):
        label = move_label(ply + index, white_first)
        if index == 0 or not label.endswith("..."):
            tokens.append(label)
        tokens.append(format_pdn(move, legal_moves(position)))
        note = notes[index] if index < len(notes) else None
        alternatives = list(variations.get(index, ()))
        if note is not None:
            tokens.extend(f"${nag}" for nag in note.nags)
            if note.comment:
                tokens.append(_comment(note.comment))
            if note.variation:
                alternatives.insert(0, Variation(list(note.variation), [note.variation_comment]))
        for alternative in alternatives:
            if alternative.moves:
                tokens.append("(")
                tokens.extend(_line_tokens(position, ply + index, white_first, alternative.moves,
                                           comment_notes(alternative.comments), alternative.variations))
                tokens.append(")")
        position = position.play(move)
    return tokens


def comment_notes(comments: Sequence[str]) -> list[MoveNote | None]:
    """The notes for :func:`write_game` that write ``comments`` (one after each move, ``""`` for none),
    as :attr:`PdnGame.comments` and :attr:`Variation.comments` hold them."""
    return [MoveNote(comment=comment) if comment else None for comment in comments]


def _close_up(tokens: Sequence[str]) -> list[str]:
    """``tokens`` with each ``(`` joined to the token after it and each ``)`` to the one before,
    as a variation is written: ``(12... 10-14 22-18)``."""
    joined: list[str] = []
    opening = ""
    for token in tokens:
        if token == "(":
            opening += token
        elif token == ")":
            joined[-1] += token
        else:
            joined.append(opening + token)
            opening = ""
    return joined


def variation_text(position: Position, ply: int, white_first: bool, variation: Variation) -> str:
    """``variation`` as :func:`write_game` writes it, on one line, in parentheses: the line played
    instead of move ``ply`` (counted from 0) of a game whose first move is White's when
    ``white_first``, from ``position`` (the one before that move); its comments and nested
    variations are in it. Raises :class:`~pedina.move.IllegalMoveError` for a move not legal there."""
    tokens = _line_tokens(position, ply, white_first, variation.moves, comment_notes(variation.comments),
                          variation.variations)
    return " ".join(_close_up(["(", *tokens, ")"]))


def write_game(board: Board, headers: Mapping[str, str] | None = None, result: str | None = None,
               notes: Sequence[MoveNote | None] = (), variations: Mapping[int, Sequence[Variation]] | None = None
               ) -> str:
    """PDN text of the game in ``board``, ending with a newline.

    ``headers`` (e.g. Event, Site, Date, Round, White, Black) are written in
    their order; ``GameType``, ``SetUp``, ``FEN`` and ``Result`` are always set
    here (a ``Result`` given in ``headers`` keeps its place, with the game's
    result). ``result`` defaults to ``board.result()``. ``notes[i]``, when
    there is one, annotates move ``i`` (counted from 0), and the lines
    ``variations[i]`` are written after it (after the note's own variation), as
    :attr:`PdnGame.variations` holds them: a game read is written back with
    ``comment_notes(game.comments)`` and ``game.variations``.

    Raises :class:`~pedina.move.IllegalMoveError` for a variation that is not
    legal from its position.
    """
    if result is None:
        result = board.result()
    result = _RESULT_ALIASES.get(result, result)
    if result not in RESULTS:
        raise PdnError(f"bad result {result!r} (expected one of {', '.join(RESULTS)})")
    start = board.start
    own = {"GameType": "22", "Result": result}
    if start != Position.start():
        own["SetUp"] = "1"
        own["FEN"] = start.fen()
    lines = []
    for name, value in (headers or {}).items():
        if name == "Result":
            lines.append(_tag(name, result))
            del own["Result"]
        elif name not in _OWN_TAGS:
            lines.append(_tag(name, value))
    lines.extend(_tag(name, own[name]) for name in _OWN_TAGS if name in own)

    tokens = _close_up(_line_tokens(start, 0, start.white_to_move, board.moves, notes, variations or {}))
    tokens.append(result)

    movetext: list[str] = []
    current = ""
    for token in tokens:
        if current and len(current) + 1 + len(token) > _LINE_WIDTH:
            movetext.append(current)
            current = token
        else:
            current = f"{current} {token}" if current else token
    movetext.append(current)
    return "\n".join(lines) + "\n\n" + "\n".join(movetext) + "\n"


__all__ = ["MoveNote", "PdnError", "PdnGame", "RESULTS", "Variation", "comment_notes", "decode_pdn", "move_label",
           "read_fen_lines", "read_game", "read_games", "variation_text", "write_game"]
