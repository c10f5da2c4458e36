"""Faces of an Attribution (and its AttributionPlan): which chunk each claim stands on.

    attribution_node(a) -> Node           the one view tree, built once:
        div.srnb-root.srnb-attr
          card   head      counts, verify calls, model, wall time
                 matrix    claims (rows) x chunks (columns: [n], document name,
                           superseded flagged); each cell the claim's verdict
                           without that chunk, its effect as a symbol and a border
                           (decisive cells carry data-for-claim="i")
                 legend    the five effects, drawn as the cells are
                 claims    one <details data-key> per claim: its sentence in the
                           answer (marked), the chunks it is lost without, the
                           evidence spans it quoted and what cutting each did
                           (the sentence and the spans carry data-for-claim="i")
          a claim (the matrix row's head, the <details> summary) is data-claim="i"
    attribution_text(a)  one line: "attribution: 5 claims × 4 chunks, 3 decisive cells"
    attribution_html(a)  to_html(tree) inside the root, with static/attribution.css;
                         no script: each claim's detail opens as a <details>
    widget               AttributionWidget (attribution_widget.py): ViewWidget fed
                         to_json(tree); mount.js makes the claims buttons: a click
                         lights the claim's decisive cells, sentence and spans
AttributionPlan -> plan_text / plan_html  the calls and estimated tokens, before running
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfrag_nb.attribution import Attribution, AttributionPlan, ClaimAttribution
from selfrag_nb.display import faces
from selfrag_nb.display.cards import details, root, table
from selfrag_nb.display.js import stylesheet
from selfrag_nb.display.markup import fmt_ms, neutralize, plural
from selfrag_nb.display.tree import Node, h, to_page
from selfrag_nb.formats import fmt_tokens

ROOT = "srnb-root srnb-attr tex2jax_ignore mathjax_ignore"
CSS_FILE = Path(__file__).parent / "static" / "attribution.css"
#: Characters of a claim shown in its matrix row (the whole claim is in its details).
_ROW_CHARS = 90
#: Characters of the answer, a claim or a span shown (a note says when cut).
_TEXT_CHARS = 4000
#: effect -> (symbol, CSS class, words for the tooltip and screen readers).
#: The symbols differ in shape and the CSS borders in style (solid, dashed,
#: dotted, none), so no effect is told by its colour alone.
CELL = {
    "decisive": ("●", "srnb-attr-decisive", "lost without this chunk"),
    "weakened": ("◐", "srnb-attr-weakened", "only partly supported without this chunk"),
    "strengthened": ("▲", "srnb-attr-strengthened", "better supported without this chunk"),
    "unaffected": ("·", "srnb-attr-unaffected", "unaffected"),
    "unknown": ("?", "srnb-attr-unknown", "not known: the call failed or did not name this claim"),
}
_VERDICT_CLASS = {"supported": "srnb-attr-ok", "partial": "srnb-attr-warn", "unsupported": "srnb-attr-bad"}


def attribution_css() -> str:
    """static/attribution.css, comments and indentation stripped (the widget loads the file)."""
    return stylesheet("attribution.css")


# ------------------------------------------------------------------ text


def attribution_text(a: Attribution) -> str:
    """One line: claims x chunks and the decisive cells, or why there is nothing."""
    if a.reason:
        return neutralize(f"attribution: nothing to attribute ({a.reason})")
    counts = (
        plural(len(a.claims), "claim"),
        plural(len(a.chunks), "chunk"),
        plural(a.decisive_cells, "decisive cell"),
    )
    return "attribution: {} × {}, {}".format(*counts)


def plan_text(p: AttributionPlan) -> str:
    """One line: the calls and tokens an attribution will cost."""
    if p.reason:
        return neutralize(f"attribution plan: nothing to attribute ({p.reason})")
    price = "free" if p.offline else ("price unknown" if p.cost is None else f"about ${p.cost:.4f}")
    confirm = "; needs confirm=True" if p.needs_confirmation else ""
    return neutralize(
        f"attribution plan: {plural(p.calls, 'verify call')} ({p.chunk_ablations} chunks, "
        f"{p.sentence_ablations} sentences left out; {p.collapsed} identical made once), "
        f"about {p.tokens_in:,} tokens in, model {p.model!r} ({price}){confirm}"
    )


# ------------------------------------------------------------------ the tree


def _clip(text: str, limit: int) -> list[Any]:
    """``text`` cut to ``limit`` characters, and a note saying so when it was."""
    note = f" … truncated: showing {limit:,} of {len(text):,} characters"
    return [text] if len(text) <= limit else [text[:limit], h("span", "srnb-trunc", note)]


def _tip(text: str) -> str:
    """An attribute value made of data: controls as visible labels (attributes hold no spans), cut."""
    return neutralize(text)[:500]


def _short(text: str) -> str:
    return text if len(text) <= _ROW_CHARS else text[:_ROW_CHARS] + "…"


def _verdict(v: str) -> Node:
    return h("span", f"srnb-attr-v {_VERDICT_CLASS[v]}", v)


def _card(*kids: Any) -> Node:
    return root(ROOT, h("section", "srnb-attr-card", *kids))


def _title(text: str, meta: str = "") -> Node:
    return h(
        "div", "srnb-attr-h", h("span", "srnb-attr-title", text), meta and h("span", "srnb-attr-meta", meta)
    )


def _head(a: Attribution) -> Node:
    t = a.totals
    tokens = f" · {fmt_tokens(t.tokens_in)} tokens in" if t.tokens_in else ""
    counts = attribution_text(a).removeprefix("attribution: ")
    calls = plural(t.model_calls, "verify call")
    return _title("Attribution", f"{counts} · {calls}{tokens} · model {a.model[:120]} · {fmt_ms(a.wall_ms)}")


def _column(a: Attribution, chunk_id: str) -> Node:
    c = a.chunk(chunk_id)
    name = h("bdi", "", _short(c.name))
    stale = c.superseded and [" ", h("span", "srnb-attr-stale", "⚠", title="superseded document")]
    tip = _tip(f"{c.ref.source} · {c.ref.heading} · chunk {c.chunk_id}")
    return h("th", "srnb-attr-col", f"[{c.index}] ", name, stale, title=tip, data_chunk=c.index)


def _cell(a: Attribution, i: int, effect: str, chunk_id: str, verdict: str | None) -> Node:
    symbol, cls, words = CELL[effect]
    tip = _tip(f"without {a.chunk(chunk_id).name}: {verdict or 'unknown'} ({words})")
    return h(
        "td",
        cls,
        symbol,
        title=tip,
        aria_label=f"{effect}: {tip}",
        data_effect=effect,
        data_chunk=a.chunk(chunk_id).index,
        # the claim's decisive chunks light up when the claim is selected
        data_for_claim=i if effect == "decisive" else None,
    )


def _row(a: Attribution, i: int, row: ClaimAttribution) -> Node:
    claim = [f"{i + 1}. ", h("bdi", "", _short(row.text)), " ", _verdict(row.verdict)]
    tip = "show this claim's sentence, decisive chunks and evidence"
    head = h("th", "srnb-attr-claim", claim, data_claim=i, title=tip)
    return h("tr", "", head, [_cell(a, i, c.effect, c.chunk_id, c.verdict) for c in row.cells])


def _matrix(a: Attribution) -> list[Node]:
    head = [h("th", "", "claim · verdict with every chunk")] + [_column(a, c.chunk_id) for c in a.chunks]
    matrix = table("srnb-attr-matrix", head, [_row(a, i, row) for i, row in enumerate(a.claims)])
    legend = h(
        "div",
        "srnb-attr-legend",
        "each cell: the claim with that chunk left out —",
        [
            h("span", "", h("span", f"srnb-attr-sym {cls}", sym, aria_hidden="true"), effect)
            for effect, (sym, cls, _) in CELL.items()
        ],
    )
    hint = h(
        "div",
        "srnb-attr-hint",
        "open a claim below for its sentence in the answer and the evidence it quoted; "
        "in a running notebook a click on a claim also lights up the chunks it is lost without",
    )
    return [h("div", "srnb-attr-scroll", matrix), legend, hint]


def _sentence(a: Attribution, i: int, row: ClaimAttribution) -> Node:
    """The answer with the claim's sentence marked (the claim alone when not found in it)."""
    if 0 <= row.start < row.end <= len(a.answer) and row.end <= _TEXT_CHARS:
        kids: list[Any] = [
            a.answer[: row.start],
            h("mark", "srnb-attr-mark", a.answer[row.start : row.end], data_for_claim=i),
            _clip(a.answer[row.end :], max(0, _TEXT_CHARS - row.end)),
        ]
    else:
        kids = [h("mark", "srnb-attr-mark", _clip(row.text, _TEXT_CHARS), data_for_claim=i)]
    return h("div", "srnb-block srnb-attr-sentence", kids, dir="auto")


def _evidence(a: Attribution, i: int, row: ClaimAttribution) -> list[Node]:
    known = {c.chunk_id for c in a.chunks}
    out: list[Node] = []
    for q in row.evidence:
        name = a.chunk(q.chunk_id).name if q.chunk_id in known else q.chunk_id
        cut = next((s for s in row.sentences if s.chunk_id == q.chunk_id and s.span == q.span), None)
        effect = f" · without this sentence: {cut.verdict or 'unknown'} ({cut.effect})" if cut else ""
        out += [
            h("div", "srnb-attr-label", "from ", h("bdi", "", name[:120]), effect),
            h("div", "srnb-block srnb-attr-span", _clip(q.span, _TEXT_CHARS), dir="auto", data_for_claim=i),
        ]
    return out or [h("div", "srnb-attr-hint", "the verifier quoted no evidence")]


def _details(a: Attribution, i: int, row: ClaimAttribution) -> Node:
    decisive = ", ".join(f"[{a.chunk(c).index}] {a.chunk(c).name}" for c in row.decisive) or "none"
    text = _clip(row.text, 300)
    claim = h("span", "srnb-attr-claim", f"{i + 1}. ", _verdict(row.verdict), " ", text, data_claim=i)
    return details(
        claim,
        h("div", "srnb-attr-label", "in the answer:"),
        _sentence(a, i, row),
        h("div", "srnb-attr-label", "lost without: ", h("bdi", "srnb-attr-lost", decisive[:600])),
        h("div", "srnb-attr-label", "evidence quoted:"),
        _evidence(a, i, row),
        key=f"attr-claim-{i}",
        cls="srnb-attr-detail",
    )


def attribution_node(a: Attribution) -> Node:
    """The view tree of an attribution: both faces are drawn from it."""
    if a.reason:
        reason = h("div", "srnb-attr-reason", f"nothing to attribute: {a.reason[:600]}")
        return _card(_title("Attribution"), reason)
    return _card(_head(a), _matrix(a), [_details(a, i, row) for i, row in enumerate(a.claims)])


def attribution_html(a: Attribution) -> str:
    """Static HTML of an attribution (no script; every text escaped)."""
    return to_page(attribution_node(a), attribution_css())


def plan_node(p: AttributionPlan) -> Node:
    """The view tree of an attribution plan: its one line, in a card."""
    return _card(_title("Attribution plan"), h("div", "", plan_text(p).removeprefix("attribution plan: ")))


def plan_html(p: AttributionPlan) -> str:
    """Static HTML of an attribution plan."""
    return to_page(plan_node(p), attribution_css())


def _attribution_widget(obj: Any) -> Any:
    from selfrag_nb.display.attribution_widget import AttributionWidget

    return AttributionWidget(attribution_node(obj), shown=obj)


faces.register(Attribution, text=attribution_text, html=attribution_html, widget=_attribution_widget)
# A plan is read once, before running: one line, no widget.
faces.register(AttributionPlan, text=plan_text, html=plan_html, widget=None)
