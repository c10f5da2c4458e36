"""Grade: concurrent (not sequential), bands, unparsed never relevant, kept sorted."""

from __future__ import annotations

import time
from typing import Any

import selfrag_nb as sr

Q = "refund shipping plan export merger"


def test_grading_is_concurrent_and_bounded(kb: Any) -> None:
    model = sr.ScriptedModel(latency=0.25)
    model.default("decide", {"decision": "RETRIEVE", "reason": ""})
    model.default("grade", {"relevanceScore": 60, "isRelevant": True})
    rag = sr.SelfRAG(kb, model=model).with_settings(rewrite=False)
    step = rag.stepper(Q)
    n = len(step.retrieve().hits)
    assert n >= 4
    t0 = time.perf_counter()
    grades = step.grade()
    wall = time.perf_counter() - t0
    assert len(grades.items) == n
    assert wall < 0.25 * 2  # sequential would take n * 0.25 s
    # A concurrency of 1 is sequential: the semaphore really bounds it.
    step1 = rag.with_settings(grade_concurrency=1).stepper(Q)
    step1.retrieve()
    t0 = time.perf_counter()
    step1.grade()
    assert time.perf_counter() - t0 >= 0.25 * n * 0.9


def test_bands_and_cutoff(kb: Any) -> None:
    model = sr.ScriptedModel()
    model.default("decide", {"decision": "RETRIEVE", "reason": ""})
    scores = iter([95, 79, 50, 49])  # the anonymous user sees 4 chunks

    def grade(request: Any) -> Any:
        try:
            s = next(scores)
        except StopIteration:
            return "not json"
        return {"relevanceScore": s, "isRelevant": s >= 50, "keyInfo": f"k{s}"}

    model.default("grade", grade)
    step = sr.SelfRAG(kb, model=model).with_settings(rewrite=False).stepper(Q)
    step.retrieve()
    grades = step.grade()
    by_score = {g.score: g for g in grades.items if g.parse_status == "ok"}
    assert by_score[95].band == "high"
    assert by_score[79].band == "partial"
    assert by_score[50].band == "partial"
    assert by_score[50].relevant
    assert by_score[49].band == "irrelevant"
    assert not by_score[49].relevant
    kept_scores = [next(g.score for g in grades.items if g.chunk_id == c) for c in grades.kept]
    assert kept_scores == sorted(kept_scores, reverse=True)
    assert len(grades.kept) == 3


def test_an_unparsed_grade_claiming_relevance_is_still_irrelevant(kb: Any) -> None:
    model = sr.ScriptedModel()
    model.default("decide", {"decision": "RETRIEVE", "reason": ""})
    model.default("grade", '{"relevanceScore": 900, "isRelevant": true}')  # out of range: fails the schema
    step = sr.SelfRAG(kb, model=model).with_settings(rewrite=False).stepper(Q)
    grades = step.grade()
    assert grades.kept == []
    assert all(g.parse_status == "unparsed" for g in grades.items)
    assert all(not g.relevant and g.score == 0 for g in grades.items)
    assert any(f.reason.endswith("treated as irrelevant") for f in grades.fallbacks)
