"""The rerank card names each chunk once, numbers it one visible way, and
frames every score with its scale.

Rules (from the view review):
- five chunks of one file get five distinct labels in the before/after chart
  (heading path, then a chunk ordinal when the heading repeats);
- a chunk carries a retrieval rank (#n), a place before/after reranking and an
  evidence number [n]: the card says how they map, and Assess shows the [n]
  its reason cites;
- a score is never a bare number: each scale (RRF, BM25, similarity, distance,
  the reranker's own, grades 0-100) says what it is and which way is better;
- when the reranker puts a superseded document first, the card says that the
  reranker does not read document status.
"""

from __future__ import annotations

from display_fixtures import build_full_trace

from selfrag_nb.display.html import body_tree
from selfrag_nb.display.rerank_view import SCORE_NOTE
from selfrag_nb.store.types import ChunkRef, Hit
from selfrag_nb.trace import Assessment, Rerank, Retrieval, Trace


def _hits(headings: list[str], status: str = "") -> list[Hit]:
    doc = {"status": status} if status else {}
    return [
        Hit(
            source="docs/handbook.md",
            doc_id="handbook",
            chunk_id=f"h{i:02d}",
            title="Handbook",
            heading=f"Handbook > {head}",
            text=f"chunk {i} of the handbook",
            score=0.03 - i * 0.001,
            scores={"hybrid": 0.03 - i * 0.001, "fts": 9.0 - i, "vector": 0.8 - i * 0.05},
            rank=i + 1,
            metadata=doc,
        )
        for i, head in enumerate(headings)
    ]


def _trace(hits: list[Hit], after: list[str]) -> Trace:
    t = Trace(question="q", started_at=0.0)
    t.append(Retrieval(hits=hits, mode="hybrid"))
    ids = [h.chunk_id for h in hits]
    refs = {h.chunk_id: ChunkRef.from_hit(h) for h in hits}
    t.append(
        Rerank(before=ids, after=after, scores={c: 1.0 / (i + 1) for i, c in enumerate(after)}, refs=refs)
    )
    t.append(Assessment(action="answer", reason="[1] and [2] give the window", evidence=after[:5], refs=refs))
    return t


def _svg_labels(tree: object) -> list[str]:
    (svg,) = [n for n in _walk(tree) if n.tag == "svg"]
    return [n.text() for n in _walk(svg) if n.tag == "text"]


def _walk(node: object) -> list:  # type: ignore[type-arg]
    out = [node]
    for k in getattr(node, "kids", ()):
        if not isinstance(k, str):
            out.extend(_walk(k))
    return out


def test_five_chunks_of_one_file_get_five_distinct_labels() -> None:
    hits = _hits(["Refunds", "Refunds", "Exceptions", "Refunds", "Shipping"])
    ids = [h.chunk_id for h in hits]
    t = _trace(hits, list(reversed(ids)))
    labels = _svg_labels(body_tree(t))
    before = labels[2:7]
    after = labels[7:12]
    assert len(set(before)) == 5, before
    assert len(set(after)) == 5, after
    assert before[0] == "1. #1 handbook.md › Refunds (chunk 1)"
    assert before[2] == "3. #3 handbook.md › Exceptions"
    # after reranking: the place, then the evidence number Assess and Generate cite
    assert after[0] == "1. [1] handbook.md › Shipping"


def test_the_card_maps_rank_place_and_evidence_number() -> None:
    hits = _hits(["A", "B", "C", "D", "E", "F"])
    ids = [h.chunk_id for h in hits]
    t = _trace(hits, [ids[2], ids[0], ids[1], ids[3], ids[4]])
    card = body_tree(t).find_all("srnb-card-rerank")[0]
    text = card.text()
    assert "#n retrieval rank" in text
    assert "place before → after reranking" in text
    assert "[n] evidence number cited by Assess and Generate" in text
    rows = [n for n in _walk(card) if getattr(n, "tag", "") == "tr"][1:]
    first = [c.text() for c in rows[2].kids if not isinstance(c, str)]  # the chunk ranked #3
    assert first[0].startswith("#3")
    assert first[1:5] == ["3", "1", "↑ 2", "[1]"]
    # Assess lists the evidence it was shown, numbered as its reason cites it
    assess = body_tree(t).find_all("srnb-card-assess")[0]
    items = [li.text() for li in _walk(assess) if getattr(li, "tag", "") == "li"]
    assert [x[:3] for x in items] == ["[1]", "[2]", "[3]", "[4]", "[5]"]
    assert "C" in items[0]


def test_every_score_says_its_scale_and_direction() -> None:
    hits = _hits(["A", "B"])
    t = _trace(hits, [h.chunk_id for h in hits])
    text = body_tree(t).text()
    assert "reciprocal rank fusion of the two ranks (higher = better" in text
    assert "BM25 (higher = better match; no upper bound)" in text
    assert "1 − cosine distance (higher = closer, at most 1)" in text
    assert f"reranker score: {SCORE_NOTE}" in text
    assert "higher = more relevant" in SCORE_NOTE
    grades = body_tree(build_full_trace()).text()
    assert "grade 0–100 from the grader (higher = more relevant)" in grades


def test_a_superseded_document_first_gets_a_note_and_only_then() -> None:
    note = "the reranker orders chunks by relevance to the question and does not read document status"
    old = _hits(["Refunds", "Exceptions"], status="superseded")
    ids = [h.chunk_id for h in old]
    assert note in body_tree(_trace(old, ids)).text()
    current = _hits(["Refunds", "Exceptions"], status="current")
    assert note not in body_tree(_trace(current, [h.chunk_id for h in current])).text()
    # the full trace: refund-policy.md (superseded) is first after reranking
    assert note in body_tree(build_full_trace()).text()
