"""The Ray engine of evaluate: questions answered by Ray actors, rows written here.

    evaluate(rag, questions, variants, engine="ray", workers=N, concurrency=C)
      each variant's pipeline -> spec_of(rag) -> RagSpec (plain configuration:
          knowledge base uri + storage options + embedder name, model string per
          role, api_base, settings, reranker name, prompt language + edits)
      N actors (_Answerer, async, max_concurrency = ceil(C / N)) on the cluster
          each rebuilds every variant's SelfRAG from its spec once (build())
      runner.aevaluate's C job pullers, unchanged, send job i to actor i % N:
          actor: runner.answer(rag, question) -> EvalRow (+ trace JSON when traces=True)
      -> rows stream back to the driver, which writes rows.jsonl, traces/ and
         failures.parquet exactly as in-process: one report, the same files

Why a specification and not the pipeline object: a SelfRAG holds open
LanceDB handles, HTTP clients and caches that must not be pickled (and a
worker on another machine could not use them); the configuration is a few
strings, and the worker opens its own knowledge base and clients. Only what a
string can name travels: models given as objects (a ScriptedModel, a custom
backend) and rerankers given as objects are refused with the reason, and the
response cache / cassette of the driver's runner stays on the driver.

At most C questions are in flight in total (the pullers) and at most
ceil(C / N) on one actor. An actor that dies is restarted by Ray and its
question retried (RETRIES times); a question that still fails becomes its
failure row, like any other exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import InputError, InputTypeError

if TYPE_CHECKING:
    from selfrag_nb.eval.metrics import EvalRow
    from selfrag_nb.eval.questions import Question

__all__ = ["RETRIES", "ActorPool", "RagSpec", "build", "spec_of"]

#: Restarts of a dead actor and retries of its question.
RETRIES = 2


@dataclass(frozen=True)
class RagSpec:
    """Everything a worker needs to rebuild one variant's SelfRAG. Credentials
    (storage options, the API key) are kept out of repr."""

    kb_uri: str
    embedder: str
    models: dict[str, str]
    settings: dict[str, Any]
    reranker: str
    prompts_lang: str
    prompt_edits: dict[str, str]
    language: str | None = None
    api_base: str | None = None
    timeout: float = 30.0
    storage_options: dict[str, str] | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)


def _model_string(model: Any, role: str) -> tuple[str, Any]:
    """(string naming ``model`` for a worker, the LiteLLM model or None)."""
    from selfrag_nb.llm.cassette import CassetteModel
    from selfrag_nb.llm.litellm_model import LiteLLMModel
    from selfrag_nb.llm.offline import OfflineModel

    while hasattr(model, "inner"):  # the response cache / cassette wrap the model
        if isinstance(model, CassetteModel):
            raise InputError(
                "engine='ray' cannot record or replay a cassette on workers (the file is the "
                "driver's); use engine='local' with a cassette"
            )
        model = model.inner
    if isinstance(model, OfflineModel):
        return "offline", None
    if isinstance(model, LiteLLMModel):
        return model.name, model
    raise InputTypeError(
        f"engine='ray' rebuilds the pipeline on each worker from its configuration, and the "
        f"{role!r} model is a {type(model).__name__} object: name it by a LiteLLM model string "
        "(e.g. 'openai/gpt-4o-mini' or a LiteLLM proxy model) or 'offline', or use engine='local'"
    )


def spec_of(rag: Any) -> RagSpec:
    """The configuration of ``rag`` (a SelfRAG) as plain data; InputError /
    InputTypeError naming what cannot travel to a worker."""
    from selfrag_nb.llm.schemas import ROLES
    from selfrag_nb.pipeline import SelfRAG
    from selfrag_nb.rerankers import available_rerankers

    if not isinstance(rag, SelfRAG):
        raise InputTypeError(f"engine='ray' evaluates SelfRAG pipelines, got {type(rag).__name__}")
    runner = rag.runner
    models: dict[str, str] = {}
    api_base = runner.api_base
    api_key = runner._api_key
    timeout = runner.timeout
    for role in ROLES:
        name, lite = _model_string(runner.model_for(role), role)
        models[role] = name
        if lite is not None:
            # one api_base / key / timeout per pipeline: the runner's, else the model's own
            api_base = api_base or lite.api_base
            api_key = api_key or lite._api_key
    registered = rag.reranker_name.partition(":")[0] in available_rerankers()
    if not registered:
        raise InputTypeError(
            f"engine='ray' rebuilds the reranker from its name, and {rag.reranker_name!r} is not a "
            f"registered reranker ({', '.join(available_rerankers())}); register it on the workers "
            "(register_reranker) or use engine='local'"
        )
    kb = rag.kb
    prompts = rag.prompts
    return RagSpec(
        kb_uri=str(kb.path),
        embedder=str(kb.embedder_name),
        models=models,
        settings=rag.settings.model_dump(mode="json"),
        reranker=rag.reranker_name,
        prompts_lang=prompts.lang,
        prompt_edits={k: prompts[k] for k in prompts if not prompts.is_default(k)},
        language=rag.language,
        api_base=api_base,
        timeout=timeout,
        storage_options=getattr(kb, "_storage_options", None),
        api_key=api_key,
    )


def build(spec: RagSpec) -> Any:
    """A SelfRAG from ``spec``: the worker's own knowledge base handle and clients."""
    from selfrag_nb.config import Settings
    from selfrag_nb.llm.prompts import Prompts
    from selfrag_nb.pipeline import SelfRAG
    from selfrag_nb.store.kb import KnowledgeBase

    kb = KnowledgeBase.open(
        spec.kb_uri, embedder=spec.embedder, create=False, storage_options=spec.storage_options
    )
    return SelfRAG(
        kb,
        models={role: m for role, m in spec.models.items() if m != "offline"},
        api_base=spec.api_base,
        api_key=spec.api_key,
        settings=Settings.model_validate(spec.settings),
        reranker=spec.reranker,
        prompts=Prompts(spec.prompts_lang, spec.prompt_edits),
        language=spec.language,
    )


class _Answerer:
    """One per worker: the variants' pipelines, built once, answering questions."""

    def __init__(self, specs: dict[str, RagSpec]) -> None:
        from selfrag_nb.store.ray_ingest import actor_cpus, fit_threads

        self.rags = {name: build(spec) for name, spec in specs.items()}
        for rag in self.rags.values():  # query embedding: the actor's CPUs, not the machine's
            fit_threads(rag.kb.embedder, actor_cpus())

    async def answer(
        self,
        name: str,
        question: dict[str, Any],
        *,
        k: int,
        timeout: float | None,
        version: str,
        with_trace: bool,
    ) -> tuple[str, str | None]:
        from selfrag_nb.eval.questions import Question
        from selfrag_nb.eval.runner import answer

        row, trace = await answer(
            self.rags[name], name, Question.model_validate(question), k=k, timeout=timeout, version=version
        )
        return row.model_dump_json(), (trace.to_json() if with_trace and trace is not None else None)


class ActorPool:
    """``workers`` _Answerer actors; ``answer(slot, ...)`` awaits actor ``slot % workers``."""

    def __init__(self, specs: dict[str, RagSpec], *, workers: int | None, concurrency: int) -> None:
        from selfrag_nb.store.ray_ingest import ensure_ray

        ray = ensure_ray()
        if workers is None:
            workers = max(1, min(concurrency, int(ray.cluster_resources().get("CPU", 1))))
        if workers > concurrency:
            raise InputError(f"workers ({workers}) cannot exceed concurrency ({concurrency})")
        per_worker = math.ceil(concurrency / workers)
        remote = ray.remote(_Answerer).options(
            max_concurrency=per_worker,
            max_restarts=RETRIES,
            max_task_retries=RETRIES,
            num_cpus=1,
        )
        self._ray = ray
        self.workers = workers
        self.per_worker = per_worker
        self._actors = [remote.remote(specs) for _ in range(workers)]

    async def answer(
        self,
        slot: int,
        name: str,
        q: Question,
        *,
        k: int,
        timeout: float | None,
        version: str,
        with_trace: bool,
    ) -> tuple[EvalRow, str | None]:
        from selfrag_nb.eval.metrics import EvalRow

        actor = self._actors[slot % self.workers]
        row_json, trace_json = await actor.answer.remote(
            name, q.model_dump(mode="json"), k=k, timeout=timeout, version=version, with_trace=with_trace
        )
        return EvalRow.model_validate_json(row_json), trace_json

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []
