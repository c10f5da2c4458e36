"""An evaluation report shaped like a real ablation, for the browser tests.

    browser_report()   4 variants x 7 categories x 4 questions (112 rows):
                       ids like "fact7-01" and long path-like ones, per-role
                       tokens / cost / latency (eight or seven roles a variant:
                       the per-role card has 30 rows, taller than a 460 px box),
                       evidence as 24-hex chunk ids with their sources,
                       one question taking 12 s (a time axis must switch to s)

    MEASURE / check()  what a person sees of a view in the browser (JS measured
                       in the page, then every problem named at once)

    hand_row(qs, variant, qid, failed=[...], **fields)   one hand-built row
    hand_report(rows, qs)                    two variants, "base" and "rr" (rerank)

Built from EvalRow values, as evaluate() would; the test kernels import this
file (tests/support on sys.path) so they show the same report.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from selfrag_nb.eval.charts import variant_colours
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.report import EvalReport

VARIANTS = {
    "baseline": {},
    "+rewrite": {"rewrite": True},
    "+rerank": {"rerank": True},
    "+rewrite+rerank": {"rewrite": True, "rerank": True},
}
CATEGORIES = (
    "ambiguous_follow_up_zh",  # first and long: its rotated label reaches furthest left
    "factual",
    "multi_hop",
    "unanswerable",
    "ambiguous_follow_up",
    "access_controlled",
    "chinese_zh",
)
SOURCES = ("docs/refund-policy-2024.md", "docs/billing/invoices.md", "faq.md")
ROLES = ("decide", "rewrite", "grade", "rerank", "assess", "generate", "verify", "usefulness")


def chunk_id(source: str, i: int) -> str:
    """A chunk id as the store makes them: a hash, meaningless to a reader."""
    return hashlib.sha256(f"{source}#{i}".encode()).hexdigest()[:24]


def browser_report() -> EvalReport:
    questions = []
    for cat in CATEGORIES:
        for i in range(4):
            # short ids ("factual-02") sit in narrow cells; long ones must be cut, never broken
            qid = (
                f"{cat[:4]}{len(cat)}-{i:02d}" if i % 2 else f"{cat}/refund-policy_window.v2-section-{i:02d}"
            )
            questions.append(
                Question(
                    id=qid,
                    category=cat,
                    question=f"Question {i} about {cat}: how long is the refund window for annual plans?",
                    expected=["answered"],
                )
            )
    qs = QuestionSet(questions, name="browser layout set")
    rows = []
    for vi, variant in enumerate(VARIANTS):
        for qi, q in enumerate(qs):
            ok = (qi + vi) % 5 != 0
            roles = ROLES if vi % 2 else ROLES[1:]
            rows.append(
                EvalRow(
                    variant=variant,
                    id=q.id,
                    category=q.category,
                    question=q.question,
                    expected=q.expected,
                    outcome="answered" if ok else "refused",
                    # a refusal names the check that ended it, as pipeline rows do
                    reason_kind="" if ok else ("no_evidence" if qi % 2 else "not_answered"),
                    outcome_ok=ok,
                    wrong_refusal=not ok,
                    latency_ms=80.0
                    + 7 * qi
                    + 40 * vi
                    + (1500 if qi == 3 else 0)
                    + (12_000 if qi == 9 else 0),
                    cost=0.0,
                    model_calls=3,
                    tokens_in=1200 + qi,
                    tokens_out=80,
                    retrieved=list(SOURCES),
                    evidence=[chunk_id(s, qi) for s in SOURCES],
                    kept=[chunk_id(SOURCES[0], qi)],
                    role_tokens_in=dict.fromkeys(roles, 300 + qi),
                    role_tokens_out=dict.fromkeys(roles, 20),
                    role_cost=dict.fromkeys(roles, 0.0),
                    role_latency_ms=dict.fromkeys(roles, 20.0 + qi),
                    config_version=f"cfg-{vi}-0123456789abcdef",
                    failed_checks=[] if ok else ["outcome"],
                    failure_reason=None if ok else "wrong outcome: refused not in [answered]",
                )
            )
    return EvalReport(rows, variants=VARIANTS, questions=qs, k=5, seconds=42.0)


# What a person sees, measured in the page (root: the view's root element).
#   cut     tables / charts whose right part cannot be seen: they reach past
#           their card and no wrapper inside the card scrolls them into view
#   broken  ids laid out on more than one line
#   clipped rows of the per-role table hidden (wholly or partly) by a box
#           that clips them (overflow other than visible) or by the card
#   overflow the view makes its container scroll sideways
MEASURE = """(root) => {
  const cut = [];
  for (const card of root.querySelectorAll('.srnb-card')) {
    const right = card.getBoundingClientRect().right;
    for (const el of card.querySelectorAll('table, svg.srnb-chart-svg')) {
      const wrap = el.closest('.srnb-scroll, .srnb-chart');
      const scrolls = wrap && card.contains(wrap) && ['auto', 'scroll'].includes(getComputedStyle(wrap).overflowX);
      if (scrolls) {
        const prev = wrap.scrollLeft;
        wrap.scrollLeft = wrap.scrollWidth;  // the person scrolls to the end
        const seen = el.getBoundingClientRect().right <= wrap.getBoundingClientRect().right + 1;
        const inside = wrap.getBoundingClientRect().right <= right + 1;
        wrap.scrollLeft = prev;
        if (!(seen && inside)) cut.push(el.className.baseVal ?? el.className);
      } else if (el.getBoundingClientRect().right > right + 1) {
        cut.push(el.className.baseVal ?? el.className);
      }
    }
  }
  const broken = Array.from(root.querySelectorAll('.srnb-id')).filter((e) => {
    const tops = new Set(Array.from(e.getClientRects()).map((r) => Math.round(r.top)));
    return tops.size > 1;
  }).map((e) => e.textContent);
  const clipped = [];
  const roles = root.querySelector('.srnb-ev-roles');
  const roleRows = roles ? Array.from(roles.querySelectorAll('tbody tr')) : [];
  for (const tr of roleRows) {
    const r = tr.getBoundingClientRect();
    for (let a = tr.parentElement; a && a !== root.parentElement; a = a.parentElement) {
      const st = getComputedStyle(a);
      const clips = st.overflowY !== 'visible' || a === roles;
      const b = a.getBoundingClientRect();
      if (clips && (r.bottom > b.bottom + 0.5 || r.top < b.top - 0.5)) {
        clipped.push(tr.textContent.slice(0, 40));
        break;
      }
    }
  }
  const fills = {};
  for (const r of root.querySelectorAll('rect.srnb-ch-bar')) {
    if (r.closest('[data-tab]') && r.closest('[data-tab]').getAttribute('data-tab') !== 'outcome accuracy') continue;
    fills[r.getAttribute('data-series')] = getComputedStyle(r).fill;
  }
  const title = root.querySelector('.srnb-ch-title');
  return {
    cut, broken, clipped, fills,
    roleRows: roleRows.length,
    titleFill: title ? getComputedStyle(title).fill : '',
    overflow: Math.max(root.scrollWidth - root.clientWidth,
      document.documentElement.scrollWidth - document.documentElement.clientWidth),
  };
}"""


def rgb(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def level(css_colour: str) -> float:
    """Mean of the r, g, b channels of a computed colour (0 dark .. 255 light):
    rgb(r, g, b) or color(srgb r g b) with channels in 0..1 (marimo's theme colours)."""
    if css_colour.startswith("color(srgb"):
        return sum(float(x) * 255 for x in re.findall(r"[\d.]+", css_colour)[:3]) / 3
    return sum(int(x) for x in re.findall(r"\d+", css_colour)[:3]) / 3


def check(out: dict[str, Any], face: str, theme: str) -> None:
    """Every problem at once: a failure names all that a person would see wrong."""
    problems = []
    if out["cut"]:
        problems.append(f"cut at a card's edge: {out['cut']}")
    if out["broken"]:
        problems.append(f"ids broken across lines: {out['broken']}")
    if out["clipped"] or out["roleRows"] != 30:
        problems.append(f"per-role rows hidden: {out['clipped']} ({out['roleRows']} rows)")
    if out["overflow"] > 0:
        problems.append("the view scrolls sideways")
    # bars carry their series' index (data-series): variant i in run order
    want = {str(i): rgb(c) for i, c in enumerate(variant_colours(list(VARIANTS)).values())}
    if out["fills"] != want:
        problems.append(f"bar colours {out['fills']} != {want}")
    if (level(out["titleFill"]) > 128) != (theme == "dark"):
        problems.append(f"chart text {out['titleFill']} unreadable on {theme}")
    assert problems == [], f"{face}/{theme}: {problems}"


# ------------------------------------------------------------------ hand-built rows


def hand_row(
    qs: QuestionSet, variant: str, qid: str, *, failed: list[str] | None = None, **fields: Any
) -> EvalRow:
    """The row of question ``qid`` of ``qs`` under ``variant``: answered in 100 ms
    for $0.001 with config "cfg-<variant>", failing the ``failed`` checks (the
    reason names each); ``fields`` set or override any other field."""
    q = qs.get(qid)
    failed = failed or []
    base: dict[str, Any] = {
        "variant": variant,
        "id": qid,
        "category": q.category,
        "question": q.question,
        "expected": q.expected,
        "outcome": "answered",
        "outcome_ok": not failed,
        "latency_ms": 100.0,
        "cost": 0.001,
        "config_version": f"cfg-{variant}",
        "failed_checks": failed,
        "failure_reason": "; ".join(f"{c} failed" for c in failed) or None,
    }
    return EvalRow(**{**base, **fields})


def hand_report(rows: list[EvalRow], qs: QuestionSet) -> EvalReport:
    """The report of hand-built ``rows`` over ``qs``: variants "base" (no rerank)
    and "rr" (rerank), recall@5."""
    return EvalReport(
        rows,
        variants={"base": {"rerank": False}, "rr": {"rerank": True}},
        config_versions={"base": "cfg-base", "rr": "cfg-rr"},
        questions=qs,
        k=5,
    )
