"""The assess role: ANSWER, CLARIFY or REFUSE from what the evidence covers.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                                               ^^^^^^ here: imports lexical,
                                                                      question, relevance, evidence.

    AssessInputs -> effective question (question.effective_question)
                 -> each evidence graded like the grade role (relevance.grade: own
                    score, not the similarity) -> none covers: REFUSE
                 -> a thing the question names (subject.subject_names) that no
                    covering evidence mentions: REFUSE, naming it
                 -> two or more names of one clause ("CFFI on Windows") that no
                    one covering evidence mentions together: REFUSE, naming
                    them (names joined by and / or / vs are asked one by one)
                 -> qualifiers differ (plan/product/version metadata, or plan
                    names in the text): CLARIFY
                 -> same quantity, different values: conflict
                      -> status / effective date / "supersedes" say which
                         applies: ANSWER + applies
                      -> else CLARIFY (qualifiers) or REFUSE
                 -> superseded and current evidence: ANSWER + applies
                 -> ANSWER

Heuristics and thresholds: ``docs/offline_model.md`` (assess).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise

from selfrag_nb.llm.offline.evidence import evidence_label, evidence_status
from selfrag_nb.llm.offline.lexical import (
    bag,
    coverage,
    disagree,
    exact_terms,
    looks_like_injection,
    quantities,
    sentences,
    shorten,
    terms,
)
from selfrag_nb.llm.offline.question import answer_language, effective_question
from selfrag_nb.llm.offline.relevance import grade
from selfrag_nb.llm.offline.subject import mentions, subject_names
from selfrag_nb.llm.schemas import AssessInputs, AssessOut, Evidence, GradeInputs
from selfrag_nb.text import normalize_key, tokenize

__all__ = ["assess"]


_QUALIFIER_KEYS = ("plan", "product", "version", "tier", "edition")
_SUPERSEDES_RE = re.compile(r"\b(?:replaces|supersedes|overrides)\b|取代|替代|代替|废止", re.IGNORECASE)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _grade_score(question: str, ev: Evidence) -> int:
    # Same rule as the grade role, so assess and grade never disagree.
    out = grade(
        GradeInputs(
            question=question,
            text=ev.text,
            title=ev.title,
            heading=ev.heading,
            source=ev.source,
            metadata=ev.metadata,
        )
    )
    return out.relevanceScore


@dataclass(frozen=True)
class _Covering:
    ev: Evidence
    score: int
    sentence: str


def _best_sentence_of(qterms: dict[str, float], ev: Evidence) -> str:
    best, best_score = "", -1.0
    header = bag(f"{ev.title} {ev.heading}")
    for sent in sentences(ev.text):
        if looks_like_injection(sent):
            continue
        score, _ = coverage(qterms, bag(sent), header)
        if score > best_score:
            best, best_score = sent, score
    return best


def _meta_values(ev: Evidence, key: str) -> list[str]:
    for k, v in ev.metadata.items():
        if k.lower() == key:
            values = v if isinstance(v, list) else [v]
            return [str(x).strip() for x in values if str(x).strip()]
    return []


def _mentions(asked: str, value: str) -> bool:
    value = normalize_key(value)
    if not value:
        return False
    if value.isascii():
        return re.search(rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])", asked) is not None
    return value in asked


_PLAN_EN_RE = re.compile(r"\b([A-Z][\w\-]*)\s+(plan|tier|edition)s?\b")
_PLAN_ZH_RE = re.compile(r"([A-Za-z][\w\-]*|[\u4e00-\u9fff]{2,3}?)\s*(套餐|版)")


_HEADING_PLAN_RE = re.compile(r"^\s*([A-Z][\w\-]*)\s+(plan|tier|edition)\s*$", re.IGNORECASE)


def _heading_plan(ev: Evidence) -> str:
    """ "Free plan" when the chunk's own (last) heading names a plan-like
    scope: everything in that section is about that plan."""
    last = ev.heading.split(">")[-1] if ev.heading else ""
    m = _HEADING_PLAN_RE.match(last)
    return f"{m.group(1)} {m.group(2).lower()}" if m else ""


def _plan_names(text: str) -> set[str]:
    names = {m.group(0).strip() for m in _PLAN_EN_RE.finditer(text)}
    names |= {m.group(0).strip() for m in _PLAN_ZH_RE.finditer(text)}
    return {normalize_key(n) for n in names}


def _plans_in(sentence: str, ev: Evidence) -> set[str]:
    """Plan-like names a sentence is scoped to: named in it, else its section's heading."""
    names = _plan_names(sentence)
    if not names and _heading_plan(ev):
        names.add(normalize_key(_heading_plan(ev)))
    return names


def _text_qualifiers(qterms: dict[str, float], covering: list[_Covering]) -> list[str]:
    """Plan-like names ("Free plan", "Pro plan", "企业版") that the covering text
    gives different numbers for, in sentences about the question. A section
    headed by a plan name ("## Pro plan") scopes all of its sentences."""
    numbers: dict[str, set[str]] = {}
    order: list[str] = []

    def note(name: str, nums: frozenset[str]) -> None:
        if name not in numbers:
            order.append(name)
        numbers.setdefault(name, set()).update(nums)

    for c in covering:
        scope = _heading_plan(c.ev)
        header = bag(f"{c.ev.title} {c.ev.heading}")
        for sent in sentences(c.ev.text):
            if looks_like_injection(sent):
                continue
            cov, _ = coverage(qterms, bag(sent), header if scope else None)
            if cov < 0.3:
                continue
            marks = [(m.start(), m.group(0).strip()) for m in _PLAN_EN_RE.finditer(sent)]
            marks += [(m.start(), m.group(0).strip()) for m in _PLAN_ZH_RE.finditer(sent)]
            marks.sort()
            if not marks and scope:
                nums = exact_terms(sent).numbers
                if nums:
                    note(scope, nums)
                continue
            for i, (pos, name) in enumerate(marks):
                end = marks[i + 1][0] if i + 1 < len(marks) else len(sent)
                nums = exact_terms(sent[pos:end]).numbers
                if nums:
                    note(name, nums)
    if len(order) < 2:
        return []
    distinct = {frozenset(numbers[n]) for n in order}
    return order if len(distinct) > 1 else []


#: A sentence takes part in conflict detection when it covers this share of the question.
CONFLICT_TOPIC = 0.4
#: Two sentences state the same fact when this share of one's words (numbers
#: aside) is in the other: "up to 25 MB" per attachment vs "limited to 10 MB".
CONFLICT_SAME = 0.6


@dataclass(frozen=True)
class _Fact:
    """A question-relevant sentence that states quantities."""

    cov: _Covering
    sentence: str
    qty: dict[str, set[str]]
    keys: dict[str, float]
    bag: Counter[str]
    plans: frozenset[str]


def _facts(qterms: dict[str, float], c: _Covering) -> list[_Fact]:
    header = bag(f"{c.ev.title} {c.ev.heading}")
    out: list[_Fact] = []
    for sent in sentences(c.ev.text):
        if looks_like_injection(sent):
            continue
        qty = quantities(sent)
        if not qty or coverage(qterms, bag(sent), header)[0] < CONFLICT_TOPIC:
            continue
        keys = {k: w for k, w in terms(sent).items() if not any(ch.isdigit() for ch in k)}
        out.append(_Fact(c, sent, qty, keys, bag(sent), frozenset(_plans_in(sent, c.ev))))
    return out


def _same_fact(a: _Fact, b: _Fact) -> bool:
    """Different numbers for one unit only conflict when both sentences speak
    about the same thing (shared words) and for the same plan (if any)."""
    if a.plans and b.plans and not (a.plans & b.plans):
        return False

    def share(x: _Fact, y: _Fact) -> float:
        total = sum(x.keys.values())
        return sum(w for k, w in x.keys.items() if k in y.bag) / total if total else 0.0

    return max(share(a, b), share(b, a)) >= CONFLICT_SAME


def _refers_to(meta_value: object, ev: Evidence) -> bool:
    """A ``supersedes`` / ``superseded_by`` value naming ``ev``'s source file."""
    if not isinstance(meta_value, str | list):
        return False
    values = meta_value if isinstance(meta_value, list) else [meta_value]
    src = ev.source.split("#")[0].strip("/")
    for raw in values:
        v = str(raw).strip().strip("/")
        if v and src and (src == v or src.endswith("/" + v) or v.endswith("/" + src)):
            return True
    return False


def _answers_differ(key: str, covering: list[_Covering]) -> bool:
    """True when evidence for different ``key`` values gives different numbers
    in its best sentence: only then does the qualifier change the answer."""
    by_value: dict[str, set[str]] = {}
    for c in covering:
        nums = set(exact_terms(c.sentence).numbers)
        for v in _meta_values(c.ev, key):
            by_value.setdefault(v, set()).update(nums)
    distinct = {frozenset(n) for n in by_value.values() if n}
    return len(distinct) > 1


def _which_applies(a: _Covering, b: _Covering) -> tuple[_Covering, str] | None:
    """The evidence that applies when two disagree, and why; None when the
    documents do not say."""
    for win, lose in ((a, b), (b, a)):
        if _refers_to(win.ev.metadata.get("supersedes"), lose.ev) or _refers_to(
            lose.ev.metadata.get("superseded_by"), win.ev
        ):
            return win, f"{evidence_label(win.ev)} declares that it supersedes {evidence_label(lose.ev)}"
    sa, sb = evidence_status(a.ev), evidence_status(b.ev)
    if sa != sb and "superseded" in (sa, sb):
        win = b if sa == "superseded" else a
        lose = a if win is b else b
        return win, f"{evidence_label(lose.ev)} is marked superseded"
    ea, eb = str(a.ev.metadata.get("effective", "")), str(b.ev.metadata.get("effective", ""))
    if _DATE_RE.match(ea) and _DATE_RE.match(eb) and ea[:10] != eb[:10]:
        win = a if ea[:10] > eb[:10] else b
        return win, f"{evidence_label(win.ev)} has the later effective date ({max(ea[:10], eb[:10])})"
    ra, rb = bool(_SUPERSEDES_RE.search(a.ev.text)), bool(_SUPERSEDES_RE.search(b.ev.text))
    if ra != rb:
        win = a if ra else b
        return win, f"{evidence_label(win.ev)} states that it replaces the earlier rule"
    return None


#: What joins names asked about one by one: "X and Y", "X or Y", "X vs Y", "X, Y".
_COORDINATED_RE = re.compile(
    r"^\s*(?:,\s*(?:and|or)?|and|or|nor|vs\.?|versus|&|/|与|和|或|及|跟|还是)\s*$", re.IGNORECASE
)


def _named_apart(names: list[str], question: str, covering: list[_Covering]) -> list[str]:
    """The question's names when no covering passage mentions them all, though
    each is mentioned by some passage; [] when one passage holds them
    together, when there are fewer than two, or when two are coordinated."""
    if len(names) < 2:
        return []
    spans = sorted((question.find(n), question.find(n) + len(n)) for n in names if question.find(n) >= 0)
    if any(_COORDINATED_RE.match(question[a_end:b_start]) for (_, a_end), (b_start, _) in pairwise(spans)):
        return []
    if any(all(mentions(n, c.ev) for n in names) for c in covering):
        return []
    return sorted(names, key=question.find)


def assess(inputs: AssessInputs) -> AssessOut:
    """ANSWER, CLARIFY or REFUSE from what the evidence covers (never from
    similarity scores alone)."""
    lang = answer_language(inputs.question)
    zh = lang == "zh"
    question = effective_question(inputs.question, inputs.history)
    qterms = terms(question)
    if not inputs.evidence:
        return AssessOut(
            action="REFUSE",
            reason="现有资料中没有涉及这个问题的内容。"
            if zh
            else "No retrieved material covers this question.",
        )
    covering: list[_Covering] = []
    for ev in inputs.evidence:
        score = _grade_score(question, ev)
        if score >= 50:
            covering.append(_Covering(ev, score, _best_sentence_of(qterms, ev)))
    if not covering:
        missing = [t for t in tokenize(inputs.question) if terms(t)]
        topic = "、".join(dict.fromkeys(missing)) if zh else ", ".join(dict.fromkeys(missing))
        return AssessOut(
            action="REFUSE",
            reason=(
                f"现有资料没有覆盖这个问题（{topic}），无法确认答案。"
                if zh
                else f"The retrieved material does not cover this question ({topic}), so it cannot be confirmed."
            ),
        )

    # The grades' gaps, honoured: covering chunks that never name what the
    # question asks about ("Sorted Containers", "idna") cannot answer it.
    names = subject_names(question, inputs.evidence)
    unnamed = [n for n in names if not any(mentions(n, c.ev) for c in covering)]
    if unnamed:
        which = "、".join(unnamed) if zh else ", ".join(unnamed)
        return AssessOut(
            action="REFUSE",
            reason=(
                f"检索到的资料没有提到问题所问的对象（{which}），无法确认答案。"
                if zh
                else f"No retrieved passage mentions what the question asks about ({which}), so it cannot be confirmed."
            ),
        )

    # Names asked about in one clause are one fact about them together ("CFFI
    # on Windows"): a passage on multidict's Windows wheels and another on
    # argon2's CFFI build each hold one name, and neither answers. Names
    # joined by "and", "or", "vs" are asked about one by one (a comparison).
    apart = _named_apart(names, question, covering)
    if apart:
        which = "、".join(apart) if zh else ", ".join(apart[:-1]) + " and " + apart[-1]
        return AssessOut(
            action="REFUSE",
            reason=(
                f"没有一段资料同时提到问题所问的对象（{which}），无法确认答案。"
                if zh
                else f"No retrieved passage mentions {which} together, as the question asks, so it cannot be confirmed."
            ),
        )

    asked = normalize_key(" ".join([question, *(m.content for m in inputs.history if m.role == "user")]))
    # Qualifiers by metadata: several plans/products/versions, none named.
    for key in _QUALIFIER_KEYS:
        values: list[str] = []
        for c in covering:
            for v in _meta_values(c.ev, key):
                if v not in values:
                    values.append(v)
        if len(values) < 2:
            continue
        named = [v for v in values if _mentions(asked, v)]
        if not named and _answers_differ(key, covering):
            return AssessOut(
                action="CLARIFY",
                reason=(
                    f"资料按{key}给出不同答案（{'、'.join(values)}），请说明您指的是哪一个。"
                    if zh
                    else f"The documents answer differently per {key} ({', '.join(values)}); which one do you mean?"
                ),
                options=values,
            )
        covering = [
            c
            for c in covering
            if not _meta_values(c.ev, key) or any(_mentions(asked, v) for v in _meta_values(c.ev, key))
        ] or covering
    # Qualifiers by text: "Free plan ... 100, Pro plan ... 1,000".
    plans = _text_qualifiers(qterms, covering)
    if plans and not any(_mentions(asked, p) or _mentions(asked, p.split()[0]) for p in plans):
        return AssessOut(
            action="CLARIFY",
            reason=(
                f"资料对不同套餐给出不同数值（{'、'.join(plans)}），请说明您指的是哪一个。"
                if zh
                else f"The documents give different values for {', '.join(plans)}; which one do you mean?"
            ),
            options=plans,
        )

    # Conflicts: two sources give different numbers for the same unit.
    resolved: list[tuple[_Covering, _Covering, _Covering, str]] = []
    unresolved: list[tuple[_Covering, _Covering]] = []
    asked_plans = _plan_names(question)
    facts = [
        f
        for c in covering
        for f in _facts(qterms, c)
        # A fact about another plan than the one asked is not a rival answer.
        if not (asked_plans and f.plans and not (f.plans & asked_plans))
    ]
    seen_pairs: set[tuple[str, str]] = set()
    for i, fa in enumerate(facts):
        for fb in facts[i + 1 :]:
            a, b = fa.cov, fb.cov
            if a.ev.chunk_id == b.ev.chunk_id or (a.ev.source == b.ev.source and a.ev.source):
                continue
            if (a.ev.chunk_id, b.ev.chunk_id) in seen_pairs:
                continue
            if not disagree(fa.qty, fb.qty) or not _same_fact(fa, fb):
                continue
            seen_pairs.add((a.ev.chunk_id, b.ev.chunk_id))
            a, b = _Covering(a.ev, a.score, fa.sentence), _Covering(b.ev, b.score, fb.sentence)
            verdict = _which_applies(a, b)
            if verdict is None:
                unresolved.append((a, b))
            else:
                resolved.append((a, b, verdict[0], verdict[1]))
    if unresolved:
        a, b = unresolved[0]
        said = f"{evidence_label(a.ev)}: “{shorten(a.sentence, 120)}” / {evidence_label(b.ev)}: “{shorten(b.sentence, 120)}”"
        options: list[str] = []
        for key in _QUALIFIER_KEYS:
            va, vb = _meta_values(a.ev, key), _meta_values(b.ev, key)
            if va and vb and va != vb:
                options = [*va, *(v for v in vb if v not in va)]
                break
        conflict = f"cannot confirm which applies: {said}"
        if options:
            return AssessOut(
                action="CLARIFY",
                reason=(
                    "资料之间存在冲突，取决于具体适用范围，请补充说明。"
                    if zh
                    else "The documents disagree depending on scope; please say which applies to you."
                ),
                options=options,
                conflict=conflict,
            )
        return AssessOut(
            action="REFUSE",
            reason=(
                "资料之间相互矛盾，且没有说明哪一份当前适用，无法确认。"
                if zh
                else "The documents disagree and do not say which one currently applies, so this cannot be confirmed."
            ),
            conflict=conflict,
        )
    cited = ", ".join(f"[{c.ev.index}]" for c in covering)
    if resolved:
        a, b, win, why = resolved[0]
        lose = a if win is b else b
        return AssessOut(
            action="ANSWER",
            reason=(
                f"资料{cited}覆盖了问题；存在新旧冲突，以{evidence_label(win.ev)}为准。"
                if zh
                else f"{cited} cover the question; they conflict, and {evidence_label(win.ev)} applies."
            ),
            conflict=(
                f"{evidence_label(lose.ev)}: “{shorten(lose.sentence, 120)}” vs "
                f"{evidence_label(win.ev)}: “{shorten(win.sentence, 120)}”; {why}"
            ),
            applies=evidence_label(win.ev),
        )
    current = [c for c in covering if evidence_status(c.ev) != "superseded"]
    stale = [c for c in covering if evidence_status(c.ev) == "superseded"]
    if stale and current:
        return AssessOut(
            action="ANSWER",
            reason=(f"资料{cited}覆盖了问题。" if zh else f"{cited} cover the question's key terms."),
            conflict=f"{', '.join(evidence_label(c.ev) for c in stale)} superseded; "
            f"{', '.join(evidence_label(c.ev) for c in current)} current",
            applies=evidence_label(current[0].ev),
        )
    return AssessOut(
        action="ANSWER",
        reason=(f"资料{cited}覆盖了问题。" if zh else f"{cited} cover the question's key terms."),
    )
