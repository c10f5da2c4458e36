"""Relevance: the grade and rerank roles (one chunk's score, a candidate set's order).

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                      ^^^^^^^^^ here: imports lexical only; assess
                                                grades evidence through grade().

    GradeInputs  -> no text (a chunk that was only markup: badges, a logo) -> 0
                 -> injection sentences dropped
                 -> weighted term coverage (title/heading/metadata boost, and the
                    document's own name, "quillpath-ng" for quillpath-ng.rst, when
                    the chunk has another word asked, and the kind in "What is
                    the X library?" over X's own document; an acronym
                    counts as the question's words it abbreviates: "GC", and a name
                    written apart as the word that writes it together: "ONNX
                    Runtime" / "onnxruntime", lexical.joined_words) + best sentence
                 -> exact_adjustment: IDs / versions / numbers present -> bonus,
                    absent -> cap 45, other version -> cap 30
                 -> "version" is said by a dotted number ("3.10"), "minimum" /
                    "oldest" by a lower bound (">=", "or later", "3.9+"),
                    "environment variable" by a variable's name ("QUILL_LOG=1")
                 -> "which <things>" (asked_kind): a list of three or more short
                    items stands for the kind's words ("macOS, Windows and iOS")
                 -> only the question's names match (a code name such as
                    "SessionMiddleware" is a topic word, not a shared name), or the
                    asked head (asked_head: "What is the X for ...") is missing -> cap 45
                 -> relevanceScore 0-100, isRelevant >= 50, keyInfo, gaps
                 -> the better of that and the same for the question without
                    its examples (question.without_examples: "such as A or B")
                    and idioms (question.without_idioms: "on my machine")
    RerankInputs -> BM25 (IDF from the candidate set, term weight per query term)
                    x coverage + exact bonus, capped; a passage that defines
                    what "What is X?" asks (lexical.defines) ahead of the rest
                    -> ranking best first

Heuristics and caps: ``docs/offline_model.md`` (grade, rerank).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from selfrag_nb.llm.offline.abbrev import acronym_words, expansion_of
from selfrag_nb.llm.offline.lexical import (
    SOFTWARE_KIND_STEMS,
    SYNONYMS,
    bag,
    best_sentence,
    compact,
    coverage,
    defined_name,
    defines,
    doc_names,
    exact_terms,
    joined_words,
    looks_like_injection,
    sentences,
    shorten,
    stem,
    terms,
    wordset,
)
from selfrag_nb.llm.offline.question import ENV_Q_RE, ENV_VAR_RE, without_examples, without_idioms
from selfrag_nb.llm.schemas import GradeInputs, RankedItem, RelevanceOut, RerankInputs, RerankOut
from selfrag_nb.text import tokenize

__all__ = ["asked_head", "exact_adjustment", "grade", "rerank"]


# ------------------------------------------------------------------- grade

#: Score caps when the question's exact terms are missing from / contradicted by the chunk.
CAP_MISSING_EXACT = 45
CAP_CONTRADICTED = 30


def _meta_text(metadata: dict[str, Any]) -> str:
    parts: list[str] = []
    for key in sorted(metadata):
        value = metadata[key]
        values = value if isinstance(value, list) else [value]
        parts.extend(str(v) for v in values if isinstance(v, str | int | float) and not isinstance(v, bool))
    return " ".join(parts)


def _version_match(q: str, d: str) -> bool:
    return q == d or d.startswith(q + ".") or q.startswith(d + ".")


def _written(figure: str, text: str) -> bool:
    """``figure`` stands in ``text`` as a figure of its own: "0.5" in "in 0.5."
    and "3339" in "RFC3339" (digits glued to a word are still the number), but
    not in "10.5", "0.55" or "1,200"."""
    return re.search(rf"(?<![\d.,]){re.escape(figure)}(?![\d]|[.,]\d)", text) is not None


def _fold_id(identifier: str) -> str:
    return identifier.replace("_", "-")


def exact_adjustment(
    question: str, doc_text: str, doc_versions: set[str] | None = None
) -> tuple[int, int, list[str]]:
    """(bonus, cap, notes) from the question's identifiers, versions and numbers
    against a document: present -> bonus; an ID or version absent -> cap below
    the relevance cutoff; a different version -> a lower cap; a number absent -> penalty."""
    q = exact_terms(question)
    d = exact_terms(doc_text)
    versions = set(d.versions) | (doc_versions or set())
    bonus, cap, notes = 0, 100, []
    for v in sorted(q.versions):
        # "changed ... in 0.5." mentions version 0.5 without the word "version".
        if any(_version_match(v, dv) for dv in versions) or _written(v, doc_text):
            bonus += 6
        elif versions:
            cap = min(cap, CAP_CONTRADICTED)
            notes.append(f"version {v} asked, document is about {', '.join(sorted(versions))}")
        else:
            cap = min(cap, CAP_MISSING_EXACT)
            notes.append(f"version {v} not mentioned")
    # "nest-asyncio2" and "nest_asyncio2" are one identifier (a distribution
    # name and its import name): the separator is spelling, not identity.
    doc_ids = {_fold_id(x) for x in d.ids}
    for i in sorted(q.ids):
        if _fold_id(i) in doc_ids:
            bonus += 8
        else:
            cap = min(cap, CAP_MISSING_EXACT)
            notes.append(f"identifier {i} not mentioned")
    missing_numbers = 0
    for n in sorted(q.numbers):
        if n in d.numbers or _written(n, doc_text):
            bonus += 3
        else:
            missing_numbers += 1
            notes.append(f"number {n} not mentioned")
    return bonus - min(16, 8 * missing_numbers), cap, notes


#: "What is the <modifiers> HEAD for/of/...": the thing asked for.
_HEAD_RE = re.compile(
    r"^\s*(?:what|which)\s+(?:is|are|was|were)\s+(?:the\s+|a\s+|an\s+|your\s+|my\s+|our\s+|its\s+)?"
    r"(?:[\w'’\-]+\s+){0,4}?([a-z][a-z\-]*)\s+(?:for|of|in|on|at|to|with|that|when|per|from)\b",
    re.IGNORECASE,
)
#: Irregular past participles, which stand where a head noun would ("meant to").
_PARTICIPLES = wordset(
    "meant made built written known given done kept set put left held sent spent bought brought taught "
    "thought told found shown seen run taken chosen"
)
#: Heads whose answer is a number (any number in the chunk names them).
_NUMERIC_HEADS = frozenset(
    stem(w)
    for w in [
        "price",
        "cost",
        "fee",
        "size",
        "limit",
        "rate",
        "value",
        "amount",
        "number",
        "count",
        "total",
        "window",
        "period",
        "duration",
        "time",
        "percentage",
        "length",
        "maximum",
        "minimum",
        "quota",
    ]
)
_DATED_HEADS = frozenset(stem(w) for w in ["date", "deadline", "day"])
_ISO_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_NAME_RE = re.compile(r"(?<=\s)([A-Z][a-z][\w\-]*)(?:['’]s)?\b")
#: Score cap when a chunk matches the question only by names, or lacks the thing asked for.
CAP_OFF_TOPIC = 45


def asked_head(question: str) -> str:
    """The stemmed head noun of a "What is the X for ..." question ("" when none)."""
    m = _HEAD_RE.match(question)
    if not m:
        return ""
    word = m.group(1).lower()
    if word.endswith("ed") or word in _PARTICIPLES:
        # "What is the tzdata package meant to be used for?": a participle
        # before "to" says what the thing is for; it is not a kind of thing.
        return ""
    head = stem(word)
    return head if terms(head) else ""


def _has_head(head: str, doc: Counter[str], text: str) -> bool:
    if doc.get(head, 0) or any(doc.get(syn, 0) for syn in SYNONYMS.get(head, ())):
        return True
    if head in _NUMERIC_HEADS and exact_terms(text).numbers:
        return True
    return head in _DATED_HEADS and bool(_ISO_DATE_RE.search(text))


#: A capital right after a small letter inside a word: a class or other code
#: name ("SessionMiddleware", "CommManager").
_CAMEL_RE = re.compile(r"\w*[a-z][A-Z]\w*")
#: Capitalised words run together, each with lower-case letters: "SchemaGenerator".
_CLASS_NAME_RE = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+\b")


def _name_keys(question: str, own: frozenset[str] = frozenset()) -> set[str]:
    """Capitalised words inside the question (not its first word, not acronyms):
    product and company names, which many documents share. A code name
    ("SessionMiddleware") is one specific thing, so a chunk naming it is about
    it: it counts as a topic word, unless it is the chunk's own document name
    (``own``: "PyYAML" in pyyaml.md is the product, shared by all its chunks)."""
    first = stem(question.strip().split()[0].lower()) if question.strip() else ""
    keys: set[str] = set()
    for m in _NAME_RE.finditer(" " + question.strip()):
        word = m.group(1)
        if _CAMEL_RE.fullmatch(word) and compact(word) not in own:
            continue
        keys.add(stem(word.lower()))
    return keys - {first}


#: "Which <things> does X ...?": a plural kind of thing asked for, which an
#: answer names by its instances ("macOS, Windows and iOS"), not by the kind.
_WHICH_KIND_RE = re.compile(
    r"^\s*(?:(?:in|on|for|from|with|under|by|to|at)\s+)?(?:which|what)\s+"
    r"((?:[\w\-]+\s+){0,2}?(?:[a-z][\w\-]*s\s+(?:and|or)\s+(?:[\w\-]+\s+){0,2}?)?[a-z][\w\-]*s)"
    r"\s+(?:are|were|do|does|did|can|could|will|would|should|is|has|have)\b",
    re.IGNORECASE,
)
# A dotted number ending a sentence ("Bump jiter to v0.19.0.") is one too.
_DOTTED_RE = re.compile(r"(?<![\w.])v?\d+\.\d+(?:\.\d+)*(?!\w|\.\w)|(?<=[<>=~])\d+\.\d+")
_LOWER_BOUND_RE = re.compile(
    r">=|≥|\bor\s+(?:later|newer|higher|above|greater)\b|\d\+(?!\w)|\bat\s+least\b", re.IGNORECASE
)
#: Question words a lower bound answers ("minimum", "oldest", "least"), as stems.
_LOWER_BOUND_WORDS = frozenset({"minimum", "min", "oldest", "earliest", "lowest", "least"})
#: The words a variable's name says ("environment variable", "env var").
_ENV_WORDS = frozenset(stem(w) for w in ("environment", "variable", "env", "var", "envvar"))
_LIST_SPLIT_RE = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+")


def asked_kind(question: str) -> set[str]:
    """The stems of the plural kind a "which <things>" question asks for
    ("operating systems"; two joined by "and" / "or": "Python versions and
    operating systems"), its capitalised words aside (a name qualifies the
    kind: "Python versions")."""
    m = _WHICH_KIND_RE.match(question)
    if m is None:
        return set()
    return {stem(w.lower()) for w in m.group(1).split() if not w[:1].isupper() and terms(w)}


def enumerates(text: str) -> bool:
    """A sentence of ``text`` lists three or more short items (up to three
    words each) in a row: "macOS, Windows, Linux/Unix, Android, and iOS".
    The first item ends the clause that introduces the list ("supports
    Python>=3.6 on Linux, OSX and Windows"): a long part begins a run."""
    for sent in sentences(text):
        run = 0
        for part in _LIST_SPLIT_RE.split(sent):
            run = run + 1 if 1 <= len(part.split()) <= 3 else 1
            if run >= 3:
                return True
    return False


def grade(inputs: GradeInputs) -> RelevanceOut:
    """relevanceScore 0-100 (80+ high, 50-79 partial, <50 irrelevant)."""
    out = _grade(inputs)
    # "... the extensions such as len, sorted or filter?": the examples may be
    # named or not; a chunk about the extensions that names none answers too.
    # "... on my machine" says nothing about what is asked.
    plain = without_examples(without_idioms(inputs.question))
    if plain != inputs.question:
        other = _grade(inputs.model_copy(update={"question": plain}))
        if other.relevanceScore > out.relevanceScore:
            return other
    return out


def _grade(inputs: GradeInputs) -> RelevanceOut:
    if not inputs.text.strip():
        # A chunk that was only markup (a README's badge row or logo block)
        # has nothing to quote or check a claim against, whatever its title says.
        return RelevanceOut(
            relevanceScore=0, isRelevant=False, keyInfo="", gaps="no text once its markup is removed"
        )
    qterms = terms(inputs.question)
    meta = _meta_text(inputs.metadata)
    header = f"{inputs.title} {inputs.heading}"
    boost = bag(f"{header} {meta}")
    # Instructions planted in a document are not information about the question.
    text = "\n".join(s for s in sentences(inputs.text) if not looks_like_injection(s))
    # "GC" in the text is the "garbage collection" the question spells out, and
    # "ONNX Runtime" the "onnxruntime" it writes together.
    doc = (
        bag(text)
        + boost
        + acronym_words(inputs.question, text)
        + joined_words(inputs.question, f"{header}\n{text}")
    )
    # A name the question asks about that is the document's own (its file
    # name or title: "jsonpath-ng" for jsonpath-ng.rst) is what a chunk of it
    # is about without repeating it, once the chunk says something else asked.
    own = doc_names(inputs.title, inputs.source)
    own_keys = {k for k in qterms if k not in doc and len(k) >= 3 and compact(k) in own}
    if own_keys and coverage({k: w for k, w in qterms.items() if k not in own_keys}, doc)[0] > 0:
        boost += Counter(dict.fromkeys(own_keys, 1))
        doc += Counter(dict.fromkeys(own_keys, 1))
    defined = defined_name(inputs.question)
    if defined and compact(defined) in own:
        # "What is the referencing library?" over referencing's own document:
        # "library" classifies the name, and a README's definition of itself
        # ("An implementation-agnostic implementation of ...") seldom repeats it.
        doc += Counter(dict.fromkeys((k for k in qterms if k in SOFTWARE_KIND_STEMS), 1))
    expanded = expansion_of(inputs.question)
    if expanded is not None and expanded.search(f"{header}\n{text}"):
        # "It's the Command Line Interface Creation Kit" answers "What does the
        # name Click stand for?" with none of the question's words but the name.
        doc += Counter(dict.fromkeys(qterms, 1))
    # "Python>=3.10" says "minimum ... version": a dotted number is a version,
    # and ">=" / "or later" / "3.9+" a lower bound.
    if "version" in qterms and _DOTTED_RE.search(text):
        doc["version"] += 1
    # ... and "TQDM_POSITION=-1" says "environment variable" to a question asking for one.
    if ENV_Q_RE.search(inputs.question) and ENV_VAR_RE.search(text):
        doc += Counter(dict.fromkeys(_ENV_WORDS & set(qterms), 1))
    if _LOWER_BOUND_WORDS & set(qterms) and _LOWER_BOUND_RE.search(text):
        doc += Counter(dict.fromkeys(_LOWER_BOUND_WORDS & set(qterms), 1))
    kind = asked_kind(inputs.question)
    if kind and enumerates(text):
        # "Which operating systems ...?" is answered by naming them: a list of
        # instances stands for the kind's words, which it seldom repeats.
        doc = doc + Counter(dict.fromkeys(kind, 1))
    cov, missing = coverage(qterms, doc, boost)
    sentence, sent_cov = best_sentence(qterms, text)
    lexical = 100.0 * (0.7 * cov + 0.3 * sent_cov) ** 0.8 if qterms else 0.0
    meta_versions = {
        v.removeprefix("v")
        for k, v in inputs.metadata.items()
        if k.lower() == "version" and isinstance(v, str)
    } | {str(v) for k, v in inputs.metadata.items() if k.lower() == "version" and isinstance(v, int | float)}
    bonus, cap, notes = exact_adjustment(inputs.question, f"{header} {text} {inputs.source}", meta_versions)
    # Sharing only the question's names ("Quillstack") is not being about it.
    names = _name_keys(inputs.question, frozenset(own))
    topical = {k: w for k, w in qterms.items() if k not in names}
    # A class name the chunk shares, words run together ("pyyaml - Required
    # for SchemaGenerator support."), is the one thing asked about, not a
    # name many documents share (as "OpenAPI" or "PyYAML" are).
    code = {stem(w.lower()) for w in _CLASS_NAME_RE.findall(inputs.question)} & set(topical) & set(doc)
    if names & set(qterms) and topical and not code and coverage(topical, doc, boost)[0] < 0.35:
        cap = min(cap, CAP_OFF_TOPIC)
        notes.append("only the names in the question match")
    head = asked_head(inputs.question)
    if head and not _has_head(head, doc, f"{header} {text}"):
        cap = min(cap, CAP_OFF_TOPIC)
        notes.append(f"the thing asked for ({head}) is not mentioned")
    score = round(max(0.0, min(100.0, lexical + bonus if lexical > 0 else 0.0, float(cap))))
    missing_set = set(missing)
    gap_words: list[str] = []
    for tok in tokenize(inputs.question):
        if stem(tok) in missing_set and tok not in gap_words and qterms.get(stem(tok), 0) >= 1.0:
            gap_words.append(tok)
    gaps = "; ".join(p for p in (", ".join(gap_words), *notes) if p)
    key_info = shorten(sentence or text, 200) if score > 0 else ""
    return RelevanceOut(relevanceScore=score, isRelevant=score >= 50, keyInfo=key_info, gaps=gaps)


# ------------------------------------------------------------------ rerank

#: BM25 document-length normalisation.
B = 0.75


def rerank(inputs: RerankInputs) -> RerankOut:
    """Every candidate ranked, best first: BM25 with IDF from the candidate set,
    term specificity as query-term weight, times coverage, plus exact matches."""
    import math

    qterms = terms(inputs.query)
    docs = [
        bag(c) + acronym_words(inputs.query, c) + joined_words(inputs.query, c) for c in inputs.candidates
    ]
    n = len(docs)
    if n == 0:
        return RerankOut(ranking=[])
    avgdl = sum(sum(d.values()) for d in docs) / n or 1.0
    idf = {}
    for key in qterms:
        df = sum(1 for d in docs if key in d)
        idf[key] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    scored: list[tuple[float, int]] = []
    reasons: list[str] = []
    # "What is X?": the passage that says "X is a ..." is the answer, however
    # many shorter passages repeat X's name.
    definition = defines(inputs.query) or expansion_of(inputs.query)
    defining: set[int] = set()
    for i, (text, d) in enumerate(zip(inputs.candidates, docs, strict=True)):
        dl = sum(d.values()) or 1
        bm25 = 0.0
        for key, w in qterms.items():
            tf = d.get(key, 0)
            if tf:
                bm25 += w * idf[key] * tf * (1.2 + 1) / (tf + 1.2 * (1 - B + B * dl / avgdl))
        cov, missing = coverage(qterms, d)
        bonus, cap, notes = exact_adjustment(inputs.query, text)
        score = bm25 * (0.5 + 0.5 * cov) + bonus / 10.0
        if cap < 100:
            score *= cap / 100.0
        if definition is not None and definition.search(text):
            defining.add(i)
            notes = [*notes, "defines what the question asks about"]
        scored.append((score, i))
        reasons.append(_rerank_reason(bm25, cov, missing, notes, cap))
    if defining:
        # Ahead of every passage that only names X, in their own order.
        lead = max(sc for sc, _ in scored)
        scored = [(sc + lead if i in defining else sc, i) for sc, i in scored]
    scored = [(round(sc, 6), i) for sc, i in scored]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return RerankOut(ranking=[RankedItem(index=i, score=s, reason=reasons[i]) for s, i in scored])


def _rerank_reason(bm25: float, cov: float, missing: list[str], notes: list[str], cap: int) -> str:
    """One line a reader can check against the chunk: its keyword weight (BM25
    within the candidates, what mostly orders them), how much of the question
    it covers, which terms it lacks, and any identifier/version/number rule hit."""
    parts = [f"keyword weight {bm25:.2f}", f"covers {cov:.0%} of the question's terms"]
    if missing:
        parts.append("lacks " + ", ".join(missing[:4]))
    parts.extend(notes[:2])
    if cap < 100:
        parts.append(f"capped at {cap}% (an identifier or version does not match)")
    return "; ".join(parts)
