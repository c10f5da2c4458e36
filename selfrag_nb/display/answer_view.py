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
from functools import partial
from typing import Any

from selfrag_nb.display.cards import (
    USEFUL_TONE,
    VERDICT_ICON,
    VERDICT_LABEL,
    VERDICT_TONE,
    Ctx,
    Range,
    badge,
    banner,
    block,
    card,
    details,
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
_ASSESSOR_SAW = "evidence shown to the assessor ([n] as cited above)"
_ACTION_TONE = {"answer": "ok", "clarify": "warn", "refuse": "bad", "answer_without_evidence": "warn"}


def evidence_list(ids: Sequence[str], ctx: Ctx, title: str) -> list[Node]:
    """The evidence the model was shown, numbered as it cites it: [1] .. [n]."""
    items = [[h("span", "srnb-num", f"[{i}]"), " ", ctx.label(c)] for i, c in enumerate(ids, 1)]
    return listing(title, items, "srnb-list srnb-evidence")


def assessment_card(a: Assessment, ctx: Ctx) -> Node:
    body = [
        row("why", esc(a.reason)),
        listing("options to clarify", [esc(o, 2000) for o in a.options]) if a.options else None,
        row("conflict", esc(a.conflict)) if a.conflict else None,
        row("applies", esc(a.applies)) if a.applies else None,
        evidence_list(a.evidence, ctx, _ASSESSOR_SAW) if a.evidence else None,
    ]
    tag = badge(a.action.replace("_", " ").upper(), _ACTION_TONE[a.action])
    return card(a, tag, body, key=ctx.key)


_CITE_RE = re.compile(r"\[(\d{1,3})\]")


def _claim(i: int, c: Claim, kids: list[Kid]) -> Node:
    err = "⚠" if c.citation_error else ""
    tag = h("sup", "srnb-claim-tag", f"{VERDICT_ICON[c.verdict]}{i}{err}")
    tip = f"claim {i}: {VERDICT_LABEL[c.verdict]}{' ⚠ citation' if err else ''} (click: its evidence)"
    return h("span", f"srnb-claim srnb-v-{c.verdict}", kids, tag, title=tip, data_claim=i)


def _cite(bad: bool, kids: list[Kid]) -> Node:
    cls = "srnb-cite srnb-cite-bad" if bad else "srnb-cite"
    return h("span", cls, kids, title="invalid citation" if bad else None)


def _answer(g: Generation, sup: Support | None) -> Node:
    text = g.answer
    bad = {c.marker for c in g.citations if not c.valid}
    claims = sup.claims if sup is not None else []
    spans = [(span, i, c) for i, c in enumerate(claims, 1) if (span := _claim_span(text, c)) is not None]
    ranges: list[Range] = [(*span, partial(_claim, i, c)) for span, i, c in spans]
    for m in _CITE_RE.finditer(text):
        # a marker inside a claim: the claim's span holds it
        if not any(a <= m.start() < b for (a, b), _, _ in spans):
            ranges.append((m.start(), m.end(), partial(_cite, int(m.group(1)) in bad)))
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
    invalid = [" ", badge("⚠ invalid citation", "bad")]
    cites = [[f"[{c.marker}] ", ctx.label(c.chunk_id), None if c.valid else invalid] for c in g.citations]
    body = [
        _legend() if sup is not None else None,
        _answer(g, sup),
        listing("citations", cites) if cites else None,
        evidence_list(g.evidence, ctx, "evidence shown to the model") if g.evidence else None,
    ]
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
    cites = joined((ctx.label(x, rank=False) for x in c.cited), ", ")
    summary = [
        h("span", "srnb-rank", f"{i}."),
        badge(f"{VERDICT_ICON[c.verdict]} {VERDICT_LABEL[c.verdict]}", VERDICT_TONE[c.verdict]),
        " ",
        h("span", f"srnb-claim srnb-v-{c.verdict}", esc(c.text, 4000), data_claim=i, title="click: select"),
        [" ", meta(["cites ", cites])] if c.cited else None,
        [" ", badge("⚠ citation error", "bad")] if c.citation_error else None,
    ]
    return details(
        summary,
        banner("bad", "⚠ ", esc(c.citation_error, 2000)) if c.citation_error else None,
        h("div", "srnb-evidence-for", _evidence_view(c, ctx), data_for_claim=i),
        key=f"{ctx.key or 'verify'}-claim-{i}",
        cls="srnb-details srnb-claim-d",
    )


def support_card(s: Support, ctx: Ctx) -> Node:
    counts = {v: sum(1 for c in s.claims if c.verdict == v) for v in VERDICT_ICON}
    errs = sum(1 for c in s.claims if c.citation_error)
    tone = {"ACCEPT": "ok", "ADD_DISCLAIMER": "warn", "REGENERATE": "bad"}[s.recommendation]
    conf = f"confidence {s.overall_confidence} of 100"
    counts_meta = meta(
        *(f"{VERDICT_ICON[v]} {counts[v]} {v}" for v in VERDICT_ICON),
        f"⚠ {errs} citation error(s)" if errs else "",
    )
    claims = [_claim_item(c, i, ctx) for i, c in enumerate(s.claims, 1)]
    body = [
        _legend(),
        row("claims", counts_meta),
        score_bar("overall confidence (0–100, higher = better supported)", s.overall_confidence, conf),
        fold(claims, "claims", f"{ctx.key or 'verify'}-claims"),
    ]
    badges = [
        badge(s.recommendation, tone),
        badge("fully supported", "ok") if s.is_fully_supported else badge("not fully supported", "warn"),
    ]
    return card(s, badges, body, (f"attempt {s.attempt}", f"confidence {s.overall_confidence}"), key=ctx.key)


def usefulness_card(u: Usefulness, ctx: Ctx) -> Node:
    score = score_bar("usefulness (0–100, higher = more useful)", u.score, f"usefulness {u.score} of 100")
    body = [row("why", esc(u.reason)), row("missing", esc(u.missing)) if u.missing else None, score]
    tag = badge(USEFULNESS_WORDS[u.verdict], USEFUL_TONE[u.verdict])
    return card(u, tag, body, (f"attempt {u.attempt}", f"score {u.score}"), key=ctx.key)


def outcome_card(o: Outcome, ctx: Ctx) -> Node:
    label = {"refused": "refusal", "clarify": "clarifying question"}.get(o.outcome, "answer")
    dropped = [esc(c, 2000) for c in o.dropped_claims]
    body = [
        banner("bad", "deadline exceeded") if o.deadline_exceeded else None,
        banner("bad", MODEL_ERROR_BANNER) if o.reason_kind == "model_error" else None,
        banner("", h("strong", "", "disclaimer:"), " ", esc(o.disclaimer)) if o.disclaimer else None,
        h("div", "srnb-col-h", label),
        block(o.answer, cls="srnb-block srnb-answer"),
        row("why", esc(o.reason)) if o.reason else None,
        listing(f"dropped claims ({len(dropped)})", dropped) if dropped else None,
        row("skipped (deadline)", esc(", ".join(o.skipped), 500)) if o.skipped else None,
    ]
    sup = max(ctx.supports.items())[1] if ctx.supports else None
    return card(o, badge(o.outcome, outcome_tone(o, sup)), body, key=ctx.key)


#: The card of each answer-side record, in flow order (html.py's renderers).
ANSWER_CARDS: dict[type, Callable[[Any, Ctx], Node]] = {
    Assessment: assessment_card,
    Generation: generation_card,
    Support: support_card,
    Usefulness: usefulness_card,
    Outcome: outcome_card,
}
