"""Two folders never collide silently: sources are named relative to their
folder, so every stored chunk also records the folder it came from.

    colB/report.md (roles finance) ingested, then colA/report.md
      default                -> colA's report skipped, reason names both folders and the fix
      prefix="colA/"         -> both kept ("report.md" and "colA/report.md")
      on_conflict="replace"  -> colA's replaces colB's, reported as updated
    prune=True               -> removes only the ingested folder's own sources
"""

from __future__ import annotations

from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.store.types import User


def make(folder: Path, text: str, front: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.md").write_text(f"{front}## Report\n\n{text}\n", encoding="utf-8")
    return folder


@pytest.fixture
def two_folders(tmp_path: Path) -> tuple[Path, Path, sr.KnowledgeBase]:
    col_b = make(
        tmp_path / "colB", "Finance report: margin was 41 percent.", "---\nroles: [finance]\n---\n\n"
    )
    col_a = make(tmp_path / "colA", "Public report: the office moved to Leeds.")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    assert kb.ingest(col_b).added == ["report.md"]
    return col_a, col_b, kb


def finance_text_visible_to(kb: sr.KnowledgeBase, user: User | None) -> bool:
    return any("41 percent" in h.text for h in kb.search("report margin", k=20, mode="vector", user=user))


def test_same_relative_path_from_another_folder_is_skipped_not_replaced(
    two_folders: tuple[Path, Path, sr.KnowledgeBase],
) -> None:
    col_a, col_b, kb = two_folders
    version = kb.version
    report = kb.ingest(col_a)
    assert report.added == []
    assert report.updated == []
    ((source, reason),) = report.skipped
    assert source == "report.md"
    assert col_b.resolve().as_posix() in reason
    assert "prefix='colA/'" in reason
    assert kb.version == version
    # colB's document and its ACL are untouched
    assert finance_text_visible_to(kb, User("f", roles=["finance"]))
    assert not finance_text_visible_to(kb, User())
    # the same folder under another spelling is the same folder
    assert kb.ingest(f"{col_b}/../colB/").unchanged == ["report.md"]


def test_prefix_keeps_both(two_folders: tuple[Path, Path, sr.KnowledgeBase]) -> None:
    col_a, _, kb = two_folders
    report = kb.ingest(col_a, prefix="colA")
    assert report.added == ["colA/report.md"]
    assert kb.sources() == ["colA/report.md", "report.md"]
    assert not finance_text_visible_to(kb, User())
    assert kb.ingest(col_a, prefix="colA/").unchanged == ["colA/report.md"]


def test_replace_is_explicit(two_folders: tuple[Path, Path, sr.KnowledgeBase]) -> None:
    col_a, _, kb = two_folders
    # colB's report.md is finance-only and colA's is public: replacing it
    # would publish the name, so that takes a second yes.
    with pytest.raises(sr.AccessWideningError, match=r"report\.md: roles finance -> public"):
        kb.ingest(col_a, on_conflict="replace")
    report = kb.ingest(col_a, on_conflict="replace", allow_widen=True)
    assert report.updated == ["report.md"]
    assert [str(c) for c in report.acl_changes] == ["report.md: roles finance -> public (widened)"]
    assert not finance_text_visible_to(kb, User("f", roles=["finance"]))
    # now colA owns the name: colB is the one refused
    assert kb.ingest(col_a).unchanged == ["report.md"]


def test_prune_removes_only_the_folders_own_sources(tmp_path: Path) -> None:
    col_a = make(tmp_path / "colA", "Alpha report.")
    (col_a / "extra.md").write_text("## Extra\n\nAlpha extra.\n", encoding="utf-8")
    col_b = tmp_path / "colB"
    col_b.mkdir()
    (col_b / "other.md").write_text("## Other\n\nBeta other.\n", encoding="utf-8")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(col_a)
    kb.ingest(col_b)
    (col_a / "extra.md").unlink()
    report = kb.ingest(col_a, prune=True)
    assert report.removed == ["extra.md"]
    assert kb.sources() == ["other.md", "report.md"]


@pytest.mark.parametrize("bad", ["/abs", "a/../b", "x#y", "a\x1bb", "   "])
def test_bad_prefix_is_refused(tmp_path: Path, bad: str) -> None:
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    with pytest.raises(ValueError, match="prefix"):
        kb.ingest(make(tmp_path / "d", "x"), prefix=bad)
    with pytest.raises(ValueError, match="on_conflict"):
        kb.ingest(tmp_path / "d", on_conflict="overwrite")  # type: ignore[arg-type]


def test_a_table_without_origins_is_upgraded_on_the_next_ingest(tmp_path: Path) -> None:
    """Knowledge bases written before origins were stored (no origin column)
    keep working: the column is added, empty, and the next ingest fills it."""
    import lancedb

    col_a = make(tmp_path / "colA", "Alpha report.")
    kb = sr.KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(col_a)
    lancedb.connect(str(tmp_path / "kb")).open_table("chunks").drop_columns(["origin"])
    kb.close()
    kb = sr.KnowledgeBase.open(tmp_path / "kb")
    assert kb.ingest(col_a).unchanged == ["report.md"]  # unknown origin: the same name is not a conflict
    (col_a / "report.md").write_text("## Report\n\nAlpha report, revised.\n", encoding="utf-8")
    assert kb.ingest(col_a).updated == ["report.md"]
    assert [h.text for h in kb.search("revised", k=5, mode="fts")] == ["Alpha report, revised."]
    assert kb.ingest(make(tmp_path / "colB", "Beta.")).skipped[0][0] == "report.md"


def test_cli_prefix_and_on_conflict(two_folders: tuple[Path, Path, sr.KnowledgeBase]) -> None:
    from selfrag_nb.cli import main as cli_main

    col_a, _, kb = two_folders
    base = ["ingest", str(col_a), "--kb", kb.path, "--no-progress"]
    assert cli_main(base) == 0
    assert kb.sources() == ["report.md"]
    assert not finance_text_visible_to(kb, User())
    assert cli_main([*base, "--prefix", "colA/"]) == 0
    assert kb.sources() == ["colA/report.md", "report.md"]
    assert cli_main([*base, "--on-conflict", "replace"]) == 2  # refused: would publish colB's finance report
    assert cli_main([*base, "--on-conflict", "replace", "--allow-widen"]) == 0
    # a fresh handle: this one may read a version up to a second old
    assert not finance_text_visible_to(sr.KnowledgeBase.open(kb.path), User("f", roles=["finance"]))
