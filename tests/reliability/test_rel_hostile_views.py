"""Hostile content through a REAL pipeline run cannot escape the views.

    hostile files (script tags, event handlers, javascript:/data: URLs, a
    </style> breakout, position:fixed, zero-width + right-to-left characters,
    a 1 MB line) in text, titles, headings, file names and metadata
      -> ingest into a hashing KB -> SelfRAG with a ScriptedModel whose
         reasons, keyInfo, answers and claims are hostile too (+ a 1 MB raw output)
      -> every Trace and every record: static HTML parsed with html.parser:
         only allowlisted tags / attributes, styles only our bars, one
         stylesheet (ours), no raw control characters, size bounded
      -> widget state: hostile text kept as JSON strings, within STATE_BUDGET
      -> EvalReport HTML for a hostile question set: same allowlist

tests/display/test_display_escaping.py covers hand-built records; this file
covers what the loaders, the chunker, the stages and the runner really put
into records (file names as sources, front-matter metadata, headings, raw
model output, parse errors, fallbacks).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cases import record

# The static views' vocabulary, as tests/display/test_display_escaping.py checks it.
from display_fixtures import ATTRS, STYLE_RE, TAGS, Markup

import selfrag_nb as sr
from selfrag_nb.display import text_summary, tree
from selfrag_nb.display.html import css
from selfrag_nb.display.widget import TraceWidget
from selfrag_nb.testing import ScriptedModel

XSS = '<script>alert("x")</script><img src=x onerror=alert(1)><a href="javascript:alert(2)">go</a>'
BREAK = '</style><style>*{display:none}</style><div style="position:fixed;top:0;left:0;width:100%">'
URLS = "javascript:alert(3) data:text/html;base64,PHNjcmlwdD5hbGVydCg0KTwvc2NyaXB0Pg=="
ATTR = '" onmouseover="alert(5)" x="'
INVISIBLE = "re\u200bfund \u202eevil\u202c \u2066iso\u2069 \ufeff"
HOSTILE = f"{XSS} {BREAK} {URLS} {ATTR} {INVISIBLE}"
MEGA = "A" * 1_000_000

CONTROLS = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# The report is a view tree (display/tree.py): its tags and attributes are the tree's allow-lists.
REPORT_TAGS = TAGS | set(tree.TAGS)
REPORT_ATTRS = ATTRS | {a.lower() for a in tree.ATTRS}
REPORT_STYLE_RE = re.compile(r"^[a-z-]+:[0-9.]+(%|px)?(;[a-z-]+:[0-9.#a-z]+(%|px)?)*;?$")

FILES = {
    # the file name itself is hostile: it becomes the chunk source
    '<img src=x onerror=alert(1)>" onmouseover="alert(2)\u202egpj.md': (
        f"---\ntitle: Refund policy {XSS}\nplan: {ATTR}\nlink: {URLS}\nnote: {INVISIBLE}\n---\n\n"
        f"## Refund window {BREAK}\n\nRefunds are accepted within 30 days of purchase. {HOSTILE}\n"
    ),
    "mega-line.md": f"---\ntitle: Mega line\n---\n\n## Refund archive\n\nRefund archive {MEGA}\n",
    "page.html": (
        f"<html><head><title>Refund page {ATTR}</title><style>body{{position:fixed}}</style></head>"
        f"<body><h1>Refund FAQ &lt;script&gt;alert(6)&lt;/script&gt;</h1><p>Refunds are paid to the "
        f"original card. {URLS}</p><script>alert(7)</script></body></html>"
    ),
    "records.jsonl": json.dumps(
        {
            "id": "r1<script>",
            "title": f"Refund record {XSS}",
            "text": f"Refund record text. {HOSTILE}",
            "tag": BREAK,
        }
    )
    + "\n",
}


def check_html(
    markup: str,
    *,
    tags: set[str],
    style_re: re.Pattern[str],
    stylesheets: int | None,
    attrs: set[str] = ATTRS,
) -> int:
    """Assert the markup has only our tags, attributes and styles; returns the
    number of elements and attributes checked."""
    p = Markup()
    p.feed(markup)
    p.close()
    assert p.tags <= tags, p.tags - tags
    # data-* attributes declare behaviour for the widget (tree.py DATA_PATTERN): inert in HTML
    names = {k for k, _ in p.attrs if attrs is ATTRS or not re.fullmatch(tree.DATA_PATTERN, k)}
    assert names <= attrs, names - attrs
    for k, v in p.attrs:
        if k == "style":
            assert style_re.match(v), v
        assert "javascript:" not in v.replace(" ", "").lower() or k in ("title", "aria-label"), (k, v)
    if stylesheets is not None:
        assert len(p.style_blocks) == stylesheets, len(p.style_blocks)
        assert all(s == css() for s in p.style_blocks)
    assert not CONTROLS.search(markup)
    low = markup.lower()
    for tag in ("<script", "<img", "<a ", "<iframe"):
        assert tag not in low, tag
    return len(p.tags) + len(p.attrs)


def _hostile_model() -> ScriptedModel:
    m = ScriptedModel("hostile<script>")
    m.default("decide", {"decision": "RETRIEVE", "reason": f"decide {HOSTILE}"})
    m.default("rewrite", {"rewrites": [f"refund {XSS}"], "reason": HOSTILE})
    m.default(
        "grade",
        {"relevanceScore": 88, "isRelevant": True, "keyInfo": f"key {HOSTILE} {MEGA}", "gaps": BREAK},
    )
    m.default("rerank", {"ranking": [{"index": 0, "score": 1.0}]})
    m.default("assess", {"action": "ANSWER", "reason": f"assess {HOSTILE}"})
    m.default("generate", {"answer": f"Refunds are accepted within 30 days [1]. {XSS} {INVISIBLE} [2]"})
    m.default(
        "verify",
        {
            "claims": [
                {"claim": f"claim {XSS}", "verdict": "partial", "evidence": [{"doc": 1, "quote": BREAK}]}
            ],
            "overallConfidence": 60,
            "recommendation": "ADD_DISCLAIMER",
        },
    )
    m.default(
        "usefulness",
        {"verdict": "partly", "score": 60, "missing": f"missing {XSS}", "reason": f"why {HOSTILE}"},
    )
    return m


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> sr.KnowledgeBase:
    root = tmp_path_factory.mktemp("hostile")
    docs = root / "docs"
    docs.mkdir()
    for name, text in FILES.items():
        (docs / name).write_text(text, encoding="utf-8")
    kb = sr.KnowledgeBase.open(root / "kb", embedder="hashing", max_chars=4000)
    rep = kb.ingest(docs)
    assert not rep.skipped, rep.skipped
    assert any("onerror" in s for s in kb.sources())  # the hostile file name is a source
    return kb


QUESTIONS = [
    f"What is the refund window? {XSS}",
    f"Refund {BREAK} {INVISIBLE}?",
    "Refund archive " + "B" * 200_000,
]


def _traces(kb: sr.KnowledgeBase) -> list[sr.Trace]:
    traces = []
    for rag in (sr.SelfRAG(kb), sr.SelfRAG(kb, _hostile_model())):
        for q in QUESTIONS:
            history = [{"role": "user", "content": HOSTILE}, {"role": "assistant", "content": XSS}]
            traces.append(rag.ask(q, user=sr.User(f"u{ATTR}", roles=[f"r{XSS}"]), history=history))
    # a hostile raw output that cannot be parsed: kept raw, shown as text
    garbage = ScriptedModel("garbage").default("generate", f"{XSS} not json {MEGA}")
    traces.append(sr.SelfRAG(kb, models={"generate": garbage}).ask(QUESTIONS[0]))
    return traces


@pytest.mark.slow
def test_pipeline_traces_render_only_our_markup(kb: sr.KnowledgeBase) -> None:
    traces = _traces(kb)
    hostile_hits = 0
    views = checked = 0
    for trace in traces:
        assert trace.finish is not None
        if trace.retrieval is not None:
            hostile_hits += sum("onerror" in h.source or "<script>" in h.title for h in trace.retrieval.hits)
        for obj in (trace, *trace.records):
            out = obj.to_html()
            checked += check_html(out, tags=TAGS, style_re=STYLE_RE, stylesheets=1)
            # bounded: a 1 MB line, a 1 MB keyInfo and a 200 KB question are cut
            assert len(out) < 1_000_000, (type(obj).__name__, len(out))
            line = text_summary(obj)
            assert "\n" not in line, line
            assert len(line) < 400, line
            assert not CONTROLS.search(line), line
            views += 1
    assert hostile_hits > 0  # the hostile documents really were retrieved
    record("hostile views: static HTML views parsed (real pipeline)", views)
    record("hostile views: tags and attributes checked", checked)


@pytest.mark.slow
def test_pipeline_widget_state_keeps_text_as_data(kb: sr.KnowledgeBase) -> None:
    n = 0
    for trace in _traces(kb):
        for obj in (trace, *trace.records):
            tree = TraceWidget(obj).tree
            raw = json.dumps(tree, ensure_ascii=False)
            json.loads(raw)  # plain JSON data
            # one tree, two faces: the widget sends no more than the static page holds
            assert len(raw.encode()) < 1.3 * len(obj.to_html().encode()), type(obj).__name__
            n += 1
        raw = json.dumps(TraceWidget(trace).tree, ensure_ascii=False)
        # the hostile strings travel unchanged as strings; mount.js sets textContent
        assert "<script>" in raw
    record("hostile views: widget states checked", n)


@pytest.mark.slow
def test_eval_report_html_with_hostile_question_set(kb: sr.KnowledgeBase, tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {
            "id": f"h{i}{XSS}",
            "category": f"cat {BREAK}",
            "question": q,
            "should_retrieve": True,
            "expected": ["answered"],
            "must_include": [f"{ATTR}"],
            "must_not_include": [URLS],
            "relevant": [next(iter(FILES))],
        }
        for i, q in enumerate(QUESTIONS[:2])
    ]
    path = tmp_path / f"q{XSS[:8]}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    report = sr.evaluate(
        sr.SelfRAG(kb, _hostile_model()),
        sr.questions(path),
        variants={"base": {}, f"v{XSS}": {"rerank": False}},
        progress=False,
        concurrency=1,
    )
    n = 0
    for out in (report.to_html(), report.to_html(charts=False)):
        n += check_html(out, tags=REPORT_TAGS, style_re=REPORT_STYLE_RE, stylesheets=None, attrs=REPORT_ATTRS)
    saved = report.save(tmp_path / "report.html").read_text(encoding="utf-8")
    # the saved file is the same view (no script at all); nothing from the data is live
    for live in (
        '<script>alert("x")',
        "<img src=x onerror",
        '<a href="javascript:',
        "</style><style>*{display",
    ):
        assert live not in saved, live
    assert not CONTROLS.search(saved)
    record("hostile views: eval report tags and attributes checked", n)
