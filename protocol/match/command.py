"""The ``pedina match`` command: its options, checked, then the match and its report."""

from __future__ import annotations

import os
import random
import sys
from contextlib import ExitStack

import click

from pedina.protocol.cli import FiniteRange

from pedina.protocol.match.cluster import ClusterVenue, check_cluster_engines, cluster_client
from pedina.protocol.match.console import Console, clock_text
from pedina.protocol.match.game import DrawRule, EngineSpec, ResignRule, Settings, TimeControl
from pedina.protocol.match.options import MatchCommand, MatchError, engine_spec, parse_pairs, parse_rule, parse_tc
from pedina.protocol.match.runner import ThreadVenue, Venue, check_engines, run_match
from pedina.protocol.match.schedule import all_openings, read_openings, schedule
from pedina.protocol.match.stats import Sprt
from pedina.protocol.match.tally import final_table, plot_history
from pedina.protocol.plotting import check_plot_path
from pedina.smp import usable_cores


@click.command(cls=MatchCommand)
@click.option("--engine", "engines", multiple=True, metavar="KEY=VALUE...",
              help="An engine (two or more): cmd=COMMAND [name=NAME] [dir=DIR] [option.PARAM=VALUE]... "
                   "[tc=.. st=.. depth=.. nodes=..], e.g. --engine cmd=\"pedina hub\" name=A option.skill=10; "
                   "or a running DXP engine, dxp=HOST:PORT [name=NAME] (its clock: whole minutes, no increment; "
                   "a time a move becomes the nearest pace, e.g. st=0.1 is 1 minute for 600 moves).")
@click.option("--each", "each", default="", metavar="KEY=VALUE...",
              help="Settings for every engine (an --engine's own settings win).")
@click.option("--gauntlet", is_flag=True, help="The first engine plays each of the others (default: round robin).")
@click.option("--openings", "openings_path", type=click.Path(dir_okay=False),
              help="FEN positions (one a line) or PDN games to start from (default: every 3-ply opening).")
@click.option("--shuffle", is_flag=True, help="Shuffle the openings (with --seed).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --shuffle.")
@click.option("--rounds", type=click.IntRange(1), help="Rounds (one opening each, every pair, both colours).")
@click.option("--games", "max_games", type=click.IntRange(1), help="Stop after this many games.")
@click.option("--tc", metavar="[MOVES/]SECONDS+INC",
              help="Clock per engine, SECONDS+INCREMENT (increment credited before each move); with MOVES/, "
                   "SECONDS for every MOVES moves (40/60+1).")
@click.option("--st", type=FiniteRange(0, min_open=True), help="Seconds per move.")
@click.option("--depth", type=click.IntRange(1), help="Fixed search depth.")
@click.option("--nodes", type=click.IntRange(1), help="Fixed node count.")
@click.option("--timemargin", type=FiniteRange(0), default=0.2, show_default=True,
              help="Seconds a move may overrun its time before it loses.")
@click.option("--timeout", type=FiniteRange(0, min_open=True), default=60.0, show_default=True,
              help="Seconds to wait for an engine's answer when no clock bounds it (start-up, depth, nodes).")
@click.option("--maxplies", type=click.IntRange(1), help="Adjudicate a draw after this many plies.")
@click.option("--draw", "draw_text", metavar="movenumber=N movecount=N score=N",
              help="Adjudicate a draw from move N on when both engines' last movecount scores are within "
                   "score (hundredths of a man).")
@click.option("--resign", "resign_text", metavar="movecount=N score=N",
              help="Adjudicate a win when both engines agree for movecount moves that one is up by score.")
@click.option("--concurrency", type=click.IntRange(1),
              help="Games played at the same time on this machine (default 1).")
@click.option("--cluster", metavar="ADDRESS",
              help="Play the games as tasks on a Dask cluster: tcp://HOST:PORT, a scheduler file, "
                   "or local:N (a local cluster of N workers). Needs pedina[cluster].")
@click.option("--restart", is_flag=True, help="Start fresh engine processes for every game.")
@click.option("--no-book", "no_book", is_flag=True,
              help="Engines that declare a book parameter play without their opening book (set to false).")
@click.option("--pdnout", "--pgnout", "pdn_path", type=click.Path(dir_okay=False),
              help="Write every game to this PDN file as soon as it ends.")
@click.option("--resume", is_flag=True, help="Continue the match recorded in --pdnout, playing only the missing games.")
@click.option("--sprt", "sprt_text", metavar="elo0=E elo1=E alpha=A beta=B",
              help="Stop once a sequential probability ratio test decides (two engines).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Save a picture of the Elo estimate over the match (needs matplotlib).")
@click.option("--event", default="Pedina match", show_default=True, help="PDN Event tag.")
def match(engines: tuple[str, ...], each: str, gauntlet: bool, openings_path: str | None, shuffle: bool,
          seed: int, rounds: int | None, max_games: int | None, tc: str | None, st: float | None,
          depth: int | None, nodes: int | None, timemargin: float, timeout: float, maxplies: int | None,
          draw_text: str | None, resign_text: str | None, concurrency: int | None, cluster: str | None,
          restart: bool, no_book: bool,
          pdn_path: str | None, resume: bool, sprt_text: str | None, plot_path: str | None,
          event: str) -> None:
    """Play a match between Hub engines (and running DXP engines) and show who is stronger.

    \b
    Example: full strength against skill 10, 0.1 s a move, two games at a time:
      pedina match --engine cmd="pedina hub" name=full \\
                   --engine cmd="pedina hub" name=skill10 option.skill=10 \\
                   --st 0.1 --games 100 --shuffle --concurrency 2 --pdnout games.pdn
    """
    if tc is not None and st is not None:
        raise MatchError("give --tc (a clock) or --st (a time a move), not both")
    base, inc, moves = parse_tc(tc) if tc else (None, 0.0, None)
    default_tc = TimeControl(base, inc, st, depth, nodes, moves)
    common = parse_pairs(each, "--each")
    specs = [engine_spec(parse_pairs(text, "--engine"), common, default_tc, number)
             for number, text in enumerate(engines, start=1)]
    if len(specs) < 2:
        raise MatchError("a match needs at least two --engine options")
    names = [spec.name for spec in specs]
    if len(set(names)) != len(names):
        raise MatchError("engine names must differ (give each --engine a name=)")
    settings = Settings(timemargin, timeout, maxplies, restart=restart, book=not no_book)
    if draw_text is not None:
        settings.draw = DrawRule(**parse_rule(draw_text, "--draw", ("movenumber", "movecount", "score")))
    if resign_text is not None:
        settings.resign = ResignRule(**parse_rule(resign_text, "--resign", ("movecount", "score")))
    sprt = None
    if sprt_text is not None:
        if len(specs) != 2:
            raise MatchError("--sprt needs exactly two engines")
        pairs = parse_pairs(sprt_text, "--sprt")
        try:
            sprt = Sprt(**{key: float(value) for key, value in pairs.items()})
        except (TypeError, ValueError) as error:
            raise MatchError(f"bad --sprt (expected elo0=E elo1=E alpha=A beta=B): {error}") from None
    dxp_names = [spec.name for spec in specs if spec.dxp is not None]
    if dxp_names and cluster is not None:
        raise MatchError(f"{dxp_names[0]} is a DXP engine, which plays one game at a time: not with --cluster")
    if dxp_names and (concurrency or 1) > 1:
        raise MatchError(f"{dxp_names[0]} is a DXP engine, which plays one game at a time: --concurrency must be 1")
    if cluster is not None and concurrency is not None:
        raise MatchError("--concurrency is for this machine: with --cluster the workers' threads "
                         "decide how many games are played at once")
    if resume and pdn_path is None:
        raise MatchError("--resume needs --pdnout FILE (the match to continue)")
    if pdn_path is not None and not resume and os.path.exists(pdn_path) and os.path.getsize(pdn_path):
        raise MatchError(f"{pdn_path} already exists: add --resume to finish that match, or choose another file")
    if pdn_path is not None:
        try:
            open(pdn_path, "a", encoding="utf-8").close()
        except OSError as error:
            raise MatchError(f"cannot write {pdn_path}: {error.strerror or error}") from None
    if plot_path is not None:
        check_plot_path(plot_path, "--plot")
    openings = read_openings(openings_path) if openings_path else all_openings()
    if shuffle:
        random.Random(seed).shuffle(openings)
    games = schedule(len(specs), openings, gauntlet=gauntlet, rounds=rounds, games=max_games)
    console = Console(sys.stdout)
    with ExitStack() as stack:
        venue: Venue
        if cluster is not None:
            client = stack.enter_context(cluster_client(cluster))
            check_cluster_engines(client, specs, settings)
            venue = ClusterVenue(client, cluster)
        else:
            check_engines(specs, settings)
            venue = ThreadVenue(concurrency or 1)
            crowded = _crowding_warning(specs, concurrency or 1)
            if crowded:
                click.echo(crowded, err=True)
        console.message(f"{len(games)} games, {len(specs)} engines ({', '.join(names)}), "
                        f"{'gauntlet' if gauntlet else 'round robin'}, "
                        f"time control {' / '.join(sorted({str(s.tc) for s in specs}))}, {venue.describe()}")
        outcome = run_match(specs, games, settings, venue=venue, pdn_path=pdn_path,
                            resume=resume, sprt=sprt, event=event, console=console)
    for row in final_table(outcome.tally, specs):
        console.message(row)
    if sprt is not None:
        llr = sprt.llr(*outcome.tally.wdl(0))
        verdict = {"H1": f"H1 accepted ({specs[0].name} is better by about elo1)",
                   "H0": "H0 accepted (no gain of elo1)", None: "undecided"}[outcome.sprt]
        console.message(f"SPRT elo0={sprt.elo0:g} elo1={sprt.elo1:g} alpha={sprt.alpha:g} beta={sprt.beta:g}: "
                        f"LLR {llr:.2f} [{sprt.lower:.2f}, {sprt.upper:.2f}], {verdict}")
        console.message(f"SPRT on game pairs (pentanomial): LLR {sprt.pair_llr(outcome.tally.pair_counts(0, 1)):.2f}")
    rate = len(outcome.played) / outcome.seconds * 60 if outcome.seconds > 0 else 0.0
    console.message(f"{len(outcome.played)} games played in {clock_text(outcome.seconds)} ({rate:.1f} games/min)"
                    + (f", {outcome.resumed} resumed from {pdn_path}" if outcome.resumed else ""))
    if plot_path is not None and outcome.tally.history:
        if plot_history(outcome.tally.history, f"{names[0]} vs {'field' if len(names) > 2 else names[1]}",
                        plot_path):
            console.message(f"Elo plot saved to {plot_path}")
        else:
            console.message(f"no Elo plot: {names[0]} won or lost every game "
                            f"({outcome.tally.estimate(0).summary()}), so the Elo difference was never finite")
    if outcome.interrupted:
        console.message("interrupted" + (f": finished games are in {pdn_path}; run the same command with "
                                         "--resume to play the rest" if pdn_path else ""))
        sys.exit(130)


def _crowding_warning(specs: list[EngineSpec], games_at_once: int) -> str | None:
    """A warning when ``games_at_once`` games of these engines can have more processes searching
    at a time than this machine gives the match cores (an engine's ``option.threads`` counts
    its processes), else ``None``: they would take turns on the cores, and a timed engine would
    no longer have its time to itself."""
    threads = 1
    for spec in specs:
        value = spec.options.get("threads", "1")
        if value.isdigit():
            threads = max(threads, int(value))
    wanted = games_at_once * threads
    cores = usable_cores()
    if wanted <= cores:
        return None
    return (f"Warning: {games_at_once} game(s) at once, with engines of up to {threads} thread(s), can have {wanted} "
            f"processes searching on the {cores} core(s) this match may run on: they take turns on them, and a "
            "timed engine no longer has its time to itself")
