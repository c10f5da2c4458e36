"""Static faces of the Prompt Lab: HTML (no script, every text escaped) and text lines.

    PromptLab -> lab_html(lab)   header + per role: current template (folded),
                                 versions table (current / baseline / best, created, score), last run
              -> lab_text(lab)   "PromptLab: N questions (set); role=hash (versions, last run) ..."
    LabRun    -> run_html(run)   "cancelled after n/N" banner, "k of n sides cached" line,
                                 totals (agreement old -> new over the rows the prompt reached,
                                 "prompt reached the model on k of n", tokens, cost), the mark key,
                                 then per question a <tbody>: the question + label on a full-width
                                 row, old | new below at half the width each (table-layout: fixed,
                                 words never broken inside), each side: mark ✓ ◐ ✗ — + its
                                 percentage beside it (side_score), the verdict as a word diff
                                 (side_parts -> worddiff: deleted words struck on the old side,
                                 inserted words marked on the new), the role's own measures
                                 (side_notes), tokens · cost · latency or "no call"; a side whose
                                 prompt did not reach a model says "prompt not used" and why
                                 scored against human labels (sr.Labels): human_line (kappa,
                                 precision / recall / F1 with their denominators, "no label"),
                                 the candidate's confusion matrix, per-category figures and the
                                 disagreeing items (folded)
              -> run_text(run)   "LabRun grade: agreement 50% -> 100% on 2 questions (prompt
                                  reached the model on 2 of 2), ..."
    LabVersions -> versions_html / versions_text   a table: version, created, note, agreement
    Every root: class ROOT_CLASS (tex2jax_ignore mathjax_ignore: MathJax leaves "$0 → $0" alone);
    tables left-aligned (Jupyter right-aligns rendered table cells).

Registered here: PromptLab gets the widget face too (PromptLabWidget, one per
lab, prompt_lab_widget.py, imported when built); a LabRun is static only (it is
shown interactively inside the lab's widget). Styling reuses the record
views' stylesheet (trace.css) plus prompt_lab.css; escaping reuses
``markup.esc``/``markup.block``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.html import css
from selfrag_nb.display.markup import block, esc, escape, fmt_cost, fmt_ms, fmt_tokens
from selfrag_nb.display.text import one_line
from selfrag_nb.display.worddiff import Part, clip, diff_html, word_diff
from selfrag_nb.promptlab import ROLE_LABELS, LabRow, LabRun, LabSide, LabVersions, PromptLab

__all__ = [
    "MARKS",
    "MARK_KEY",
    "QUESTION_CHARS",
    "ROOT_CLASS",
    "agreement_mark",
    "human_line",
    "lab_css",
    "lab_html",
    "lab_text",
    "pct",
    "reach_line",
    "run_cached",
    "run_html",
    "run_summary",
    "run_text",
    "side_mark",
    "side_notes",
    "side_parts",
    "side_score",
    "side_use",
    "version_score",
    "versions_html",
    "versions_text",
]

_STATIC = Path(__file__).parent / "static"
#: Classes of every Prompt Lab root: MathJax (Jupyter's and marimo's) skips the
#: subtree, so "$0 → $0" and template text are never typeset as math.
ROOT_CLASS = "srnb-root srnb-lab tex2jax_ignore mathjax_ignore"
#: Characters of a question shown in the picker and the results table.
QUESTION_CHARS = 240
#: Rows in the static results table before the rest is folded away.
_STATIC_ROWS = 200
#: The one mark vocabulary of a side (the percentage sits beside the mark, never in its place).
MARKS = (
    ("✓", "agrees with the label"),
    ("◐", "partly"),
    ("✗", "disagrees"),
    ("—", "not counted: prompt not used, or no label"),
)
MARK_KEY = (
    '<div class="srnb-meta srnb-lab-key">'
    + " · ".join(f'<span class="srnb-lab-keymark">{m}</span> {w}' for m, w in MARKS)
    + "</div>"
)


@lru_cache(maxsize=1)
def lab_css() -> str:
    """The record views' stylesheet followed by the lab's own, comments stripped."""
    raw = (_STATIC / "prompt_lab.css").read_text(encoding="utf-8")
    raw = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
    return css() + re.sub(r"\s*\n\s*", "", raw).strip()


# ------------------------------------------------------------------ formatting


def pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.0f}%"


def agreement_mark(v: float | None) -> tuple[str, str]:
    """(symbol, tone) of an agreement value: ✓ all, ◐ partly, ✗ none, — no label."""
    if v is None:
        return "—", ""
    if v >= 1.0:
        return "✓", "ok"
    if v <= 0.0:
        return "✗", "bad"
    return "◐", "warn"  # partly: the percentage goes beside it (side_score), never in its place


def side_use(s: LabSide) -> str:
    """ "" when the side's prompt reached a model, else the label of why it
    did not count: "offline: prompt not used" or "prompt not used"."""
    if s.reached:
        return ""
    return "offline: prompt not used" if s.prompt_use == "offline" else "prompt not used"


def side_mark(s: LabSide) -> tuple[str, str]:
    """The agreement mark of a side; "—" when its prompt did not reach a
    model (its verdict is not the template's, and it is not counted)."""
    return agreement_mark(s.agreement) if s.reached else ("—", "")


def _of(old: int, new: int, n: int) -> str:
    # One count when both sides agree, else each side's.
    return f"{old} of {n}" if old == new else f"{old} of {n} (old), {new} of {n} (new)"


def reach_line(run: LabRun) -> str:
    """ "prompt reached the model on k of n" (per side when they differ), then
    where it did not: the offline model, or not used (no call, failed, another template)."""
    t = run.totals()
    o, n, q = t["old"], t["new"], t["questions"]
    s = f"prompt reached the model on {_of(o['reached'], n['reached'], q)}"
    if o["offline"] or n["offline"]:
        s += f"; offline: prompts not used on {_of(o['offline'], n['offline'], q)}"
    if o["not_used"] or n["not_used"]:
        s += f"; prompt not used on {_of(o['not_used'], n['not_used'], q)}"
    return s


def run_cached(run: LabRun) -> str:
    """ "k of n sides cached" ("" when nothing came from the cache)."""
    if not run.cached:
        return ""
    same = run.baseline == run.candidate
    n = len(run.rows) * (1 if same else 2)
    return f"{run.cached} of {n} side{'s' if n != 1 else ''} cached (no model call)"


def _kappa(v: float | None) -> str:
    return "undefined" if v is None else f"{v:.2f}"


def _ratio(num: int, den: int) -> str:
    return "—" if not den else f"{num}/{den}"


def human_line(run: LabRun) -> str:
    """ "vs people (labels.jsonl, 12 chunks): kappa 0.00 → 1.00 · precision 2/4 → 2/2 · ..." ("" on a proxy run)."""
    old, new = run.human("old"), run.human("new")
    if old is None or new is None:
        return ""
    kind = run.label_kind or "item"
    parts = [
        f"kappa {_kappa(old.kappa)} → {_kappa(new.kappa)}",
        f"agree {_ratio(old.agree, old.n)} → {_ratio(new.agree, new.n)}",
        f"precision {_ratio(old.true_positive, old.judge_positive)} → {_ratio(new.true_positive, new.judge_positive)}"
        f" (of judged {new.positive})",
        f"recall {_ratio(old.true_positive, old.human_positive)} → {_ratio(new.true_positive, new.human_positive)}"
        f" (of labelled {new.positive})",
        f"F1 {pct(old.f1)} → {pct(new.f1)}",
    ]
    if old.no_label or new.no_label:
        parts.append(
            f"no label: {_of(old.no_label, new.no_label, old.no_label + old.n)} {kind}s, not counted"
        )
    note = next((a.kappa_note for a in (new, old) if a.kappa_note), "")
    name = run.labels.replace("\\", "/").rsplit("/", 1)[-1]
    return f"vs people ({name}, {kind}s): " + " · ".join(parts) + (f" · kappa: {note}" if note else "")


def run_summary(run: LabRun) -> str:
    t = run.totals()
    s = f"cancelled after {run.progress} — " if run.cancelled else ""
    o, n = t["old"], t["new"]
    agreement = f"{run.role}: agreement {pct(o['agreement'])} → {pct(n['agreement'])}"
    # "on L questions": agreement is a mean over the rows the prompt reached that have a label.
    lo, ln = o["labelled"], n["labelled"]
    if lo == ln == 0:
        agreement = f"{run.role}: agreement not measured"
    elif lo == ln:
        agreement += f" on {lo} question{'s' if lo != 1 else ''}"
    else:
        agreement = f"{run.role}: agreement {pct(o['agreement'])} (on {lo}) → {pct(n['agreement'])} (on {ln})"
    s += f"{agreement} ({reach_line(run)}), {t['changed']} verdict{'s' if t['changed'] != 1 else ''} changed"
    if run.labels:
        s += f"; {human_line(run)}"
    if t["errors"]:
        s += f", {t['errors']} error(s)"
    if run.cached:
        s += f", {run_cached(run)}"
    return s


def side_notes(s: LabSide) -> list[str]:
    """The role-specific measures of a side, as short phrases (rewrite,
    rerank, generate; grade's precision/recall are shown on their own)."""
    out = []
    if s.protected_ok is not None:
        out.append("protected spans kept" if s.protected_ok else "protected span dropped")
    if s.recall is not None and s.precision is None and s.queries:
        out.append(f"recall {pct(s.recall)}")
    if s.rank is not None:
        out.append(f"rank {s.rank}")
    if s.includes or s.excluded_hits or s.citation_recall is not None:
        if s.includes:
            out.append("includes " + ", ".join(s.includes))
        if s.excluded_hits:
            out.append("contains excluded " + ", ".join(s.excluded_hits))
        if s.citation_recall is not None:
            out.append(f"cites relevant {pct(s.citation_recall)}")
    return out


# ------------------------------------------------------------------ static faces


def side_parts(r: LabRow) -> tuple[list[Part], list[Part]]:
    """The word diff of a row's verdicts: old (same / del) and new (same / ins).
    A side with an error has no verdict to compare: both sides stay plain."""
    old, new = clip(r.old.verdict)[0], clip(r.new.verdict)[0]
    if r.old.error or r.new.error or old == new:
        return [("same", old)], [("same", new)]
    return word_diff(old, new)


def side_score(s: LabSide) -> str:
    """The percentage beside a mark ("80%"), "not counted" when the prompt did not reach a model."""
    if not s.reached:
        return "not counted"
    return "" if s.agreement is None else pct(s.agreement)


def _side_cell(s: LabSide, parts: list[Part], name: str) -> str:
    mark, tone = side_mark(s)
    score = side_score(s)
    cls = f"srnb-lab-mark srnb-{tone}" if tone else "srnb-lab-mark"
    head = (
        f'<div class="srnb-lab-side-h"><span class="srnb-label">{name}</span> '
        f'<span class="{cls}" title="{escape("agreement " + score if score else "no label")}">{esc(mark, 10)}</span>'
        + (f' <span class="srnb-lab-score">{esc(score, 20)}</span>' if score else "")
        + "</div>"
    )
    if s.error:
        verdict = f'<span class="srnb-badge srnb-bad">error</span> {esc(s.error, 400)}'
    else:
        verdict = diff_html(parts) + clip(s.verdict)[1]
        if side_use(s):
            verdict = f'<span class="srnb-badge srnb-lab-unused">{esc(side_use(s), 60)}</span> {verdict}'
    extra = [esc(s.prompt_note, 300)] if s.prompt_note and not s.error else []
    if s.decision_source and s.reached:  # else the prompt note already says who decided
        extra.append(f"by {esc(s.decision_source, 40)}")
    if s.precision is not None or s.recall is not None:
        extra.append(f"P {pct(s.precision)} · R {pct(s.recall)}")
    extra.extend(esc(m, 300) for m in side_notes(s))
    if s.unparsed:
        extra.append(f"{s.unparsed} unparsed")
    if s.cached:
        extra.append("cached")
    meta = f'<div class="srnb-meta">{" · ".join(extra)}</div>' if extra else ""
    return (
        f'<td class="srnb-lab-side srnb-lab-{name}">{head}<div class="srnb-lab-verdict" dir="auto">{verdict}</div>'
        f'{meta}<div class="srnb-lab-usage">{_usage(s)}</div></td>'
    )


def _usage(s: LabSide) -> str:
    if not s.calls:  # nothing was sent: no tokens, cost or latency to report
        return '<span class="srnb-meta">no call</span>'
    return (
        f'<span class="srnb-num">{fmt_tokens(s.tokens_in)} / {fmt_tokens(s.tokens_out)}</span> tokens · '
        f'<span class="srnb-num">{fmt_cost(s.cost)}</span> · <span class="srnb-num">{fmt_ms(s.latency_ms)}</span>'
    )


def _row(r: LabRow) -> str:
    # One <tbody> per question: the question and its label on a full-width row,
    # then old and new side by side, each half the table (the outputs get the width).
    cls = "srnb-lab-row srnb-lab-changed" if r.changed else "srnb-lab-row"
    if not (r.old.reached or r.new.reached):
        cls += " srnb-lab-unused-row"
    old, new = side_parts(r)
    changed = ' <span class="srnb-badge srnb-warn">changed</span>' if r.changed else ""
    label = f' <span class="srnb-lab-label">label: {esc(r.label, 400)}</span>' if r.label else ""
    return (
        f'<tbody class="{cls}"><tr><td class="srnb-lab-question" colspan="2"><span class="srnb-id">{esc(r.id, 100)}</span> '
        f'<span class="srnb-meta">{esc(r.category, 100)}</span>{changed} '
        f'<span dir="auto">{esc(one_line(r.question, QUESTION_CHARS))}</span>{label}</td></tr>'
        f"<tr>{_side_cell(r.old, old, 'old')}{_side_cell(r.new, new, 'new')}</tr></tbody>"
    )


def _run_body(run: LabRun) -> str:
    t = run.totals()
    head = (
        f'<div class="srnb-card-h"><span class="srnb-stage">Run · {esc(run.role, 40)}</span>'
        f'<span class="srnb-id">{esc(run.baseline, 40)}</span> → <span class="srnb-id">{esc(run.candidate, 40)}</span>'
        f'<span class="srnb-meta">{esc(run.model, 200)} · {fmt_ms(run.wall_ms)}</span></div>'
    )
    note = f'<div class="srnb-banner srnb-banner-info">{esc(run.note, 600)}</div>' if run.note else ""
    if run.cancelled:
        note += (
            f'<div class="srnb-banner srnb-banner-info srnb-lab-cancelled">cancelled after {run.progress} '
            "questions: the rows below are the questions that finished</div>"
        )
    if run.cached:
        note += f'<div class="srnb-meta srnb-lab-cached">{esc(run_cached(run), 200)}</div>'
    o, n = t["old"], t["new"]
    totals = (
        '<div class="srnb-lab-totals">'
        f"agreement <strong>{pct(o['agreement'])}</strong> → <strong>{pct(n['agreement'])}</strong> "
        f'over the rows the prompt reached · <span class="srnb-lab-reach">{esc(reach_line(run), 400)}</span>'
        f" · {t['changed']} changed"
        + (f" · {t['errors']} error(s)" if t["errors"] else "")
        + (
            f" · precision {pct(o['precision'])} → {pct(n['precision'])}"
            f" · recall {pct(o['recall'])} → {pct(n['recall'])}"
            if o["precision"] is not None or n["precision"] is not None
            else ""
        )
        + f" · tokens {fmt_tokens(o['tokens_in'])} → {fmt_tokens(n['tokens_in'])} in"
        f" · cost {fmt_cost(o['cost'])} → {fmt_cost(n['cost'])}</div>"
    )
    totals += _human_html(run)
    rows = "".join(_row(r) for r in run.rows[:_STATIC_ROWS])
    more = ""
    if len(run.rows) > _STATIC_ROWS:
        more = f'<div class="srnb-trunc">{len(run.rows) - _STATIC_ROWS} more rows: see run.to_pandas()</div>'
    table = (
        '<table class="srnb-lab-table srnb-lab-results"><colgroup><col class="srnb-lab-half">'
        '<col class="srnb-lab-half"></colgroup><thead><tr>'
        f'<th>old · <span class="srnb-id">{esc(run.baseline, 40)}</span></th>'
        f'<th>new · <span class="srnb-id">{esc(run.candidate, 40)}</span> (words changed from old marked)</th>'
        f"</tr></thead>{rows}</table>{more}"
    )
    return f'<section class="srnb-card srnb-lab-run">{head}{note}{totals}{MARK_KEY}{table}</section>'


def _human_html(run: LabRun) -> str:
    """The figures against people: line, confusion (candidate), per category, disagreements."""
    new = run.human("new")
    if new is None:
        return ""
    head = "".join(f"<th>judge: {esc(c, 40)}</th>" for c in new.classes)
    body = "".join(
        f"<tr><th>people: {esc(h, 40)}</th>"
        + "".join(f'<td class="srnb-num">{new.confusion[h][c]}</td>' for c in new.classes)
        + "</tr>"
        for h in new.classes
    )
    confusion = (
        f'<table class="srnb-lab-table srnb-lab-confusion"><thead><tr><th>candidate</th>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )
    cats = "".join(
        f"<tr><td>{esc(c, 100)}</td><td class='srnb-num'>{_kappa(a.kappa)}</td>"
        f"<td class='srnb-num'>{_ratio(a.agree, a.n)}</td><td class='srnb-num'>{pct(a.precision)}</td>"
        f"<td class='srnb-num'>{pct(a.recall)}</td><td class='srnb-num'>{pct(a.f1)}</td>"
        f"<td class='srnb-num'>{a.no_label}</td></tr>"
        for c, a in run.by_category("new").items()
    )
    per_cat = (
        '<table class="srnb-lab-table srnb-lab-categories"><thead><tr><th>category (candidate)</th><th>kappa</th>'
        f"<th>agree</th><th>precision</th><th>recall</th><th>F1</th><th>no label</th></tr></thead><tbody>{cats}</tbody></table>"
    )
    dis = run.disagreements("new")
    items = "".join(
        f"<li><span class='srnb-id'>{esc(d['id'], 100)}</span> {esc(one_line(d['what'] or d['key'], 160))}: "
        f"people <strong>{esc(d['people'], 40)}</strong>, judge <strong>{esc(d['judge'], 40)}</strong>"
        + (f" <span class='srnb-meta'>({esc(d['note'], 200)})</span>" if d["note"] else "")
        + "</li>"
        for d in dis[:_STATIC_ROWS]
    )
    folded = (
        f'<details class="srnb-details srnb-lab-disagreements"><summary>{len(dis)} disagreement'
        f"{'s' if len(dis) != 1 else ''} with people (candidate): run.disagreements()</summary><ul>{items}</ul></details>"
    )
    return f'<div class="srnb-lab-human">{esc(human_line(run), 1200)}</div>{confusion}{per_cat}{folded}'


def run_html(run: LabRun) -> str:
    """Static HTML of one run: totals and one row per question."""
    return f'<div class="{ROOT_CLASS}" dir="ltr"><style>{lab_css()}</style>{_run_body(run)}</div>'


def _versions_table(lab: PromptLab, role: str) -> str:
    last = lab.last_run(role)
    best = lab.best(role)["hash"] if last is not None else None
    rows = []
    for v in lab.versions(role):
        marks = [
            m
            for m, on in (("current", v["current"]), ("baseline", v["baseline"]), ("best", v["hash"] == best))
            if on
        ]
        badges = " ".join(f'<span class="srnb-badge srnb-info">{m}</span>' for m in marks)
        rows.append(
            f'<tr><td><span class="srnb-id">{esc(v["hash"], 40)}</span> {badges}</td>'
            f'<td class="srnb-num">{esc(v["created"], 40)}</td>'
            f"<td>{esc(v['note'], 300)}</td><td>{esc(version_score(v), 80)}</td></tr>"
        )
    return (
        '<table class="srnb-lab-table srnb-lab-versions"><thead><tr><th>version</th><th>created (UTC)</th>'
        f"<th>note</th><th>agreement</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def version_score(v: dict[str, Any]) -> str:
    """ "80% (prompt reached the model on 5 of 14)" from a version's scores ("not run" before any)."""
    sc = v.get("scores") or {}
    if not sc:
        return "not run"
    n = sc.get("questions", 0)
    k = sc.get("reached", 0)
    a = sc.get("agreement")
    return f"{'not measured' if a is None else pct(a)} (prompt reached the model on {k} of {n})"


def versions_html(vs: LabVersions) -> str:
    """Static HTML of ``lab.versions(role)``: one row per version."""
    rows = "".join(
        f'<tr><td><span class="srnb-id">{esc(v["hash"], 40)}</span>'
        + "".join(f' <span class="srnb-badge srnb-info">{m}</span>' for m in ("current", "baseline") if v[m])
        + f'</td><td class="srnb-num">{esc(v["created"], 40)}</td><td>{esc(v["note"], 300)}</td>'
        f"<td>{esc(version_score(v), 80)}</td></tr>"
        for v in vs
    )
    title = f"Versions · {esc(vs.role, 40)}" if vs.role else "Versions"
    return (
        f'<div class="{ROOT_CLASS}" dir="ltr"><style>{lab_css()}</style><section class="srnb-card">'
        f'<div class="srnb-card-h"><span class="srnb-stage">{title}</span></div>'
        '<table class="srnb-lab-table srnb-lab-versions"><thead><tr><th>version</th><th>created (UTC)</th>'
        f"<th>note</th><th>agreement</th></tr></thead><tbody>{rows}</tbody></table></section></div>"
    )


def versions_text(vs: LabVersions) -> str:
    """``lab.versions(role)`` as a plain-text table (aligned columns)."""
    head = ("version", "created (UTC)", "note", "agreement")
    rows = [
        (
            v["hash"] + "".join(f" [{m}]" for m in ("current", "baseline") if v[m]),
            str(v["created"]),
            one_line(str(v["note"]), 60),
            version_score(v),
        )
        for v in vs
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows]]
    title = f"PromptLab versions of {vs.role}" if vs.role else "PromptLab versions"
    return "\n".join([f"{title} ({len(vs)})", *lines])


def lab_html(lab: PromptLab) -> str:
    """Static HTML of the lab: per role the current template, its versions
    and the last run. No script; every template and question is escaped."""
    note = lab.note()
    head = (
        '<section class="srnb-card srnb-lab-head"><div class="srnb-card-h">'
        '<span class="srnb-stage">Prompt Lab</span>'
        f'<span class="srnb-meta">{len(lab.questions)} questions · {esc(lab.questions.name, 200)}</span></div>'
        + (f'<div class="srnb-banner srnb-banner-info">{esc(note, 600)}</div>' if note else "")
        + "</section>"
    )
    cards = []
    for role in lab.roles:
        last = lab.last_run(role)
        cards.append(
            f'<section class="srnb-card srnb-lab-role"><div class="srnb-card-h">'
            f'<span class="srnb-stage">{esc(role, 40)}</span>'
            f'<span class="srnb-meta">{esc(ROLE_LABELS.get(role, ""), 200)} · model {esc(lab.model_name(role), 200)}</span>'
            f'<span class="srnb-meta">current <span class="srnb-id">{esc(lab.current(role), 40)}</span> · '
            f'baseline <span class="srnb-id">{esc(lab.baseline(role), 40)}</span></span></div>'
            f'<details class="srnb-details"><summary>template ({len(lab.template(role)):,} characters)</summary>'
            f"{block(lab.template(role), cls='srnb-block srnb-code')}</details>"
            f"{_versions_table(lab, role)}"
            + (_run_body(last) if last is not None else '<div class="srnb-meta">not run yet</div>')
            + "</section>"
        )
    return f'<div class="{ROOT_CLASS}" dir="ltr"><style>{lab_css()}</style>{head}{"".join(cards)}</div>'


def run_text(run: LabRun) -> str:
    s = f"LabRun {run_summary(run)} (baseline {run.baseline} → candidate {run.candidate})"
    return s + (" [offline model: prompts not used]" if run.offline else "")


def lab_text(lab: PromptLab) -> str:
    parts = []
    for role in lab.roles:
        last = lab.last_run(role)
        score = ""
        if last:
            score = (
                f", last run {pct(last.agreement_old)} → {pct(last.agreement_new)}, prompt reached "
                f"{_of(last.reached_old, last.reached_new, len(last.rows))}"
            )
        parts.append(f"{role}={lab.current(role)} ({len(lab.versions(role))} versions{score})")
    n = len(lab.questions)
    s = f"PromptLab: {n} question{'s' if n != 1 else ''} ({lab.questions.name}); " + "; ".join(parts)
    return s + (" [offline model: prompts not used]" if lab.offline else "")


def _lab_widget(lab: PromptLab) -> Any:
    from selfrag_nb.display.prompt_lab_widget import PromptLabWidget

    return PromptLabWidget.of(lab)


faces.register(PromptLab, text=lab_text, html=lab_html, widget=_lab_widget)
faces.register(LabRun, text=run_text, html=run_html, widget=None)
faces.register(LabVersions, text=versions_text, html=versions_html, widget=None)
