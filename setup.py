"""Build hook: the engine's hot modules compiled by mypyc, or plain Python when that cannot be.

Everything else about the distribution is in pyproject.toml. The compiled
flavour is the default; it is built when mypyc and a working C compiler are
there, and ``PEDINA_PURE=1`` asks for plain Python (as does an editable install,
whose point is that edits to the sources take effect). Either way the same ``.py``
files are installed, so a failed or skipped compilation still gives a working
engine, and one line says which flavour is being built.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from setuptools import setup

#: The modules compiled: move generation, position, evaluation, transposition table,
#: search, and the small modules they lean on in their inner loops.
COMPILED = ("scores", "squares", "movegen", "position", "move", "board", "evaluate", "tt", "timeman", "search",
            "egdb/slices", "egdb/store", "egdb/probe", "egdb/build", "egdb/verify")

HERE = Path(__file__).resolve().parent


def _say(text: str) -> None:
    print(f"pedina: {text}", file=sys.stderr, flush=True)


def _compiler_works() -> bool:
    """Whether a C extension can be built here (a compiler and the Python headers)."""
    from setuptools._distutils import ccompiler  # setuptools' copy: distutils left the stdlib in 3.12
    from setuptools._distutils.errors import CCompilerError, DistutilsError

    compiler = ccompiler.new_compiler()
    from setuptools._distutils import sysconfig as distutils_sysconfig

    distutils_sysconfig.customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch, "probe.c")
        source.write_text("#include <Python.h>\nint pedina_probe(void) { return 0; }\n")
        try:
            compiler.compile([str(source)], output_dir=scratch,
                             include_dirs=[sysconfig.get_paths()["include"]])
        except (CCompilerError, DistutilsError, OSError):
            return False
    return True


def _staged_sources() -> list[str]:
    """The library copied into ``build/mypyc-src/pedina``: mypyc names a module after its
    folder, and the sources live in ``engine/`` (mapped to ``pedina`` by package-dir)."""
    stage = HERE / "build" / "mypyc-src" / "pedina"
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for source in (HERE / "engine").glob("*.py"):
        shutil.copy2(source, stage / source.name)
    (stage / "egdb").mkdir()
    for source in (HERE / "engine" / "egdb").glob("*.py"):
        shutil.copy2(source, stage / "egdb" / source.name)
    (stage / "py.typed").touch()
    return [str(stage / f"{name}.py") for name in COMPILED]


def compiled_extensions() -> list[Any]:
    """mypyc's extension modules, or none (with the reason) for the plain-Python flavour."""
    if os.environ.get("PEDINA_PURE") == "1":
        _say("PEDINA_PURE=1: installing the plain-Python flavour")
        return []
    if "editable_wheel" in sys.argv:
        _say("an editable install runs the plain-Python sources, so that edits take effect")
        return []
    if sys.implementation.name != "cpython":
        _say(f"{sys.implementation.name} is not CPython: installing the plain-Python flavour")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        _say("mypyc is not available: installing the plain-Python flavour")
        return []
    if not _compiler_works():
        _say("no working C compiler: installing the plain-Python flavour")
        return []
    _say(f"compiling {len(COMPILED)} modules with mypyc (PEDINA_PURE=1 skips this)")
    paths = _staged_sources()
    return list(mypycify(paths, opt_level="3", group_name="pedina._native",
                         target_dir=str(HERE / "build" / "mypyc-c")))


setup(ext_modules=compiled_extensions())
