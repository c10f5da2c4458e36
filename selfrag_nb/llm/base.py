"""The one protocol every model speaks.

    stage --(role, inputs)--> ModelRunner --render prompt--> ModelRequest
          ModelRequest --> Model.complete / acomplete --> Completion (raw text, usage)
          ModelRunner --parse/repair/default--> (parsed output, ModelCall record)

A ``Model`` only turns a request into raw text plus usage. Parsing, the one
repair attempt, conservative defaults, caching and record/replay live in the
runner and wrappers around it, so every backend (LiteLLM, offline, scripted,
cassette) gets them for free.
"""

from __future__ import annotations

import contextvars
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from selfrag_nb.llm.schemas import Message, Role

__all__ = ["PROVIDER_CONCURRENCY", "Completion", "Model", "ModelRequest"]

#: Settings.provider_concurrency of the question being run: the pipeline sets
#: it around each stage (a context variable, so the stages' tasks and the
#: reranker see it without every call site passing it); ModelRunner copies it
#: onto each ModelRequest. None: the backend's own default.
PROVIDER_CONCURRENCY: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "selfrag_nb_provider_concurrency", default=None
)


class ModelRequest(BaseModel):
    """What a model is asked. ``inputs`` is the stage's structured input (see
    ``schemas.INPUTS``); ``output_schema`` is the pydantic class the answer must
    match (its JSON schema is sent as ``response_format`` where supported)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    role: Role
    messages: list[Message]
    output_schema: type[BaseModel]
    inputs: BaseModel
    prompt_hash: str = ""
    #: Per-call timeout in seconds (None: the model's default).
    timeout: float | None = None
    #: Absolute time.monotonic() by which the whole question must finish.
    deadline: float | None = None
    #: True on the one repair attempt after a parse failure.
    repair: bool = False
    #: Calls allowed in flight at once to this model's provider, process-wide
    #: (Settings.provider_concurrency; None: the backend's default). Only
    #: backends that reach a provider (LiteLLMModel) enforce it.
    provider_concurrency: int | None = None


class Completion(BaseModel):
    """What a model answered. ``cost`` is None when unknown (never 0 for
    "we do not know"). ``fallback`` says what was done instead, and why, when
    the call did not go as asked (retry exhausted, timeout, ...)."""

    model_config = ConfigDict(frozen=True)

    raw: str
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost: float | None = None
    latency_ms: float = 0.0
    retries: int = 0
    cached: bool = False
    offline: bool = False
    fallback: str | None = None
    #: Set instead of raising when the call failed (timeout, HTTP error, ...):
    #: the runner records it and applies the role's conservative default.
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Model(Protocol):
    """A model backend. ``name`` is what traces show; ``offline`` is True for
    models that read the structured inputs instead of the prompt."""

    name: str
    offline: bool

    def complete(self, request: ModelRequest) -> Completion: ...

    async def acomplete(self, request: ModelRequest) -> Completion: ...
