"""The generate role: extractive answers quoted and cited, or a direct reply.

    lexical <- phrases <- question <- relevance <- evidence <- assess | generate <- verify <- model
                                                                        ^^^^^^^^ here: imports
                                                                        lexical, surface, phrases,
                                                                        question, evidence.

    GenerateInputs -> direct: greeting / thanks / arithmetic (phrases) / "I don't know"
                   -> grounded/strict: effective question (question.effective_question),
                      without a "... instead of X" clause (question.without_excluded)
                      -> every evidence sentence scored (_candidates): coverage,
                         heading on topic, word pairs, exact terms, answer type
                         (number, date, names), negation, language, precision;
                         chunk text (clean: selfrag_nb.cleantext) read through
                         surface.readable (table rows as sentences, header rows
                         dropped, control characters removed), whole sentences
                         only (_quotable: no code, heading, name or fragment;
                         a bracketed remark kept with its sentence; a lead-in
                         whose items are gone is a statement; a lead-in with
                         its short items is one, "X:" a, b, c, when the
                         question asks for several things, and one with its
                         short code block, "... using: `cmd`.", for a how-to),
                         injections, lead-ins and ``avoid`` never quoted,
                         superseded evidence scored lower
                      -> 1-3 (strict: 1-2) sentences that add something, and
                         the sentence after the best one when it points back
                         at it ("This is no longer necessary."), in document
                         order, each cited [n]; a version question answered
                         without a version gets the chunk's heading that names
                         one ("v2.14.0 (2026-10-08): This release drops ...")
                      -> none: NO_INFO (strict) / NOT_FOUND (grounded)

Heuristics and bonuses: ``docs/offline_model.md`` (generate).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass

from selfrag_nb.codelines import FENCE_RE, ITEM_RE, lines
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
from selfrag_nb.llm.offline.phrases import arithmetic, format_number, social_kind
from selfrag_nb.llm.offline.question import (
    DATE_Q_RE,
    DATE_RE_ANY,
    HOW_TO_Q_RE,
    PURPOSE_Q_RE,
    PURPOSE_RE,
    QUANTITY_Q_RE,
    answer_language,
    effective_question,
    without_excluded,
)
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
    r"^\s*(?:which|what)\s+(?:[\w\-]+\s+){0,2}?[\w\-]+s\s+(?:are|were|do|does|did|can|is|has|have)\b|^\s*哪些",
    re.IGNORECASE,
)
_NAMES_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z0-9]+")
#: A second or third quote scores at least this share of the first one's.
ADDED_SHARE = 0.6
#: Factor for a sentence in another language than the question.
OTHER_LANGUAGE = 0.8
#: Factor for a sentence from evidence that mentions none of what the question
#: names, while other evidence does (scaled by the share it mentions).
OFF_SUBJECT = 0.4


#: A sentence that ends: closing punctuation, then closing quotes or brackets.
_ENDED_RE = re.compile(r"[.!?。！？；…][\"'”’)\]）」』]*$")


_TERM_DASH_RE = re.compile(r"\s(?:--|—|–|\|)\s")


def _prose(line: str) -> bool:
    """A whole line of prose without a full stop ("Library to resolve JSON
    Pointers according to RFC 6901"): six words or more, mostly lower-case
    after the first. A title capitalises its words; a fragment is short."""
    if _TERM_DASH_RE.search(line):
        return False  # "Platform details -- default paths": a term and its gloss
    words = line.split()
    rest = [w for w in words[1:] if w[:1].isalpha()]
    return len(words) >= 6 and bool(rest) and sum(w[:1].islower() for w in rest) / len(rest) >= 0.5


#: A sentence that opens by pointing back at the one before it: its subject
#: is that sentence's ("Older versions required X. This is no longer necessary.").
_REFERS_BACK_RE = re.compile(r"^(?:this|that|these|those|it|they|such)\b(?!\s*[:=(])", re.IGNORECASE)


def _bracketed(said: list[str]) -> list[str]:
    """Sentences of one line with a bracket kept whole: a remark in brackets
    after a full stop belongs to the sentence before it ("wsproto - WebSocket
    support. (Optional, with httpx2[ws])"), and a sentence does not end
    inside brackets ("(Optional. On 3.14+ it installs nothing.)")."""
    out: list[str] = []
    for sent in said:
        open_before = bool(out) and out[-1].count("(") > out[-1].count(")")
        if out and (open_before or sent.lstrip().startswith("(")):
            out[-1] = f"{out[-1]} {sent}"
        else:
            out.append(sent)
    return out


def _table_leads(text: str) -> set[str]:
    """Lines of ``text`` that end with ":" and introduce a table: its rows
    are the lead-in's items once ``surface.readable`` turns them into sentences."""
    rows = [ln.strip() for ln in text.split("\n") if ln.strip()]
    return {a for a, b in itertools.pairwise(rows) if a.endswith((":", "：")) and b.startswith("|")}


#: A lead-in whose last conjunct points at the items that follow
#: ("... and supports the following platforms:").
_LEAD_CONJUNCT_RE = re.compile(
    r"^(?P<first>.{12,}?)\s+and\s+(?:[\w-]+\s+){0,3}?(?:the\s+following|these|as\s+follows|below)\b[^.!?]*:\s*$",
    re.IGNORECASE,
)


def _first_conjunct(sentence: str) -> str:
    """The statement before "and" in a lead-in whose second conjunct
    announces the list ("X requires Python 3.10 and supports the following
    platforms:" -> "X requires Python 3.10."), or ""."""
    m = _LEAD_CONJUNCT_RE.match(sentence.strip())
    if m is None:
        return ""
    return m.group("first").rstrip(" ,;") + "."


#: The question asks for several things of a kind ("Which language servers
#: ...?", "What are ...?"): a plural noun after which/what, not an auxiliary
#: ("does"), a possessive or a noun that only ends in s ("process", "status").
_SEVERAL_RE = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w\-]+\s+){0,3}?(?!(?:does|has|this|its)\b)[a-z][\w\-]*[a-hj-rtv-z]s\b"
    r"(?!\s+of\b)(?!['’])|^\s*what\s+are\b|^\s*哪些",
    re.IGNORECASE,
)
#: A list read with its lead-in: between two and this many items, each a
#: phrase or one sentence of at most _ITEM_WORDS_MAX words.
LIST_ITEMS_MAX = 12
_ITEM_WORDS_MAX = 30


def _with_items(lead: str, rest: list[tuple[str, str]]) -> str:
    """A lead-in ending with ":" read with the list items right after it,
    as one sentence ("Formats: a, b and c."), or "" when it has no such
    list. Only items that are a phrase or one sentence of up to
    _ITEM_WORDS_MAX words are gathered: a list of longer items is quoted item
    by item, and "term -- what it is" items (a table of contents) are not
    instances of anything."""
    if not lead.rstrip().endswith(":"):
        return ""
    items: list[str] = []
    for kind, line in rest:
        if kind != "item" or len(items) > LIST_ITEMS_MAX:
            break
        m = ITEM_RE.match(line)
        item = line[m.end() :].strip().rstrip(".;,") if m else ""
        if not item or len(tokenize(item)) > _ITEM_WORDS_MAX or len(sentences(item)) > 1:
            return ""
        if _TERM_DASH_RE.search(item):
            return ""  # "Guides -- recipes for ...": a table of contents, not instances
        items.append(item)
    if not 2 <= len(items) <= LIST_ITEMS_MAX:
        return ""
    sep = "; " if any("," in i for i in items) else ", "
    return f"{lead.rstrip()} {sep.join(items)}."


#: Code read with its lead-in: at most this many commands and characters.
CODE_LINES_MAX = 4
CODE_CHARS_MAX = 240
_CODE_PROMPT_RE = re.compile(r"^\s*(?:\$|>>>|\.\.\.)(?:\s+|$)")


def _with_code(lead: str, rest: list[tuple[str, str]]) -> str:
    """A lead-in ending with ":" read with the code block right after it, as
    one sentence ("... is installed using: `env X=1 pip install y`."), or ""
    when no short block follows. Shell and REPL prompts are dropped; when a
    block has prompts, the lines without one are output and are dropped too;
    a line ending in a backslash continues on the next."""
    if not lead.rstrip().endswith(":"):
        return ""
    block: list[str] = []
    for kind, line in rest:
        if kind != "code":
            break
        if FENCE_RE.match(line):
            if block:
                break  # the closing fence
            continue
        block.append(line.strip())
    commands: list[str] = []
    for ln in (ln for ln in block if ln):
        if commands and commands[-1].endswith("\\"):
            commands[-1] = f"{commands[-1][:-1].rstrip()} {ln}"
        else:
            commands.append(ln)
    if any(_CODE_PROMPT_RE.match(c) for c in commands):
        commands = [_CODE_PROMPT_RE.sub("", c, count=1) for c in commands if _CODE_PROMPT_RE.match(c)]
    code = "; ".join(commands)
    if not commands or len(commands) > CODE_LINES_MAX or len(code) > CODE_CHARS_MAX or "`" in code:
        return ""
    return f"{lead.rstrip()} `{code}`."


def listed(text: str) -> list[str]:
    """Every lead-in of clean chunk text read with its list ("Formats: a, b
    and c.") or its code ("... using: `pip install x`."): what verify reads
    as one evidence sentence, as generate quotes it."""
    found = lines(text)
    out: list[str] = []
    for n, (kind, line) in enumerate(found):
        said = sentences(line) if kind != "code" else []
        for read in (_with_items, _with_code):
            if said and (joined := read(said[-1], found[n + 1 :])):
                out.append(joined)
    return out


def _quotable(
    text: str,
    table_leads: frozenset[str] | set[str] = frozenset(),
    *,
    several: bool = False,
    how_to: bool = False,
) -> list[tuple[str, bool]]:
    """The sentences of clean chunk text an answer may quote: whole ones,
    each with whether it points back at the quotable sentence right before
    it in the same paragraph (``_REFERS_BACK_RE``). Code (fenced blocks,
    prompts, imports, commands) never; a piece without closing punctuation
    (a heading, a caption, a name, the end of a chunk cut mid-sentence) only
    as a list item of three words or more, or a whole line of prose (``_prose``).
    ``several`` (the question asks for several things): a lead-in read with
    its list items is quotable too, as one sentence (``_with_items``);
    ``how_to``: a lead-in read with its code block (``_with_code``)."""
    out: list[tuple[str, bool]] = []
    found = lines(text)
    for n, (kind, line) in enumerate(found):
        if kind == "code":
            continue
        previous = False  # the sentence before, in this line, was quotable
        said = sentences(line)
        if (
            said
            and said[-1].rstrip().endswith((":", "："))
            and n + 1 < len(found)
            and found[n + 1][0] == "text"
            and line.strip() not in table_leads
        ):
            # A lead-in whose items, code or figure are not there (a paragraph
            # follows: the picture was markup) says what it says by itself:
            # "X is 3-6x faster than a comparable tokeniser:" is a statement.
            said[-1] = said[-1].rstrip()[:-1] + ("。" if said[-1].rstrip().endswith("：") else ".")
        # "There are a few language servers that use Jedi:" over a list of
        # names: the lead-in and its items are one statement, the answer to
        # "Which language servers use Jedi?" (one item is not).
        with_items = _with_items(said[-1], found[n + 1 :]) if said and several else ""
        # "... can be disabled if it is installed using:" over a command: the
        # lead-in and its command are the answer to "How do I ...?".
        with_code = _with_code(said[-1], found[n + 1 :]) if said and how_to else ""
        if said and (first := _first_conjunct(said[-1])):
            # "X requires 3.10 or later and supports the following:": only
            # the second conjunct points at the items; the first is a statement.
            said[-1:] = [first]
        for sent in _bracketed(said):
            item = kind == "item" and len(tokenize(sent)) >= 3 and not _TERM_DASH_RE.search(sent)
            if _ENDED_RE.search(sent) or item or _prose(sent):
                out.append((sent, previous and bool(_REFERS_BACK_RE.match(sent))))
                previous = True
            else:
                previous = False
        out.extend((joined, False) for joined in (with_items, with_code) if joined)
    return out


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
    lead = _quotable(text)
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
    negative_q = has_negation(question)
    wants_names = bool(_WHICH_RE.match(question))
    several = bool(_SEVERAL_RE.match(question))
    how_to = bool(HOW_TO_Q_RE.search(question))
    definition = defines(question)
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
        header = bag(f"{ev.title} {ev.heading}")
        stale = evidence_status(ev) == "superseded" and any_current
        topic = HEADING_BONUS * _heading_on_topic(ev, qbag)
        lead = _title_lead(ev, defined) if defined else ""
        # Tables arrive as one sentence per row and without control characters,
        # so no raw "| a | b |" markup or terminal escape reaches an answer;
        # only whole sentences of text are candidates (_quotable).
        quotable = _quotable(readable(ev.text), _table_leads(ev.text), several=several, how_to=how_to)
        if value := heading_value(ev):
            quotable = [(value, False), *quotable]
        for sent, refers_back in quotable:
            order += 1
            if looks_like_injection(sent) or (inputs.avoid and _similar(sent, inputs.avoid)):
                continue
            # A lead-in ("... you can claim a credit:") says nothing by itself;
            # the items that follow are candidates of their own.
            if sent.rstrip().endswith((":", "：")):
                continue
            # The lead under the title X is read with its title: it is about X
            # without naming it ("CFFI" / "Foreign Function Interface for ...").
            sb = bag(f"{sent} {defined}" if lead and sent == lead else sent)
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
            if wants_date and DATE_RE_ANY.search(sent):
                score += ANSWER_TYPE_BONUS
            if wants_purpose and PURPOSE_RE.search(sent):
                score += ANSWER_TYPE_BONUS  # "It is intended to be a fallback ..." says what X is for
            if negative_q and has_negation(sent):
                score += NEGATION_BONUS
            if wants_names and len(_NAMES_RE.findall(sent)) >= 2:
                score += ANSWER_TYPE_BONUS
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
            if best_share > 0:
                score *= OFF_SUBJECT + (1 - OFF_SUBJECT) * shares[ev.index] / best_share
            keys = frozenset(k for k in qterms if k in sb)
            out.append(_Candidate(score, order, ev.index, sent, keys, topic > 0, refers_back))
    out.sort(key=lambda c: (-c.score, c.order))
    return out


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
        return GenerateOut(answer=_direct(inputs.question.strip(), lang))
    strict = inputs.mode == "strict"
    # "Who ... instead of the default X?": X is what the answer is not, so its
    # words neither pick nor make the subject of the quoted sentences.
    question = without_excluded(effective_question(inputs.question, inputs.history))
    qterms = terms(question)
    qexact = exact_terms(question).all
    candidates = _candidates(inputs, question)
    subject = subject_names(question, inputs.evidence)
    shares = {e.index: subject_share(subject, e) for e in inputs.evidence}
    wants_number = bool(QUANTITY_Q_RE.search(question))
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
    if nxt is not None and nxt.refers_back and nxt.index == lead.index and nxt not in chosen:
        chosen.append(nxt)
    # A version question answered by a sentence that names no version ("This
    # release drops support for 3.9"): the release is the section's heading,
    # which the sentence points at. It goes before the quote.
    label: dict[int, str] = {}
    if _VERSION_Q_RE.search(question) and not any(set(exact_terms(c.text).versions) - qexact for c in chosen):
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
