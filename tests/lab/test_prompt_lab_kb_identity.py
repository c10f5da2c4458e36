"""Prompt Lab's disk cache follows the knowledge base's content, not its path
or version number.

Rule (docs/prompt_lab.md, "The run cache"): a cached side is reused only for
the same rows; a knowledge base deleted and rebuilt at the same path, even at
the same version number, is computed fresh; an unchanged one still hits.
Real parts: LanceDB in a tmp folder, the offline model, the disk cache."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from prompt_lab_fixtures import DOCS, RECORDS

import selfrag_nb as sr
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.store.kb import KnowledgeBase

IDS = ["refund-1", "ship-1"]


@pytest.fixture(autouse=True)
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(root))
    return root


def _build(root: Path, acl: dict[str, Any] | None) -> KnowledgeBase:
    docs = root / "docs"
    if not docs.exists():
        docs.mkdir(parents=True)
        for name, text in DOCS.items():
            (docs / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs, acl=acl)
    return kb


def _run(kb: KnowledgeBase) -> Any:
    lab = sr.PromptLab(sr.SelfRAG(kb), QuestionSet.from_records(RECORDS, name="lab-set"))
    return lab.run("grade", IDS)


def test_a_rebuilt_kb_at_the_same_path_and_version_is_not_served_the_old_runs(tmp_path: Path) -> None:
    public = _build(tmp_path, acl=None)
    first = _run(public)
    assert first.cached == 0
    assert any(r.old.relevant for r in first.rows)  # the public documents were graded relevant
    path, version = public.path, public.version
    public.close()

    shutil.rmtree(tmp_path / "kb")
    # the same documents, now visible to role "hr" only: an anonymous run sees nothing
    private = _build(tmp_path, acl={"roles": ["hr"]})
    assert (private.path, private.version) == (path, version)
    second = _run(private)
    assert second.cached == 0, "a rebuilt knowledge base was served the old knowledge base's runs"
    assert all(not r.old.cached and not r.new.cached for r in second.rows)
    assert all(r.old.relevant == [] and r.old.graded == 0 for r in second.rows)

    # the same knowledge base, unchanged, reopened: every side comes from the disk cache
    private.close()
    again = _run(KnowledgeBase.open(tmp_path / "kb", embedder="hashing"))
    assert again.cached == len(IDS)
    assert [r.old.relevant for r in again.rows] == [r.old.relevant for r in second.rows]


def test_content_id_is_the_rows_identity(tmp_path: Path) -> None:
    kb = _build(tmp_path, acl=None)
    before = kb.content_id
    assert before.startswith(f"{kb.version}-")
    assert KnowledgeBase.open(tmp_path / "kb", embedder="hashing").content_id == before  # same rows
    (tmp_path / "docs" / "more.md").write_text("# More\n\nAnother page.\n", encoding="utf-8")
    kb.ingest(tmp_path / "docs")
    assert kb.content_id != before
    assert KnowledgeBase.open(tmp_path / "empty", embedder="hashing").content_id == "0-empty"
