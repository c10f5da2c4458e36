"""The offline model's answer side: assess, generate, verify.

    AssessInputs   -> each evidence graded like the grade role (own score, not the
                      similarity) -> none covers: REFUSE
                                 -> qualifiers differ (plan/product/version): CLARIFY
                                 -> same quantity, different values: conflict
                                      -> status / effective date / "supersedes" say
                                         which applies: ANSWER + applies
                                      -> else CLARIFY (qualifiers) or REFUSE
                                 -> ANSWER
    GenerateInputs -> grounded/strict: best-covering sentences quoted, cited [n],
                      injections never quoted, superseded evidence last;
                      direct: greeting / thanks / arithmetic / "I don't know"
    VerifyInputs   -> claims (sentences, markers and disclaimer removed)
                      x evidence sentences: weighted overlap, number/ID agreement,
                      negation agreement -> supported / partial / unsupported
                      -> overallConfidence, ACCEPT / ADD_DISCLAIMER / REGENERATE

Heuristics and thresholds: ``docs/offline_model.md``.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

from selfrag_nb.llm.offline_rules import (
    arithmetic,
    bag,
    coverage,
    disagree,
    exact_terms,
    format_number,
    has_negation,
    looks_like_injection,
    quantities,
    sentences,
    shorten,
    social_kind,
    stem,
    strip_citations,
    term_weight,
    terms,
)
from selfrag_nb.llm.schemas import (
    AssessInputs,
    AssessOut,
    ClaimVerdict,
    Evidence,
    EvidenceQuote,
    GenerateInputs,
    GenerateOut,
    GradeInputs,
    Message,
    RewriteInputs,
    SupportOut,
    VerifyInputs,
)
from selfrag_nb.text import detect_language, is_cjk, normalize_key, tokenize

__all__ = ["NO_INFO", "assess", "generate", "verify"]

#: The strict mode's answer when nothing qualifies (first article's wording).
NO_INFO = {"en": "The documents contain no relevant information.", "zh": "文档中没有相关信息"}
#: The grounded mode's answer when no sentence covers the question.
NOT_FOUND = {
    "en": "The documents found do not contain the answer to this question.",
    "zh": "找到的文档中没有这个问题的答案。",
}
_REFUSALS = frozenset(normalize_key(t) for t in (*NO_INFO.values(), *NOT_FOUND.values()))

_QUALIFIER_KEYS = ("plan", "product", "version", "tier", "edition")
_SUPERSEDED = frozenset(
    {"superseded", "deprecated", "archived", "obsolete", "outdated", "inactive", "retired"}
)
_CURRENT = frozenset({"current", "active", "effective", "published", "latest", "live"})
_SUPERSEDES_RE = re.compile(r"\b(?:replaces|supersedes|overrides)\b|取代|替代|代替|废止", re.IGNORECASE)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _lang(question: str) -> str:
    return "zh" if detect_language(question) == "zh" else "en"


def effective_question(question: str, history: list[Message]) -> str:
    """The question with a follow-up's reference resolved from the history
    ("Does it include SSO?" -> "Does Pro plan include SSO?"), by the same rule
    as the rewrite role; the question itself when it stands on its own."""
    if not history:
        return question
    from selfrag_nb.llm.offline import is_follow_up, rewrite

    if not is_follow_up(question, history):
        return question
    out = rewrite(RewriteInputs(question=question, history=history, max_rewrites=1))
    return out.rewrites[0] if out.rewrites else question


def _grade_score(question: str, ev: Evidence) -> int:
    # Same rule as the grade role, so assess and grade never disagree.
    from selfrag_nb.llm.offline import grade

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


def _status(ev: Evidence) -> str:
    """ "superseded", "current" or "" from the metadata (and a "supersedes" line)."""
    value = str(ev.metadata.get("status", "")).strip().lower()
    if value in _SUPERSEDED:
        return "superseded"
    if value in _CURRENT:
        return "current"
    return ""


def _label(ev: Evidence) -> str:
    name = ev.title or ev.source or ev.chunk_id
    return f"[{ev.index}] {name}"


# ----------------------------------------------------------------- assess


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
            return win, f"{_label(win.ev)} declares that it supersedes {_label(lose.ev)}"
    sa, sb = _status(a.ev), _status(b.ev)
    if sa != sb and "superseded" in (sa, sb):
        win = b if sa == "superseded" else a
        lose = a if win is b else b
        return win, f"{_label(lose.ev)} is marked superseded"
    ea, eb = str(a.ev.metadata.get("effective", "")), str(b.ev.metadata.get("effective", ""))
    if _DATE_RE.match(ea) and _DATE_RE.match(eb) and ea[:10] != eb[:10]:
        win = a if ea[:10] > eb[:10] else b
        return win, f"{_label(win.ev)} has the later effective date ({max(ea[:10], eb[:10])})"
    ra, rb = bool(_SUPERSEDES_RE.search(a.ev.text)), bool(_SUPERSEDES_RE.search(b.ev.text))
    if ra != rb:
        win = a if ra else b
        return win, f"{_label(win.ev)} states that it replaces the earlier rule"
    return None


def assess(inputs: AssessInputs) -> AssessOut:
    """ANSWER, CLARIFY or REFUSE from what the evidence covers (never from
    similarity scores alone)."""
    lang = _lang(inputs.question)
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
        said = f"{_label(a.ev)}: “{shorten(a.sentence, 120)}” / {_label(b.ev)}: “{shorten(b.sentence, 120)}”"
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
                f"资料{cited}覆盖了问题；存在新旧冲突，以{_label(win.ev)}为准。"
                if zh
                else f"{cited} cover the question; they conflict, and {_label(win.ev)} applies."
            ),
            conflict=(
                f"{_label(lose.ev)}: “{shorten(lose.sentence, 120)}” vs "
                f"{_label(win.ev)}: “{shorten(win.sentence, 120)}”; {why}"
            ),
            applies=_label(win.ev),
        )
    current = [c for c in covering if _status(c.ev) != "superseded"]
    stale = [c for c in covering if _status(c.ev) == "superseded"]
    if stale and current:
        return AssessOut(
            action="ANSWER",
            reason=(f"资料{cited}覆盖了问题。" if zh else f"{cited} cover the question's key terms."),
            conflict=f"{', '.join(_label(c.ev) for c in stale)} superseded; "
            f"{', '.join(_label(c.ev) for c in current)} current",
            applies=_label(current[0].ev),
        )
    return AssessOut(
        action="ANSWER",
        reason=(f"资料{cited}覆盖了问题。" if zh else f"{cited} cover the question's key terms."),
    )


# --------------------------------------------------------------- generate


@dataclass(frozen=True)
class _Candidate:
    score: float
    order: int
    index: int
    text: str
    keys: frozenset[str]
    #: The chunk's heading is about the question (see ``_heading_on_topic``).
    on_topic: bool = False


def _similar(sentence: str, claims: list[str]) -> bool:
    sb = bag(sentence)
    for claim in claims:
        cterms = terms(strip_citations(claim)[0])
        if cterms and coverage(cterms, sb)[0] >= 0.8:
            return True
    return False


def _direct(question: str, lang: str) -> str:
    zh = lang == "zh"
    kind, rest = social_kind(question)
    parts: list[str] = []
    canned = {
        "greeting": ("Hello! How can I help you today?", "你好！有什么可以帮你的吗？"),
        "thanks": ("You're welcome!", "不客气！"),
        "farewell": ("Goodbye, and have a nice day!", "再见，祝你愉快！"),
        "smalltalk": (
            "I'm doing well, thanks for asking. How can I help?",
            "我很好，谢谢关心。有什么可以帮你的吗？",
        ),
        "identity": (
            "I'm an assistant that answers questions from this knowledge base and shows how each answer was checked.",
            "我是一个基于知识库回答问题的助手，并会展示每个答案的核对过程。",
        ),
        "ack": ("Great. Let me know if you have another question.", "好的，如果还有其他问题请告诉我。"),
    }
    if kind is not None:
        parts.append(canned[kind][1 if zh else 0])
    text = rest if kind is not None else question
    if text:
        calc = arithmetic(text)
        if calc is not None and calc.value is not None:
            value = format_number(calc.value)
            parts.append(f"{calc.expression} = {value}。" if zh else f"{calc.expression} = {value}.")
        elif calc is not None:
            parts.append(f"无法计算：{calc.problem}。" if zh else f"That cannot be computed: {calc.problem}.")
        else:
            parts.append(
                "不查阅资料的话，我无法可靠地回答这个问题，也不想猜测。"
                if zh
                else "I can't answer that reliably without the knowledge base, and I won't guess."
            )
    return " ".join(parts) if not zh else "".join(parts)


#: The question asks for an amount, a duration or a limit: a sentence that
#: states a number is more likely the answer than one that only names the topic.
_QUANTITY_Q_RE = re.compile(
    r"\bhow (?:many|much|long|often|fast|soon|big|large|quickly)\b|\b(?:maximum|minimum|max|min|limits?|"
    r"size|prices?|costs?|fees?|rates?|window|period|duration|percentage|number of|uptime|credit)\b|"
    r"多少|多久|几[个天次]|多大|上限|期限|价格|费用",
    re.IGNORECASE,
)
#: The question asks for a date.
_DATE_Q_RE = re.compile(r"\bwhen\b|\bdates?\b|\bdeadline\b|什么时候|何时|日期|哪天", re.IGNORECASE)
_DATE_RE_ANY = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b|"
    r"\d{4}年\d{1,2}月",
    re.IGNORECASE,
)
#: Score bonuses: the sentence has what the question's type asks for; the
#: question is negative and so is the sentence; share of the sentence that is
#: about the question (prefers the precise sentence among equal covers).
ANSWER_TYPE_BONUS = 0.15
NEGATION_BONUS = 0.1
PRECISION_BONUS = 0.05
#: The section's own heading is what the question asks about ("## Refund window").
HEADING_BONUS = 0.2
#: Per question word pair found as a pair in the sentence ("below 95%"), at most 3.
PHRASE_BONUS = 0.05


def _pairs(text: str) -> set[tuple[str, str]]:
    """Adjacent word pairs (stemmed, numbers normalised), not both stopwords."""
    keys: list[str] = []
    for tok in tokenize(text):
        nums = sorted(exact_terms(tok).numbers)
        keys.append(nums[0] if nums else stem(tok))
    return {
        (a, b) for a, b in itertools.pairwise(keys) if a != b and (term_weight(a) > 0 or term_weight(b) > 0)
    }


def _heading_on_topic(ev: Evidence, qbag: Counter[str]) -> float:
    """Share (0..1) of the chunk's own (last) heading, or its title when it has
    none, made of question words; 0 below one half. "## Refund window" is
    entirely about "What is the refund window ...?"."""
    last = (ev.heading.split(">")[-1] if ev.heading else "") or ev.title
    words = terms(last)
    total = sum(words.values())
    if total < 2.0:
        return 0.0
    share = sum(w for k, w in words.items() if k in qbag) / total
    return share if share >= 0.5 else 0.0


#: "Which X ...?" asks for names: a sentence naming several things is likelier the answer.
_WHICH_RE = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w\-]+\s+){0,2}?[\w\-]+s\s+(?:are|were|do|can)\b|^\s*哪些", re.IGNORECASE
)
_NAMES_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z0-9]+")
#: Factor for a sentence in another language than the question.
OTHER_LANGUAGE = 0.8
_TABLE_SEP_RE = re.compile(r"^\s*\|?\s*:?-{3,}")


def _table_headers(text: str) -> set[str]:
    """Markdown table header rows (the line before a ``|---|`` separator): they
    name columns and state nothing, so they are never quoted alone."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return {
        " ".join(lines[i - 1].split())
        for i, ln in enumerate(lines)
        if i > 0 and _TABLE_SEP_RE.match(ln) and lines[i - 1].startswith("|")
    }


def _candidates(inputs: GenerateInputs, question: str) -> list[_Candidate]:
    """Every quotable evidence sentence with its score for ``question``, best first."""
    qterms = terms(question)
    qexact = exact_terms(question).all
    qbag = bag(question)
    qpairs = _pairs(question)
    wants_number = bool(_QUANTITY_Q_RE.search(question))
    wants_date = bool(_DATE_Q_RE.search(question))
    negative_q = has_negation(question)
    wants_names = bool(_WHICH_RE.match(question))
    lang = _lang(question)
    any_current = any(_status(e) != "superseded" for e in inputs.evidence)
    out: list[_Candidate] = []
    order = 0
    for ev in inputs.evidence:
        header = bag(f"{ev.title} {ev.heading}")
        stale = _status(ev) == "superseded" and any_current
        heads = _table_headers(ev.text)
        topic = HEADING_BONUS * _heading_on_topic(ev, qbag)
        for sent in sentences(ev.text):
            order += 1
            if looks_like_injection(sent) or (inputs.avoid and _similar(sent, inputs.avoid)):
                continue
            # A lead-in ("... you can claim a credit:") or a column header says
            # nothing by itself; the items that follow are candidates of their own.
            if sent.rstrip().endswith((":", "：")) or " ".join(sent.split()) in heads:
                continue
            sb = bag(sent)
            # The heading lends its words, but a sentence must carry most of the match itself.
            alone, _ = coverage(qterms, sb)
            boosted, _ = coverage(qterms, sb, header)
            if alone <= 0 and not (qexact & exact_terms(sent).all) and sum(terms(sent).values()) < 2.0:
                continue  # says nothing by itself and shares nothing with the question ("Yes.")
            score = 0.5 * alone + 0.5 * boosted + topic
            score += PHRASE_BONUS * min(3, len(qpairs & _pairs(sent)))
            sx = exact_terms(sent)
            score += 0.1 * len(qexact & sx.all)
            if wants_number and (sx.numbers or quantities(sent)):
                score += ANSWER_TYPE_BONUS
            if wants_date and _DATE_RE_ANY.search(sent):
                score += ANSWER_TYPE_BONUS
            if negative_q and has_negation(sent):
                score += NEGATION_BONUS
            if wants_names and len(_NAMES_RE.findall(sent)) >= 2:
                score += ANSWER_TYPE_BONUS
            if (detect_language(sent) == "zh") != (lang == "zh"):
                score *= OTHER_LANGUAGE  # the user's language first, when both say it
            sterms = terms(sent)
            if sterms:
                score += PRECISION_BONUS * coverage(sterms, qbag + header)[0]
            if stale:
                score *= 0.6
            keys = frozenset(k for k in qterms if k in sb)
            out.append(_Candidate(score, order, ev.index, sent, keys, topic > 0))
    out.sort(key=lambda c: (-c.score, c.order))
    return out


def generate(inputs: GenerateInputs) -> GenerateOut:
    """Grounded/strict: 1-3 quoted evidence sentences, each cited [n]; direct:
    small talk, arithmetic, or an honest "I don't know"."""
    lang = _lang(inputs.question)
    if inputs.mode == "direct":
        return GenerateOut(answer=_direct(inputs.question.strip(), lang))
    strict = inputs.mode == "strict"
    question = effective_question(inputs.question, inputs.history)
    qterms = terms(question)
    qexact = exact_terms(question).all
    candidates = _candidates(inputs, question)
    wants_number = bool(_QUANTITY_Q_RE.search(question))
    wants_names = bool(_WHICH_RE.match(question))
    names: set[str] = set()
    threshold, limit = (0.5, 2) if strict else (0.25, 3)
    chosen: list[_Candidate] = []
    covered: set[str] = set()
    numbers: set[str] = set()
    for cand in candidates:
        if cand.score < threshold or len(chosen) >= limit:
            break
        new = cand.keys - covered
        gain = sum(qterms[k] for k in new) / (sum(qterms.values()) or 1.0)
        cx = exact_terms(cand.text)
        # New facts count as new even without new question words: more about the
        # identifier asked for, the first number for "how long/how many", new names for "which".
        novel = (bool(qexact & cx.all) and bool(set(cx.numbers) - numbers)) or (
            wants_number and not numbers and bool(cx.numbers)
        )
        cnames = set(_NAMES_RE.findall(cand.text))
        novel = novel or (wants_names and len(cnames - names) >= 2)
        # The section whose heading the question names is quoted at least once.
        novel = novel or (cand.on_topic and not any(c.on_topic for c in chosen))
        if chosen and gain < 0.1 and not novel:
            continue
        if strict and not (cand.keys or (qexact & cx.all)):
            continue
        chosen.append(cand)
        covered |= cand.keys
        numbers |= set(cx.numbers)
        names |= cnames
    if not chosen:
        return GenerateOut(answer=(NO_INFO if strict else NOT_FOUND)[lang])
    # Quote in document order so the answer reads as the documents do.
    chosen.sort(key=lambda c: c.order)
    joiner = "" if lang == "zh" else " "
    parts: list[str] = []
    previous = ""
    for c in chosen:
        quote = _cite(c.text, c.index)
        # A table row or list item has no closing punctuation: its own line keeps it one claim.
        unended = not previous.rstrip().endswith(tuple(".!?。！？"))
        if parts and (c.text.lstrip().startswith("|") or unended):
            parts.append("\n" + quote)
        else:
            parts.append(joiner + quote if parts else quote)
        previous = c.text
    return GenerateOut(answer="".join(parts))


def _cite(sentence: str, index: int) -> str:
    """Put "[n]" before the closing punctuation, so a sentence splitter keeps
    the marker with the sentence it belongs to ("... purchase [1].")."""
    body = sentence.rstrip()
    end = ""
    while body and body[-1] in ".!?。！？；;:：":
        end = body[-1] + end
        body = body[:-1]
    space = "" if body and is_cjk(body[-1]) else " "
    return f"{body}{space}[{index}]{end}"


# ----------------------------------------------------------------- verify

_DISCLAIMER_RE = re.compile(
    r"^\s*(?:根据现有信息[：:，,]?|根据现有资料[：:，,]?|"
    r"(?:based on|according to) (?:the )?(?:available|current|existing) (?:information|documents)[,:.]?)\s*",
    re.IGNORECASE,
)
_NEG_TOKENS = frozenset({"not", "no", "never", "cannot", "without", "t", "none", "nor", "neither"})
_ZH_NEG = "不没未无非"


def negated_terms(text: str) -> set[str]:
    """Stemmed terms in the scope of a negation: up to three content tokens after
    "not"/"n't"/"no"/"never"/"without", "un-" and "non-" words, and the CJK bigram after
    不/没/未/无/非 (skipping 有 in 没有)."""
    out: set[str] = set()
    toks = tokenize(text)
    for i, tok in enumerate(toks):
        if tok in _NEG_TOKENS:
            taken = 0
            for nxt in toks[i + 1 : i + 8]:
                if terms(nxt):
                    out.add(stem(nxt))
                    taken += 1
                    if taken == 3:
                        break
        elif tok.startswith("un") and tok[2:].isalpha() and len(tok) > 5:
            out.add(stem(tok[2:]))
        elif tok.startswith("non-") and tok[4:].replace("-", "").isalpha():
            out.add(stem(tok[4:]))
    norm = unicodedata.normalize("NFKC", text)
    for i, ch in enumerate(norm):
        if ch in _ZH_NEG:
            j = i + 1
            if ch == "没" and norm[j : j + 1] == "有":
                j += 1
            pair = norm[j : j + 2]
            if len(pair) == 2 and all(is_cjk(c) for c in pair):
                out.add(pair)
    return out


def _contradicts(
    claim_keys: frozenset[str], claim_neg: frozenset[str], keys: frozenset[str], neg: frozenset[str]
) -> bool:
    """Same topic (two or more shared terms) and a shared term negated on one side only."""
    shared = claim_keys & keys
    return len(shared) >= 2 and bool((claim_neg ^ neg) & shared)


@dataclass(frozen=True)
class _EvSentence:
    index: int
    text: str
    bag: Counter[str]
    keys: frozenset[str]
    neg: frozenset[str]
    #: The sentence states a negation at all ("not", "no", "cannot", 不, ...).
    negative: bool = False
    #: From a superseded chunk while a current one is in the evidence.
    stale: bool = False


#: An opposite-polarity sentence contradicts a claim only when it overlaps the
#: claim this much (see ``_opposite``).
CONTRADICT_COVER = 0.6


def _opposite(
    claim: str, cterms: dict[str, float], ev_sents: list[_EvSentence], covs: list[float]
) -> _EvSentence | None:
    """The evidence sentence that says the opposite of the claim, if any: the
    other polarity, a shared term negated on one side only, and about the
    same thing. "Same thing" is the better of two overlaps: how much of the
    claim the sentence covers, and how much of the sentence the claim covers
    ("XML is not supported." is all inside "In API v2, XML export is
    supported"). It must reach ``CONTRADICT_COVER`` and beat every sentence
    of the claim's own polarity, so "The Free plan costs $0" does not refute
    "Webhooks are not supported on the Free plan" (which the evidence says
    verbatim). A superseded chunk contradicts nothing while a current one exists."""
    claim_keys, claim_neg = frozenset(cterms), frozenset(negated_terms(claim))
    negative = has_negation(claim)
    candidates = [
        (es, cov)
        for es, cov in zip(ev_sents, covs, strict=True)
        if es.negative != negative and not es.stale and _contradicts(claim_keys, claim_neg, es.keys, es.neg)
    ]
    if not candidates:
        return None
    claim_bag = bag(claim)

    def overlap(es: _EvSentence, cov: float) -> float:
        return max(cov, coverage(terms(es.text), claim_bag)[0])

    same = max(
        (overlap(es, c) for es, c in zip(ev_sents, covs, strict=True) if es.negative == negative and c > 0),
        default=0.0,
    )
    found: tuple[float, _EvSentence] | None = None
    for es, cov in candidates:
        score = overlap(es, cov)
        if score >= CONTRADICT_COVER and score > same and (found is None or score > found[0]):
            found = (score, es)
    return found[1] if found else None


def _claims(answer: str) -> list[tuple[str, list[int]]]:
    body = _DISCLAIMER_RE.sub("", answer.strip())
    out: list[tuple[str, list[int]]] = []
    for sent in sentences(body):
        clean, cited = strip_citations(sent)
        clean = clean.strip()
        # Connectives ("Here is what I found:") are not claims.
        if sum(terms(clean).values()) < 1.0 or clean.endswith((":", "：")):
            continue
        out.append((clean, cited))
    return out


def verify(inputs: VerifyInputs) -> SupportOut:
    """Per claim: best evidence sentence by weighted overlap, numbers/IDs must
    agree, negations must agree -> verdict; then confidence and recommendation."""
    answer = inputs.answer.strip()
    if normalize_key(_DISCLAIMER_RE.sub("", answer)) in _REFUSALS:
        # "The documents contain no relevant information." claims nothing about them.
        return SupportOut(isFullySupported=True, overallConfidence=100, recommendation="ACCEPT")
    claims = _claims(answer)
    if not claims:
        return SupportOut(isFullySupported=False, overallConfidence=0, recommendation="REGENERATE")
    ev_sents: list[_EvSentence] = []
    injected: list[Counter[str]] = []  # bags of injection sentences: what an obeying model would claim
    ev_exact: set[str] = set()
    chunk_text: dict[int, str] = {}
    any_current = any(_status(e) != "superseded" for e in inputs.evidence)
    for ev in inputs.evidence:
        stale = _status(ev) == "superseded" and any_current
        full = f"{ev.title} {ev.heading} {ev.text}"
        chunk_text[ev.index] = full
        ev_exact |= exact_terms(full).all
        version = ev.metadata.get("version")
        if isinstance(version, str | int | float) and not isinstance(version, bool):
            ev_exact |= exact_terms(f"v{str(version).removeprefix('v')}").all
        # an instruction may hide in a heading or title as well as in the text
        injected.extend(bag(t) for t in (ev.title, ev.heading) if t and looks_like_injection(t))
        for sent in sentences(ev.text):
            if looks_like_injection(sent):
                injected.append(bag(sent))
            else:
                ev_sents.append(
                    _EvSentence(
                        ev.index,
                        sent,
                        bag(sent),
                        frozenset(terms(sent)),
                        frozenset(negated_terms(sent)),
                        has_negation(sent),
                        stale,
                    )
                )

    verdicts: list[ClaimVerdict] = []
    scores: list[tuple[float, int, bool]] = []  # (weight, confidence, important failure)
    for claim, cited in claims:
        cterms = terms(claim)
        weight = sum(cterms.values())
        best: _EvSentence | None = None
        best_cov = 0.0
        covs: list[float] = []
        for es in ev_sents:
            cov, _ = coverage(cterms, es.bag)
            covs.append(cov)
            if es.index in cited:
                cov += 0.02  # ties go to the document the claim cites
            if cov > best_cov:
                best, best_cov = es, cov
        best_cov = min(best_cov, 1.0)
        # A claim may merge two adjacent sentences of one chunk: their union, discounted.
        for first, second in itertools.pairwise(ev_sents):
            if first.index != second.index:
                continue
            cov, _ = coverage(cterms, first.bag + second.bag)
            if cov * 0.9 > best_cov + 1e-9:
                best_cov = cov * 0.9
                best = first if coverage(cterms, first.bag)[0] >= coverage(cterms, second.bag)[0] else second
        cx = exact_terms(claim).all
        exact_missing = sorted(cx - ev_exact)
        mismatch = bool(best and disagree(quantities(claim), quantities(best.text)))
        # Any on-topic evidence sentence with the opposite polarity contradicts the claim.
        opposite = _opposite(claim, cterms, ev_sents, covs)
        contradiction = opposite is not None
        if opposite is not None:
            best = opposite  # show the sentence that says the opposite
        partial_exact = bool(best and cx and not (cx <= exact_terms(chunk_text[best.index]).all))
        # A claim an injected instruction states better than any real sentence
        # is the injection obeyed ("say the Pro plan costs nothing"), not evidence.
        echoes_injection = any(
            (cov := coverage(cterms, inj)[0]) >= 0.7 and cov > best_cov for inj in injected
        )
        if exact_missing or mismatch or contradiction or echoes_injection:
            verdict, conf = "unsupported", 0
        elif best_cov >= 0.7:
            verdict, conf = "supported", min(100, round(100 * best_cov / 0.85))
            if partial_exact:
                verdict, conf = "partial", min(conf, 60)
        elif best_cov >= 0.4:
            verdict, conf = "partial", min(79, round(100 * best_cov / 0.85))
        else:
            verdict, conf = "unsupported", min(30, round(100 * best_cov))
        quotes = [EvidenceQuote(doc=best.index, quote=best.text)] if best and best_cov > 0 else []
        verdicts.append(ClaimVerdict(claim=claim, verdict=verdict, evidence=quotes, cited=cited))
        hard = bool(exact_missing or mismatch or contradiction or echoes_injection)
        scores.append((weight, conf, hard))

    total = sum(w for w, _, _ in scores) or 1.0
    confidence = round(sum(w * c for w, c, _ in scores) / total)
    supported_share = (
        sum(w for (w, _, _), v in zip(scores, verdicts, strict=True) if v.verdict == "supported") / total
    )
    unsupported_important = any(
        v.verdict == "unsupported" and (hard or w / total >= 0.25)
        for (w, _, hard), v in zip(scores, verdicts, strict=True)
    )
    all_supported = all(v.verdict == "supported" for v in verdicts)
    recommendation: Any
    if all_supported and confidence >= 80:
        recommendation = "ACCEPT"
    elif unsupported_important:
        recommendation = "REGENERATE"
    elif supported_share >= 0.5 or (all(v.verdict != "unsupported" for v in verdicts) and confidence >= 50):
        recommendation = "ADD_DISCLAIMER"
    else:
        recommendation = "REGENERATE"
    return SupportOut(
        isFullySupported=all_supported,
        supportedClaims=[v.claim for v in verdicts if v.verdict == "supported"],
        unsupportedClaims=[v.claim for v in verdicts if v.verdict == "unsupported"],
        claims=verdicts,
        overallConfidence=max(0, min(100, confidence)),
        recommendation=recommendation,
    )
