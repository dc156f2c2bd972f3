"""Openings, and the order a match plays its games in.

The default openings are every 3-ply start (:func:`all_openings`); an openings
file gives FEN positions or PDN games (:func:`read_openings`). :func:`schedule`
plays each opening once per round, every pair of engines with both colours.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Sequence

from pedina.board import Board
from pedina.move import Move
from pedina.pdn import PdnError, decode_pdn, read_fen_lines, read_games
from pedina.position import Position
from pedina.protocol.match.game import Opening, ScheduledGame
from pedina.protocol.match.options import MatchError


def opening_lines(plies: int = 3, start: Position | None = None) -> list[list[Move]]:
    """Every move sequence of ``plies`` plies from ``start`` (default: the initial
    position), in move generation order, stopping early at a game end."""
    board = Board(start)
    out: list[list[Move]] = []

    def walk(depth: int) -> None:
        moves = board.legal_moves()
        if depth == 0 or not moves:
            out.append(list(board.moves))
            return
        for move in moves:
            board.push(move)
            walk(depth - 1)
            board.pop()

    walk(plies)
    return out


def all_openings(plies: int = 3) -> list[Opening]:
    """Every legal sequence of ``plies`` moves from the start position, in Hub move text order."""
    lines = sorted(opening_lines(plies), key=lambda line: [move.hub() for move in line])
    start = Position.start()
    return [Opening(start, tuple(line)) for line in lines]


def read_openings(path: str) -> list[Opening]:
    """Openings from a file of FEN (or Hub) positions, one a line, or of PDN games.

    A PDN game gives its start position and its moves (the file in any encoding
    :func:`~pedina.pdn.decode_pdn` reads). Openings whose game is already over are left out.
    """
    try:
        text = decode_pdn(Path(path).read_bytes())
    except OSError as error:
        raise MatchError(f"cannot read openings file {path}: {error.strerror or error}") from None
    try:
        positions = read_fen_lines(text)
        if positions is not None:
            found = [Opening(position) for position in positions]
        else:
            found = [Opening(game.board.start, tuple(game.board.moves)) for game in read_games(text)]
    except PdnError as error:
        raise MatchError(f"openings file {path}: {error}") from None
    playable = [opening for opening in found if not opening.board().is_game_over()]
    if not playable:
        raise MatchError(f"openings file {path}: no playable opening found")
    return playable


def schedule(engines: int, openings: Sequence[Opening], *, gauntlet: bool = False,
             rounds: int | None = None, games: int | None = None) -> list[ScheduledGame]:
    """The match's games in order: per round one opening, every pair playing it with both colours.

    Openings are used in order and cycled when there are more rounds than openings.
    """
    pairs = ([(0, other) for other in range(1, engines)] if gauntlet
             else list(itertools.combinations(range(engines), 2)))
    total_rounds = len(openings) if rounds is None else rounds
    result: list[ScheduledGame] = []
    for round_index in range(total_rounds):
        opening = openings[round_index % len(openings)]
        for first, second in pairs:
            for white, black in ((first, second), (second, first)):
                if games is not None and len(result) >= games:
                    return result
                result.append(ScheduledGame(len(result) + 1, round_index + 1, opening, white, black))
    return result
