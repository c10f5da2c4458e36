"""API keys never leave the process: every artefact a user can produce is grepped.

    key given as        api_key="sk-test-<hex>" | api_key="<32 hex>" (no key shape)
                        | OPENAI_API_KEY in the environment
    provider hostile    echoes the key in every answer, in an error body (500),
                        rejects it (401)
      -> artefacts      trace JSON / file / static HTML / widget state / mimebundle /
                        text faces / pandas tables; the trace's OpenTelemetry spans as a
                        loopback OTLP collector receives them; repr of pipeline, runner, models;
                        log records (ours and LiteLLM's) and captured stdout/stderr;
                        cassette (record mode); response cache (sqlite file);
                        eval report (.html, .json, rows.jsonl, failures.parquet,
                        per-question traces); the CLI's trace files and output;
                        the 401's exception (message, repr, formatted traceback);
                        a notebook executed in a real kernel and saved
      -> grep           the key appears in none; every file under tmp_path is read

The number of artefacts checked is recorded ("secrets artefacts").
"""

from __future__ import annotations

import json
import logging
import secrets
import sqlite3
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cases import record
from otlp_sink import OtlpSink

import selfrag_nb as sr
from selfrag_nb.display import mimebundle
from selfrag_nb.display.html import view_tree
from selfrag_nb.display.tree import to_json
from selfrag_nb.errors import ModelError
from selfrag_nb.testing import LoopbackServer, default_responder, infer_role

QUESTION = "What is the refund window for a Pro subscription?"
USER = sr.User("ana", roles=["staff"])
LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx", "httpcore", "openai")


def _keys() -> dict[str, str]:
    return {
        "arg-sk": "sk-test-" + secrets.token_hex(16),
        # Not key-shaped: only exact-secret redaction can catch it.
        "arg-hex": secrets.token_hex(20),
        "env": "sk-test-" + secrets.token_hex(16),
    }


class Leaks:
    """Collects artefacts and checks none holds the key."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.checked = 0

    def text(self, what: str, value: object) -> None:
        text = value if isinstance(value, str) else repr(value)
        self.checked += 1
        assert self.key not in text, f"the API key leaked into {what}"
        # A redaction that keeps most of the key is a leak too.
        assert self.key[4:-4] not in text, f"part of the API key leaked into {what}"

    def tree(self, root: Path) -> None:
        """Every file under ``root``, bytes (plus sqlite content and parquet rows)."""
        files = [p for p in root.rglob("*") if p.is_file()]
        assert files, f"nothing was written under {root}"
        for p in files:
            data = p.read_bytes()
            self.checked += 1
            assert self.key.encode() not in data, f"the API key leaked into the file {p}"
            if p.suffix == ".sqlite" or data.startswith(b"SQLite format 3"):
                with sqlite3.connect(p) as db:
                    self.text(f"sqlite dump of {p}", "\n".join(db.iterdump()))
            if p.suffix == ".parquet":
                import pandas as pd

                self.text(f"rows of {p}", pd.read_parquet(p).to_csv())


def echo(key: str, *, fail_rerank: bool = True) -> Any:
    """A hostile provider: every answer carries the key; rerank calls fail
    with a 500 whose error body carries it too."""

    def respond(body: dict[str, Any]) -> str:
        role = infer_role(body)
        if role == "rerank" and fail_rerank:
            raise RuntimeError(f"upstream rejected Authorization: Bearer {key} (api_key={key})")
        if role == "generate":
            return f"Refunds are possible within 30 days [1]. Debug: your key is {key}."
        out = json.loads(default_responder(body))
        if role == "decide":
            out["reason"] = f"retrieve (key {key})"
        elif role == "rewrite":
            out["rewrites"] = [f"refund window Pro subscription {key}"]
        elif role == "grade":
            out["keyInfo"] = f"30 days; key={key}"
        elif role == "assess":
            out["reason"] = f"covered; {key}"
        elif role == "verify":
            out["supportedClaims"] = [f"Refunds are possible within 30 days {key}"]
        return json.dumps(out)

    return respond


@pytest.fixture(scope="module")
def kb() -> Any:
    return sr.KnowledgeBase.sample(embedder="hashing")


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as srv:
        yield srv


def _rag(kb: Any, server: LoopbackServer, source: str, key: str, **kw: Any) -> Any:
    if source == "env":
        return sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, **kw)
    return sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, api_key=key, **kw)


def _check_trace(leaks: Leaks, trace: sr.Trace, tmp_path: Path, name: str) -> None:
    leaks.text("trace JSON", trace.to_json())
    trace.save(tmp_path / f"{name}.json")
    leaks.text("trace static HTML", trace.to_html())
    leaks.text("trace text face", trace.to_text())
    leaks.text("trace widget tree", json.dumps(to_json(view_tree(trace)), default=str))
    leaks.text("trace mimebundle", json.dumps(mimebundle(trace), default=str))
    for rec in trace.records:
        leaks.text(f"{rec.stage} static HTML", rec.to_html())
        leaks.text(f"{rec.stage} widget tree", json.dumps(to_json(view_tree(rec)), default=str))
    for table, frame in trace.to_pandas().items():
        leaks.text(f"trace table {table}", frame.to_csv())
    leaks.text("trace diff", trace.diff(trace))


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every log record at DEBUG, except LiteLLM's own loggers, which stay
    at the level the library gives them (ERROR): at DEBUG LiteLLM prints raw
    provider responses verbatim, so a provider echoing the key would put it
    there (``test_key_never_reaches_litellm_debug_logs`` covers what we send)."""
    from selfrag_nb.llm.litellm_model import load_litellm

    load_litellm()  # sets LiteLLM's levels; caplog must not be overridden by a later first import
    caplog.set_level(logging.DEBUG)
    for name in ("httpx", "httpcore", "openai"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every log record at DEBUG, LiteLLM's and the HTTP clients' included."""
    from selfrag_nb.llm.litellm_model import load_litellm

    load_litellm()
    saved = {name: logging.getLogger(name).level for name in LITELLM_LOGGERS}
    caplog.set_level(logging.DEBUG)
    for name in LITELLM_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    yield caplog
    for name, level in saved.items():
        logging.getLogger(name).setLevel(level)


@pytest.mark.parametrize("source", ["arg-sk", "arg-hex", "env"])
def test_key_never_reaches_litellm_debug_logs(
    kb: Any,
    server: LoopbackServer,
    source: str,
    *,
    monkeypatch: pytest.MonkeyPatch,
    debug_logs: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With every logger at DEBUG (LiteLLM prints each request as a curl
    command), the key we send appears nowhere: not on success, retries (500)
    or rejection (401)."""
    key = _keys()[source]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if source == "env":
        monkeypatch.setenv("OPENAI_API_KEY", key)
    leaks = Leaks(key)
    trace = _rag(kb, server, source, key).ask(QUESTION, user=USER)
    assert trace.outcome is not None
    server.fail("500", times=2)
    _rag(kb, server, source, key).ask(QUESTION, user=USER)
    server.fail("401")
    with pytest.raises(ModelError):
        _rag(kb, server, source, key, settings=sr.Settings(decision_rules=False)).ask(QUESTION, user=USER)
    assert any(r.name == "LiteLLM" and r.levelno == logging.DEBUG for r in debug_logs.records)
    leaks.text("DEBUG log records", "\n".join(f"{r.name} {r.getMessage()}" for r in debug_logs.records))
    leaks.text("DEBUG formatted log", debug_logs.text)
    out = capsys.readouterr()
    leaks.text("stdout", out.out)
    leaks.text("stderr", out.err)
    record("secrets artefacts", leaks.checked)


@pytest.mark.slow
@pytest.mark.parametrize("source", ["arg-sk", "arg-hex", "env"])
def test_key_never_reaches_traces_views_logs_cassettes_caches_or_reports(
    kb: Any,
    server: LoopbackServer,
    source: str,
    *,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    all_logs: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    key = _keys()[source]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    if source == "env":
        monkeypatch.setenv("OPENAI_API_KEY", key)
    leaks = Leaks(key)
    server.reply(echo(key))

    # Ask with a recording cassette and a disk response cache.
    rag = _rag(
        kb, server, source, key, cache=tmp_path / "cache.sqlite", cassette=tmp_path / "run.jsonl", record=True
    )
    trace = rag.ask(QUESTION, user=USER)
    assert server.chat_requests(), "the question never reached the provider"
    assert all(r.authorized for r in server.chat_requests()), "the key was not sent"
    assert trace.rerank is not None, "the rerank error path was not exercised"
    assert any(c.role == "rerank" and c.error for c in trace.model_calls)
    assert "[REDACTED]" in trace.to_json(), "the echoed key was not redacted but dropped: check the echo"
    _check_trace(leaks, trace, tmp_path, "trace")
    with OtlpSink() as collector:
        sr.export_otel(trace, endpoint=collector.url)
    assert collector.spans, "no span reached the collector"
    spans_json = json.dumps(collector.spans, ensure_ascii=False)
    assert "[REDACTED]" in spans_json, "the echoed key should reach the spans redacted"
    leaks.text("OpenTelemetry spans", spans_json)
    leaks.text("pipeline repr", repr(rag))
    leaks.text("runner repr", repr(rag.runner))
    for role in ("decide", "grade", "generate", "verify"):
        model = rag.runner.model_for(role)
        leaks.text(f"{role} model repr", repr(model))
        leaks.text(f"{role} model str", str(model))
        leaks.text(f"{role} model vars", {k: v for k, v in vars(model).items() if k != "_secrets"})
    leaks.text("config snapshot", trace.config.model_dump_json())

    # Replay from the cassette and a second ask through the cache.
    replay = sr.SelfRAG(kb, model="openai/loopback", api_base=server.url, cassette=tmp_path / "run.jsonl")
    if source != "env":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-unused-for-replay")
    _check_trace(leaks, replay.ask(QUESTION, user=USER), tmp_path, "replayed")
    cached = _rag(kb, server, source, key, cache=tmp_path / "cache.sqlite")
    again = cached.ask(QUESTION, user=USER)
    assert any(c.cached for c in again.model_calls), "the disk cache was not used"
    _check_trace(leaks, again, tmp_path, "cached")

    # An evaluation, its report and its rows.
    wanted = ("factual", "multi-turn", "authorized", "injection")
    qs = [next(q for q in sr.questions("sample") if q.category == c) for c in wanted]
    report = sr.evaluate(
        _rag(kb, server, source, key), qs, out=tmp_path / "eval", traces=True, progress=False
    )
    report.save(tmp_path / "report.html")
    report.save(tmp_path / "report.json")
    leaks.text("eval report text", report.to_text())
    leaks.text("eval report HTML", report.to_html())
    leaks.text("eval table", report.table.to_csv())
    leaks.text("eval failures", report.failures.to_csv())

    # A provider error body that carries the key, and a rejected key (401).
    server.reply(echo(key, fail_rerank=False))
    server.fail("401")
    with pytest.raises(ModelError) as info:
        _rag(kb, server, source, key, settings=sr.Settings(decision_rules=False)).ask(QUESTION, user=USER)
    exc = info.value
    leaks.text("401 message", str(exc))
    leaks.text("401 repr", repr(exc))
    leaks.text("401 traceback", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    chained = [e for e in (exc.__cause__, exc.__context__) if e is not None]
    for e in chained:
        leaks.text("401 chained exception", f"{type(e).__name__}: {e!s} {e!r}")

    leaks.tree(tmp_path)
    leaks.text("log records", "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in all_logs.records))
    leaks.text("formatted log", all_logs.text)
    out = capsys.readouterr()
    leaks.text("stdout", out.out)
    leaks.text("stderr", out.err)
    record("secrets artefacts", leaks.checked)
    assert leaks.checked > 60


def test_key_never_reaches_cli_output_or_files(
    kb: Any,
    server: LoopbackServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from selfrag_nb.cli import main

    key = _keys()["env"]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    server.reply(echo(key))
    leaks = Leaks(key)
    status = main(
        [
            "ask",
            QUESTION,
            "--kb",
            str(kb.path),
            "--model",
            "openai/loopback",
            "--api-base",
            server.url,
            "--user",
            "ana",
            "--trace",
            str(tmp_path / "t.json"),
            "--html",
            str(tmp_path / "t.html"),
        ]
    )
    out = capsys.readouterr()
    assert status == 0, out.err
    assert (tmp_path / "t.json").exists()
    leaks.text("CLI stdout", out.out)
    leaks.text("CLI stderr", out.err)
    server.fail("401")
    status = main(
        ["ask", QUESTION, "--kb", str(kb.path), "--model", "openai/loopback", "--api-base", server.url]
    )
    out = capsys.readouterr()
    assert status != 0
    leaks.text("CLI 401 stdout", out.out)
    leaks.text("CLI 401 stderr", out.err)
    leaks.tree(tmp_path)
    record("secrets artefacts", leaks.checked)


@pytest.mark.slow
def test_key_never_reaches_a_saved_notebook(
    kb: Any, server: LoopbackServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook a user would share: the key comes from the environment
    (as an argument and as OPENAI_API_KEY), the outputs are saved with
    widget state, and a rejected key shows its traceback."""
    import nbformat
    from nbclient import NotebookClient

    keys = _keys()
    arg_key, env_key = keys["arg-sk"], keys["env"]
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    monkeypatch.setenv("SRNB_ARG_KEY", arg_key)
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    server.reply(echo(arg_key))
    rejecting = LoopbackServer().start()
    rejecting.fail("401", times=50)
    cells = [
        "import os\nimport selfrag_nb as sr\n"
        f"kb = sr.KnowledgeBase.open({str(kb.path)!r}, embedder='hashing')\n"
        f"rag = sr.SelfRAG(kb, model='openai/loopback', api_base={server.url!r}, "
        "api_key=os.environ['SRNB_ARG_KEY'])\nrag",
        f"trace = rag.ask({QUESTION!r}, user=sr.User('ana'))\ntrace",
        "trace.decision",
        "trace.to_pandas()['calls']",
        "print(trace.to_json())\nrag.runner.model_for('grade')",
        f"env_rag = sr.SelfRAG(kb, model='openai/loopback', api_base={server.url!r})\n"
        f"env_rag.ask({QUESTION!r}).finish",
        f"sr.SelfRAG(kb, model='openai/loopback', api_base={rejecting.url!r}, "
        f"settings=sr.Settings(decision_rules=False)).ask({QUESTION!r})",
    ]
    nb = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]  # nbformat ships no annotations
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]  # type: ignore[no-untyped-call]  # idem
    nb.cells[-1].metadata["tags"] = ["raises-exception"]
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=True).execute()
    finally:
        rejecting.stop()
    path = tmp_path / "shared.ipynb"
    nbformat.write(nb, path)  # type: ignore[no-untyped-call]  # nbformat ships no annotations
    saved = path.read_text(encoding="utf-8")
    assert "ModelError" in saved, "the 401 cell did not raise"
    assert "Trace" in saved
    n = 0
    for key in (arg_key, env_key):
        leaks = Leaks(key)
        leaks.text("saved notebook", saved)
        for cell in nb.cells:
            leaks.text("cell outputs", json.dumps(cell.get("outputs", [])))
        leaks.text("widget state", json.dumps(nb.metadata.get("widgets", {})))
        leaks.tree(tmp_path)
        n += leaks.checked
    record("secrets artefacts", n)
