"""LiteLLM's one-time start-up: the import and its first-call lazy loading.

    load_litellm()          import litellm once per process, quietly, with the
                            bundled price map (no network at import time)
    warm_up_litellm(model)  load_litellm() + one mock completion (no network):
                            LiteLLM loads its provider code lazily on the first
                            call, about a second after the import's seconds
      -> "importing LiteLLM" the first time in the process, "" afterwards

Both are start-up cost, not a call's: the pipeline runs ``warm_up_litellm``
(through ``LiteLLMModel.warm_up``) before a question's clock starts and
records it as the Trace's start-up, so the first call's latency is the call.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from selfrag_nb.errors import ModelError
from selfrag_nb.llm.pricing import sync_litellm

__all__ = ["load_litellm", "warm_up_litellm"]

_log = logging.getLogger(__name__)
_LOAD_LOCK = threading.Lock()
# Process-wide singletons, filled on first use: the litellm module, and
# whether its first-call loading has been done.
_STATE: dict[str, Any] = {}


def load_litellm() -> Any:
    """Import LiteLLM once, quietly and without network access."""
    if "litellm" in _STATE:
        return _STATE["litellm"]
    with _LOAD_LOCK:
        if "litellm" not in _STATE:
            # The bundled price map, not a download at import time.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            try:
                import litellm
            except ImportError as exc:  # pragma: no cover - litellm is a core dependency
                # no model: LiteLLM is loaded once for every model, before any is named
                raise ModelError("LiteLLM is not installed: pip install selfrag-nb") from exc
            litellm.suppress_debug_info = True
            litellm.set_verbose = False  # type: ignore[attr-defined]  # re-exported by litellm without __all__
            # ERROR, not WARNING: LiteLLM warns on every event-loop change
            # (one per asyncio.run in a notebook cell), which is noise to users.
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
                logging.getLogger(name).setLevel(logging.ERROR)
            _STATE["litellm"] = litellm
            sync_litellm()
    return _STATE["litellm"]


def warm_up_litellm(model: str) -> str:
    """Import LiteLLM and let it load its call path once (a mock completion:
    no request leaves the process). What was done, or "" when already warm."""
    if _STATE.get("warm"):
        return ""
    with _LOAD_LOCK:
        cold = "litellm" not in _STATE
    litellm = load_litellm()
    with _LOAD_LOCK:
        if _STATE.get("warm"):
            return "importing LiteLLM" if cold else ""
        try:
            litellm.completion(
                model=model, messages=[{"role": "user", "content": "warm-up"}], mock_response="ok"
            )
        except Exception:  # noqa: BLE001 - warming is an optimisation; the real call reports its own errors
            _log.debug("LiteLLM warm-up completion for %s failed", model, exc_info=True)
        _STATE["warm"] = True
    return "importing LiteLLM"
