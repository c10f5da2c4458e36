from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from store_docs import DOCS, SECRET, write_docs

import selfrag_nb as sr
from selfrag_nb.errors import KnowledgeBaseError
from selfrag_nb.store.embedders import HashingEmbedder, register_embedder
from selfrag_nb.store.kb import KnowledgeBase


def _all_ids(kb: KnowledgeBase) -> list[str]:
    return sorted(h.chunk_id for h in kb.chunks())


def test_ingest_report_and_stored_chunks(kb: KnowledgeBase) -> None:
    assert kb.sources() == sorted(
        [
            "contact.html",
            "faq.jsonl#2",
            "faq.jsonl#ship",
            "hr/salary.md",
            "refund.md",
            "shipping.txt",
            "zh/退款.md",
        ]
    )
    assert len(kb) == len(kb.chunks()) >= 7
    refund = kb.chunks("refund.md")
    assert [h.heading for h in refund] == ["Refund policy", "Refund policy > Exceptions"]
    assert refund[1].context == "Refund policy > Exceptions"
    assert refund[1].text.startswith("Digital goods")  # original text, no context header inside
    assert refund[0].metadata == {"version": 3, "effective": "2024-01-01", "product": ["store", "app"]}
    assert len({h.doc_id for h in refund}) == 1
    assert all(h.score == 0.0 for h in refund)
    assert "NOPE" not in " ".join(h.text for h in kb.chunks("contact.html"))
    assert sr.KnowledgeBase is KnowledgeBase
    assert "chunks=" in repr(kb)
    d = kb.describe()
    assert d["embedder"] == "hashing"
    assert d["dim"] == 256
    assert d["indexes"] == ["FTS(search_text)"]


def test_reingest_unchanged_change_remove_prune(kb: KnowledgeBase, docs_dir: Path) -> None:
    before_ids, before_version = _all_ids(kb), kb.version
    again = kb.ingest(docs_dir)
    assert again.added == again.updated == again.removed == []
    assert len(again.unchanged) == len(kb.sources())
    assert again.chunks_added == 0
    assert kb.version == before_version
    assert _all_ids(kb) == before_ids

    (docs_dir / "shipping.txt").write_text("Shipping now takes two weeks by boat.\n")
    rep = kb.ingest(docs_dir)
    assert rep.updated == ["shipping.txt"]
    assert rep.added == []
    assert rep.chunks_added == 1
    assert rep.chunks_removed == 1
    assert [h.text for h in kb.chunks("shipping.txt")] == ["Shipping now takes two weeks by boat."]
    assert rep.version == kb.version > before_version

    (docs_dir / "shipping.txt").unlink()
    rep = kb.ingest(docs_dir)  # no prune: a missing file stays stored
    assert rep.removed == []
    assert "shipping.txt" in kb.sources()
    rep = kb.ingest(docs_dir, prune=True)
    assert rep.removed == ["shipping.txt"]
    assert "shipping.txt" not in kb.sources()

    n = len(kb.chunks("faq.jsonl#ship")) + len(kb.chunks("faq.jsonl#2"))
    assert kb.remove("faq.jsonl") == n  # a .jsonl source removes all its records
    assert not [s for s in kb.sources() if s.startswith("faq.jsonl")]
    with pytest.raises(KeyError, match=r"no source 'nope\.md'"):
        kb.remove("nope.md")


def test_acl_override_and_metadata_rewrite_the_source(tmp_path: Path, docs_dir: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb2", embedder="hashing")
    kb.ingest(docs_dir / "refund.md")
    assert kb.search("refund", mode="fts").hits
    rep = kb.ingest(docs_dir / "refund.md", acl={"roles": ["staff"]}, metadata={"batch": 7})
    assert rep.updated == ["refund.md"]
    assert kb.search("refund", mode="fts").hits == []  # anonymous no longer sees it
    staff = kb.search("refund", mode="fts", user=sr.User("ana", roles=["staff"]))
    assert staff.hits
    assert staff[0].metadata["batch"] == 7
    assert staff[0].metadata["version"] == 3
    with pytest.raises(ValueError, match="only 'roles', 'users', 'tenant'"):
        kb.ingest(docs_dir, acl={"role": ["x"]})
    with pytest.raises(ValueError, match="JSON-serialisable"):
        kb.ingest(docs_dir, metadata={"x": object()})


def test_versions_and_restore(kb: KnowledgeBase, docs_dir: Path) -> None:
    v_first = kb.version
    old_text = [h.text for h in kb.chunks("shipping.txt")]
    (docs_dir / "shipping.txt").write_text("Shipping is suspended.\n")
    kb.ingest(docs_dir)
    assert [h.text for h in kb.chunks("shipping.txt")] == ["Shipping is suspended."]
    versions = kb.versions()
    assert [v["version"] for v in versions] == sorted(v["version"] for v in versions)
    ingests = [v for v in versions if v["op"] == "ingest"]
    assert len(ingests) == 2
    assert ingests[-1]["updated"] == ["shipping.txt"]
    assert ingests[0]["added"]
    assert all("timestamp" in v and "chunks" in v for v in versions)

    new = kb.restore(v_first)
    assert new > v_first
    assert [h.text for h in kb.chunks("shipping.txt")] == old_text
    assert kb.search("three to five business days", mode="fts").hits  # FTS still works after restore
    assert kb.versions()[-1]["op"] in ("restore", "index")
    assert any(v["op"] == "restore" and v["restored"] == v_first for v in kb.versions())
    with pytest.raises(ValueError, match="no version 999"):
        kb.restore(999)
    with pytest.raises(TypeError):
        kb.restore("1")  # type: ignore[arg-type]  # the wrong type is the point of the test


def test_search_modes_scores_and_where(kb: KnowledgeBase) -> None:
    for mode in ("vector", "fts", "hybrid"):
        hits = kb.search("digital goods refundable", k=3, mode=mode)
        assert hits.mode == mode
        assert hits[0].source == "refund.md"
        assert hits[0].heading == "Refund policy > Exceptions"
        assert hits[0].rank == 1
        assert hits[0].score == hits[0].scores[mode]
        assert len(hits) <= 3
    hyb = kb.search("digital goods refundable", mode="hybrid")
    assert {"vector", "vector_distance", "fts", "hybrid"} <= set(hyb[0].scores)
    assert [h.score for h in hyb] == sorted((h.score for h in hyb), reverse=True)
    only = kb.search("refund", mode="hybrid", where="source = 'zh/退款.md' OR source = 'refund.md'")
    assert {h.source for h in only} <= {"zh/退款.md", "refund.md"}
    assert "array_has_any(acl_roles" in only.access_filter
    assert only.access_filter.endswith("AND (source = 'zh/退款.md' OR source = 'refund.md')")
    df = hyb.to_pandas()
    assert list(df["rank"]) == list(range(1, len(hyb) + 1))


def test_chinese_fts_and_hybrid(kb: KnowledgeBase) -> None:
    for query in ("退款", "数字商品可以退款吗", "三十天内退款"):
        fts = kb.search(query, mode="fts")
        assert fts.hits
        assert fts[0].source == "zh/退款.md", query
        hyb = kb.search(query, mode="hybrid")
        assert hyb[0].source == "zh/退款.md", query
    staff = kb.search("发票 下载", mode="fts", user=sr.User("s", roles=["staff"]))
    assert staff[0].source == "faq.jsonl#2"
    mixed = kb.search("refund 退款 policy", mode="fts", k=5)
    assert {"refund.md", "zh/退款.md"} <= {h.source for h in mixed}
    assert kb.search("support@example.com", mode="fts")[0].source == "contact.html"


def test_bad_input_errors(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="non-blank"):
        kb.search("   ")
    with pytest.raises(ValueError, match="between 1 and 1000"):
        kb.search("x", k=0)
    with pytest.raises(ValueError, match="between 1 and 1000"):
        kb.search("x", k=1001)
    with pytest.raises(ValueError, match="unknown search mode 'bm25'"):
        kb.search("x", mode="bm25")
    with pytest.raises(TypeError, match=r"selfrag_nb\.User"):
        kb.search("x", user="ana")  # type: ignore[arg-type]  # the wrong type is the point of the test
    with pytest.raises(ValueError, match="search failed"):
        kb.search("x", where="no_such_column = 1")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        kb.ingest(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="no knowledge base"):
        KnowledgeBase.open(tmp_path / "nowhere", embedder="hashing", create=False)
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(KnowledgeBaseError, match="is a file"):
        KnowledgeBase.open(f, embedder="hashing")
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.md").write_text("# not a kb")
    with pytest.raises(KnowledgeBaseError, match="not a knowledge base"):
        KnowledgeBase.open(stray, embedder="hashing")


def test_foreign_and_damaged_lancedb(tmp_path: Path, kb: KnowledgeBase) -> None:
    import lancedb

    other = tmp_path / "other"
    db = lancedb.connect(str(other))
    db.create_table("vectors", [{"a": 1}])
    with pytest.raises(KnowledgeBaseError, match="other tables"):
        KnowledgeBase.open(other, embedder="hashing")
    foreign = tmp_path / "foreign"
    lancedb.connect(str(foreign)).create_table("chunks", [{"a": 1}])
    with pytest.raises(KnowledgeBaseError, match="did not create"):
        KnowledgeBase.open(foreign, embedder="hashing")
    damaged = tmp_path / "damaged"
    shutil.copytree(kb.path, damaged)
    shutil.rmtree(damaged / "chunks.lance" / "_versions")
    with pytest.raises(KnowledgeBaseError):
        KnowledgeBase.open(damaged, embedder="hashing")


def test_embedder_mismatch_and_reopen(kb: KnowledgeBase) -> None:
    with pytest.raises(KnowledgeBaseError, match=r"built with embedder 'hashing'.*'hashing:64'"):
        KnowledgeBase.open(kb.path, embedder="hashing:64")
    again = KnowledgeBase.open(kb.path)  # embedder=None: the stored one
    assert again.embedder_name == "hashing"
    assert len(again) == len(kb)


def test_file_uri(tmp_path: Path, docs_dir: Path) -> None:
    uri = (tmp_path / "uri kb").as_uri()  # file:///.../uri%20kb
    assert uri.startswith("file://")
    kb = KnowledgeBase.open(uri, embedder="hashing")
    kb.ingest(docs_dir / "shipping.txt")
    assert (tmp_path / "uri kb" / "chunks.lance").is_dir()
    assert KnowledgeBase.open(uri).search("shipping", mode="fts")[0].source == "shipping.txt"


class _Exploding(HashingEmbedder):
    """Fails on any text containing BOOM: an embedder dying in the middle of an ingest."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "exploding-test"

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if any("BOOM" in t for t in texts):
            raise RuntimeError("embedder crashed")
        return super().embed(texts)


register_embedder("exploding-test", lambda arg, **kw: _Exploding(), replace=True)


def test_failed_ingest_loses_nothing(tmp_path: Path, docs_dir: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb3", embedder="exploding-test")
    kb.ingest(docs_dir)
    ids, version, n = _all_ids(kb), kb.version, len(kb)
    (docs_dir / "shipping.txt").write_text("Changed shipping text.\n")
    many = {f"bulk/{i:03d}.txt": f"Bulk document {i}." for i in range(100)}
    many["bulk/999.txt"] = "BOOM"
    write_docs(docs_dir, many)
    with pytest.raises(RuntimeError, match="embedder crashed"):
        kb.ingest(docs_dir)
    assert kb.version == version
    assert len(kb) == n
    assert _all_ids(kb) == ids
    assert kb.chunks("shipping.txt")[0].text.startswith("Shipping takes three")


def test_sample_builds_once_and_rebuilds_on_change(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("SELFRAG_NB_CACHE", str(cache))
    docs = write_docs(tmp_path / "sample_docs", {"a.md": "# A\n\nAlpha text.\n"})
    kb1 = KnowledgeBase.sample("hashing", docs=docs)
    stamp = (Path(kb1.path) / "READY").stat().st_mtime_ns
    kb2 = KnowledgeBase.sample("hashing", docs=docs)
    assert kb2.path == kb1.path
    assert (Path(kb2.path) / "READY").stat().st_mtime_ns == stamp
    assert kb2.sources() == ["a.md"]
    (docs / "b.md").write_text("# B\n\nBeta text.\n")
    kb3 = KnowledgeBase.sample("hashing", docs=docs)
    assert kb3.path != kb1.path
    assert kb3.sources() == ["a.md", "b.md"]
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == sorted(
        [Path(kb1.path).name, Path(kb3.path).name]
    )
    with pytest.raises(FileNotFoundError, match="sample documents not found"):
        KnowledgeBase.sample("hashing", docs=tmp_path / "none")


def test_secret_fixture_is_really_there(kb: KnowledgeBase) -> None:
    # guards the ACL tests: the secret exists in the store, so "not found" means "filtered"
    assert any(SECRET in h.text for h in kb.chunks())
    assert set(DOCS) - {"faq.jsonl"} <= set(kb.sources())


def test_remove_a_record_removes_exactly_that_record(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "recs.jsonl").write_text(
        '{"id": "a", "text": "alpha record"}\n{"id": "a#b", "text": "beta record"}\n'
        '{"id": "c", "text": "gamma record"}\n'
    )
    (docs / "C#").mkdir()
    (docs / "C#" / "more.jsonl").write_text('{"id": "x", "text": "delta record"}\n')
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs)
    assert kb.sources() == ["C#/more.jsonl#x", "recs.jsonl#a", "recs.jsonl#a#b", "recs.jsonl#c"]
    assert kb.remove("recs.jsonl#a") == 1
    assert kb.sources() == ["C#/more.jsonl#x", "recs.jsonl#a#b", "recs.jsonl#c"]
    with pytest.raises(KeyError, match=r"no source .recs\.jsonl#a."):
        kb.remove("recs.jsonl#a")  # gone: not a prefix of recs.jsonl#a#b
    assert kb.remove("C#/more.jsonl") == 1  # a "#" in a folder name is still a whole file
    assert kb.remove("recs.jsonl") == 2
    assert kb.sources() == []
