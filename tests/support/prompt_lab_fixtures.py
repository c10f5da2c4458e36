"""Builders for the Prompt Lab tests (not a test module): a small real LanceDB
knowledge base (hashing embedder) and ScriptedModel responders that read a
marker in the *system prompt*, so a template edit really changes verdicts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DOCS = {
    "refunds.md": "# Refund policy\n\nCustomers can request a full refund within 30 days of purchase.\n",
    "shipping.md": "# Shipping\n\nOrders ship within 2 business days after payment.\n",
}

#: A line that, placed in a template's instructions, makes the scripted model strict.
STRICT = "STRICT-MARKER: judge only the document's own topic."
LAZY = "LAZY-MARKER: general knowledge needs no documents."
SKEPTIC = "SKEPTIC-MARKER: add a disclaimer to everything."
EXPAND = "EXPAND-MARKER: add search phrasings."
TOPICAL = "TOPICAL-MARKER: put the passage about the question's topic first."
CAUTIOUS = "CAUTIOUS-MARKER: refuse what the passages do not say."
CITE = "CITE-MARKER: cite the passage about the question's topic."

RECORDS: list[dict[str, Any]] = [
    {
        "id": "refund-1",
        "category": "factual",
        "question": "What is the refund window?",
        "should_retrieve": True,
        "relevant": ["refunds.md"],
        "expected": ["answered"],
        "must_include": ["30 days"],
        "must_not_include": ["60 days"],
    },
    {
        "id": "ship-1",
        "category": "factual",
        "question": "How fast do orders ship?",
        "should_retrieve": True,
        "relevant": ["shipping.md"],
        "expected": ["answered"],
    },
    {
        "id": "memo-1",
        "category": "open",
        "question": "Who wrote the onboarding memo?",
        "should_retrieve": True,
        "relevant": [],
        "expected": ["refused"],
    },
    {
        "id": "france-1",
        "category": "general",
        "question": "What is the capital of France?",
        "should_retrieve": False,
        "relevant": [],
        "expected": ["direct"],
    },
]


def build_kb(root: Path) -> Any:
    from selfrag_nb.store.kb import KnowledgeBase

    docs = root / "docs"
    docs.mkdir(parents=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs)
    return kb


def system_prompt(request: Any) -> str:
    return str(request.messages[0].content)


def grade(request: Any) -> dict[str, Any]:
    """Baseline: every chunk is relevant. With STRICT in the system prompt:
    a chunk is relevant only when it is about what the question asks."""
    if STRICT in system_prompt(request):
        about_refund = "refund" in request.inputs.question.lower()
        relevant = about_refund == ("refund" in request.inputs.text.lower())
    else:
        relevant = True
    return {"relevanceScore": 90 if relevant else 10, "isRelevant": relevant, "keyInfo": "", "gaps": ""}


def decide(request: Any) -> dict[str, Any]:
    """Baseline: always retrieve. With LAZY: no retrieval for France."""
    if LAZY in system_prompt(request) and "france" in request.inputs.question.lower():
        return {"decision": "NO_RETRIEVE", "reason": "general knowledge"}
    return {"decision": "RETRIEVE", "reason": "may be in the documents"}


def verify(request: Any) -> dict[str, Any]:
    """Baseline: ACCEPT. With SKEPTIC: ADD_DISCLAIMER."""
    rec = "ADD_DISCLAIMER" if SKEPTIC in system_prompt(request) else "ACCEPT"
    return {
        "isFullySupported": rec == "ACCEPT",
        "supportedClaims": ["the answer"],
        "unsupportedClaims": [],
        "claims": [
            {
                "claim": "the answer",
                "verdict": "supported",
                "evidence": [{"doc": 1, "quote": "within"}],
                "cited": [1],
            }
        ],
        "overallConfidence": 90,
        "recommendation": rec,
    }


def _topic(text: str) -> str:
    return "refund" if "refund" in text.lower() else "ship" if "ship" in text.lower() else "other"


def rewrite(request: Any) -> dict[str, Any]:
    """Baseline: no rewrites. With EXPAND: one phrasing that keeps the
    protected spans and one that drops them (the stage rejects that one)."""
    if EXPAND not in system_prompt(request):
        return {"rewrites": [], "reason": "specific enough"}
    q = request.inputs.question
    return {"rewrites": [q + " refund policy", "refund policy"], "reason": "expanded"}


def rerank(request: Any) -> dict[str, Any]:
    """Every candidate, ranked. Baseline: passages off the query's topic first
    (a poor reranker). With TOPICAL: the passage on the topic first."""
    topic = _topic(request.inputs.query)
    on_topic_first = TOPICAL in system_prompt(request)
    ranking = [
        {"index": i, "score": 1.0 if (_topic(text) == topic) == on_topic_first else 0.5}
        for i, text in enumerate(request.inputs.candidates)
    ]
    return {"ranking": ranking}


def assess(request: Any) -> dict[str, Any]:
    """Baseline: ANSWER. With CAUTIOUS: REFUSE when no passage is on the question's topic."""
    if CAUTIOUS in system_prompt(request):
        topic = _topic(request.inputs.question)
        if not any(_topic(e.text) == topic for e in request.inputs.evidence):
            return {"action": "REFUSE", "reason": "not covered"}
    return {"action": "ANSWER", "reason": "covered"}


def generate(request: Any) -> dict[str, Any]:
    """Baseline: "Within 30 days [1]." whatever passage 1 is. With CITE: the
    marker of the passage on the question's topic."""
    n = 1
    if CITE in system_prompt(request):
        topic = _topic(request.inputs.question)
        n = next((e.index for e in request.inputs.evidence if _topic(e.text) == topic), 1)
    return {"answer": f"Within 30 days [{n}]."}


def usefulness(request: Any) -> dict[str, Any]:
    """Baseline: yes. With SKEPTIC: partly."""
    if SKEPTIC in system_prompt(request):
        return {"verdict": "partly", "score": 60, "missing": "detail", "reason": "scripted: skeptical"}
    return {"verdict": "yes", "score": 90, "reason": "scripted: it answers the question"}


def scripted_model(*, without: tuple[str, ...] = (), **kw: Any) -> Any:
    """A ScriptedModel answering every role (except ``without``) by the rules above."""
    from selfrag_nb.testing import ScriptedModel

    m = ScriptedModel(**kw)
    answers: dict[str, Any] = {
        "decide": decide,
        "rewrite": rewrite,
        "grade": grade,
        "rerank": rerank,
        "assess": assess,
        "generate": generate,
        "verify": verify,
        "usefulness": usefulness,
    }
    for role, answer in answers.items():
        if role not in without:
            m.default(role, answer)
    return m


def with_marker(template: str, marker: str) -> str:
    """The template with ``marker`` as the first line of its instructions."""
    return marker + "\n" + template
