"""Model names: how ``SelfRAG(model="...")`` turns a string into a Model.

    "offline" / None      -> OfflineModel                 (registered here, like any other)
    "<name>:<argument>"   -> the factory registered as <name>, called (argument, options)
    "<name>"              -> the same factory, argument ""
    "litellm:<model>"     -> LiteLLMModel(<model>)        (explicit, also registered here)
    anything else         -> LiteLLMModel(spec)           ("openai/gpt-4o-mini", "ollama/llama3")

Built-in backends register the same way an outside one does (as embedders and
rerankers do: store/embedders.py, rerankers.py)::

    sr.register_model("echo", lambda arg, options: EchoModel(arg))
    rag = sr.SelfRAG(kb, model="echo:loud")

A registered name wins over LiteLLM's spelling of the same string: a LiteLLM
model is ``provider/model``, so a name without ``/`` or ``:`` cannot shadow one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.llm.base import Model

__all__ = ["ModelFactory", "ModelOptions", "available_models", "register_model", "resolve_model"]


@dataclass(frozen=True)
class ModelOptions:
    """What ``SelfRAG(...)`` passes to every model factory."""

    api_base: str | None = None
    api_key: str | None = None
    timeout: float = 30.0


ModelFactory = Callable[[str, ModelOptions], Model]

_REGISTRY: dict[str, ModelFactory] = {}
_LOCK = threading.Lock()


def register_model(name: str, factory: ModelFactory, *, replace: bool = False) -> None:
    """Make ``model="name"`` (or ``"name:argument"``) resolve to ``factory(argument, options)``."""
    if not isinstance(name, str) or not name or name != name.strip() or any(c in name for c in ":/"):
        raise InputError(f"model name must be a non-blank word without ':' or '/', got {name!r}")
    if not callable(factory):
        raise InputTypeError(f"register_model({name!r}, ...): the factory must be callable")
    with _LOCK:
        if name in _REGISTRY and not replace:
            raise InputError(f"model {name!r} is already registered (pass replace=True to override)")
        _REGISTRY[name] = factory


def available_models() -> list[str]:
    """Registered model names (any other string goes to LiteLLM)."""
    return sorted(_REGISTRY)


def resolve_model(spec: str, options: ModelOptions, what: str = "model") -> Model:
    """The Model a name stands for (see the module docstring)."""
    if not spec.strip():
        raise InputError(f"{what}: empty model name; use None for the offline model")
    name, _, arg = spec.partition(":")
    factory = _REGISTRY.get(name.strip())
    if factory is None:
        from selfrag_nb.llm.litellm_model import LiteLLMModel

        return LiteLLMModel(spec, api_base=options.api_base, api_key=options.api_key, timeout=options.timeout)
    model = factory(arg, options)
    if not isinstance(model, Model):
        raise InputTypeError(
            f"{what}: the factory registered as {name!r} returned {type(model).__name__}, "
            "not a Model (name, offline, complete, acomplete)"
        )
    return model


def _offline(arg: str, options: ModelOptions) -> Model:
    if arg:
        raise InputError(f"the offline model takes no argument, got 'offline:{arg}'")
    from selfrag_nb.llm.offline import OfflineModel

    return OfflineModel()


def _litellm(arg: str, options: ModelOptions) -> Model:
    if not arg.strip():
        raise InputError(
            "'litellm:' needs a LiteLLM model after the colon, e.g. 'litellm:openai/gpt-4o-mini'"
        )
    from selfrag_nb.llm.litellm_model import LiteLLMModel

    return LiteLLMModel(arg, api_base=options.api_base, api_key=options.api_key, timeout=options.timeout)


register_model("offline", _offline)
register_model("litellm", _litellm)
