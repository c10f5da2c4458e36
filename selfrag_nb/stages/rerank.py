"""Stage 5, rerank: reorder the relevant chunks, trusting nothing the reranker says.

    settings.rerank False                 -> skipped (None, no record)
    Grades.kept[:rerank_max_candidates]   (authorised, relevant, at most 50)
      -> validate the request: query not blank, keep >= 1, <= 50 candidates
      -> reranker.arank / rank(query, clean texts under their heading path)  (timeout: per-call, cut to the deadline)
      -> validate_ranking(): not None, not empty, each item (index, score) with
         0 <= index < n, no duplicate index, finite score; optional full coverage
      -> sort by score desc (higher is better; a subset is allowed), keep rerank_keep
      -> an item's optional "reason" (dict key or attribute, text) -> Rerank.reasons
    any violation / error / timeout -> previous order kept, Rerank.fallback = reason

This is the validated rerank protocol (``RerankStage.choose``) with its exceptions
turned into a recorded fallback: "重排失败时可以回退到原排序，但应记录".
"""

from __future__ import annotations

import asyncio
import math
import numbers
import time
from collections.abc import Sequence
from typing import Any

from selfrag_nb.cleantext import clean_text
from selfrag_nb.errors import RerankProtocolError
from selfrag_nb.rerankers import RankResponse
from selfrag_nb.stages.base import Stage, StageContext, resolved_question
from selfrag_nb.store.types import Hit
from selfrag_nb.trace import Fallback, ModelCall, Rerank, Trace

__all__ = ["RerankStage", "ranking_reasons", "validate_ranking"]

#: Hard cap on candidates sent to a reranker (recall many, rerank a few).
MAX_CANDIDATES = 50


def _item(entry: Any) -> tuple[Any, Any]:
    if entry is None:
        raise RerankProtocolError("ranking item is None")
    if isinstance(entry, dict):
        if "index" not in entry or "score" not in entry:
            raise RerankProtocolError(f"ranking item {entry!r} lacks index or score")
        return entry["index"], entry["score"]
    if isinstance(entry, (tuple, list)):
        if len(entry) != 2:
            raise RerankProtocolError(f"ranking item {entry!r} is not (index, score)")
        return entry[0], entry[1]
    try:  # hasattr() runs properties: a reranker's result object may raise anything
        if hasattr(entry, "index") and hasattr(entry, "score") and not isinstance(entry, str):
            return entry.index, entry.score
    except Exception as exc:  # noqa: BLE001 - see above
        raise RerankProtocolError(f"ranking item {type(entry).__name__} cannot be read: {exc}") from None
    raise RerankProtocolError(f"ranking item {entry!r} is not (index, score)")


def validate_ranking(
    ranking: Sequence[Any] | None, n: int, *, full_coverage: bool = False
) -> list[tuple[int, float]]:
    """Checked ``(index, score)`` pairs sorted by score (highest first).
    Raises RerankProtocolError naming the first violation."""
    if ranking is None:
        raise RerankProtocolError("rerank response missing (None)")
    if isinstance(ranking, (str, bytes)) or not hasattr(ranking, "__iter__"):
        raise RerankProtocolError(f"rerank response is not a list: {type(ranking).__name__}")
    try:
        items = list(ranking)
    except Exception as exc:  # noqa: BLE001 - a reranker's iterable may raise anything
        raise RerankProtocolError(f"rerank response cannot be read: {type(exc).__name__}: {exc}") from None
    if not items:
        raise RerankProtocolError("rerank response is empty")
    seen: set[int] = set()
    out: list[tuple[int, float]] = []
    for entry in items:
        index, score = _item(entry)
        # numbers.Integral / Real admit numpy's integers and floats (argsort,
        # CrossEncoder.predict); bool is Integral but never an index or score.
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise RerankProtocolError(f"index {index!r} is not an integer")
        index = int(index)
        if index < 0 or index >= n:
            raise RerankProtocolError(f"index {index} out of range 0..{n - 1}")
        if index in seen:
            raise RerankProtocolError(f"duplicate index {index}")
        if isinstance(score, bool) or not isinstance(score, numbers.Real):
            raise RerankProtocolError(f"score {score!r} for index {index} is not a number")
        try:
            value = float(score)
        except OverflowError:  # an int beyond float range
            value = math.inf
        if not math.isfinite(value):
            raise RerankProtocolError(f"score {score!r} for index {index} is not finite")
        seen.add(index)
        out.append((index, value))
    if full_coverage and len(seen) != n:
        missing = sorted(set(range(n)) - seen)
        raise RerankProtocolError(f"response does not cover every candidate: missing indices {missing}")
    # Stable sort: equal scores keep the reranker's order.
    out.sort(key=lambda p: -p[1])
    return out


#: Longest reranker reason kept per chunk (it is shown next to the chunk).
MAX_REASON_CHARS = 500


def ranking_reasons(ranking: Sequence[Any], n: int) -> dict[int, str]:
    """index -> the reason a reranker gave for that item, for items that
    carry a non-blank text ``reason`` (call after ``validate_ranking``;
    anything else about reasons is ignored, never an error)."""
    out: dict[int, str] = {}
    for entry in ranking:
        if isinstance(entry, dict):
            index, reason = entry.get("index"), entry.get("reason")
        elif isinstance(entry, (tuple, list, str, bytes)):
            continue
        else:
            try:  # a reranker's result object may raise anything from a property
                index, reason = getattr(entry, "index", None), getattr(entry, "reason", None)
            except Exception:  # noqa: BLE001, S112 - see above: no reason is not an error
                continue
        if (
            isinstance(index, numbers.Integral)
            and 0 <= int(index) < n
            and isinstance(reason, str)
            and reason.strip()
        ):
            out[int(index)] = reason.strip()[:MAX_REASON_CHARS]
    return out


def _placed(hit: Hit) -> str:
    """What a reranker reads of a chunk: its place in its document (title and
    heading path, the header the search index embedded with it) over its
    text, both clean (no markup reaches a reranker). A README's title is
    often the only place its subject is named ("CFFI" over "Foreign
    Function Interface for Python calling C code.")."""
    text = clean_text(hit.text)
    header = clean_text(hit.context)
    return f"{header}\n{text}" if header else text


class RerankStage(Stage):
    name = "rerank"

    async def run(self, trace: Trace, ctx: StageContext) -> Rerank | None:
        s = ctx.settings
        if not s.rerank:
            return None
        t0 = time.perf_counter()
        grades = trace.grades
        retrieval = trace.retrieval
        by_id = {h.chunk_id: h for h in (retrieval.hits if retrieval else [])}
        # Grading switched off: every retrieved chunk is a candidate, in retrieval order.
        graded = grades.kept if grades else [] if s.grade else list(by_id)
        kept = [c for c in graded if c in by_id and c not in ctx.dropped]
        before = kept[: min(s.rerank_max_candidates, MAX_CANDIDATES)]
        keep = s.rerank_keep
        calls: list[ModelCall] = []

        def fallback(reason: str) -> Rerank:
            return Rerank(
                latency_ms=(time.perf_counter() - t0) * 1000,
                calls=calls,
                fallbacks=[Fallback(what="previous order kept", reason=reason)],
                before=before,
                after=before[:keep],
                reranker=ctx.reranker_name,
                keep=keep,
                fallback=reason,
            )

        if len(before) <= 1:
            # Nothing to reorder: no call, no data leaves the process.
            return Rerank(
                latency_ms=(time.perf_counter() - t0) * 1000,
                before=before,
                after=before[:keep],
                reranker=ctx.reranker_name,
                keep=keep,
            )
        query = resolved_question(trace, ctx)
        if not query.strip() or keep < 1 or len(before) > MAX_CANDIDATES:
            return fallback("invalid rerank request (blank query, keep < 1 or more than 50 candidates)")
        texts = [_placed(by_id[c]) for c in before]
        timeout = ctx.call_timeout()
        try:
            arank = getattr(ctx.reranker, "arank", None)
            if callable(arank):
                raw = await asyncio.wait_for(arank(query, texts, deadline=ctx.deadline), timeout)
            else:
                raw = await asyncio.wait_for(asyncio.to_thread(ctx.reranker.rank, query, texts), timeout)
        except asyncio.TimeoutError:
            return fallback(f"reranker timed out after {timeout:.1f} s")
        except Exception as exc:  # noqa: BLE001 - any reranker failure falls back to the previous order
            return fallback(f"reranker error: {type(exc).__name__}: {exc}")
        if isinstance(raw, RankResponse):
            calls = list(raw.calls)
            if raw.error:
                return fallback(raw.error)
            raw = raw.ranking
        try:
            ranked = validate_ranking(raw, len(before), full_coverage=s.rerank_full_coverage)
        except RerankProtocolError as exc:
            return fallback(f"invalid rerank response: {exc}")
        after = [before[i] for i, _ in ranked[:keep]]
        reasons = ranking_reasons(raw, len(before))
        return Rerank(
            latency_ms=(time.perf_counter() - t0) * 1000,
            calls=calls,
            before=before,
            after=after,
            scores={before[i]: score for i, score in ranked},
            reasons={before[i]: why for i, why in reasons.items()},
            reranker=ctx.reranker_name,
            keep=keep,
        )
