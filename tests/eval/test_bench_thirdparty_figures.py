"""Figures of benchmarks/bench_thirdparty.py that say where answers are lost:
whether the labelled answer is in what a model reads of the top hits at all
(``in_evidence``), and Self-RAG's result beside plain RAG's per question
(``paired``), and which check had Self-RAG's last word (``by_check``). Each counts what its docstring says, on a small knowledge base
and rows whose verdicts are known. And the commit the figures came from."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from bench_scripts import load_bench

from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import QuestionSet
from selfrag_nb.store.kb import KnowledgeBase


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("bench_thirdparty")


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    root = tmp_path_factory.mktemp("bench_tp")
    docs = root / "docs"
    docs.mkdir()
    (docs / "quill.md").write_text(
        "# Quill\n\nQuill is released under the [MIT](https://example.org/mit) license.\n",
        encoding="utf-8",
    )
    (docs / "ledger.md").write_text("# Ledger\n\nThe ledger closes on day 5.\n", encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs / "quill.md")
    kb.ingest(docs / "ledger.md", acl={"roles": ["finance"]})
    yield kb
    kb.close()


def _q(qid: str, question: str, must: list[str], category: str = "answerable") -> dict[str, Any]:
    return {"id": qid, "category": category, "question": question, "must_include": must}


def test_in_evidence_reads_clean_text_as_the_asking_user(bench: ModuleType, kb: KnowledgeBase) -> None:
    qs = QuestionSet.from_records(
        [
            # in the clean text: the link's markup is gone, its words stay
            _q("a", "What license is Quill released under?", ["under the MIT license"]),
            # in no document
            _q("b", "What license is Quill released under?", ["Apache"]),
            # in a document the finance role may read, and the anonymous asker may not
            {**_q("c", "When does the ledger close?", ["day 5"]), "user": {"id": "fi", "roles": ["finance"]}},
            _q("c2", "When does the ledger close?", ["day 5"]),
            # not counted: no must_include, or not answerable
            _q("d", "What is Quill?", []),
            _q("e", "When does the ledger close?", ["day 5"], "restricted"),
        ]
    )
    got = bench.in_evidence(kb, qs, ks=(1, 5))
    assert got["top5"] == {"n": 2, "of": 4, "rate": 0.5}
    assert got["top1"]["of"] == 4


def _row(
    variant: str, qid: str, outcome: str, answer: str | None, category: str = "answerable", **more: Any
) -> EvalRow:
    return EvalRow(
        variant=variant, id=qid, category=category, question="q", answer=answer, outcome=outcome, **more
    )


def _sha(answer: str) -> str:
    return hashlib.sha256(answer.encode("utf-8")).hexdigest()[:16]


def test_paired_counts_each_questions_pair_of_results(bench: ModuleType) -> None:
    judged = {
        ("1", _sha("right")): {"correct": True},
        ("2", _sha("wrong")): {"correct": False},
        ("2", _sha("right")): {"correct": True},
        ("3", _sha("right")): {"correct": True},
    }
    rows = [
        _row("self_rag", "1", "answered", "right"),
        _row("plain_rag", "1", "answered", "right"),
        _row("self_rag", "2", "disclaimed", "wrong"),
        _row("plain_rag", "2", "answered", "right"),
        _row("self_rag", "3", "refused", "sorry"),
        _row("plain_rag", "3", "answered", "right"),
        _row("self_rag", "4", "clarify", "which one?"),
        _row("plain_rag", "4", "answered", "never judged"),
        # only one variant ran it, or not answerable: not a pair
        _row("self_rag", "5", "answered", "right"),
        _row("self_rag", "6", "refused", "no", category="unanswerable"),
        _row("plain_rag", "6", "answered", "yes", category="unanswerable"),
    ]
    assert bench.paired(rows, judged, "self_rag", "plain_rag") == {
        "self_rag correct / plain_rag correct": 1,
        "self_rag declined / plain_rag correct": 1,
        "self_rag declined / plain_rag unjudged": 1,
        "self_rag wrong / plain_rag correct": 1,
    }


def test_by_check_counts_the_last_word_and_what_came_of_it(bench: ModuleType) -> None:
    """A given answer by its usefulness verdict and its judgment; a declined
    one by its reason_kind and, when answerable, by plain RAG's result on the
    same question: a right answer turned down is named as such."""
    judged = {
        ("1", _sha("right")): {"correct": True},
        ("2", _sha("wrong")): {"correct": False},
        ("3", _sha("right")): {"correct": True},
        ("4", _sha("wrong")): {"correct": False},
        ("6", _sha("yes")): {"correct": False},
    }
    rows = [
        _row("self_rag", "1", "answered", "right", usefulness="yes"),
        _row("self_rag", "2", "disclaimed", "wrong", usefulness="partly"),
        _row("plain_rag", "3", "answered", "right"),
        _row("self_rag", "3", "refused", "sorry", reason_kind="not_answered"),
        _row("plain_rag", "4", "answered", "wrong"),
        _row("self_rag", "4", "refused", "sorry", reason_kind="no_evidence"),
        _row("self_rag", "5", "clarify", "which one?", reason_kind=""),
        _row("plain_rag", "6", "answered", "yes", category="unanswerable"),
        _row("self_rag", "6", "refused", "no", category="unanswerable", reason_kind="no_evidence"),
        _row("self_rag", "7", "answered", "never judged", usefulness="yes"),
    ]
    assert bench.by_check(rows, judged, "self_rag", "plain_rag") == {
        "answerable · clarify · declined": 1,
        "answerable · no_evidence · plain_rag wrong": 1,
        "answerable · not_answered · plain_rag correct": 1,
        "answerable · usefulness partly · wrong": 1,
        "answerable · usefulness yes · correct": 1,
        "answerable · usefulness yes · unjudged": 1,
        "unanswerable · no_evidence · declined": 1,
    }


def test_the_figures_say_which_code_made_them(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    import selfrag_nb

    root = Path(selfrag_nb.__file__).resolve().parents[1]
    head = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "HEAD"], check=False, capture_output=True, text=True
    )
    got = bench.code_version()
    if head.returncode == 0:
        assert got["commit"] == head.stdout.strip()
        assert isinstance(got["dirty"], bool)
    # a package outside any checkout (a copy on PYTHONPATH) claims no commit
    monkeypatch.setattr(selfrag_nb, "__file__", "/nonexistent/selfrag_nb/__init__.py")
    assert bench.code_version() == {"commit": None, "dirty": None}
