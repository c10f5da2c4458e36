"""Evaluation under load: 200 questions, concurrency 16, random server faults.

    LoopbackServer (127.0.0.1, latency 5 ms) <- faulty responder (seeded):
        ~3% responder errors (HTTP 500), ~3% garbage text (parse -> repair),
        ~2% queued 429 (Retry-After 50 ms), ~1% queued truncated body,
        ~0.5% queued stalls longer than the per-call timeout
    SelfRAG(sample KB, hashing embedder, LiteLLM "openai/loopback-bench", priced)
    evaluate(200 questions, concurrency=16, on_row=sample RSS)
      checks:  no deadlock (finishes within a bound), no lost result
               (200 rows, 200 lines on disk, every id once)
      figures: RSS after 50 rows vs after 200 rows (ratio: memory flat?),
               throughput, P50/P95 latency, rows failing, error rows,
               speedup of concurrency 16 over 1 on the same 32 questions

The 200 questions are the sample set's questions repeated with new ids
(same text: the decision cache is per variant copy, and every question still
runs the whole pipeline over HTTP). Figures are ratios within one run.

    .venv/bin/python benchmarks/bench_eval.py [--questions 200] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet, questions
from selfrag_nb.eval.runner import evaluate
from selfrag_nb.llm.pricing import register_price
from selfrag_nb.pipeline import SelfRAG
from selfrag_nb.store.kb import KnowledgeBase
from selfrag_nb.testing import LoopbackServer, default_responder

MODEL = "openai/loopback-bench"


def question_set(n: int) -> QuestionSet:
    base = list(questions("sample"))
    items = []
    for i in range(n):
        q = base[i % len(base)]
        items.append(Question(**{**q.model_dump(), "id": f"{q.id}~{i}"}))
    return QuestionSet(items, name=f"sample x{n}")


class FaultyResponder:
    """Seeded random faults around the loopback server's default answers."""

    def __init__(self, server: LoopbackServer, seed: int) -> None:
        self.server = server
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}

    def _count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def __call__(self, body: dict[str, Any]) -> str:
        with self.lock:
            x = self.rng.random()
            if x < 0.03:
                self._count("500")
                raise RuntimeError("injected responder failure")
            if x < 0.06:
                self._count("garbage")
                return "<<not json at all>>"
            if x < 0.08:
                self._count("429")
                self.server.fail("429", retry_after=0.05)
            elif x < 0.09:
                self._count("truncated")
                self.server.fail("truncated")
            elif x < 0.095:
                self._count("stall")
                self.server.fail("timeout")
        return default_responder(body)


def run(n: int, concurrency: int, seed: int) -> dict[str, Any]:
    import litellm  # noqa: F401 - imported up front so the first calls do not time out on the import

    register_price(MODEL, input_per_token=1e-6, output_per_token=2e-6)
    kb = KnowledgeBase.sample(embedder="hashing")
    qs = question_set(n)
    proc = psutil.Process()
    out: dict[str, Any] = {"questions": n, "concurrency": concurrency}
    # timeout_sleep: how long a "timeout" fault stalls; longer than the 2 s per-call timeout.
    with LoopbackServer(latency=0.005, timeout_sleep=3.0) as server:
        faulty = FaultyResponder(server, seed)
        server.reply(faulty)
        rag = SelfRAG(kb, model=MODEL, api_base=server.url, api_key="sk-bench", timeout=2, deadline=30)
        # a stand-in for a hosted provider, not a one-slot local server
        rag = rag.with_settings(provider_concurrency=16)
        # Warm-up: one question so connection pools and lazy imports are ready.
        evaluate(rag, qs[:1], progress=False, out=tempfile.mkdtemp(prefix="bench-eval-warm-"))
        gc.collect()
        rss: dict[int, float] = {0: proc.memory_info().rss / 2**20}
        done = 0

        def on_row(row: EvalRow) -> None:
            nonlocal done
            done += 1
            # The loopback server records every request body (a test double's
            # log, ~5 KB each): dropped so RSS measures the evaluation only.
            with server._lock:
                server.requests.clear()
            if done in (50, 100, 150, n):
                rss[done] = proc.memory_info().rss / 2**20

        folder = Path(tempfile.mkdtemp(prefix="bench-eval-"))
        started = time.perf_counter()
        report = evaluate(rag, qs, concurrency=concurrency, out=folder, progress=False, on_row=on_row)
        seconds = time.perf_counter() - started

        lines = (folder / "rows.jsonl").read_text(encoding="utf-8").splitlines()
        ids = [json.loads(x)["id"] for x in lines]
        out["no_lost_result"] = (
            len(report.rows) == n and len(lines) == n and sorted(ids) == sorted(q.id for q in qs)
        )
        out["seconds"] = round(seconds, 2)
        out["questions_per_s"] = round(n / seconds, 2)
        s = report.overall()
        out["p50_ms"] = round(s["latency_p50_ms"], 1)
        out["p95_ms"] = round(s["latency_p95_ms"], 1)
        out["failing_rows"] = s["failures"]
        out["error_rows"] = s["errors"]
        out["model_calls"] = s["model_calls"]
        out["cost_usd"] = s["cost"]
        out["faults_injected"] = dict(faulty.counts)
        out["rss_mb"] = {k: round(v, 1) for k, v in sorted(rss.items())}
        if 50 in rss and n in rss:
            out["rss_ratio_end_vs_50"] = round(rss[n] / rss[50], 3)

        # Concurrency speedup on the same 32 questions, no faults.
        server.reply(None)
        sub = qs[:32]
        timings = {}
        for c in (1, concurrency):
            t0 = time.perf_counter()
            evaluate(rag, sub, concurrency=c, progress=False, out=tempfile.mkdtemp(prefix="bench-eval-c-"))
            timings[c] = time.perf_counter() - t0
        out["seconds_32q_c1"] = round(timings[1], 2)
        out[f"seconds_32q_c{concurrency}"] = round(timings[concurrency], 2)
        out["speedup"] = round(timings[1] / timings[concurrency], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    res = run(args.questions, args.concurrency, args.seed)
    for k, v in res.items():
        print(f"{k:>22}: {v}")
    if not res["no_lost_result"]:
        raise SystemExit("lost results")


if __name__ == "__main__":
    main()
