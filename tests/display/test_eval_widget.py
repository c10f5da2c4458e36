"""The evaluation views, from their rules: one view tree per type (eval_html.py)
serialised to the static face (to_html) and the widget's (to_json); charts
are SVG nodes in the variants' colours; ids never break inside; evidence is
named by its file; the tree fits STATE_BUDGET; plotly figures only on request,
legible on dark themes with one time unit each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eval_fixtures import hand_report, hand_row
from notebook_support import export_marimo, run_in_kernel, widget_states

from selfrag_nb.display import WIDGET_MIME
from selfrag_nb.display.eval_html import (
    KEY_METRICS,
    calibration_html,
    calibration_view,
    eval_view,
    regression_view,
    report_html,
    report_view,
)
from selfrag_nb.display.eval_widget import EvalWidget
from selfrag_nb.display.state import STATE_BUDGET
from selfrag_nb.display.tree import Node, to_html, to_json
from selfrag_nb.eval.calibrate import Calibration
from selfrag_nb.eval.charts import NEUTRAL, latency_box, metric_bars, variant_colours
from selfrag_nb.eval.metrics import EvalRow
from selfrag_nb.eval.questions import Question, QuestionSet
from selfrag_nb.eval.regression import RegressionDiff
from selfrag_nb.eval.report import EvalReport

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
KEYS = [k for k, *_ in KEY_METRICS]

HOSTILE_Q = 'Refund <img src=x onerror="alert(1)"> window\u202e?'
HOSTILE_REASON = "wrong outcome: <script>alert(2)</script> not in [answered]"

QS = QuestionSet(
    [
        Question(id="a", category="factual", question=HOSTILE_Q, expected=["answered"]),
        Question(id="b", category="factual", question="SSO providers?", expected=["answered"]),
        Question(id="c", category="unanswerable", question="CEO's shoe size?", expected=["refused"]),
    ],
    name="hand",
)


def _row(variant: str, qid: str, *, failed: list[str] | None = None, **kw: Any) -> EvalRow:
    # with per-call usage, so the per-role and token columns have numbers
    usage = {"model_calls": 3, "tokens_in": 100, "tokens_out": 20}
    return hand_row(QS, variant, qid, failed=failed, **{**usage, **kw})


ROWS = [
    _row(
        "base", "a", failed=["outcome"], outcome="refused", wrong_refusal=True, failure_reason=HOSTILE_REASON
    ),
    _row("base", "b", failed=["outcome"], outcome="refused", wrong_refusal=True),
    _row("base", "c", outcome="refused", correct_refusal=True, outcome_ok=True),
    _row("rr", "a", latency_ms=300.0),
    _row("rr", "b"),
    _row("rr", "c", failed=["outcome", "unsupported"], unsupported_answer=True, cost=None),
]


def _report(rows: list[EvalRow] = ROWS, qs: QuestionSet = QS) -> EvalReport:
    return hand_report(rows, qs)


def _calibration(default: int = 50) -> Calibration:
    rows = [
        {
            "value": v,
            "n": 10,
            "correct_refusals": cr,
            "wrong_refusals": wr,
            "unsupported_answers": ua,
            "citation_errors": ce,
            "outcome_accuracy": acc,
            "score": cr - wr - ua,
        }
        for v, cr, wr, ua, ce, acc in (
            (30, 1, 0, 4, 1, 0.5),
            (50, 3, 1, 1, 0, 0.8),
            (70, 4, 3, 0, 0, 0.6),
        )
    ]
    chosen = {"name": "hand <b>set</b>", "path": "", "count": 10, "hash": "abc123def456"}
    return Calibration("relevance_cutoff", rows, suggested=50, default=default, chosen_on=chosen)


def _diff() -> RegressionDiff:
    after = [
        _row("base", "a"),  # fixed
        _row("base", "b", failed=["outcome", "citation"], failure_reason="2 citation error(s)"),  # broke
        _row("base", "c"),  # passing before and after
        _row("rr", "c", failed=["outcome", "unsupported"]),  # still failing
    ]
    return RegressionDiff(ROWS, after)


def _walk(node: Node) -> list[Node]:
    out = [node]
    for k in node.kids:
        if isinstance(k, Node):
            out.extend(_walk(k))
    return out


def _tags(node: Node, tag: str) -> list[Node]:
    return [n for n in _walk(node) if n.tag == tag]


def _section(node: Node, title: str) -> Node:
    return next(n for n in _walk(node) if n.tag == "section" and title in n.text()[: len(title) + 40])


# ------------------------------------------------------------------ the report's tree


def test_one_tree_gives_both_faces() -> None:
    rep = _report()
    tree = report_view(rep)
    # the static face is the tree through to_html (with the stylesheet in front), the
    # widget's is the same tree through to_json: what a saved notebook shows is the view
    assert report_html(rep) == rep.to_html()
    assert "".join(to_html(k) for k in tree.kids) in rep.to_html()
    w = EvalWidget(rep)
    assert w.tree == to_json(tree)
    assert w._repr_mimebundle_()[0]["text/html"] == rep.to_html()
    assert {"tex2jax_ignore", "mathjax_ignore"} <= set(tree.cls.split())


def test_summary_holds_every_key_metric_of_the_report() -> None:
    rep = _report()
    summary = _section(report_view(rep), "Summary by variant and category")
    table = _tags(summary, "table")[0]
    assert table.attr("data-sort") == ""  # a click on a header sorts (mount.js)
    heads = [th.text() for th in _tags(table, "th")]
    assert heads == ["variant", "category", "n", *(lab for _, lab, *_ in KEY_METRICS)]
    rows = [[td.text() for td in _tags(tr, "td")] for tr in _tags(_tags(table, "tbody")[0], "tr")]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("base", "factual", "2"),
        ("base", "unanswerable", "1"),
        ("base", "all", "3"),
        ("rr", "factual", "2"),
        ("rr", "unanswerable", "1"),
        ("rr", "all", "3"),
    ]
    col = {lab: i + 3 for i, (_, lab, *_) in enumerate(KEY_METRICS)}
    base_all, rr_all = rows[2], rows[5]
    assert base_all[col["outcome accuracy"]] == "0.333"
    assert base_all[col["wrong refusals"]] == "2"
    assert base_all[col["recall@k"]] == "n/a"  # no relevant labels: n/a, not 0
    assert rr_all[col["cost"]] == "unknown"  # an unknown price stays unknown
    assert base_all[col["cost"]] == "$0.0030"
    assert rows[3][col["P95 latency"]] == "290 ms"


def test_charts_are_svg_in_the_variants_colours_with_one_tab_each() -> None:
    rows = []
    for vi, variant in enumerate(("base", "+rewrite", "+rewrite+rerank")):
        for i in range(20):
            ok = i < 16 + vi  # 0.80, 0.85, 0.90
            lat = 100.0 + 10 * i + 50 * vi + (900 if i == 19 else 0)
            rows.append(
                _row(
                    variant,
                    "a" if i % 2 else "b",
                    failed=[] if ok else ["outcome"],
                    outcome_ok=ok,
                    latency_ms=lat,
                )
            )
    variants = {
        "base": {},
        "+rewrite": {"rewrite": True},
        "+rewrite+rerank": {"rewrite": True, "rerank": True},
    }
    rep = EvalReport(rows, variants=variants, questions=QS, k=5)
    tree = report_view(rep)
    tabs = next(n for n in _walk(tree) if n.attr("data-tabs") is not None)
    labels = [k.attr("data-tab") for k in tabs.kids if isinstance(k, Node)]
    # decision accuracy and recall@k have no labels here: no empty chart for them
    assert labels == ["outcome accuracy", "refusals and errors", "latency"]
    colours = variant_colours(list(variants))
    bars = [n for n in _walk(tabs.kids[0]) if n.tag == "rect"]  # type: ignore[arg-type]
    names = list(colours)
    assert {names[int(b.attr("data-series") or 0)]: b.attr("fill") for b in bars} == colours
    fig = metric_bars(rep.summary, "outcome_accuracy")
    assert {t.name: t.marker.color for t in fig.data} == colours  # one colour per variant everywhere
    # the rate axis is fitted to 0.80-0.90 padded by 0.05, and the title says so
    assert "axis fitted to the data: 0.75 to 0.95, not from 0" in tabs.kids[0].text()  # type: ignore[union-attr]
    boxes = [n for n in _walk(tabs.kids[2]) if n.tag == "g"]  # type: ignore[arg-type]
    assert [
        (names[int(g.attr("data-series") or 0)], _tags(g, "rect")[0].attr("fill")) for g in boxes
    ] == list(colours.items())
    assert all(_tags(g, "circle") for g in boxes)  # the 1,000+ ms question is an outlier
    assert "latency per question (ms, lower is better)" in tabs.kids[2].text()  # type: ignore[union-attr]


def test_ids_never_break_inside_and_evidence_is_named_by_file() -> None:
    long_id = "refunds/zh-hant_policy.v2:section-12#paragraph-7-with-a-very-long-tail"
    chunk = "9f3c2a7b1d4e5f60718293a4"
    rows = [
        *ROWS,
        _row(
            "rr",
            "a",
            failed=["outcome"],
            id=long_id,
            evidence=[chunk, "c2"],
            retrieved=["docs/refund-policy.md", "faq.md"],
        ),
    ]
    tree = report_view(_report(rows))
    ids = tree.find_all("srnb-id")
    assert ids
    assert all(n.attr("title") for n in ids)
    cut = next(n for n in ids if n.attr("title") == long_id)
    assert cut.text().endswith("…")
    assert len(cut.text()) <= 40
    assert not _tags(tree, "wbr")  # no break opportunity inside an id
    assert (
        ".srnb-ev .srnb-id { white-space: nowrap;"
        in (ROOT / "selfrag_nb/display/static/eval.css").read_text()
    )
    docs = tree.find_all("srnb-ev-doc")
    assert [(d.text(), d.attr("title")) for d in docs] == [
        ("refund-policy.md", f"chunk {chunk}"),
        ("faq.md", "chunk c2"),
    ]
    assert chunk not in tree.text()
    # report.failures names the evidence the same way; no chunk hash in it
    f = _report(rows).failures
    assert list(f["evidence"].iloc[-1]) == ["refund-policy.md", "faq.md"]
    assert chunk not in f.to_string()


def test_each_failing_row_names_the_check_that_ended_it_in_both_faces() -> None:
    rows = [
        _row("base", "a", failed=["outcome"], outcome="refused", reason_kind="not_answered"),
        _row("base", "b", failed=["outcome"], outcome="refused", reason_kind="no_evidence"),
        _row("rr", "c", failed=["outcome", "unsupported"], unsupported_answer=True),  # a plain answer: ""
    ]
    tree = report_view(_report(rows))
    fails = tree.find_all("srnb-ev-fail")
    outcome_cells = [row.kids[3] for row in fails]  # id, category, question, outcome, ...
    assert [c.text() for c in outcome_cells] == [
        "refusedreason_kind not_answeredexpected answered",
        "refusedreason_kind no_evidenceexpected answered",
        "answeredexpected refused",
    ]
    page = report_html(_report(rows))
    assert "reason_kind <code>not_answered</code>" in page
    assert "reason_kind <code>no_evidence</code>" in page
    assert '"t":"code","k":["not_answered"]' in json.dumps(
        EvalWidget(_report(rows)).tree, separators=(",", ":")
    )


def test_tree_stays_under_budget_for_86_questions_x_4_variants() -> None:
    cats = [f"category-{i:02d}" for i in range(3)]
    qs = QuestionSet(
        [
            Question(
                id=f"q{i:03d}",
                category=cats[i % 3],
                question=f"question {i} " + "长问题 long words " * 400,
                expected=["answered"],
            )
            for i in range(86)
        ],
        name="big",
    )
    variants = ["baseline", "+rewrite", "+rerank", "+rewrite+rerank"]
    rows = [
        EvalRow(
            variant=v,
            id=q.id,
            category=q.category,
            question=q.question,
            expected=["answered"],
            outcome="refused",
            outcome_ok=False,
            wrong_refusal=True,
            failed_checks=["outcome", "retrieval", "must_include"],
            failure_reason="wrong outcome: refused not in [answered]; " + "missing 'x' " * 500,
            latency_ms=float(i),
        )
        for v in variants
        for i, q in enumerate(qs)
    ]
    rep = EvalReport(rows, variants={v: {} for v in variants}, questions=qs)
    tree = report_view(rep)
    size = len(json.dumps(to_json(tree), ensure_ascii=False, separators=(",", ":")))
    assert size <= STATE_BUDGET, size
    failures = _section(tree, "Failures (344)")
    blocks = _tags(failures, "details")
    assert len(blocks) == 4
    assert all("86 failing row(s)" in b.text() for b in blocks)
    assert all("report.failures has every row" in b.text() for b in blocks)  # cut, and it says so
    assert all(q.text().endswith("…") for q in tree.find_all("srnb-ev-q"))
    # the summary is never cut: 4 variants x (3 categories + all)
    summary = _section(tree, "Summary by variant and category")
    assert len(_tags(_tags(summary, "tbody")[0], "tr")) == 16


def test_calibration_view_marks_suggested_and_default_above_the_curves() -> None:
    tree = calibration_view(_calibration(default=70))
    text = tree.text()
    assert "Calibration of relevance_cutoff" in text
    assert "suggested relevance_cutoff = 50" in text
    assert "hand <b>set</b> — 10 questions, hash abc123def456" in text
    assert len(list(_tags(tree, "path"))) == 4  # the four counts
    assert len(list(_tags(tree, "circle"))) == 12
    marks = {t.text(): t for t in _tags(tree, "text") if t.text().startswith(("suggested", "default"))}
    assert set(marks) == {"suggested 50", "default 70"}
    plot_top = 44
    assert all(float(m.attr("y") or 0) < plot_top - 4 for m in marks.values())
    assert marks["suggested 50"].attr("y") != marks["default 70"].attr("y")
    assert (marks["suggested 50"].attr("text-anchor"), marks["default 70"].attr("text-anchor")) == (
        "end",
        "start",
    )
    one = calibration_view(_calibration())
    assert not [t for t in _tags(one, "text") if t.text().startswith("default")]  # default == suggested
    rep = _report()
    rep.calibration = _calibration()
    assert "Calibration of relevance_cutoff" in report_view(rep).text()
    assert "hand &lt;b&gt;set&lt;/b&gt;" in calibration_html(_calibration())


def test_regression_view_one_tab_per_list_first_non_empty_open() -> None:
    tree = regression_view(_diff())
    text = tree.text()
    for words in ("1 broke", "1 fixed", "1 still failing", "1 passing before and after"):
        assert words in text
    tabs = next(n for n in _walk(tree) if n.attr("data-tabs") is not None)
    panels = [k for k in tabs.kids if isinstance(k, Node)]
    assert [p.attr("data-tab") for p in panels] == ["broke (1)", "still failing (1)", "fixed (1)"]
    assert [p.attr("data-tab-open") for p in panels] == ["", None, None]
    assert "citation" in panels[0].text()
    assert HOSTILE_REASON in panels[2].text()
    assert "passes" in panels[2].text()
    fixed_only = RegressionDiff([ROWS[0]], [_row("base", "a")])
    panels = [
        k
        for k in next(n for n in _walk(regression_view(fixed_only)) if n.attr("data-tabs") is not None).kids
        if isinstance(k, Node)
    ]
    assert [p.attr("data-tab-open") for p in panels] == [None, None, ""]


def test_widget_shows_each_type_and_updates() -> None:
    rep = _report()
    w = EvalWidget(rep)
    w.update(_diff())
    assert w.tree == to_json(eval_view(_diff()))
    assert EvalWidget(_calibration()).tree == to_json(calibration_view(_calibration()))
    with pytest.raises(TypeError, match="not str"):
        EvalWidget("report")


def test_empty_report() -> None:
    empty = EvalReport([], variants={"base": {}}, questions=QS)
    assert "No rows: nothing was evaluated." in report_view(empty).text()


# ------------------------------------------------------------------ display hooks


def test_mimebundle_outside_a_kernel_is_static_html_and_text() -> None:
    for obj in (_report(), _calibration(), _diff()):
        bundle = obj._repr_mimebundle_()
        assert set(bundle) == {"text/plain", "text/html"}  # no kernel: no widget view
        assert bundle["text/plain"] == obj.to_text()
        assert bundle["text/html"] == obj.to_html()
        assert "<script" not in bundle["text/html"]
        static = obj._display_()  # outside marimo: the static face
        assert static._repr_html_() == obj.to_html()
        assert repr(static) == obj.to_text()


def test_hostile_text_is_escaped_in_the_static_face_and_text_in_the_widget() -> None:
    page = _report()._repr_mimebundle_()["text/html"]
    assert "<img" not in page
    assert "<script>alert" not in page
    assert "Refund &lt;img src=x onerror=&quot;alert(1)&quot;&gt; window" in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert "U+202E" in page
    assert "\u202e" not in page
    data = json.dumps(EvalWidget(_report()).tree, ensure_ascii=False)
    assert "Refund <img src=x onerror=" in data  # text, set with textContent by mount.js
    assert "\u202e" not in data
    diff_page = _diff()._repr_mimebundle_()["text/html"]
    assert "<img" not in diff_page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in diff_page


def test_static_report_lists_where_the_variants_disagree_and_each_roles_cost() -> None:
    tree = report_view(_compared_report())
    section = _section(tree, "Where the variants disagree (2 of 3 questions)")
    text = section.text()
    assert "answered · 1 kept" in text
    assert "refused · 1 kept" in text
    assert "kept evidence" in text  # c: same outcome, other evidence
    ids = [n.attr("title") for n in section.find_all("srnb-id")]
    assert "a" not in ids
    assert "b" in ids
    roles = _section(tree, "Per model role")
    cells = [[td.text() for td in _tags(tr, "td")] for tr in _tags(roles, "tr")[1:]]
    assert [c[1] for c in cells[:2]] == ["grade", "generate"]  # flow order
    assert cells[0][2] == "120"  # grade tokens in: 3 questions x 40
    assert _tags(roles, "th")[-1].text() == "ms per question"
    one = EvalReport([r for r in ROWS if r.variant == "base"], variants={"base": {}}, questions=QS, k=5)
    assert "Where the variants disagree" not in report_view(one).text()


# ------------------------------------------------------------------ plotly, on request


def test_plotly_figures_read_on_dark_themes_with_one_time_unit() -> None:
    rows = [_row("base", q, latency_ms=ms) for q, ms in (("a", 800.0), ("b", 12_500.0), ("c", 2_000.0))]
    rep = _report(rows)
    box = latency_box(rep.table)
    lay = box.layout
    # no white block in a dark notebook: transparent paper and plot, mid-grey text
    assert (lay.paper_bgcolor, lay.plot_bgcolor) == ("rgba(0,0,0,0)", "rgba(0,0,0,0)")
    assert lay.font.color == NEUTRAL
    # one unit: 12.5 s is the largest, so every value, the axis and the title are in s
    assert list(box.data[0].y) == [0.8, 12.5, 2.0]
    assert lay.yaxis.title.text == "s"
    assert lay.title.text == "Latency per question (s)"
    assert lay.yaxis.exponentformat == "none"  # no "1.5k" / "500m" ticks
    fast = latency_box(_report().table)
    assert fast.layout.yaxis.title.text == "ms"
    assert list(fast.data[1].y) == [300.0, 100.0, 100.0]


def test_plotly_calibration_marks_default_above_the_plot_and_fits_accuracy() -> None:
    fig = _calibration(default=70).chart()
    marks = {a.text: a for a in fig.layout.annotations}
    assert {"suggested 50", "default 70"} <= set(marks)
    for a in (marks["suggested 50"], marks["default 70"]):
        assert (a.yref, a.y, a.yanchor) == ("paper", 1.0, "bottom")
    assert marks["suggested 50"].xanchor != marks["default 70"].xanchor
    assert fig.layout.yaxis2.range == (0.45, 0.85)
    assert "not from 0" in fig.layout.yaxis2.title.text
    assert fig.layout.paper_bgcolor == "rgba(0,0,0,0)"


def _compared_report() -> EvalReport:
    # Written from what the rule says: a question is a disagreement when the
    # variants end differently OR keep different evidence; "a" agrees on both,
    # "b" ends differently, "c" ends the same on other evidence.
    role = {"role_tokens_in": {"grade": 40, "generate": 60}, "role_tokens_out": {"grade": 4, "generate": 30}}
    rows = [
        _row("base", "a", kept=["k1"], **role),
        _row("base", "b", kept=["k1"], **role),
        _row("base", "c", outcome="refused", correct_refusal=True, kept=[], **role),
        _row("rr", "a", kept=["k1"], **role),
        _row("rr", "b", outcome="refused", failed=["outcome"], kept=["k1"], **role),
        _row("rr", "c", outcome="refused", correct_refusal=True, kept=["k9"], **role),
    ]
    return _report(rows)


# ------------------------------------------------------------------ inside a kernel


@pytest.mark.slow
def test_inside_a_kernel_the_report_offers_the_widget(tmp_path: Path) -> None:
    saved = _report().save(tmp_path / "report.json")
    nb = run_in_kernel(
        [f"from selfrag_nb.eval.report import EvalReport\nreport = EvalReport.load({str(saved)!r})\nreport"],
        tmp_path,
    )
    data = nb.cells[0].outputs[-1]["data"]
    assert WIDGET_MIME in data, data.keys()
    assert data["text/html"].startswith(
        '<div class="srnb-root srnb-ev tex2jax_ignore mathjax_ignore" dir="ltr">'
    )
    assert data["text/plain"].startswith("EvalReport: 2 variant(s) x 3 question(s)")
    ours = widget_states(nb, "EvalWidget")
    assert len(ours) == 1
    tree = ours[0]["state"]["tree"]
    assert tree["c"].startswith("srnb-root srnb-ev")
    assert "Failures (3)" in json.dumps(tree, ensure_ascii=False)


@pytest.mark.slow
def test_in_marimo_the_report_displays_as_mo_ui_anywidget(tmp_path: Path) -> None:
    saved = _report().save(tmp_path / "report.json")
    page = export_marimo(
        f"from selfrag_nb.eval.report import EvalReport\nreport = EvalReport.load({str(saved)!r})\nreport",
        tmp_path,
    )
    # _display_ returned mo.ui.anywidget(EvalWidget): marimo embeds its element and the widget id
    assert "marimo-anywidget" in page
    assert "selfrag_nb.display.eval_widget.EvalWidget" in page
