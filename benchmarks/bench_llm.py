"""LiteLLM call overhead against a raw HTTP request to the same server.

    LoopbackServer (latency 0, 127.0.0.1, keep-alive)
      raw      httpx.Client.post(/v1/chat/completions)           baseline
      litellm  litellm.acompletion (same background loop)         the client library
      model    LiteLLMModel.complete (sync bridge, retries, cost)  what the pipeline pays
      cached   CachedModel(LiteLLMModel).complete, all hits        what a repeat costs

Every variant sends the same messages and reads the same answer; medians of
N interleaved calls after warm-up, reported as ratios to the raw request (figures are
ratios within one run, so they travel between machines better than
milliseconds do). Also: seconds to ``import litellm`` in a fresh interpreter.

    .venv/bin/python benchmarks/bench_llm.py [--calls 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from selfrag_nb._sync import run_sync
from selfrag_nb.llm.base import ModelRequest
from selfrag_nb.llm.cache import CachedModel, ResponseCache
from selfrag_nb.llm.litellm_model import LiteLLMModel, _background_loop, load_litellm
from selfrag_nb.llm.schemas import DecideInputs, DecisionOut, Message
from selfrag_nb.testing import LoopbackServer

MESSAGES = [
    {"role": "system", "content": "Decide RETRIEVE or NO_RETRIEVE for the question. Answer JSON."},
    {"role": "user", "content": "What is the refund window for orders shipped abroad?"},
]
KEY = "sk-bench-not-a-real-key"


def timed(variants: dict[str, Callable[[], object]], calls: int, warmup: int = 5) -> dict[str, list[float]]:
    """Interleaved: one call of each variant per round, so load drift on a
    shared machine hits every variant alike."""
    for _ in range(warmup):
        for fn in variants.values():
            fn()
    out: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(calls):
        for name, fn in variants.items():
            started = time.perf_counter()
            fn()
            out[name].append((time.perf_counter() - started) * 1000.0)
    return out


def import_seconds() -> float:
    code = "import time; t = time.perf_counter(); import litellm; print(time.perf_counter() - t)"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    litellm = load_litellm()
    request = ModelRequest(
        role="decide",
        messages=[Message(**m) for m in MESSAGES],
        output_schema=DecisionOut,
        inputs=DecideInputs(question=MESSAGES[1]["content"]),
    )
    with LoopbackServer(latency=0.0) as server, httpx.Client(timeout=10) as client:
        body = {"model": "loopback", "messages": MESSAGES, "response_format": {"type": "json_object"}}
        headers = {"Authorization": f"Bearer {KEY}"}

        def raw() -> object:
            r = client.post(f"{server.url}/chat/completions", json=body, headers=headers)
            r.raise_for_status()
            return r.json()["choices"][0]["message"]["content"]

        def direct() -> object:
            # On the same background loop LiteLLMModel uses: LiteLLM's logging
            # worker is bound to one loop, and a second loop would thrash it.
            resp = run_sync(
                litellm.acompletion(
                    model="openai/loopback",
                    messages=MESSAGES,
                    api_base=server.url,
                    api_key=KEY,
                    response_format={"type": "json_object"},
                    num_retries=0,
                    max_retries=0,
                    timeout=10,
                ),
                loop=_background_loop(),
            )
            return resp.choices[0].message.content

        model = LiteLLMModel(
            "openai/loopback", api_base=server.url, api_key=KEY, timeout=10, provider_concurrency=16
        )

        def wrapped() -> object:
            out = model.complete(request)
            assert out.error is None, out.error
            return out.raw

        cached_model = CachedModel(model, ResponseCache())

        def cached() -> object:
            return cached_model.complete(request).raw

        results = timed(
            {
                "raw httpx": raw,
                "litellm.acompletion": direct,
                "LiteLLMModel.complete": wrapped,
                "CachedModel hit": cached,
            },
            args.calls,
        )
    base = statistics.median(results["raw httpx"])
    print(
        f"calls per variant: {args.calls}, interleaved (after 5 warm-up rounds), "
        "server latency 0, 127.0.0.1 keep-alive"
    )
    print(f"{'variant':<24}{'median ms':>12}{'p90 ms':>10}{'x raw':>9}")
    for name, samples in results.items():
        med = statistics.median(samples)
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{name:<24}{med:>12.3f}{p90:>10.3f}{med / base:>9.2f}")
    print(f"import litellm (fresh interpreter, local cost map): {import_seconds():.2f} s")


if __name__ == "__main__":
    main()
