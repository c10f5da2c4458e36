"""Human labels (selfrag_nb/labels.py), from the documented rules: a JSON Lines
file keyed by question id + chunk id / claim text / answer; append-only, the
last line for a key wins; bad lines refused naming file and line; unknown
fields kept; chunk ids content-derived, so labels survive a re-ingest of
unchanged chunks into a real LanceDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.labels import AnswerLabel, ChunkLabel, ClaimLabel, Labels


def test_write_read_and_last_label_wins(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "labels.jsonl"  # missing folder and file: created on the first write
    labels = sr.Labels(path)
    assert len(labels) == 0
    labels.chunk("q1", "c1", relevant=True, note="states the window", by="ana")
    labels.chunk("q1", "c2", relevant=False)
    labels.claim(
        "q1", "Refunds take  30 days.", "partial", sentence="Refunds take 30 days [1].", chunk_id="c1"
    )
    labels.answer("q1", "partly")
    labels.chunk("q1", "c1", relevant=False, note="changed my mind")  # same key: this one wins

    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5  # append-only: the earlier judgement stays in the file
    first = json.loads(lines[0])
    assert first["kind"] == "chunk"
    assert first["id"] == "q1"
    assert first["by"] == "ana"
    assert first["at"].endswith("Z")

    again = Labels(path)
    assert len(again) == 4
    c1 = again.get_chunk("q1", "c1")
    assert isinstance(c1, ChunkLabel)
    assert c1.relevant is False
    assert c1.note == "changed my mind"
    assert c1.line == 5
    assert again.get_chunk("q1", "nope") is None
    claim = again.get_claim("q1", "refunds take 30 days.")  # matched case- and spacing-blind
    assert isinstance(claim, ClaimLabel)
    assert claim.support == "partial"
    assert claim.chunk_id == "c1"
    assert again.get_claim("q1", "refunds take 30 days.", chunk_id="c9") is None
    ans = again.get_answer("q1")
    assert isinstance(ans, AnswerLabel)
    assert ans.useful == "partly"
    assert again.counts() == {"chunk": 2, "claim": 1, "answer": 1}
    assert [lab.kind for lab in again] == ["chunk", "claim", "answer", "chunk"]
    assert len(again.for_question("q1", "chunk")) == 2


def test_unknown_fields_are_kept_and_hand_edits_appended_to(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(
        '{"kind": "answer", "id": 7, "useful": "no", "reviewer_tier": "gold"}', encoding="utf-8"
    )  # no trailing newline, numeric id as in hand-written question sets
    labels = Labels(path)
    ans = labels.get_answer("7")
    assert ans is not None
    assert ans.extra == {"reviewer_tier": "gold"}
    labels.answer("8", "yes")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    assert json.loads(lines[1])["id"] == "8"
    assert Labels(path).to_records()[0]["reviewer_tier"] == "gold"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"kind": "vibe", "id": "q1"}', "kind must be one of chunk, claim, answer"),
        ('{"kind": "chunk", "id": "q1", "relevant": true}', "missing required field(s) chunk_id"),
        (
            '{"kind": "chunk", "id": "q1", "chunk_id": "c", "relevant": "yes"}',
            "relevant must be true or false",
        ),
        ('{"kind": "claim", "id": "q1", "claim": "x", "support": "mostly"}', "support"),
        ('{"kind": "answer", "id": " ", "useful": "yes"}', "must not be blank"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path: Path, line: str, problem: str) -> None:
    path = tmp_path / "labels.jsonl"
    good = '{"kind": "answer", "id": "q1", "useful": "yes"}'
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(sr.LabelsError) as err:
        Labels(path)
    assert isinstance(err.value, sr.SelfRAGError)
    assert f"{path}:3:" in str(err.value)
    assert problem in str(err.value)


def test_bad_write_refused_and_nothing_appended(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    labels = Labels(path)
    with pytest.raises(sr.LabelsError, match="useful"):
        labels.answer("q1", "maybe")
    with pytest.raises(sr.LabelsError, match="relevant must be true or false"):
        labels.chunk("q1", "c1", relevant="no")  # type: ignore[arg-type]
    assert not path.exists()
    assert len(labels) == 0


def test_joins_question_sets_by_id(tmp_path: Path) -> None:
    qs = QuestionSet.from_records([{"id": "q1", "category": "factual", "question": "Refund window?"}])
    labels = Labels(tmp_path / "l.jsonl")
    labels.answer("q1", "yes")
    labels.check(qs)
    joined = labels.to_pandas().merge(qs.to_pandas(), on="id")
    assert list(joined["category"]) == ["factual"]
    labels.answer("q404", "no")
    with pytest.raises(sr.NotFoundError, match="q404"):
        labels.check(qs)


def test_chunk_labels_survive_reingest_into_real_lancedb(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text(
        "# Refunds\n\n## Window\n\nA full refund within 30 days of purchase.\n\n"
        "## Add-ons\n\nAdd-ons are non-refundable.\n",
        encoding="utf-8",
    )
    (docs / "shipping.md").write_text("# Shipping\n\nOrders ship within 2 business days.\n", encoding="utf-8")
    kb = sr.KnowledgeBase.open(tmp_path / "kb1", embedder="hashing")
    kb.ingest(docs)
    before = {(h.source, h.text): h.chunk_id for h in kb.chunks()}
    assert len(before) >= 3
    labels = Labels(tmp_path / "labels.jsonl")
    for (source, text), cid in before.items():
        labels.chunk("q1", cid, relevant="30 days" in text, source=source)

    # 1. the same documents into a brand-new knowledge base: every label finds its chunk
    fresh = sr.KnowledgeBase.open(tmp_path / "kb2", embedder="hashing")
    fresh.ingest(docs)
    assert {(h.source, h.text): h.chunk_id for h in fresh.chunks()} == before
    # 2. the same knowledge base, every source rewritten (new metadata) and one section edited
    (docs / "refunds.md").write_text(
        "# Refunds\n\n## Window\n\nA full refund within 30 days of purchase.\n\n"
        "## Add-ons\n\nAdd-ons are refundable within 7 days.\n",
        encoding="utf-8",
    )
    kb.ingest(docs, metadata={"area": "billing"})
    after = {h.chunk_id: h.text for h in kb.chunks()}
    kept = [cid for (_, text), cid in before.items() if "non-refundable" not in text]
    assert kept
    assert all(cid in after for cid in kept)  # unchanged chunks: same id, label still applies
    window = next(cid for (_, text), cid in before.items() if "30 days" in text)
    label = Labels(tmp_path / "labels.jsonl").get_chunk("q1", window)
    assert label is not None
    assert label.relevant is True
    edited = next(cid for (_, text), cid in before.items() if "non-refundable" in text)
    assert edited not in after  # the edited chunk has a new id: its old label no longer matches
