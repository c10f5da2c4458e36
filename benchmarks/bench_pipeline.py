"""Pipeline latency ratios against the loopback OpenAI-compatible server.

    LoopbackServer(latency=L)  <-HTTP-  LiteLLMModel("openai/loopback")  <-  SelfRAG
    tmp knowledge base: 12 small documents, hashing embedder (real LanceDB)

Measured within one run (ratios, so the machine's speed cancels out):

    grade 10 chunks       stage wall / one grade call's latency        target <= 1.3
                          (and the same with grade_concurrency=1, to show it is not sequential)
    whole question        wall / critical path of model latency        target <= 1.1
                          (critical path = per stage, the slowest call; stages run in order)
    greeting              wall / factual question's wall               target <= 0.2
                          with zero retrieval and zero judge calls
    repeated question     decide calls on the second ask                target == 0

Run:  .venv/bin/python benchmarks/bench_pipeline.py [--latency 0.2] [--grade-concurrency N]
      (default: the Settings default, grade_concurrency=None: every chunk in one wave)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# Run from a checkout without installing: the repository root holds selfrag_nb/.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import selfrag_nb as sr
from selfrag_nb.testing import LoopbackServer

TOPICS = [
    ("refunds", "Customers can request a full refund within 30 days of purchase."),
    ("invoices", "Invoices can be exported to CSV, JSON and PDF from the invoice list."),
    ("webhooks", "Webhook deliveries are retried 8 times with exponential backoff."),
    ("sso", "Single sign-on supports Okta, Azure AD and Google Workspace on Enterprise."),
    ("storage", "The Pro plan includes 50 GB of invoice storage per workspace."),
    ("api", "The API allows 100 requests per second per key before returning 429."),
    ("currency", "Exchange rates for multi-currency invoices are updated daily at 06:00 UTC."),
    ("imports", "A CSV import file can contain at most 5,000 rows."),
    ("sla", "If monthly uptime falls below 95%, customers receive a 50% service credit."),
    ("attachments", "Each invoice attachment can be up to 25 MB, five files per invoice."),
    ("mobile", "The mobile app shows invoices offline and syncs when back online."),
    ("security", "Data at rest is encrypted with AES-256; keys rotate every 90 days."),
]
FACTUAL = "How do invoice refunds, exports, imports and attachments work?"


def build_kb(root: Path) -> sr.KnowledgeBase:
    docs = root / "docs"
    docs.mkdir()
    for name, text in TOPICS:
        # Every document mentions invoices so one search returns ten of them.
        (docs / f"{name}.md").write_text(
            f"---\ntitle: {name.title()}\n---\n# {name.title()} and invoices\n\n{text} This applies to every invoice.\n",
            encoding="utf-8",
        )
    kb = sr.KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(docs)
    return kb


def scripted_model(latency: float) -> sr.ScriptedModel:
    """The same happy path as the loopback server, without HTTP or LiteLLM:
    isolates the pipeline's own overhead."""
    m = sr.ScriptedModel(latency=latency)
    m.default("decide", {"decision": "RETRIEVE", "reason": "factual"})
    m.default("rewrite", {"rewrites": []})
    m.default("grade", {"relevanceScore": 85, "isRelevant": True})
    m.default("rerank", {"ranking": []})
    m.default("assess", {"action": "ANSWER", "reason": "covered"})
    m.default("generate", {"answer": "Refunds within 30 days [1]."})
    m.default(
        "verify",
        {"supportedClaims": ["Refunds within 30 days"], "overallConfidence": 90, "recommendation": "ACCEPT"},
    )
    return m


def critical_path_ms(trace: sr.Trace) -> float:
    return sum(max(c.latency_ms for c in r.calls) for r in trace.records if r.calls)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the loopback server waits per call")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement (median reported)")
    ap.add_argument(
        "--grade-concurrency",
        type=int,
        default=None,
        help="settings.grade_concurrency (default: the Settings default None, every chunk in one wave)",
    )
    args = ap.parse_args()
    latency = args.latency

    with tempfile.TemporaryDirectory() as tmp, LoopbackServer(latency=latency) as server:
        kb = build_kb(Path(tmp))
        rag = sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, api_key="sk-loopback")
        # provider_concurrency=16: the loopback server stands in for a hosted
        # provider here (a server on this machine gets one call at a time by default)
        rag = rag.with_settings(
            per_query_k=10,
            total_cap=10,
            rewrite=False,
            grade_concurrency=args.grade_concurrency,
            provider_concurrency=16,
        )
        rag.ask("warm up: import litellm and open the tables " + FACTUAL)

        # 1. grading ten chunks, concurrent vs sequential
        grade_ratios, seq_ratios = [], []
        for _ in range(args.repeat):
            step = rag.stepper(FACTUAL)
            n = len(step.retrieve().hits)
            grades = step.grade()
            one = statistics.median(c.latency_ms for c in grades.calls)
            grade_ratios.append(grades.latency_ms / one)
        seq = rag.with_settings(grade_concurrency=1).stepper(FACTUAL)
        seq.retrieve()
        sg = seq.grade()
        seq_ratios.append(sg.latency_ms / statistics.median(c.latency_ms for c in sg.calls))

        # 2. whole question vs its critical path; 3. greeting vs factual
        walls, paths, crit_ratios, greet_walls, calls_seq = [], [], [], [], []
        greeting_calls: list[list[str]] = []
        for _ in range(args.repeat):
            t = rag.ask(FACTUAL)
            walls.append(t.wall_ms)
            paths.append(critical_path_ms(t))
            crit_ratios.append(t.wall_ms / critical_path_ms(t))
            calls_seq.append(sum(1 for r in t.records if r.calls))
            g = rag.ask("Hello!")
            greet_walls.append(g.wall_ms)
            greeting_calls.append([c.role for c in g.model_calls])
            assert g.retrieval is None, "a greeting must not retrieve"
        greet_ratio = statistics.median(greet_walls) / statistics.median(walls)

        # 4. repeated question: the decision comes from the cache
        q = "What is the capital of France?"
        first = rag.ask(q)
        second = rag.ask(q)
        decide_calls_first = sum(1 for c in first.model_calls if c.role == "decide")
        decide_calls_second = sum(1 for c in second.model_calls if c.role == "decide")

        # The same measurements with the in-process ScriptedModel (no HTTP, no LiteLLM).
        srag = sr.SelfRAG(kb, model=scripted_model(latency)).with_settings(
            per_query_k=10, total_cap=10, rewrite=False, grade_concurrency=args.grade_concurrency
        )
        srag.ask(FACTUAL)
        s_grade, s_crit = [], []
        for _ in range(args.repeat):
            step = srag.stepper(FACTUAL)
            step.retrieve()
            sg = step.grade()
            s_grade.append(sg.latency_ms / statistics.median(c.latency_ms for c in sg.calls))
            st = srag.ask(FACTUAL)
            s_crit.append(st.wall_ms / critical_path_ms(st))

    print(
        f"loopback latency per call: {latency * 1000:.0f} ms; chunks graded: {n}; "
        f"grade_concurrency={args.grade_concurrency}"
    )
    print(f"grade stage / one call: {statistics.median(grade_ratios):.2f}x (target <= 1.3)")
    print(
        f"grade stage / one call with grade_concurrency=1: {statistics.median(seq_ratios):.2f}x (sequential)"
    )
    print(
        f"question wall / critical path: {statistics.median(crit_ratios):.3f}x (target <= 1.1); "
        f"wall {statistics.median(walls):.0f} ms, critical path {statistics.median(paths):.0f} ms, "
        f"{statistics.median(calls_seq):.0f} sequential model stages"
    )
    print(
        f"greeting / factual wall: {greet_ratio:.3f}x (target <= 0.2); greeting calls {greeting_calls[0]}, "
        f"greeting wall {statistics.median(greet_walls):.0f} ms"
    )
    print(
        f"repeated question decide calls: first {decide_calls_first}, second {decide_calls_second} "
        f"(source: {second.decision.source}) (target 0)"
    )
    print(
        f"in-process ScriptedModel (no HTTP/LiteLLM): grade stage / one call {statistics.median(s_grade):.2f}x, "
        f"question wall / critical path {statistics.median(s_crit):.3f}x"
    )
    ok = (
        statistics.median(grade_ratios) <= 1.3
        and statistics.median(crit_ratios) <= 1.1
        and greet_ratio <= 0.2
        and decide_calls_second == 0
    )
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
