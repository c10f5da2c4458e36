"""selfrag_nb: Self-RAG you can see and steer from a notebook.

    import selfrag_nb as sr
    kb = sr.KnowledgeBase.sample()
    rag = sr.SelfRAG(kb)                 # offline model unless configured
    trace = rag.ask("What is the refund window?", user=sr.User("ana"))
    sr.compare(trace, other_trace)       # side by side, first divergence named
    sr.explore("traces/")                # thousands of answers: table, filters, open one

Heavy dependencies (litellm, lancedb, pandas, plotly, pyarrow, numpy) are
imported on first use, never by ``import selfrag_nb``: public names below are
resolved lazily through ``__getattr__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The error tree is small and import-free: loaded eagerly so that
# ``except sr.SelfRAGError`` never triggers a heavy import.
from selfrag_nb.errors import (
    AccessCheckWarning,
    AccessWideningError,
    ConfigurationError,
    EmbedderError,
    InputError,
    InputTypeError,
    KnowledgeBaseError,
    LabelsError,
    MissingDependencyError,
    ModelError,
    NotFoundError,
    ParseError,
    PathNotFoundError,
    ProviderError,
    QuestionSetError,
    RerankProtocolError,
    SelfRAGError,
    TemplateError,
)

__version__ = "0.1.0"  # the one place: pyproject.toml reads it (dynamic version)

# name -> module that defines it (imported on first attribute access)
_LAZY: dict[str, str] = {
    "KnowledgeBase": "selfrag_nb.store.kb",
    "User": "selfrag_nb.store.types",
    "Hit": "selfrag_nb.store.types",
    "Hits": "selfrag_nb.store.types",
    "IngestReport": "selfrag_nb.store.types",
    "AclChange": "selfrag_nb.store.types",
    "IndexPolicy": "selfrag_nb.store.types",
    "OptimizeReport": "selfrag_nb.store.types",
    "Settings": "selfrag_nb.config",
    "Trace": "selfrag_nb.trace",
    "SelfRAG": "selfrag_nb.pipeline",
    "Stepper": "selfrag_nb.pipeline",
    "OfflineModel": "selfrag_nb.llm.offline",
    "LiteLLMModel": "selfrag_nb.llm.litellm_model",
    "LocalModel": "selfrag_nb.llm.local_model",
    "ScriptedModel": "selfrag_nb.testing",
    "PromptLab": "selfrag_nb.promptlab",
    "Labels": "selfrag_nb.labels",
    "questions": "selfrag_nb.eval.questions",
    "calibrate": "selfrag_nb.eval.calibrate",
    "view": "selfrag_nb._displayable",
    "evaluate": "selfrag_nb.eval.runner",
    "EvalReport": "selfrag_nb.eval.report",
    "compare": "selfrag_nb.comparison",
    "Comparison": "selfrag_nb.comparison",
    "explore": "selfrag_nb.explorer",
    "Explorer": "selfrag_nb.explorer",
    "export_otel": "selfrag_nb.otel",
    # extension points: what an outside backend implements and how it registers
    "Model": "selfrag_nb.llm.base",
    "register_model": "selfrag_nb.llm.registry",
    "Embedder": "selfrag_nb.store.embedders",
    "register_embedder": "selfrag_nb.store.embedders",
    "Reranker": "selfrag_nb.rerankers",
    "register_reranker": "selfrag_nb.rerankers",
}

__all__ = [
    "AccessCheckWarning",
    "AccessWideningError",
    "AclChange",
    "Comparison",
    "ConfigurationError",
    "Embedder",
    "EmbedderError",
    "EvalReport",
    "Explorer",
    "Hit",
    "Hits",
    "IndexPolicy",
    "IngestReport",
    "InputError",
    "InputTypeError",
    "KnowledgeBase",
    "KnowledgeBaseError",
    "Labels",
    "LabelsError",
    "LiteLLMModel",
    "LocalModel",
    "MissingDependencyError",
    "Model",
    "ModelError",
    "NotFoundError",
    "OfflineModel",
    "OptimizeReport",
    "ParseError",
    "PathNotFoundError",
    "PromptLab",
    "ProviderError",
    "QuestionSetError",
    "RerankProtocolError",
    "Reranker",
    "ScriptedModel",
    "SelfRAG",
    "SelfRAGError",
    "Settings",
    "Stepper",
    "TemplateError",
    "Trace",
    "User",
    "__version__",
    "calibrate",
    "compare",
    "evaluate",
    "explore",
    "export_otel",
    "questions",
    "register_embedder",
    "register_model",
    "register_reranker",
    "view",
]

if TYPE_CHECKING:  # for type checkers and IDEs only; runtime goes through __getattr__
    from selfrag_nb._displayable import view as view
    from selfrag_nb.comparison import Comparison as Comparison
    from selfrag_nb.comparison import compare as compare
    from selfrag_nb.config import Settings as Settings
    from selfrag_nb.eval.calibrate import calibrate as calibrate
    from selfrag_nb.eval.questions import questions as questions
    from selfrag_nb.eval.report import EvalReport as EvalReport
    from selfrag_nb.eval.runner import evaluate as evaluate
    from selfrag_nb.explorer import Explorer as Explorer
    from selfrag_nb.explorer import explore as explore
    from selfrag_nb.labels import Labels as Labels
    from selfrag_nb.llm.base import Model as Model
    from selfrag_nb.llm.litellm_model import LiteLLMModel as LiteLLMModel
    from selfrag_nb.llm.local_model import LocalModel as LocalModel
    from selfrag_nb.llm.offline import OfflineModel as OfflineModel
    from selfrag_nb.llm.registry import register_model as register_model
    from selfrag_nb.otel import export_otel as export_otel
    from selfrag_nb.pipeline import SelfRAG as SelfRAG
    from selfrag_nb.pipeline import Stepper as Stepper
    from selfrag_nb.promptlab import PromptLab as PromptLab
    from selfrag_nb.rerankers import Reranker as Reranker
    from selfrag_nb.rerankers import register_reranker as register_reranker
    from selfrag_nb.store.embedders import Embedder as Embedder
    from selfrag_nb.store.embedders import register_embedder as register_embedder
    from selfrag_nb.store.kb import KnowledgeBase as KnowledgeBase
    from selfrag_nb.store.types import AclChange as AclChange
    from selfrag_nb.store.types import Hit as Hit
    from selfrag_nb.store.types import Hits as Hits
    from selfrag_nb.store.types import IndexPolicy as IndexPolicy
    from selfrag_nb.store.types import IngestReport as IngestReport
    from selfrag_nb.store.types import OptimizeReport as OptimizeReport
    from selfrag_nb.store.types import User as User
    from selfrag_nb.testing import ScriptedModel as ScriptedModel
    from selfrag_nb.trace import Trace as Trace


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'selfrag_nb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
