"""Snapshots of what users see: the static HTML and the text/plain line.

Snapshots live in tests/display/snapshots/. After an intended change to a
view, rewrite them with ``SNAPSHOT_UPDATE=1 pytest tests/display`` and review
the diff. The HTML is stored with a newline after each block-level closing
tag so diffs stay readable; the stylesheet is checked separately.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from display_fixtures import assert_well_formed, build_full_trace

from selfrag_nb.display import static_html, text_summary
from selfrag_nb.display.html import css, render_body
from selfrag_nb.store.types import Hits
from selfrag_nb.trace import Trace

SNAP_DIR = Path(__file__).parent / "snapshots"


def _readable(body: str) -> str:
    return re.sub(r"(</(?:section|details|summary|div|li|ul|tr|table|svg)>)", r"\1\n", body)


def check_snapshot(name: str, content: str) -> None:
    path = SNAP_DIR / name
    if os.environ.get("SNAPSHOT_UPDATE") == "1":
        SNAP_DIR.mkdir(exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"missing snapshot {path.name}: run SNAPSHOT_UPDATE=1 pytest tests/display")
    expected = path.read_text(encoding="utf-8")
    assert content == expected, f"{name} changed: review, then SNAPSHOT_UPDATE=1 pytest tests/display"


def _named_traces(request: pytest.FixtureRequest) -> dict[str, Trace]:
    return {
        name: request.getfixturevalue(f"{name}_trace")
        for name in ("full", "greeting", "refused", "fallback", "clarify")
    }


def test_every_record_of_the_full_trace_matches_its_snapshot(full_trace: Trace) -> None:
    seen = set()
    for rec in full_trace.records:
        body = render_body(rec)
        assert_well_formed(body)
        check_snapshot(f"record_{rec.stage}.html", _readable(body))
        line = text_summary(rec)
        assert "\n" not in line
        check_snapshot(f"record_{rec.stage}.txt", line + "\n")
        seen.add(rec.stage)
    assert len(seen) == 9


def test_traces_match_their_snapshots(request: pytest.FixtureRequest) -> None:
    for name, trace in _named_traces(request).items():
        body = render_body(trace)
        assert_well_formed(body)
        check_snapshot(f"trace_{name}.html", _readable(body))
        check_snapshot(f"trace_{name}.txt", text_summary(trace) + "\n")


def test_hits_match_their_snapshot(hits_obj: Hits) -> None:
    body = render_body(hits_obj)
    assert_well_formed(body)
    check_snapshot("hits.html", _readable(body))
    check_snapshot("hits.txt", text_summary(hits_obj) + "\n")


def test_rendering_is_deterministic() -> None:
    a, b = build_full_trace(), build_full_trace()
    b.started_at = 12345.0  # the clock never reaches the view
    assert static_html(a) == static_html(b)


def test_static_html_is_one_root_with_the_scoped_stylesheet(full_trace: Trace) -> None:
    out = static_html(full_trace)
    assert out.startswith('<div class="srnb-root tex2jax_ignore mathjax_ignore" dir="ltr"><style>')
    assert out.count("<style>") == 1
    sheet = css()
    assert sheet in out
    # every rule is scoped to the view: no global selectors can restyle the notebook
    for rule in re.findall(r"([^{}]+)\{[^{}]*\}", sheet):
        for selector in rule.split(","):
            assert selector.strip().startswith(".srnb-"), selector


def test_text_summaries_read_like_the_spec(request: pytest.FixtureRequest, full_trace: Trace) -> None:
    assert text_summary(full_trace.decision) == "Decision: RETRIEVE by rule (product keyword) · 0.1 ms"
    assert text_summary(full_trace.grades).startswith("Grades: 5/10 relevant (cutoff 50) · best 92")
    assert text_summary(full_trace) == (
        'Trace: "What is the refund window?" → disclaimed · 9 stages · 15 calls · 559 ms · wall 1.2 s, pauses included · '
        "cost unknown · offline model"
    )
    refused = request.getfixturevalue("refused_trace")
    assert "→ refused" in text_summary(refused)
    assert text_summary(request.getfixturevalue("fallback_trace").rerank).startswith(
        "Rerank: fallback, previous order kept (protocol violation"
    )


def test_key_numbers_are_in_the_static_html(full_trace: Trace) -> None:
    out = static_html(full_trace)
    for needle in (
        'style="width:92.0%"',  # best grade bar
        'style="--srnb-at:50.0%"',  # cutoff line (placed by a custom property: the tree allows no left:)
        'style="--srnb-at:80.0%"',  # high-relevance line
        "1.2 s",  # wall time
        "1,845 in / 345 out",  # tokens
        "cost unknown",  # cost None is "unknown", never $0
        "310 ms",  # generation latency
        "0.97",  # rerank score
        "confidence 72",
    ):
        assert needle in out, needle


def test_known_cost_is_shown_in_dollars(refused_trace: Trace) -> None:
    rec = refused_trace.decision
    assert rec is not None
    assert "cost $0.0001" in static_html(rec)


def test_offline_badge_on_offline_traces_only(full_trace: Trace, refused_trace: Trace) -> None:
    note = "offline model — reads structured inputs, not prompts"
    assert note in static_html(full_trace)
    assert full_trace.records[0].calls == []
    assert note not in static_html(full_trace.records[0])  # the rule decided: no model, no badge
    assert note not in render_body(refused_trace).split("srnb-card-decide")[1].split("</section>")[0]


def test_views_of_each_outcome(request: pytest.FixtureRequest) -> None:
    traces = _named_traces(request)
    greet = static_html(traces["greeting"])
    assert "NO RETRIEVE" in greet
    assert "greeting pattern" in greet
    refused = static_html(traces["refused"])
    assert "refusal" in refused
    assert "REFUSE" in refused
    assert "0/4 relevant" in refused
    fallback = static_html(traces["fallback"])
    assert "fallback: previous order kept" in fallback
    assert "index 7 out of range" in fallback
    clarify = static_html(traces["clarify"])
    assert "options to clarify" in clarify
    assert "Pro plan" in clarify
    assert "Team plan" in clarify


def test_claims_are_highlighted_by_verdict_with_labels_not_only_colour(full_trace: Trace) -> None:
    gen = render_body(full_trace).split("srnb-card-generate")[1].split("</section>")[0]
    assert gen.count("srnb-v-supported") >= 7
    assert gen.count("srnb-v-unsupported") >= 2
    assert "srnb-v-partial" in gen
    assert "✓ supported" in gen
    assert "◐ partly supported" in gen
    assert "✗ unsupported" in gen
    assert "✗10⚠" in gen  # the claim with a citation error carries its icon, number and warning


def test_each_claim_shows_its_span_inside_its_chunk(full_trace: Trace) -> None:
    ver = render_body(full_trace).split("srnb-card-verify")[1]
    assert ver.count('<details class="srnb-details srnb-claim-d"') == 10
    assert '<mark class="srnb-mark">full refund within 30 days of purchase</mark>' in ver
    assert '<mark class="srnb-mark">客户可在购买后30天内申请全额退款</mark>' in ver
    assert "cited [3] (c002) does not mention weekend support" in ver


def test_protected_spans_are_marked_in_rewrites(full_trace: Trace) -> None:
    rw = render_body(full_trace.rewrite)
    assert rw.count('<mark class="srnb-protect" title="protected span">refund</mark>') == 3
    assert "drops a protected span" in rw


def test_long_lists_fold_after_a_page(full_trace: Trace) -> None:
    from display_fixtures import make_hits

    from selfrag_nb.trace import Retrieval

    rec = Retrieval(hits=make_hits(45))
    out = render_body(rec)
    assert "show 25 more hits" in out
    head = out.split("show 25 more hits")[0]
    assert head.count('class="srnb-details srnb-hit"') == 20
    big = Retrieval(hits=make_hits(620))
    assert "120 more hits not shown here" in render_body(big)


def test_unknown_objects_are_a_clear_error() -> None:
    with pytest.raises(TypeError, match="cannot render dict"):
        static_html({})
    with pytest.raises(TypeError, match="cannot summarise int"):
        text_summary(3)
