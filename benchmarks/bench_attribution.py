"""Attribution's cost against one verification, in model calls and wall time.

    sample knowledge base, offline model, the first N sample questions that are answered
      per question:
        one verification     the verify call on the full context (what the trace already holds)
        attribution          trace.attribution(): one verify call per kept chunk left out,
                             plus one per quoted sentence (on by default offline)
      -> calls per attribution, ms per attribution / ms per verification (median of R runs)
    then the same traces judged by a verifier that sleeps --latency s per call
    (the offline model behind a delay: a remote model's shape), to show what
    running the ablations at once buys:
        default limit (8 in flight)  vs  provider_concurrency=1 (a local server)
      -> attribution wall / one call's latency

Run:  .venv/bin/python benchmarks/bench_attribution.py [--questions 20] [--repeat 3] [--latency 0.2]

Figures are machine-dependent; compare the ratios within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

import selfrag_nb as sr
from selfrag_nb.attribution import Attribution
from selfrag_nb.attribution_run import _full_inputs, _Target, _target, _verifier
from selfrag_nb.llm.base import Completion, ModelRequest


class Delayed:
    """The offline model behind a fixed delay per call (a remote model's latency)."""

    offline = False

    def __init__(self, latency: float) -> None:
        self.name = f"offline+{latency:g}s"
        self.latency = latency
        self.inner = sr.OfflineModel()

    def complete(self, request: ModelRequest) -> Completion:
        time.sleep(self.latency)
        return self.inner.complete(request)

    async def acomplete(self, request: ModelRequest) -> Completion:
        await asyncio.sleep(self.latency)
        return self.inner.complete(request)


def _median_ms(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=20, help="answered sample questions to use")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per call of the delayed verifier")
    args = ap.parse_args()

    kb = sr.KnowledgeBase.sample()
    rag = sr.SelfRAG(kb)
    traces = []
    for q in sr.questions("sample"):
        if len(traces) >= args.questions:
            break
        trace = rag.ask(q.question, user=q.make_user(), history=list(q.history))
        if isinstance(_target(trace), _Target):
            traces.append(trace)
    print(f"{len(traces)} answered, verified questions (offline model, sample knowledge base)")

    rows = []
    for trace in traces:
        target = _target(trace)
        assert isinstance(target, _Target)
        verifier = _verifier(target, None)
        inputs, _ = _full_inputs(target, verifier)
        one = _median_ms(lambda inputs=inputs, v=verifier: v.runner.call("verify", inputs), args.repeat)
        attr = _median_ms(lambda t=trace: t.attribution(), args.repeat)
        a = trace.attribution()
        assert isinstance(a, Attribution)
        rows.append((len(a.chunks), len(a.claims), a.plan.sentence_ablations, len(a.calls), one, attr))
    chunks = sum(r[0] for r in rows)
    calls = sum(r[3] for r in rows)
    print("\nchunks claims sentences calls  verify_ms  attribution_ms  ratio")
    for c, n, s, k, one, attr in rows:
        print(f"{c:6d} {n:6d} {s:9d} {k:5d} {one:10.1f} {attr:15.1f} {attr / one:6.1f}x")
    ratios = [r[5] / r[4] for r in rows]
    print(
        f"\ntotal: {calls} calls for {chunks} kept chunks over {len(rows)} questions "
        f"({calls / len(rows):.1f} calls per attribution, {calls / chunks:.2f} per kept chunk); "
        f"attribution / one verification: median {statistics.median(ratios):.1f}x, "
        f"total {sum(r[5] for r in rows):.0f} ms vs {sum(r[4] for r in rows):.0f} ms"
    )

    print(f"\ndelayed verifier, {args.latency:g} s per call (first {min(5, len(traces))} questions):")
    delayed = Delayed(args.latency)
    for limit in (None, 1):
        drag = sr.SelfRAG(kb, models={"verify": delayed}, settings=sr.Settings(provider_concurrency=limit))
        walls = []
        n_calls = 0
        for trace in traces[:5]:
            dtrace = drag.ask(trace.question, user=trace.user, history=trace.history)
            t0 = time.perf_counter()
            a = drag.attribution(dtrace, confirm=True)
            walls.append(time.perf_counter() - t0)
            assert isinstance(a, Attribution)
            n_calls += len(a.calls)
        label = "default limit" if limit is None else f"provider_concurrency={limit}"
        per = statistics.median(walls)
        print(
            f"  {label:26s} {n_calls} calls, median attribution {per:.2f} s = "
            f"{per / args.latency:.1f}x one call's latency"
        )


if __name__ == "__main__":
    main()
