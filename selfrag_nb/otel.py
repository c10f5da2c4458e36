"""Traces as OpenTelemetry spans with OpenInference attributes (Phoenix or any OTLP collector).

    export_otel(traces, endpoint, project, headers)          after the fact, one POST
    SelfRAG(kb, otel=True | TracerProvider)                  live: each question when it finishes
      (otel=True: tracer_provider(), a batching provider for OTEL_EXPORTER_OTLP_ENDPOINT)
      -> emit(trace, tracer)                                  one span tree per Trace
           CHAIN      selfrag_nb.ask    input: question, output: answer, selfrag.outcome
             CHAIN      <stage>          one per record, flow order, output: the record as JSON
               LLM        llm.<role>       one per model call: model, messages, tokens, cost
               RETRIEVER  retrieve.search  retrieval.documents.<i>.document.id/content/score/metadata
               RERANKER   rerank.reranker  input and output documents, reranker.model_name
               EVALUATOR  grade <chunk>    one per graded chunk: score, band, relevant
               EVALUATOR  verify claim <i> one per claim: verdict, evidence, citation error
             CHAIN      finish           regenerations run by finish (generate, verify) nest here
      -> OTLP/HTTP (opentelemetry-exporter-otlp-proto-http), protobuf

Span times come from the Trace: the root starts at ``Trace.started_at`` and
each stage follows the previous one for its recorded ``latency_ms`` (stages
run one after another). Model calls inside a stage follow each other when
their latencies fit the stage, else they start together (grading runs them
in parallel); a graded chunk's span lasts its own recorded latency.

What enters an attribute: the question, answers, messages sent to the model,
its raw output, document text and metadata (data, not secrets), the config
snapshot. API keys and auth headers never enter a Trace, so they cannot
enter a span; the exporter's ``headers`` go to the collector only.

Credentials in the endpoint URL (``http://user:PASS@host``, ``?api_key=...``,
``?token=...``) go to the collector too, and nowhere else: errors, the
``OtelExport`` report and log lines show the URL through
``selfrag_nb.llm.redact.scrub_url`` (``***`` in their place), and the
OpenTelemetry exporter's own loggers (which name the URL when a request fails)
get a filter that does the same (``_scrub_exporter_logs``).

The OpenTelemetry packages are an extra (``pip install 'selfrag-nb[otel]'``)
imported here only, never by ``import selfrag_nb``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from selfrag_nb.errors import ConfigurationError, InputError, InputTypeError, MissingDependencyError
from selfrag_nb.flow import STAGES
from selfrag_nb.llm.redact import scrub_url, scrub_urls
from selfrag_nb.trace import (
    Grades,
    ModelCall,
    Record,
    Rerank,
    Retrieval,
    Support,
    Trace,
    Usefulness,
)

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_PROJECT",
    "OtelExport",
    "emit",
    "emit_live",
    "export_otel",
    "live_provider",
    "resolve_endpoint",
    "tracer_provider",
]

_log = logging.getLogger(__name__)

#: Where spans go when neither the argument nor the environment names a collector:
#: a Phoenix server on this machine (``phoenix serve``) with its default port.
DEFAULT_ENDPOINT = "http://127.0.0.1:6006/v1/traces"
#: The Phoenix project (resource attribute ``openinference.project.name``) by default.
DEFAULT_PROJECT = "selfrag-nb"
#: The OTLP/HTTP path of traces, appended to a base URL (the OTLP specification's rule).
_TRACES_PATH = "/v1/traces"
_INSTALL = "pip install 'selfrag-nb[otel]'"
#: Loggers that print the collector's URL (the exporter's, its HTTP client's and
#: urllib3's retry warnings): each gets a filter scrubbing secrets from URLs.
_EXPORTER_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http",
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.proto.http._common",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.sdk.trace.export",
    "urllib3.connectionpool",
)
_JSON = "application/json"
_TEXT = "text/plain"


def _require() -> None:
    try:
        import openinference.semconv.trace  # noqa: F401
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            f"Exporting traces to OpenTelemetry needs the otel extra: {_INSTALL} (missing module: {exc.name})"
        ) from exc
    _scrub_exporter_logs()


class _ScrubURLs(logging.Filter):
    """Rewrites a record's message (and its traceback text) with every URL
    through scrub_url: the exporter logs the collector's URL, credentials
    and all, when a request fails."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's problem, not ours
            return True
        clean = scrub_urls(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = scrub_urls(logging.Formatter().formatException(record.exc_info))
        elif record.exc_text:
            record.exc_text = scrub_urls(record.exc_text)
        return True


_SCRUB_FILTER = _ScrubURLs()


def _scrub_exporter_logs() -> None:
    """Put the URL-scrubbing filter on the exporter's loggers (once each)."""
    for name in _EXPORTER_LOGGERS:
        logger = logging.getLogger(name)
        if _SCRUB_FILTER not in logger.filters:
            logger.addFilter(_SCRUB_FILTER)


class OtelExport(BaseModel):
    """What ``export_otel`` sent: to where, into which project, how many traces and spans.
    ``endpoint`` is shown as ``scrub_url`` shows it (passwords and secret
    query parameters as ``***``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    endpoint: str
    project: str
    traces: int
    spans: int
    #: OpenTelemetry trace ids (32 hex digits), one per Trace, in the order given.
    trace_ids: list[str]


# -- where to -----------------------------------------------------------------
def resolve_endpoint(endpoint: str | None = None) -> str:
    """The OTLP/HTTP traces URL: ``endpoint`` if given (a bare ``http://host:port``
    gets ``/v1/traces``), else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as is, else
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` + ``/v1/traces``, else :data:`DEFAULT_ENDPOINT`."""
    if endpoint is None:
        traces_env = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
        base_env = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
        if traces_env:
            return _checked_url(traces_env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        if base_env:
            return _checked_url(base_env, "OTEL_EXPORTER_OTLP_ENDPOINT").rstrip("/") + _TRACES_PATH
        return DEFAULT_ENDPOINT
    if not isinstance(endpoint, str):
        raise InputTypeError(f"endpoint must be a URL string, got {type(endpoint).__name__}")
    url = _checked_url(endpoint.strip(), "endpoint")
    if urlsplit(url).path in ("", "/"):
        url = url.rstrip("/") + _TRACES_PATH
    return url


def _checked_url(url: str, what: str) -> str:
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # "http://[::1": an unbalanced IPv6 bracket
        ok = False
    if not ok:
        raise InputError(
            f"{what} must be an http(s) URL of an OTLP/HTTP collector such as "
            f"{DEFAULT_ENDPOINT!r}, got {scrub_url(url)!r}"
        )
    return url


def _project(project: str | None) -> str:
    if project is None:
        project = os.environ.get("PHOENIX_PROJECT_NAME", "").strip() or DEFAULT_PROJECT
    if not isinstance(project, str) or not project.strip():
        raise InputError(f"project must be a non-blank name, got {project!r}")
    return project


def tracer_provider(
    endpoint: str | None = None, project: str | None = None, headers: Mapping[str, str] | None = None
) -> TracerProvider:
    """A TracerProvider that batches spans to an OTLP/HTTP collector, for
    ``SelfRAG(kb, otel=tracer_provider(...))``. ``project`` (else the
    ``PHOENIX_PROJECT_NAME`` variable, else ``selfrag-nb``) is the resource
    attribute Phoenix files the traces under."""
    _require()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=_resource(_project(project)))
    exporter = OTLPSpanExporter(endpoint=resolve_endpoint(endpoint), headers=_headers(headers))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _headers(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    if headers is None:
        return None  # the exporter reads OTEL_EXPORTER_OTLP_HEADERS itself
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        # Never echo the values: they are usually credentials.
        raise InputTypeError("headers must be a mapping of header name to string value")
    return dict(headers)


def _resource(project: str) -> Any:
    from openinference.semconv.resource import ResourceAttributes
    from opentelemetry.sdk.resources import Resource

    import selfrag_nb

    return Resource.create(
        {
            ResourceAttributes.PROJECT_NAME: project,
            "service.name": "selfrag-nb",
            "service.version": selfrag_nb.__version__,
        }
    )


# -- after the fact -------------------------------------------------------------
def export_otel(
    traces: Trace | Iterable[Trace],
    *,
    endpoint: str | None = None,
    project: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> OtelExport:
    """Send Traces to an OTLP/HTTP collector (Phoenix: ``http://127.0.0.1:6006``)
    as OpenInference span trees, in one request. Raises ConfigurationError when
    the collector does not accept them (unreachable, or an HTTP error)."""
    _require()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    batch = [traces] if isinstance(traces, Trace) else list(_traces(traces))
    url = resolve_endpoint(endpoint)
    name = _project(project)
    exporter = OTLPSpanExporter(endpoint=url, headers=_headers(headers))
    # Spans are collected in memory first, then sent in one request whose
    # result is known here (a batch processor would send them later, silently).
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=_resource(name))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("selfrag_nb")
    trace_ids = [f"{emit(t, tracer):032x}" for t in batch]
    spans = memory.get_finished_spans()
    try:
        result = exporter.export(spans) if spans else SpanExportResult.SUCCESS
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]  # untyped in the exporter package
        provider.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise ConfigurationError(
            f"the OTLP collector at {scrub_url(url)} did not accept {len(spans)} span(s) "
            "(is it running, and is this its OTLP/HTTP traces URL? the log of "
            "opentelemetry.exporter.otlp says why)"
        )
    return OtelExport(
        endpoint=scrub_url(url), project=name, traces=len(batch), spans=len(spans), trace_ids=trace_ids
    )


def _traces(items: Iterable[Any]) -> Iterator[Trace]:
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InputTypeError(f"traces must be a Trace or an iterable of Traces, got {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, Trace):
            raise InputTypeError(f"traces[{i}] must be a selfrag_nb Trace, got {type(item).__name__}")
        yield item


# -- live (SelfRAG(otel=...)) ----------------------------------------------------
def live_provider(otel: object) -> TracerProvider | None:
    """``SelfRAG``'s ``otel`` argument as a TracerProvider (None: off)."""
    if otel is None or otel is False:
        return None
    _require()
    from opentelemetry.sdk.trace import TracerProvider

    if otel is True:
        return tracer_provider()
    if isinstance(otel, TracerProvider):
        return otel
    raise InputTypeError(
        "otel must be True (export to OTEL_EXPORTER_OTLP_ENDPOINT, default "
        f"{DEFAULT_ENDPOINT}), False, or an opentelemetry.sdk.trace.TracerProvider; "
        f"got {type(otel).__name__}"
    )


def emit_live(trace: Trace, provider: TracerProvider) -> None:
    """Emit a finished question's spans through the provider; a collector
    problem is logged, never raised into the question that already ran."""
    try:
        emit(trace, provider.get_tracer("selfrag_nb"))
    except Exception:  # noqa: BLE001 - observability must not break answering
        _log.warning("could not emit the trace as OpenTelemetry spans", exc_info=True)


# -- the span tree ----------------------------------------------------------------
def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


@dataclass
class _Clock:
    """Start/end (seconds since the epoch) of a span, from recorded durations."""

    start: float
    end: float


def emit(trace: Trace, tracer: Tracer) -> int:
    """Write one Trace as a span tree through ``tracer``; the OpenTelemetry trace id."""
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import SpanAttributes as A
    from opentelemetry.trace import Status, StatusCode

    top, nested = _split(trace.records)
    t0 = trace.started_at
    stage_ms = sum(r.latency_ms for r in top)
    root_clock = _Clock(t0, t0 + max(trace.wall_ms, stage_ms) / 1000)
    attrs: dict[str, Any] = {
        A.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value,
        A.INPUT_VALUE: trace.question,
        A.INPUT_MIME_TYPE: _TEXT,
        A.USER_ID: trace.user.id,
        A.METADATA: json.dumps(_metadata(trace), ensure_ascii=False, default=str),
        "selfrag.outcome": trace.outcome or "",
        "selfrag.offline": trace.offline,
    }
    if trace.usefulness is not None:
        # Does the delivered answer answer the question: filterable on the root.
        attrs["selfrag.usefulness.verdict"] = trace.usefulness.verdict
        attrs["selfrag.usefulness.score"] = trace.usefulness.score
    if trace.answer is not None:
        attrs[A.OUTPUT_VALUE] = trace.answer
        attrs[A.OUTPUT_MIME_TYPE] = _TEXT
    root = tracer.start_span("selfrag_nb.ask", attributes=attrs, start_time=_ns(root_clock.start))
    if trace.finish is not None:
        root.set_status(Status(StatusCode.OK))
    clock = t0
    for record in top:
        stage_clock = _Clock(clock, clock + record.latency_ms / 1000)
        inner = nested if record.stage == "finish" else []
        _stage_span(tracer, root, record, stage_clock, inner)
        clock = stage_clock.end
    root.end(end_time=_ns(root_clock.end))
    return int(root.get_span_context().trace_id)


def _split(records: Sequence[Record]) -> tuple[list[Record], list[Record]]:
    """Stage records in flow order, and the records the finish stage appended
    itself (a regeneration: a stage earlier in the flow after a later one)."""
    top: list[Record] = []
    nested: list[Record] = []
    furthest = -1
    for rec in records:
        idx = STAGES.index(rec.stage)
        if rec.stage != "finish" and (nested or idx < furthest):
            nested.append(rec)
            continue
        furthest = max(furthest, idx)
        top.append(rec)
    return top, nested


def _metadata(trace: Trace) -> dict[str, Any]:
    return {
        "config": trace.config.model_dump(mode="json"),
        "user": trace.user.model_dump(mode="json"),
        "history_turns": len(trace.history),
        "wall_ms": trace.wall_ms,
        # Token counts and cost live on the LLM spans (collectors add them up
        # over the tree); the totals here are for reading the root alone.
        "totals": trace.totals.model_dump(mode="json"),
    }


def _context(parent: Span) -> Any:
    from opentelemetry.trace import set_span_in_context

    return set_span_in_context(parent)


def _stage_span(tracer: Tracer, parent: Span, record: Record, clock: _Clock, nested: list[Record]) -> None:
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import SpanAttributes as A

    attrs: dict[str, Any] = {
        A.OPENINFERENCE_SPAN_KIND: Kind.CHAIN.value,
        A.OUTPUT_VALUE: record.model_dump_json(exclude={"calls"}),
        A.OUTPUT_MIME_TYPE: _JSON,
        "selfrag.stage": record.stage,
        "selfrag.latency_ms": record.latency_ms,
    }
    if isinstance(record, Usefulness):
        attrs["selfrag.usefulness.verdict"] = record.verdict
        attrs["selfrag.usefulness.score"] = record.score
    if record.fallbacks:
        attrs["selfrag.fallbacks"] = [f"{f.what}: {f.reason}" for f in record.fallbacks]
    span = tracer.start_span(
        record.stage, context=_context(parent), attributes=attrs, start_time=_ns(clock.start)
    )
    _call_spans(tracer, span, record.calls, clock)
    if isinstance(record, Retrieval):
        _retriever_span(tracer, span, record, clock)
    elif isinstance(record, Rerank):
        _reranker_span(tracer, span, record, clock)
    elif isinstance(record, Grades):
        _grade_spans(tracer, span, record, clock)
    elif isinstance(record, Support):
        _claim_spans(tracer, span, record, clock)
    end = clock.end
    at = clock.start
    for rec in nested:  # finish's own regeneration records, one after another
        inner = _Clock(at, at + rec.latency_ms / 1000)
        _stage_span(tracer, span, rec, inner, [])
        at = inner.end
    span.end(end_time=_ns(max(end, at)))


def _call_spans(tracer: Tracer, parent: Span, calls: list[ModelCall], clock: _Clock) -> None:
    sequential = sum(c.latency_ms for c in calls) / 1000 <= (clock.end - clock.start) + 1e-6
    at = clock.start
    for call in calls:
        start = at if sequential else clock.start
        _llm_span(tracer, parent, call, _Clock(start, start + call.latency_ms / 1000))
        at = start + call.latency_ms / 1000


def _llm_span(tracer: Tracer, parent: Span, call: ModelCall, clock: _Clock) -> None:
    from openinference.semconv.trace import MessageAttributes as M
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import SpanAttributes as A
    from opentelemetry.trace import Status, StatusCode

    attrs: dict[str, Any] = {
        A.OPENINFERENCE_SPAN_KIND: Kind.LLM.value,
        A.LLM_MODEL_NAME: call.model,
        A.INPUT_VALUE: json.dumps(call.messages, ensure_ascii=False),
        A.INPUT_MIME_TYPE: _JSON,
        A.OUTPUT_VALUE: call.raw,
        A.OUTPUT_MIME_TYPE: _TEXT,
        f"{A.LLM_OUTPUT_MESSAGES}.0.{M.MESSAGE_ROLE}": "assistant",
        f"{A.LLM_OUTPUT_MESSAGES}.0.{M.MESSAGE_CONTENT}": call.raw,
        "selfrag.role": call.role,
        "selfrag.offline": call.offline,
        "selfrag.parse_status": call.parse_status,
        "selfrag.cached": call.cached,
        "selfrag.retries": call.retries,
        "selfrag.latency_ms": call.latency_ms,
    }
    if call.prompt_hash:
        attrs[A.LLM_PROMPT_TEMPLATE_VERSION] = call.prompt_hash
    for i, message in enumerate(call.messages):
        attrs[f"{A.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_ROLE}"] = message.get("role", "")
        attrs[f"{A.LLM_INPUT_MESSAGES}.{i}.{M.MESSAGE_CONTENT}"] = message.get("content", "")
    if call.tokens_in is not None:
        attrs[A.LLM_TOKEN_COUNT_PROMPT] = call.tokens_in
    if call.tokens_out is not None:
        attrs[A.LLM_TOKEN_COUNT_COMPLETION] = call.tokens_out
    if call.tokens_in is not None or call.tokens_out is not None:
        attrs[A.LLM_TOKEN_COUNT_TOTAL] = (call.tokens_in or 0) + (call.tokens_out or 0)
    if call.cost is not None:
        attrs[A.LLM_COST_TOTAL] = call.cost
    for key, value in (
        ("selfrag.parse_error", call.parse_error),
        ("selfrag.fallback", call.fallback),
        ("selfrag.error", call.error),
    ):
        if value:
            attrs[key] = value
    if call.injection_flags:
        attrs["selfrag.injection_flags"] = list(call.injection_flags)
    span = tracer.start_span(
        f"llm.{call.role}", context=_context(parent), attributes=attrs, start_time=_ns(clock.start)
    )
    span.set_status(Status(StatusCode.ERROR, call.error) if call.error else Status(StatusCode.OK))
    span.end(end_time=_ns(clock.end))


def _retriever_span(tracer: Tracer, parent: Span, record: Retrieval, clock: _Clock) -> None:
    from openinference.semconv.trace import DocumentAttributes as D
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import SpanAttributes as A

    queries = [q.query for q in record.per_query]
    attrs: dict[str, Any] = {
        A.OPENINFERENCE_SPAN_KIND: Kind.RETRIEVER.value,
        A.INPUT_VALUE: json.dumps(queries, ensure_ascii=False) if queries else "",
        A.INPUT_MIME_TYPE: _JSON,
        "selfrag.mode": record.mode,
        "selfrag.access_filter": record.access_filter,
        "selfrag.per_query_k": record.per_query_k,
    }
    if record.kb_version is not None:
        attrs["selfrag.kb_version"] = record.kb_version
    for i, hit in enumerate(record.hits):
        meta = {
            "source": hit.source,
            "doc_id": hit.doc_id,
            "title": hit.title,
            "heading": hit.heading,
            "rank": hit.rank,
            "scores": hit.scores,
            **hit.metadata,
        }
        doc = f"{A.RETRIEVAL_DOCUMENTS}.{i}."
        attrs[doc + D.DOCUMENT_ID] = hit.chunk_id
        attrs[doc + D.DOCUMENT_CONTENT] = hit.text
        attrs[doc + D.DOCUMENT_SCORE] = float(hit.score)
        # One JSON string: OpenTelemetry attributes cannot nest (Phoenix unfolds it).
        attrs[doc + D.DOCUMENT_METADATA] = json.dumps(meta, ensure_ascii=False, default=str)
    span = tracer.start_span(
        "retrieve.search", context=_context(parent), attributes=attrs, start_time=_ns(clock.start)
    )
    span.end(end_time=_ns(clock.end))


def _reranker_span(tracer: Tracer, parent: Span, record: Rerank, clock: _Clock) -> None:
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import RerankerAttributes
    from openinference.semconv.trace import SpanAttributes as A

    attrs: dict[str, Any] = {
        A.OPENINFERENCE_SPAN_KIND: Kind.RERANKER.value,
        RerankerAttributes.RERANKER_MODEL_NAME: record.reranker,
        RerankerAttributes.RERANKER_TOP_K: record.keep,
    }
    for i, chunk_id in enumerate(record.before):
        attrs[f"{RerankerAttributes.RERANKER_INPUT_DOCUMENTS}.{i}.document.id"] = chunk_id
    for i, chunk_id in enumerate(record.after):
        attrs[f"{RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS}.{i}.document.id"] = chunk_id
        if chunk_id in record.scores:
            attrs[f"{RerankerAttributes.RERANKER_OUTPUT_DOCUMENTS}.{i}.document.score"] = float(
                record.scores[chunk_id]
            )
    if record.fallback:
        attrs["selfrag.fallback"] = record.fallback
    span = tracer.start_span(
        "rerank.reranker", context=_context(parent), attributes=attrs, start_time=_ns(clock.start)
    )
    span.end(end_time=_ns(clock.end))


def _grade_spans(tracer: Tracer, parent: Span, record: Grades, clock: _Clock) -> None:
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import SpanAttributes as A

    for grade in record.items:
        attrs: dict[str, Any] = {
            A.OPENINFERENCE_SPAN_KIND: Kind.EVALUATOR.value,
            A.INPUT_VALUE: grade.chunk_id,
            A.INPUT_MIME_TYPE: _TEXT,
            A.OUTPUT_VALUE: grade.model_dump_json(),
            A.OUTPUT_MIME_TYPE: _JSON,
            "selfrag.chunk_id": grade.chunk_id,
            "selfrag.source": grade.source,
            "selfrag.score": grade.score,
            "selfrag.relevant": grade.relevant,
            "selfrag.band": grade.band,
            "selfrag.parse_status": grade.parse_status,
            "selfrag.kept": grade.chunk_id in record.kept,
        }
        end = min(clock.start + grade.latency_ms / 1000, clock.end) if grade.latency_ms else clock.end
        span = tracer.start_span(
            f"grade {grade.chunk_id}", context=_context(parent), attributes=attrs, start_time=_ns(clock.start)
        )
        span.end(end_time=_ns(max(end, clock.start)))


def _claim_spans(tracer: Tracer, parent: Span, record: Support, clock: _Clock) -> None:
    from openinference.semconv.trace import OpenInferenceSpanKindValues as Kind
    from openinference.semconv.trace import SpanAttributes as A

    parent.set_attribute("selfrag.recommendation", record.recommendation)
    parent.set_attribute("selfrag.overall_confidence", record.overall_confidence)
    parent.set_attribute("selfrag.fully_supported", record.is_fully_supported)
    for i, claim in enumerate(record.claims):
        attrs: dict[str, Any] = {
            A.OPENINFERENCE_SPAN_KIND: Kind.EVALUATOR.value,
            A.INPUT_VALUE: claim.text,
            A.INPUT_MIME_TYPE: _TEXT,
            A.OUTPUT_VALUE: claim.model_dump_json(),
            A.OUTPUT_MIME_TYPE: _JSON,
            "selfrag.verdict": claim.verdict,
            "selfrag.cited": list(claim.cited),
            "selfrag.evidence": [e.chunk_id for e in claim.evidence],
        }
        if claim.citation_error:
            attrs["selfrag.citation_error"] = claim.citation_error
        span = tracer.start_span(
            f"verify claim {i + 1}", context=_context(parent), attributes=attrs, start_time=_ns(clock.start)
        )
        span.end(end_time=_ns(clock.end))
