"""``evaluate(attribution=True)``: per variant, the share of supported claims
that rest on a single chunk and on a superseded document (docs/attribution.md).
Off by default: it costs one verify call per kept chunk of each verified answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr
from selfrag_nb.eval.questions import Question

DOCS = {
    "refunds.md": (
        "---\ntitle: Refund policy\n---\n# Refund policy\n\n"
        "Customers can request a full refund within 30 days of purchase.\n"
    ),
    "shipping.md": "---\ntitle: Shipping\n---\n# Shipping\n\nOrders ship within 2 business days.\n",
    "warranty-2022.md": (
        "---\ntitle: Warranty (2022)\nstatus: superseded\nsuperseded_by: warranty-2025.md\n---\n"
        "# Warranty\n\nThe hardware warranty lasts 12 months from delivery.\n"
    ),
}
QUESTIONS = [
    Question(id="refund", category="policy", question="How long do I have to request a refund?"),
    Question(id="warranty", category="policy", question="How long does the hardware warranty last?"),
    Question(id="hello", category="greeting", question="Hello!"),
]


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("attribution_eval")
    (root / "docs").mkdir()
    for name, text in DOCS.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    kb = sr.KnowledgeBase.open(Path(root) / "kb", embedder="hashing")
    kb.ingest(root / "docs")
    return sr.SelfRAG(kb, settings=sr.Settings(grade=False))


def test_the_summary_reports_single_chunk_and_superseded_shares(rag: Any, tmp_path: Path) -> None:
    report = sr.evaluate(rag, QUESTIONS, out=tmp_path, progress=False, attribution=True)
    rows = {r.id: r for r in report.rows}
    assert [rows[i].outcome for i in ("refund", "warranty", "hello")] == ["answered", "answered", "direct"]
    # Each answer's one claim rests on its one document; the warranty's is superseded.
    assert (rows["refund"].attributed_claims, rows["refund"].single_chunk_claims) == (1, 1)
    assert rows["refund"].superseded_claims == 0
    assert (rows["warranty"].single_chunk_claims, rows["warranty"].superseded_claims) == (1, 1)
    assert rows["refund"].attribution_calls == 3  # one per kept chunk: the three documents
    # A direct reply has nothing to attribute and costs nothing.
    assert (rows["hello"].attributed_claims, rows["hello"].attribution_calls) == (0, 0)
    summary = report.summary
    overall = summary[summary["category"] == "all"].iloc[0]
    assert overall["single_chunk_share"] == 1.0
    assert overall["superseded_share"] == 0.5
    assert (
        overall["attribution_calls"] == rows["refund"].attribution_calls + rows["warranty"].attribution_calls
    )


def test_without_the_option_nothing_is_measured_or_paid(rag: Any, tmp_path: Path) -> None:
    report = sr.evaluate(rag, QUESTIONS[:1], out=tmp_path, progress=False)
    assert report.rows[0].attributed_claims is None
    assert report.rows[0].attribution_calls == 0
    assert "single_chunk_share" not in report.summary.columns


def test_the_ray_engine_refuses_the_option(rag: Any, tmp_path: Path) -> None:
    with pytest.raises(sr.InputError, match="engine='local'"):
        sr.evaluate(rag, QUESTIONS[:1], out=tmp_path, progress=False, attribution=True, engine="ray")
