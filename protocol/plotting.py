"""Pictures for the command line (``match --plot``, ``analyze --plot``), drawn with matplotlib.

matplotlib is optional (``pip install 'pedina[plot]'``) and slow to import, so it
is imported only here and only when a picture is asked for. A command checks the
picture's path with :func:`check_plot_path` before its long work, so a mistake
costs nothing; :func:`saved_figure` then draws quietly (no matplotlib warning or
log line reaches the terminal) and turns a failed save into one error line.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def check_plot_path(path: str, option: str) -> None:
    """Raise :class:`click.ClickException` unless a picture can be saved at ``path``: matplotlib
    is installed, the extension names a format it writes, and the folder exists and is writable.
    ``option`` names the command-line option in the messages."""
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        raise click.ClickException(f"{option} needs matplotlib: pip install 'pedina[plot]'") from None
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    extension = os.path.splitext(path)[1].lstrip(".").lower()
    if extension not in formats:
        raise click.ClickException(f"{option} {path}: the file name must end in a picture format "
                                   f"({', '.join('.' + name for name in sorted(formats))})")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise click.ClickException(f"{option} {path}: there is no folder {folder}")
    if os.path.isdir(path) or not os.access(folder, os.W_OK) or (os.path.exists(path)
                                                                  and not os.access(path, os.W_OK)):
        raise click.ClickException(f"{option} {path}: cannot write there")


@contextlib.contextmanager
def saved_figure(path: str, width: float = 8.0, height: float = 4.5) -> Iterator[tuple[Figure, Axes]]:
    """A figure and its axes to draw on, saved at ``path`` when the block ends without an
    error, and closed in any case. Drawing and saving happen on the file-only Agg
    backend with matplotlib's warnings and log off; a failed save raises a
    :class:`click.ClickException` naming ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    import matplotlib.pyplot as plt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        figure, axes = plt.subplots(figsize=(width, height))
        try:
            yield figure, axes
            figure.tight_layout()
            try:
                figure.savefig(path)
            except (OSError, ValueError) as error:
                reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
                raise click.ClickException(f"cannot save the picture {path}: {reason}") from None
        finally:
            plt.close(figure)


__all__ = ["check_plot_path", "saved_figure"]
