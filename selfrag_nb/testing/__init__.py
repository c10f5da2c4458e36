"""Test doubles designed with the code: a scripted model and a real loopback server, never a mock of the thing under test.

    selfrag_nb.testing
      scripted.py    ScriptedModel    a Model answering from per-role queues (no network)
                       .enqueue(role, *responses)   str | dict/list (JSON) | Exception | callable(request)
                       .default(role, response)     used when the role's queue is empty
                       .requests                    every ModelRequest received, in order
      loopback.py    LoopbackServer   a real OpenAI-compatible HTTP server on 127.0.0.1
                       .fail(mode, times, role=)    FAILURE_MODES acted out on the next POSTs
                       .reply(fn)                   fn(body) -> assistant content
      responses.py   what the server answers: infer_role, default_responder,
                     embedding_vector, rerank_score (deterministic, offline)

Both doubles are public (``selfrag_nb.testing``) so users can test their own
pipelines, prompts and notebooks the way this package tests itself. Every
name is importable from this package; the modules are an implementation
detail.
"""

from __future__ import annotations

from selfrag_nb.testing.loopback import FAILURE_MODES, LoopbackServer, ReceivedRequest
from selfrag_nb.testing.responses import default_responder, embedding_vector, infer_role, rerank_score
from selfrag_nb.testing.scripted import ScriptedModel, ScriptedResponse

__all__ = [
    "FAILURE_MODES",
    "LoopbackServer",
    "ReceivedRequest",
    "ScriptedModel",
    "ScriptedResponse",
    "default_responder",
    "embedding_vector",
    "infer_role",
    "rerank_score",
]
