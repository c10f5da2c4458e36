"""Two traces side by side, stage by stage, with the first divergence named.

    compare(a, b, labels=("A", "B"))      a, b: Trace or Stepper (its .trace)
      -> chunk names from both retrievals   "refund-policy.md › Refund policy › Annual"
                                            (ids stay on each Item for hover titles)
      -> one StageRow per step of FLOW, in flow order:
           decide    decision       retrieve yes/no, who decided (rule, cache, model...)
           rewrite   queries        the searched queries, in order
           retrieve  retrieved      the retrieved chunks (set, then order)
           grade     kept           the kept chunks, then their scores / relevance
           rerank    rerank order   the order after reranking (and its fallback)
           assess    action         answer / clarify / refuse / without evidence
           generate  generation     the answer text, then the cited chunks
           verify    claims         each claim and its verdict (the recommendation is
                                    shown; what it does shows in the outcome)
           finish    outcome        the outcome, then the final answer
         a stage that ran on one side only differs; on neither side it is the same
      -> first_divergence = the first row that differs (stage, kind, what changed)
      -> config: the inputs and ConfigSnapshot entries that differ
         (question, user, history, model per role, prompt hashes, settings,
          kb version, embedder, reranker, ...)
    = Comparison (frozen, plain data; faces from selfrag_nb.display.compare_html)

Latencies, tokens and costs never make two stages differ: a comparison says
what the pipeline decided, not how fast. Each row's ``same`` follows the
criterion named above, so a row can show a different reason text and still be
the same decision.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from selfrag_nb._displayable import Displayable
from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.flow import FLOW
from selfrag_nb.store.types import ChunkRef
from selfrag_nb.trace import (
    USEFULNESS_WORDS,
    Assessment,
    Decision,
    Generation,
    Grades,
    Outcome,
    Rerank,
    Retrieval,
    Rewrite,
    Support,
    Trace,
    Usefulness,
)

__all__ = ["KINDS", "Comparison", "ConfigChange", "Divergence", "Item", "Side", "StageRow", "compare"]

#: What each stage is compared on (the divergence kind it reports).
KINDS: dict[str, str] = {
    "decide": "decision",
    "rewrite": "queries",
    "retrieve": "retrieved",
    "grade": "kept",
    "rerank": "rerank order",
    "assess": "action",
    "generate": "generation",
    "verify": "claims",
    "usefulness": "usefulness",
    "finish": "outcome",
}

#: Characters of a long text (an answer) kept in a comparison.
TEXT_LIMIT = 4_000


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Item(_Frozen):
    """One line of a side: a query, a chunk (named by its document), a citation, a claim."""

    text: str
    #: The chunk this line is about ("" when it is not about one); views show it on hover.
    chunk_id: str = ""
    #: How it relates to the other side: "only" (absent there), "moved" (other
    #: position), "changed" (present with another score / verdict), "" (same).
    mark: Literal["", "only", "moved", "changed"] = ""
    #: Trust facts of the chunk's document (status, effective, version,
    #: supersedes, superseded_by), as the trace's retrieval recorded them;
    #: views show them as flags ("⚠ superseded").
    doc: dict[str, str] = Field(default_factory=dict)


class Side(_Frozen):
    """What one trace did at one stage."""

    ran: bool
    summary: str = ""
    items: list[Item] = Field(default_factory=list)
    #: A longer text shown as a block (an answer, a reason).
    text: str = ""


class StageRow(_Frozen):
    stage: str
    title: str
    kind: str
    same: bool
    #: What changed, in words ("" when the stage is the same).
    what: str = ""
    left: Side
    right: Side


class Divergence(_Frozen):
    stage: str
    title: str
    kind: str
    what: str


class ConfigChange(_Frozen):
    """One configuration or input entry that differs (values as display text)."""

    key: str
    left: str
    right: str


class Comparison(_Frozen, Displayable):
    """Two traces aligned stage by stage. Notebook faces (text line, static
    HTML, widget) come from ``Displayable``."""

    labels: tuple[str, str] = ("A", "B")
    questions: tuple[str, str] = ("", "")
    outcomes: tuple[str | None, str | None] = (None, None)
    rows: list[StageRow] = Field(default_factory=list)
    first_divergence: Divergence | None = None
    config: list[ConfigChange] = Field(default_factory=list)

    @property
    def same(self) -> bool:
        """True when no stage differs (the configuration may still differ)."""
        return self.first_divergence is None

    @property
    def differing(self) -> list[str]:
        """Names of the stages that differ, in flow order."""
        return [r.stage for r in self.rows if not r.same]

    def row(self, stage: str) -> StageRow:
        for r in self.rows:
            if r.stage == stage:
                return r
        raise InputError(f"no stage {stage!r} in this comparison; stages: {[r.stage for r in self.rows]}")


# --------------------------------------------------------------- inputs


def _as_trace(obj: object, name: str) -> Trace:
    if isinstance(obj, Trace):
        return obj
    # A Stepper can exist only once selfrag_nb.pipeline is imported; checking
    # sys.modules keeps compare() from importing the whole pipeline for nothing.
    pipeline = sys.modules.get("selfrag_nb.pipeline")
    if pipeline is not None and isinstance(obj, pipeline.Stepper):
        trace = obj.trace
        if isinstance(trace, Trace):
            return trace
    raise InputTypeError(
        f"compare() argument {name} must be a Trace or a Stepper (rag.ask(...) or rag.stepper(...)), "
        f"got {type(obj).__name__}"
    )


def _labels(labels: object) -> tuple[str, str]:
    if isinstance(labels, str | bytes) or not isinstance(labels, Sequence):
        raise InputTypeError(
            f"compare() labels must be a pair of strings like ('rerank off', 'rerank on'), got {labels!r}"
        )
    if len(labels) != 2 or not all(isinstance(x, str) for x in labels):
        raise InputTypeError(f"compare() labels must be two strings, got {labels!r}")
    left, right = (str(x) for x in labels)
    if not left.strip() or not right.strip():
        raise InputError(f"compare() labels must not be blank, got {labels!r}")
    if left == right:
        raise InputError(f"compare() labels must differ, got {left!r} twice")
    return left, right


# ---------------------------------------------------------------- names


def _base_name(source: str, title: str, heading: str) -> str:
    """file › heading (the heading path without the title it repeats), else file › title."""
    file = source.replace("\\", "/").rsplit("/", 1)[-1] or source
    head = heading
    if title and head.startswith(title):
        head = head[len(title) :].lstrip(" >›/")
    extra = head or title
    return f"{file} › {extra}" if extra and extra != file else file


def chunk_names(*traces: Trace) -> dict[str, str]:
    """chunk_id -> a readable name (file › title › heading) for every chunk
    either trace retrieved; two chunks with the same name get "(2)", "(3)"."""
    found: dict[str, str] = {}
    for t in traces:
        for rec in t._all(Retrieval):
            for h in rec.hits:
                found.setdefault(h.chunk_id, _base_name(h.source, h.title, h.heading))
        for g in t._all(Grades):
            for x in g.items:
                if x.source:
                    found.setdefault(x.chunk_id, _base_name(x.source, "", ""))
    seen: dict[str, int] = {}
    out: dict[str, str] = {}
    for cid in sorted(found):  # sorted ids: the same traces always get the same numbers
        base = found[cid]
        seen[base] = seen.get(base, 0) + 1
        out[cid] = base if seen[base] == 1 else f"{base} ({seen[base]})"
    return out


def chunk_docs(*traces: Trace) -> dict[str, dict[str, str]]:
    """chunk_id -> the trust facts of its document, for every retrieved chunk."""
    out: dict[str, dict[str, str]] = {}
    for t in traces:
        for rec in t._all(Retrieval):
            for h in rec.hits:
                doc = ChunkRef.from_hit(h).doc
                if doc:
                    out.setdefault(h.chunk_id, doc)
    return out


class _Names:
    def __init__(self, names: dict[str, str], docs: dict[str, dict[str, str]] | None = None) -> None:
        self.names = names
        self.docs = docs or {}

    def __call__(self, chunk_id: str) -> str:
        return self.names.get(chunk_id, "chunk not in either retrieval")

    def items(self, ids: Sequence[str], other: Sequence[str], *, ordered: bool) -> list[Item]:
        pos = {c: i for i, c in enumerate(other)}
        out = []
        for i, c in enumerate(ids):
            mark: Literal["", "only", "moved"] = ""
            if c not in pos:
                mark = "only"
            elif ordered and pos[c] != i:
                mark = "moved"
            text = f"{i + 1}. {self(c)}" if ordered else self(c)
            out.append(Item(text=text, chunk_id=c, mark=mark, doc=self.docs.get(c, {})))
        return out

    def listing(self, ids: Sequence[str], limit: int = 3) -> str:
        shown = ", ".join(self(c) for c in ids[:limit])
        return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _cut(text: str, n: int = TEXT_LIMIT) -> str:
    return text if len(text) <= n else text[:n] + f"… [{len(text) - n:,} more characters]"


def _short(text: str, n: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


# --------------------------------------------------------------- stages


def _set_change(a: Sequence[str], b: Sequence[str], names: _Names, labels: tuple[str, str]) -> str:
    only_a = [c for c in a if c not in set(b)]
    only_b = [c for c in b if c not in set(a)]
    parts = []
    if only_a:
        parts.append(f"only in {labels[0]}: {names.listing(only_a)}")
    if only_b:
        parts.append(f"only in {labels[1]}: {names.listing(only_b)}")
    return "; ".join(parts)


def _decide(a: Decision, b: Decision, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    def side(d: Decision) -> Side:
        who = d.source + (f" ({d.rule})" if d.rule else "")
        return Side(
            ran=True, summary=f"{'retrieve' if d.retrieve else 'no retrieval'} · by {who}", text=d.reason
        )

    what = ""
    if a.retrieve != b.retrieve:
        yes = labels[0] if a.retrieve else labels[1]
        what = f"{yes} retrieves, {labels[1] if a.retrieve else labels[0]} does not"
    elif (a.source, a.rule) != (b.source, b.rule):
        what = f"decided by {a.source} in {labels[0]}, by {b.source} in {labels[1]}"
    return side(a), side(b), what


def _rewrite(a: Rewrite, b: Rewrite, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    def side(r: Rewrite, other: Rewrite) -> Side:
        items = [
            Item(text=q if i else f"{q} (original)", mark="" if q in other.queries else "only")
            for i, q in enumerate(r.queries)
        ]
        count = f"{len(r.queries)} quer{'y' if len(r.queries) == 1 else 'ies'}"
        return Side(ran=True, summary=count + ("" if r.attempted else " · not rewritten"), items=items)

    what = ""
    if a.queries != b.queries:
        added = [q for q in b.queries if q not in a.queries]
        gone = [q for q in a.queries if q not in b.queries]
        bits = []
        if gone:
            bits.append(f"only in {labels[0]}: " + "; ".join(f'"{_short(q, 60)}"' for q in gone[:2]))
        if added:
            bits.append(f"only in {labels[1]}: " + "; ".join(f'"{_short(q, 60)}"' for q in added[:2]))
        what = f"searched queries differ ({len(a.queries)} vs {len(b.queries)})" + (
            ": " + "; ".join(bits) if bits else ": same queries, other order"
        )
    return side(a, b), side(b, a), what


def _retrieve(a: Retrieval, b: Retrieval, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    ia, ib = [h.chunk_id for h in a.hits], [h.chunk_id for h in b.hits]

    def side(r: Retrieval, ids: list[str], other: list[str]) -> Side:
        kb = f" · kb version {r.kb_version}" if r.kb_version is not None else ""
        return Side(
            ran=True, summary=f"{len(ids)} chunks · {r.mode}{kb}", items=n.items(ids, other, ordered=True)
        )

    what = ""
    if set(ia) != set(ib):
        what = f"retrieved chunks differ ({len(ia)} vs {len(ib)}): " + _set_change(ia, ib, n, labels)
    elif ia != ib:
        what = "same chunks retrieved, in another order"
    return side(a, ia, ib), side(b, ib, ia), what


def _grade(a: Grades, b: Grades, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    sa = {g.chunk_id: g for g in a.items}
    sb = {g.chunk_id: g for g in b.items}

    def side(g: Grades, mine: dict[str, Any], other: dict[str, Any], other_kept: list[str]) -> Side:
        items = []
        for c in g.kept:
            score = mine[c].score if c in mine else None
            mark: Literal["", "only", "changed"] = ""
            if c not in other_kept:
                mark = "only"
            elif c in other and score is not None and other[c].score != score:
                mark = "changed"
            items.append(
                Item(
                    text=n(c) + (f" — {score}" if score is not None else ""),
                    chunk_id=c,
                    mark=mark,
                    doc=n.docs.get(c, {}),
                )
            )
        return Side(
            ran=True, summary=f"{len(g.kept)}/{len(g.items)} kept · cutoff {g.relevance_cutoff}", items=items
        )

    what = ""
    if set(a.kept) != set(b.kept):
        what = f"kept chunks differ ({len(a.kept)} vs {len(b.kept)}): " + _set_change(
            a.kept, b.kept, n, labels
        )
    else:
        moved = [c for c in sa if c in sb and (sa[c].score, sa[c].relevant) != (sb[c].score, sb[c].relevant)]
        if moved:
            c = moved[0]
            what = f"same chunks kept, other grades: {n(c)} scored {sa[c].score} vs {sb[c].score}" + (
                f" (and {len(moved) - 1} more)" if len(moved) > 1 else ""
            )
    return side(a, sa, sb, b.kept), side(b, sb, sa, a.kept), what


def _rerank(a: Rerank, b: Rerank, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    def side(r: Rerank, other: Rerank) -> Side:
        fb = " · fallback: previous order kept" if r.fallback else ""
        return Side(
            ran=True,
            summary=f"{len(r.before)} → {len(r.after)} by {r.reranker or 'unknown reranker'}{fb}",
            items=n.items(r.after, other.after, ordered=True),
            text=r.fallback or "",
        )

    what = ""
    if a.after != b.after:
        first = next((i for i, (x, y) in enumerate(zip(a.after, b.after, strict=False)) if x != y), None)
        if first is None:
            what = f"order agrees but keeps {len(a.after)} vs {len(b.after)} chunks"
        else:
            what = (
                f"order differs from place {first + 1}: {n(a.after[first])} in {labels[0]}, "
                f"{n(b.after[first])} in {labels[1]}"
            )
    elif bool(a.fallback) != bool(b.fallback):
        what = f"the reranker fell back in {labels[0] if a.fallback else labels[1]} only"
    return side(a, b), side(b, a), what


def _assess(a: Assessment, b: Assessment, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    def side(x: Assessment) -> Side:
        items = [Item(text=o) for o in x.options]
        return Side(ran=True, summary=x.action.replace("_", " "), items=items, text=x.reason)

    what = ""
    if a.action != b.action:
        what = (
            f"action {a.action.replace('_', ' ')} in {labels[0]}, {b.action.replace('_', ' ')} in {labels[1]}"
        )
    return side(a), side(b), what


_CITE_RE = re.compile(r"\[\d{1,3}\]")


def _generate(a: Generation, b: Generation, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    ca = [c.chunk_id for c in a.citations]
    cb = [c.chunk_id for c in b.citations]

    def side(g: Generation, mine: list[str], other: list[str]) -> Side:
        items = [
            Item(
                text=f"[{c.marker}] {n(c.chunk_id)}" + ("" if c.valid else " (invalid citation)"),
                chunk_id=c.chunk_id,
                mark="" if c.chunk_id in other else "only",
                doc=n.docs.get(c.chunk_id, {}),
            )
            for c in g.citations
        ]
        cites = f"{len(g.citations)} citation{'s' if len(g.citations) != 1 else ''}"
        return Side(
            ran=True, summary=f"{g.mode} · {cites} · attempt {g.attempt}", items=items, text=_cut(g.answer)
        )

    what = ""
    if a.answer != b.answer:
        what = "the answers differ"
        if set(ca) != set(cb):
            what += " and cite other chunks (" + _set_change(ca, cb, n, labels) + ")"
        elif _CITE_RE.sub("", a.answer) == _CITE_RE.sub("", b.answer):
            what = "same answer text, other citation markers (the evidence was numbered in another order)"
        elif a.mode != b.mode:
            what += f" ({a.mode} vs {b.mode})"
    elif set(ca) != set(cb):
        what = "same answer text, other cited chunks: " + _set_change(ca, cb, n, labels)
    return side(a, ca, cb), side(b, cb, ca), what


_ICON = {"supported": "✓", "partial": "◐", "unsupported": "✗"}


def _verify(a: Support, b: Support, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    va = {c.text: c.verdict for c in a.claims}
    vb = {c.text: c.verdict for c in b.claims}

    def side(s: Support, other: Mapping[str, str]) -> Side:
        items = []
        for c in s.claims:
            mark: Literal["", "only", "changed"] = ""
            if c.text not in other:
                mark = "only"
            elif other[c.text] != c.verdict:
                mark = "changed"
            items.append(Item(text=f"{_ICON[c.verdict]} {c.text} ({c.verdict})", mark=mark))
        counts = [
            f"{sum(c.verdict == v for c in s.claims)} {v}"
            for v in _ICON
            if any(c.verdict == v for c in s.claims)
        ]
        return Side(
            ran=True,
            summary=f"{len(s.claims)} claims: {', '.join(counts) or 'none'} · {s.recommendation}",
            items=items,
        )

    what = ""
    pa = [(c.text, c.verdict) for c in a.claims]
    pb = [(c.text, c.verdict) for c in b.claims]
    if pa != pb:
        changed = [t for t in va if t in vb and va[t] != vb[t]]
        if changed:
            t = changed[0]
            what = f'claim "{_short(t, 60)}" is {va[t]} in {labels[0]}, {vb[t]} in {labels[1]}'
        else:
            what = f"other claims ({len(pa)} vs {len(pb)})"
    return side(a, vb), side(b, va), what


def _usefulness(a: Usefulness, b: Usefulness, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    def side(u: Usefulness) -> Side:
        miss = f" · missing: {_short(u.missing, 60)}" if u.missing else ""
        return Side(ran=True, summary=f"{u.verdict} ({u.score}/100){miss}", text=_cut(u.reason))

    what = ""
    if a.verdict != b.verdict:
        what = f"the answer {USEFULNESS_WORDS[a.verdict]} in {labels[0]}, {USEFULNESS_WORDS[b.verdict]} in {labels[1]}"
    return side(a), side(b), what


def _finish(a: Outcome, b: Outcome, n: _Names, labels: tuple[str, str]) -> tuple[Side, Side, str]:
    def side(o: Outcome) -> Side:
        extra = f" · {len(o.dropped_claims)} claims dropped" if o.dropped_claims else ""
        return Side(ran=True, summary=o.outcome + extra, text=_cut(o.answer))

    what = ""
    if a.outcome != b.outcome:
        what = f"{a.outcome} in {labels[0]}, {b.outcome} in {labels[1]}"
    elif _CITE_RE.sub("", a.answer) == _CITE_RE.sub("", b.answer) and a.answer != b.answer:
        what = f"both {a.outcome}; same final answer text, other citation markers"
    elif a.answer != b.answer:
        what = f"both {a.outcome}, with different final answers"
    return side(a), side(b), what


_STAGES: dict[str, tuple[type, Any]] = {
    "decide": (Decision, _decide),
    "rewrite": (Rewrite, _rewrite),
    "retrieve": (Retrieval, _retrieve),
    "grade": (Grades, _grade),
    "rerank": (Rerank, _rerank),
    "assess": (Assessment, _assess),
    "generate": (Generation, _generate),
    "verify": (Support, _verify),
    "usefulness": (Usefulness, _usefulness),
    "finish": (Outcome, _finish),
}


def _one_sided(rec: Any, fn: Any, n: _Names, labels: tuple[str, str]) -> Side:
    # The side that ran, summarised against an empty stand-in of itself: it is
    # its own "other", so nothing on it is marked.
    side: Side = fn(rec, rec, n, labels)[0]
    return side


# --------------------------------------------------------------- config


def _show(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)


def _flat(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flat(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def config_changes(a: Trace, b: Trace) -> list[ConfigChange]:
    """The inputs and config snapshot entries that differ, one per leaf key."""
    fa: dict[str, Any] = {}
    fb: dict[str, Any] = {}
    for t, flat in ((a, fa), (b, fb)):
        flat["question"] = t.question
        flat["user"] = t.user.id + (f" ({', '.join(t.user.roles)})" if t.user.roles else "")
        if t.user.tenant:
            flat["user.tenant"] = t.user.tenant
        flat["history"] = f"{len(t.history)} turns" if t.history else "none"
        _flat("", t.config.model_dump(mode="json"), flat)
    out = []
    for key in dict.fromkeys([*fa, *fb]):
        va, vb = fa.get(key, "—"), fb.get(key, "—")
        if va != vb:
            out.append(ConfigChange(key=key, left=_cut(_show(va), 2_000), right=_cut(_show(vb), 2_000)))
    if a.history != b.history and not any(c.key == "history" for c in out):
        out.append(
            ConfigChange(key="history", left="same length, other turns", right="same length, other turns")
        )
    return out


# ----------------------------------------------------------------- main


def compare(a: object, b: object, labels: Sequence[str] = ("A", "B")) -> Comparison:
    """Align two traces (or two steppers' traces) stage by stage, in flow
    order, and name the first stage where they diverge.

    ``labels`` names the two sides in every view, e.g. ``("rerank off", "rerank on")``.
    Raises InputTypeError when ``a`` or ``b`` is not a Trace or a Stepper."""
    ta, tb = _as_trace(a, "a"), _as_trace(b, "b")
    names = _labels(labels)
    n = _Names(chunk_names(ta, tb), chunk_docs(ta, tb))
    rows: list[StageRow] = []
    first: Divergence | None = None
    for step in FLOW:
        cls, fn = _STAGES[step.name]
        ra, rb = ta._latest(cls), tb._latest(cls)
        kind = KINDS[step.name]
        if ra is None and rb is None:
            left = right = Side(ran=False)
            what = ""
        elif ra is None or rb is None:
            ran, missing = (names[0], names[1]) if ra is not None else (names[1], names[0])
            did = _one_sided(ra if ra is not None else rb, fn, n, names)
            left, right = (did, Side(ran=False)) if ra is not None else (Side(ran=False), did)
            what = f"{step.title} ran in {ran} only ({missing} skipped it)"
        else:
            left, right, what = fn(ra, rb, n, names)
        row = StageRow(
            stage=step.name, title=step.title, kind=kind, same=not what, what=what, left=left, right=right
        )
        rows.append(row)
        if first is None and not row.same:
            first = Divergence(stage=step.name, title=step.title, kind=kind, what=what)
    return Comparison(
        labels=names,
        questions=(ta.question, tb.question),
        outcomes=(ta.outcome, tb.outcome),
        rows=rows,
        first_divergence=first,
        config=config_changes(ta, tb),
    )
