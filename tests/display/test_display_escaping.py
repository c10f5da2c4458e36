"""Hostile documents, questions and model output cannot escape the views.

Every text field of ``hostile_trace`` carries an attack: script tags, event
handlers, javascript:/data: URLs, a stylesheet breakout, attribute breakouts,
bidi overrides and zero-width characters, Chinese text and a 1 MB line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from display_fixtures import ATTRS, HOSTILE, STYLE_RE, TAGS, Markup, assert_well_formed

from selfrag_nb.display import static_html, text_summary
from selfrag_nb.display.html import css, view_tree
from selfrag_nb.display.markup import TEXT_LIMIT
from selfrag_nb.display.tree import to_json
from selfrag_nb.trace import Trace

CONTROLS = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _views(trace: Trace) -> list[str]:
    return [static_html(trace), *(static_html(r) for r in trace.records)]


def test_no_markup_from_data_survives(hostile_trace: Trace) -> None:
    for out in _views(hostile_trace):
        low = out.lower()
        assert "<script" not in low
        assert "<img" not in low
        assert "<a " not in low
        # inside a real tag (data's "<" is always &lt;): no links, sources or handlers
        assert not re.search(r"<[^<>]*\b(href|src|onerror|onmouseover)\s*=", low)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out or "alert(1)" not in out
        assert_well_formed(out)


def test_only_known_tags_and_attributes(hostile_trace: Trace) -> None:
    for out in _views(hostile_trace):
        p = Markup()
        p.feed(out)
        assert p.tags <= TAGS, p.tags - TAGS
        names = {k for k, _ in p.attrs}
        assert names <= ATTRS, names - ATTRS
        for k, v in p.attrs:
            if k == "style":
                assert STYLE_RE.match(v), v
        # one stylesheet, ours: "</style><style>*{display:none}" stayed text
        assert p.style_blocks == [css()]


def test_css_breakout_and_attribute_breakout_are_text(hostile_trace: Trace) -> None:
    out = static_html(hostile_trace)
    assert "&lt;/style&gt;&lt;style&gt;*{display:none}&lt;/style&gt;" in out
    assert "&quot; onmouseover=&quot;alert(1)&quot; x=&quot;" in out
    assert "javascript:alert(2)" in out  # shown as text, not a link
    assert "data:text/html;base64," in out


def test_bidi_and_zero_width_characters_are_neutralised(hostile_trace: Trace) -> None:
    for out in _views(hostile_trace):
        assert not CONTROLS.search(out)
    out = static_html(hostile_trace)
    for code in ("U+202E", "U+202C", "U+200B", "U+200D", "U+2066", "U+2069"):
        assert f'<span class="srnb-ctl" title="invisible control character">{code}</span>' in out
    # right-to-left text stays isolated: inline text in <bdi>, blocks with dir="auto"
    assert "<bdi>abc" in out
    assert "שלום עולם" in out
    assert '<div class="srnb-root tex2jax_ignore mathjax_ignore" dir="ltr">' in out


def test_chinese_text_is_kept_verbatim(hostile_trace: Trace) -> None:
    assert "中文文本：退款期限为三十天。" in static_html(hostile_trace)


def test_one_megabyte_line_is_cut_with_a_note(hostile_trace: Trace) -> None:
    out = static_html(hostile_trace)
    assert f"truncated: showing {TEXT_LIMIT:,} of 1,000,000 characters" in out
    assert "A" * (TEXT_LIMIT + 1) not in out
    assert len(out) < 1_000_000  # the view stays far below the data it shows
    assert "overflow-wrap: anywhere" in css() or "overflow-wrap:anywhere" in css()


def test_text_summaries_are_single_clean_lines(hostile_trace: Trace) -> None:
    for obj in (hostile_trace, *hostile_trace.records):
        line = text_summary(obj)
        assert "\n" not in line
        assert len(line) < 400
        assert not CONTROLS.search(line)
    assert "⟨U+202E⟩" in text_summary(hostile_trace) or "⟨U+202E⟩" not in hostile_trace.question


def test_the_widget_tree_keeps_text_as_data_and_cut(hostile_trace: Trace) -> None:
    tree = to_json(view_tree(hostile_trace))
    raw = json.dumps(tree, ensure_ascii=False)
    # the hostile strings travel as JSON strings; mount.js sets them with textContent
    assert HOSTILE[0] in raw
    assert HOSTILE[4] in raw
    assert "truncated: showing 20,000 of" in raw  # the 1 MB chunk was cut, with a note
    assert "\u202e" not in raw  # control characters arrive as labelled spans only
    # one tree, two faces: the widget sends no more than the static page holds
    assert len(raw.encode()) < 1.3 * len(static_html(hostile_trace).encode())


def test_the_js_never_parses_data_as_html() -> None:
    from selfrag_nb.display.js import module

    js = module("mount.js", "tree_view.js")  # the one widget script, as the views load it
    code = "\n".join(line for line in js.splitlines() if not line.lstrip().startswith("//"))
    for forbidden in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ):
        assert forbidden not in code, forbidden
    assert "createTextNode" in code
    assert "http://" not in code.replace("http://www.w3.org/2000/svg", "")  # no CDN, no network
    assert "https://" not in code
    assert "import " not in code.split("export default")[0]


# ----------------------------------------------- one escaping path for every view

EVAL_HOSTILE = 'Refund\u202e window\u200b? <script>alert(1)</script> "quoted"'


def _eval_row(qid: str, failed: list[str], reason: str = "") -> Any:
    from selfrag_nb.eval.metrics import EvalRow

    return EvalRow(
        variant="base",
        id=qid,
        category="factual",
        question=EVAL_HOSTILE,
        expected=["answered"],
        outcome="answered",
        outcome_ok=not failed,
        failed_checks=failed,
        failure_reason=reason or None,
    )


def _assert_inert_and_visible(page: str) -> None:
    assert not CONTROLS.search(page), "a bidi or zero-width character reached the HTML"
    # the label of the record views, or the view tree's (tree.text_kids: the same in both faces)
    for cp in ("202E", "200B"):
        assert f"⟨U+{cp}⟩" in page or f'title="invisible control character">U+{cp}</span>' in page
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&quot;quoted&quot;" in page


def test_calibration_and_regression_html_escape_like_every_view() -> None:
    from selfrag_nb.eval.calibrate import Calibration
    from selfrag_nb.eval.regression import RegressionDiff

    before = [_eval_row("q1", ["outcome"], EVAL_HOSTILE), _eval_row("q2", [])]
    after = [_eval_row("q1", []), _eval_row("q2", ["outcome"], EVAL_HOSTILE)]
    diff = RegressionDiff(before, after)
    _assert_inert_and_visible(diff.to_html())
    _assert_inert_and_visible(diff._repr_mimebundle_()["text/html"])

    row = {"value": 50, "n": 1, "correct_refusals": 0, "wrong_refusals": 0, "unsupported_answers": 0}
    row |= {"citation_errors": 0, "outcome_accuracy": 1.0, "score": 0}
    chosen = {"name": EVAL_HOSTILE, "path": EVAL_HOSTILE, "count": 1, "hash": "abc"}
    cal = Calibration("relevance_cutoff", [row], suggested=50, default=50, chosen_on=chosen)
    for page in (cal.to_html(), cal.to_html(embedded=True), cal._repr_mimebundle_()["text/html"]):
        _assert_inert_and_visible(page)


def test_no_renderer_escapes_on_its_own() -> None:
    """display/markup.py's ``escape`` is the only door for text into HTML: no
    other module imports the html module (llm/prompts.py quotes values inside
    model prompts, which no browser renders; cleantext.py decodes entities in
    document text for models and renders nothing)."""
    import ast

    pkg = Path(__file__).parents[2] / "selfrag_nb"
    allowed = {pkg / "display" / "markup.py", pkg / "llm" / "prompts.py", pkg / "cleantext.py"}
    offenders = []
    for path in sorted(pkg.rglob("*.py")):
        if path in allowed:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name == "html" for a in node.names):
                offenders.append(f"{path.relative_to(pkg)}: import html")
            if isinstance(node, ast.ImportFrom) and node.module == "html":
                offenders.append(f"{path.relative_to(pkg)}: from html import ...")
    assert not offenders, offenders
