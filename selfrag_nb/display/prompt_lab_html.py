"""The Prompt Lab's views: each read-only pane one view tree (tree.py), both faces.

    head_tree(lab, role=None)    "Prompt Lab", N questions · set, the note; with a role its model
    versions_table(vs, best)     version + marks (current / baseline / best), created, note,
                                 agreement; each <tr data-hash> (the widget adds buttons there)
    versions_card(vs, role)      the table under "Versions · role"
    run_tree(run)                banners (cancelled, cached), totals (agreement old -> new
                                 over the rows the prompt reached, tokens, cost), the figures
                                 against people when scored on labels, the mark key (✓ ◐ ✗ —),
                                 then per question a <tbody>: question + label on a full-width
                                 row, old | new below at half the width each; each side: mark,
                                 percentage, the verdict as a word diff (side_parts ->
                                 worddiff.diff_tree), the role's measures, tokens · cost ·
                                 latency or "no call"; "prompt not used" and why when it was not
    progress_tree(...)           a run streaming in (the widget): a bar and the rows so far

    static faces   to_page(tree, lab_css()): lab_html (header + per role: template folded,
                   versions_table, run_tree or "not run yet"), run_html (LabRun),
                   versions_html (LabVersions)
    widget         prompt_lab_widget.py sends to_json of the same trees; static/prompt_lab.js
                   mounts them with mount.js's build() + attach()
    text faces     prompt_lab_text.py (and the phrases both use: pct, reach_line, human_line ...)

Every root has class ROOT_CLASS (MathJax leaves "$0 → $0" alone). A LabRun is
static only: it is shown interactively inside the lab's widget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from selfrag_nb.display import faces
from selfrag_nb.display.cards import block, card_head, cut_note, details, esc, joined, num, root, table
from selfrag_nb.display.js import stylesheet
from selfrag_nb.display.markup import fmt_ms, plural
from selfrag_nb.display.prompt_lab_text import (
    MARKS,
    human_line,
    kappa_text,
    lab_text,
    pct,
    ratio,
    reach_line,
    run_cached,
    run_text,
    side_mark,
    side_notes,
    side_score,
    side_use,
    version_score,
    versions_text,
)
from selfrag_nb.display.tables import tr
from selfrag_nb.display.text import one_line
from selfrag_nb.display.tree import Node, h, to_page
from selfrag_nb.display.worddiff import DIFF_CHARS, Part, clip, diff_tree, word_diff
from selfrag_nb.formats import fmt_cost, fmt_tokens
from selfrag_nb.promptlab import ROLE_LABELS, LabRow, LabRun, LabSide, LabVersions, PromptLab

#: Classes of every Prompt Lab root: MathJax (Jupyter's and marimo's) skips the
#: subtree, so "$0 → $0" and template text are never typeset as math.
ROOT_CLASS = "srnb-root srnb-lab tex2jax_ignore mathjax_ignore"
#: Characters of a question shown in the picker and the results table.
QUESTION_CHARS = 240
#: Rows in the static results table before the rest is folded away.
_STATIC_ROWS = 200


def lab_css() -> str:
    """The record views' stylesheet followed by the lab's own, comments stripped."""
    return stylesheet("trace.css", "prompt_lab.css")


# ------------------------------------------------------------------ view trees


def side_parts(r: LabRow) -> tuple[list[Part], list[Part]]:
    """The word diff of a row's verdicts: old (same / del) and new (same / ins).
    A side with an error has no verdict to compare: both sides stay plain."""
    old, new = clip(r.old.verdict), clip(r.new.verdict)
    if r.old.error or r.new.error or old == new:
        return [("same", old)], [("same", new)]
    return word_diff(old, new)


def _id(text: str, n: int = 40) -> Node:
    return h("span", "srnb-id", esc(text, n))


def _meta(*kids: Any) -> Node:
    return h("span", "srnb-meta", kids)


def _nums(values: Iterable[object]) -> list[Node]:
    return [h("td", "srnb-num", str(v)) for v in values]


def _banner(text: str) -> Node | None:
    return h("div", "srnb-banner srnb-banner-info", esc(text, 600)) if text else None


def _side_cell(s: LabSide, parts: list[Part], name: str) -> Node:
    mark, tone = side_mark(s)
    score, use = side_score(s), side_use(s)
    mark_cls = f"srnb-lab-mark srnb-{tone}" if tone else "srnb-lab-mark"
    head = h(
        "div",
        "srnb-lab-side-h",
        h("span", "srnb-label", name),
        " ",
        h("span", mark_cls, esc(mark, 10), title="agreement " + score if score else "no label"),
        [" ", h("span", "srnb-lab-score", esc(score, 20))] if score else None,
    )
    if s.error:
        verdict: list[Any] = [h("span", "srnb-badge srnb-bad", "error"), " ", esc(s.error, 400)]
    else:
        note = cut_note(s.verdict, DIFF_CHARS)[1]
        unused = [h("span", "srnb-badge srnb-lab-unused", esc(use, 60)), " "] if use else None
        verdict = [unused, diff_tree(parts), [" ", note] if note else None]
    extra = [
        esc(s.prompt_note, 300) if s.prompt_note and not s.error else None,
        # without a reached prompt the prompt note already says who decided
        ["by ", esc(s.decision_source, 40)] if s.decision_source and s.reached else None,
        f"P {pct(s.precision)} · R {pct(s.recall)}"
        if s.precision is not None or s.recall is not None
        else None,
        *(esc(m, 300) for m in side_notes(s)),
        f"{s.unparsed} unparsed" if s.unparsed else None,
        "cached" if s.cached else None,
    ]
    extra = [e for e in extra if e]
    reason = one_line(s.reason, 200) if s.reason else None  # the judge's reason, as the verdict's tooltip
    return h(
        "td",
        f"srnb-lab-side srnb-lab-{name}",
        head,
        h("div", "srnb-lab-verdict", verdict, dir="auto", title=reason),
        h("div", "srnb-meta", joined(extra)) if extra else None,
        h("div", "srnb-lab-usage", _usage(s)),
    )


def _usage(s: LabSide) -> Node | list[Any]:
    if not s.calls:  # nothing was sent: no tokens, cost or latency to report
        return _meta("no call")
    return [
        num(f"{fmt_tokens(s.tokens_in)} / {fmt_tokens(s.tokens_out)}"),
        " tokens · ",
        num(fmt_cost(s.cost)),
        " · ",
        num(fmt_ms(s.latency_ms)),
    ]


def _row(r: LabRow) -> Node:
    # One <tbody> per question: the question and its label on a full-width row,
    # then old and new side by side, each half the table (the outputs get the width).
    cls = "srnb-lab-row srnb-lab-changed" if r.changed else "srnb-lab-row"
    if not (r.old.reached or r.new.reached):
        cls += " srnb-lab-unused-row"
    old, new = side_parts(r)
    question = h(
        "td",
        "srnb-lab-question",
        _id(r.id, 100),
        " ",
        _meta(esc(r.category, 100)),
        [" ", h("span", "srnb-badge srnb-warn", "changed")] if r.changed else None,
        " ",
        h("span", "", esc(one_line(r.question, QUESTION_CHARS)), dir="auto"),
        [" ", h("span", "srnb-lab-label", "label: ", esc(r.label, 400))] if r.label else None,
        colspan=2,
    )
    return h(
        "tbody", cls, tr("", question), tr("", _side_cell(r.old, old, "old"), _side_cell(r.new, new, "new"))
    )


def _results_table(rows: list[LabRow], baseline: str, candidate: str) -> list[Any]:
    """The mark key (the one mark vocabulary, above every results table), then the table."""
    keys = [[h("span", "srnb-lab-keymark", m), f" {w}"] for m, w in MARKS]
    heads = [
        h("th", "", "old · ", _id(baseline)),
        h("th", "", "new · ", _id(candidate), " (words changed from old marked)"),
    ]
    table = h(
        "table",
        "srnb-lab-table srnb-lab-results",
        h("colgroup", "", h("col", "srnb-lab-half"), h("col", "srnb-lab-half")),
        h("thead", "", tr("", *heads)),
        [_row(r) for r in rows[:_STATIC_ROWS]],
    )
    more = len(rows) - _STATIC_ROWS
    return [
        h("div", "srnb-meta srnb-lab-key", joined(keys)),
        table,
        h("div", "srnb-trunc", f"{more} more rows: see run.to_pandas()") if more > 0 else None,
    ]


def _run_head(role: str, baseline: str, candidate: str, meta: Any) -> Node:
    return card_head(["Run · ", esc(role, 40)], _id(baseline), " → ", _id(candidate), _meta(meta))


def run_tree(run: LabRun) -> Node:
    """One run: banners, totals, the figures against people, the mark key, one row per question."""
    t = run.totals()
    o, n = t["old"], t["new"]
    scored = o["precision"] is not None or n["precision"] is not None

    def change(key: str, fmt: Callable[[Any], str] = pct) -> str:
        return f"{fmt(o[key])} → {fmt(n[key])}"

    figures = [
        f"{t['changed']} changed",
        f"{t['errors']} error(s)" if t["errors"] else "",
        f"precision {change('precision')} · recall {change('recall')}" if scored else "",
        f"tokens {change('tokens_in', fmt_tokens)} in",
        f"cost {change('cost', fmt_cost)}",
    ]
    totals = h(
        "div",
        "srnb-lab-totals",
        "agreement ",
        h("strong", "", pct(o["agreement"])),
        " → ",
        h("strong", "", pct(n["agreement"])),
        " over the rows the prompt reached · ",
        h("span", "srnb-lab-reach", esc(reach_line(run), 400)),
        "".join(f" · {f}" for f in figures if f),
    )
    cancelled = f"cancelled after {run.progress} questions: the rows below are the questions that finished"
    return h(
        "section",
        "srnb-card srnb-lab-run",
        _run_head(run.role, run.baseline, run.candidate, [esc(run.model, 200), f" · {fmt_ms(run.wall_ms)}"]),
        _banner(run.note),
        h("div", "srnb-banner srnb-banner-info srnb-lab-cancelled", cancelled) if run.cancelled else None,
        h("div", "srnb-meta srnb-lab-cached", esc(run_cached(run), 200)) if run.cached else None,
        totals,
        _human_tree(run),
        _results_table(run.rows, run.baseline, run.candidate),
    )


def progress_tree(
    role: str, baseline: str, candidate: str, rows: list[LabRow], *, total: int, note: str
) -> Node:
    """A run in progress (the widget, as each question finishes): a bar, the rows so far."""
    done = len(rows)
    width = f"width: {100 * done / total:.1f}%" if total else "width: 0%"
    return h(
        "section",
        "srnb-card srnb-lab-run srnb-lab-running",
        _run_head(role, baseline, candidate, f"running: {done}/{total} questions"),
        h("div", "srnb-lab-progress", h("div", "", style=width)),
        _banner(note),
        _results_table(rows, baseline, candidate),
    )


def _disagreement(d: dict[str, Any]) -> Node:
    return h(
        "li",
        "",
        _id(d["id"], 100),
        " ",
        esc(one_line(d["what"] or d["key"], 160)),
        ": people ",
        h("strong", "", esc(d["people"], 40)),
        ", judge ",
        h("strong", "", esc(d["judge"], 40)),
        [" ", _meta("(", esc(d["note"], 200), ")")] if d["note"] else None,
    )


def _human_tree(run: LabRun) -> list[Any] | None:
    """The figures against people: line, confusion (candidate), per category, disagreements."""
    new = run.human("new")
    if new is None:
        return None
    confusion = table(
        "srnb-lab-table srnb-lab-confusion",
        ["candidate", *(["judge: ", esc(c, 40)] for c in new.classes)],
        [
            tr("", h("th", "", "people: ", esc(p, 40)), *_nums(new.confusion[p][c] for c in new.classes))
            for p in new.classes
        ],
    )
    figures = {
        c: (kappa_text(a.kappa), ratio(a.agree, a.n), pct(a.precision), pct(a.recall), pct(a.f1), a.no_label)
        for c, a in run.by_category("new").items()
    }
    per_cat = table(
        "srnb-lab-table srnb-lab-categories",
        ["category (candidate)", "kappa", "agree", "precision", "recall", "F1", "no label"],
        [tr("", esc(c, 100), *_nums(values)) for c, values in figures.items()],
    )
    dis = run.disagreements("new")
    folded = details(
        f"{plural(len(dis), 'disagreement')} with people (candidate): run.disagreements()",
        h("ul", "", [_disagreement(d) for d in dis[:_STATIC_ROWS]]),
        key="lab-disagreements",
        cls="srnb-details srnb-lab-disagreements",
    )
    return [h("div", "srnb-lab-human", esc(human_line(run), 1200)), confusion, per_cat, folded]


def _root(*kids: Any) -> Node:
    return root(ROOT_CLASS, kids)


def run_html(run: LabRun) -> str:
    """Static HTML of one run: totals and one row per question."""
    return to_page(_root(run_tree(run)), lab_css())


def versions_table(vs: list[dict[str, Any]], best: str | None = None) -> Node:
    """A role's versions: hash and its marks (current, baseline, best), created, note,
    agreement. Each row names its hash (``data-hash``): the widget adds its buttons there."""

    def marks(v: dict[str, Any]) -> list[Any]:
        on = (("current", v["current"]), ("baseline", v["baseline"]), ("best", v["hash"] == best))
        return [[" ", h("span", "srnb-badge srnb-info", m)] for m, yes in on if yes]

    rows = [
        tr(
            "",
            [_id(v["hash"]), marks(v)],
            h("td", "srnb-num", esc(v["created"], 40)),
            esc(v["note"], 300),
            esc(version_score(v), 80),
            data_hash=v["hash"],
        )
        for v in vs
    ]
    return table("srnb-lab-table srnb-lab-versions", ["version", "created (UTC)", "note", "agreement"], rows)


def versions_card(vs: list[dict[str, Any]], role: str, best: str | None = None) -> Node:
    """The versions table under a "Versions · role" heading (LabVersions' face, the widget's pane)."""
    head = card_head(["Versions", [" · ", esc(role, 40)] if role else None])
    return h("section", "srnb-card", head, versions_table(vs, best))


def best_of(lab: PromptLab, role: str) -> str | None:
    """The hash of the role's best version, once it has a run (else None: no "best" mark)."""
    return lab.best(role)["hash"] if lab.last_run(role) is not None else None


def versions_html(vs: LabVersions) -> str:
    """Static HTML of ``lab.versions(role)``: one row per version."""
    return to_page(_root(versions_card(vs, vs.role)), lab_css())


def head_tree(lab: PromptLab, role: str | None = None) -> Node:
    """The lab's header: question set, the note (offline model, template unused);
    with ``role`` (the widget, one role at a time) that role's model and note."""
    tone = "offline" if role and lab.is_offline(role) else "info"
    model = h("span", f"srnb-badge srnb-{tone}", "model ", esc(lab.model_name(role), 200)) if role else None
    return h(
        "section",
        "srnb-card srnb-lab-head",
        card_head(
            "Prompt Lab", model, _meta(f"{len(lab.questions)} questions · ", esc(lab.questions.name, 200))
        ),
        _banner(lab.note(role) if role else lab.note()),
    )


def _role_card(lab: PromptLab, role: str) -> Node:
    last = lab.last_run(role)
    template = lab.template(role)
    return h(
        "section",
        "srnb-card srnb-lab-role",
        card_head(
            esc(role, 40),
            _meta(esc(ROLE_LABELS.get(role, ""), 200), " · model ", esc(lab.model_name(role), 200)),
            _meta("current ", _id(lab.current(role)), " · baseline ", _id(lab.baseline(role))),
        ),
        details(f"template ({len(template):,} characters)", block(template, cls="srnb-block srnb-code")),
        versions_table(lab.versions(role), best_of(lab, role)),
        run_tree(last) if last is not None else h("div", "srnb-meta", "not run yet"),
    )


def lab_html(lab: PromptLab) -> str:
    """Static HTML of the lab: per role the current template, its versions
    and the last run. No script; every template and question is escaped."""
    return to_page(_root(head_tree(lab), [_role_card(lab, r) for r in lab.roles]), lab_css())


def _lab_widget(lab: PromptLab) -> Any:
    from selfrag_nb.display.prompt_lab_widget import PromptLabWidget

    return PromptLabWidget.of(lab)


faces.register(PromptLab, text=lab_text, html=lab_html, widget=_lab_widget)
faces.register(LabRun, text=run_text, html=run_html, widget=None)
faces.register(LabVersions, text=versions_text, html=versions_html, widget=None)
