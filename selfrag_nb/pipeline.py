"""SelfRAG runs the flow; Stepper runs it one stage per call.

    SelfRAG(kb, timeout, deadline, settings)   numbers only (bool/str: TypeError naming it)
    question, history, user        (validated before any work: ValueError/TypeError;
                                    a lone surrogate anywhere: ValueError naming where)
      start-up   once per process / knowledge base     Trace.startup  (what -> ms)
                 importing LiteLLM, loading the embedder, the first search;
                 timed apart, before the deadline's clock starts
      -> decide      rules -> cache -> model            Decision
      -> rewrite     protected spans kept, bounded      Rewrite        (retrieve only)
      -> retrieve    hybrid search, ACL prefilter       Retrieval      (retrieve only)
      -> grade       parallel, bounded, per-doc JSON    Grades         (retrieve only)
      -> rerank      validated protocol, fallback       Rerank         (retrieve only)
      -> assess      answer / clarify / refuse          Assessment     (retrieve only)
      -> generate    grounded, cited (or direct)        Generation
      -> verify      claim x evidence support           Support        (grounded only)
      -> usefulness  does it answer the question?       Usefulness     (grounded only)
      -> finish      accept / disclaim / regenerate     Outcome
    = Trace (ordered records + config snapshot + wall time)
      -> otel        SelfRAG(otel=True | TracerProvider): the finished Trace as spans (otel.py)

Start-up is nobody's stage: done inside the first stage it would land in
that stage's latency and eat the question's deadline (seconds for LiteLLM's
import, for MiniLM's weights), so it runs first and is recorded on its own.

One direction, no back-and-forth: a stage reads earlier records and its
record is appended (finish also appends its bounded regeneration records).
The deadline is checked before every stage and cuts every model call; when
it runs out the Outcome says which stages were skipped and is honest
(refused, or the best verified answer with a disclaimer).

``ask`` is synchronous and works inside a running event loop (Jupyter): the
coroutine then runs on a worker thread with its own loop. ``aask`` is the
async form. ``stepper`` hands the same stages to a notebook, one cell each.
"""

from __future__ import annotations

import asyncio
import logging
import numbers
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from selfrag_nb._displayable import view as widget_view
from selfrag_nb._sync import run_sync
from selfrag_nb.config import Settings
from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.flow import RETRIEVAL_STAGES, STAGES
from selfrag_nb.llm.base import PROVIDER_CONCURRENCY
from selfrag_nb.llm.schemas import Message
from selfrag_nb.rerankers import RerankerOptions, resolve_reranker

# Importing the stage modules registers each stage class under its flow step.
from selfrag_nb.stages import (  # noqa: F401
    assess,
    generate,
    grade,
    rerank,
    retrieve,
    rewrite,
    usefulness,
    verify,
)
from selfrag_nb.stages.base import STAGE_CLASSES, Stage, StageContext
from selfrag_nb.stages.decide import DecisionCache
from selfrag_nb.stages.finish import deadline_outcome
from selfrag_nb.startup import start_up
from selfrag_nb.store.types import User
from selfrag_nb.text import detect_language, validate_unicode
from selfrag_nb.trace import (
    Assessment,
    ConfigSnapshot,
    Decision,
    Generation,
    Grades,
    Outcome,
    Record,
    Rerank,
    Retrieval,
    Rewrite,
    Support,
    Trace,
    Usefulness,
)

if TYPE_CHECKING:
    from pathlib import Path

    from opentelemetry.sdk.trace import TracerProvider

    from selfrag_nb.attribution import Attribution, AttributionPlan
    from selfrag_nb.llm.base import Model
    from selfrag_nb.llm.prompts import Prompts
    from selfrag_nb.llm.runner import ModelRunner
    from selfrag_nb.rerankers import Reranker
    from selfrag_nb.store.kb import KnowledgeBase

__all__ = ["SelfRAG", "Stepper"]

_log = logging.getLogger(__name__)
#: A stage record type (Decision, Rewrite, ...) a Stepper step returns.
R = TypeVar("R")

#: Grace beyond the deadline for a stage to return after its calls were cut.
_GRACE_S = 0.5
_HISTORY_ROLES = frozenset({"user", "assistant", "system"})
_OVERRIDABLE = {
    "decide": ({"retrieve"}, {"retrieve", "reason"}),
    "assess": ({"action"}, {"action", "reason", "options"}),
}
_ASSESS_ACTIONS = frozenset({"answer", "clarify", "refuse", "answer_without_evidence"})


def _make_stage(name: str) -> Stage:
    return STAGE_CLASSES[name]()


def _applicable(name: str, trace: Trace) -> bool:
    if name in RETRIEVAL_STAGES:
        decision = trace.decision
        return decision is not None and decision.retrieve
    return True


def validate_question(question: object) -> str:
    """The question, or a clear error when it cannot be asked."""
    if not isinstance(question, str):
        raise InputTypeError(f"question must be a string, got {type(question).__name__}")
    validate_unicode("question", question)
    if not question.strip():
        raise InputError("question is blank: ask something (it was empty or whitespace only)")
    return question


def validate_history(history: object) -> list[dict[str, str]]:
    """``[{"role": "user"|"assistant"|"system", "content": str}, ...]`` or ValueError naming the problem."""
    if history is None:
        return []
    if isinstance(history, (str, bytes, Mapping)) or not isinstance(history, Sequence):
        raise InputError(
            f'history must be a list of {{"role": ..., "content": ...}} dicts, got {type(history).__name__}'
        )
    out: list[dict[str, str]] = []
    for i, item in enumerate(history):
        turn = {"role": item.role, "content": item.content} if isinstance(item, Message) else item
        if not isinstance(turn, Mapping):
            raise InputError(
                f"history[{i}] must be a dict with 'role' and 'content', got {type(turn).__name__}"
            )
        role, content = turn.get("role"), turn.get("content")
        if role not in _HISTORY_ROLES:
            raise InputError(f"history[{i}]['role'] must be one of {sorted(_HISTORY_ROLES)}, got {role!r}")
        if not isinstance(content, str):
            raise InputError(f"history[{i}]['content'] must be a string, got {type(content).__name__}")
        validate_unicode(f"history[{i}]['content']", content)
        out.append({"role": str(role), "content": content})
    return out


def validate_seconds(name: str, value: object) -> float:
    """A budget in seconds given as a number; bool and str are refused (Python
    counts True as 1, and "5" means text was passed through unconverted)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputTypeError(
            f"{name} must be a number of seconds (int or float), got {type(value).__name__} {value!r}"
        )
    return float(value)


def validate_user(user: object) -> User:
    """A User (None: anonymous; a string: that user id) whose id, roles and
    tenant are valid Unicode (they end up in the search filter and the trace)."""
    if user is None:
        return User()
    if isinstance(user, str):
        user = User(validate_unicode("user id", user))
    if not isinstance(user, User):
        raise InputTypeError(
            f"user must be a selfrag_nb.User (or a user id string), got {type(user).__name__}"
        )
    validate_unicode("user id", user.id)
    for j, role in enumerate(user.roles):
        validate_unicode(f"user roles[{j}]", role)
    if user.tenant is not None:
        validate_unicode("user tenant", user.tenant)
    return user


class SelfRAG:
    """The Self-RAG pipeline over one knowledge base. Offline model unless
    ``model`` names one (any LiteLLM model string or a Model object).
    ``otel=True`` sends each finished question's Trace as OpenInference spans
    to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default: Phoenix on 127.0.0.1:6006);
    ``otel=<TracerProvider>`` sends them through that provider
    (docs/observability.md). The Stepper does not export."""

    def __init__(
        self,
        kb: KnowledgeBase,
        model: Model | str | None = None,
        *,
        models: Mapping[str, Model | str] | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        deadline: float | None = None,
        reranker: Reranker | str | None = None,
        settings: Settings | None = None,
        prompts: Prompts | str = "en",
        cache: bool | str | Path = False,
        cassette: str | Path | None = None,
        record: bool = False,
        language: str | None = None,
        otel: bool | TracerProvider = False,
    ) -> None:
        from selfrag_nb.llm.runner import ModelRunner

        if kb is None:
            raise InputError(
                "SelfRAG needs a knowledge base: SelfRAG(KnowledgeBase.open(path)) or KnowledgeBase.sample()"
            )
        # None: the Settings' own value (30 s per call, 120 s per question);
        # a number given here wins over a Settings object's.
        budgets = {
            name: validate_seconds(name, value)
            for name, value in (("timeout", timeout), ("deadline", deadline))
            if value is not None
        }
        if settings is None:
            settings = Settings(prompts=prompts if prompts in ("en", "zh") else "en", **budgets)
        elif not isinstance(settings, Settings):
            raise InputTypeError(f"settings must be a selfrag_nb.Settings, got {type(settings).__name__}")
        elif budgets:
            settings = settings.with_(**budgets)
        if language is not None and language not in ("en", "zh"):
            raise InputError(f'language must be None (detect per question), "en" or "zh"; got {language!r}')
        runner = ModelRunner(
            model,
            models=dict(models) if models else None,
            api_base=api_base,
            api_key=api_key,
            timeout=settings.timeout,
            prompts=prompts,
            cache=cache,
            cassette=cassette,
            record=record,
        )
        options = RerankerOptions(runner=runner, api_base=api_base, api_key=api_key, timeout=settings.timeout)
        rr, name = resolve_reranker(reranker, options)
        otel_provider = None
        if otel is not False:
            from selfrag_nb.otel import live_provider

            otel_provider = live_provider(otel)
        self._setup(
            kb=kb,
            runner=runner,
            settings=settings,
            reranker=rr,
            reranker_name=name,
            language=language,
            otel_provider=otel_provider,
        )

    def _setup(
        self,
        *,
        kb: KnowledgeBase,
        runner: ModelRunner,
        settings: Settings,
        reranker: Reranker,
        reranker_name: str,
        language: str | None,
        otel_provider: TracerProvider | None = None,
    ) -> None:
        self.kb = kb
        self.runner = runner
        self._settings = settings
        self.reranker = reranker
        self.reranker_name = reranker_name
        self.language = language
        self.decision_cache = DecisionCache(settings.decision_cache_size, settings.decision_cache_ttl)
        #: Where each finished question's spans go (``otel=``); None: not exported.
        self.otel_provider = otel_provider

    # -- configuration ---------------------------------------------------
    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def prompts(self) -> Prompts:
        """The editable prompt templates (role -> template, versioned by hash)."""
        return self.runner.prompts

    def with_settings(self, **overrides: Any) -> SelfRAG:
        """The same knowledge base, models, cache and reranker with new
        Settings (unknown names raise). The copy has its own decision cache
        so variants compared in an evaluation do not share decisions."""
        clone = object.__new__(SelfRAG)
        clone._setup(
            kb=self.kb,
            runner=self.runner,
            settings=self._settings.with_(**overrides),
            reranker=self.reranker,
            reranker_name=self.reranker_name,
            language=self.language,
            otel_provider=self.otel_provider,
        )
        return clone

    def __repr__(self) -> str:
        return f"SelfRAG(kb={getattr(self.kb, 'path', self.kb)!s}, reranker={self.reranker_name!r})"

    def config_snapshot(self) -> ConfigSnapshot:
        """Everything that shapes a trace besides the question."""
        import selfrag_nb

        kb_version: int | None
        try:
            kb_version = int(self.kb.version)
        except (TypeError, ValueError, AttributeError):
            kb_version = None
        return ConfigSnapshot(
            models=dict(self.runner.models_by_role()),
            prompt_hashes=dict(self.runner.prompts.hashes()),
            settings=self._settings.model_dump(mode="json"),
            kb_version=kb_version,
            kb_path=str(getattr(self.kb, "path", "")),
            embedder=str(getattr(self.kb, "embedder_name", "")),
            reranker=self.reranker_name,
            library_version=selfrag_nb.__version__,
        )

    # -- one question ----------------------------------------------------
    def _context(self, question: str, user: User, history: list[dict[str, str]]) -> StageContext:
        return StageContext(
            question=question,
            kb=self.kb,
            runner=self.runner,
            settings=self._settings,
            user=user,
            reranker=self.reranker,
            reranker_name=self.reranker_name,
            decision_cache=self.decision_cache,
            language=self.language or detect_language(question),
            history=[Message(role=t["role"], content=t["content"]) for t in history],
        )

    def _prepare(self, question: object, user: object, history: object) -> tuple[Trace, StageContext]:
        q = validate_question(question)
        u = validate_user(user)
        h = validate_history(history)
        trace = Trace(question=q, user=u, history=h, config=self.config_snapshot())
        return trace, self._context(q, u, h)

    def ask(
        self, question: str, user: User | str | None = None, history: Sequence[Any] | None = None
    ) -> Trace:
        """Answer one question; returns its Trace. Works inside Jupyter's loop."""
        trace, ctx = self._prepare(question, user, history)
        return run_sync(self._run(trace, ctx))

    async def aask(
        self, question: str, user: User | str | None = None, history: Sequence[Any] | None = None
    ) -> Trace:
        """Async ``ask``."""
        trace, ctx = self._prepare(question, user, history)
        return await self._run(trace, ctx)

    def stepper(
        self, question: str, user: User | str | None = None, history: Sequence[Any] | None = None
    ) -> Stepper:
        """Run the same question one stage per call (see Stepper)."""
        trace, ctx = self._prepare(question, user, history)
        return Stepper(self, trace, ctx)

    def attribution(self, trace: Trace, **options: Any) -> Attribution | AttributionPlan:
        """Which chunk each claim of ``trace`` stands on, judged by this pipeline's
        verify model (the trace's own): docs/attribution.md."""
        from selfrag_nb.attribution_run import attribute

        return attribute(trace, self, **options)

    def attribution_plan(self, trace: Trace, *, sentences: bool | None = None) -> AttributionPlan:
        """What ``attribution(trace)`` would cost: model calls, estimated tokens (no call made)."""
        from selfrag_nb.attribution_run import plan

        return plan(trace, self, sentences=sentences)

    async def _run(self, trace: Trace, ctx: StageContext) -> Trace:
        # Start-up first, off the event loop: the deadline and wall_ms start after it.
        trace.startup = await asyncio.to_thread(start_up, self)
        if trace.startup:
            # The question starts now: exported spans (otel.py) place stages from here.
            trace.started_at = time.time()
        t0 = time.perf_counter()
        ctx.deadline = time.monotonic() + self._settings.deadline
        for i, name in enumerate(STAGES):
            if not _applicable(name, trace):
                continue
            ok = await _run_stage(name, trace, ctx)
            if not ok:
                rest = [n for n in STAGES[i:] if _applicable(n, trace) and n != "finish"]
                # The interrupted stage may have appended records (finish's regeneration).
                trace.append(deadline_outcome(trace, ctx, rest or ["finish"], self._settings.deadline))
                break
        trace.wall_ms = (time.perf_counter() - t0) * 1000
        if self.otel_provider is not None:
            from selfrag_nb.otel import emit_live

            emit_live(trace, self.otel_provider)
        return trace


async def _run_stage(name: str, trace: Trace, ctx: StageContext) -> bool:
    """Run one stage and append its record; False when the deadline ran out
    before or during it."""
    remaining = ctx.remaining()
    if remaining <= 0:
        return False
    stage = _make_stage(name)
    # Set before wait_for creates the stage's task, which copies the context.
    token = PROVIDER_CONCURRENCY.set(ctx.settings.provider_concurrency)
    try:
        record: Record | None = await asyncio.wait_for(stage.run(trace, ctx), remaining + _GRACE_S)
    except asyncio.TimeoutError:
        return False
    finally:
        PROVIDER_CONCURRENCY.reset(token)
    if record is not None:
        trace.append(record)
    return True


class Stepper:
    """One stage per call, for notebooks::

        step = rag.stepper("What is the refund window?", user=sr.User("ana"))
        step.view()          # a live view of the trace, updated by every call below
        step.decide()        # Decision
        step.retrieve()      # runs rewrite first if it has not run; Retrieval
        step.override("decide", retrieve=False)   # "what if": re-run from decide
        step.run()           # the rest; the Trace

    Calling a stage runs any earlier stage that has not run yet. Calling a
    stage that already ran re-runs it and drops the records after it. Each
    call gets the full ``settings.deadline`` budget (thinking time between
    cells does not count); start-up is done once, before the first. The
    Trace's ``wall_ms`` runs from the first stage to the latest one, pauses
    between cells included; each record's ``latency_ms`` is its compute time.
    A stage that does not apply returns None.
    """

    def __init__(self, rag: SelfRAG, trace: Trace, ctx: StageContext) -> None:
        self.rag = rag
        self.trace = trace
        self._ctx = ctx
        self._done: list[str] = []
        # Live views handed out by view(). Strong references: ipywidgets keeps
        # every open widget alive in its registry anyway, until it is closed.
        self._views: list[Any] = []
        # The trace as it stood before the first what-if (override or dropped
        # chunk), so the live view can show both; None without a what-if.
        self._baseline: Trace | None = None
        # perf_counter() when the first stage started (None: nothing ran yet).
        self._first: float | None = None

    def __repr__(self) -> str:
        return f"Stepper(done={self._done}, next={self._next_name()!r})"

    @property
    def done(self) -> list[str]:
        """Stages run so far, in order (including those that returned None)."""
        return list(self._done)

    def _next_name(self) -> str | None:
        for name in STAGES:
            if name not in self._done:
                return name
        return None

    def _truncate_from(self, name: str) -> None:
        idx = STAGES.index(name)
        self._done = [n for n in self._done if STAGES.index(n) < idx]
        recs = self.trace.records
        cut = next((i for i, r in enumerate(recs) if STAGES.index(r.stage) >= idx), None)
        if cut is not None:
            del recs[cut:]

    async def _arun(self, name: str) -> Record | None:
        if name not in STAGES:
            raise InputError(f"unknown stage {name!r}: one of {list(STAGES)}")
        if name in self._done:
            self._truncate_from(name)
        if self._first is None:
            # Start-up once, before the first stage's clock (see start_up).
            self.trace.startup = await asyncio.to_thread(start_up, self.rag)
        t0 = time.perf_counter()
        if self._first is None:
            self._first = t0
        self._ctx.deadline = time.monotonic() + self.rag.settings.deadline
        result: Record | None = None
        for stage in STAGES[: STAGES.index(name) + 1]:
            if stage in self._done:
                continue
            self._done.append(stage)
            if not _applicable(stage, self.trace):
                continue
            before = len(self.trace.records)
            if not await _run_stage(stage, self.trace, self._ctx):
                skipped = [n for n in STAGES[STAGES.index(stage) :] if n != "finish"]
                self.trace.append(
                    deadline_outcome(self.trace, self._ctx, skipped, self.rag.settings.deadline)
                )
                self._done = list(STAGES)
                result = self.trace.finish
                break
            if stage == name and len(self.trace.records) > before:
                result = self.trace.records[-1]
        # Wall time from the first stage's start: pauses between cells count
        # here (views label it so), while each stage's latency is compute only.
        self.trace.wall_ms = (time.perf_counter() - self._first) * 1000
        return result

    def _step(self, name: str) -> Record | None:
        try:
            return run_sync(self._arun(name))
        finally:
            self._refresh()

    def view(self) -> Any:
        """A live view of the trace so far (a ``display.widget.TraceWidget``). Display it once (its own cell);
        every stage run, re-run, override or dropped chunk then updates it in
        place, so the view always shows what the stepper holds. After a
        what-if it shows the current trace, labelled with the what-if, and
        below it the trace as it was before the first what-if."""
        widget = widget_view(self.trace)
        self._views.append(widget)
        self._refresh()
        return widget

    def what_if(self) -> str:
        """The what-ifs in force ("" when none): overrides and dropped chunks."""
        parts = [
            f"override {stage}: " + ", ".join(f"{k}={v!r}" for k, v in fields.items())
            for stage, fields in self._ctx.overrides.items()
        ]
        parts += [f"without chunk {c}" for c in sorted(self._ctx.dropped)]
        return "; ".join(parts)

    def _before_what_if(self) -> None:
        """Keep the trace as it is now, once, before a what-if changes it."""
        if self._baseline is None and self.trace.records:
            self._baseline = self.trace.model_copy(deep=True)

    def _refresh(self) -> None:
        if not self.what_if():
            self._baseline = None
        for widget in self._views:
            try:
                widget.update(self.trace, baseline=self._baseline, what_if=self.what_if())
            except Exception:  # noqa: BLE001 - a view that cannot redraw must not break the stage that ran
                _log.warning("could not refresh a live trace view", exc_info=True)

    def decide(self) -> Decision:
        """Decision."""
        return self._typed("decide", Decision)

    def rewrite(self) -> Rewrite | None:
        """Rewrite, or None (no retrieval, or rewriting disabled)."""
        return self._typed("rewrite", Rewrite)

    def retrieve(self) -> Retrieval | None:
        """Retrieval, or None when no retrieval was decided."""
        return self._typed("retrieve", Retrieval)

    def grade(self) -> Grades | None:
        """Grades, or None when no retrieval was decided."""
        return self._typed("grade", Grades)

    def rerank(self) -> Rerank | None:
        """Rerank, or None (no retrieval, or reranking disabled)."""
        return self._typed("rerank", Rerank)

    def assess(self) -> Assessment | None:
        """Assessment, or None when no retrieval was decided."""
        return self._typed("assess", Assessment)

    def generate(self) -> Generation:
        """Generation."""
        return self._typed("generate", Generation)

    def verify(self) -> Support | None:
        """Support, or None for direct / clarify / refusal messages."""
        return self._typed("verify", Support)

    def usefulness(self) -> Usefulness | None:
        """Usefulness (does the answer answer the question?), or None for
        clarify / refusal messages or with the check switched off."""
        return self._typed("usefulness", Usefulness)

    def finish(self) -> Outcome:
        """Outcome (after a bounded regeneration when the verifier asks for one)."""
        return self._typed("finish", Outcome)

    def _typed(self, name: str, kind: type[R]) -> R:
        """Run stage ``name``; its record, checked to be a ``kind`` (None when
        the stage did not apply: the caller's annotation says when that can be)."""
        rec = self._step(name)
        assert rec is None or isinstance(rec, kind), (name, type(rec))
        # None only for stages that may not apply; their annotations say "| None".
        return cast("R", rec)

    def next(self) -> Record | None:
        """Run the next stage; None when everything ran."""
        name = self._next_name()
        return None if name is None else self._step(name)

    def run(self) -> Trace:
        """Run every remaining stage; the Trace."""
        if self._next_name() is not None:
            self._step("finish")
        return self.trace

    def attribution(self, **options: Any) -> Attribution | AttributionPlan:
        """``rag.attribution`` of the trace so far (after verify: which chunk each claim stands on)."""
        return self.rag.attribution(self.trace, **options)

    def override(self, stage: str, **fields: Any) -> None:
        """ "What if": force a stage's result and re-run from it on the next call.
        ``override("decide", retrieve=True)``; ``override("assess", action="clarify", options=[...])``."""
        spec = _OVERRIDABLE.get(stage)
        if spec is None:
            raise InputError(f"stage {stage!r} cannot be overridden: one of {sorted(_OVERRIDABLE)}")
        required, allowed = spec
        unknown = set(fields) - allowed
        if unknown:
            raise InputError(
                f"override of {stage!r} accepts {sorted(allowed)}, got unknown {sorted(unknown)}"
            )
        if not required <= set(fields):
            raise InputError(f"override of {stage!r} needs {sorted(required)}")
        if stage == "decide" and not isinstance(fields["retrieve"], bool):
            raise InputError("override('decide', retrieve=...) needs True or False")
        if stage == "assess" and fields["action"] not in _ASSESS_ACTIONS:
            raise InputError(f"override('assess', action=...) must be one of {sorted(_ASSESS_ACTIONS)}")
        self._before_what_if()
        self._ctx.overrides[stage] = dict(fields)
        if stage in self._done:
            self._truncate_from(stage)
            self._refresh()

    def clear_override(self, stage: str) -> None:
        """Forget an override; the stage re-runs normally on the next call."""
        if self._ctx.overrides.pop(stage, None) is not None and stage in self._done:
            self._truncate_from(stage)
        self._refresh()

    def drop_chunk(self, chunk_id: str) -> None:
        """ "What if" without this chunk: it is excluded from grading onwards
        (the Retrieval record still shows it was found)."""
        retrieval = self.trace.retrieval
        if retrieval is not None and chunk_id not in {h.chunk_id for h in retrieval.hits}:
            raise InputError(f"chunk {chunk_id!r} is not among the retrieved chunks")
        self._before_what_if()
        self._ctx.dropped.add(chunk_id)
        if "grade" in self._done:
            self._truncate_from("grade")
            self._refresh()
