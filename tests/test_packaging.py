"""The installed distribution: one import package, ``pedina``, and the console script."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pedina

PEDINA = shutil.which("pedina")


def test_the_distribution_installs_only_the_pedina_package_and_the_script() -> None:
    files = importlib.metadata.files("pedina")
    assert files is not None
    outside = [str(path) for path in files
               if not (path.parts[0] in ("pedina", f"pedina-{pedina.__version__}.dist-info")
                       or path.name in ("pedina", "pedina.exe")
                       or path.name.startswith("__editable__"))]  # an editable install's finder (and its .pyc)
    assert outside == []
    names = {path.parts[0] for path in files}
    assert "engine" not in names and "protocol" not in names


def test_the_package_data_is_installed() -> None:
    # Read as resources, as the engine reads them: a file left out of pyproject.toml's package
    # data is missing here (the strict editable install links only what a wheel would hold).
    package = importlib.resources.files("pedina")
    for name in ("py.typed", "weights.json", "book.txt"):
        assert package.joinpath(name).is_file(), name
    assert package.joinpath("book.txt").read_text(encoding="utf-8").startswith("pedina-book 1\n")


def test_the_version_has_one_source() -> None:
    assert importlib.metadata.version("pedina") == pedina.__version__
    assert PEDINA is not None
    shown = subprocess.run([PEDINA, "--version"], capture_output=True, text=True, check=True).stdout
    assert pedina.__version__ in shown


def test_a_users_own_engine_folder_shadows_nothing(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("raise ImportError('the user\\'s own engine package')\n")
    (tmp_path / "protocol").mkdir()
    (tmp_path / "protocol" / "__init__.py").write_text("raise ImportError('the user\\'s own protocol package')\n")
    assert PEDINA is not None
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    perft = subprocess.run([PEDINA, "perft", "--depth", "5"], cwd=tmp_path, capture_output=True, text=True,
                           env=env, timeout=60)
    assert perft.returncode == 0, perft.stderr
    assert "7,361" in perft.stdout  # the start position's published count at depth 5
    board = subprocess.run([sys.executable, "-c", "import pedina; print(pedina.Board())"], cwd=tmp_path,
                           capture_output=True, text=True, env=env, timeout=60)
    assert board.returncode == 0, board.stderr
    assert "32" in board.stdout  # the drawing shows square numbers


def test_the_old_top_level_names_are_not_installed(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for name in ("engine", "protocol"):
        found = subprocess.run([sys.executable, "-c", f"import importlib.util; print(importlib.util.find_spec({name!r}))"],
                               cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60)
        assert found.stdout.strip() == "None", (name, found.stdout)


def test_a_hub_client_and_a_rules_script_never_load_the_search() -> None:
    code = ("import sys, pedina, pedina.protocol.hubclient; pedina.Board().legal_moves(); "
            "print(sorted(m for m in sys.modules if m in ('pedina.search', 'pedina.session', 'pedina.evaluate')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert loaded.stdout.strip() == "[]"
    code = "import sys, pedina; pedina.Searcher; print('pedina.search' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert loaded.stdout.strip() == "True"  # and loaded on first use
