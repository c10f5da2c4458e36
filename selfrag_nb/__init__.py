"""selfrag_nb: Self-RAG you can see and steer from a notebook.

    import selfrag_nb as sr
    kb = sr.KnowledgeBase.sample()
    rag = sr.SelfRAG(kb)                 # offline model unless configured
    trace = rag.ask("What is the refund window?", user=sr.User("ana"))

Heavy dependencies (litellm, lancedb, pandas, plotly, pyarrow, numpy) are
imported on first use, never by ``import selfrag_nb``: public names below are
resolved lazily through ``__getattr__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> module that defines it (imported on first attribute access)
_LAZY: dict[str, str] = {
    "KnowledgeBase": "selfrag_nb.store.kb",
    "User": "selfrag_nb.store.types",
    "Hit": "selfrag_nb.store.types",
    "Hits": "selfrag_nb.store.types",
    "IngestReport": "selfrag_nb.store.types",
    "Settings": "selfrag_nb.config",
    "Trace": "selfrag_nb.trace",
    "SelfRAG": "selfrag_nb.pipeline",
    "Stepper": "selfrag_nb.pipeline",
    "OfflineModel": "selfrag_nb.llm.offline",
    "LiteLLMModel": "selfrag_nb.llm.litellm_model",
    "ScriptedModel": "selfrag_nb.testing",
    "PromptLab": "selfrag_nb.display.prompt_lab",
    "questions": "selfrag_nb.eval.questions",
    "evaluate": "selfrag_nb.eval.runner",
    "EvalReport": "selfrag_nb.eval.report",
}

__all__ = ["__version__", *sorted(_LAZY)]

if TYPE_CHECKING:
    from selfrag_nb.config import Settings
    from selfrag_nb.store.kb import KnowledgeBase
    from selfrag_nb.store.types import Hit, Hits, IngestReport, User
    from selfrag_nb.trace import Trace


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfrag_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
