"""Every write is all or nothing, and damage in what can be rebuilt (the
indexes, the ingest log) is repaired by kb.reindex(). Damage is real: files of
a real LanceDB table deleted or truncated."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from selfrag_nb.errors import KnowledgeBaseError
from selfrag_nb.store.kb import KnowledgeBase

State = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]


def _state(kb: KnowledgeBase) -> State:
    """What a caller can observe: the sources and every chunk (source, id)."""
    return tuple(kb.sources()), tuple(sorted((h.source, h.chunk_id) for h in kb.chunks()))


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _truncate_log_manifests(kb_dir: Path) -> None:
    for p in _files(kb_dir / "ingest_log.lance" / "_versions"):
        with open(p, "r+b") as f:
            f.truncate(p.stat().st_size // 2)


def _delete_log_manifests(kb_dir: Path) -> None:
    for p in _files(kb_dir / "ingest_log.lance" / "_versions"):
        p.unlink()


def _damage_fts_index(kb_dir: Path) -> None:
    for p in _files(kb_dir / "chunks.lance" / "_indices"):
        p.write_bytes(b"x")


@pytest.fixture
def new_doc(tmp_path: Path) -> Path:
    d = tmp_path / "more"
    d.mkdir()
    (d / "warranty.md").write_text("# Warranty\n\nThe warranty lasts two years from delivery.\n")
    return d


def _ops(new_doc: Path) -> dict[str, Callable[[KnowledgeBase], object]]:
    return {
        "ingest": lambda kb: kb.ingest(new_doc),
        "remove": lambda kb: kb.remove("faq.jsonl"),
        "restore": lambda kb: kb.restore(1),
    }


@pytest.mark.parametrize("damage", [_truncate_log_manifests, _delete_log_manifests])
@pytest.mark.parametrize("op", ["ingest", "remove", "restore"])
def test_a_write_whose_log_fails_is_undone_and_the_retry_applies_once(  # noqa: PLR0917 - pytest fixtures and parameters
    kb: KnowledgeBase, docs_dir: Path, tmp_path: Path, new_doc: Path, op: str, damage: Callable[[Path], None]
) -> None:
    (docs_dir / "shipping.txt").write_text("Shipping now takes two weeks by boat.\n")
    kb.ingest(docs_dir)  # a second version, so restore(1) changes something
    kb.close()
    pristine, broken = tmp_path / "pristine", tmp_path / "broken"
    shutil.copytree(tmp_path / "kb", pristine)
    shutil.copytree(tmp_path / "kb", broken)
    run = _ops(new_doc)[op]

    reference = KnowledgeBase.open(pristine, embedder="hashing")
    run(reference)
    expected = _state(reference)

    damage(broken)
    kb2 = KnowledgeBase.open(broken, embedder="hashing")
    before = _state(kb2)
    assert before != expected
    with pytest.raises(KnowledgeBaseError) as info:
        run(kb2)
    msg = str(info.value)
    assert "ingest_log" in msg
    assert "undone" in msg
    assert "kb.reindex()" in msg
    assert _state(kb2) == before  # nothing of the failed call is visible
    assert _state(KnowledgeBase.open(broken, embedder="hashing")) == before  # nor on disk

    done = kb2.reindex()
    assert any("ingest_log" in d for d in done)
    run(kb2)
    assert _state(kb2) == expected  # applied exactly once
    ops = [v.get("op") for v in kb2.versions()]
    assert ops.count(op) == 1  # the repaired log records the retry once
    assert "reindex" in ops
    assert kb2.search("refund", mode="hybrid").hits


@pytest.mark.parametrize("damage", [_truncate_log_manifests, _delete_log_manifests])
def test_reindex_repairs_a_damaged_ingest_log(
    kb: KnowledgeBase, tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    before = _state(kb)
    kb.close()
    damage(tmp_path / "kb")
    kb2 = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    with pytest.raises(KnowledgeBaseError, match=r"'ingest_log' table is damaged.*kb\.reindex\(\)"):
        kb2.versions()
    assert any("ingest_log" in d for d in kb2.reindex())
    assert kb2.versions()[-1]["op"] == "reindex"
    assert "recreated empty" in kb2.versions()[-1]["note"]
    assert _state(kb2) == before  # the chunks are untouched


def test_a_damaged_fts_index_names_reindex_which_repairs_it(kb: KnowledgeBase, tmp_path: Path) -> None:
    queries = ["refund within 30 days", "退款", "shipping", '"gift cards"']
    before = {(q, m): [h.chunk_id for h in kb.search(q, mode=m)] for q in queries for m in ("fts", "hybrid")}
    kb.close()
    _damage_fts_index(tmp_path / "kb")
    kb2 = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    for mode in ("fts", "hybrid"):
        with pytest.raises(KnowledgeBaseError) as info:
            kb2.search("refund", mode=mode)
        msg = str(info.value)
        assert "index is damaged" in msg
        assert "kb.reindex()" in msg
        assert "kb.restore" not in msg  # the rows are fine: no need to go back in time
    assert kb2.search("refund", mode="vector").hits  # the vector leg needs no index

    assert "rebuilt FTS(search_text)" in kb2.reindex()
    after = {(q, m): [h.chunk_id for h in kb2.search(q, mode=m)] for q in queries for m in ("fts", "hybrid")}
    assert after == before
    assert kb2.describe()["indexes"] == ["FTS(search_text)"]


def test_restore_leaves_a_working_fts_index(kb: KnowledgeBase, docs_dir: Path, tmp_path: Path) -> None:
    first = kb.version
    want = [h.chunk_id for h in kb.search("refund", mode="fts")]
    (docs_dir / "refund.md").write_text("# Refund\n\nNo refunds at all.\n")
    kb.ingest(docs_dir)
    kb.close()
    _damage_fts_index(tmp_path / "kb")  # the index files every version points at
    kb2 = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb2.restore(first)
    assert [h.chunk_id for h in kb2.search("refund", mode="fts")] == want
    assert kb2.versions()[-1]["op"] in ("restore", "index")


def test_reindex_rebuilds_every_index(kb: KnowledgeBase) -> None:
    from lancedb.index import BTree, LabelList

    kb._tbl().create_index("source", config=BTree())
    kb._tbl().create_index("acl_roles", config=LabelList())
    want = ["rebuilt LabelList(acl_roles)", "rebuilt BTree(source)", "rebuilt FTS(search_text)"]
    assert sorted(kb.reindex()) == sorted(want)
    assert sorted(kb.describe()["indexes"]) == ["BTree(source)", "FTS(search_text)", "LabelList(acl_roles)"]
    assert kb.search("refund", mode="fts", where="source = 'refund.md'")[0].source == "refund.md"
    assert sorted(kb.reindex()) == sorted(want)  # the log is fine: nothing else to repair


def test_reindex_cannot_mend_damaged_data_and_says_so(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.close()
    for p in _files(tmp_path / "kb" / "chunks.lance" / "data"):
        with open(p, "r+b") as f:
            f.truncate(100)
    kb2 = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    with pytest.raises(KnowledgeBaseError, match=r"kb\.restore"):
        kb2.reindex()


def test_reindex_of_an_empty_knowledge_base_does_nothing(tmp_path: Path) -> None:
    assert KnowledgeBase.open(tmp_path / "empty", embedder="hashing").reindex() == []
