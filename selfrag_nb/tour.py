"""``selfrag-nb tour`` and ``selfrag-nb app``: the notebooks, from an installed package.

    selfrag-nb tour [DIR] [--no-browser] [--port N]
      JupyterLab + ipykernel importable?  no -> "pip install 'selfrag-nb[jupyter]'", exit 1
      -> copy_notebooks(DIR)   (default ./selfrag-nb-tour)
      -> python -m jupyterlab 01_tour.ipynb in DIR [--no-browser] [--port=N] [--allow-root as root]
         (default_url /lab/tree/01_tour.ipynb: the printed URL opens the tour notebook)
    selfrag-nb app [DIR] [--no-browser] [--port N]
      marimo importable?  no -> "pip install 'selfrag-nb[marimo]'", exit 1
      -> copy_notebooks(DIR) -> python -m marimo run selfrag_app.py in DIR [--headless] [--port N]

    copy_notebooks(DIR): every bundled notebook (selfrag_nb.resources.bundled("notebooks"))
      missing in DIR         -> copied
      same bytes             -> unchanged
      different bytes        -> kept: the user's edited copy is never overwritten (said so)
      DIR is the bundle      -> nothing to copy (a clone's notebooks/: ``./run tour``)

The server replaces this process on POSIX (``os.execv``: Ctrl-C and signals
reach JupyterLab / marimo directly); on Windows it runs as a child and its
exit status is returned. The interpreter is this one (``sys.executable``), so
the server runs in the environment selfrag_nb is installed in.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfrag_nb.cli import positive_int, shown
from selfrag_nb.errors import PathNotFoundError

__all__ = [
    "DEFAULT_DIR",
    "EXTRAS",
    "CopyReport",
    "copy_notebooks",
    "lab_command",
    "marimo_command",
    "missing_extra",
    "register_app",
    "register_tour",
]

#: Working folder the notebooks are copied to when none is given.
DEFAULT_DIR = "selfrag-nb-tour"
TOUR_NOTEBOOK = "01_tour.ipynb"
APP_NOTEBOOK = "selfrag_app.py"
_SUFFIXES = (".ipynb", ".py")

#: extra -> (the modules it provides, the install command).
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "jupyter": (("jupyterlab", "ipykernel"), "pip install 'selfrag-nb[jupyter]'"),
    "marimo": (("marimo",), "pip install 'selfrag-nb[marimo]'"),
}


@dataclass
class CopyReport:
    """What :func:`copy_notebooks` did, file names per outcome."""

    folder: Path
    copied: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)


def copy_notebooks(folder: str | os.PathLike[str], source: Path | None = None) -> CopyReport:
    """Copy the bundled notebooks into ``folder`` (created if missing); a file
    that exists with different content is the user's and is left alone."""
    from selfrag_nb.resources import bundled

    src = bundled("notebooks") if source is None else source
    target = Path(folder).expanduser()
    report = CopyReport(target)
    if not src.is_dir():
        raise PathNotFoundError(f"the bundled notebooks are missing at {src}; reinstall selfrag-nb", path=src)
    files = sorted(p for p in src.iterdir() if p.is_file() and p.suffix in _SUFFIXES)
    if target.exists() and target.resolve() == src.resolve():
        report.unchanged = [p.name for p in files]
        return report
    target.mkdir(parents=True, exist_ok=True)
    for path in files:
        dest = target / path.name
        data = path.read_bytes()
        if not dest.exists():
            dest.write_bytes(data)
            report.copied.append(path.name)
        elif dest.read_bytes() == data:
            report.unchanged.append(path.name)
        else:
            report.kept.append(path.name)
    return report


def missing_extra(extra: str) -> str | None:
    """The install command for ``extra`` if one of its modules is missing, else None."""
    modules, command = EXTRAS[extra]
    if all(importlib.util.find_spec(m) is not None for m in modules):
        return None
    return command


def _is_root() -> bool:
    geteuid: Callable[[], int] | None = getattr(os, "geteuid", None)
    return geteuid is not None and geteuid() == 0


def lab_command(*, no_browser: bool = False, port: int | None = None) -> list[str]:
    """argv that starts JupyterLab on the tour notebook (run it in the tour folder)."""
    # default_url: the URLs JupyterLab prints (and opens) point at the tour
    # notebook itself, not at an empty /lab a newcomer has to navigate from
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        TOUR_NOTEBOOK,
        f"--LabApp.default_url=/lab/tree/{TOUR_NOTEBOOK}",
    ]
    if no_browser:
        cmd.append("--no-browser")
    if port is not None:
        cmd += [f"--port={port}", "--ServerApp.port_retries=0"]  # that port or a clear error
    if _is_root():
        cmd.append("--allow-root")  # JupyterLab refuses root without it (containers, CI)
    return cmd


def marimo_command(*, no_browser: bool = False, port: int | None = None) -> list[str]:
    """argv that serves the marimo app (run it in the tour folder)."""
    cmd = [sys.executable, "-m", "marimo", "run", APP_NOTEBOOK]
    if no_browser:
        cmd.append("--headless")
    if port is not None:
        cmd += ["--port", str(port)]
    return cmd


def _launch(cmd: Sequence[str], cwd: Path) -> int:
    """Run ``cmd`` in ``cwd``: replace this process on POSIX, a child on Windows."""
    if os.name == "posix":
        os.chdir(cwd)
        os.execv(cmd[0], list(cmd))  # noqa: S606 - our own interpreter, argv built above
    return subprocess.call(list(cmd), cwd=cwd)  # noqa: S603 - same


#: Replaced by tests to capture the command instead of starting a server.
launch: Callable[[Sequence[str], Path], int] = _launch


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "folder",
        nargs="?",
        default=DEFAULT_DIR,
        metavar="DIR",
        help=f"working folder for your copies of the notebooks (default ./{DEFAULT_DIR})",
    )
    p.add_argument("--no-browser", action="store_true", help="start the server without opening a browser")
    p.add_argument("--port", type=positive_int, default=None, help="port to serve on")


def register_tour(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``tour``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "tour",
        help="copy the notebooks to a folder and open the tour in JupyterLab",
        description="Copy the bundled notebooks into DIR (files you edited are kept) and open "
        f"{TOUR_NOTEBOOK} in JupyterLab. Needs the jupyter extra.",
    )
    _add_common(p)
    p.set_defaults(func=run_tour)
    return p


def register_app(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``app``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "app",
        help="copy the notebooks to a folder and run the marimo app",
        description=f"Copy the bundled notebooks into DIR (files you edited are kept) and serve "
        f"{APP_NOTEBOOK} with `marimo run`. Needs the marimo extra.",
    )
    _add_common(p)
    p.set_defaults(func=run_app)
    return p


def _prepare(args: argparse.Namespace, extra: str, what: str) -> CopyReport | int:
    from rich.console import Console
    from rich.text import Text

    console = Console()
    command = missing_extra(extra)
    if command is not None:
        console.print(
            Text.assemble(
                (f"selfrag-nb {args.command}: ", "red"),
                f"{what} is not installed. Install it with:\n  {command}",
            )
        )
        return 1
    try:
        report = copy_notebooks(args.folder)
    except OSError as exc:
        console.print(Text.assemble((f"selfrag-nb {args.command}: ", "red"), shown(exc)))
        return 1
    console.print(Text.assemble("notebooks in ", shown(report.folder.resolve())))
    if report.copied:
        console.print(Text.assemble("  copied:    ", shown(", ".join(report.copied))))
    if report.unchanged:
        console.print(Text.assemble("  unchanged: ", shown(", ".join(report.unchanged))))
    if report.kept:
        console.print(
            Text.assemble(
                ("  kept your edited copies (not overwritten): ", "yellow"),
                shown(", ".join(report.kept)),
                "\n  (delete or rename them to get the packaged version)",
            )
        )
    return report


def run_tour(args: argparse.Namespace) -> int:
    report = _prepare(args, "jupyter", "JupyterLab")
    if isinstance(report, int):
        return report
    return launch(lab_command(no_browser=args.no_browser, port=args.port), report.folder)


def run_app(args: argparse.Namespace) -> int:
    report = _prepare(args, "marimo", "marimo")
    if isinstance(report, int):
        return report
    return launch(marimo_command(no_browser=args.no_browser, port=args.port), report.folder)
