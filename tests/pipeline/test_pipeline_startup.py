"""Start-up cost is its own row, never a stage's, and never eats a deadline.

The rule: one-time work (importing LiteLLM and its call path, loading the
embedder's weights, opening the table, the first search) is timed apart as
``Trace.startup`` before the question's clock starts, so no stage's
``latency_ms``, no ModelCall's latency and no deadline pays for it; the
second question of a process records none.

Each cold test runs in a fresh interpreter (imports really cold) against a
real LanceDB knowledge base with the MiniLM embedder, and, for LiteLLM, the
real HTTP LoopbackServer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers_pipeline import DOCS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def minilm_kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from selfrag_nb.store.kb import KnowledgeBase

    root = tmp_path_factory.mktemp("startup_kb")
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    with KnowledgeBase.open(root / "kb", embedder="minilm") as kb:
        kb.ingest(docs)
    return root / "kb"


def _cold(code: str, kb: Path) -> dict[str, Any]:
    """Run ``code`` (it prints one JSON line last) in a fresh interpreter that
    imports this checkout; ``KB`` is the knowledge base's path. The scripts
    read ``startup`` with getattr so a build without it fails on the timings."""
    prelude = f"import json, sys, time\nKB = {str(kb)!r}\n"
    env = os.environ | {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def _stage_ms(trace: Any) -> dict[str, float]:
    return {r.stage: r.latency_ms for r in trace.records}


FIRST_ASK = """
import selfrag_nb as sr
kb = sr.KnowledgeBase.open(KB, embedder="minilm")
rag = sr.SelfRAG(kb)
first = rag.ask("What is the refund window for customers?")
second = rag.ask("How many projects does the Free plan allow?")
print(json.dumps({
    "first": {r.stage: r.latency_ms for r in first.records},
    "first_startup": getattr(first, "startup", {}),
    "second": {r.stage: r.latency_ms for r in second.records},
    "second_startup": getattr(second, "startup", {}),
    "text": str(first),
}))
"""


def test_first_question_of_a_process_charges_start_up_to_its_own_row(minilm_kb: Path) -> None:
    out = _cold(FIRST_ASK, minilm_kb)
    first, startup = out["first"], out["first_startup"]
    assert "rewrite" in first, first  # the question retrieves: rewrite probes the knowledge base
    # The embedder's weights, the table and the first search are not the rewrite's:
    # its probe search costs what it costs warm (the second question's), not seconds.
    assert first["rewrite"] < 200 + 3 * out["second"]["rewrite"], out
    assert startup, "the first question of a process records its start-up"
    what = " ".join(startup)
    assert "knowledge base" in what, startup
    assert "minilm" in what, startup
    assert sum(startup.values()) > first["rewrite"], out
    # Everything is warm for the second question: no start-up row.
    assert out["second_startup"] == {}, out
    assert "start-up" in out["text"], out["text"]


FIRST_LITELLM_ASK = """
import selfrag_nb as sr
from selfrag_nb.testing import LoopbackServer
with LoopbackServer() as server:
    kb = sr.KnowledgeBase.open(KB, embedder="minilm")
    rag = sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, api_key="sk-test", deadline=DEADLINE)
    t0 = time.perf_counter()
    trace = rag.ask("What is the refund window for customers?")
    elapsed = (time.perf_counter() - t0) * 1000
print(json.dumps({
    "calls": [[c.role, c.latency_ms, c.error] for c in trace.model_calls],
    "startup": getattr(trace, "startup", {}),
    "wall_ms": trace.wall_ms,
    "elapsed_ms": elapsed,
    "deadline_exceeded": trace.finish.deadline_exceeded,
    "skipped": trace.finish.skipped,
}))
"""


# slow: a fresh interpreter importing LiteLLM (about 9 s of CPU); the fast tier keeps
# the tight-deadline case of the same cold start, and the MiniLM one
@pytest.mark.slow
def test_a_first_litellm_call_records_its_latency_without_the_import(minilm_kb: Path) -> None:
    out = _cold(FIRST_LITELLM_ASK.replace("DEADLINE", "120"), minilm_kb)
    calls, startup = out["calls"], out["startup"]
    assert calls, out
    assert not any(err for _, _, err in calls), calls
    role, first_ms, _ = calls[0]
    # A loopback answer takes milliseconds; LiteLLM's import takes seconds.
    assert first_ms < 1500, f"the first {role} call recorded {first_ms:.0f} ms: {out}"
    assert "importing LiteLLM" in startup, startup
    assert startup["importing LiteLLM"] > max(ms for _, ms, _ in calls), out


FIRST_PROVIDER_RERANK = """
import selfrag_nb as sr
from selfrag_nb.testing import LoopbackServer
with LoopbackServer() as server:
    kb = sr.KnowledgeBase.open(KB, embedder="minilm")
    # grade=False: every retrieved chunk is a rerank candidate, so the endpoint is called
    rag = sr.SelfRAG(
        kb, reranker="litellm:cohere/rerank-v3.5", api_base=server.url, api_key="sk-test",
        settings=sr.Settings(grade=False),
    )
    trace = rag.ask("What is the refund window for customers?")
    paths = [r.path for r in server.requests]
rr = trace.rerank
print(json.dumps({
    "rerank_ms": rr.latency_ms if rr else None,
    "fallback": rr.fallback if rr else None,
    "startup": getattr(trace, "startup", {}),
    "paths": paths,
}))
"""


# slow: a fresh interpreter importing LiteLLM (about 9 s of CPU); the fast tier keeps
# the tight-deadline case of the same cold start, and the MiniLM one
@pytest.mark.slow
def test_a_provider_reranker_does_not_charge_the_import_to_rerank(minilm_kb: Path) -> None:
    out = _cold(FIRST_PROVIDER_RERANK, minilm_kb)
    assert out["rerank_ms"] is not None, out
    assert not out["fallback"], out
    assert any(p.endswith("/rerank") for p in out["paths"]), out
    assert out["rerank_ms"] < 1500, out
    assert "importing LiteLLM" in out["startup"], out


def test_a_tight_deadline_is_not_eaten_by_start_up(minilm_kb: Path) -> None:
    out = _cold(FIRST_LITELLM_ASK.replace("DEADLINE", "3"), minilm_kb)
    assert not out["deadline_exceeded"], out
    assert out["skipped"] == [], out
    # The question's own time stays inside the deadline (its calls answer in ms);
    # start-up came before the clock and is recorded apart.
    assert out["wall_ms"] < 3000, out
    assert out["startup"], out
    assert out["elapsed_ms"] >= out["wall_ms"] + 0.5 * sum(out["startup"].values()), out


def test_stepper_wall_time_counts_pauses_and_stages_count_compute(make_rag: Any) -> None:
    from selfrag_nb.display import text_summary
    from selfrag_nb.display.markup import fmt_ms

    step = make_rag(model=None).stepper("Hello there!")  # the offline model
    step.decide()
    time.sleep(0.4)  # a user reading the cell's output before running the next
    trace = step.run()
    compute = sum(r.latency_ms for r in trace.records)
    assert compute < 400, _stage_ms(trace)
    # wall time runs from the first stage, pauses between cells included...
    assert trace.wall_ms >= 400 + compute * 0.5, (trace.wall_ms, compute)
    # ...and the header shows the timeline's compute first, wall labelled as such.
    line = text_summary(trace)
    assert f" · {fmt_ms(compute)} · " in line, line
    assert f"wall {fmt_ms(trace.wall_ms)}, pauses included" in line, line
