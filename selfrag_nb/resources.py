"""Files that ship with selfrag_nb, and where it may write.

    bundled("sample_data")  -> <site-packages>/selfrag_nb/_data/sample_data   installed wheel
                               else <clone>/sample_data                       clone, editable install
    bundled("notebooks")    -> the same for the tour notebooks and the marimo app
    cache_dir()             -> $SELFRAG_NB_CACHE
                               else %LOCALAPPDATA%\\selfrag_nb\\Cache          Windows
                               else ~/Library/Caches/selfrag_nb                macOS
                               else $XDG_CACHE_HOME/selfrag_nb | ~/.cache/selfrag_nb

The top-level ``sample_data/`` and ``notebooks/`` of the repository are the
only copies that are committed: the build hook in ``setup.py`` copies them into
``selfrag_nb/_data/`` of the wheel (``MANIFEST.in`` puts them in the sdist), so
an installed package reads them through ``importlib.resources`` and a clone
reads the source tree. The cache is always in the user's cache folder, never
inside the installed package (site-packages may be read-only or shared).

This module imports only the standard library (``import selfrag_nb`` stays light).
"""

from __future__ import annotations

import importlib.resources
import os
import sys
from pathlib import Path
from typing import Literal

__all__ = ["BUNDLE_DIR", "Bundled", "bundled", "cache_dir", "source_root"]

#: Folder inside the installed package that holds the bundled files.
BUNDLE_DIR = "_data"

Bundled = Literal["sample_data", "notebooks", "docs"]


def source_root() -> Path | None:
    """The repository this package is imported from (a clone or an editable
    install), recognised by its ``pyproject.toml``; None when installed."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() else None


def bundled(name: Bundled) -> Path:
    """Folder of bundled files: inside the installed package if it is there,
    else the source tree's. When neither exists the in-package path is
    returned, so the caller's "not found" names where it should have been."""
    inside = importlib.resources.files("selfrag_nb") / BUNDLE_DIR / name
    if isinstance(inside, Path) and inside.is_dir():
        return inside
    root = source_root()
    if root is not None and (root / name).is_dir():
        return root / name
    return Path(str(inside))


def cache_dir() -> Path:
    """The user's cache folder for selfrag_nb (sample knowledge bases)."""
    env = os.environ.get("SELFRAG_NB_CACHE")
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA")
        return (Path(base) if base else Path.home() / "AppData" / "Local") / "selfrag_nb" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "selfrag_nb"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache") / "selfrag_nb"
