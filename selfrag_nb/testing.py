"""Test doubles designed with the code (DESIGN.md style rule 5).

    ScriptedModel    a Model answering from per-role queues (no network)
      .enqueue(role, *responses)   str | dict/list (JSON) | Exception | callable(request)
      .default(role, response)     used when the role's queue is empty
      .requests                    every ModelRequest received, in order
    LoopbackServer   a real OpenAI-compatible HTTP server on 127.0.0.1

Both are public (``selfrag_nb.testing``) so users can test their own
pipelines, prompts and notebooks the way this package tests itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http.server
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

from selfrag_nb.llm.base import Completion, ModelError, ModelRequest
from selfrag_nb.llm.schemas import ROLES

# ============================================================= ScriptedModel
#
#     runner --ModelRequest(role, messages, inputs)--> ScriptedModel
#        queue[role] (FIFO) -> else default[role] -> else ModelError naming the role
#        str -> raw | dict/list -> JSON | Exception -> Completion.error | callable(request) -> one of those
#
# The runner treats it like any backend: prompts are rendered, output parsed,
# and the one repair call consumes the next scripted response of the same
# role. Tests assert on ``.requests`` to check what a model was shown (for
# example that no unauthorised text reached it).

#: What a scripted response may be: raw text, a JSON-able dict or list, an
#: exception (reported as ``Completion.error``), or a callable computing one of
#: those from the request.
ScriptedResponse = Union[str, dict[str, Any], list[Any], BaseException, Callable[[ModelRequest], Any]]  # noqa: UP007 - a runtime alias, evaluated on Python 3.10 too


class ScriptedModel:
    """A model that replays scripted responses per role.

    ``latency`` (seconds) is slept on each call (``asyncio.sleep`` in
    ``acomplete``); ``tokens_in`` / ``tokens_out`` / ``cost`` are reported on
    every completion (None: unknown). Like a real backend it honours the
    request's timeout and deadline: when ``latency`` exceeds the time allowed
    it waits that long and reports a timeout in ``Completion.error``
    (``honor_timeout=False`` makes it overrun instead, to test callers' guards)."""

    offline = False

    def __init__(
        self,
        name: str = "scripted",
        *,
        latency: float = 0.0,
        tokens_in: int | None = None,
        tokens_out: int | None = None,
        cost: float | None = None,
        honor_timeout: bool = True,
    ) -> None:
        if latency < 0:
            raise ValueError(f"latency must be >= 0 seconds, got {latency}")
        self.name = name
        self.latency = latency
        self.tokens_in = tokens_in
        self.tokens_out = tokens_out
        self.cost = cost
        self.honor_timeout = honor_timeout
        self.requests: list[ModelRequest] = []
        self._queues: dict[str, deque[ScriptedResponse]] = {r: deque() for r in ROLES}
        self._defaults: dict[str, ScriptedResponse] = {}
        # The runner's sync path may call from a worker thread.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        pending = {r: len(q) for r, q in self._queues.items() if q}
        return f"ScriptedModel(name={self.name!r}, pending={pending}, defaults={sorted(self._defaults)})"

    # -- scripting --------------------------------------------------------
    @staticmethod
    def _check_role(role: str) -> None:
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")

    def enqueue(self, role: str, *responses: ScriptedResponse) -> ScriptedModel:
        """Append responses to ``role``'s queue (consumed first in, first out)."""
        self._check_role(role)
        if not responses:
            raise ValueError("enqueue needs at least one response")
        with self._lock:
            self._queues[role].extend(responses)
        return self

    def default(self, role: str, response: ScriptedResponse) -> ScriptedModel:
        """The response for ``role`` whenever its queue is empty."""
        self._check_role(role)
        with self._lock:
            self._defaults[role] = response
        return self

    def pending(self, role: str | None = None) -> int:
        """Scripted responses not consumed yet (for one role or all)."""
        with self._lock:
            if role is None:
                return sum(len(q) for q in self._queues.values())
            self._check_role(role)
            return len(self._queues[role])

    def requests_for(self, role: str) -> list[ModelRequest]:
        return [r for r in self.requests if r.role == role]

    # -- the Model protocol ----------------------------------------------
    def _next(self, request: ModelRequest) -> ScriptedResponse:
        with self._lock:
            self.requests.append(request)
            queue = self._queues[request.role]
            if queue:
                return queue.popleft()
            if request.role in self._defaults:
                return self._defaults[request.role]
        raise ModelError(
            f"ScriptedModel {self.name!r}: no scripted response left for role {request.role!r} "
            f"(call .enqueue({request.role!r}, ...) or .default({request.role!r}, ...))"
        )

    def _completion(self, response: ScriptedResponse, request: ModelRequest, started: float) -> Completion:
        if callable(response) and not isinstance(response, BaseException):
            response = response(request)
        latency_ms = (time.perf_counter() - started) * 1000
        common: dict[str, Any] = {"model": self.name, "latency_ms": latency_ms}
        if isinstance(response, BaseException):
            return Completion(raw="", error=f"{type(response).__name__}: {response}", **common)
        if isinstance(response, dict | list):
            raw = json.dumps(response, ensure_ascii=False)
        elif isinstance(response, str):
            raw = response
        else:
            raise TypeError(
                f"ScriptedModel {self.name!r}: a response for role {request.role!r} must be str, dict, "
                f"list, an exception or a callable returning one, got {type(response).__name__}"
            )
        return Completion(
            raw=raw, tokens_in=self.tokens_in, tokens_out=self.tokens_out, cost=self.cost, **common
        )

    def _allowed(self, request: ModelRequest) -> float | None:
        """Seconds this call may take (None: unbounded)."""
        limits = [request.timeout] if request.timeout is not None else []
        if request.deadline is not None:
            limits.append(max(0.0, request.deadline - time.monotonic()))
        return min(limits) if limits and self.honor_timeout else None

    def _timed_out(self, allowed: float, started: float) -> Completion:
        return Completion(
            raw="",
            model=self.name,
            error=f"Timeout: no answer within {allowed:.2f} s",
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    def complete(self, request: ModelRequest) -> Completion:
        started = time.perf_counter()
        response = self._next(request)
        allowed = self._allowed(request)
        if allowed is not None and self.latency > allowed:
            time.sleep(allowed)
            return self._timed_out(allowed, started)
        if self.latency:
            time.sleep(self.latency)
        return self._completion(response, request, started)

    async def acomplete(self, request: ModelRequest) -> Completion:
        started = time.perf_counter()
        response = self._next(request)
        allowed = self._allowed(request)
        if allowed is not None and self.latency > allowed:
            await asyncio.sleep(allowed)
            return self._timed_out(allowed, started)
        if self.latency:
            await asyncio.sleep(self.latency)
        return self._completion(response, request, started)


# ============================================================ LoopbackServer
#
#     test / benchmark / notebook
#        LiteLLMModel("openai/x", api_base=server.url)  --HTTP-->  127.0.0.1:PORT
#                                                                 |
#     LoopbackServer (ThreadingHTTPServer, one thread per connection)
#        POST any route below       -> next queued failure (fail(); role= : chat of that role only), acted out
#        POST /v1/chat/completions  -> latency -> responder(body) -> OpenAI JSON
#        POST /v1/embeddings        -> deterministic vectors (sha256 of the text)
#        POST /v1/rerank, /rerank   -> word-overlap relevance scores
#        GET  /v1/models            -> one model
#        every request is recorded in .requests with auth headers REDACTED
#
# A real server on a real socket, so the real LiteLLM/httpx client code path
# (connection handling, status mapping, Retry-After, timeouts, body parsing)
# is what the tests exercise. Stdlib only: no new dependency.

#: Failure modes understood by ``LoopbackServer.fail``.
FAILURE_MODES = (
    "500",
    "502",
    "503",
    "504",
    "429",
    "401",
    "403",
    "timeout",
    "truncated",
    "empty",
    "malformed",
    "wrong_shape",
)

#: Header names whose values never leave the server thread (credentials).
_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key", "proxy-authorization", "cookie"})

_WORD = re.compile(r"\w+", re.UNICODE)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _count_tokens(text: str) -> int:
    # A word count, not a tokenizer: deterministic and good enough to check
    # that usage flows through from the HTTP body to the trace.
    return len(_words(text))


def _message_text(body: dict[str, Any]) -> str:
    parts: list[str] = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):  # OpenAI content parts
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


# JSON schema names sent as response_format -> role (LiteLLMModel names the
# schema after the output class); prompt keywords are the fallback.
_SCHEMA_ROLES = {
    "DecisionOut": "decide",
    "RewriteOut": "rewrite",
    "RelevanceOut": "grade",
    "RerankOut": "rerank",
    "AssessOut": "assess",
    "GenerateOut": "generate",
    "SupportOut": "verify",
}
# Checked in order: the most specific field names first.
_KEYWORD_ROLES = (
    ("supportedclaims", "verify"),
    ("relevancescore", "grade"),
    ("no_retrieve", "decide"),
    ("rewrites", "rewrite"),
    ('"ranking"', "rerank"),
    ("clarify", "assess"),
)


def infer_role(body: dict[str, Any]) -> str:
    """Which Self-RAG role a chat request plays: from the ``response_format``
    schema name when sent, else from the field names its prompt asks for;
    "generate" when nothing matches (free text)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        schema = fmt.get("json_schema")
        if isinstance(schema, dict) and schema.get("name") in _SCHEMA_ROLES:
            return _SCHEMA_ROLES[str(schema["name"])]
    text = _message_text(body).lower()
    for keyword, role in _KEYWORD_ROLES:
        if keyword in text:
            return role
    return "generate"


def default_responder(body: dict[str, Any]) -> str:
    """A deterministic assistant: valid JSON for the structured roles, a short
    cited sentence for "generate". Retrieves, finds documents relevant,
    answers, and accepts: the happy path, so a pipeline runs end to end over
    HTTP. Use ``LoopbackServer.reply`` for anything else."""
    role = infer_role(body)
    if role == "decide":
        out: dict[str, Any] = {"decision": "RETRIEVE", "reason": "loopback: factual question, retrieve"}
    elif role == "rewrite":
        out = {"rewrites": [], "reason": "loopback: the question is already specific"}
    elif role == "grade":
        out = {"relevanceScore": 85, "isRelevant": True, "keyInfo": "loopback: relevant", "gaps": ""}
    elif role == "rerank":
        out = {"ranking": []}
    elif role == "assess":
        out = {"action": "ANSWER", "reason": "loopback: the documents cover the question"}
    elif role == "verify":
        out = {
            "isFullySupported": True,
            "supportedClaims": ["loopback answer"],
            "unsupportedClaims": [],
            "claims": [],
            "overallConfidence": 90,
            "recommendation": "ACCEPT",
        }
    else:
        cite = " [1]" if "[1]" in _message_text(body) else ""
        return f"This is the loopback server's answer{cite}."
    return json.dumps(out)


def embedding_vector(text: str, dimensions: int = 16) -> list[float]:
    """The loopback server's embedding of ``text``: unit-length, derived from
    sha256 of the text, so equal texts embed equally in every run."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    raw = [(digest[i % len(digest)] - 127.5) / 127.5 for i in range(dimensions)]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


def rerank_score(query: str, document: str) -> float:
    """Share of the query's words found in the document (0..1)."""
    q = set(_words(query))
    if not q:
        return 0.0
    return round(len(q & set(_words(document))) / len(q), 6)


@dataclass(frozen=True)
class ReceivedRequest:
    """One request the loopback server received. Credential headers are
    replaced by "REDACTED"; ``authorized`` says whether one was sent."""

    method: str
    path: str
    body: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)
    authorized: bool = False


@dataclass
class _Failure:
    mode: str
    retry_after: float
    #: Only chat requests playing this role (``infer_role``) take it; None: any POST.
    role: str | None = None


class LoopbackServer:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 (random port).

        with LoopbackServer() as server:
            model = LiteLLMModel("openai/loopback", api_base=server.url, api_key="sk-test")
            server.fail("429", retry_after=0.2)   # next call: 429 + Retry-After
            server.reply(lambda body: '{"decision": "NO_RETRIEVE"}')

    ``latency`` (seconds) is slept before every chat answer. ``timeout_sleep``
    is how long the "timeout" failure stalls (in small steps, so ``stop()``
    never waits for it).
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        responder: Callable[[dict[str, Any]], str] | None = None,
        model: str = "loopback",
        timeout_sleep: float = 30.0,
    ) -> None:
        if latency < 0:
            raise ValueError(f"latency must be >= 0 seconds, got {latency}")
        self.latency = latency
        self.model = model
        self.timeout_sleep = timeout_sleep
        self.requests: list[ReceivedRequest] = []
        self._responder: Callable[[dict[str, Any]], str] = responder or default_responder
        self._failures: deque[_Failure] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[socket.socket] = set()

    # ---------------------------------------------------------- lifecycle

    def start(self) -> LoopbackServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        handler = _make_handler(self)
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="loopback-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake stalled handlers, close every open connection."""
        httpd = self._httpd
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            # Keep-alive handlers block reading the next request: a shutdown
            # of the socket wakes them so no thread outlives the server.
            with contextlib.suppress(OSError):  # already closed by the client
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("LoopbackServer is not started: call start() or use it as a context manager")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The OpenAI-style API base: ``http://127.0.0.1:PORT/v1``."""
        return f"{self.base_url}/v1"

    # -------------------------------------------------------- scripting

    def reply(self, fn: Callable[[dict[str, Any]], str] | None) -> None:
        """Set the responder ``fn(body) -> assistant content`` (None: default)."""
        self._responder = fn or default_responder

    def fail(self, mode: str, times: int = 1, *, retry_after: float = 1.0, role: str | None = None) -> None:
        """Queue ``times`` failures of ``mode`` for the next POST requests
        (chat, embeddings, rerank; see ``FAILURE_MODES``); ``retry_after``
        seconds go in the 429 header. With ``role`` only chat requests playing
        that Self-RAG role take them (``infer_role``), so one stage can fail
        while the others answer, even when calls run in parallel."""
        if mode not in FAILURE_MODES:
            raise ValueError(f"unknown failure mode {mode!r}; expected one of {', '.join(FAILURE_MODES)}")
        if times < 1:
            raise ValueError(f"times must be >= 1, got {times}")
        if role is not None and role not in ROLES:
            raise ValueError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")
        with self._lock:
            self._failures.extend(_Failure(mode, retry_after, role) for _ in range(times))

    def clear(self) -> None:
        """Forget received requests and queued failures."""
        with self._lock:
            self.requests.clear()
            self._failures.clear()

    def chat_requests(self) -> list[ReceivedRequest]:
        """The chat-completion requests received so far."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    # ---------------------------------------------------- handler helpers

    def _record(self, request: ReceivedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_failure(self, role: str | None) -> _Failure | None:
        """The first queued failure this request takes (``role``: the chat
        request's inferred role, None for other routes)."""
        with self._lock:
            for failure in self._failures:
                if failure.role is None or failure.role == role:
                    self._failures.remove(failure)
                    return failure
            return None

    def _track(self, conn: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _sleep(self, seconds: float) -> None:
        # Small steps: a stopping server wakes its sleepers at once.
        self._stopping.wait(seconds)

    def _chat_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        content = self._responder(body)
        prompt_tokens = _count_tokens(_message_text(body))
        completion_tokens = _count_tokens(content)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:24]
        return {
            "id": f"chatcmpl-{digest}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(body.get("model") or self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def _make_handler(server: LoopbackServer) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        # HTTP/1.1 keep-alive: the client's connection pool is exercised as
        # with a real provider, and the benchmark measures calls, not TCP setup.
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes: without TCP_NODELAY,
        # Nagle + delayed ACK stall every keep-alive response by ~40 ms.
        disable_nagle_algorithm = True
        server_version = "selfrag-nb-loopback/1"

        def setup(self) -> None:
            super().setup()
            server._track(self.connection, True)

        def finish(self) -> None:
            server._track(self.connection, False)
            with contextlib.suppress(OSError):  # client went away mid-response (timeout / truncated)
                super().finish()

        def log_message(self, fmt: str, *args: Any) -> None:
            # Silent: test output stays readable and nothing (not even a
            # redacted header) is written to stderr.
            return

        # ------------------------------------------------------------ io

        def _read_body(self) -> tuple[dict[str, Any] | None, str | None]:
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else b""
            if not data:
                return None, None
            try:
                parsed = json.loads(data)
            except ValueError as exc:
                return None, f"request body is not JSON: {exc}"
            if not isinstance(parsed, dict):
                return None, "request body must be a JSON object"
            return parsed, None

        def _send(
            self,
            status: int,
            payload: bytes,
            *,
            content_type: str = "application/json",
            headers: dict[str, str] | None = None,
            length: int | None = None,
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload) if length is None else length))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(payload)
                self.wfile.flush()
            except OSError:
                self.close_connection = True  # the client gave up (its timeout)

        def _json(self, status: int, obj: object, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode("utf-8"), headers=headers)

        def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
            self._json(status, {"error": {"message": message, "type": kind, "code": str(status)}}, headers)

        def _record(self, body: dict[str, Any] | None) -> None:
            headers: dict[str, str] = {}
            authorized = False
            for name, value in self.headers.items():
                key = name.lower()
                if key in _SECRET_HEADERS:
                    authorized = authorized or bool(value.strip())
                    headers[key] = "REDACTED"
                else:
                    headers[key] = value
            path = self.path.split("?", 1)[0]
            server._record(ReceivedRequest(self.command, path, body, headers, authorized))

        # -------------------------------------------------------- routes

        def do_GET(self) -> None:
            self._record(None)
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            else:
                self._error(404, f"no route GET {self.path}", "not_found")

        def do_POST(self) -> None:
            body, problem = self._read_body()
            self._record(body)
            path = self.path.split("?", 1)[0].rstrip("/")
            routes = ("/chat/completions", "/embeddings", "/rerank")
            if problem is not None or body is None:
                self._error(400, problem or "empty request body", "invalid_request_error")
                return
            if not path.endswith(routes):
                self._error(404, f"no route POST {self.path}", "not_found")
                return
            chat = path.endswith("/chat/completions")
            failure = server._next_failure(infer_role(body) if chat else None)
            if failure is not None and self._failed(failure):
                return
            if path.endswith("/chat/completions"):
                self._chat(body)
            elif path.endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._rerank(body)

        def _chat(self, body: dict[str, Any]) -> None:
            if server.latency:
                server._sleep(server.latency)
            try:
                answer = server._chat_answer(body)
            except Exception as exc:  # noqa: BLE001 - a responder bug becomes a visible 500, not a dead thread
                self._error(500, f"loopback responder failed: {type(exc).__name__}: {exc}", "server_error")
                return
            self._json(200, answer)

        def _failed(self, failure: _Failure) -> bool:
            """Act out one failure; False when the mode still answers normally
            afterwards (a "timeout" whose client waited long enough)."""
            mode = failure.mode
            if mode in {"500", "502", "503", "504"}:
                self._error(int(mode), f"loopback injected {mode}", "server_error")
            elif mode == "429":
                # Retry-After in whole or fractional seconds, as providers send it.
                self._error(
                    429,
                    "loopback injected rate limit",
                    "rate_limit_exceeded",
                    headers={"Retry-After": f"{failure.retry_after:g}"},
                )
            elif mode == "401":
                self._error(401, "Incorrect API key provided.", "invalid_request_error")
            elif mode == "403":
                self._error(403, "Permission denied.", "permission_error")
            elif mode == "timeout":
                server._sleep(server.timeout_sleep)
                self.close_connection = True
                return False
            elif mode == "truncated":
                self.close_connection = True
                self._send(200, b'{"id": "chatcmpl-cut", "choices": [{"mess', length=4096)
            elif mode == "empty":
                self._send(200, b"")
            elif mode == "malformed":
                self._send(200, b"{this is not json")
            elif mode == "wrong_shape":
                self._json(200, {"hello": "not an OpenAI response"})
            return True

        def _embeddings(self, body: dict[str, Any]) -> None:
            raw = body.get("input")
            texts = [raw] if isinstance(raw, str) else raw
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                self._error(400, "input must be a string or a list of strings", "invalid_request_error")
                return
            dims = body.get("dimensions")
            size = int(dims) if isinstance(dims, int) and dims > 0 else 16
            data = [
                {"object": "embedding", "index": i, "embedding": embedding_vector(t, size)}
                for i, t in enumerate(texts)
            ]
            tokens = sum(_count_tokens(t) for t in texts)
            self._json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": str(body.get("model") or server.model),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

        def _rerank(self, body: dict[str, Any]) -> None:
            query = body.get("query")
            docs = body.get("documents")
            if not isinstance(query, str) or not isinstance(docs, list):
                self._error(
                    400, "rerank needs 'query' (string) and 'documents' (list)", "invalid_request_error"
                )
                return
            texts = [d if isinstance(d, str) else str(d.get("text", "")) for d in docs]
            scored = sorted(
                ((i, rerank_score(query, t)) for i, t in enumerate(texts)), key=lambda p: (-p[1], p[0])
            )
            top_n = body.get("top_n")
            if isinstance(top_n, int) and top_n > 0:
                scored = scored[:top_n]
            self._json(
                200,
                {
                    "id": "rerank-loopback",
                    "results": [{"index": i, "relevance_score": s} for i, s in scored],
                    "meta": {"billed_units": {"search_units": 1}},
                },
            )

    return Handler
