"""A real S3 API on loopback for the object-storage tests: ``moto_server``
in a subprocess on a free port, one bucket created, torn down afterwards.

    with moto_s3(bucket, key_id, secret) as options:   # storage_options for KnowledgeBase.open
        KnowledgeBase.open(f"s3://{bucket}/kb", storage_options=options)
    pool.starmap(ingest_at_barrier, ...)   one racing writer per process: "ok ..." or "error: ..."
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def moto_s3(bucket: str, key_id: str, secret: str) -> Iterator[dict[str, str]]:
    """storage_options of a moto S3 server on a free loopback port, ``bucket`` created."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("moto_server did not start")
        urllib.request.urlopen(urllib.request.Request(f"{base}/{bucket}", method="PUT"), timeout=10).read()
        yield {
            "aws_endpoint": base,
            "allow_http": "true",
            "aws_region": "us-east-1",
            "aws_access_key_id": key_id,
            "aws_secret_access_key": secret,
        }
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def ingest_at_barrier(uri: str, options: dict[str, str], folder: str, barrier: Any) -> str:
    """One of several writers racing on object storage (run in a spawned
    process): open, wait for the others, ingest; "ok ..." or "error: <message>"."""
    from selfrag_nb.errors import KnowledgeBaseError
    from selfrag_nb.store.kb import KnowledgeBase

    kb = KnowledgeBase.open(uri, embedder="hashing", storage_options=options)
    barrier.wait()
    try:
        rep = kb.ingest(folder)
    except KnowledgeBaseError as exc:
        return f"error: {exc}"
    return f"ok {len(rep.added)} added, +{rep.chunks_added} chunks"
