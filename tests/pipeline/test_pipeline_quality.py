"""Quality floors on the labelled sample questions with the offline model.

Runs every question of sample_data/questions.jsonl through
``SelfRAG(KnowledgeBase.sample())`` and prints, then asserts:

    decision accuracy                        >= 0.95
    labelled relevant source retrieved       >= 0.90   (questions with a label)
    outcome within the expected set          >= 0.95  (with the usefulness check on: it must not cost the sample its answers;
                                                        questions asked in the documents' own language)
    cross-lingual: relevant source in the top 5 hits  >= 0.80  (English questions about Chinese-only
                                                        documents and the reverse: the sample's embedder,
                                                        e5-small-multilingual, finds them; their outcome is
                                                        printed, not floored: the offline judge compares
                                                        words, so it cannot read evidence in another language)
    protected spans kept in every rewrite    == 100 %
    unauthorised ("secret") text anywhere    == 0      (trace JSON, prompts, outputs)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from json_text import found, json_strings

import selfrag_nb as sr

pytestmark = pytest.mark.slow

QUESTIONS = Path(__file__).resolve().parents[2] / "sample_data" / "questions.jsonl"


@pytest.fixture(scope="module")
def results() -> list[dict[str, Any]]:
    kb = sr.KnowledgeBase.sample()
    rag = sr.SelfRAG(kb)
    rows = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        u = q.get("user") or {}
        trace = rag.ask(
            q["question"],
            user=sr.User(u.get("id", "anonymous"), roles=u.get("roles", [])),
            history=q.get("history"),
        )
        # the trace's text (not its numbers) and every prompt and output; a secret
        # counts as a whole token (support/json_text.py)
        blob = "\n".join(json_strings(json.loads(trace.to_json()))) + "".join(
            m.get("content", "") + c.raw for c in trace.model_calls for m in c.messages
        )
        hits = trace.retrieval.hits if trace.retrieval else []
        sources = {h.source for h in hits}
        top5 = [h.source for h in hits][:5]
        rewrites = trace.rewrite.queries[1:] if trace.rewrite else []
        rows.append(
            {
                "id": q["id"],
                "cross": str(q["category"]).startswith("cross_lingual_"),
                "relevant_top5": any(r in top5 for r in q.get("relevant") or []),
                "decision_ok": trace.decision is not None and trace.decision.retrieve == q["should_retrieve"],
                "relevant_labelled": bool(q.get("relevant")),
                "relevant_ok": any(r in sources for r in q.get("relevant") or []),
                "outcome": trace.outcome,
                "expected": q["expected"],
                "outcome_ok": trace.outcome in q["expected"],
                "protected_missing": [
                    (rw, p)
                    for rw in rewrites
                    for p in q.get("protected") or []
                    if p.casefold() not in rw.casefold()
                ],
                "leaks": found(q.get("secret") or [], blob),
                "reason": trace.finish.reason if trace.finish else "",
            }
        )
    return rows


def _rate(rows: list[dict[str, Any]], key: str) -> float:
    return sum(1 for r in rows if r[key]) / len(rows)


def test_floors(results: list[dict[str, Any]]) -> None:
    labelled = [r for r in results if r["relevant_labelled"]]
    decision = _rate(results, "decision_ok")
    relevant = _rate(labelled, "relevant_ok")
    same = [r for r in results if not r["cross"]]
    cross = [r for r in results if r["cross"]]
    outcome = _rate(same, "outcome_ok")
    cross_top5 = _rate(cross, "relevant_top5")
    protected = [r for r in results if r["protected_missing"]]
    leaks = [r for r in results if r["leaks"]]
    print(f"\nquestions: {len(results)}")
    print(f"decision accuracy: {decision:.3f} (floor 0.95)")
    print(f"relevant source retrieved: {relevant:.3f} of {len(labelled)} labelled (floor 0.90)")
    print(f"outcome within expected: {outcome:.3f} of {len(same)} same-language questions (floor 0.95)")
    print(f"cross-lingual: relevant source in the top 5: {cross_top5:.3f} of {len(cross)} (floor 0.80)")
    print(
        f"cross-lingual outcome within expected (offline judge, no floor): "
        f"{sum(r['outcome_ok'] for r in cross)}/{len(cross)}"
    )
    print(f"rewrites missing a protected span: {len(protected)} (floor 0)")
    print(f"questions leaking secret text: {len(leaks)} (floor 0)")
    for r in results:
        if r["cross"]:
            continue
        if not (r["decision_ok"] and r["outcome_ok"]) or (r["relevant_labelled"] and not r["relevant_ok"]):
            print(
                f"  {r['id']}: outcome={r['outcome']} expected={r['expected']} reason={r['reason'][:100]!r}"
            )
    assert leaks == [], leaks
    assert protected == [], protected
    assert decision >= 0.95
    assert relevant >= 0.90
    assert len(cross) >= 14, "the sample's cross-lingual questions are missing"
    assert cross_top5 >= 0.80, [r["id"] for r in cross if not r["relevant_top5"]]
    assert outcome >= 0.95, [r["id"] for r in same if not r["outcome_ok"]]
