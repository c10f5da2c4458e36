"""LoopbackServer(slots=N) plays a local model server: at most N chat
requests are answered at once, the others wait for a slot, and
``max_in_flight`` counts every request received and not yet answered (the
ones waiting included), so a test sees what a client sent at once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from selfrag_nb.testing import LoopbackServer

BODY = {"model": "loopback", "messages": [{"role": "user", "content": "hi"}]}


def _post(server: LoopbackServer) -> tuple[int, float]:
    r = httpx.post(f"{server.url}/chat/completions", json=BODY, timeout=10)
    return r.status_code, time.monotonic()


def test_one_slot_answers_one_at_a_time_and_counts_the_waiting() -> None:
    n, latency = 4, 0.5
    with LoopbackServer(slots=1, latency=latency) as server:
        # Clients made first and released together, so all four requests are
        # sent well within one answer's latency, even on a loaded machine.
        clients = [httpx.Client(timeout=30) for _ in range(n)]
        gate = threading.Barrier(n)

        def send(client: httpx.Client) -> int:
            gate.wait()
            return client.post(f"{server.url}/chat/completions", json=BODY).status_code

        t0 = time.monotonic()
        with ThreadPoolExecutor(n) as pool:
            statuses = list(pool.map(send, clients))
        took = time.monotonic() - t0
        peak = server.max_in_flight
        for c in clients:
            c.close()
    assert statuses == [200] * n
    assert took >= n * latency - 0.05  # one after another
    assert peak == n  # all were sent at once: the server counted the waiting ones


def test_without_slots_every_request_is_answered_at_once() -> None:
    with LoopbackServer(latency=0.6) as server:
        t0 = time.monotonic()
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda _: _post(server), range(4)))
        took = time.monotonic() - t0
    assert took < 4 * 0.6


def test_an_injected_failure_waits_for_its_slot_too() -> None:
    with LoopbackServer(slots=1) as server:
        server.fail("500")
        status, _ = _post(server)
        assert status == 500
        assert server.in_flight == 0
        assert _post(server)[0] == 200


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "2"])
def test_slots_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match="slots"):
        LoopbackServer(slots=bad)  # type: ignore[arg-type]  # the wrong types are the point
