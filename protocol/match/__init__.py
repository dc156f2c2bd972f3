"""``pedina match``: engine-against-engine matches between Hub engines, with statistics.

A match is a list of scheduled games (round robin or gauntlet; each opening
played twice per pair with the colours swapped) played by worker threads on
their own engine processes, while the main thread records, shows and scores
them. One concern a module:

- :mod:`~pedina.protocol.match.options`: time controls, ``--engine`` words, adjudication rules;
- :mod:`~pedina.protocol.match.schedule`: openings and the order of the games;
- :mod:`~pedina.protocol.match.game`: one game between two engines (Hub, DXP or in this process);
- :mod:`~pedina.protocol.match.resume`: the PDN file, written as games end and read back to resume;
- :mod:`~pedina.protocol.match.stats`: Elo, its error bar, LOS and the SPRT;
- :mod:`~pedina.protocol.match.tally`: the score, the final table and the Elo plot;
- :mod:`~pedina.protocol.match.console`: the progress line;
- :mod:`~pedina.protocol.match.runner`: the worker threads and the main loop;
- :mod:`~pedina.protocol.match.command`: the ``pedina match`` command;
- :mod:`~pedina.protocol.match.inprocess`: games between searchers in this process, played
  by :mod:`~pedina.protocol.match.game`, for the strength and tuning scripts.
"""

from pedina.protocol.match.command import match

__all__ = ["match"]
