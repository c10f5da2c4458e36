"""LoopbackServer: a real OpenAI-compatible HTTP server on 127.0.0.1.

    test / benchmark / notebook
       LiteLLMModel("openai/x", api_base=server.url)  --HTTP-->  127.0.0.1:PORT
                                                                |
    LoopbackServer (ThreadingHTTPServer, one thread per connection, keep-alive)
       every request is recorded in .requests with auth headers REDACTED
       POST with a bad / empty JSON body -> 400;  unknown route -> 404
       POST any route below       -> next queued failure (fail(); role= : chat of that role only), acted out:
                                     500/502/503/504 | 429 + Retry-After | 401 | 403 |
                                     timeout (stall, then answer) | truncated | empty | malformed | wrong_shape
       POST /v1/chat/completions  -> [slots: wait for one of `slots` slots] -> latency ->
                                     responder(body) -> OpenAI JSON (+ usage);
                                     .in_flight / .max_in_flight count chat requests received
                                     and not yet answered (queued for a slot included)
       POST /v1/embeddings        -> deterministic vectors (sha256 of the text)
       POST /v1/rerank, /rerank   -> word-overlap relevance scores
       GET  /v1/models            -> one model
    stop()  wakes stalled handlers and closes every open connection

A real server on a real socket, so the real LiteLLM/httpx client code path
(connection handling, status mapping, Retry-After, timeouts, body parsing)
is what the tests exercise. Stdlib only: no new dependency. The answers
themselves come from ``selfrag_nb.testing.responses``.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from selfrag_nb.errors import InputError
from selfrag_nb.llm.schemas import ROLES
from selfrag_nb.testing.responses import (
    count_tokens,
    default_responder,
    embedding_vector,
    infer_role,
    message_text,
    rerank_score,
)

__all__ = ["FAILURE_MODES", "LoopbackServer", "ReceivedRequest"]

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
    never waits for it). ``slots``: answer at most this many chat requests at
    once, the others wait for a free slot, as a local model server
    does (llama.cpp's ``--parallel``, Ollama's ``OLLAMA_NUM_PARALLEL``); None:
    every request at once. A request the client gave up on still holds its
    slot until answered, as on those servers.
    """

    def __init__(
        self,
        *,
        latency: float = 0.0,
        responder: Callable[[dict[str, Any]], str] | None = None,
        model: str = "loopback",
        timeout_sleep: float = 30.0,
        slots: int | None = None,
    ) -> None:
        if latency < 0:
            raise InputError(f"latency must be >= 0 seconds, got {latency}")
        if slots is not None and (isinstance(slots, bool) or not isinstance(slots, int) or slots < 1):
            raise InputError(f"slots must be None or an int >= 1, got {slots!r}")
        self.slots = slots
        # Waiters poll it in small steps, so a stopping server frees them.
        self._slot_gate = threading.Semaphore(slots) if slots is not None else None
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
        #: Chat requests received and not yet answered (waiting for a slot
        #: included), and the most at once since start/clear.
        self.in_flight = 0
        self.max_in_flight = 0

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
            raise InputError(f"unknown failure mode {mode!r}; expected one of {', '.join(FAILURE_MODES)}")
        if times < 1:
            raise InputError(f"times must be >= 1, got {times}")
        if role is not None and role not in ROLES:
            raise InputError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")
        with self._lock:
            self._failures.extend(_Failure(mode, retry_after, role) for _ in range(times))

    def clear(self) -> None:
        """Forget received requests and queued failures."""
        with self._lock:
            self.requests.clear()
            self._failures.clear()
            self.max_in_flight = self.in_flight

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

    def _enter_chat(self, entering: bool) -> None:
        with self._lock:
            self.in_flight += 1 if entering else -1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _sleep(self, seconds: float) -> None:
        # Small steps: a stopping server wakes its sleepers at once.
        self._stopping.wait(seconds)

    def _chat_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        content = self._responder(body)
        prompt_tokens = count_tokens(message_text(body))
        completion_tokens = count_tokens(content)
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
            if path.endswith("/chat/completions"):
                self._chat(body)
                return
            failure = server._next_failure(None)
            if failure is not None and self._failed(failure):
                return
            if path.endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._rerank(body)

        def _chat(self, body: dict[str, Any]) -> None:
            # In flight from receipt (a request queued for a slot is one the
            # client has sent), counted out before the answer is written: the
            # client may send its next request as soon as it reads this one.
            server._enter_chat(True)
            gate = server._slot_gate
            if gate is not None:
                while not gate.acquire(timeout=0.05):
                    if server._stopping.is_set():
                        server._enter_chat(False)
                        return
            try:
                failure = server._next_failure(infer_role(body))
                if failure is not None and failure.mode != "timeout":
                    server._enter_chat(False)  # answered now, with the failure
                    self._failed(failure)
                    return
                if failure is not None:
                    self._failed(failure)  # "timeout": stall, then answer as usual
                try:
                    if server.latency:
                        server._sleep(server.latency)
                    answer = server._chat_answer(body)
                except Exception as exc:  # noqa: BLE001 - a responder bug becomes a visible 500, not a dead thread
                    server._enter_chat(False)
                    self._error(
                        500, f"loopback responder failed: {type(exc).__name__}: {exc}", "server_error"
                    )
                    return
                server._enter_chat(False)
                self._json(200, answer)
            finally:
                if gate is not None:
                    gate.release()

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
            tokens = sum(count_tokens(t) for t in texts)
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
