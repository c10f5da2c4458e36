"""The Ray engines against the in-process ones, on one local Ray cluster, in one run.

    ingest: the same folder (sample_data/docs copied N times under new names),
            a fresh knowledge base each time, one embedder ("minilm" by default:
            embedding is what a cluster would spread):
              in-process                  kb.ingest(folder)
              Ray, 1 worker               kb.ingest(folder, engine="ray", workers=1)
              Ray, 2 workers              kb.ingest(folder, engine="ray", workers=2)
            -> seconds and chunks/s each, ratios to in-process; the stored chunk
               ids are checked equal across the three
    eval:   the sample questions (sample KB), the same total concurrency; the
            offline model, or with --model-latency S a LiteLLM model against the
            loopback OpenAI-compatible server answering each call after S seconds
            (a provider's round trip; the workers reach it over HTTP as they
            would a LiteLLM proxy):
              in-process                  evaluate(rag, qs, concurrency=C)
              Ray, W workers              evaluate(..., engine="ray", workers=W, concurrency=C)
            -> questions/s each and the ratio; outcomes checked equal row for row

The cluster (ray.init(num_cpus=2)) is started once, before any timing, so its
start-up is not in the figures; actors (one embedder or pipeline per worker)
are started inside each timed call, as a user pays for them.

    .venv/bin/python benchmarks/bench_ray.py [--copies 3] [--embedder minilm]
                                             [--questions 86] [--concurrency 4]
                                             [--model-latency 0.2] [--provider-concurrency 16]
                                             [--skip ingest]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from selfrag_nb.config import Settings  # noqa: E402 - after sys.path
from selfrag_nb.eval.questions import Question, QuestionSet, questions  # noqa: E402
from selfrag_nb.eval.runner import evaluate  # noqa: E402
from selfrag_nb.pipeline import SelfRAG  # noqa: E402
from selfrag_nb.store.kb import KnowledgeBase  # noqa: E402


def corpus(folder: Path, copies: int) -> Path:
    """sample_data/docs ``copies`` times, each copy under its own folder name
    (so every chunk id is new)."""
    for i in range(copies):
        shutil.copytree(ROOT / "sample_data" / "docs", folder / f"copy{i}")
    return folder


def ingest_once(docs: Path, where: Path, embedder: str, **kw: Any) -> tuple[float, int, list[str]]:
    kb = KnowledgeBase.open(where, embedder=embedder)
    t0 = time.perf_counter()
    report = kb.ingest(docs, **kw)
    seconds = time.perf_counter() - t0
    ids = sorted(kb._tbl().to_arrow().column("chunk_id").to_pylist())
    return seconds, report.chunks_added, ids


def bench_ingest(tmp: Path, copies: int, embedder: str) -> None:
    docs = corpus(tmp / "docs", copies)
    # warm: the embedder's weights and the Ray Data machinery load once, untimed
    ingest_once(ROOT / "sample_data" / "docs" / "faq.jsonl", tmp / "warm-local", embedder)
    ingest_once(ROOT / "sample_data" / "docs" / "faq.jsonl", tmp / "warm-ray", embedder, engine="ray")
    runs = {
        "in-process": {},
        "ray, 1 worker": {"engine": "ray", "workers": 1},
        "ray, 2 workers": {"engine": "ray", "workers": 2},
    }
    results = {}
    for i, (label, kw) in enumerate(runs.items()):
        results[label] = ingest_once(docs, tmp / f"kb{i}", embedder, **kw)
    base_s, n, base_ids = results["in-process"]
    print(f"\ningest: {n} chunks ({copies} copies of sample_data/docs), embedder {embedder!r}")
    print(f"{'engine':<16}{'seconds':>9}{'chunks/s':>10}{'vs in-process':>15}{'same ids':>10}")
    for label, (s, _, ids) in results.items():
        print(f"{label:<16}{s:>9.2f}{n / s:>10.1f}{base_s / s:>14.2f}x{ids == base_ids!s:>10}")


def bench_eval(tmp: Path, n: int, concurrency: int, latency: float, provider_concurrency: int) -> None:
    base = list(questions("sample"))
    qs = QuestionSet(
        [Question(**{**base[i % len(base)].model_dump(), "id": f"q{i}"}) for i in range(n)], name=f"x{n}"
    )
    kb = KnowledgeBase.sample(embedder="hashing")
    if not latency:
        _bench_eval(tmp, qs, SelfRAG(kb), concurrency, "offline model")
        return
    from selfrag_nb.testing import LoopbackServer

    with LoopbackServer(latency=latency) as server:
        rag = SelfRAG(
            kb,
            model="openai/loopback",
            api_base=server.url,
            api_key="sk-bench-not-a-key",
            settings=Settings(provider_concurrency=provider_concurrency),
        )
        label = (
            f"LiteLLM over HTTP, {latency:g} s a call, provider_concurrency {provider_concurrency} a process"
        )
        _bench_eval(tmp, qs, rag, concurrency, label)
        print(f"model calls: {len(server.requests)}, at most {server.max_in_flight} in flight at once")


def _bench_eval(tmp: Path, qs: QuestionSet, rag: SelfRAG, concurrency: int, model: str) -> None:
    n = len(qs)
    evaluate(rag, qs[:4], concurrency=2, progress=False, out=tmp / "warm")  # untimed warm-up
    timings = {}
    rows = {}
    runs: dict[str, dict[str, Any]] = {
        "in-process": {},
        "ray, 1 worker": {"engine": "ray", "workers": 1},
        "ray, 2 workers": {"engine": "ray", "workers": 2},
    }
    for label, kw in runs.items():
        t0 = time.perf_counter()
        report = evaluate(rag, qs, concurrency=concurrency, progress=False, out=tmp / label, **kw)
        timings[label] = time.perf_counter() - t0
        rows[label] = [(r.id, r.outcome) for r in report.rows]
    base_s = timings["in-process"]
    print(f"\nevaluate: {n} questions, {model}, total concurrency {concurrency}")
    print(f"{'engine':<16}{'seconds':>9}{'questions/s':>13}{'vs in-process':>15}{'same outcomes':>15}")
    for label, s in timings.items():
        same = rows[label] == rows["in-process"]
        print(f"{label:<16}{s:>9.2f}{n / s:>13.2f}{base_s / s:>14.2f}x{same!s:>15}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--questions", type=int, default=86)
    ap.add_argument("--concurrency", type=int, default=4)
    ap.add_argument(
        "--model-latency", type=float, default=0.0, help="seconds a model call takes (0: the offline model)"
    )
    ap.add_argument(
        "--provider-concurrency",
        type=int,
        default=Settings().provider_concurrency,
        help="Settings.provider_concurrency (model calls in flight in one process; each Ray actor is one)",
    )
    ap.add_argument("--skip", default="", help="comma list of parts to skip: ingest, eval")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    import ray

    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"ray.init (local, 2 CPUs): {time.perf_counter() - t0:.1f} s (not in the figures)")
    try:
        with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
            if "ingest" not in skip:
                bench_ingest(Path(tmp), args.copies, args.embedder)
            if "eval" not in skip:
                bench_eval(
                    Path(tmp), args.questions, args.concurrency, args.model_latency, args.provider_concurrency
                )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
