"""Build hook: the wheel carries the sample data and the notebooks.

    sample_data/**                      -> selfrag_nb/_data/sample_data/**
    notebooks/*.ipynb, notebooks/*.py   -> selfrag_nb/_data/notebooks/
    docs/*.md                           -> selfrag_nb/_data/docs/  (``selfrag-nb docs``)
      (hidden and __dunder__ files and folders are left out: checkpoints, caches)

Metadata lives in pyproject.toml; this file only adds the copy to ``build_py``.
Why a hook and not ``package-data``: package data must live inside a package
folder, and the top-level folders are the single committed copy (tests, docs
and ``./run`` use them where they are). ``MANIFEST.in`` puts both folders in
the sdist, so a wheel built from the sdist gets them the same way. Editable
installs skip the copy: ``selfrag_nb.resources.bundled`` reads the source tree.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLE = {"sample_data": ("**/*",), "notebooks": ("*.ipynb", "*.py"), "docs": ("*.md",)}


def bundled_files() -> Iterator[Path]:
    """Paths relative to ROOT of every file the wheel bundles."""
    for folder, patterns in BUNDLE.items():
        for pattern in patterns:
            for path in sorted((ROOT / folder).glob(pattern)):
                rel = path.relative_to(ROOT)
                if path.is_file() and not any(p.startswith((".", "__")) for p in rel.parts):
                    yield rel


class BuildPyWithData(build_py):
    def _targets(self) -> list[tuple[Path, Path]]:
        if getattr(self, "editable_mode", False):
            return []
        return [(ROOT / rel, Path(self.build_lib, "selfrag_nb", "_data", rel)) for rel in bundled_files()]

    def run(self) -> None:
        super().run()
        for source, target in self._targets():
            self.mkpath(str(target.parent))
            self.copy_file(str(source), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *(str(t) for _, t in self._targets())]


setup(cmdclass={"build_py": BuildPyWithData})
