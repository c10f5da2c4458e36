"""Secrets inside URLs and disguised keys never leave the process.

    URL with a secret       http://user:PASS@host | ?api_key= | ?token= | X-Amz-Signature= ...
      -> scrub_url          password and secret-named parameters -> ***, the rest as written
      -> OTel endpoint      export_otel to a real closed loopback port (and to a real
                            collector): the ConfigurationError, the OtelExport repr and every
                            log record (the OTLP exporter's own included, via caplog)
      -> S3 aws_endpoint    storage option http://key:SECRET@127.0.0.1:<closed port>:
                            the KnowledgeBaseError from KnowledgeBase.open
    provider error body     a real loopback OpenAI-compatible server answers 500 with the
      echoing the key       key split by spaces / newlines / dots, reversed, base64
                            (standard, urlsafe, inside Basic auth), URL-encoded
      -> trace JSON, the spans a loopback OTLP collector receives: no form of the key,
         and the kept error text is short (<= 500 characters)

The number of artefacts checked is recorded ("url secrets artefacts").
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import socket
from typing import Any
from urllib.parse import quote

import pytest
from cases import record
from otlp_sink import OtlpSink

import selfrag_nb as sr
from selfrag_nb.llm.redact import scrub_url, scrub_urls
from selfrag_nb.testing import LoopbackServer, default_responder, infer_role

QUESTION = "What is the refund window for a Pro subscription?"
USER = sr.User("ana", roles=["staff"])


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


def _secret(tag: str) -> str:
    return f"{tag}{secrets.token_hex(12)}"


class Seen:
    """Counts the artefacts checked; each must hold none of the secrets."""

    def __init__(self, *secret_values: str) -> None:
        self.secrets = secret_values
        self.checked = 0

    def clean(self, what: str, text: str) -> None:
        self.checked += 1
        for s in self.secrets:
            assert s not in text, f"{s!r} leaked into {what}: {text[:400]!r}"


# ------------------------------------------------------------------ the rule


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:PASS1234@host:4318/v1/traces", "http://user:***@host:4318/v1/traces"),
        ("https://h/v1/traces?api_key=K&x=1", "https://h/v1/traces?api_key=***&x=1"),
        ("https://h/p?token=T&access_token=A&key=K", "https://h/p?token=***&access_token=***&key=***"),
        ("https://h/p?secret=S&password=P&sig=G", "https://h/p?secret=***&password=***&sig=***"),
        (
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=C&X-Amz-Signature=S&X-Amz-Security-Token=T&X-Amz-Expires=60",
            "https://b.s3.amazonaws.com/o?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Security-Token=***&X-Amz-Expires=60",
        ),
        (
            "https://acct.blob.core.windows.net/c?sv=2020&sig=abc%2Bdef",
            "https://acct.blob.core.windows.net/c?sv=2020&sig=***",
        ),
        ("http://h/cb#access_token=T&state=ok", "http://h/cb#access_token=***&state=ok"),
        # nothing secret: unchanged, byte for byte
        ("http://127.0.0.1:6006/v1/traces?region=eu", "http://127.0.0.1:6006/v1/traces?region=eu"),
        ("http://user@host/p", "http://user@host/p"),
    ],
)
def test_scrub_url_hides_passwords_and_secret_parameters(url: str, shown: str) -> None:
    assert scrub_url(url) == shown


def test_urls_in_free_text_are_scrubbed() -> None:
    text = "POST to (http://u:pw-9876@h:1/v1?api_key=abc123). Then http://ok/p?x=1, done"
    assert scrub_urls(text) == "POST to (http://u:***@h:1/v1?api_key=***). Then http://ok/p?x=1, done"
    # a path and query without the URL around them, as urllib3 reports a failed request
    quoted = "Max retries exceeded with url: /v1/traces?api_key=abc&x=2&token=def (Caused by ...)"
    assert (
        scrub_urls(quoted)
        == "Max retries exceeded with url: /v1/traces?api_key=***&x=2&token=*** (Caused by ...)"
    )


# ------------------------------------------------------------------ OpenTelemetry


def test_otel_endpoint_secrets_stay_out_of_errors_reprs_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    password, api_key, token = _secret("pw"), _secret("ak"), _secret("tk")
    seen = Seen(password, api_key, token)
    port = _closed_port()
    url = f"http://collector:{password}@127.0.0.1:{port}/v1/traces?api_key={api_key}&token={token}"
    trace = sr.SelfRAG(sr.KnowledgeBase.sample(embedder="hashing")).ask(QUESTION, user=USER)

    caplog.set_level(logging.DEBUG)
    import os

    os.environ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"] = "2"  # the exporter retries until this deadline
    try:
        with pytest.raises(sr.ConfigurationError) as info:
            sr.export_otel(trace, endpoint=url)
    finally:
        del os.environ["OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"]
    seen.clean("the ConfigurationError", str(info.value))
    seen.clean("the ConfigurationError's repr", repr(info.value))
    assert f"127.0.0.1:{port}" in str(info.value), "the error must still say where"
    exporter_records = [r for r in caplog.records if r.name.startswith(("opentelemetry", "urllib3"))]
    assert exporter_records, "the exporter logged nothing: the log path was not exercised"
    seen.clean("log records", "\n".join(r.getMessage() for r in caplog.records))
    seen.clean("formatted log", caplog.text)

    # a URL refused before any request
    with pytest.raises(sr.InputError) as bad:
        sr.export_otel(trace, endpoint=f"ftp://collector:{password}@host/x?api_key={api_key}")
    seen.clean("the InputError for a bad endpoint", str(bad.value))

    # a collector that accepts: the report shows where, never the password
    with OtlpSink() as sink:
        good = sink.url.replace("http://", f"http://collector:{password}@") + "/v1/traces"
        result = sr.export_otel(trace, endpoint=good)
    assert sink.spans
    seen.clean("OtelExport repr", repr(result))
    seen.clean("OtelExport JSON", result.model_dump_json())
    assert result.endpoint.startswith("http://collector:***@127.0.0.1:")
    record("url secrets artefacts", seen.checked)


# ------------------------------------------------------------------ S3 endpoint


@pytest.mark.slow
def test_s3_endpoint_password_stays_out_of_the_error() -> None:
    password, secret_key = _secret("S3PW"), _secret("sk")
    seen = Seen(password, secret_key)
    options = {
        "aws_endpoint": f"http://AKIDEXAMPLE:{password}@127.0.0.1:{_closed_port()}",
        "aws_access_key_id": "AKIDEXAMPLE",
        "aws_secret_access_key": secret_key,
        "aws_region": "us-east-1",
        "allow_http": "true",
    }
    with pytest.raises(sr.KnowledgeBaseError) as info:
        sr.KnowledgeBase.open("s3://bucket/kb", embedder="hashing", storage_options=options)
    seen.clean("the KnowledgeBaseError", str(info.value))
    seen.clean("its repr", repr(info.value))
    assert "127.0.0.1" in str(info.value), "the error must still say where"
    record("url secrets artefacts", seen.checked)


@pytest.mark.slow
def test_a_password_in_the_knowledge_base_uri_stays_out_of_the_error() -> None:
    """The URI itself is a URL the package prints: its userinfo password and
    a secret query parameter are *** in the error."""
    password, sig = _secret("URIPW"), _secret("SIG")
    seen = Seen(password, sig)
    options = {
        "aws_endpoint": f"http://127.0.0.1:{_closed_port()}",
        "aws_access_key_id": "AKIDEXAMPLE",
        "aws_secret_access_key": "not-the-point",
        "aws_region": "us-east-1",
        "allow_http": "true",
    }
    uri = f"s3://AKIDEXAMPLE:{password}@bucket/kb?X-Amz-Signature={sig}"
    with pytest.raises(sr.KnowledgeBaseError) as info:
        sr.KnowledgeBase.open(uri, embedder="hashing", storage_options=options)
    seen.clean("the KnowledgeBaseError", str(info.value))
    seen.clean("its repr", repr(info.value))
    record("url secrets artefacts", seen.checked)


# ------------------------------------------------------------------ disguised keys


def _disguises(key: str) -> dict[str, str]:
    half = len(key) // 2
    return {
        "spaces": " ".join(key),
        "newlines": "\n".join(key[i : i + 5] for i in range(0, len(key), 5)),
        "dots": ".".join(key[i : i + 3] for i in range(0, len(key), 3)),
        "halves": f"{key[:half]} ... {key[half:]}",
        "reversed": key[::-1],
        "base64": base64.b64encode(key.encode()).decode(),
        "urlsafe base64": base64.urlsafe_b64encode(key.encode()).decode().rstrip("="),
        "basic auth": "Basic " + base64.b64encode(f"user:{key}".encode()).decode(),
        "url-encoded": quote(key, safe="") + "%0A" + "".join(f"%{ord(c):02X}" for c in key),
    }


def _hostile(key: str, form: str) -> Any:
    """A provider that fails the rerank call with an error body carrying the key in one disguise."""
    disguised = _disguises(key)[form]

    def respond(body: dict[str, Any]) -> str:
        if infer_role(body) == "rerank":
            raise RuntimeError(f"upstream said: credential {disguised} is not allowed here. " + "pad " * 300)
        return default_responder(body)

    return respond


def _forms_of(key: str) -> list[str]:
    """What must not appear: the key, a long piece of it, and its encodings."""
    return [
        key,
        key[4:-4],
        key[::-1],
        base64.b64encode(key.encode()).decode()[4:-4],
        base64.urlsafe_b64encode(key.encode()).decode()[4:-4],
        base64.b64encode(f"user:{key}".encode()).decode()[8:-4],
        "".join(f"%{ord(c):02X}" for c in key),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("form", list(_disguises("x" * 40)))
def test_a_provider_error_body_with_a_disguised_key_stays_out_of_traces_and_spans(
    form: str, loopback: LoopbackServer
) -> None:
    # not key-shaped: only the known-secret redaction (and its disguises) can catch it
    key = secrets.token_hex(20)
    loopback.reply(_hostile(key, form))
    kb = sr.KnowledgeBase.sample(embedder="hashing")
    rag = sr.SelfRAG(kb, model="openai/loopback", api_base=loopback.url, api_key=key)
    trace = rag.ask(QUESTION, user=USER)
    errors = [c.error for c in trace.model_calls if c.role == "rerank" and c.error]
    assert errors, "the rerank error path was not exercised"
    assert all(len(e) <= 500 for e in errors), "an error body kept in a trace must be short"
    wire = trace.to_json()
    for piece in _forms_of(key):
        assert piece not in wire, f"{form}: {piece!r} is in the trace"
    # the loose forms: only the letters and digits of the key, in order or reversed
    letters = "".join(c for c in wire if c.isalnum())
    core = "".join(c for c in key if c.isalnum())
    assert core[4:-4] not in letters, f"{form}: the key, spread out"
    assert core[::-1][4:-4] not in letters, f"{form}: the key reversed, spread out"
    with OtlpSink() as sink:
        sr.export_otel(trace, endpoint=sink.url)
    spans = json.dumps(sink.spans)
    for piece in _forms_of(key):
        assert piece not in spans, f"{form}: {piece!r} is in a span"
    record("url secrets artefacts", 2)


def test_reranker_options_repr_scrubs_the_api_base() -> None:
    from selfrag_nb.rerankers import RerankerOptions

    password, key = _secret("pw"), _secret("ak")
    options = RerankerOptions(
        api_base=f"http://u:{password}@127.0.0.1:9/v1?api_key={key}", api_key=_secret("k")
    )
    seen = Seen(password, key, options.api_key or "")
    seen.clean("RerankerOptions repr", repr(options))
    assert "127.0.0.1:9" in repr(options)


def test_model_reprs_scrub_the_api_base() -> None:
    """The rule (docs/observability.md): a URL the package prints shows its
    password and secret query parameters as ***."""
    from selfrag_nb.llm.litellm_model import LiteLLMModel, LiteLLMReranker

    base = "http://proxy-user:PW-9f8e7d@127.0.0.1:4000/v1?api_key=QK-1a2b3c"
    for obj in (LiteLLMModel("openai/x", api_base=base), LiteLLMReranker("cohere/rerank", api_base=base)):
        shown = repr(obj)
        assert "PW-9f8e7d" not in shown
        assert "QK-1a2b3c" not in shown
        assert "127.0.0.1:4000" in shown
