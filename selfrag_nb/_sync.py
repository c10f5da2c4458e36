"""The one bridge from synchronous code to a coroutine (``ask``, ``evaluate``,
``LiteLLMModel.complete``, ``ModelReranker.rank``).

    run_sync(work, *, loop=None)     work: a coroutine, or a callable returning one
      loop given (a loop running forever on another thread, e.g. LiteLLM's)
          -> submitted there; this thread blocks for the result
             (called from that loop's own thread: RuntimeError, not a deadlock)
      no event loop running in this thread (script, CLI, test)
          -> asyncio.run(work) here
      an event loop already running in this thread (Jupyter, marimo, async code)
          -> a worker thread, the caller's contextvars copied in
             -> asyncio.run(work) on the worker's own fresh loop
          this thread blocks until it is done
    = the coroutine's result, or its exception raised again in the caller

Why a thread when a loop is running: a running loop cannot be re-entered.
``asyncio.run`` refuses ("cannot be called from a running event loop"),
``run_until_complete`` fails ("This event loop is already running"), and
scheduling the coroutine on that loop then blocking its thread waiting for
it would deadlock. Patching the loop to be re-entrant (nest_asyncio) changes
it for every library in the process. A fresh loop on a worker thread leaves
the notebook's loop alone; it is blocked only for the duration of a call that
is synchronous anyway.

Leaf module: standard library only, so every layer may import it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(
    work: Awaitable[T] | Callable[[], Awaitable[T]],
    *,
    loop: asyncio.AbstractEventLoop | None = None,
) -> T:
    """Run ``work`` to completion from synchronous code and return its result
    (its exception propagates). Works whether or not this thread already runs
    an event loop. ``work`` may be a callable returning the awaitable: it is
    then called on the loop that runs it, so anything it binds to a loop binds
    to that one. ``loop``: run on this loop, already running forever on
    another thread, instead of a fresh one."""
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None

    if loop is not None and loop is running:
        # Blocking this thread would stop the very loop we wait for.
        if inspect.iscoroutine(work):
            work.close()  # refused, not forgotten: no extra "never awaited" warning
        raise RuntimeError(
            "run_sync: cannot wait for a loop from its own thread; await the coroutine instead"
        )

    async def main() -> T:
        return await (work() if callable(work) else work)

    if loop is not None:
        return asyncio.run_coroutine_threadsafe(main(), loop).result()
    if running is None:
        return asyncio.run(main())
    # Same context as the no-loop path, where the task copies this thread's
    # context: contextvars set by the caller are seen by the coroutine.
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="selfrag-sync") as pool:
        return pool.submit(context.run, asyncio.run, main()).result()
