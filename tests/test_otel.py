"""Traces as OpenInference spans over OTLP/HTTP (selfrag_nb/otel.py, docs/observability.md),
received by a plain OTLP collector on loopback (tests/support/otlp_sink.py).

The span tree's rules come from docs/observability.md: a CHAIN root with the
question and the answer, one CHAIN span per stage record under it in flow
order, timed from the recorded latencies starting at Trace.started_at, an LLM
span per model call under its stage, a RETRIEVER span with the retrieved
documents, EVALUATOR spans for grades and claims, and regenerations of the
finish stage nested under finish. Phoenix itself: tests/test_otel_phoenix.py.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from otlp_sink import OtlpSink

import selfrag_nb as sr
from selfrag_nb.errors import ConfigurationError, InputError, InputTypeError, MissingDependencyError
from selfrag_nb.testing import LoopbackServer
from selfrag_nb.trace import Claim as TraceClaim
from selfrag_nb.trace import ClaimEvidence, Decision, Generation, ModelCall, Outcome, Support

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is part of the dev extra")

from selfrag_nb.otel import DEFAULT_ENDPOINT, resolve_endpoint, tracer_provider

Q = "What is the refund window?"
KIND = "openinference.span.kind"


@pytest.fixture(scope="module")
def kb() -> Any:
    return sr.KnowledgeBase.sample()


@pytest.fixture(scope="module")
def sample_trace(kb: Any) -> sr.Trace:
    return sr.SelfRAG(kb).ask(Q)


@pytest.fixture
def sink() -> Iterator[OtlpSink]:
    with OtlpSink() as s:
        yield s


def by_id(spans: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["span_id"]: s for s in spans}


def children(spans: list[dict[str, Any]], parent: dict[str, Any]) -> list[dict[str, Any]]:
    kids = [s for s in spans if s["parent_id"] == parent["span_id"]]
    return sorted(kids, key=lambda s: (s["start_ns"], s["end_ns"]))


def root_of(spans: list[dict[str, Any]]) -> dict[str, Any]:
    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1, [s["name"] for s in roots]
    return roots[0]


def test_sample_trace_becomes_the_documented_span_tree(sample_trace: sr.Trace, sink: OtlpSink) -> None:
    trace = sample_trace
    assert trace.outcome == "answered"
    assert trace.retrieval is not None
    assert trace.grades is not None
    result = sr.export_otel(trace, endpoint=sink.url, project="sample-tree")
    spans = sink.spans
    assert result.spans == len(spans)
    assert result.traces == 1
    assert result.endpoint == sink.url + "/v1/traces"
    assert {s["trace_id"] for s in spans} == set(result.trace_ids)
    assert {s["resource"]["openinference.project.name"] for s in spans} == {"sample-tree"}

    root = root_of(spans)
    a = root["attributes"]
    assert root["name"] == "selfrag_nb.ask"
    assert a[KIND] == "CHAIN"
    assert a["input.value"] == Q
    assert a["output.value"] == trace.answer
    assert a["selfrag.outcome"] == "answered"
    # Whether the answer answers the question: on the root and on its own stage span.
    assert trace.usefulness is not None
    assert a["selfrag.usefulness.verdict"] == trace.usefulness.verdict == "yes"
    assert a["selfrag.usefulness.score"] == trace.usefulness.score
    assert json.loads(a["metadata"])["config"]["models"] == trace.config.models
    # Real times: the root starts when the trace did and lasts its wall time.
    assert root["start_ns"] == pytest.approx(trace.started_at * 1e9, abs=1e3)
    # abs 1 µs: epoch seconds * 1e9 is a float64 of ~1.8e18, exact only to 256 ns
    assert (root["end_ns"] - root["start_ns"]) / 1e6 == pytest.approx(trace.wall_ms, abs=1e-3)

    stages = children(spans, root)
    assert [s["name"] for s in stages] == [r.stage for r in trace.records]
    assert {s["attributes"][KIND] for s in stages} == {"CHAIN"}
    at = root["start_ns"]
    for span, record in zip(stages, trace.records, strict=True):
        assert span["start_ns"] == pytest.approx(at, abs=2e3), span["name"]
        assert (span["end_ns"] - span["start_ns"]) / 1e6 == pytest.approx(record.latency_ms, abs=1e-2)
        assert json.loads(span["attributes"]["output.value"])["stage"] == record.stage
        at = span["end_ns"]
    assert at <= root["end_ns"] + 2e3

    # One LLM span per model call, under the stage that made it.
    stage_span = {s["name"]: s for s in stages}
    assert stage_span["usefulness"]["attributes"]["selfrag.usefulness.score"] == trace.usefulness.score
    llm = [s for s in spans if s["attributes"][KIND] == "LLM"]
    assert len(llm) == len(trace.model_calls)
    for record in trace.records:
        under = [s for s in children(spans, stage_span[record.stage]) if s["attributes"][KIND] == "LLM"]
        assert len(under) == len(record.calls), record.stage
        for call in record.calls:
            match = [
                s
                for s in under
                if s["attributes"]["output.value"] == call.raw
                and s["attributes"]["selfrag.role"] == call.role
                # two grade calls can answer alike: the input (each chunk's own) tells them apart
                and s["attributes"].get(f"llm.input_messages.{len(call.messages) - 1}.message.content")
                == call.messages[-1]["content"]
            ]
            assert match, (record.stage, call.raw)
            la = match[0]["attributes"]
            assert la["llm.model_name"] == call.model == "offline"
            assert la["llm.token_count.prompt"] == call.tokens_in
            assert la["llm.token_count.completion"] == call.tokens_out
            assert la["llm.token_count.total"] == (call.tokens_in or 0) + (call.tokens_out or 0)
            assert la["llm.input_messages.0.message.role"] == call.messages[0]["role"]
            assert la["llm.input_messages.0.message.content"] == call.messages[0]["content"]
            assert la["llm.output_messages.0.message.content"] == call.raw
            assert la.get("llm.cost.total") == call.cost
            assert match[0]["start_ns"] >= stage_span[record.stage]["start_ns"]

    # The retriever span carries every retrieved document.
    retrievers = [s for s in spans if s["attributes"][KIND] == "RETRIEVER"]
    assert len(retrievers) == 1
    assert retrievers[0]["parent_id"] == stage_span["retrieve"]["span_id"]
    ra = retrievers[0]["attributes"]
    for i, hit in enumerate(trace.retrieval.hits):
        doc = f"retrieval.documents.{i}.document."
        assert ra[doc + "id"] == hit.chunk_id
        assert ra[doc + "content"] == hit.text
        assert ra[doc + "score"] == pytest.approx(hit.score)
        assert json.loads(ra[doc + "metadata"])["source"] == hit.source
    assert f"retrieval.documents.{len(trace.retrieval.hits)}.document.id" not in ra

    # The judgements: one EVALUATOR span per graded chunk and per verified claim.
    graded = [s for s in children(spans, stage_span["grade"]) if s["attributes"][KIND] == "EVALUATOR"]
    assert sorted(
        (s["attributes"]["selfrag.chunk_id"], s["attributes"]["selfrag.score"]) for s in graded
    ) == sorted((g.chunk_id, g.score) for g in trace.grades.items)
    support = trace.support
    assert support is not None
    claims = [s for s in children(spans, stage_span["verify"]) if s["attributes"][KIND] == "EVALUATOR"]
    assert [s["attributes"]["input.value"] for s in sorted(claims, key=lambda s: s["name"])] == [
        c.text for c in support.claims
    ]
    assert {s["attributes"]["selfrag.verdict"] for s in claims} <= {"supported", "partial", "unsupported"}
    assert stage_span["verify"]["attributes"]["selfrag.recommendation"] == support.recommendation
    rerankers = [s for s in spans if s["attributes"][KIND] == "RERANKER"]
    assert len(rerankers) == (1 if trace.rerank else 0)


def _regenerated_trace() -> sr.Trace:
    claim = TraceClaim(text="x", verdict="unsupported", evidence=[ClaimEvidence(chunk_id="c1", span="y")])
    return sr.Trace(
        question="q?",
        started_at=1_700_000_000.0,
        wall_ms=100.0,
        records=[
            Decision(retrieve=False, reason="r", source="rule", latency_ms=10.0),
            Generation(answer="first", mode="direct", latency_ms=20.0),
            Support(claims=[claim], recommendation="REGENERATE", latency_ms=30.0),
            Generation(answer="second", mode="strict", attempt=2, latency_ms=15.0),
            Support(claims=[], recommendation="ACCEPT", attempt=2, latency_ms=5.0),
            Outcome(outcome="regenerated", answer="second", latency_ms=25.0),
        ],
    )


def test_regeneration_records_nest_under_finish(sink: OtlpSink) -> None:
    trace = _regenerated_trace()
    sr.export_otel([trace], endpoint=sink.url)
    spans = sink.spans
    root = root_of(spans)
    assert [s["name"] for s in children(spans, root)] == ["decide", "generate", "verify", "finish"]
    finish = children(spans, root)[-1]
    nested = [s for s in children(spans, finish) if s["attributes"][KIND] == "CHAIN"]
    assert [s["name"] for s in nested] == ["generate", "verify"]
    assert json.loads(nested[0]["attributes"]["output.value"])["answer"] == "second"
    t0 = int(1_700_000_000.0 * 1e9)
    ms = 1_000_000
    # decide 0-10, generate 10-30, verify 30-60, finish 60-85 with its regeneration at 60-75, 75-80.
    assert finish["start_ns"] == pytest.approx(t0 + 60 * ms, abs=2e3)
    assert finish["end_ns"] == pytest.approx(t0 + 85 * ms, abs=2e3)
    assert nested[0]["start_ns"] == pytest.approx(t0 + 60 * ms, abs=2e3)
    assert nested[1]["end_ns"] == pytest.approx(t0 + 80 * ms, abs=2e3)
    assert root["end_ns"] == pytest.approx(t0 + 100 * ms, abs=2e3)
    assert root["attributes"]["output.value"] == "second"


def test_a_failed_call_is_an_error_span_and_unknown_cost_is_left_out(sink: OtlpSink) -> None:
    failed = ModelCall(
        role="decide",
        model="openai/gpt-x",
        messages=[{"role": "user", "content": "q?"}],
        parse_status="error",
        error="ProviderError: 503 from the provider",
        fallback="retrieve (the conservative default)",
        latency_ms=4.0,
    )
    ok = ModelCall(role="generate", model="openai/gpt-x", raw="fine", tokens_in=7, tokens_out=None, cost=None)
    trace = sr.Trace(
        question="q?",
        records=[
            Decision(retrieve=False, reason="model failed", source="model", calls=[failed], latency_ms=5.0),
            Generation(answer="fine", mode="direct", calls=[ok], latency_ms=3.0),
            Outcome(outcome="direct", answer="fine", latency_ms=1.0),
        ],
    )
    sr.export_otel(trace, endpoint=sink.url)
    llm = {s["attributes"]["selfrag.role"]: s for s in sink.spans if s["attributes"][KIND] == "LLM"}
    status_error, status_ok = 2, 1  # OTLP Status.StatusCode
    assert llm["decide"]["status"] == status_error
    assert llm["decide"]["attributes"]["selfrag.error"] == failed.error
    assert llm["decide"]["attributes"]["selfrag.fallback"] == failed.fallback
    assert "llm.token_count.prompt" not in llm["decide"]["attributes"]
    assert llm["generate"]["status"] == status_ok
    assert llm["generate"]["attributes"]["llm.token_count.prompt"] == 7
    assert llm["generate"]["attributes"]["llm.token_count.total"] == 7
    assert "llm.token_count.completion" not in llm["generate"]["attributes"]
    assert "llm.cost.total" not in llm["generate"]["attributes"]  # unknown price: no invented zero


def test_several_traces_in_one_export_are_separate_trees(sample_trace: sr.Trace, sink: OtlpSink) -> None:
    result = sr.export_otel([sample_trace, _regenerated_trace()], endpoint=sink.url)
    assert result.traces == 2
    assert len(set(result.trace_ids)) == 2
    for trace_id in result.trace_ids:
        root_of([s for s in sink.spans if s["trace_id"] == trace_id])


def test_live_export_with_a_tracer_provider(kb: Any, sink: OtlpSink) -> None:
    provider = tracer_provider(endpoint=sink.url, project="live-provider")
    try:
        rag = sr.SelfRAG(kb, otel=provider)
        assert rag.with_settings(rewrite=False).otel_provider is provider
        trace = rag.ask(Q)
        assert provider.force_flush()
    finally:
        provider.shutdown()
    root = root_of(sink.spans)
    assert root["attributes"]["output.value"] == trace.answer
    assert root["resource"]["openinference.project.name"] == "live-provider"
    assert [s["name"] for s in children(sink.spans, root)] == [r.stage for r in trace.records]


def test_otel_true_reads_the_standard_variables(
    kb: Any, sink: OtlpSink, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.url)
    monkeypatch.setenv("PHOENIX_PROJECT_NAME", "from-env")
    rag = sr.SelfRAG(kb, otel=True)
    assert rag.otel_provider is not None
    try:
        trace = rag.ask("hello")
        assert rag.otel_provider.force_flush()
    finally:
        rag.otel_provider.shutdown()
    root = root_of(sink.spans)
    assert root["attributes"]["input.value"] == "hello"
    assert root["attributes"]["selfrag.outcome"] == trace.outcome
    assert root["resource"]["openinference.project.name"] == "from-env"


def test_secrets_never_reach_a_span(kb: Any, sink: OtlpSink) -> None:
    secret = "sk-SECRET-otel-4f1c9a"
    header_secret = "Bearer hdr-SECRET-77e2"
    provider = tracer_provider(endpoint=sink.url, headers={"Authorization": header_secret})
    try:
        with LoopbackServer() as server:
            rag = sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, api_key=secret, otel=provider)
            trace = rag.ask(Q)
        assert provider.force_flush()
    finally:
        provider.shutdown()
    assert trace.model_calls
    assert not trace.offline
    assert sink.spans
    wire = json.dumps(sink.spans)
    assert secret not in wire
    assert "SECRET" not in wire
    # The header reached the collector, which is where it belongs.
    assert {h.get("authorization") for h in sink.headers} == {header_secret}
    # The same through the after-the-fact export.
    before = len(sink.spans)
    sr.export_otel(trace, endpoint=sink.url, headers={"Authorization": header_secret})
    assert len(sink.spans) > before
    assert "SECRET" not in json.dumps(sink.spans)


def test_a_collector_that_refuses_is_a_clear_error(sample_trace: sr.Trace) -> None:
    with OtlpSink(status=400) as refusing:
        with pytest.raises(ConfigurationError, match="did not accept") as info:
            sr.export_otel(sample_trace, endpoint=refusing.url)
        assert refusing.url in str(info.value)


def test_bad_arguments_fail_closed(sample_trace: sr.Trace, kb: Any) -> None:
    with pytest.raises(InputError, match="http"):
        sr.export_otel(sample_trace, endpoint="ftp://127.0.0.1/v1/traces")
    with pytest.raises(InputError, match="project"):
        sr.export_otel(sample_trace, endpoint="http://127.0.0.1:9", project=" ")
    with pytest.raises(InputTypeError, match="Trace"):
        sr.export_otel([sample_trace, "not a trace"], endpoint="http://127.0.0.1:9")  # type: ignore[list-item]
    with pytest.raises(InputTypeError, match="headers") as info:
        sr.export_otel(
            sample_trace,
            endpoint="http://127.0.0.1:9",
            headers={"Authorization": b"sk-bytes-secret"},  # type: ignore[dict-item]
        )
    assert "sk-bytes-secret" not in str(info.value)  # header values are credentials: never echoed
    with pytest.raises(InputTypeError, match="otel must be"):
        sr.SelfRAG(kb, otel="yes")  # type: ignore[arg-type]


def test_endpoint_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    assert resolve_endpoint() == DEFAULT_ENDPOINT
    assert resolve_endpoint("http://h:4318") == "http://h:4318/v1/traces"
    assert resolve_endpoint("http://h:4318/") == "http://h:4318/v1/traces"
    assert resolve_endpoint("https://h/custom/path") == "https://h/custom/path"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318/")
    assert resolve_endpoint() == "http://base:4318/v1/traces"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://only-traces:1/x")
    assert resolve_endpoint() == "http://only-traces:1/x"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "not a url")
    with pytest.raises(InputError, match="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        resolve_endpoint()


def test_missing_packages_name_the_extra(
    sample_trace: sr.Trace, kb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules makes the import fail as if the package were absent.
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'selfrag-nb\[otel\]'"):
        sr.export_otel(sample_trace)
    with pytest.raises(MissingDependencyError, match=r"pip install 'selfrag-nb\[otel\]'"):
        sr.SelfRAG(kb, otel=True)
    assert sr.SelfRAG(kb).otel_provider is None  # off by default: nothing to import
