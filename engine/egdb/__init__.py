"""Endgame databases: the exact value of every position with few pieces, by retrograde analysis.

The positions are cut into *slices* by material, one table a slice with White to
move (:mod:`pedina.egdb.slices`: signatures, the index of a position in its
table, the colour flip that serves Black to move). :mod:`pedina.egdb.build`
solves a slice and its colour flip together from the smaller tables,
:mod:`pedina.egdb.store` writes and reads the compressed table files,
:mod:`pedina.egdb.probe` looks positions up, and :mod:`pedina.egdb.verify`
checks every stored value against its successors. Every table of up to
:data:`SHIPPED_PIECES` pieces ships with the package (:func:`shipped_database`),
and the engine's adapters probe them unless told otherwise. The format, the
distances and the counts of every slice are in ``docs/egdb.md``::

    from pedina import Position
    from pedina.egdb import EndgameDatabase, build_databases, default_directory

    build_databases(default_directory(), pieces=3)
    database = EndgameDatabase(default_directory())
    print(database.probe(Position.from_fen("W:WK1,K5:BK30")))   # win, 7 plies to ...
"""

from pedina.egdb.build import (
    BuildError,
    JobFiles,
    JobRunner,
    SliceReport,
    build_databases,
    build_job,
    build_job_files,
    copied_job,
    job_positions,
    solve_job,
)
from pedina.egdb.probe import (
    SHIPPED_PIECES,
    DatabaseValue,
    EndgameDatabase,
    EndgameDatabaseError,
    default_directory,
    installed_database,
    open_endgame_database,
    shipped_database,
    shipped_directory,
    table_path,
)
from pedina.egdb.slices import (
    Job,
    Signature,
    SliceIndex,
    all_signatures,
    build_jobs,
    dependencies,
    job_dependencies,
    slice_name,
)
from pedina.egdb.store import TableFile, TableFileError, write_whole
from pedina.egdb.verify import VerifyReport, verify_databases, verify_table

__all__ = [
    "SHIPPED_PIECES", "BuildError", "DatabaseValue", "EndgameDatabase", "EndgameDatabaseError", "Job", "JobFiles", "JobRunner",
    "Signature", "SliceIndex", "SliceReport", "TableFile", "TableFileError", "VerifyReport", "all_signatures",
    "build_databases", "build_job", "build_job_files", "build_jobs", "copied_job", "default_directory", "dependencies", "installed_database",
    "job_dependencies", "job_positions", "open_endgame_database", "shipped_database", "shipped_directory", "slice_name", "solve_job",
    "table_path", "verify_databases", "verify_table", "write_whole",
]
