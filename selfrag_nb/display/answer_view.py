"""The answer side of a trace as view trees: Assess, Generate, Verify, Usefulness, Outcome.

    assessment_card   action badge, why, options, the evidence shown to the assessor
                      numbered [1]..[n] as its reason cites it
    generation_card   the answer: each verified claim a ``data-claim`` span (verdict
                      colour, icon and number), citation markers styled (invalid ones
                      wavy red); citations; the evidence shown to the model, [n]
    support_card      claims, each folded with its evidence in a ``data-for-claim``
                      block (the span marked inside its chunk): clicking a claim in
                      the answer or in this list lights its evidence up (mount.js)
    usefulness_card   verdict, why, a 0-100 bar
    outcome_card      banners (deadline, model error, disclaimer), the final text,
                      dropped claims; the badge tone follows the values (cards.outcome_tone)

Split from html.py (which assembles a trace) to keep each module readable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from selfrag_nb.display.cards import (
    VERDICT_ICON,
    VERDICT_LABEL,
    Ctx,
    badge,
    block,
    card,
    esc,
    fold,
    joined,
    listing,
    marked,
    meta,
    outcome_tone,
    row,
    score_bar,
)
from selfrag_nb.display.markup import find_all, locate_span
from selfrag_nb.display.tree import Kid, Node, h
from selfrag_nb.trace import USEFULNESS_WORDS, Assessment, Claim, Generation, Outcome, Support, Usefulness

#: The outcome card's banner for reason_kind "model_error".
MODEL_ERROR_BANNER = "model error: model calls failed, so the check was not made (not missing evidence)"
_ACTION_TONE = {"answer": "ok", "clarify": "warn", "refuse": "bad", "answer_without_evidence": "warn"}


def evidence_list(ids: Sequence[str], ctx: Ctx, title: str) -> list[Node]:
    """The evidence the model was shown, numbered as it cites it: [1] .. [n]."""
    items = [[h("span", "srnb-num", f"[{i}]"), " ", ctx.label(c)] for i, c in enumerate(ids, 1)]
    return listing(title, items, "srnb-list srnb-evidence")


def assessment_card(a: Assessment, ctx: Ctx) -> Node:
    body: list[Any] = [row("why", esc(a.reason))]
    if a.options:
        body += listing("options to clarify", [esc(o, 2000) for o in a.options])
    if a.conflict:
        body.append(row("conflict", esc(a.conflict)))
    if a.applies:
        body.append(row("applies", esc(a.applies)))
    if a.evidence:
        body += evidence_list(a.evidence, ctx, "evidence shown to the assessor ([n] as cited above)")
    tag = badge(a.action.replace("_", " ").upper(), _ACTION_TONE[a.action])
    return card(a, tag, body, key=ctx.key)


_CITE_RE = re.compile(r"\[(\d{1,3})\]")


def _answer(g: Generation, sup: Support | None) -> Node:
    """The answer with claims highlighted by verdict (when verified), each a
    ``data-claim`` that selects its evidence; citation markers styled, invalid
    ones with a wavy red underline."""
    text = g.answer
    bad = {c.marker for c in g.citations if not c.valid}
    ranges: list[tuple[int, int, Callable[[list[Kid]], Node]]] = []
    claimed: list[tuple[int, int]] = []
    if sup is not None:
        for i, c in enumerate(sup.claims, 1):
            span = _claim_span(text, c)
            if span is None:
                continue
            err = " ⚠ citation" if c.citation_error else ""

            def wrap(kids: list[Kid], i: int = i, c: Claim = c, err: str = err) -> Node:
                tag = h(
                    "sup", "srnb-claim-tag", f"{VERDICT_ICON[c.verdict]}{i}{'⚠' if c.citation_error else ''}"
                )
                tip = f"claim {i}: {VERDICT_LABEL[c.verdict]}{err} (click: its evidence)"
                return h("span", f"srnb-claim srnb-v-{c.verdict}", kids, tag, title=tip, data_claim=i)

            ranges.append((*span, wrap))
            claimed.append(span)
    for m in _CITE_RE.finditer(text):
        if any(a <= m.start() < b for a, b in claimed):
            continue  # inside a claim: the claim's span holds it
        is_bad = int(m.group(1)) in bad

        def cite(kids: list[Kid], is_bad: bool = is_bad) -> Node:
            cls = "srnb-cite srnb-cite-bad" if is_bad else "srnb-cite"
            return h("span", cls, kids, title="invalid citation" if is_bad else None)

        ranges.append((m.start(), m.end(), cite))
    return marked(text, ranges, cls="srnb-block srnb-answer")


def _claim_span(answer: str, c: Claim) -> tuple[int, int] | None:
    if 0 <= c.start < c.end <= len(answer):
        return c.start, c.end
    found = find_all(answer, c.text.strip())
    return found[0] if found else None


def _legend() -> Node:
    return h(
        "div",
        "srnb-legend",
        [h("span", f"srnb-claim srnb-v-{v}", f"{VERDICT_ICON[v]} {VERDICT_LABEL[v]}") for v in VERDICT_ICON],
        h("span", "", "⚠ citation error"),
        h("span", "", "[n] cited evidence"),
    )


def generation_card(g: Generation, ctx: Ctx) -> Node:
    sup = ctx.supports.get(g.attempt) if ctx.in_trace else None
    body: list[Any] = [_legend() if sup is not None else None, _answer(g, sup)]
    if g.citations:
        items = [
            [
                f"[{c.marker}] ",
                ctx.label(c.chunk_id),
                [" ", badge("⚠ invalid citation", "bad")] if not c.valid else None,
            ]
            for c in g.citations
        ]
        body += listing("citations", items)
    if g.evidence:
        body += evidence_list(g.evidence, ctx, "evidence shown to the model")
    n_bad = sum(1 for c in g.citations if not c.valid)
    badges = [badge(g.mode, "info"), badge(f"{n_bad} invalid citation(s)", "bad") if n_bad else None]
    return card(g, badges, body, (f"attempt {g.attempt}", f"{len(g.answer):,} chars"), key=ctx.key)


def _mark(kids: list[Kid]) -> Node:
    return h("mark", "srnb-mark", kids)


def _evidence_view(c: Claim, ctx: Ctx) -> list[Node]:
    if not c.evidence:
        return [h("div", "srnb-muted", "no supporting evidence found")]
    out: list[Node] = []
    for ev in c.evidence:
        hit = ctx.chunks.get(ev.chunk_id)
        head = h("div", "srnb-label", "evidence in ", ctx.label(ev.chunk_id))
        if hit is None:
            out += [head, marked(ev.span, [(0, len(ev.span), _mark)])]
            continue
        where = locate_span(hit.text, ev.span, ev.start, ev.end)
        if where is None:
            note = h("div", "srnb-trunc", "span not found in the chunk; quoted span:")
            out += [head, note, block(ev.span), block(hit.text)]
        else:
            out += [head, marked(hit.text, [(*where, _mark)])]
    return out


def _claim_item(c: Claim, i: int, ctx: Ctx) -> Node:
    tone = {"supported": "ok", "partial": "warn", "unsupported": "bad"}[c.verdict]
    cites = joined((ctx.label(x, rank=False) for x in c.cited), ", ")
    summary = h(
        "summary",
        "",
        h("span", "srnb-rank", f"{i}."),
        badge(f"{VERDICT_ICON[c.verdict]} {VERDICT_LABEL[c.verdict]}", tone),
        " ",
        h("span", f"srnb-claim srnb-v-{c.verdict}", esc(c.text, 4000), data_claim=i, title="click: select"),
        [" ", meta(["cites ", cites])] if c.cited else None,
        [" ", badge("⚠ citation error", "bad")] if c.citation_error else None,
    )
    body: list[Any] = []
    if c.citation_error:
        body.append(h("div", "srnb-banner srnb-banner-bad", "⚠ ", esc(c.citation_error, 2000)))
    body.append(h("div", "srnb-evidence-for", _evidence_view(c, ctx), data_for_claim=i))
    return h(
        "details", "srnb-details srnb-claim-d", summary, body, data_key=f"{ctx.key or 'verify'}-claim-{i}"
    )


def support_card(s: Support, ctx: Ctx) -> Node:
    counts = {v: sum(1 for c in s.claims if c.verdict == v) for v in VERDICT_ICON}
    errs = sum(1 for c in s.claims if c.citation_error)
    tone = {"ACCEPT": "ok", "ADD_DISCLAIMER": "warn", "REGENERATE": "bad"}[s.recommendation]
    conf = score_bar(
        "overall confidence (0–100, higher = better supported)",
        s.overall_confidence,
        f"confidence {s.overall_confidence} of 100",
    )
    counts_meta = meta(
        f"{VERDICT_ICON['supported']} {counts['supported']} supported",
        f"{VERDICT_ICON['partial']} {counts['partial']} partial",
        f"{VERDICT_ICON['unsupported']} {counts['unsupported']} unsupported",
        f"⚠ {errs} citation error(s)" if errs else "",
    )
    claims = [_claim_item(c, i, ctx) for i, c in enumerate(s.claims, 1)]
    body = [
        _legend(),
        row("claims", counts_meta),
        conf,
        fold(claims, "claims", f"{ctx.key or 'verify'}-claims"),
    ]
    badges = [
        badge(s.recommendation, tone),
        badge("fully supported", "ok") if s.is_fully_supported else badge("not fully supported", "warn"),
    ]
    return card(s, badges, body, (f"attempt {s.attempt}", f"confidence {s.overall_confidence}"), key=ctx.key)


#: Usefulness verdict -> (badge text, tone).
USEFUL_TONE = {
    v: (USEFULNESS_WORDS[v], tone) for v, tone in (("yes", "ok"), ("partly", "warn"), ("no", "bad"))
}


def usefulness_card(u: Usefulness, ctx: Ctx) -> Node:
    label, tone = USEFUL_TONE[u.verdict]
    score = score_bar("usefulness (0–100, higher = more useful)", u.score, f"usefulness {u.score} of 100")
    body = [row("why", esc(u.reason)), row("missing", esc(u.missing)) if u.missing else None, score]
    return card(u, badge(label, tone), body, (f"attempt {u.attempt}", f"score {u.score}"), key=ctx.key)


def outcome_card(o: Outcome, ctx: Ctx) -> Node:
    body: list[Any] = []
    if o.deadline_exceeded:
        body.append(h("div", "srnb-banner srnb-banner-bad", "deadline exceeded"))
    if o.reason_kind == "model_error":
        body.append(h("div", "srnb-banner srnb-banner-bad", MODEL_ERROR_BANNER))
    if o.disclaimer:
        body.append(h("div", "srnb-banner", h("strong", "", "disclaimer:"), " ", esc(o.disclaimer)))
    label = (
        "refusal" if o.outcome == "refused" else "clarifying question" if o.outcome == "clarify" else "answer"
    )
    body += [h("div", "srnb-col-h", label), block(o.answer, cls="srnb-block srnb-answer")]
    if o.reason:
        body.append(row("why", esc(o.reason)))
    if o.dropped_claims:
        body += listing(f"dropped claims ({len(o.dropped_claims)})", [esc(c, 2000) for c in o.dropped_claims])
    if o.skipped:
        body.append(row("skipped (deadline)", esc(", ".join(o.skipped), 500)))
    sup = max(ctx.supports.items())[1] if ctx.supports else None
    return card(o, badge(o.outcome, outcome_tone(o, sup)), body, key=ctx.key)
