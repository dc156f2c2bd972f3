"""The match's PDN file read back to resume a match, and the tags each game is written with.

Every finished game is appended and synced at once (:class:`~pedina.protocol.pdnfile.PdnOut`),
so an interrupted match loses only the games in play; :func:`load_finished` finds
the games already played and drops a game cut off while being written.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator, Sequence

from pedina.pdn import PdnError, read_game
from pedina.protocol.match.game import EngineSpec, GameRecord, ScheduledGame
from pedina.protocol.match.options import MatchError


def game_headers(record: GameRecord, specs: Sequence[EngineSpec], event: str, site: str,
                 date: str) -> dict[str, str]:
    """The PDN tags of a finished game; ``Round``, ``White`` and ``Black`` are what resuming matches on.
    ``WhiteOptions`` and ``BlackOptions`` give the parameters each engine was set to (``skill=10``)."""
    white, black = specs[record.game.white], specs[record.game.black]
    tc = str(white.tc) if white.tc == black.tc else f"{white.tc} / {black.tc}"
    tags = {"Event": event, "Site": site, "Date": date, "Round": str(record.game.round),
            "White": white.name, "Black": black.name, "Result": record.result, "TimeControl": tc,
            "Termination": record.termination}
    for colour, spec in (("White", white), ("Black", black)):
        if spec.options:
            tags[f"{colour}Options"] = " ".join(f"{name}={value}" for name, value in spec.options.items())
    return tags


def _chunks(text: str) -> Iterator[str]:
    """The file split before each game's first tag line (games are separated by blank lines)."""
    blocks = re.split(r"\n\s*\n(?=\s*\[)", text)
    for block in blocks:
        if block.strip():
            yield block.strip() + "\n"


def load_finished(path: str, games: Sequence[ScheduledGame],
                  specs: Sequence[EngineSpec]) -> tuple[dict[int, GameRecord], int]:
    """The games of ``games`` already in the PDN file at ``path``, by schedule number.

    Games are matched by round and players, and must have the scheduled opening.
    A game without a result or that cannot be read (an interrupted write leaves one
    at the end) is dropped and the file rewritten without it; the number of games
    dropped is returned too.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise MatchError(f"cannot read {path}: {error.strerror or error}") from None
    by_key = {(game.round, specs[game.white].name, specs[game.black].name): game for game in games}
    finished: dict[int, GameRecord] = {}
    kept: list[str] = []
    dropped = 0
    for chunk in _chunks(text):
        try:
            pdn = read_game(chunk)
        except PdnError:
            dropped += 1
            continue
        if pdn.result == "*":
            dropped += 1
            continue
        headers = pdn.headers
        try:
            key = (int(headers.get("Round", "")), headers.get("White", ""), headers.get("Black", ""))
        except ValueError:
            key = (0, "", "")
        game = by_key.get(key)
        if (game is None or pdn.board.start != game.opening.start
                or tuple(pdn.board.moves[:len(game.opening.moves)]) != game.opening.moves):
            raise MatchError(f"{path} holds a game (round {headers.get('Round', '?')}, "
                             f"{headers.get('White', '?')} - {headers.get('Black', '?')}) that is not "
                             "in this match's schedule: resume with the same engines, openings and seed")
        if game.number in finished:
            raise MatchError(f"{path} holds the game of round {key[0]}, {key[1]} - {key[2]} twice")
        finished[game.number] = GameRecord(game, pdn.board, pdn.result, headers.get("Termination", ""))
        kept.append(chunk)
    if dropped:
        tmp = path + ".tmp"
        Path(tmp).write_text("\n".join(kept), encoding="utf-8")
        os.replace(tmp, path)
    return finished, dropped
