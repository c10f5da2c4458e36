"""Run every variant over every question; stream rows to disk.

    evaluate(rag, questions, variants, engine="local")   (sync; works inside a running loop)
      -> aevaluate(...)
           variants -> {name: pipeline} (eval/variants.py: settings overrides,
                       {"models": {role: model}}, or SelfRAG objects)
           engine="ray" -> eval/ray_eval.py: the same jobs as Ray tasks, rows
                       streamed back here and written the same way
           jobs = variant x question, in order
           N workers (N = concurrency) pull jobs:
               aask(question, user, history) --timeout--> Trace | exception
               score(question, trace) -> EvalRow           (the trace is dropped here,
               [traces/<variant>/<id>.json]                  or written when traces=True)
               rows.jsonl  <- one JSON line, flushed
           failures.parquet  <- failing rows (regression samples)
      = EvalReport (rows in question order; no traces in memory)

The ablation rule: compare variants with everything else
fixed. Every variant runs the same questions through the same knowledge base
and models; only the named settings change, and each row carries the config
version (hash of settings, prompt hashes and model names) it ran with.

Workers pull jobs instead of one task per job, so at most ``concurrency``
traces exist at any moment however long the question set: memory stays flat
for 10,000 questions. A question that raises or overruns its timeout becomes
a failure row with the exception text; it never aborts the run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from selfrag_nb._sync import run_sync
from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.eval.metrics import EvalRow, error_row, score
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.questions import questions as load_questions

if TYPE_CHECKING:
    from selfrag_nb.eval.report import EvalReport
    from selfrag_nb.trace import Trace

__all__ = [
    "PRESETS",
    "Variants",
    "aevaluate",
    "answer",
    "config_version",
    "evaluate",
    "resolve_variants",
]

#: Named variant sets. "ablation" is the four-way comparison
#: (baseline, + rewrite, + rerank, both); "retrieval" is Self-RAG's three modes;
#: "plain_rag" is Self-RAG against the pipeline it claims to improve: always
#: retrieve, then generate from the top chunks, with no grading, reranking,
#: assessment, verification, usefulness check or regeneration.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "ablation": {
        "baseline": {"rewrite": False, "rerank": False},
        "+rewrite": {"rewrite": True, "rerank": False},
        "+rerank": {"rewrite": False, "rerank": True},
        "+rewrite+rerank": {"rewrite": True, "rerank": True},
    },
    "retrieval": {
        "adaptive": {"retrieval": "adaptive"},
        "always": {"retrieval": "always"},
        "never": {"retrieval": "never"},
    },
    "plain_rag": {
        "self_rag": {},
        "plain_rag": {
            "retrieval": "always",
            "rewrite": False,
            "grade": False,
            "rerank": False,
            "assess": False,
            "verify": False,
            "usefulness": False,
            "max_regenerations": 0,
        },
    },
}

Variants = str | Mapping[str, Any] | None


def resolve_variants(variants: Variants) -> dict[str, dict[str, Any]]:
    """``None`` -> one variant "default" (no overrides); a preset name; or a
    ``{name: {setting: value}}`` mapping (validated against ``Settings``; a
    ``"models": {role: model}`` entry is kept for eval/variants.py)."""
    from selfrag_nb.config import Settings

    if variants is None:
        return {"default": {}}
    if isinstance(variants, str):
        if variants not in PRESETS:
            raise InputError(f"unknown variant preset {variants!r}; presets: {', '.join(PRESETS)}")
        plan = PRESETS[variants]
    elif isinstance(variants, Mapping):
        plan = {}
        for name, overrides in variants.items():
            if not isinstance(name, str) or not name.strip():
                raise InputError(f"variant names must be non-blank strings, got {name!r}")
            if not isinstance(overrides, Mapping):
                raise InputTypeError(
                    f"variant {name!r}: overrides must be a mapping of settings, got {overrides!r}"
                )
            plan[name] = dict(overrides)
    else:
        raise InputTypeError(
            f"variants must be None, a preset name or a mapping, got {type(variants).__name__}"
        )
    if not plan:
        raise InputError("variants: at least one variant is needed")
    known = set(Settings.model_fields)
    for name, overrides in plan.items():
        unknown = sorted(set(overrides) - known - {"models"})
        if unknown:
            raise InputError(f"variant {name!r}: unknown setting(s) {unknown}")
        if "models" in overrides and not isinstance(overrides["models"], Mapping):
            raise InputTypeError(
                f"variant {name!r}: 'models' must be a mapping of role -> model, got {overrides['models']!r}"
            )
    return {name: dict(ov) for name, ov in plan.items()}


def config_version(rag: Any) -> str:
    """12 hex digits naming what shaped a variant's answers: its settings,
    prompt hashes and model names (from the pipeline's config snapshot when it
    offers one)."""
    parts: dict[str, Any] = {"settings": rag.settings.model_dump(mode="json")}
    snap = getattr(rag, "config_snapshot", None)
    if callable(snap):
        snap = snap()
    if snap is not None and hasattr(snap, "prompt_hashes"):
        parts["models"] = dict(snap.models)
        parts["prompts"] = dict(snap.prompt_hashes)
        parts["reranker"] = getattr(snap, "reranker", "")
    else:
        prompts = getattr(rag, "prompts", None)
        if isinstance(prompts, Mapping):
            parts["prompts"] = {str(k): str(getattr(v, "hash", v)) for k, v in prompts.items()}
        models = getattr(rag, "models", None)
        if isinstance(models, Mapping):
            parts["models"] = {str(k): str(getattr(v, "name", v)) for k, v in models.items()}
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def as_question_set(qs: QuestionSet | Iterable[Question] | str | Path) -> QuestionSet:
    if isinstance(qs, QuestionSet):
        return qs
    if isinstance(qs, (str, Path)):
        return load_questions(qs)
    return QuestionSet(list(qs), name="questions")


_UNSAFE = re.compile(r"[^0-9A-Za-z._-]+")


def _file_name(text: str) -> str:
    # Ids and variant names come from users ("+rewrite", "zh/退款-1"): keep them
    # readable but safe as one path component, unique via a short hash.
    safe = _UNSAFE.sub("_", text).strip("._") or "x"
    if safe != text:
        safe = f"{safe[:60]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return safe


class _Progress:
    """The evaluation's bar (selfrag_nb.progress: the final count is always drawn)."""

    def __init__(self, total: int, enabled: bool, label: str) -> None:
        from selfrag_nb.progress import ProgressBar

        self.total = total
        self.done = 0
        self._bar = ProgressBar(label, total) if enabled and total else None

    def advance(self, failed: int) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self.done, self.total, f"{failed} failing")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


async def _ask(rag: Any, q: Question) -> Trace:
    user = q.make_user()
    history = [dict(t) for t in q.history]
    aask = getattr(rag, "aask", None)
    if aask is not None:
        trace: Trace = await aask(q.question, user=user, history=history)
        return trace
    # A pipeline with only a blocking ask(): run it off the event loop.
    return await asyncio.to_thread(rag.ask, q.question, user=user, history=history)


async def answer(
    rag: Any,
    name: str,
    q: Question,
    *,
    k: int,
    timeout: float | None,
    version: str,
    attribution: bool = False,
) -> tuple[EvalRow, Trace | None]:
    """One question under one variant -> its row (and the trace, None when it
    raised or overran). Both engines answer through here. ``attribution``:
    the row's attribution columns too (eval/attribution_eval.py)."""
    limit = timeout if timeout is not None else float(rag.settings.deadline) + 10.0
    t0 = time.perf_counter()
    try:
        trace = await asyncio.wait_for(_ask(rag, q), limit)
    except asyncio.TimeoutError:
        ms = (time.perf_counter() - t0) * 1000
        return error_row(
            q, variant=name, error=f"timed out after {limit:g}s", latency_ms=ms, config_version=version
        ), None
    except Exception as exc:  # noqa: BLE001 - any failure of one question becomes its failure row
        ms = (time.perf_counter() - t0) * 1000
        text = f"{type(exc).__name__}: {exc}"
        return error_row(q, variant=name, error=text, latency_ms=ms, config_version=version), None
    ms = (time.perf_counter() - t0) * 1000
    try:
        row = score(q, trace, variant=name, k=k, latency_ms=ms, config_version=version)
    except Exception as exc:  # noqa: BLE001 - a trace the scorer cannot read is that question's failure
        text = f"scoring failed: {type(exc).__name__}: {exc}"
        return error_row(q, variant=name, error=text, latency_ms=ms, config_version=version), trace
    if attribution:
        from selfrag_nb.eval.attribution_eval import attribution_fields

        try:
            row = row.model_copy(update=await attribution_fields(rag, trace))
        except Exception as exc:  # noqa: BLE001 - an attribution that fails is that question's failure
            text = f"attribution failed: {type(exc).__name__}: {exc}"
            return error_row(q, variant=name, error=text, latency_ms=ms, config_version=version), trace
    return row, trace


async def aevaluate(
    rag: Any,
    questions: QuestionSet | Iterable[Question] | str | Path,
    variants: Variants = None,
    *,
    concurrency: int = 4,
    out: str | Path | None = None,
    progress: bool = True,
    k: int = 10,
    traces: bool = False,
    timeout: float | None = None,
    on_row: Callable[[EvalRow], None] | None = None,
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    attribution: bool = False,
) -> EvalReport:
    """Async ``evaluate``: see there."""
    from selfrag_nb.eval.regression import write_failures
    from selfrag_nb.eval.report import EvalReport

    if concurrency < 1:
        raise InputError(f"concurrency must be >= 1, got {concurrency}")
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}")
    if engine not in ("local", "ray"):
        raise InputError(f"engine must be 'local' or 'ray', got {engine!r}")
    if attribution and engine == "ray":
        raise InputError(
            "attribution=True runs with engine='local' only (the ablations need the pipeline here)"
        )
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"workers must be a positive int or None, got {workers!r}")
    from selfrag_nb.eval.variants import build_variants

    qs = as_question_set(questions)
    rags, plan = build_variants(rag, variants)
    versions = {name: config_version(r) for name, r in rags.items()}
    specs: dict[str, Any] = {}
    if engine == "ray":
        from selfrag_nb.eval.ray_eval import spec_of

        specs = {name: spec_of(r) for name, r in rags.items()}  # what cannot travel: refused here
    out_dir = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="selfrag-eval-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_path = out_dir / "rows.jsonl"

    jobs: Iterator[tuple[int, str, int, Question]] = (
        (vi, name, qi, q) for vi, name in enumerate(plan) for qi, q in enumerate(qs)
    )
    total = len(plan) * len(qs)
    done: list[tuple[int, int, EvalRow]] = []
    n_failed = 0
    bar = _Progress(total, progress, f"eval {len(plan)} variant(s) x {len(qs)}")
    started = time.time()

    pool = None
    if engine == "ray" and total:
        from selfrag_nb.eval.ray_eval import ActorPool

        pool = ActorPool(specs, workers=workers, concurrency=concurrency)

    def save_trace(name: str, q: Question, trace_json: str) -> None:
        folder = out_dir / "traces" / _file_name(name)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{_file_name(q.id)}.json").write_text(trace_json, encoding="utf-8")

    async def run_one(slot: int, name: str, q: Question) -> EvalRow:
        if pool is not None:
            try:
                row, trace_json = await pool.answer(
                    slot, name, q, k=k, timeout=timeout, version=versions[name], with_trace=traces
                )
            except Exception as exc:  # noqa: BLE001 - a worker lost for good is that question's failure
                text = (
                    f"ray worker failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                )
                return error_row(q, variant=name, error=text, latency_ms=0.0, config_version=versions[name])
            if trace_json is not None:
                save_trace(name, q, trace_json)
            return row
        row, trace = await answer(
            rags[name], name, q, k=k, timeout=timeout, version=versions[name], attribution=attribution
        )
        if traces and trace is not None:
            save_trace(name, q, trace.to_json())
        return row

    with rows_path.open("w", encoding="utf-8") as sink:

        async def worker(slot: int) -> None:
            nonlocal n_failed
            # Single-threaded event loop: next() on the shared generator needs no lock.
            for vi, name, qi, q in jobs:
                row = await run_one(slot, name, q)
                sink.write(row.model_dump_json() + "\n")
                sink.flush()
                done.append((vi, qi, row))
                n_failed += bool(row.failed_checks)
                bar.advance(n_failed)
                if on_row is not None:
                    on_row(row)

        try:
            await asyncio.gather(*(worker(slot) for slot in range(min(concurrency, max(total, 1)))))
        finally:
            bar.close()
            if pool is not None:
                pool.close()

    done.sort(key=lambda t: (t[0], t[1]))
    report = EvalReport(
        [row for _, _, row in done],
        variants=plan,
        config_versions=versions,
        questions=qs,
        k=k,
        out=out_dir,
        seconds=time.time() - started,
    )
    write_failures(report.rows, qs, out_dir / "failures.parquet")
    return report


def evaluate(
    rag: Any,
    questions: QuestionSet | Iterable[Question] | str | Path,
    variants: Variants = None,
    *,
    concurrency: int = 4,
    out: str | Path | None = None,
    progress: bool = True,
    k: int = 10,
    traces: bool = False,
    timeout: float | None = None,
    on_row: Callable[[EvalRow], None] | None = None,
    engine: Literal["local", "ray"] = "local",
    workers: int | None = None,
    attribution: bool = False,
) -> EvalReport:
    """Run every variant over every question and measure each answer.

    ``variants``: None (the pipeline as is), ``"ablation"`` (baseline /
    +rewrite / +rerank / +rewrite+rerank), ``"retrieval"`` (adaptive / always /
    never) or ``{name: {setting: value}}`` applied with ``rag.with_settings``.
    At most ``concurrency`` questions run at once. Rows stream to
    ``out/rows.jsonl`` (``out`` defaults to a new temporary folder), failing
    rows to ``out/failures.parquet``, and with ``traces=True`` each trace to
    ``out/traces/<variant>/<id>.json``. ``k`` is the cut-off of recall@k.
    ``timeout`` bounds one question (default: the variant's deadline + 10 s).
    ``on_row(row)`` is called as each row is written (live views, monitoring).

    ``variants`` may also name whole pipelines: ``{name: {"models": {role:
    model}, **settings}}`` swaps those roles' models, ``{name: SelfRAG}``
    runs that pipeline; the report then has per-role cost, token and latency
    columns and ``agreement`` / ``disagreements`` between the variants.

    ``engine="ray"`` answers the questions on Ray actors (``workers`` of
    them, default: up to the cluster's CPUs), each rebuilding the pipelines
    from their configuration; ``concurrency`` still bounds the questions in
    flight in total. Rows, files and report are the same (eval/ray_eval.py).

    ``attribution=True`` (local engine only) also measures, per variant, the
    share of supported claims that rest on a single chunk and on a superseded
    document (``single_chunk_share``, ``superseded_share`` in the summary):
    one extra verify call per kept chunk of each verified answer
    (eval/attribution_eval.py, docs/attribution.md).
    """
    return run_sync(
        lambda: aevaluate(
            rag,
            questions,
            variants,
            concurrency=concurrency,
            out=out,
            progress=progress,
            k=k,
            traces=traces,
            timeout=timeout,
            on_row=on_row,
            engine=engine,
            workers=workers,
            attribution=attribution,
        )
    )
