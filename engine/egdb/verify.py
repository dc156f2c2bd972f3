"""Verification: every stored value checked against the values after each legal move.

This is independent of the retrograde build: positions are taken forward with
:func:`pedina.movegen.generate` (all legal moves, capture precedence included)
and each stored code must be the one its successors' codes give (see
:mod:`pedina.egdb.store` for codes and :mod:`pedina.egdb.build` for distances).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from pedina.egdb.build import counted, worker_pool
from pedina.egdb.probe import EndgameDatabase
from pedina.egdb.slices import Signature, SliceIndex, all_signatures, dependencies, flipped_signature
from pedina.egdb.store import LOSS_CODE, RESULT_OF_CODE, WIN_CODE, code_distance, loss_code, win_code
from pedina.movegen import generate
from pedina.squares import SQUARE_BIT, squares_of

#: Wrong positions a report describes in full.
_EXAMPLES = 5


class VerifyReport:
    """The check of one table: positions checked, how many were wrong (with a few as
    FEN, stored and expected codes), and whether the header's counts are right."""

    def __init__(self, signature: Signature, positions: int, errors: int, examples: list[str],
                 counts_match: bool) -> None:
        self.signature = signature
        self.positions = positions
        self.errors = errors
        self.examples = examples
        self.counts_match = counts_match

    def __reduce__(self) -> tuple[type[VerifyReport], tuple[Signature, int, int, list[str], bool]]:
        # Rebuilt from its fields when pickled (from worker processes): a class compiled by
        # mypyc does not pickle by itself.
        return VerifyReport, (self.signature, self.positions, self.errors, self.examples, self.counts_match)

    @property
    def ok(self) -> bool:
        return not self.errors and self.counts_match


def expected_code(database: EndgameDatabase, us: int, them: int, kings: int, distances: bool,
                  after_quiet: tuple[SliceIndex, bytes]) -> int:
    """The code a position with White to move must have, from its successors' codes.

    A win takes the nearest winning move, a loss the farthest move; a capture or a
    man move counts 1, a king step 1 + the distance after it. ``after_quiet`` is the
    table (index and codes) a quiet move leads to, the colour flip of the position's
    own; other successors are looked up in ``database``. Raises :class:`LookupError`
    when a successor's table is missing.
    """
    quiet_index, quiet_codes = after_quiet
    moves = generate(us, them, kings, True)
    if not moves:
        return loss_code(0) if distances else LOSS_CODE
    nearest_win = -1
    farthest_loss = -1
    drawn = False
    for frm, to, taken, toggle, _ in moves:
        after = them ^ taken
        if not after:  # the last piece taken: the other side has lost
            child = loss_code(0)
        elif not taken and (frm & kings or not toggle):  # a king step, or a man's without promotion
            child = quiet_codes[quiet_index.turned_index(after, us ^ frm ^ to, kings ^ toggle)]
        else:
            child = database.black_code(us ^ frm ^ to, after, kings ^ toggle)
            if child < 0:
                raise LookupError(f"no table for the position after a move of {_fen(us, them, kings)}")
        result = RESULT_OF_CODE[child]
        if not result:
            drawn = True
            continue
        plies = 1
        if distances and not taken and frm & kings:
            after_distance = code_distance(child)
            if after_distance is None:
                raise LookupError(f"no distance after a king step of {_fen(us, them, kings)}")
            plies += after_distance
        if result == LOSS_CODE:
            nearest_win = plies if nearest_win < 0 else min(nearest_win, plies)
        else:
            farthest_loss = max(farthest_loss, plies)
    if nearest_win >= 0:
        return win_code(nearest_win) if distances else WIN_CODE
    if drawn:
        return 0
    return loss_code(farthest_loss) if distances else LOSS_CODE


def _fen(white: int, black: int, kings: int) -> str:
    """The FEN of a position with White to move."""
    sides = [colour + ",".join(("K" if SQUARE_BIT[square] & kings else "") + str(square)
                               for square in squares_of(bits))
             for colour, bits in (("W", white), ("B", black))]
    return "W:" + ":".join(sides)


def verify_table(database: EndgameDatabase, signature: Signature,
                 progress: Callable[[int], None] | None = None) -> VerifyReport:
    """Check every position of one table (and its header's counts)."""
    index, table = database.table(signature)
    needed = [signature, flipped_signature(signature)] + dependencies(signature)
    database.load([needed_signature for needed_signature in needed if needed_signature in database.signatures])
    codes = table.codes()
    after_quiet = database.loaded(flipped_signature(signature))
    errors = 0
    examples: list[str] = []
    counts = [0, 0, 0]  # draws, wins, losses by RESULT_OF_CODE
    for position_index, us, them, kings in counted(index.positions(), progress):
        code = codes[position_index]
        counts[RESULT_OF_CODE[code]] += 1
        expected = expected_code(database, us, them, kings, table.distances, after_quiet)
        if code != expected:
            errors += 1
            if len(examples) < _EXAMPLES:
                examples.append(f"{_fen(us, them, kings)}: stored {code}, expected {expected}")
    counts_match = table.counts == (counts[WIN_CODE], counts[LOSS_CODE], counts[0])
    return VerifyReport(signature, index.positions_count, errors, examples, counts_match)


def _verify_in(directory: str, signature: Signature) -> VerifyReport:
    """:func:`verify_table` with a database of its own (one worker's task)."""
    database = EndgameDatabase(directory)
    try:
        return verify_table(database, signature)
    finally:
        database.close()


def verify_databases(directory: str, progress: Callable[[int], None] | None = None,
                     on_table: Callable[[VerifyReport], None] | None = None, workers: int = 1,
                     pieces: int | None = None) -> list[VerifyReport]:
    """Check every table in ``directory`` (only those of ``pieces`` pieces when given), in
    build order; ``on_table`` gets each report.

    ``workers`` > 1 checks tables in that many processes (:func:`pedina.egdb.build.worker_pool`);
    ``progress`` then advances a table at a time, else within tables.
    """
    database = EndgameDatabase(directory)
    largest = max((sum(signature) for signature in database.signatures), default=0)
    signatures = [signature for signature in all_signatures(largest) if signature in database.signatures
                  and (pieces is None or sum(signature) == pieces)]
    reports = []

    def finished(report: VerifyReport) -> None:
        reports.append(report)
        if on_table is not None:
            on_table(report)

    try:
        if workers > 1:
            pool = worker_pool(workers)
            try:
                for report in pool.imap(partial(_verify_in, directory), signatures):
                    finished(report)
                    if progress is not None:
                        progress(report.positions)
            finally:
                pool.terminate()
        else:
            for signature in signatures:
                finished(verify_table(database, signature, progress))
    finally:
        database.close()
    return reports
