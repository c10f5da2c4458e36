"""ScriptedModel: a ``Model`` that answers from per-role queues (no network).

    runner --ModelRequest(role, messages, inputs)--> ScriptedModel
       .requests.append(request)                    (what the model was shown)
       queue[role] (FIFO) -> else default[role] -> else ModelError naming the role
       latency > request timeout / deadline left?   -> sleep that long, Completion.error "Timeout"
                                                       (honor_timeout=False: overrun instead)
       callable(request) -> one of:
         str -> raw | dict/list -> JSON | Exception -> Completion.error
    = Completion(raw, tokens, cost, latency)

      .enqueue(role, *responses)   appended to the role's queue
      .default(role, response)     used when the role's queue is empty
      .pending(role=None)          responses not consumed yet

The runner treats it like any backend: prompts are rendered, output parsed,
and the one repair call consumes the next scripted response of the same
role. Tests assert on ``.requests`` to check what a model was shown (for
example that no unauthorised text reached it).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, Union

from selfrag_nb.errors import InputError, InputTypeError, ModelError
from selfrag_nb.llm.base import Completion, ModelRequest
from selfrag_nb.llm.schemas import ROLES

__all__ = ["ScriptedModel", "ScriptedResponse"]

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
            raise InputError(f"latency must be >= 0 seconds, got {latency}")
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
            raise InputError(f"unknown role {role!r}; roles are: {', '.join(ROLES)}")

    def enqueue(self, role: str, *responses: ScriptedResponse) -> ScriptedModel:
        """Append responses to ``role``'s queue (consumed first in, first out)."""
        self._check_role(role)
        if not responses:
            raise InputError("enqueue needs at least one response")
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
            f"(call .enqueue({request.role!r}, ...) or .default({request.role!r}, ...))",
            model=self.name,
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
            raise InputTypeError(
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
