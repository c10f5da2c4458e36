"""Variants: the pipelines one evaluation compares, and where they disagree.

    evaluate(rag, questions, variants)
      variants -> build_variants(rag, variants) -> {name: pipeline}, {name: plain description}
        None | "ablation" | "retrieval"          presets: settings overrides (runner.PRESETS)
        {name: {setting: value}}                 rag.with_settings(**settings)
        {name: {"models": {role: model},         a SelfRAG on the same knowledge base,
                **settings}}                     reranker and prompts, with those roles'
                                                 models replaced (a LiteLLM string or a Model)
        {name: SelfRAG}                          that pipeline as it is
      description: the settings changed and, for a pipeline or a model change,
      the model name per role: plain JSON, what the report keeps

    [EvalRow] -> role_summary(rows)    per role: tokens in/out, dollars, mean ms per question
              -> agreement(rows)       per question: did every variant end with the
                                       same outcome / keep the same evidence?

Why compare whole pipelines: the ablation rule changes one thing at a time,
and "one thing" is often a model (two graders, two generators) rather than
a setting. Everything else (questions, knowledge base, prompts, reranker)
stays fixed, so the per-role columns say what the swap cost and the
agreement says what it changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from selfrag_nb.errors import InputError, InputTypeError

if TYPE_CHECKING:
    from selfrag_nb.eval.metrics import EvalRow

__all__ = ["agreement", "build_variants", "is_pipeline", "role_summary", "with_models"]


def is_pipeline(obj: Any) -> bool:
    """A pipeline object (SelfRAG or anything answering like it), not settings."""
    return not isinstance(obj, Mapping) and hasattr(obj, "settings") and hasattr(obj, "aask")


def _model_names(rag: Any) -> dict[str, str]:
    runner = getattr(rag, "runner", None)
    return dict(runner.models_by_role()) if runner is not None else {}


def _settings_diff(rag: Any, base: Any) -> dict[str, Any]:
    mine = rag.settings.model_dump(mode="json")
    theirs = base.settings.model_dump(mode="json") if base is not None else {}
    return {k: v for k, v in mine.items() if theirs.get(k) != v}


def with_models(rag: Any, models: Mapping[str, Any], **settings: Any) -> Any:
    """A SelfRAG like ``rag`` (knowledge base, prompts, reranker, other
    roles' models, credentials) with ``models`` answering their roles."""
    from selfrag_nb.llm.schemas import ROLES
    from selfrag_nb.pipeline import SelfRAG

    if not isinstance(models, Mapping) or not models:
        raise InputTypeError(f"'models' must be a non-empty mapping of role -> model, got {models!r}")
    unknown = sorted(str(r) for r in models if r not in ROLES)
    if unknown:
        raise InputError(f"models: unknown role(s) {unknown}; roles are: {', '.join(ROLES)}")
    runner = getattr(rag, "runner", None)
    if not isinstance(rag, SelfRAG) or runner is None:
        raise InputTypeError(
            f"a variant with 'models' needs a SelfRAG to start from, got {type(rag).__name__}"
        )
    merged: dict[str, Any] = {role: runner.model_for(role) for role in ROLES}
    merged.update(models)
    return SelfRAG(
        rag.kb,
        models=merged,
        api_base=runner.api_base,
        api_key=runner._api_key,
        settings=rag.settings.with_(**settings) if settings else rag.settings,
        # the model reranker calls the rerank role: rebuilt on the new runner
        reranker="model" if rag.reranker_name == "model" else rag.reranker,
        prompts=runner.prompts,
        language=rag.language,
    )


def build_variants(rag: Any, variants: Any) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """({name: pipeline}, {name: plain description}) in the given order."""
    from selfrag_nb.eval.runner import resolve_variants

    if isinstance(variants, Mapping) and any(is_pipeline(v) for v in variants.values()):
        rags: dict[str, Any] = {}
        described: dict[str, dict[str, Any]] = {}
        for name, value in variants.items():
            if not isinstance(name, str) or not name.strip():
                raise InputError(f"variant names must be non-blank strings, got {name!r}")
            if is_pipeline(value):
                rags[name] = value
                described[name] = {"models": _model_names(value), **_settings_diff(value, rag)}
            else:
                sub_rags, sub_described = build_variants(rag, {name: value})
                rags.update(sub_rags)
                described.update(sub_described)
        return rags, described
    if isinstance(variants, Sequence) and not isinstance(variants, str):
        raise InputTypeError(
            "variants must be a mapping {name: settings | {'models': ...} | SelfRAG}, "
            "a preset name or None; name each pipeline: {'a': rag_a, 'b': rag_b}"
        )
    plan = resolve_variants(variants)
    rags = {}
    described = {}
    for name, overrides in plan.items():
        settings = {k: v for k, v in overrides.items() if k != "models"}
        if "models" in overrides:
            rags[name] = with_models(rag, overrides["models"], **settings)
            described[name] = {**settings, "models": _model_names(rags[name])}
        else:
            rags[name] = rag.with_settings(**settings) if settings else rag
            described[name] = settings
    return rags, described


def role_summary(rows: Sequence[EvalRow]) -> dict[str, Any]:
    """``{role}_tokens_in``, ``_tokens_out``, ``_cost`` (None when any price is
    unknown) and ``_latency_ms`` (mean per question that called the role)."""
    out: dict[str, Any] = {}
    roles = list(dict.fromkeys(role for r in rows for role in r.role_tokens_in))
    for role in roles:
        used = [r for r in rows if role in r.role_tokens_in]
        costs = [r.role_cost.get(role) for r in used]
        out[f"{role}_tokens_in"] = sum(r.role_tokens_in[role] for r in used)
        out[f"{role}_tokens_out"] = sum(r.role_tokens_out.get(role, 0) for r in used)
        out[f"{role}_cost"] = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)
        out[f"{role}_latency_ms"] = sum(r.role_latency_ms.get(role, 0.0) for r in used) / len(used)
    return out


def agreement(rows: Sequence[EvalRow], variants: Sequence[str]) -> list[dict[str, Any]]:
    """One record per question (in first-seen order): its outcome and kept
    evidence under each variant, ``same_outcome``, ``same_kept`` and
    ``agree`` (both). A question missing under a variant disagrees."""
    by_q: dict[str, dict[str, EvalRow]] = {}
    for r in rows:
        by_q.setdefault(r.id, {})[r.variant] = r
    out = []
    for qid, per in by_q.items():
        first = next(iter(per.values()))
        complete = all(v in per for v in variants)
        outcomes = {v: per[v].outcome if v in per else None for v in variants}
        kept = {v: sorted(per[v].kept) if v in per else None for v in variants}
        same_outcome = complete and len({outcomes[v] for v in variants}) <= 1
        same_kept = complete and len({tuple(kept[v] or ()) for v in variants}) <= 1
        out.append(
            {
                "id": qid,
                "category": first.category,
                "question": first.question,
                "same_outcome": same_outcome,
                "same_kept": same_kept,
                "agree": same_outcome and same_kept,
                "outcomes": outcomes,
                "kept": kept,
            }
        )
    return out
