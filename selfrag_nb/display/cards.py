"""The pieces every record card is built from: view-tree builders (tree.py Nodes).

Ctx / ctx_for(obj)   what a record's view may borrow from its trace
                     (chunk texts from the retrieval, support per attempt,
                     the evidence numbers [n] the model was shown)
                     and how it names chunks (its own ``refs`` when alone):
                     label(id) = #rank file › heading path + trust flags
esc / block / marked untrusted text as nodes: inline (isolated in <bdi>),
                     a paragraph (dir="auto"), a paragraph with ranges wrapped
                     (claims, evidence marks); long texts cut with a note
card(rec, badges, body)  one .srnb-card: stage title, badges, latency,
                         model-call count, fallbacks banner, body, calls_view
badge meta row fold bar  small pieces around that text
calls_view(calls)    the model-call inspector (prompts, raw output, tokens, cost)
table card_head root listing joined score_bar   shapes several views build
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from selfrag_nb.display.markup import TEXT_LIMIT, fmt_ms, pct, plural
from selfrag_nb.display.names import chunk_name, short_id
from selfrag_nb.display.tree import Kid, Node, frag, h
from selfrag_nb.flow import TITLES
from selfrag_nb.formats import fmt_cost, fmt_tokens
from selfrag_nb.store.types import ChunkRef, Hit
from selfrag_nb.trace import (
    Assessment,
    Fallback,
    Generation,
    ModelCall,
    Outcome,
    Retrieval,
    Support,
    Trace,
    _NamesChunks,
)

#: Items (hits, grades, claims) shown before the pager (widget) or a "show N more" fold (static).
PAGE = 20
#: Items put in a view at all; the rest are counted, not shown.
STATIC_MAX_ITEMS = 500
#: Shorter limits for model-call messages (prompts repeat the evidence).
CALL_TEXT_LIMIT = 6_000

OFFLINE_NOTE = "offline model — reads structured inputs, not prompts"

VERDICT_ICON = {"supported": "✓", "partial": "◐", "unsupported": "✗"}
VERDICT_LABEL = {"supported": "supported", "partial": "partly supported", "unsupported": "unsupported"}
VERDICT_TONE = {"supported": "ok", "partial": "warn", "unsupported": "bad"}
#: A usefulness verdict's badge tone.
USEFUL_TONE = {"yes": "ok", "partly": "warn", "no": "bad"}


# ------------------------------------------------------------ text


def cut_note(text: str, limit: int) -> tuple[str, Node | None]:
    """``text`` cut to ``limit`` characters and the note saying so (None when whole)."""
    if len(text) <= limit:
        return text, None
    note = h("span", "srnb-trunc", f"… truncated: showing {limit:,} of {len(text):,} characters")
    return text[:limit], note


def esc(text: object, limit: int = TEXT_LIMIT) -> Node:
    """Inline text: isolated in ``<bdi>`` (right-to-left text cannot reorder the UI), cut."""
    s, note = cut_note(str(text), limit)
    return frag(h("bdi", "", s), " " if note else None, note)


def block(text: str, limit: int = TEXT_LIMIT, cls: str = "srnb-block") -> Node:
    """A paragraph of untrusted text, its direction decided by its own content."""
    s, note = cut_note(text, limit)
    return h("div", cls, s, " " if note else None, note, dir="auto")


#: A range of a text to wrap: (start, end, wrap(kids) -> node).
Range = tuple[int, int, Callable[[list[Kid]], Node]]


def marked(text: str, ranges: Iterable[Range], limit: int = TEXT_LIMIT, cls: str = "srnb-block") -> Node:
    """A block with some character ranges wrapped in nodes (claims, evidence marks).
    Overlapping ranges keep the earliest; ranges past the cut are clipped."""
    s, note = cut_note(text, limit)
    out: list[Any] = []
    pos = 0
    for r_start, r_end, wrap in sorted(ranges, key=lambda r: (r[0], -r[1])):
        start, end = max(r_start, pos), min(r_end, len(s))
        if end <= start:
            continue
        out.append(s[pos:start])
        out.append(wrap(list(h("span", "", s[start:end]).kids)))
        pos = end
    out.append(s[pos:])
    return h("div", cls, out, " " if note else None, note, dir="auto")


def joined(items: Iterable[Any], sep: Any = " · ") -> list[Any]:
    """``items`` with ``sep`` (text or a node) between each two."""
    return [[sep if i else None, item] for i, item in enumerate(items)]


_BREAK_AFTER = re.compile(r"(?<=[/_\-.])")


def breakable(text: str, limit: int = 300) -> Node:
    """A name (file, path, id) that may wrap after / _ - . but never inside a word."""
    s, note = cut_note(text, limit)
    return frag(h("bdi", "", joined(_BREAK_AFTER.split(s), h("wbr"))), " " if note else None, note)


# ----------------------------------------------------------- context


@dataclass
class Ctx:
    """What a record's view may borrow from the rest of its trace."""

    chunks: dict[str, Hit] = field(default_factory=dict)
    refs: dict[str, ChunkRef] = field(default_factory=dict)
    supports: dict[int, Support] = field(default_factory=dict)
    #: chunk id -> its number [n] in the evidence the model was shown (first Assess/Generate).
    evidence_no: dict[str, int] = field(default_factory=dict)
    in_trace: bool = False
    #: The record being drawn, as a ``data-key`` prefix: its folds stay open across redraws.
    key: str = ""
    # Nodes are immutable: a chunk's label is built once per view and shared.
    _labels: dict[tuple[str, bool], Node] = field(default_factory=dict, repr=False)

    def name(self, chunk_id: str) -> dict[str, Any] | None:
        ref = self.refs.get(chunk_id)
        return chunk_name(ref) if ref is not None else None

    def label(self, chunk_id: str, *, rank: bool = True) -> Node:
        """#rank, file name, title › heading, trust flags; the id on hover."""
        made = self._labels.get((chunk_id, rank))
        if made is None:
            made = self._labels[(chunk_id, rank)] = self._label(chunk_id, rank)
        return made

    def _label(self, chunk_id: str, rank: bool) -> Node:
        n = self.name(chunk_id)
        if n is None:
            return h("span", "srnb-id", esc(short_id(chunk_id), 40), title=f"chunk {chunk_id}")
        return h(
            "span",
            "srnb-chunk",
            [h("span", "srnb-rank", f"#{n['rank']}"), " "] if rank and n["rank"] else None,
            h("span", "srnb-src", breakable(n["file"], 300)),
            [" ", h("span", "srnb-path", esc(n["path"], 300))] if n["path"] else None,
            flags(n["flags"]),
            title=f"{n['source']} · chunk {chunk_id}"[:500],
        )

    def superseded(self, chunk_id: str) -> bool:
        """Whether the chunk's document is flagged superseded (its "bad" trust flag)."""
        info = self.name(chunk_id)
        return info is not None and any(tone == "bad" for _, tone, _ in info["flags"])

    def short(self, chunk_id: str, n: int = 28) -> str:
        """Plain text: the file name (⚠ first when superseded), cut with an ellipsis."""
        info = self.name(chunk_id)
        if info is None:
            return short_id(chunk_id)
        name = ("⚠ " if self.superseded(chunk_id) else "") + str(info["file"])
        return name if len(name) <= n else name[: n - 1] + "…"


def ctx_for(obj: object) -> Ctx:
    ctx = Ctx()
    if isinstance(obj, Trace):
        ctx.in_trace = True
        for ret in obj._all(Retrieval):
            for hit in ret.hits:
                ctx.chunks.setdefault(hit.chunk_id, hit)
                ctx.refs.setdefault(hit.chunk_id, ChunkRef.from_hit(hit))
        for sup in obj.supports:
            ctx.supports[sup.attempt] = sup
        for rec in obj.records:
            if isinstance(rec, _NamesChunks):
                for k, v in rec.refs.items():
                    ctx.refs.setdefault(k, v)
            if isinstance(rec, (Assessment, Generation)) and rec.evidence and not ctx.evidence_no:
                ctx.evidence_no = {c: i for i, c in enumerate(rec.evidence, 1)}
    elif isinstance(obj, _NamesChunks):
        ctx.refs.update(obj.refs)
    return ctx


# ------------------------------------------------------------ pieces


def badge(text: str, tone: str = "", title: str = "") -> Node:
    cls = f"srnb-badge srnb-{tone}" if tone else "srnb-badge"
    return h("span", cls, esc(text, 200), title=title[:500] or None)


def offline_badge() -> Node:
    return badge(OFFLINE_NOTE, "offline")


def meta(*items: Any) -> Node | None:
    parts = [i for i in items if i]
    return h("span", "srnb-meta", joined(parts, h("span", "srnb-meta-sep", "·"))) if parts else None


def card_head(title: Any, *kids: Any) -> Node:
    """A card's heading row: its title, then badges and meta."""
    return h("div", "srnb-card-h", h("span", "srnb-stage", title), kids)


def root(cls: str, *kids: Any) -> Node:
    """A view's root element (``cls`` carries the MathJax opt-out classes)."""
    return h("div", cls, kids, dir="ltr")


def table(cls: str, heads: Sequence[Any], rows: Any, **attrs: Any) -> Node:
    """A table: ``heads`` in one header row (each put in a <th> unless it is one;
    None left out), then ``rows`` in one <tbody>."""
    cells = [x if isinstance(x, Node) and x.tag == "th" else h("th", "", x) for x in heads if x is not None]
    return h("table", cls, h("thead", "", h("tr", "", cells)), h("tbody", "", rows), **attrs)


def listing(title: str, items: Iterable[Any], cls: str = "srnb-list") -> list[Node]:
    """A titled list: each item's kids in one ``li.srnb-list-item``."""
    return [h("div", "srnb-col-h", title), h("ul", cls, [h("li", "srnb-list-item", i) for i in items])]


def num(text: str) -> Node:
    return h("span", "srnb-num", text)


def row(label: str, *value: Any) -> Node:
    return h("div", "srnb-row", h("span", "srnb-label", label), value)


def fold(items: Sequence[Node], noun: str, key: str) -> Node:
    """A list the widget pages and the static face folds after PAGE items (tree.py's
    ``data-page``); past STATIC_MAX_ITEMS a note counts what is not shown."""
    hidden = len(items) - STATIC_MAX_ITEMS
    shown = items[:STATIC_MAX_ITEMS]
    note = f"{hidden:,} more {noun} not shown here (see trace.to_pandas())"
    paged = h("div", f"srnb-items srnb-items-{noun}", shown, data_page=PAGE, data_key=key, data_noun=noun)
    return frag(paged, h("div", "srnb-trunc", note) if hidden > 0 else None)


def fallbacks(fbs: Sequence[Fallback]) -> list[Node]:
    return [
        banner("", h("strong", "", "fallback:"), " ", esc(f.what, 500), " — ", esc(f.reason, 2000))
        for f in fbs
    ]


def banner(tone: str, *kids: Any, cls: str = "") -> Node:
    """A banner: warn colours, or ``tone`` "bad" / "info"; ``cls`` adds a view's own classes."""
    return h("div", " ".join(filter(None, ["srnb-banner", tone and f"srnb-banner-{tone}", cls])), kids)


def details(
    summary: Any, *body: Any, key: str | None = None, cls: str = "srnb-details", **attrs: Any
) -> Node:
    """A fold: ``summary`` always shown, ``body`` on opening; ``key`` keeps it open across redraws."""
    return h("details", cls, h("summary", "", summary), body, **attrs, data_key=key)


_STATUS_TONE = {"ok": "ok", "repaired": "warn", "unparsed": "bad", "error": "bad"}


def _call(c: ModelCall, i: int, key: str) -> Node:
    inj = ", ".join(c.injection_flags)
    badges = [
        badge(c.parse_status, _STATUS_TONE[c.parse_status]),
        badge("offline", "offline", OFFLINE_NOTE) if c.offline else None,
        badge("cached", "info") if c.cached else None,
        badge(f"injection: {inj}", "bad") if inj else None,
    ]
    summary = [
        [h("span", "srnb-rank", f"#{i}"), " ", esc(c.role, 50), " · ", esc(c.model, 200), " "],
        [[b, " "] for b in badges if b],
        meta(
            fmt_ms(c.latency_ms),
            f"in {fmt_tokens(c.tokens_in)} / out {fmt_tokens(c.tokens_out)} tokens",
            f"cost {fmt_cost(c.cost)}",
            f"{c.retries} retries" if c.retries else "",
        ),
    ]
    return details(
        summary,
        row("prompt hash", h("span", "srnb-id", esc(c.prompt_hash or "—", 200))),
        row("model", offline_badge()) if c.offline else None,
        row("parse error", esc(c.parse_error, 2000)) if c.parse_error else None,
        row("error", esc(c.error, 2000)) if c.error else None,
        row("fallback", esc(c.fallback, 2000)) if c.fallback else None,
        [
            [h("div", "srnb-label", esc(m.get("role", "?"), 40)), _code(m.get("content", ""))]
            for m in c.messages
        ],
        h("div", "srnb-label", "raw output"),
        _code(c.raw),
        key=f"{key}-call-{i}",
    )


def _code(text: str) -> Node:
    return block(text, CALL_TEXT_LIMIT, "srnb-block srnb-code")


def calls_view(calls: Sequence[ModelCall], key: str = "calls") -> Node | None:
    """The model-call inspector: one folded list, each call folded again."""
    if not calls:
        return None
    tin = sum(c.tokens_in or 0 for c in calls)
    tout = sum(c.tokens_out or 0 for c in calls)
    cost = None if any(c.cost is None for c in calls) else float(sum(c.cost or 0.0 for c in calls))
    head = f"model calls ({len(calls)}) · tokens {tin:,} in / {tout:,} out · cost {fmt_cost(cost)}"
    return details(head, [_call(c, i, key) for i, c in enumerate(calls, 1)], key=key)


def card(rec: Any, badges: Any, body: Any, extra_meta: Sequence[Any] = (), key: str = "") -> Node:
    """One record's card; ``key`` makes its folds' open state survive redraws (unique per trace)."""
    calls: list[ModelCall] = rec.calls
    key = key or rec.stage
    numbers = meta(num(fmt_ms(rec.latency_ms)), plural(len(calls), "model call"), *extra_meta)
    offline = offline_badge() if any(c.offline for c in calls) else None
    head = card_head(TITLES[rec.stage], badges, numbers, offline)
    inspector = calls_view(calls, f"{key}-calls")
    return h("section", f"srnb-card srnb-card-{rec.stage}", head, fallbacks(rec.fallbacks), body, inspector)


def flags(items: Sequence[Sequence[str]]) -> list[Any]:
    """A chunk's trust flags (⚠ superseded, effective date, ...) as badges."""
    return [[" ", badge(text, tone, tip)] for text, tone, tip in items]


def score_bar(name: str, score: int, tip: str) -> Node:
    """A named 0-100 score: its bar (the 50 and 80 bands marked, its colour the band
    the value falls in) and the number."""
    band = "high" if score >= 80 else "partial" if score >= 50 else "irrelevant"
    bars = bar(score, band, (50, 80), tip)
    return h("div", "srnb-grade", h("div", "srnb-grade-name", name), bars, h("div", "", num(str(score))))


def bar(score: float, band: str, ticks: Sequence[int] = (), title: str = "") -> Node:
    """A 0-100 bar; ``ticks`` are the threshold lines drawn across it (placed by a
    custom property: the view tree allows widths and custom properties only)."""
    fill = h("div", f"srnb-bar-fill srnb-fill-{band}", style=f"width:{pct(score)}")
    lines = [h("div", "srnb-tick", style=f"--srnb-at:{pct(t)}") for t in ticks]
    return h("div", "srnb-bar", fill, lines, title=title or f"score {score:g}")


#: An outcome's own badge tone, before anything about its answer is read (the
#: explorer's rows show it as it is; outcome_tone below can only darken it).
OUTCOME_TONE = {
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
    tone = OUTCOME_TONE[o.outcome]
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
