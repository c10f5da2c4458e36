"""The pieces every record card is built from (static HTML, no script).

    Ctx / ctx_for(obj)   what a record's view may borrow from its trace
                         (chunk texts from the retrieval, support per attempt)
                         and how it names chunks (its own ``refs`` when alone):
                         label(id) = #rank file › heading path + trust flags
    card(rec, badges, body)  one .srnb-card: stage title, badges, latency,
                             model-call count, fallbacks banner, body, calls_view
    badge meta row fold bar  small trusted pieces around escaped text
    calls_view(calls)    the model-call inspector (prompts, raw output, tokens, cost)

Every text goes through markup.py (``esc`` / ``block`` / ``escape``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from selfrag_nb.display.markup import attr, block, cut, esc, escape, fmt_cost, fmt_ms, fmt_tokens, pct
from selfrag_nb.display.names import chunk_name, short_id
from selfrag_nb.flow import TITLES
from selfrag_nb.store.types import ChunkRef, Hit
from selfrag_nb.trace import Fallback, ModelCall, Outcome, Retrieval, Support, Trace, _NamesChunks

__all__ = [
    "CALL_TEXT_LIMIT",
    "OFFLINE_NOTE",
    "PAGE",
    "STAGE_TITLES",
    "STATIC_MAX_ITEMS",
    "VERDICT_ICON",
    "VERDICT_LABEL",
    "Ctx",
    "badge",
    "band_of",
    "bar",
    "breakable",
    "calls_view",
    "card",
    "costs",
    "ctx_for",
    "fallbacks",
    "flags_html",
    "fold",
    "meta",
    "offline_badge",
    "outcome_tone",
    "row",
]

#: Items (hits, grades, claims) shown before a "show N more" fold.
PAGE = 20
#: Items rendered at all in the static view; the rest are counted, not shown.
STATIC_MAX_ITEMS = 500
#: Shorter limits for model-call messages (prompts repeat the evidence).
CALL_TEXT_LIMIT = 6_000

OFFLINE_NOTE = "offline model — reads structured inputs, not prompts"

STAGE_TITLES = TITLES

VERDICT_ICON = {"supported": "✓", "partial": "◐", "unsupported": "✗"}
VERDICT_LABEL = {"supported": "supported", "partial": "partly supported", "unsupported": "unsupported"}


def costs(calls: Sequence[ModelCall]) -> float | None:
    vals = [c.cost for c in calls]
    return None if any(v is None for v in vals) else float(sum(v or 0.0 for v in vals))


# ----------------------------------------------------------- context


@dataclass
class Ctx:
    """What a record's view may borrow from the rest of its trace."""

    chunks: dict[str, Hit] = field(default_factory=dict)
    refs: dict[str, ChunkRef] = field(default_factory=dict)
    supports: dict[int, Support] = field(default_factory=dict)
    in_trace: bool = False

    def name(self, chunk_id: str) -> dict[str, Any] | None:
        ref = self.refs.get(chunk_id)
        return chunk_name(ref) if ref is not None else None

    def label(self, chunk_id: str, *, rank: bool = True) -> str:
        """#rank, file name, title › heading, trust flags; the id on hover."""
        n = self.name(chunk_id)
        if n is None:
            return (
                f'<span class="srnb-id" title="chunk {attr(chunk_id)}">{esc(short_id(chunk_id), 40)}</span>'
            )
        tip = attr(f"{n['source']} · chunk {chunk_id}")
        out = f'<span class="srnb-chunk" title="{tip}">'
        if rank and n["rank"]:
            out += f'<span class="srnb-rank">#{n["rank"]}</span> '
        out += f'<span class="srnb-src">{breakable(n["file"], 300)}</span>'
        if n["path"]:
            out += f' <span class="srnb-path">{esc(n["path"], 300)}</span>'
        return out + flags_html(n["flags"]) + "</span>"

    def short(self, chunk_id: str, n: int = 28) -> str:
        """Plain text: the file name (⚠ first when superseded), cut with an ellipsis."""
        info = self.name(chunk_id)
        if info is None:
            return short_id(chunk_id)
        name = str(info["file"])
        if any(tone == "bad" for _, tone, _ in info["flags"]):
            name = "⚠ " + name
        return name if len(name) <= n else name[: n - 1] + "…"


def ctx_for(obj: object) -> Ctx:
    ctx = Ctx()
    if isinstance(obj, Trace):
        ctx.in_trace = True
        for ret in obj._all(Retrieval):
            for h in ret.hits:
                ctx.chunks.setdefault(h.chunk_id, h)
                ctx.refs.setdefault(h.chunk_id, ChunkRef.from_hit(h))
        for sup in obj.supports:
            ctx.supports[sup.attempt] = sup
        for rec in obj.records:
            if isinstance(rec, _NamesChunks):
                for k, v in rec.refs.items():
                    ctx.refs.setdefault(k, v)
    elif isinstance(obj, _NamesChunks):
        ctx.refs.update(obj.refs)
    return ctx


# ------------------------------------------------------------ pieces


def badge(text: str, tone: str = "", title: str = "") -> str:
    cls = f"srnb-badge srnb-{tone}" if tone else "srnb-badge"
    t = f' title="{attr(title)}"' if title else ""
    return f'<span class="{cls}"{t}>{esc(text, 200)}</span>'


def offline_badge() -> str:
    return badge(OFFLINE_NOTE, "offline")


def meta(*items: str) -> str:
    parts = [i for i in items if i]
    sep = '<span class="srnb-meta-sep">·</span>'
    return f'<span class="srnb-meta">{sep.join(parts)}</span>' if parts else ""


def row(label: str, value_html: str) -> str:
    return f'<div class="srnb-row"><span class="srnb-label">{escape(label)}</span>{value_html}</div>'


def fold(items: Sequence[str], noun: str, page: int = PAGE, wrap: tuple[str, str] = ("", "")) -> str:
    """First ``page`` items, then a ``<details>`` with the rest (capped)."""
    head = "".join(items[:page])
    out = wrap[0] + head + wrap[1]
    rest = items[page:STATIC_MAX_ITEMS]
    if rest:
        out += (
            f'<details class="srnb-details srnb-more"><summary>show {len(rest)} more {noun}</summary>'
            f"{wrap[0]}{''.join(rest)}{wrap[1]}</details>"
        )
    hidden = len(items) - STATIC_MAX_ITEMS
    if hidden > 0:
        out += f'<div class="srnb-trunc">{hidden:,} more {noun} not shown here (see the widget or trace.to_pandas())</div>'
    return out


def fallbacks(fbs: Sequence[Fallback]) -> str:
    return "".join(
        f'<div class="srnb-banner"><strong>fallback:</strong> {esc(f.what, 500)} — {esc(f.reason, 2000)}</div>'
        for f in fbs
    )


def calls_view(calls: Sequence[ModelCall]) -> str:
    """The model-call inspector: one folded table, each call folded again."""
    if not calls:
        return ""
    rows = []
    for i, c in enumerate(calls, 1):
        status_tone = {"ok": "ok", "repaired": "warn", "unparsed": "bad", "error": "bad"}[c.parse_status]
        flags = ", ".join(c.injection_flags)
        summary = (
            f'<span class="srnb-rank">#{i}</span> {esc(c.role, 50)} · {esc(c.model, 200)} '
            f"{badge(c.parse_status, status_tone)} "
            + (badge("offline", "offline", OFFLINE_NOTE) + " " if c.offline else "")
            + (badge("cached", "info") + " " if c.cached else "")
            + (badge(f"injection: {flags}", "bad") + " " if flags else "")
            + meta(
                fmt_ms(c.latency_ms),
                f"in {fmt_tokens(c.tokens_in)} / out {fmt_tokens(c.tokens_out)} tokens",
                f"cost {fmt_cost(c.cost)}",
                f"{c.retries} retries" if c.retries else "",
            )
        )
        body = [
            row("prompt hash", f'<span class="srnb-id">{esc(c.prompt_hash or "—", 200)}</span>'),
        ]
        if c.offline:
            body.append(row("model", offline_badge()))
        if c.parse_error:
            body.append(row("parse error", esc(c.parse_error, 2000)))
        if c.error:
            body.append(row("error", esc(c.error, 2000)))
        if c.fallback:
            body.append(row("fallback", esc(c.fallback, 2000)))
        for m in c.messages:
            role = m.get("role", "?")
            body.append(
                f'<div class="srnb-label">{esc(role, 40)}</div>'
                + block(m.get("content", ""), CALL_TEXT_LIMIT, "srnb-block srnb-code")
            )
        body.append(
            '<div class="srnb-label">raw output</div>' + block(c.raw, CALL_TEXT_LIMIT, "srnb-block srnb-code")
        )
        rows.append(f'<details class="srnb-details"><summary>{summary}</summary>{"".join(body)}</details>')
    n = len(calls)
    return (
        f'<details class="srnb-details"><summary>model calls ({n}) · tokens '
        f"{sum(c.tokens_in or 0 for c in calls):,} in / {sum(c.tokens_out or 0 for c in calls):,} out · "
        f"cost {fmt_cost(costs(calls))}</summary>{''.join(rows)}</details>"
    )


def card(rec: Any, badges: str, body: str, extra_meta: Sequence[str] = ()) -> str:
    calls: list[ModelCall] = rec.calls
    offline = any(c.offline for c in calls)
    head = (
        f'<div class="srnb-card-h"><span class="srnb-stage">{STAGE_TITLES[rec.stage]}</span>{badges}'
        + meta(
            f'<span class="srnb-num">{fmt_ms(rec.latency_ms)}</span>',
            f"{len(calls)} model call{'s' if len(calls) != 1 else ''}",
            *extra_meta,
        )
        + (offline_badge() if offline else "")
        + "</div>"
    )
    return (
        f'<section class="srnb-card srnb-card-{rec.stage}">{head}{fallbacks(rec.fallbacks)}{body}'
        f"{calls_view(calls)}</section>"
    )


_BREAK_AFTER = re.compile(r"(?<=[/_\-.])")


def breakable(text: str, limit: int = 300) -> str:
    """A name (file, path, id) that may wrap after / _ - . but never inside a word."""
    s, note = cut(text, limit)
    return "<bdi>" + "<wbr>".join(escape(p, ctl="span") for p in _BREAK_AFTER.split(s)) + "</bdi>" + note


def flags_html(flags: Sequence[Sequence[str]]) -> str:
    return "".join(f" {badge(text, tone, tip)}" for text, tone, tip in flags)


def band_of(score: float, low: int = 50, high: int = 80) -> str:
    """The colour band a 0-100 value falls in: the colour follows the value."""
    return "high" if score >= high else "partial" if score >= low else "irrelevant"


def bar(score: float, band: str, ticks: Sequence[int] = (), title: str = "") -> str:
    """A 0-100 bar; ``ticks`` are the threshold lines drawn across it."""
    lines = "".join(f'<div class="srnb-tick" style="left:{pct(t)}"></div>' for t in ticks)
    tip = escape(title or f"score {score:g}")
    return (
        f'<div class="srnb-bar" title="{tip}">'
        f'<div class="srnb-bar-fill srnb-fill-{band}" style="width:{pct(score)}"></div>{lines}</div>'
    )


_OUTCOME_TONE = {
    "answered": "ok",
    "direct": "ok",
    "disclaimed": "warn",
    "regenerated": "warn",
    "clarify": "warn",
    "refused": "bad",
}


def outcome_tone(o: Outcome | None, support: Support | None = None) -> str:
    """The badge colour of an outcome, from its values: an answer is green only
    when nothing about it is doubtful (deadline, dropped claims, a disclaimer,
    retrieval forced off, or its verification's confidence / recommendation)."""
    if o is None:
        return "info"
    tone = _OUTCOME_TONE[o.outcome]
    if o.deadline_exceeded:
        return "bad"
    if o.outcome == "direct" and o.reason_kind == "retrieval_off":
        # A forced "no retrieval" answered from the model alone: nothing grounds
        # it, so it must not look like the green "no retrieval was needed".
        return "warn"
    if tone == "ok" and (o.dropped_claims or o.disclaimer):
        tone = "warn"
    if support is not None and o.outcome in {"answered", "disclaimed", "regenerated"}:
        if support.overall_confidence < 50 or support.recommendation == "REGENERATE":
            return "bad"
        if tone == "ok" and (support.overall_confidence < 80 or not support.is_fully_supported):
            tone = "warn"
    return tone
