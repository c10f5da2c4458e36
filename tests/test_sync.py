"""run_sync, the one sync-over-async bridge: with and without a running loop,
on a given background loop, results returned and exceptions propagated."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator

import pytest

from selfrag_nb._sync import run_sync

_REQUEST_ID: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")


async def _answer(value: int = 42) -> tuple[int, str]:
    await asyncio.sleep(0)
    return value, threading.current_thread().name


async def _boom() -> None:
    await asyncio.sleep(0)
    raise KeyError("boom")


def test_without_a_running_loop_runs_here_and_returns_the_result() -> None:
    value, thread = run_sync(_answer())
    assert value == 42
    assert thread == threading.current_thread().name


def test_a_factory_is_called_on_the_loop_that_runs_it() -> None:
    async def bound() -> bool:
        # A Future made by the factory belongs to the running loop, not the caller's.
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        fut.set_result(True)
        return await fut

    assert run_sync(bound) is True
    assert run_sync(lambda: _answer(7))[0] == 7


def test_inside_a_running_loop_runs_on_a_worker_thread() -> None:
    async def notebook_cell() -> tuple[int, str]:
        return run_sync(_answer(5))  # sync call from code already on a loop

    value, thread = asyncio.run(notebook_cell())
    assert value == 5
    assert thread != threading.current_thread().name
    assert thread.startswith("selfrag-sync")


def test_the_callers_context_variables_reach_the_worker() -> None:
    async def read() -> str:
        return _REQUEST_ID.get()

    async def notebook_cell() -> str:
        _REQUEST_ID.set("req-1")
        return run_sync(read())

    assert asyncio.run(notebook_cell()) == "req-1"


def test_an_exception_propagates_with_and_without_a_running_loop() -> None:
    with pytest.raises(KeyError, match="boom"):
        run_sync(_boom())

    async def notebook_cell() -> None:
        run_sync(_boom())

    with pytest.raises(KeyError, match="boom"):
        asyncio.run(notebook_cell())


@pytest.fixture
def background_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="bg-loop", daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=5)
    loop.close()


def test_a_given_loop_runs_the_coroutine_there(background_loop: asyncio.AbstractEventLoop) -> None:
    assert run_sync(_answer(3), loop=background_loop) == (3, "bg-loop")

    async def notebook_cell() -> tuple[int, str]:
        return run_sync(_answer(4), loop=background_loop)

    assert asyncio.run(notebook_cell()) == (4, "bg-loop")
    with pytest.raises(KeyError, match="boom"):
        run_sync(_boom(), loop=background_loop)


def test_waiting_on_a_loop_from_its_own_thread_is_refused_not_a_deadlock() -> None:
    async def on_the_loop() -> None:
        run_sync(_answer(), loop=asyncio.get_running_loop())

    with pytest.raises(RuntimeError, match="its own thread"):
        asyncio.run(on_the_loop())
