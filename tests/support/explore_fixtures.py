"""Real traces for the explorer tests: the offline model over real LanceDB
knowledge bases, nothing mocked.

    eval_run(tmp)      sr.evaluate over 16 sample questions (two per category, hashing
                       embedder), traces=True -> (EvalReport, out folder with
                       rows.jsonl and traces/<variant>/<id>.json)
    access_traces(tmp) a knowledge base holding one document only the board may
                       read: the same question asked by staff (refused, no_access)
                       and by a board member (answered from it)
    write_folder(dir, traces)   Trace.save each as <dir>/<n>.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ACCESS_Q = "What will happen to the refund budget in the merger plan?"


def eval_run(tmp: Path, n: int = 16) -> tuple[Any, Path]:
    import selfrag_nb as sr
    from selfrag_nb.eval.questions import questions

    kb = sr.KnowledgeBase.sample(embedder="hashing")
    qs = questions("sample").sample(2, seed=7, per_category=True)[:n]
    out = tmp / "eval"
    report = sr.evaluate(sr.SelfRAG(kb), qs, out=out, traces=True, progress=False, concurrency=2)
    return report, out


def access_traces(tmp: Path) -> list[Any]:
    import selfrag_nb as sr

    docs = tmp / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "merger.md").write_text(
        "---\ntitle: Merger plan\nroles: [board]\n---\n# Merger plan\n\n"
        "The merger plan cuts the refund budget to 10 days for every customer.\n",
        encoding="utf-8",
    )
    kb = sr.KnowledgeBase.open(tmp / "kb", embedder="hashing")
    kb.ingest(docs)
    rag = sr.SelfRAG(kb).with_settings(retrieval="always")
    staff = rag.ask(ACCESS_Q, user=sr.User("ana", roles=["staff"]))
    board = rag.ask(ACCESS_Q, user=sr.User("bo", roles=["board"]))
    return [staff, board]


def write_folder(folder: Path, traces: list[Any]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [t.save(folder / f"{i:04d}.json") for i, t in enumerate(traces)]
