"""The generate role: extractive answers quoted and cited, or a direct reply.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                                                        ^^^^^^^^ here: imports
                                                                        lexical, surface, quotable,
                                                                        phrases, question, evidence,
                                                                        abbrev, answer_kind (instructs).

    GenerateInputs -> direct: greeting / thanks / arithmetic / "I don't know" (phrases.direct_reply)
                   -> grounded/strict: effective question (question.effective_question),
                      without a "... instead of X" clause (question.without_excluded)
                      -> every evidence sentence scored (_candidates): coverage,
                         heading on topic, word pairs, exact terms, answer type
                         (number, date, a duration, names, a version
                         number saying "version", an environment
                         variable, a code name for "which class ...?", a
                         word in the place of a stranded preposition:
                         "compiled with mypyc"; none
                         stated for "when" or a variable, or nothing to do for
                         a how-to: halved), negation,
                         language, precision;
                         chunk text (clean: selfrag_nb.cleantext) read through
                         surface.readable (table rows as sentences, header rows
                         dropped, control characters removed), whole sentences
                         only (quotable.quotable: no code, heading, name or fragment;
                         a bracketed remark kept with its sentence; a lead-in
                         whose items are gone is a statement, and so is one
                         announcing an example ("..., e.g.:") without it; a
                         lead-in with its short items is one, "X:" a, b, c (an
                         ellipsis "X..." for the colon), when the question asks
                         for several things or who, and one with its short
                         code block, "... using: `cmd`.", for a how-to),
                         injections, lead-ins and ``avoid`` never quoted,
                         superseded evidence scored lower, evidence naming
                         none of the question's names (while other evidence
                         names them all) not quoted
                      -> 1-3 (strict: 1-2) sentences that add something, and
                         the sentence after the best one when it points back
                         at it ("This is no longer necessary.", "Otherwise
                         ...") or, for "the default X?", labels the default
                         ("... [default: 0.3]."); for "why" the one before a
                         best one that is a consequence ("Therefore ...",
                         "These types therefore ...": its reason, and the one
                         before that when the reason points back), in document
                         order, each cited [n]; for "why" a sentence giving a
                         cause ("due to", "so that", "to stay ...") first, and
                         one such next to a well-answering sentence added when
                         none chosen gives one ("written initially to
                         support ..." is a purpose); a how-to answered by
                         the problem gets its passage's "you can ..." sentence;
                         a version question answered
                         without a version gets the chunk's heading that names
                         one ("v2.14.0 (2026-10-08): This release drops ...")
                      -> none: NO_INFO (strict) / NOT_FOUND (grounded)

Heuristics and bonuses: ``docs/offline_model.md`` (generate).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from selfrag_nb.codelines import lines
from selfrag_nb.llm.offline.abbrev import acronym_words, expansion_of
from selfrag_nb.llm.offline.answer_kind import (
    VERSION_KINDS,
    WHO_Q_RE,
    addresses_reader,
    instructs,
    listed_names,
    names_agent,
    slot_filled,
    unremarked,
    wants_names,
)
from selfrag_nb.llm.offline.evidence import evidence_status
from selfrag_nb.llm.offline.lexical import (
    bag,
    compact,
    coverage,
    defined_name,
    defines,
    exact_terms,
    has_negation,
    looks_like_injection,
    quantities,
    sentences,
    stem,
    strip_citations,
    term_weight,
    terms,
)
from selfrag_nb.llm.offline.phrases import direct_reply
from selfrag_nb.llm.offline.question import (
    CODE_Q_RE,
    DATE_Q_RE,
    DATE_RE_ANY,
    DURATION_Q_RE,
    ENV_Q_RE,
    ENV_VAR_RE,
    HOW_TO_Q_RE,
    PURPOSE_Q_RE,
    PURPOSE_RE,
    QUANTITY_Q_RE,
    TIME_UNITS,
    WHEN_Q_RE,
    answer_language,
    code_names,
    effective_question,
    gives_time,
    without_examples,
    without_excluded,
    without_idioms,
)
from selfrag_nb.llm.offline.quotable import headed_code, quotable, table_leads
from selfrag_nb.llm.offline.subject import subject_names, subject_share
from selfrag_nb.llm.offline.surface import readable
from selfrag_nb.llm.schemas import Evidence, GenerateInputs, GenerateOut
from selfrag_nb.text import detect_language, is_cjk, tokenize

__all__ = ["NOT_FOUND", "NO_INFO", "generate", "heading_value"]


#: The strict mode's answer when nothing qualifies (the Self-RAG design's wording).
NO_INFO = {"en": "The documents contain no relevant information.", "zh": "文档中没有相关信息"}
#: The grounded mode's answer when no sentence covers the question.
NOT_FOUND = {
    "en": "The documents found do not contain the answer to this question.",
    "zh": "找到的文档中没有这个问题的答案。",
}


@dataclass(frozen=True)
class _Candidate:
    score: float
    order: int
    index: int
    text: str
    keys: frozenset[str]
    #: The chunk's heading is about the question (see ``_heading_on_topic``).
    on_topic: bool = False
    #: Opens with a word that points back ("This is no longer necessary."), right
    #: after the previous quotable sentence of the same paragraph.
    refers_back: bool = False


def _similar(sentence: str, claims: list[str]) -> bool:
    """``sentence`` says what one of ``claims`` says. A claim of several
    sentences (a whole answer the usefulness check turned down) is compared
    sentence by sentence: each of them was part of the answer to avoid."""
    sb = bag(sentence)
    for claim in claims:
        for part in sentences(strip_citations(claim)[0]):
            cterms = terms(part)
            if cterms and coverage(cterms, sb)[0] >= 0.8:
                return True
    return False


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


#: A second or third quote scores at least this share of the first one's.
ADDED_SHARE = 0.6
#: Factor for a sentence in another language than the question.
OTHER_LANGUAGE = 0.8
#: Factor for a sentence from evidence that mentions none of what the question
#: names, while other evidence does (scaled by the share it mentions).
OFF_SUBJECT = 0.4
#: Factor for a sentence that names no environment variable, when the
#: question asks for one, states no point in time, when it asks when, says
#: nothing to do, when it asks how to, or names no one in the role asked
#: about, when it asks who: whatever else it shares with the question, it
#: cannot say which, when, how or who (the usefulness check turns such an
#: answer down).
NO_VARIABLE = 0.5


#: The question asks for several things of a kind ("Which language servers
#: ...?", "What are ...?"): a plural noun after which/what, not an auxiliary
#: ("does"), a possessive or a noun that only ends in s ("process", "status").
#: "Who ...?" may be answered by several people, and so may "谁 ...?" (the
#: English who-question is answer_kind.WHO_Q_RE).
_SEVERAL_RE = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w\-]+\s+){0,3}?(?!(?:does|has|this|its)\b)[a-z][\w\-]*[a-hj-rtv-z]s\b"
    r"(?!\s+of\b)(?!['’])|^\s*what\s+are\b|^\s*哪些|^\s*谁",
    re.IGNORECASE,
)


#: A setext underline or a Markdown heading's hashes around a title line.
_TITLE_MARKS_RE = re.compile(r"^\s*#+\s*|\s*#*\s*$")


_VALUE_WORD_RE = re.compile(r"^(?:[A-Z][\w.+-]*|[\w.+-]*\d[\w.+-]*)$")


def heading_value(ev: Evidence) -> str:
    """A section whose whole body is a short name ("## License" over "MIT")
    says "License: MIT." (""): the body is the value of its heading. Only a
    name (capitalised words, versions) is such a value, and only under a
    heading of three words or fewer."""
    last = ev.heading.split(">")[-1].strip() if ev.heading else ""
    body = readable(ev.text).strip()
    words = body.split()
    if not last or len(last.split()) > 3 or not 1 <= len(words) <= 4 or "\n" in body:
        return ""
    if not all(_VALUE_WORD_RE.match(w) for w in words):
        return ""
    return f"{last}: {body}."


def _title_lead(ev: Evidence, name: str) -> str:
    """The first quotable sentence of the section titled ``name`` (""): the
    chunk whose innermost heading is the name, or the text after a line that
    is the name alone (a title: "CFFI" over "===="). A README puts its
    one-line description there."""
    key = compact(name)
    if not key:
        return ""
    text = readable(ev.text)
    last = ev.heading.split(">")[-1] if ev.heading else ""
    if compact(last) != key:
        found = lines(text)
        at = next(
            (
                n
                for n, (kind, line) in enumerate(found)
                if kind != "code" and compact(_TITLE_MARKS_RE.sub("", line)) == key
            ),
            None,
        )
        if at is None:
            return ""
        text = "\n".join(
            line
            for kind, line in found[at + 1 :]
            if kind != "code" and not set(line.strip()) <= set("=-~^*#")
        )
    lead = quotable(text)
    return lead[0][0] if lead else ""


def _candidates(inputs: GenerateInputs, question: str) -> list[_Candidate]:
    """Every quotable evidence sentence with its score for ``question``, best first."""
    qterms = terms(question)
    qexact = exact_terms(question).all
    qbag = bag(question)
    qpairs = _pairs(question)
    wants_number = bool(QUANTITY_Q_RE.search(question))
    wants_date = bool(DATE_Q_RE.search(question))
    wants_purpose = bool(PURPOSE_Q_RE.search(question))
    wants_variable = bool(ENV_Q_RE.search(question))
    wants_code = bool(CODE_Q_RE.match(question))
    wants_time = bool(WHEN_Q_RE.search(question))
    # "Chromium 159.0.8154.6" says which version without the word (as grade reads it)
    version_words = {k for k in qterms if k in _VERSION_STEMS} if _VERSION_Q_RE.search(question) else set()
    how_to = bool(HOW_TO_Q_RE.search(question))
    # "What is the default timeout?" wants "10 minutes", not any number.
    wants_duration = bool(DURATION_Q_RE.search(question)) and not how_to
    negative_q = has_negation(question)
    wants_reason = bool(_WHY_Q_RE.match(question))
    plain = unremarked(question)
    asks_names = wants_names(question)
    # "Who maintains X?" may be answered by several people, named as a
    # lead-in's items ("authored and maintained by:" over a list of names).
    asks_who = bool(WHO_Q_RE.match(question))
    several = bool(_SEVERAL_RE.match(plain)) or asks_who
    definition = defines(question) or expansion_of(question)  # "X is a ...", or X's words
    defined = defined_name(question)
    lang = answer_language(question)
    any_current = any(evidence_status(e) != "superseded" for e in inputs.evidence)
    # Evidence about what the question names comes first: a sentence from a
    # document about something else is the most confident kind of wrong answer.
    subject = subject_names(question, inputs.evidence)
    shares = {e.index: subject_share(subject, e) for e in inputs.evidence}
    best_share = max(shares.values(), default=0.0)
    out: list[_Candidate] = []
    order = 0
    for ev in inputs.evidence:
        if best_share >= 1 and shares[ev.index] == 0:
            # Another passage mentions every name asked about (or is its
            # document) and this one none: it is about something else.
            continue
        header = bag(f"{ev.title} {ev.heading}")
        stale = evidence_status(ev) == "superseded" and any_current
        topic = HEADING_BONUS * _heading_on_topic(ev, qbag)
        lead = _title_lead(ev, defined) if defined else ""
        # Tables arrive as one sentence per row and without control characters,
        # so no raw "| a | b |" markup or terminal escape reaches an answer;
        # only whole sentences of text are candidates (quotable).
        said = quotable(readable(ev.text), table_leads(ev.text), several=several, how_to=how_to)
        if value := heading_value(ev):
            said = [(value, False), *said]
        elif how_to and (command := headed_code(ev.heading, readable(ev.text))):
            # "Installation" over "pip install x" and nothing else: the command
            # is the answer to "How do I install ...?", its heading the lead-in.
            said = [(command, False), *said]
        for sent, refers_back in said:
            order += 1
            if looks_like_injection(sent) or (inputs.avoid and _similar(sent, inputs.avoid)):
                continue
            # A lead-in ("... you can claim a credit:") says nothing by itself;
            # the items that follow are candidates of their own. A question
            # ("More comfortable in another language?") asks; it answers nothing.
            if sent.rstrip().endswith((":", "：", "?", "？")):
                continue
            # The lead under the title X is read with its title: it is about X
            # without naming it ("CFFI" / "Foreign Function Interface for ...").
            sb = bag(f"{sent} {defined}" if lead and sent == lead else sent)
            # "not currently GA" says "generally available", as grade reads it.
            sb += acronym_words(question, sent)
            sx = exact_terms(sent)
            if version_words and sx.versions - qexact:
                sb += Counter(version_words)
            # The heading lends its words, but a sentence must carry most of the match itself.
            alone, _ = coverage(qterms, sb)
            boosted, _ = coverage(qterms, sb, header)
            if alone <= 0 and not (qexact & exact_terms(sent).all) and sum(terms(sent).values()) < 2.0:
                continue  # says nothing by itself and shares nothing with the question ("Yes.")
            score = 0.5 * alone + 0.5 * boosted + topic
            score += PHRASE_BONUS * min(3, len(qpairs & _pairs(sent)))
            score += 0.1 * len(qexact & sx.all)
            if wants_number and (sx.numbers or quantities(sent)):
                score += ANSWER_TYPE_BONUS
            if wants_date and DATE_RE_ANY.search(sent):
                score += ANSWER_TYPE_BONUS
            if wants_duration and TIME_UNITS & set(quantities(sent)):
                score += ANSWER_TYPE_BONUS
            if wants_purpose and PURPOSE_RE.search(sent):
                score += ANSWER_TYPE_BONUS  # "It is intended to be a fallback ..." says what X is for
            if wants_variable and ENV_VAR_RE.search(sent):
                score += ANSWER_TYPE_BONUS  # "... set QUILL_NO_EXT to a non-empty value"
            if wants_code and code_names(sent, question):
                score += ANSWER_TYPE_BONUS  # "... defaults to OAS32Validator" for "Which class ...?"
            if negative_q and has_negation(sent):
                score += NEGATION_BONUS
            if wants_reason and _gives_reason(qterms, sent):
                score += ANSWER_TYPE_BONUS  # "..., which were not working due to ..." says why
            if slot_filled(question, sent) and shares[ev.index] >= best_share:
                # "compiled with mypyc" for "What is X compiled with?"; only from
                # evidence about X ("released under the MIT license" of another
                # package fills the place as well).
                score += ANSWER_TYPE_BONUS
            if asks_names and len(listed_names(sent, question)) >= 2:
                score += ANSWER_TYPE_BONUS
            agent = asks_who and names_agent(sent, question)
            if agent:
                score += ANSWER_TYPE_BONUS  # "h2 was authored by Cory Benfield" for "Who wrote h2?"
            if definition is not None and definition.search(sent):
                score += ANSWER_TYPE_BONUS  # "X is a ..." answers "What is X?"
            elif lead and sent == lead:
                score += ANSWER_TYPE_BONUS  # ... and so does the lead under the title X
            if (detect_language(sent) == "zh") != (lang == "zh"):
                score *= OTHER_LANGUAGE  # the user's language first, when both say it
            sterms = terms(sent)
            if sterms:
                score += PRECISION_BONUS * coverage(sterms, qbag + header)[0]
            if stale:
                score *= 0.6
            if (
                (wants_variable and not ENV_VAR_RE.search(sent))
                or (wants_time and not gives_time(sent))
                or (how_to and not instructs(sent))
                or (asks_who and not agent)
            ):
                score *= NO_VARIABLE
            if best_share > 0:
                score *= OFF_SUBJECT + (1 - OFF_SUBJECT) * shares[ev.index] / best_share
            keys = frozenset(k for k in qterms if k in sb)
            out.append(_Candidate(score, order, ev.index, sent, keys, topic > 0, refers_back))
    out.sort(key=lambda c: (-c.score, c.order))
    return out


#: The words a version number says ("version", "release").
_VERSION_STEMS = frozenset(stem(w) for w in VERSION_KINDS)
#: "Which release / what version / in which version ...?": the answer is a version.
_VERSION_Q_RE = re.compile(r"\b(?:which|what)\s+(?:[\w.-]+\s+){0,2}?(?:version|release)s?\b", re.IGNORECASE)


def _heading_version(ev: Evidence, asked: frozenset[str]) -> str:
    """The innermost heading of the chunk that names a version the question
    does not ("v2.14.0 (2026-10-08)" over "This release drops ..."), or ""."""
    for part in reversed(ev.heading.split(">")):
        found = set(exact_terms(part).versions)
        if found and not found & asked:
            return part.strip()
    return ""


def generate(inputs: GenerateInputs) -> GenerateOut:
    """Grounded/strict: 1-3 quoted evidence sentences, each cited [n]; direct:
    small talk, arithmetic, or an honest "I don't know"."""
    lang = answer_language(inputs.question)
    if inputs.mode == "direct":
        return GenerateOut(answer=direct_reply(inputs.question.strip(), lang))
    strict = inputs.mode == "strict"
    # "Who ... instead of the default X?": X is what the answer is not, so its
    # words neither pick nor make the subject of the quoted sentences.
    question = without_excluded(
        without_examples(without_idioms(effective_question(inputs.question, inputs.history)))
    )
    qterms = terms(question)
    qexact = exact_terms(question).all
    candidates = _candidates(inputs, question)
    subject = subject_names(question, inputs.evidence)
    shares = {e.index: subject_share(subject, e) for e in inputs.evidence}
    # "Which aiohttp version ...?" is answered by the first version the
    # question does not hold, as "how many" is by the first number.
    wants_number = bool(QUANTITY_Q_RE.search(question)) or bool(_VERSION_Q_RE.search(question))
    asks_names = wants_names(question)
    # "Who ...?" asks for names too: a further sentence of the same passage
    # naming someone new ("Instead, it is the copyright of the IPython
    # Development Team.") finishes what it says. Another passage's names are
    # someone in another role ("In 2011, X stepped down as lead developer").
    asks_who = bool(WHO_Q_RE.match(question))
    how_to = bool(HOW_TO_Q_RE.search(question))
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
            wants_number and not numbers and bool(set(cx.numbers) - qexact)
        )
        cnames = listed_names(cand.text, question)
        named = len(cnames - names) >= 2
        same_passage = bool(chosen) and cand.index == chosen[0].index
        novel = novel or (asks_names and named) or (asks_who and named and same_passage)
        # The section whose heading the question names is quoted at least once.
        novel = novel or (cand.on_topic and not any(c.on_topic for c in chosen))
        if chosen and gain < 0.1 and not novel:
            continue
        if chosen and cand.score < ADDED_SHARE * chosen[0].score:
            continue  # a further quote must answer nearly as well as the first
        if chosen and shares.get(cand.index, 1.0) < shares.get(chosen[0].index, 1.0):
            continue  # ... and come from evidence as much about the question's subject
        if strict and not (cand.keys or (qexact & cx.all)):
            continue
        chosen.append(cand)
        covered |= cand.keys
        numbers |= set(cx.numbers)
        names |= cnames
    if not chosen:
        return GenerateOut(answer=(NO_INFO if strict else NOT_FOUND)[lang])
    # A sentence that points back at the best one ("This is no longer
    # necessary.") finishes what it says: quoted with it, whatever its own
    # score. Only the best one's: the others are there to add, not to be finished.
    lead = chosen[0]
    nxt = next((c for c in candidates if c.order == lead.order + 1), None)
    # So does, for "What is the default X?" answered by X's description, the
    # next sentence of the entry when it labels the default, as parameter
    # references write it ("... for speed estimates. Ranges from 0 to 1 [default: 0.3].").
    labels_default = (
        nxt is not None
        and bool(_DEFAULT_RE.search(question))
        and not _DEFAULT_RE.search(lead.text)
        and bool(_DEFAULT_LABEL_RE.search(nxt.text))
    )
    if (
        nxt is not None
        and (nxt.refers_back or labels_default)
        and nxt.index == lead.index
        and nxt not in chosen
    ):
        chosen.append(nxt)
    # A how-to answered by a description of the problem ("This will cause a
    # ResourceWarning ...") gains the best sentence of the same passage that
    # tells the reader what to do ("you can set run_close_loop=True ...").
    if how_to and not any(addresses_reader(c.text) for c in chosen):
        todo = next(
            (
                c
                for c in candidates
                if c not in chosen
                and c.index == lead.index
                and c.score >= threshold
                and addresses_reader(c.text)
            ),
            None,
        )
        if todo is not None:
            chosen.append(todo)
    # "Why ...?" answered only by what happened ("No changes since 2.8.0."):
    # the reason is often the next sentence, which does not point back
    # ("Version bumped to stay in lockstep with httpx2."). The best such
    # reason, after a sentence that answers nearly as well as the best one,
    # is quoted too.
    if _WHY_Q_RE.match(question) and not any(_CAUSE_RE.search(c.text) for c in chosen):
        by_order = {c.order: c for c in candidates}
        floor = ADDED_SHARE * lead.score
        reason = next(
            (
                c
                for c in candidates
                if c not in chosen
                and _CAUSE_RE.search(c.text)
                and (before := by_order.get(c.order - 1)) is not None
                and before.index == c.index
                and before.score >= floor
            ),
            None,
        )
        if reason is not None:
            chosen.append(reason)
    # "Why ...?" answered by a sentence that restates the event asked about
    # (most of the question's words), with no reason found: expository text
    # states, then explains, so the next sentence of the same paragraph is
    # the likeliest reason ("Replaced the optional mypyc build with Cython
    # extensions ... The previous engine (mypyc) started to hit rough limit ...").
    restates = sum(qterms[k] for k in lead.keys) >= 0.5 * sum(qterms.values())
    if _WHY_Q_RE.match(question) and restates and not any(_gives_reason(qterms, c.text) for c in chosen):
        nxt = next((c for c in candidates if c.order == lead.order + 1), None)
        ev_text = next((readable(e.text) for e in inputs.evidence if e.index == lead.index), "")
        if nxt is not None and nxt not in chosen and nxt.index == lead.index and _run_on(lead, nxt, ev_text):
            chosen.append(nxt)
    # "Why ...?" answered by a consequence ("Therefore you have to import
    # from _x.", "These types therefore use ..."): the reason is the sentence
    # it follows from, quoted with it, and the one before that when the
    # reason itself points back ("Relaxing this restriction would be ...").
    if _WHY_Q_RE.match(question) and _CONSEQUENCE_RE.match(lead.text):
        at = lead
        for _ in range(2):
            before = next((c for c in candidates if c.order == at.order - 1), None)
            if before is None or before.index != lead.index or before in chosen:
                break
            chosen.append(before)
            if not _POINTS_BACK_RE.match(before.text):
                break
            at = before
    # A version question answered by a sentence that names no version ("This
    # release drops support for 3.9"): the release is the section's heading,
    # which the sentence points at. It goes before the quote. So for a
    # when-question answered by a change with no time but the question's own
    # numbers ("Removed support for Python 3.8 and 3.9"): its release says when.
    label: dict[int, str] = {}
    undated = WHEN_Q_RE.search(question) and not any(gives_time(c.text, question) for c in chosen)
    if undated or (
        _VERSION_Q_RE.search(question) and not any(set(exact_terms(c.text).versions) - qexact for c in chosen)
    ):
        evidence = {e.index: e for e in inputs.evidence}
        lead_ev = evidence.get(lead.index)
        if lead_ev is not None and (heading := _heading_version(lead_ev, qexact)):
            label[lead.order] = heading
    # Quote in document order so the answer reads as the documents do.
    chosen.sort(key=lambda c: c.order)
    joiner = "" if lang == "zh" else " "
    parts: list[str] = []
    previous = ""
    for c in chosen:
        quote = _cite(c.text, c.index)
        if c.order in label:
            quote = f"{label[c.order]}: {quote}"
        # A list item has no closing punctuation: its own line keeps it one claim.
        unended = not previous.rstrip().endswith(tuple(".!?。！？"))
        if parts and unended:
            parts.append("\n" + quote)
        else:
            parts.append(joiner + quote if parts else quote)
        previous = c.text
    return GenerateOut(answer="".join(parts))


#: A question about a default or a sentence that says one, and the label a
#: parameter reference puts after an entry ("[default: 0.3]", "(default=10)").
_DEFAULT_RE = re.compile(r"\bdefault(?:s|ed)?\b", re.IGNORECASE)
_DEFAULT_LABEL_RE = re.compile(r"[\[(]\s*default\s*[:=]\s*[^\])\s][^\])]*[\])]", re.IGNORECASE)

#: A why-question, and a sentence that opens as the consequence of the one
#: before it (its reason).
_WHY_Q_RE = re.compile(r"^\s*why\b", re.IGNORECASE)
_CONSEQUENCE_RE = re.compile(
    r"^\s*(?:therefore|thus|hence|consequently|accordingly|as a result|for this reason|"
    r"(?:this|that) is why|so(?=\s*,|\s+(?:you|we|it|they|the|this|that)\b)|"
    # ... or after a short subject: "These types therefore use ...", "It thus needs ..."
    r"(?:[\w'-]+\s+){1,3}?(?:therefore|thus|hence|consequently)(?=\s+[a-z]))\b",
    re.IGNORECASE,
)
#: A sentence that gives a reason: a causal connective ("because", "due to",
#: "since it ...") or a purpose ("so that", "in order to", "to avoid ...",
#: "to stay in lockstep ...").
_CAUSE_RE = re.compile(
    r"\b(?:because|due to|owing to|caused by|thanks to|as a result of|so that|in order to|so as to|"
    r"since(?=\s+(?:it|they|we|you|he|she|the|this|that|these|those|there|its|their)\b)|"
    r"to (?:avoid|prevent|ensure|stay|keep|remain|protect|guarantee|reduce))\b",
    re.IGNORECASE,
)
#: A purpose infinitive after a participle: "written initially to support ...",
#: "designed to ..." (not "the last version of X to support ...").
_PURPOSE_AFTER_RE = re.compile(
    r"\b([a-z]{2,}(?:ed|en)|built|made|meant)\s+(?:[a-z]+ly\s+)?to\s+[a-z]{2,}", re.IGNORECASE
)


def _purpose_of(qterms: Mapping[str, float], sentence: str) -> bool:
    """The sentence gives the purpose of the question's own verb ("Why was X
    written?" -> "it was written initially to support ...")."""
    return any(stem(m.group(1).lower()) in qterms for m in _PURPOSE_AFTER_RE.finditer(sentence))


#: A sentence whose opening words point at the one before it: "This is ...",
#: "Relaxing this restriction ...", "Because of these limits, ...". ("that" is left
#: out: "We found that the ..." opens a clause, not a pointer.)
_POINTS_BACK_RE = re.compile(r"^\s*(?:[\w'-]+\s+){0,2}?(?:this|these|those|such)\s+[a-z]", re.IGNORECASE)


def _gives_reason(qterms: Mapping[str, float], sentence: str) -> bool:
    return bool(_CAUSE_RE.search(sentence)) or _purpose_of(qterms, sentence)


def _run_on(first: _Candidate, second: _Candidate, text: str) -> bool:
    """``second`` follows ``first`` in one paragraph of ``text`` (no line break between)."""
    at = text.find(first.text.rstrip(".:;!?"))
    return at >= 0 and text[at + len(first.text) :].lstrip(" \t").startswith(second.text[:20])


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
