"""The one event loop LiteLLM ever sees, and the provider limit that lives on it.

    any caller's loop (a notebook's, the fresh loop of a sync ``ask`` in a
    worker thread, ``evaluate``'s workers)
      on_litellm_loop(coro) --run_coroutine_threadsafe--> background loop thread
        provider_slots(model, api_base).acquire(limit)   at most ``limit`` in flight
        litellm.acompletion(...)                          per endpoint, process-wide
        release                                           wakes waiters; each re-checks

Why one loop: LiteLLM 1.110 keeps a process-wide logging worker and HTTP
clients bound to the loop that used them first. Why the limiter lives on it:
every LiteLLM call already passes through this loop's single thread, so a
plain counter with asyncio waiters is shared by all callers without a lock,
and waiting for a slot blocks no thread (a threading.Semaphore would block the
callers' event loops, or need a thread per waiting call). The limit comes with
each acquire, so pipelines with different ``provider_concurrency`` share one
count and each waits until fewer than its own limit are in flight.

    default_concurrency(model, api_base)  the limit when nobody says: 1 for a
                                          server on this machine (127.0.0.1,
                                          localhost, ::1, 0.0.0.0; "ollama/..."
                                          without api_base), 16 for any other

Why 1 for a local server: llama.cpp's server and Ollama answer one request at
a time unless started with more slots (``--parallel N``,
``OLLAMA_NUM_PARALLEL``); requests beyond that wait in the server's queue
while their client-side timeout runs, so ten grade calls sent at once time
out, are retried into the same queue, and use up the question's deadline.
Waiting here instead starts each call's timeout when its turn comes.
"""

from __future__ import annotations

import asyncio
import ipaddress
import threading
from collections import deque
from collections.abc import Coroutine
from typing import Any, TypeVar
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_PROVIDER_CONCURRENCY",
    "LOCAL_PROVIDER_CONCURRENCY",
    "NoSlotError",
    "ProviderSlots",
    "background_loop",
    "default_concurrency",
    "is_local_endpoint",
    "on_litellm_loop",
    "provider_slots",
]

T = TypeVar("T")

#: Calls in flight per remote provider endpoint when nobody says otherwise.
DEFAULT_PROVIDER_CONCURRENCY = 16
#: ... and per endpoint on this machine (a local model server's one slot).
LOCAL_PROVIDER_CONCURRENCY = 1


def is_local_endpoint(api_base: str | None) -> bool:
    """True when ``api_base`` names this machine: localhost, a loopback
    address (127.0.0.0/8, ::1) or the unspecified address (0.0.0.0, ::)."""
    if not api_base:
        return False
    text = api_base if "//" in api_base else f"//{api_base}"
    try:
        host = urlsplit(text).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


#: LiteLLM providers whose default api_base is on this machine (Ollama's
#: http://localhost:11434).
_LOCAL_PROVIDERS = frozenset({"ollama", "ollama_chat"})


def default_concurrency(model: str, api_base: str | None) -> int:
    """The provider limit of an endpoint nobody configured (see the module
    docstring): a local server's one slot, else the remote default."""
    local = is_local_endpoint(api_base) or (
        api_base is None and model.split("/", 1)[0].lower() in _LOCAL_PROVIDERS
    )
    return LOCAL_PROVIDER_CONCURRENCY if local else DEFAULT_PROVIDER_CONCURRENCY


# The background loop and the limiters of the endpoints called on it.
_STATE: dict[str, Any] = {}


_LOOP_LOCK = threading.Lock()


def background_loop() -> asyncio.AbstractEventLoop:
    with _LOOP_LOCK:
        loop: asyncio.AbstractEventLoop | None = _STATE.get("loop")
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="selfrag-nb-litellm", daemon=True).start()
            _STATE["loop"] = loop
            _STATE["slots"] = {}  # the limiters belong to the loop that uses them
        return loop


class ProviderSlots:
    """Calls in flight to one provider endpoint (background loop only)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self, limit: int) -> None:
        while self.in_flight >= limit:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.in_flight += 1

    def release(self) -> None:
        self.in_flight -= 1
        # Wake every waiter: each re-checks against its own limit.
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)


def provider_slots(model: str, api_base: str | None) -> ProviderSlots:
    """The limiter of one endpoint (call on the background loop only)."""
    registry: dict[tuple[str, str | None], ProviderSlots] = _STATE.setdefault("slots", {})
    key = (model, api_base)
    if key not in registry:
        registry[key] = ProviderSlots()
    return registry[key]


class NoSlotError(Exception):
    """The deadline passed while waiting for a provider slot."""


async def on_litellm_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the one loop LiteLLM ever sees. LiteLLM 1.110 keeps
    a process-wide logging worker and HTTP clients bound to the loop that
    used them first: calls from a second loop (a notebook's, one
    ``asyncio.run`` per question) restart that worker each time and spill
    "Task exception was never retrieved" errors. Cancelling the caller
    cancels the call on the LiteLLM loop too."""
    loop = background_loop()
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))
