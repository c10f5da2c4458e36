"""Traces in a real Phoenix server (arize-phoenix) on loopback, read back
through its REST API (``GET /v1/projects/<name>/spans``).

Phoenix pins its own web stack, so it lives in its own virtualenv
(``./run test`` creates ``.venv-phoenix``); the test finds the ``phoenix``
executable through SELFRAG_PHOENIX_BIN, that folder, or PATH. Without it the
module is skipped, except in CI (CI=true), where that is a failure. One
server for the module, in a tmp working directory, stopped afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import selfrag_nb as sr

pytest.importorskip("opentelemetry.sdk.trace", reason="the otel extra is part of the dev extra")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
Q = "What is the refund window?"
#: Phoenix migrates a fresh database at start: 100-120 s were measured on a
#: busy shared 2-core machine; the margin is for busier ones.
START_TIMEOUT_S = 420


def phoenix_bin() -> str | None:
    for candidate in (
        os.environ.get("SELFRAG_PHOENIX_BIN", ""),
        str(ROOT / ".venv-phoenix" / "bin" / "phoenix"),
        shutil.which("phoenix") or "",
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:  # loopback only
        return json.loads(response.read())


class Phoenix:
    def __init__(self, url: str) -> None:
        self.url = url

    def spans(
        self, project: str, done: Callable[[list[dict[str, Any]]], bool], timeout: float = 60.0
    ) -> list[dict[str, Any]]:
        """The spans of ``project`` once ``done(spans)`` holds (Phoenix writes
        received spans to its database in the background), or at the timeout."""
        deadline = time.monotonic() + timeout
        found: list[dict[str, Any]] = []
        while True:
            try:
                found = get_json(f"{self.url}/v1/projects/{project}/spans?limit=1000")["data"]
            except urllib.error.HTTPError as exc:
                if exc.code != 404:  # 404: the project does not exist until its first span is stored
                    raise
            if done(found) or time.monotonic() > deadline:
                return found
            time.sleep(0.5)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    exe = phoenix_bin()
    if exe is None:
        reason = (
            "Phoenix is not installed: ./run test creates .venv-phoenix (or set SELFRAG_PHOENIX_BIN "
            "to a phoenix executable)"
        )
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason)
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("phoenix")
    port = free_port()
    env = {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_WORKING_DIR": str(work),
    }
    log = (work / "phoenix.log").open("wb")
    proc = subprocess.Popen([exe, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"phoenix exited with {proc.returncode}; log: {work / 'phoenix.log'}")
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"phoenix did not answer /healthz within {START_TIMEOUT_S} s")
            time.sleep(1)
        yield Phoenix(url)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def kb() -> Any:
    return sr.KnowledgeBase.sample()


def kind(span: dict[str, Any]) -> str:
    # Phoenix takes the kind from the openinference.span.kind attribute (the
    # OpenTelemetry kind is INTERNAL); without it the kind would read UNKNOWN.
    return str(span["span_kind"])


def test_sample_trace_in_phoenix(phoenix: Phoenix, kb: Any) -> None:
    trace = sr.SelfRAG(kb).ask(Q)
    assert trace.offline
    assert trace.retrieval is not None
    result = sr.export_otel(trace, endpoint=phoenix.url, project="selfrag-export")
    spans = phoenix.spans("selfrag-export", lambda found: len(found) >= result.spans)
    assert len(spans) == result.spans
    assert {s["context"]["trace_id"] for s in spans} == set(result.trace_ids)
    ids = {s["context"]["span_id"] for s in spans}

    roots = [s for s in spans if s["parent_id"] is None]
    assert len(roots) == 1
    root = roots[0]
    assert kind(root) == "CHAIN"
    assert root["attributes"]["input.value"] == Q
    assert root["attributes"]["output.value"] == trace.answer
    assert root["attributes"]["selfrag.outcome"] == trace.outcome
    assert all(s["parent_id"] in ids for s in spans if s is not root)

    stages = [s for s in spans if s["parent_id"] == root["context"]["span_id"]]
    stages.sort(key=lambda s: s["start_time"])
    assert [s["name"] for s in stages] == [r.stage for r in trace.records]
    assert {kind(s) for s in stages} == {"CHAIN"}
    stage_id = {s["name"]: s["context"]["span_id"] for s in stages}

    llm = [s for s in spans if kind(s) == "LLM"]
    assert len(llm) == len(trace.model_calls)
    assert sum(s["attributes"]["llm.token_count.prompt"] for s in llm) == trace.totals.tokens_in
    assert sum(s["attributes"]["llm.token_count.completion"] for s in llm) == trace.totals.tokens_out
    for s in llm:
        a = s["attributes"]
        assert a["llm.model_name"] == "offline"
        assert s["parent_id"] == stage_id[a["selfrag.role"]]
        assert a["llm.token_count.total"] == a["llm.token_count.prompt"] + a["llm.token_count.completion"]
        assert a["llm.input_messages.0.message.role"] == "system"

    retrievers = [s for s in spans if kind(s) == "RETRIEVER"]
    assert len(retrievers) == 1
    assert retrievers[0]["parent_id"] == stage_id["retrieve"]
    ra = retrievers[0]["attributes"]
    for i, hit in enumerate(trace.retrieval.hits):
        prefix = f"retrieval.documents.{i}.document."
        assert ra[prefix + "id"] == hit.chunk_id
        assert ra[prefix + "content"] == hit.text
        assert ra[prefix + "score"] == pytest.approx(hit.score)
        # Phoenix unfolds the metadata JSON into attributes.
        assert ra[prefix + "metadata.source"] == hit.source

    evaluators = [s for s in spans if kind(s) == "EVALUATOR"]
    graded = [s for s in evaluators if s["parent_id"] == stage_id["grade"]]
    assert trace.grades is not None
    assert sorted(s["attributes"]["selfrag.score"] for s in graded) == sorted(
        g.score for g in trace.grades.items
    )
    assert trace.support is not None
    claims = [s for s in evaluators if s["parent_id"] == stage_id["verify"]]
    assert len(claims) == len(trace.support.claims)


def test_live_export_into_phoenix(phoenix: Phoenix, kb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", phoenix.url)
    monkeypatch.setenv("PHOENIX_PROJECT_NAME", "selfrag-live")
    rag = sr.SelfRAG(kb, otel=True)
    assert rag.otel_provider is not None
    try:
        traces = [rag.ask(Q), rag.ask("hello")]
        assert rag.otel_provider.force_flush()
    finally:
        rag.otel_provider.shutdown()

    def two_roots(found: list[dict[str, Any]]) -> bool:
        return sum(1 for s in found if s["parent_id"] is None) >= 2

    roots = [s for s in phoenix.spans("selfrag-live", two_roots) if s["parent_id"] is None]
    assert sorted(r["attributes"]["input.value"] for r in roots) == sorted([Q, "hello"])
    for root in roots:
        trace = traces[0] if root["attributes"]["input.value"] == Q else traces[1]
        assert root["attributes"]["output.value"] == trace.answer
        assert kind(root) == "CHAIN"
