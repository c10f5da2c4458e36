"""The bundled human labels (sample_data/labels.jsonl) fit the sample: every
label names a question of sr.questions("sample") and every chunk id one that
KnowledgeBase.sample() produces. Chunk ids hash the source path and the chunk
text, not the vectors, so a fresh build with the hashing embedder in a tmp
cache (a real LanceDB, no model download) has the same ids as the MiniLM one
the labels were written against."""

from __future__ import annotations

from pathlib import Path

import pytest

import selfrag_nb as sr
from selfrag_nb.labels import ChunkLabel, ClaimLabel, sample_labels_path


@pytest.fixture(scope="module")
def sample_chunks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    mp = pytest.MonkeyPatch()
    mp.setenv("SELFRAG_NB_CACHE", str(tmp_path_factory.mktemp("sample_cache")))
    try:
        kb = sr.KnowledgeBase.sample(embedder="hashing", progress=False)
        return {h.chunk_id: h.source for h in kb.chunks()}
    finally:
        mp.undo()


def test_sample_labels_cover_every_kind() -> None:
    labels = sr.Labels("sample")
    assert labels.path == sample_labels_path()
    counts = labels.counts()
    assert counts["chunk"] >= 10
    assert counts["claim"] >= 5
    assert counts["answer"] >= 3
    chunk_values = {lab.relevant for lab in labels.of_kind("chunk") if isinstance(lab, ChunkLabel)}
    assert chunk_values == {True, False}  # a kappa needs both


def test_every_label_names_a_sample_question_and_chunk(sample_chunks: dict[str, str]) -> None:
    labels = sr.Labels("sample")
    labels.check(sr.questions("sample"))  # NotFoundError names any unknown question id
    for lab in labels:
        if isinstance(lab, ChunkLabel):
            assert lab.chunk_id in sample_chunks, f"line {lab.line}: chunk {lab.chunk_id} not in the sample"
            assert lab.source == sample_chunks[lab.chunk_id], f"line {lab.line}: source"
        if isinstance(lab, ClaimLabel) and lab.chunk_id:
            assert lab.chunk_id in sample_chunks, f"line {lab.line}: claim chunk {lab.chunk_id}"


def test_sample_labels_file_is_what_the_docs_describe() -> None:
    # one JSON object per line, every line a label (nothing overwritten: the history is the file)
    path = Path(sample_labels_path())
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert len(lines) == sr.Labels(path).lines
