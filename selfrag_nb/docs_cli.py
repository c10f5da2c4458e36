"""``selfrag-nb docs``: the guides in ``docs/`` wherever the package is installed.

    selfrag-nb docs                  every guide: name and title
    selfrag-nb docs access-control   one guide's text (Markdown), to the terminal
    selfrag-nb docs NAME --path      where the file is (open it in an editor)

The README links ``docs/<name>.md``; a clone has the folder, and the wheel
carries the same files (``selfrag_nb/_data/docs``: setup.py bundles them), so a
pip user reaches every page a link names without the repository.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from selfrag_nb.resources import bundled

__all__ = ["guides", "register", "run_docs"]


def guides() -> dict[str, Path]:
    """Guide name (file stem) -> path, sorted by name."""
    folder = bundled("docs")
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.md"))}


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""


def run_docs(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from selfrag_nb.cli import shown

    console = Console()
    found = guides()
    if not found:
        console.print(shown(f"no guides found at {bundled('docs')} (a broken install?)"))
        return 1
    if args.name is None:
        table = Table("guide", "title", box=None, header_style="bold")
        for name, path in found.items():
            table.add_row(shown(name), shown(_title(path)))
        console.print(table)
        console.print("Read one: selfrag-nb docs NAME   (its file: selfrag-nb docs NAME --path)")
        return 0
    name = args.name.removesuffix(".md").removeprefix("docs/")
    guide = found.get(name)
    if guide is None:
        console.print(shown(f"no guide named {args.name!r}; guides: {', '.join(found)}"))
        return 2
    if args.path:
        console.print(shown(str(guide)), soft_wrap=True)
    else:
        console.print(shown(guide.read_text(encoding="utf-8")), soft_wrap=True)
    return 0


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``docs``."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "docs",
        help="list the guides, or print one (they ship with the package)",
        description="The guides the README links (docs/NAME.md), from the installed package.",
    )
    p.add_argument("name", nargs="?", default=None, help="a guide's name, e.g. access-control")
    p.add_argument("--path", action="store_true", help="print the guide's file path instead of its text")
    p.set_defaults(func=run_docs)
    return p
