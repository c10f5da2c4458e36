"""One-time start-up, done before a question's clock starts and timed apart.

    SelfRAG.ask / Stepper's first stage
      -> start_up(rag)                                  -> Trace.startup (what -> ms)
           rag.runner.start_up()    each model backend's warm_up(): LiteLLM's
                                    import and first-call loading (no request sent)
           the reranker             its warm_up(), or LiteLLM's for a provider
                                    endpoint ("litellm:cohere/...")
           the knowledge base       once per handle: open the table, load the
                                    embedder (MiniLM weights, onnx session), one
                                    search nobody reads; a LiteLLM embedder is
                                    only imported (a warm-up call would be paid)
      -> then the deadline's clock, wall_ms and every stage's latency start

Done inside the first stage, this work landed in that stage's latency
(rewrite's probe search: seconds for a stage that did nothing) and ate the
question's deadline; done here it is its own row in every view. The second
question of a process finds everything warm and records nothing.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selfrag_nb.pipeline import SelfRAG
    from selfrag_nb.store.kb import KnowledgeBase

__all__ = ["start_up"]

_log = logging.getLogger(__name__)

#: Knowledge base handles whose start-up is done (table open, embedder loaded,
#: first search run); the lock makes a concurrent first question wait for it.
_WARM_KBS: weakref.WeakSet[Any] = weakref.WeakSet()
_START_UP_LOCK = threading.Lock()


def _warm_kb(kb: KnowledgeBase, mode: str) -> str:
    """Open the table, load the embedder and run one search nobody reads, so
    the first question's rewrite and retrieve see a warm knowledge base. A
    remote (LiteLLM) embedder is only imported: warming it would be a paid call."""
    from selfrag_nb.store.embedders import LiteLLMEmbedder

    if isinstance(kb.embedder, LiteLLMEmbedder):
        from selfrag_nb.llm.litellm_import import load_litellm

        load_litellm()
        mode = "fts"
    kb.search("start-up", k=1, mode=mode)
    return f"opening the knowledge base ({kb.embedder_name} embedder, first search)"


def _warm_reranker(reranker: Any) -> str:
    """A reranker's own ``warm_up()``, or LiteLLM's start-up for a provider
    endpoint. A cross-encoder still loads on first use: loading it may be a
    download, which is the rerank stage's to report."""
    warm_up = getattr(reranker, "warm_up", None)
    if callable(warm_up):
        return str(warm_up() or "")
    from selfrag_nb.rerankers import ProviderReranker

    if isinstance(reranker, ProviderReranker):
        from selfrag_nb.llm.litellm_import import warm_up_litellm

        return warm_up_litellm(reranker.model)
    return ""


def start_up(rag: SelfRAG) -> dict[str, float]:
    """The one-time work of this process and these objects, timed apart:
    what -> ms ({} when everything is warm). Never raises: what fails here
    fails again, and is reported, in the stage that needs it."""
    done: dict[str, float] = {}
    with _START_UP_LOCK:
        try:
            done |= rag.runner.start_up()
        except Exception:  # noqa: BLE001 - the first call reports a backend that cannot start
            _log.debug("model start-up failed", exc_info=True)
        t0 = time.perf_counter()
        try:
            what = _warm_reranker(rag.reranker)
        except Exception:  # noqa: BLE001 - the rerank stage reports a reranker that cannot start
            _log.debug("reranker start-up failed", exc_info=True)
            what = ""
        if what:
            done[what] = done.get(what, 0.0) + (time.perf_counter() - t0) * 1000
        kb = rag.kb
        try:
            warm = kb in _WARM_KBS
        except TypeError:  # an object that cannot be weakly referenced: warm it each time
            warm = False
        if not warm:
            t0 = time.perf_counter()
            try:
                what = _warm_kb(kb, rag.settings.search_mode)
            except Exception:  # noqa: BLE001 - rewrite/retrieve meet the same error and report it
                _log.debug("knowledge base start-up failed", exc_info=True)
            else:
                done[what] = (time.perf_counter() - t0) * 1000
                with contextlib.suppress(TypeError):
                    _WARM_KBS.add(kb)
    return done
