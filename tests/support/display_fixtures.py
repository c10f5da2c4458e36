"""Traces built record by record, as the pipeline would leave them (fixtures in conftest.py).

full_trace      factual question, 10 hits, grades, rerank, 10 claims
                (supported / partial / unsupported, one citation error)
greeting_trace  NO_RETRIEVE by rule, direct answer
refused_trace   nothing relevant -> REFUSE
fallback_trace  rerank protocol violation -> previous order kept
clarify_trace   two plans in the documents -> CLARIFY with options
hostile_trace   every text field carries an attack string

Also what the display tests check views with: the static views' vocabulary
(TAGS, ATTRS, STYLE_RE) and a parser that collects what a markup holds
(Markup), well-formed HTML, widget trees' text. The notebooks a record is
shown in: notebook_support.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from selfrag_nb.store.types import Hit, Hits, User
from selfrag_nb.trace import (
    Assessment,
    Citation,
    Claim,
    ClaimEvidence,
    ConfigSnapshot,
    Decision,
    Fallback,
    Generation,
    Grade,
    Grades,
    ModelCall,
    Outcome,
    ProtectedSpan,
    QueryHits,
    RejectedRewrite,
    Rerank,
    Retrieval,
    Rewrite,
    Support,
    Trace,
)

SOURCES = [
    # The heading path repeats the title, as Markdown H1s do: views say it once.
    ("refund-policy.md", "Refund policy", "Refund policy > Refund window"),
    ("refund-policy.md", "Refund policy", "Exceptions"),
    ("faq.md", "FAQ", "Returns"),
    ("pricing.md", "Pricing", "Plans"),
    ("terms.md", "Terms of service", "Cancellation"),
    ("shipping.md", "Shipping", "Delivery times"),
    ("support-hours.md", "Support", "Opening hours"),
    ("refund-policy-zh.md", "退款政策", "退款期限"),
    ("security.md", "Security", "Data retention"),
    ("changelog.md", "Changelog", "v2.3.1"),
]

TEXTS = [
    "Customers may request a full refund within 30 days of purchase. Refunds are issued to the original "
    "payment method within 5 business days.",
    "Digital downloads that have been activated are not refundable. Annual plans are refunded pro rata "
    "after the first 30 days.",
    "Q: How do I return an item? A: Open a ticket with your order number (e.g. ORD-2024-0042) and we "
    "will send a prepaid label.",
    "The Pro plan costs $20 per month; the Team plan costs $15 per seat per month, billed annually.",
    "You may cancel at any time. Cancellation takes effect at the end of the current billing period.",
    "Standard delivery takes 3-5 business days; express delivery takes 1-2 business days.",
    "Support is available Monday to Friday, 9:00-18:00 CET, excluding public holidays.",
    "客户可在购买后30天内申请全额退款。退款将在5个工作日内退回原支付方式。",
    "Payment data is retained for 7 years to comply with tax law; account data is deleted 90 days after closure.",
    "v2.3.1: fixed a rounding error in pro-rata refunds for annual plans.",
]

SCORES = [92, 85, 61, 12, 40, 5, 3, 88, 8, 55]

#: Front matter of the documents (store/loaders.py keeps it as chunk metadata):
#: the top hit comes from a superseded policy, the views must flag it.
DOC_META = {
    "refund-policy.md": {
        "status": "superseded",
        "effective": "2024-01-01",
        "superseded_by": "refund-policy-2025.md",
    },
    "pricing.md": {"status": "current", "version": "v3"},
}


def _call(role: str, i: int = 0, offline: bool = True, cost: float | None = None, **kw: object) -> ModelCall:
    fields: dict[str, object] = {"raw": '{"ok": true}'} | kw
    return ModelCall(
        role=role,
        model="offline" if offline else "openai/gpt-4o-mini",
        offline=offline,
        prompt_hash=f"{role[:3]}-{i:04d}abcd",
        messages=[
            {"role": "system", "content": f"You are the {role} evaluator. Answer in JSON."},
            {
                "role": "user",
                "content": f"Question: What is the refund window?\nDocument {i}: {TEXTS[i % 10]}",
            },
        ],
        parsed_ok=True,
        tokens_in=120 + i,
        tokens_out=20 + i,
        cost=cost,
        latency_ms=10.0 + i,
        **fields,
    )


def make_hits(n: int = 10, texts: list[str] | None = None) -> list[Hit]:
    texts = texts or TEXTS
    hits = []
    for i in range(n):
        src, title, heading = SOURCES[i % len(SOURCES)]
        hits.append(
            Hit(
                source=src,
                doc_id=f"doc-{i % 10:02d}",
                chunk_id=f"c{i:03d}",
                title=title,
                heading=heading,
                text=texts[i % len(texts)],
                score=round(0.9 - i * 0.05, 3),
                scores={"vector": round(0.8 - i * 0.04, 3), "fts": round(7.5 - i * 0.6, 2)},
                rank=i + 1,
                # Keyword search put each hit one place lower and the last one first.
                ranks={"vector": i + 1, "fts": (i + 1) % n + 1},
                metadata=DOC_META.get(src, {}),
            )
        )
    return hits


def _grades(hits: list[Hit], scores: list[int], offline: bool = True) -> Grades:
    items = []
    for h, s in zip(hits, scores, strict=False):
        band = "high" if s >= 80 else "partial" if s >= 50 else "irrelevant"
        items.append(
            Grade(
                chunk_id=h.chunk_id,
                source=h.source,
                score=s,
                relevant=s >= 50,
                band=band,
                key_info=h.text[:60] if s >= 50 else "",
                gaps="" if s >= 80 else "does not state the refund window",
                latency_ms=11.0,
            )
        )
    kept = [g.chunk_id for g in sorted(items, key=lambda g: -g.score) if g.relevant]
    return Grades(
        items=items,
        kept=kept,
        latency_ms=48.5,
        calls=[_call("grade", i, offline=offline) for i in range(len(items))],
    )


ANSWER = (
    "Customers can request a full refund within 30 days of purchase [1]. "
    "Refunds go back to the original payment method within 5 business days [1]. "
    "Activated digital downloads are not refundable [2]. "
    "Annual plans are refunded pro rata after 30 days [2]. "
    "To return an item, open a ticket with your order number [3]. "
    "A prepaid return label is sent by email [3]. "
    "Refunds are always processed on the same day [1]. "
    "The Team plan costs $15 per seat [4]. "
    "客户可在30天内申请全额退款[5]。"
    "Support can help with refunds on weekends [3]."
)


def _claims(answer: str) -> list[Claim]:
    specs = [
        (
            "Customers can request a full refund within 30 days of purchase",
            "supported",
            "c000",
            "full refund within 30 days of purchase",
            None,
        ),
        (
            "Refunds go back to the original payment method within 5 business days",
            "supported",
            "c000",
            "original payment method within 5 business days",
            None,
        ),
        (
            "Activated digital downloads are not refundable",
            "supported",
            "c001",
            "Digital downloads that have been activated are not refundable",
            None,
        ),
        (
            "Annual plans are refunded pro rata after 30 days",
            "supported",
            "c001",
            "Annual plans are refunded pro rata after the first 30 days",
            None,
        ),
        (
            "To return an item, open a ticket with your order number",
            "supported",
            "c002",
            "Open a ticket with your order number",
            None,
        ),
        ("A prepaid return label is sent by email", "partial", "c002", "we will send a prepaid label", None),
        ("Refunds are always processed on the same day", "unsupported", "", "", None),
        ("The Team plan costs $15 per seat", "supported", "c003", "$15 per seat per month", None),
        ("客户可在30天内申请全额退款", "supported", "c007", "客户可在购买后30天内申请全额退款", None),
        (
            "Support can help with refunds on weekends",
            "unsupported",
            "",
            "",
            "cited [3] (c002) does not mention weekend support",
        ),
    ]
    texts = dict(zip((h.chunk_id for h in make_hits()), TEXTS, strict=True))
    claims = []
    for text, verdict, chunk, span, err in specs:
        start = answer.find(text)
        ev = []
        if chunk:
            s = texts[chunk].find(span)
            ev.append(ClaimEvidence(chunk_id=chunk, span=span, start=s, end=s + len(span)))
        claims.append(
            Claim(
                text=text,
                verdict=verdict,
                evidence=ev,
                cited=[chunk] if chunk else ["c002"] if err else [],
                citation_error=err,
                start=start,
                end=start + len(text) if start >= 0 else -1,
            )
        )
    return claims


def build_full_trace() -> Trace:
    hits = make_hits()
    t = Trace(
        question="What is the refund window?",
        user=User("ana", roles=["staff"]),
        config=ConfigSnapshot(models={"default": "offline"}, kb_version=3),
        started_at=0.0,
        wall_ms=1234.5,
    )
    t.append(
        Decision(
            retrieve=True, reason="asks about a policy", source="rule", rule="product keyword", latency_ms=0.1
        )
    )
    t.append(
        Rewrite(
            queries=["What is the refund window?", "refund window days purchase", "refund policy time limit"],
            rejected=[
                RejectedRewrite(text="return policy", reason="drops a protected span", missing=["refund"])
            ],
            protected=[ProtectedSpan(text="refund", kind="quoted")],
            reason="short question: two rewrites widen recall",
            attempted=True,
            latency_ms=22.0,
            calls=[_call("rewrite")],
        )
    )
    t.append(
        Retrieval(
            hits=hits,
            per_query=[
                QueryHits(query="What is the refund window?", chunk_ids=[h.chunk_id for h in hits[:6]])
            ],
            access_filter="roles in ['public', 'staff']",
            duplicates_removed=4,
            kb_version=3,
            latency_ms=35.2,
        )
    )
    t.append(_grades(hits, SCORES))
    t.append(
        Rerank(
            before=["c000", "c007", "c001", "c002", "c009"],
            after=["c000", "c001", "c007", "c002", "c009"],
            scores={"c000": 0.97, "c001": 0.81, "c007": 0.77, "c002": 0.4, "c009": 0.2},
            reasons={"c001": "names the exceptions to the refund window"},
            reranker="offline-overlap",
            keep=5,
            latency_ms=9.0,
            calls=[_call("rerank")],
        )
    )
    t.append(
        Assessment(
            action="answer",
            reason="the policy states the window",
            evidence=["c000", "c001"],
            latency_ms=14.0,
            calls=[_call("assess")],
        )
    )
    t.append(
        Generation(
            answer=ANSWER,
            citations=[
                Citation(marker=1, chunk_id="c000"),
                Citation(marker=2, chunk_id="c001"),
                Citation(marker=3, chunk_id="c002"),
                Citation(marker=4, chunk_id="c003"),
                Citation(marker=5, chunk_id="c007"),
            ],
            evidence=["c000", "c001", "c002", "c003", "c007"],
            latency_ms=310.0,
            calls=[_call("generate")],
        )
    )
    t.append(
        Support(
            claims=_claims(ANSWER),
            overall_confidence=72,
            recommendation="ADD_DISCLAIMER",
            latency_ms=120.0,
            calls=[_call("verify")],
        )
    )
    t.append(
        Outcome(
            outcome="disclaimed",
            answer=ANSWER,
            reason="2 unsupported claims dropped; 1 partial",
            disclaimer="Parts of this answer are not fully supported by the documents.",
            dropped_claims=["Refunds are always processed on the same day"],
            latency_ms=0.4,
        )
    )
    return t


@pytest.fixture
def full_trace() -> Trace:
    return build_full_trace()


@pytest.fixture
def greeting_trace() -> Trace:
    t = Trace(question="Hello!", started_at=0.0, wall_ms=2.0)
    t.append(
        Decision(retrieve=False, reason="greeting", source="rule", rule="greeting pattern", latency_ms=0.05)
    )
    t.append(
        Generation(
            answer="Hello! How can I help you today?",
            mode="direct",
            latency_ms=1.0,
            calls=[_call("generate")],
        )
    )
    t.append(Outcome(outcome="direct", answer="Hello! How can I help you today?", latency_ms=0.1))
    return t


@pytest.fixture
def refused_trace() -> Trace:
    hits = make_hits(4)
    t = Trace(question="What is the CEO's home address?", started_at=0.0, wall_ms=80.0)
    t.append(
        Decision(
            retrieve=True,
            reason="needs facts",
            source="model",
            latency_ms=40.0,
            calls=[_call("decide", cost=0.00012, offline=False)],
        )
    )
    t.append(Retrieval(hits=hits, latency_ms=12.0))
    t.append(_grades(hits, [10, 4, 0, 22], offline=False))
    t.append(Assessment(action="refuse", reason="no relevant document covers the question", latency_ms=0.2))
    t.append(
        Outcome(
            outcome="refused",
            answer="I can't answer that from the knowledge base.",
            reason="no relevant evidence",
            latency_ms=0.1,
        )
    )
    return t


@pytest.fixture
def fallback_trace() -> Trace:
    hits = make_hits(5)
    t = Trace(question="How long do refunds take?", started_at=0.0, wall_ms=200.0)
    t.append(Retrieval(hits=hits, latency_ms=10.0))
    t.append(
        Rerank(
            before=[h.chunk_id for h in hits],
            after=[h.chunk_id for h in hits],
            reranker="llm",
            fallback="protocol violation: index 7 out of range (5 candidates)",
            fallbacks=[Fallback(what="rerank", reason="protocol violation: index 7 out of range")],
            latency_ms=55.0,
            calls=[
                _call("rerank", parse_status="unparsed", parse_error="index 7 out of range", offline=False)
            ],
        )
    )
    return t


@pytest.fixture
def clarify_trace() -> Trace:
    t = Trace(question="How much does the plan cost?", started_at=0.0, wall_ms=90.0)
    t.append(
        Assessment(
            action="clarify",
            reason="the documents price two plans differently",
            options=["Pro plan", "Team plan"],
            conflict="$20/month vs $15/seat/month",
            latency_ms=30.0,
        )
    )
    t.append(Outcome(outcome="clarify", answer="Which plan do you mean: Pro or Team?", latency_ms=0.1))
    return t


HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:alert(1)">click</a> javascript:alert(2)',
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "</style><style>*{display:none}</style>",
    '" onmouseover="alert(1)" x="',
    "abc\u202eevil\u202c \u200bzero\u200dwidth \u2066iso\u2069 שלום עולם مرحبا",
    "中文文本：退款期限为三十天。",
    "A" * 1_000_000,
]


@pytest.fixture
def hostile_trace() -> Trace:
    return build_hostile_trace()


def build_hostile_trace() -> Trace:
    hits = make_hits(len(HOSTILE), texts=HOSTILE)
    hits = [
        h.model_copy(
            update={
                "source": HOSTILE[i],
                "title": HOSTILE[(i + 1) % 9],
                "heading": HOSTILE[(i + 3) % 9],
                "metadata": {"status": HOSTILE[(i + 2) % 9], "version": HOSTILE[(i + 4) % 9]},
            }
        )
        for i, h in enumerate(hits)
    ]
    bad = " ".join(HOSTILE[:8])
    t = Trace(question=bad, user=User("<b>x</b>"), history=[{"role": "user", "content": bad}], started_at=0.0)
    t.append(
        Decision(
            retrieve=True,
            reason=bad,
            source="model",
            rule=HOSTILE[0],
            calls=[_call("decide", injection_flags=[HOSTILE[0]], raw=HOSTILE[1])],
        )
    )
    t.append(
        Rewrite(
            queries=[bad, HOSTILE[4]],
            protected=[ProtectedSpan(text=HOSTILE[0], kind="quoted")],
            rejected=[RejectedRewrite(text=HOSTILE[1], reason=HOSTILE[2])],
            attempted=True,
            reason=HOSTILE[5],
        )
    )
    t.append(Retrieval(hits=hits, access_filter=HOSTILE[4]))
    t.append(_grades(hits, [70] * len(hits)))
    t.append(
        Rerank(
            before=[h.chunk_id for h in hits],
            after=[hits[1].chunk_id, hits[0].chunk_id],
            fallback=HOSTILE[0],
            reranker=HOSTILE[1],
            reasons={hits[1].chunk_id: HOSTILE[2]},
        )
    )
    t.append(Assessment(action="clarify", reason=HOSTILE[1], options=HOSTILE[:3], conflict=HOSTILE[4]))
    answer = bad + " " + HOSTILE[8]
    t.append(Generation(answer=answer, citations=[Citation(marker=1, chunk_id=HOSTILE[0], valid=False)]))
    t.append(
        Support(
            claims=[
                Claim(text=HOSTILE[0], verdict="unsupported", citation_error=HOSTILE[1], cited=[HOSTILE[2]]),
                Claim(
                    text=HOSTILE[6],
                    verdict="partial",
                    evidence=[ClaimEvidence(chunk_id=hits[6].chunk_id, span=HOSTILE[6][:10])],
                ),
                Claim(
                    text=HOSTILE[3],
                    verdict="supported",
                    evidence=[ClaimEvidence(chunk_id=hits[8].chunk_id, span="AAAA", start=5, end=9)],
                ),
            ]
        )
    )
    t.append(Outcome(outcome="answered", answer=answer, disclaimer=HOSTILE[4], dropped_claims=[HOSTILE[1]]))
    return t


@pytest.fixture
def hits_obj() -> Hits:
    return Hits(hits=make_hits(3), query="refund", access_filter="roles in ['public']")


def widget_module(tmp_path: Path, name: str) -> Path:
    """The ES module a widget loads (mount.js with its generated allow-lists +
    static/<name>, selfrag_nb.display.js.module), written where the node harnesses
    can import it."""
    from selfrag_nb.display.js import module

    out = tmp_path / (Path(name).stem + ".mjs")
    out.write_text(module("mount.js", name), encoding="utf-8")
    return out


def run_harness(
    tmp_path: Path, harness: Path, js: str, *inputs: tuple[str, Any], extra: Sequence[str] = ()
) -> Any:
    """``node harness <widget module js> <name>.json ... extra...`` and its
    stdout as JSON; each input is written to ``tmp_path/<name>.json``. Skips
    the test when node is not installed."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the JS renderer test needs it")
    files = []
    for name, value in inputs:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
        files.append(str(path))
    proc = subprocess.run(
        [node, str(harness), str(widget_module(tmp_path, js)), *files, *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# --------------------------------------------------------------- well-formed HTML


#: Elements without an end tag.
VOID = {"br", "img", "hr", "input", "meta", "link", "wbr"}


class _Balance(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()


def assert_well_formed(markup: str) -> None:
    p = _Balance()
    p.feed(markup)
    p.close()
    assert not p.errors, p.errors[:5]
    assert not p.stack, p.stack


# --------------------------------------------------------------- widget trees


def tree_text(node: Any) -> str:
    """All text of a widget tree (tree.to_json's JSON), in order: what mount.js shows."""
    if isinstance(node, str):
        return node
    return "".join(tree_text(k) for k in node.get("k", []))


def tree_find(node: Any, cls: str) -> list[Any]:
    """Every JSON node under ``node`` whose class list holds ``cls``."""
    if isinstance(node, str):
        return []
    out = [node] if cls in str(node.get("c", "")).split() else []
    for k in node.get("k", []):
        out.extend(tree_find(k, cls))
    return out


def tree_attr(node: Any, name: str) -> list[Any]:
    """Every JSON node under ``node`` that carries the attribute ``name``, in order."""
    if isinstance(node, str):
        return []
    out = [node] if name in node.get("a", {}) else []
    for k in node.get("k", []):
        out.extend(tree_attr(k, name))
    return out


# --------------------------------------------------------------- the static views' vocabulary

#: Every tag, attribute and inline style a static view (to_html) may hold: anything
#: else in one came from data.
TAGS = {
    "div", "span", "bdi", "section", "details", "summary", "style", "mark", "sup", "strong",
    "ul", "li", "table", "thead", "tbody", "tr", "th", "td", "svg", "text", "path",
    "g", "title", "wbr",  # SVG label groups with their tooltip; break points in names
}  # fmt: skip
ATTRS = {
    "class", "style", "title", "dir", "role", "aria-label", "viewbox", "width", "height", "xmlns",
    "x", "y", "text-anchor", "font-weight", "d",
    # declared behaviour (display/tree.py): pager, claim -> evidence, remembered folds
    "data-page", "data-noun", "data-key", "data-claim", "data-for-claim",
}  # fmt: skip
STYLE_RE = re.compile(r"^(width|--srnb-at|--srnb-left):\d{1,3}\.\d%(;width:\d{1,3}\.\d%)?$")


class Markup(HTMLParser):
    """What a markup holds: its tags, its attributes (name, value) and the text of
    each <style> block, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []
        self.style_blocks: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs.extend((k, v or "") for k, v in attrs)
        self._in_style = tag == "style"

    # <x/> as <x>: a self-closed <style/> still counts, followed by text, as a stylesheet
    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style_blocks.append(data)
            self._in_style = False
