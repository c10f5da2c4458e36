"""sr.compare: two real pipeline traces side by side, the first divergence named.

Traces come from the real pipeline (ScriptedModel, real LanceDB with the
hashing embedder in a tmp folder); each test changes one thing between the
two runs and expects the comparison to name the first stage that thing
changes, in flow order (selfrag_nb/flow.py). The faces are checked as a
reader gets them: text, static HTML (escaped, no script, MathJax opted out)
and the widget's tree (the same tree, as JSON for mount.js).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from display_fixtures import assert_well_formed, tree_find, tree_text
from helpers_pipeline import DOCS, REFUND_CLAIM, REFUND_QUOTE, grade_by_words, script_refund, verdict

import selfrag_nb as sr
from selfrag_nb.comparison import KINDS, Comparison
from selfrag_nb.display import StaticView
from selfrag_nb.display.compare_html import compare_tree
from selfrag_nb.display.compare_widget import CompareWidget
from selfrag_nb.display.tree import to_json
from selfrag_nb.flow import STAGES
from selfrag_nb.trace import Trace

HERE = Path(__file__).parent
Q = "How many days do I have to request a refund?"
HOSTILE_TITLE = "Refunds <script>window.pwned=1</script> $x$"
HOSTILE_DOC = (
    f"---\ntitle: {HOSTILE_TITLE}\n---\n# Refund <img src=x onerror=alert(1)> rules\n\n"
    "Customers can request a full refund within 30 days of purchase. <script>alert(2)</script> "
    "The fee is $x$ dollars.\n"
)


def _kb(root: Path, docs: dict[str, str]) -> Any:
    from selfrag_nb.store.kb import KnowledgeBase

    (root / "docs").mkdir(parents=True)
    for name, text in docs.items():
        (root / "docs" / name).write_text(text, encoding="utf-8")
    kb = KnowledgeBase.open(root / "kb", embedder="hashing")
    kb.ingest(root / "docs")
    return kb


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _kb(tmp_path_factory.mktemp("compare_kb"), DOCS)


Script = Callable[[Any], None]


@pytest.fixture
def run(kb: Any) -> Callable[..., Trace]:
    """One question through a fresh pipeline: the refund script, then ``script``
    (changes to the scripted model), with ``settings`` changed."""

    def go(
        question: str = Q,
        *,
        script: Script | None = None,
        history: list[dict[str, str]] | None = None,
        **settings: Any,
    ) -> Trace:
        model = sr.ScriptedModel()
        script_refund(model)
        if script is not None:
            script(model)
        rag = sr.SelfRAG(kb, model=model)
        if settings:
            rag = rag.with_settings(**settings)
        return rag.ask(question, user=sr.User("ana"), history=history)

    return go


def _first(cmp: Comparison) -> tuple[str, str]:
    assert cmp.first_divergence is not None, cmp.to_text()
    return cmp.first_divergence.stage, cmp.first_divergence.kind


# ------------------------------------------------------------ the record


def test_two_runs_of_the_same_question_do_not_diverge(run: Callable[..., Trace]) -> None:
    a, b = run(), run()
    cmp = sr.compare(a, b)
    assert cmp.first_divergence is None
    assert cmp.same
    assert cmp.differing == []
    assert [r.stage for r in cmp.rows] == list(STAGES)
    assert all(r.same and r.what == "" for r in cmp.rows)
    assert cmp.config == []
    assert "no divergence" in cmp.to_text()


def test_a_trace_loaded_from_json_compares_equal_to_itself(run: Callable[..., Trace], tmp_path: Path) -> None:
    a = run()
    loaded = sr.Trace.load(a.save(tmp_path / "a.json"))
    cmp = sr.compare(a, loaded, labels=("live", "saved"))
    assert cmp.same
    assert cmp.labels == ("live", "saved")


def test_decision_is_the_first_divergence_when_one_side_never_retrieves(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(), run(retrieval="never"))
    assert _first(cmp) == ("decide", "decision")
    assert "A retrieves, B does not" in cmp.row("decide").what
    # The retrieval stages ran on one side only; none of that hides the first divergence.
    assert cmp.row("retrieve").right.ran is False
    assert "ran in A only" in cmp.row("retrieve").what
    assert any(c.key == "settings.retrieval" for c in cmp.config)


def test_rewritten_queries_diverge(run: Callable[..., Trace]) -> None:
    history = [
        {"role": "user", "content": "Tell me about export in version 2.3"},
        {"role": "assistant", "content": "Version 2.3 exports several formats."},
    ]
    q = "Which formats does it not support in v2.3?"
    rewrite = "Which export formats does Quill v2.3 not support?"
    a = run(q, history=history, script=lambda m: m.default("rewrite", {"rewrites": []}))
    b = run(q, history=history, script=lambda m: m.default("rewrite", {"rewrites": [rewrite]}))
    cmp = sr.compare(a, b)
    assert _first(cmp) == ("rewrite", "queries")
    row = cmp.row("rewrite")
    assert rewrite in row.what
    assert [i.text for i in row.right.items] == [f"{q} (original)", rewrite]
    assert [i.mark for i in row.right.items] == ["", "only"]


def test_retrieved_set_diverges(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(per_query_k=1, total_cap=1), run())
    assert _first(cmp) == ("retrieve", "retrieved")
    row = cmp.row("retrieve")
    assert "only in B" in row.what
    assert len(row.left.items) == 1
    assert len(row.right.items) > 1
    # Chunks are named by their document, never by their bare id.
    names = [i.text for i in row.right.items]
    assert any("refunds.md › Refund policy" in n for n in names), names
    assert not any(re.search(r"\b[0-9a-f]{24}\b", n) for n in names), names
    assert all(re.fullmatch(r"[0-9a-f]{24}", i.chunk_id) for i in row.right.items)
    assert {i.mark for i in row.right.items} == {"", "only"}


def test_kept_set_diverges(run: Callable[..., Trace]) -> None:
    wide = run(script=lambda m: m.default("grade", grade_by_words("refund", "plan")))
    cmp = sr.compare(run(), wide, labels=("refund only", "refund or plan"))
    assert _first(cmp) == ("grade", "kept")
    row = cmp.row("grade")
    assert "only in refund or plan: plans.md › Plans" in row.what
    assert [i.mark for i in row.right.items if i.text.startswith("plans.md")] == ["only"]


def test_rerank_order_diverges(run: Callable[..., Trace]) -> None:
    def two_kept(order: list[int]) -> Script:
        def script(m: Any) -> None:
            m.default("grade", grade_by_words("refund", "plan"))
            m.default(
                "rerank", {"ranking": [{"index": i, "score": 1.0 - k / 10} for k, i in enumerate(order)]}
            )

        return script

    a, b = run(script=two_kept([0, 1])), run(script=two_kept([1, 0]))
    cmp = sr.compare(a, b)
    assert _first(cmp) == ("rerank", "rerank order")
    row = cmp.row("rerank")
    assert row.what.startswith("order differs from place 1:")
    assert {i.mark for i in row.left.items} == {"moved"}
    assert a.rerank is not None
    assert b.rerank is not None
    assert [i.chunk_id for i in row.left.items] == a.rerank.after
    assert [i.chunk_id for i in row.right.items] == b.rerank.after


def test_rerank_on_one_side_only_is_a_rerank_divergence(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(rerank=False), run(), labels=("rerank off", "rerank on"))
    assert _first(cmp) == ("rerank", "rerank order")
    assert cmp.row("rerank").left.ran is False
    assert cmp.first_divergence is not None
    assert cmp.first_divergence.what == "Rerank ran in rerank on only (rerank off skipped it)"
    assert [(c.key, c.left, c.right) for c in cmp.config] == [("settings.rerank", "false", "true")]


def test_assessment_action_diverges(run: Callable[..., Trace]) -> None:
    refuse = run(script=lambda m: m.default("assess", {"action": "REFUSE", "reason": "not covered"}))
    cmp = sr.compare(run(), refuse)
    assert _first(cmp) == ("assess", "action")
    assert cmp.row("assess").what == "action answer in A, refuse in B"
    assert cmp.row("finish").same is False


def test_generation_diverges_on_the_answer_text(run: Callable[..., Trace]) -> None:
    other = "Customers have 30 days from purchase to ask for a full refund [1]."
    b = run(
        script=lambda m: (
            m.default("generate", {"answer": other}),
            m.default("verify", verdict([(REFUND_CLAIM, "supported", 1, REFUND_QUOTE)], "ACCEPT", 95)),
        )
    )
    cmp = sr.compare(run(), b)
    assert _first(cmp) == ("generate", "generation")
    row = cmp.row("generate")
    assert row.what == "the answers differ"
    assert row.right.text == other
    assert [i.text for i in row.right.items] == ["[1] refunds.md › Refund policy"]


def test_claims_diverge_on_a_verdict(run: Callable[..., Trace]) -> None:
    partial = verdict([(REFUND_CLAIM, "partial", 1, REFUND_QUOTE)], "ADD_DISCLAIMER", 60)
    cmp = sr.compare(run(), run(script=lambda m: m.default("verify", partial)))
    assert _first(cmp) == ("verify", "claims")
    row = cmp.row("verify")
    assert "is supported in A, partial in B" in row.what
    assert [i.mark for i in row.right.items] == ["changed"]


def test_outcome_diverges_when_only_the_recommendation_changes(run: Callable[..., Trace]) -> None:
    # Same claims, same verdicts: verify is the same; what the recommendation
    # does to the answer shows in the outcome.
    disclaim = verdict([(REFUND_CLAIM, "supported", 1, REFUND_QUOTE)], "ADD_DISCLAIMER", 60)
    b = run(script=lambda m: m.default("verify", disclaim))
    cmp = sr.compare(run(), b)
    assert cmp.row("verify").same
    assert _first(cmp) == ("finish", "outcome")
    assert cmp.row("finish").what == f"answered in A, {b.outcome} in B"


def test_every_kind_is_named_in_flow_order() -> None:
    assert list(KINDS) == list(STAGES)


def test_stepper_and_partial_traces(kb: Any) -> None:
    model = sr.ScriptedModel()
    script_refund(model)
    rag = sr.SelfRAG(kb, model=model)
    step = rag.stepper(Q)
    step.decide()
    step.rewrite()
    done = rag.ask(Q)
    cmp = sr.compare(step, done, labels=("stepping", "done"))
    # Stages the stepper has not run yet: the first is where they diverge.
    assert _first(cmp) == ("retrieve", "retrieved")
    assert cmp.row("decide").same
    assert cmp.row("rewrite").same
    assert cmp.row("retrieve").left.ran is False
    assert "ran in done only" in cmp.row("retrieve").what
    # Two fresh steppers: nothing ran anywhere, so nothing diverges.
    empty = sr.compare(rag.stepper(Q), rag.stepper(Q))
    assert empty.same
    assert all(not r.left.ran and not r.right.ran for r in empty.rows)
    assert "ran on neither side" in empty.to_text()
    assert "ran on neither side" in empty.to_html()


@pytest.mark.parametrize("bad", [None, "trace", {"question": "x"}, 3])
def test_bad_input_names_the_argument(run: Callable[..., Trace], bad: object) -> None:
    t = run()
    with pytest.raises(sr.InputTypeError, match=r"argument a must be a Trace or a Stepper"):
        sr.compare(bad, t)
    with pytest.raises(sr.InputTypeError, match=r"argument b must be a Trace or a Stepper"):
        sr.compare(t, bad)


@pytest.mark.parametrize("labels", ["ab", ("only one",), ("x", 2), ["same", "same"], ("", "b")])
def test_bad_labels_are_refused(run: Callable[..., Trace], labels: Any) -> None:
    t = run()
    with pytest.raises(sr.InputError, match="labels"):
        sr.compare(t, t, labels=labels)


def test_config_differences_are_listed_with_the_inputs(run: Callable[..., Trace]) -> None:
    a = run(relevance_cutoff=40)
    b = run("What is the refund window?")
    cmp = sr.compare(a, b)
    keys = {c.key: (c.left, c.right) for c in cmp.config}
    assert keys["settings.relevance_cutoff"] == ("40", "50")
    assert keys["question"] == (Q, "What is the refund window?")
    assert "models.grade" not in keys  # the same model on both sides


def test_the_record_is_plain_frozen_data(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(rerank=False), run())
    again = Comparison.model_validate_json(cmp.model_dump_json())
    assert again == cmp
    with pytest.raises(Exception, match="frozen"):
        cmp.rows = []  # type: ignore[misc]  # deliberately writing a frozen field
    with pytest.raises(sr.InputError, match="no stage 'ranking'"):
        cmp.row("ranking")


# ------------------------------------------------------------------ faces


def test_text_face_names_the_first_divergence(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(rerank=False), run(), labels=("rerank off", "rerank on"))
    text = cmp.to_text()
    lines = text.splitlines()
    assert lines[0] == (
        'Comparison "rerank off" vs "rerank on": first divergence at Rerank (rerank order): '
        "Rerank ran in rerank on only (rerank off skipped it)"
    )
    assert [ln.split()[1] for ln in lines[1:11]] == [
        "Decide", "Rewrite", "Retrieve", "Grade", "Rerank", "Assess", "Generate", "Verify", "Usefulness",
        "Outcome",
    ]  # fmt: skip
    assert lines[5].startswith("  ≠ Rerank")
    assert lines[1].startswith("  = Decide")
    assert lines[-1] == "  config: settings.rerank false → true"
    assert cmp._repr_mimebundle_()["text/plain"] == text


def test_static_html_marks_the_first_divergence(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(rerank=False), run(), labels=("rerank off", "rerank on"))
    html = cmp.to_html()
    assert_well_formed(html)
    assert html.startswith('<div class="srnb-root srnb-cmp tex2jax_ignore mathjax_ignore" dir="ltr">')
    assert "<script" not in html.lower()
    assert html.count('srnb-cmp-first" data-stage=') == 1
    first = re.search(r'<section class="srnb-cmp-row srnb-cmp-diff srnb-cmp-first" data-stage="(\w+)">', html)
    assert first
    assert first.group(1) == "rerank"
    assert "First divergence: Rerank</strong> (rerank order)" in html
    # The first divergent stage's details are open; the others are folded.
    section = html[first.start() : html.index("</section>", first.start())]
    assert '<details class="srnb-details" open ' in section
    assert html.count('<details class="srnb-details" open ') == 1
    # Chunk ids only on hover.
    assert cmp.rows[4].right.items
    cid = cmp.rows[4].right.items[0].chunk_id
    assert f'title="chunk {cid}' in html
    assert f">{cid}<" not in html
    bundle = cmp._repr_mimebundle_()
    assert bundle["text/html"] == html
    # marimo's hook, outside a marimo run: the static face with its text fallback.
    shown = cmp._display_()
    assert isinstance(shown, StaticView)
    assert shown._repr_html_() == html
    assert repr(shown) == cmp.to_text()


def test_static_html_escapes_hostile_document_text(tmp_path: Path) -> None:
    kb = _kb(tmp_path, {"pay<ments>.md": HOSTILE_DOC})
    answers = []
    for extra in ("", " <b>bold</b> $y$"):
        model = sr.ScriptedModel()
        script_refund(model, answer="Refunds within 30 days <script>alert(3)</script> cost $x$ [1]." + extra)
        model.default("grade", grade_by_words("refund"))
        answers.append(sr.SelfRAG(kb, model=model).ask(Q))
    cmp = sr.compare(*answers)
    assert _first(cmp) == ("generate", "generation")
    html = cmp.to_html()
    assert_well_formed(html)
    assert "<script" not in html.lower()
    assert "<img" not in html
    assert "<b>" not in html
    assert "<ments>" not in html
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html
    assert "$x$" in html  # left to the reader: the root opts out of MathJax
    assert "tex2jax_ignore mathjax_ignore" in html
    names = [i.text for i in cmp.row("retrieve").left.items]
    assert names
    assert all("pay<ments>.md" in n for n in names)
    assert "pay&lt;ments&gt;.md" in html


# ---------------------------------------------------------------- widget


def test_the_widget_mounts_the_tree_the_static_page_shows(run: Callable[..., Trace]) -> None:
    cmp = sr.compare(run(rerank=False), run(), labels=("rerank off", "rerank on"))
    w = sr.view(cmp)
    assert isinstance(w, CompareWidget)
    assert w.tree == to_json(compare_tree(cmp))
    assert w.tree["c"] == "srnb-root srnb-cmp tex2jax_ignore mathjax_ignore"
    rows = [n for n in tree_find(w.tree, "srnb-cmp-row") if "data-stage" in n.get("a", {})]
    assert [r["a"]["data-stage"] for r in rows] == list(STAGES)
    (first,) = tree_find(w.tree, "srnb-cmp-first")
    assert first["a"]["data-stage"] == "rerank"
    text = tree_text(w.tree)
    assert "First divergence: Rerank (rerank order) — Rerank ran in rerank on only" in text
    # the first divergence starts open, every fold remembered by its key across updates
    opened = [d for d in tree_find(first, "srnb-details") if "open" in d.get("a", {})]
    assert opened
    assert all(d["a"]["data-key"].startswith("cmp-rerank-") for d in opened)
    # chunk ids on hover only
    assert not re.search(r"\b[0-9a-f]{24}\b", text)
    assert "settings.rerank" in text
    json.dumps(w.tree)
    w.update(sr.compare(run(), run()))
    assert "No divergence: every stage matches." in tree_text(w.tree)
    assert w._repr_mimebundle_()[0]["text/html"].startswith('<div class="srnb-root srnb-cmp')
    with pytest.raises(sr.InputTypeError, match="CompareWidget shows a Comparison"):
        CompareWidget(run())


def test_widget_keeps_markup_and_controls_as_text(tmp_path: Path) -> None:
    kb = _kb(tmp_path, {"payments.md": HOSTILE_DOC})
    traces = []
    for extra in ("", " \u202eevil\u202c <img src=x>"):
        model = sr.ScriptedModel()
        script_refund(model, answer="Refunds within 30 days <script>alert(3)</script> [1]." + extra)
        traces.append(sr.SelfRAG(kb, model=model).ask(Q))
    w = CompareWidget(sr.compare(*traces))
    raw = json.dumps(w.tree, ensure_ascii=False)
    assert "<script>alert(3)</script>" in tree_text(w.tree)  # a string: mount.js sets it as text
    assert "U+202E" in [tree_text(n) for n in tree_find(w.tree, "srnb-ctl")]
    assert "\u202e" not in raw
    css = str(CompareWidget._css)
    assert ".srnb-cmp-first" in css
    assert ".srnb-root" in css  # the shared stylesheet comes first


SUPERSEDED = {
    "refund-2024.md": "---\ntitle: Refund policy 2024\nstatus: superseded\nsuperseded_by: refund-2025.md\n---\n"
    "# Refund window\n\nCustomers can request a refund within 14 days of purchase.\n",
    "refund-2025.md": "---\ntitle: Refund policy 2025\nstatus: current\nsupersedes: refund-2024.md\n---\n"
    "# Refund window\n\nCustomers can request a full refund within 30 days of purchase.\n",
}


def test_every_face_flags_a_superseded_document(tmp_path: Path) -> None:
    kb = _kb(tmp_path, SUPERSEDED)
    traces = []
    for rerank in (False, True):
        model = sr.ScriptedModel()
        script_refund(model)
        traces.append(sr.SelfRAG(kb, model=model).with_settings(rerank=rerank).ask(Q))
    cmp = sr.compare(*traces, labels=("rerank off", "rerank on"))
    # the record: the document's trust facts travel with every item naming its chunk
    items = [i for r in cmp.rows for s in (r.left, r.right) for i in s.items if i.chunk_id]
    old = [i for i in items if i.text.split(". ", 1)[-1].startswith("refund-2024.md")]
    assert old, [i.text for i in items]
    assert all(i.doc == {"status": "superseded", "superseded_by": "refund-2025.md"} for i in old)
    # static HTML: the same red flag as the trace view, with what supersedes it on hover
    html = StaticView(cmp)._repr_html_()
    assert 'srnb-bad" title="superseded by refund-2025.md"><bdi>⚠ superseded</bdi></span>' in html
    assert "<bdi>current</bdi></span>" in html
    # widget: the same tree, so the same badge next to the chunk's name
    w = CompareWidget(cmp)
    (retrieve,) = [
        n for n in tree_find(w.tree, "srnb-cmp-row") if n.get("a", {}).get("data-stage") == "retrieve"
    ]
    named = [tree_text(i) for i in tree_find(retrieve, "srnb-cmp-item")]
    assert any("refund-2024.md › Refund window ⚠ superseded" in x for x in named), named
    badges = [b for b in tree_find(retrieve, "srnb-bad") if tree_text(b) == "⚠ superseded"]
    assert badges[0]["a"]["title"] == "superseded by refund-2025.md"
