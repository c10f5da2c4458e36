"""benchmarks/bench_sentence_choice.py counts what its docstring says: over
the answerable questions with must_include, those declined before any
generate call, those whose candidate sentences never hold the answer, and,
of the rest (the denominator), how often each rule's lead sentence holds it.
A small knowledge base whose answers are known."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from bench_scripts import load_bench

from selfrag_nb.store.kb import KnowledgeBase


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("bench_sentence_choice")


def test_counts_and_their_denominator(bench: ModuleType, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "quill.md").write_text(
        "# Quill\n\nQuill is released under the MIT license. Quill writes its logs to the console.\n",
        encoding="utf-8",
    )
    kb = KnowledgeBase.open(tmp_path / "kb", embedder="hashing")
    kb.ingest(docs)
    user = {"id": "ana", "roles": ["staff"]}
    rows = [
        # answered: the licence sentence leads whatever the rule
        {"question": "Which license is Quill released under?", "must_include": ["MIT"]},
        # the document never says it: declined, or no candidate holds it
        {"question": "Which port does Quill listen on?", "must_include": ["8080"]},
        # not counted: no must_include, and not answerable
        {"question": "What does Quill write to the console?", "must_include": []},
    ]
    lines = [
        {"id": f"q{n}", "category": "answerable", "user": user, "relevant": ["quill.md"], **r}
        for n, r in enumerate(rows)
    ]
    lines.append({"id": "u1", "category": "unanswerable", "question": "Who wrote Quill?", "user": user})
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    counts = bench.measure(kb, path, embedder="hashing")
    assert counts["answerable with must_include"] == 2
    assert counts["no generate call"] + counts["no candidate holds the answer"] == 1
    assert counts["a candidate holds it"] == 1
    assert counts["lead holds it: lexical"] == 1
    rules = [k for k in counts if k.startswith("lead holds it: ")]
    assert len(rules) == 2 + len(bench.WITHIN) + len(bench.WEIGHTS)
    assert all(0 <= counts[k] <= counts["a candidate holds it"] for k in rules)
