"""Bundled files and the cache folder (selfrag_nb.resources).

clone:      bundled(name) -> <repo>/name
installed:  bundled(name) -> <package>/_data/name   (preferred when present)
neither:    the in-package path, so KnowledgeBase.sample() / questions("sample")
            fail naming where the data should have been
cache_dir:  $SELFRAG_NB_CACHE > per-platform user cache folder
"""

from __future__ import annotations

import importlib.resources
import sys
from pathlib import Path

import pytest

import selfrag_nb
from selfrag_nb import resources
from selfrag_nb.resources import bundled, cache_dir

ROOT = Path(__file__).resolve().parents[2]


def test_clone_reads_the_source_tree() -> None:
    assert resources.source_root() == ROOT
    assert bundled("sample_data") == ROOT / "sample_data"
    assert bundled("notebooks") == ROOT / "notebooks"
    from selfrag_nb.eval.questions import sample_path

    assert sample_path() == ROOT / "sample_data" / "questions.jsonl"


def test_installed_copy_is_preferred(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "selfrag_nb"
    (pkg / "_data" / "sample_data").mkdir(parents=True)
    monkeypatch.setattr(importlib.resources, "files", lambda name: pkg if name == "selfrag_nb" else None)
    assert bundled("sample_data") == pkg / "_data" / "sample_data"
    assert bundled("notebooks") == ROOT / "notebooks"  # not bundled there: the clone's


def test_missing_data_names_where_it_should_be(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "site-packages" / "selfrag_nb"
    pkg.mkdir(parents=True)
    monkeypatch.setattr(importlib.resources, "files", lambda name: pkg)
    monkeypatch.setattr(resources, "source_root", lambda: None)
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "cache"))
    assert bundled("sample_data") == pkg / "_data" / "sample_data"

    from selfrag_nb.errors import QuestionSetError

    with pytest.raises(FileNotFoundError, match=r"_data.sample_data.docs"):
        selfrag_nb.KnowledgeBase.sample("hashing")
    with pytest.raises(QuestionSetError, match=r"_data.sample_data.questions\.jsonl"):
        selfrag_nb.questions("sample")


def test_cache_dir_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    from selfrag_nb.store.kb import _cache_root

    assert _cache_root() == tmp_path / "c"


@pytest.mark.parametrize(
    ("platform", "env", "expected"),
    [
        ("win32", {"LOCALAPPDATA": "/la"}, Path("/la/selfrag_nb/Cache")),
        ("win32", {}, Path("/home/u/AppData/Local/selfrag_nb/Cache")),
        ("darwin", {}, Path("/home/u/Library/Caches/selfrag_nb")),
        ("linux", {"XDG_CACHE_HOME": "/xdg"}, Path("/xdg/selfrag_nb")),
        ("linux", {"XDG_CACHE_HOME": "relative"}, Path("/home/u/.cache/selfrag_nb")),
        ("linux", {}, Path("/home/u/.cache/selfrag_nb")),
    ],
)
def test_cache_dir_per_platform(
    monkeypatch: pytest.MonkeyPatch, platform: str, env: dict[str, str], expected: Path
) -> None:
    for name in ("SELFRAG_NB_CACHE", "LOCALAPPDATA", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: Path("/home/u")))
    assert cache_dir() == expected
    assert "site-packages" not in cache_dir().parts


def test_resources_import_is_light() -> None:
    import subprocess

    code = "import sys, selfrag_nb.resources; print(sorted(m for m in ('numpy','lancedb','litellm') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
