"""The usefulness role: does the answer answer the question that was asked?

    lexical <- phrases <- question <- ... <- answer_kind <- usefulness <- model
                                                            ^^^^^^^^^^ here (layer 8):
                                             imports lexical, abbrev, phrases, question,
                                             subject, answer_kind (the answer types).

    UsefulnessInputs(question, answer, history)
      -> answer without [n] markers; empty                        -> no
      -> small talk / arithmetic question                         -> yes when a reply / a number is given
      -> form: lines that are JSON, markup or code are set aside (how-to
         questions may be answered by a command); nothing else left, or the
         rest a fragment cut mid-sentence, a bare name, only
         questions, or a word or two the question holds           -> no
      -> the answer says the documents hold no answer             -> no
      -> a question asking for an environment variable and no variable's
         name ("QUILL_LOG_SCOPE", "$HOME")                          -> no
      -> "what does X stand for" and no capitalised words X's letters begin
         (abbrev.expansion_of: "Command Line Interface Creation Kit")  -> no
      -> a how-to question and no instruction (imperative, "you can",
         "by <doing>", something to type); English answers only  -> no
      -> "what is X for / meant for / the purpose of X" and no intent,
         use or goal ("intended", "used to", "for <doing>", "so that")  -> no
      -> answer type: "how many / how long / 多少" or a timeout, an interval,
         a delay, a measure ("What throughput ...?") or a quantity ("the maximum
         ...") asked for needs a number, not one inside a name it holds ("how many
         <things>": next to their name, which it counts; a percentage counts
         nothing), "when / 何时" a date, digits or a time word (not the
         question's own numbers), "where" a place (a locative preposition, an
         address, a place noun, a name the question does not hold), "who" a
         name the question does not hold (capitalised,
         or by its form: "xeus-python") next to the question's verb or an agent word
         ("by", "author"), or set off by a comma after a role noun ("the author of
         X, Ada Lovelace"), "what / which <kind>" or "what is the ... version" a thing
         of that kind: the kind's word (or a CamelCase name ending on it: "...Mixin"), a version number for a version
         (which then says the word "version" for coverage; not another
         thing's: "Python 3.15"; for "Which OpenSSL versions" not after
         another name: "PyPy3 7.3"),
         a name where the question's preposition points ("written in
         Rust"), any name for a project or a person              -> no when absent
      -> another thing: the answer opens with a name by form the question
         does not hold and misses its names ("The API is ..." is the
         document's own); or its figures are all for a case the question
         rules out ("(not free-threaded)"; a negated verb rules nothing out) -> no
      -> subject: the question's named things (phrases.entities), a who / which / what
         question read without its "instead of X" clause (question.without_excluded: X
         is what the answer is not) and without the examples it lists
         (question.without_examples: "such as len or sorted"), a name written apart as written together
         (lexical.joined_words), coverage of its content terms (frame words such as
         "purpose" or "mean" say what kind of answer, not what it is about: left out)
           named thing absent, or code / markup lines beside prose -> partly
           coverage >= 0.5 -> yes, else partly (a lexical judge cannot
           tell a paraphrase from a miss: never a confident "no" here)
      score: the verdict's band (80+ yes, 50-79 partly, < 50 no), placed
      inside the band by coverage

Only general properties of questions and answers are used: what kind of
answer a question word asks for, what a sentence, a code line or markup looks
like. The judge reads the question and the answer, never the documents:
whether the answer is supported is the verify role's question.
"""

from __future__ import annotations

import json
import re

from selfrag_nb.codelines import ITEM_RE, code_line
from selfrag_nb.llm.offline import lexical
from selfrag_nb.llm.offline.abbrev import expansion_of
from selfrag_nb.llm.offline.answer_kind import (
    FORMED_NAME_RE,
    HOW_MANY_RE,
    NUMBER_RE,
    VERSION_KINDS,
    WHERE_Q_RE,
    WHO_Q_RE,
    asked_head,
    counted,
    counts,
    gives_place,
    instructs,
    names_agent,
    names_kind,
    names_variable,
    spelled,
    stem_prefix,
    words_of,
)
from selfrag_nb.llm.offline.lexical import (
    SOFTWARE_KIND_STEMS,
    STOP_EN,
    bag,
    coverage,
    defined_name,
    stem,
    strip_citations,
    terms,
    wordset,
)
from selfrag_nb.llm.offline.phrases import arithmetic, entities, social_kind
from selfrag_nb.llm.offline.question import (
    DURATION_Q_RE,
    HOW_TO_Q_RE,
    PURPOSE_Q_RE,
    PURPOSE_RE,
    QUANTITY_Q_RE,
    WHEN_Q_RE,
    answer_language,
    effective_question,
    gives_time,
    without_examples,
    without_excluded,
    without_idioms,
)
from selfrag_nb.llm.offline.subject import subject_names
from selfrag_nb.llm.schemas import UsefulnessInputs, UsefulnessOut
from selfrag_nb.text import is_cjk, split_sentences, tokenize

__all__ = ["usefulness"]

#: The question asks explicitly for an amount or a duration.
_NUMBER_Q_RE = re.compile(r"\bhow (?:many|much|long|often|old)\b|多少|多久|几[个天次年月周]", re.IGNORECASE)
#: Nouns of measurement: "What shuffle throughput does the paper report?"
#: is answered by a figure, as "how many" is ("Exoshuffle: large-scale data
#: shuffle in Ray" names the paper, not its throughput).
_MEASURES = wordset(
    "throughput latency speed speedup bandwidth rate percentage ratio overhead accuracy score price cost factor"
)
_WHICH_Q_RE = re.compile(r"^\s*(?:which|who|what(?:'s| is) the name)\b|哪个|哪些|谁", re.IGNORECASE)


# Words that frame a question (what kind of answer it wants) rather than name
# its subject, and light verbs ("made", "get"): an answer rarely repeats them
# ("What is the purpose of X?" -> "X provides ..."). A property of English
# question language, not of a corpus.
_FRAME = frozenset(
    stem(w)
    for w in wordset(
        "purpose purposes mean means meaning meant difference differences differ kind kinds type types "
        "main mainly describe explain happen happens exist exists possible recommended recommend work "
        "works name named example examples information info details detail function role "
        "goal goals idea reason reasons often make makes made give gives given take takes taken get gets got "
        "come comes put puts stand stands"
    )
)

# Form: what is not a statement, whatever the question.
_HTML_RE = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>|&(?:[a-z]{2,8}|#\d{2,5});")
_MD_MARKUP_RE = re.compile(r"!\[[^\]]*\]|\]\[[^\]]*\]|\]\((?:https?:|/|#)|^\s*\.\. [a-z-]+::|:[a-z]+:`", re.M)
_JSON_OBJECT_RE = re.compile(r'\{\s*"[^"\n]{1,40}"\s*:')
_CODE_CHARS = frozenset("{}[]()<>=;:$`|\\/_*#@")
# A sentence ends mid-way when its last word binds to something that follows.
_DANGLING_EN = wordset(
    "a an the of to in on at for from by with and or but nor as than that which who whom whose "
    "where when while if because so is are was were be been being has have had do does did can "
    "could would should will shall may might must not no very more most its their our your his "
    "her my this these those such into onto upon about via per like including e.g i.e"
)
_TERMINAL = ".。!！?？…)）\"”'’"
_ZH_DANGLING = "的了和与或及在把被将对从向给是"
# The answer says the documents hold no answer (the offline generator's and
# the strict prompt's own ways out, and the usual wording of models).
_NO_ANSWER_RE = re.compile(
    r"\b(?:documents?|sources?|context|information)\b[^.]{0,40}\b(?:do(?:es)? not|don't|doesn't|no)\b"
    r"[^.]{0,30}\b(?:contain|mention|say|cover|include|answer|relevant)|\bno relevant information\b|"
    r"\bI (?:cannot|can't|could not|couldn't) (?:find|answer|determine)|"
    r"没有相关信息|没有这个问题的答案|未提及|无法回答|找不到",
    re.IGNORECASE,
)


def _out(verdict: str, score: int, missing: str, reason: str) -> UsefulnessOut:
    return UsefulnessOut(verdict=verdict, score=max(0, min(100, score)), missing=missing, reason=reason)


def _line_problem(line: str, how_to: bool) -> str:
    """What one line of the answer is, when it is not prose ("" when it is)."""
    text = line.strip()
    if text.startswith(("{", "[")):
        try:
            json.loads(text)
            return "a JSON value"
        except ValueError:
            pass
    if _JSON_OBJECT_RE.search(text):
        return "a JSON wrapper"
    if _HTML_RE.search(text) or _MD_MARKUP_RE.search(text):
        return "document markup"
    letters = sum(c.isalpha() for c in text)
    symbols = sum(c in _CODE_CHARS for c in text)
    fence = text.startswith(("```", "~~~"))
    if not how_to and (fence or code_line(text) or (letters and symbols / letters > 0.4)):
        return "a code line"
    return ""


def _echo(answer: str, question: str) -> bool:
    """A short answer (one or two words) all of whose words the question holds."""
    words = words_of(strip_citations(answer)[0])
    asked = set(bag(question))
    return 0 < len(words) <= 2 and all(stem(w.lower().strip(".")) in asked for w in words)


def _form_problem(answer: str, which: bool) -> str:
    """What the prose of the answer is, when it is not a readable statement."""
    text = answer.strip()
    cjk = sum(is_cjk(c) for c in text)
    if cjk:
        stripped = text.rstrip(" 　")
        if cjk <= 3 and not which:
            return "a bare name"
        if stripped and stripped[-1] in _ZH_DANGLING:
            return "a sentence cut off in the middle"
        return ""
    words = words_of(text)
    if len(words) <= 2 and not which:
        return "a bare name"
    # A list item may close with ";" (an enumeration's items do): whole.
    item_end = text.rstrip().endswith(";") and ITEM_RE.match(text) is not None and "\n" not in text
    if (text.rstrip()[-1:] in ",;:-–—(/&" and not item_end) or (
        text.rstrip()[-1:] not in _TERMINAL and words and words[-1].lower().strip(".") in _DANGLING_EN
    ):
        return "a sentence cut off in the middle"
    if text.count("(") > text.count(")") or text.count("`") % 2 or text.count('"') % 2:
        return "a sentence cut off in the middle"
    sents = [x for x in split_sentences(strip_citations(text)[0]) if x.strip()]
    if sents and all(x.rstrip().endswith(("?", "？")) for x in sents):
        return "a question"  # a FAQ heading quoted back: it asks, it does not answer
    return ""


_LABEL_RE = re.compile(r"^\s*([A-Za-z][\w ]{0,30}?):\s+\S")


def _labelled_value(answer: str, question: str) -> bool:
    """ "License: MIT" for "What license ...?": a label naming the kind the
    question asks for, then its value (a section's heading over its one-line
    body reads so)."""
    m = _LABEL_RE.match(answer)
    head = asked_head(question)
    if m is None or not head:
        return False
    prefix = stem_prefix(stem(head))
    return any(w.startswith(prefix) for w in bag(m.group(1)))


def _other_subject(answer: str, question: str) -> str:
    """The name the answer opens with, when it is a name by its form and the
    question does not hold it ("pyzmq-2.1.11 was the last version ..." to a
    question about pyca/cryptography): the sentence is about that thing."""
    # The sentence's subject: its first word, or the word after a
    # determiner ("The AWS SDK ..."). A label's value ("License: MIT") is not.
    words = answer.strip().split()[:3]
    if len(words) >= 2 and words[0].lower() in _DETERMINERS:
        if words[1].isupper() and len(words) == 3 and words[2][:1].islower():
            return ""  # "The API is designed ...": an acronym as a common noun, the document's own
        words = words[1:]
    first = words[0].rstrip(".,;:") if words and not words[0].endswith(":") else ""
    # "An 8-bit floating point type ...": a number and its unit describe; they name nothing.
    if not FORMED_NAME_RE.match(first) or _MEASURE_RE.match(first):
        return ""
    asked = set(bag(question))
    return "" if any(k in asked for k in bag(first)) else first


#: A number joined to its unit: "8-bit", "64-bit", "2-factor", "3.5-inch".
_MEASURE_RE = re.compile(r"^\d[\d.]*-[A-Za-z]+$")
#: Words before a noun that make it definite or a demonstrative: "The AWS SDK".
_DETERMINERS = wordset("the a an this that these those its their")
#: "(not free-threaded)", "non-Windows", "other than Linux", "except macOS":
#: a case the question leaves out.
_EXCLUDED_RE = re.compile(
    r"\b(?:not|non-|other than|except(?: for)?|excluding)\s*([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)",
    re.IGNORECASE,
)
_CASE_BEFORE_NOT_RE = re.compile(
    r"(?:[(,]|\b(?:a|an|the|on|in|for|with|of|at|to|from|by|and|or|but))\s*$", re.IGNORECASE
)


#: A figure standing alone ("3.20", "4.4.1"), not the digit of a name ("argon2").
_FIGURE_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?!\w)")


def _excluded_case(answer: str, question: str) -> str:
    """The case the question excludes, when the answer speaks of it and every
    figure the answer gives stands in a sentence about it ("On free-threaded
    CPython ... CMake 4.4.1" to "on a regular (not free-threaded) CPython"):
    the answer is about what was ruled out ("" otherwise)."""
    # "not" after a verb's auxiliary or subject negates the verb ("Why might
    # I still not see ...?"), not a case: a case is ruled out in brackets,
    # after a comma, or inside a noun phrase ("on a regular (not free-threaded) CPython").
    found = [
        m.group(1)
        for m in _EXCLUDED_RE.finditer(question)
        if not m.group(0).lower().startswith("not") or _CASE_BEFORE_NOT_RE.search(question[: m.start()])
    ]
    cases = [c for c in found if c.split()[0].lower() not in STOP_EN]
    if not cases:
        return ""
    sents = [x for x in split_sentences(answer) if words_of(x)]
    for case in cases:
        keys = [stem(w.lower()) for w in words_of(case)]
        scoped = [x for x in sents if all(k in bag(x) for k in keys) and not _EXCLUDED_RE.search(x)]
        # The figures the answer gives are all for the excluded case: nothing
        # else in it states a number for the case asked about.
        rest = [x for x in sents if x not in scoped]
        if scoped and not any(_FIGURE_RE.search(x) for x in rest):
            return case
    return ""


def _subject(question: str) -> tuple[dict[str, float], list[str]]:
    """(content terms without frame words, the question's named things)."""
    # "What is the X library?": the kind classifies X, and a definition of X
    # ("An implementation-agnostic implementation of ...") seldom repeats it.
    frame = _FRAME | SOFTWARE_KIND_STEMS if defined_name(question) else _FRAME
    qterms = {k: w for k, w in terms(question).items() if k not in frame}
    named = [e.text for e in entities(question) if e.rank <= 2]
    return qterms, named


def _surface(keys: list[str], question: str) -> str:
    """Stemmed keys as the question spells them ("licens" -> "license")."""
    spelled: dict[str, str] = {}
    for tok in tokenize(question):
        spelled.setdefault(stem(tok), tok)
    return ", ".join(spelled.get(k, k) for k in keys)


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def usefulness(inputs: UsefulnessInputs) -> UsefulnessOut:
    zh = answer_language(inputs.question) == "zh"
    answer, _ = strip_citations(inputs.answer)
    question = effective_question(inputs.question, inputs.history)
    asked = _short(question)
    if not answer.strip():
        return _out("no", 0, f"an answer to: {asked}", "the answer is empty")
    kind, rest = social_kind(question)
    calc = arithmetic(rest if kind is not None else question) if (rest or kind is None) else None
    if kind is not None and not rest:
        return _out("yes", 90, "", "small talk: any friendly reply answers it")
    if calc is not None:
        if NUMBER_RE.search(answer) or calc.value is None:
            return _out("yes", 90, "", "the arithmetic question gets a result")
        return _out("no", 10, "the result of the calculation", "the answer gives no number")
    how_to = bool(HOW_TO_Q_RE.search(question))
    which = bool(_WHICH_Q_RE.search(question))
    # Lines that are not prose (code, JSON, markup) answer nothing; the
    # rest is judged, and an answer that carries such lines is at most partly useful.
    junk = [p for p in (_line_problem(ln, how_to) for ln in answer.splitlines() if ln.strip()) if p]
    prose = "\n".join(ln for ln in answer.splitlines() if ln.strip() and not _line_problem(ln, how_to))
    form = junk[0] if junk and not prose.strip() else _form_problem(prose, which)
    if not form and which and _echo(prose, question):
        # "Testing." for "Which packages does X need to run its tests?": a
        # word or two the question already holds names nothing asked for.
        form = "only words of the question"
    if form == "a bare name" and _labelled_value(prose, question):
        form = ""  # "License: MIT": a heading and its value, the kind asked for named
    if form:
        return _out("no", 10, f"a statement that answers: {asked}", f"the answer is {form}, not a statement")
    answer = prose
    if _NO_ANSWER_RE.search(answer):
        return _out("no", 5, f"an answer to: {asked}", "the answer says the documents do not answer it")
    if not names_variable(answer, question):
        return _out(
            "no",
            20,
            "the environment variable's name",
            "the question asks for an environment variable, and the answer names none",
        )
    # The verbs and modals below are English: a Chinese answer (a question
    # answered from Chinese documents) is not judged by them.
    if how_to and not zh and not any(is_cjk(c) for c in answer) and not instructs(answer):
        return _out(
            "no",
            20,
            "the step, command or option to use",
            "the question asks how to do something, and the answer gives no step, command or option",
        )
    expanded = expansion_of(question)
    if expanded is not None and not expanded.search(answer):
        return _out(
            "no",
            20,
            "the words its letters stand for",
            "the question asks what a name stands for, and the answer gives no words its letters begin",
        )
    purpose = bool(PURPOSE_Q_RE.search(question))
    if purpose and not zh and not PURPOSE_RE.search(answer):
        # What a thing holds or is ("a package providing time zone data") does
        # not say what it is for: an intent, a use or a goal does.
        return _out(
            "no",
            20,
            "what it is meant for",
            "the question asks what it is for, and the answer states no purpose",
        )
    # A purpose stated answers "What problem does X solve?" without the word "problem".
    head = "" if purpose else asked_head(question)
    # "What is the default timeout?" asks for a length of time, as "how long" does.
    # So does "What is the maximum input length ...?": a quantity's word
    # (maximum, size, limit, price, ...) outside a how-to.
    wants_number = (
        _NUMBER_Q_RE.search(question)
        or ((DURATION_Q_RE.search(question) or QUANTITY_Q_RE.search(question)) and not how_to)
        or head in _MEASURES
    )
    if wants_number and not counts(answer, counted(question), question):
        what = (
            "数量或时长"
            if zh
            else f"the {head}'s figure"
            if head in _MEASURES
            else f"the number of {head}"
            if head
            else "a number or duration"
        )
        return _out("no", 20, what, f"the question asks {asked!r}, and the answer states no such number")
    if head and not HOW_MANY_RE.search(question) and not names_kind(answer, head, question):
        return _out(
            "no",
            20,
            f"the {head} asked about",
            f"the question asks which {head}, and the answer names none",
        )
    if WHEN_Q_RE.search(question) and not gives_time(answer, question):
        what = "日期或时间" if zh else "a date or time"
        return _out("no", 20, what, "the question asks when, and the answer gives no date or time")
    if WHERE_Q_RE.match(question) and not zh and not gives_place(answer, question):
        return _out("no", 20, "a place", "the question asks where, and the answer names no place")
    if WHO_Q_RE.match(question) and not names_agent(answer, question):
        what = "人名或机构" if zh else "a person or an organisation"
        return _out("no", 20, what, "the question asks who, and the answer names no one in that role")
    # What the answer is not ("Who ... instead of the default X?") is not
    # what it must say; the excluded-case check below reads the whole question.
    about = without_excluded(without_examples(without_idioms(question)))
    qterms, named = _subject(about)
    # "ONNX Runtime is ..." answers "What is onnxruntime?": one name, written apart
    abag = spelled(bag(answer), qterms) + lexical.joined_words(about, answer)
    if head in VERSION_KINDS:
        # it got past names_kind: "Chromium 159.0.8154.6" says which version
        abag[stem(head)] += 1
    share, missing = coverage(qterms, abag) if qterms else (1.0, [])
    absent = [n for n in named if not any(abag.get(k, 0) for k in terms(n))]
    subjects = subject_names(about, [])
    spaced = [w.strip(".,;:?!()'\"") for w in about.split()]  # "pyca/cryptography" whole
    subjects += [w for w in spaced if FORMED_NAME_RE.match(w) and w not in subjects]
    unsaid = [n for n in subjects if not any(abag.get(k, 0) for k in terms(n))]
    # A name by its form is surely a name; a capitalised word may be a
    # qualifier ("Python versions"), so the answer must miss every one of those.
    lost = unsaid and (len(unsaid) == len(subjects) or any(FORMED_NAME_RE.match(n) for n in unsaid))
    other = _other_subject(answer, question) if lost else ""
    excluded = _excluded_case(answer, question)
    if excluded:
        return _out(
            "no",
            20,
            f"the case the question asks about, not {excluded}",
            f"the question excludes {excluded}, and the answer is about it",
        )
    if other:
        return _out("no", 20, ", ".join(unsaid), f"the answer is about {other}, not {', '.join(unsaid)}")
    cap = "partly" if junk or (absent and len(absent) == len(named)) else "yes"
    if cap == "partly":
        # The answer may still be right (it need not repeat the name), but a
        # reader cannot tell from the answer alone: at most partly.
        why = (
            f"the answer also holds {junk[0]}"
            if junk
            else f"the answer does not name what the question asks about ({', '.join(absent)})"
        )
        what = "a clean statement without code or markup" if junk else ", ".join(absent)
        return _out("partly", 50 + round(9 * share), what, why)
    if zh:
        # Chinese terms are character bigrams, many of them across word
        # boundaries: a lower share already means the subject is there, and
        # the bigrams themselves mean nothing to a reader.
        share = min(1.0, share * 1.5)
        missing = []
    if share >= 0.5:
        return _out("yes", 80 + round(20 * share), "", "the answer addresses the question's subject")
    if share > 0:
        return _out(
            "partly",
            50 + round(29 * share),
            _surface(missing, question) or asked,
            "the answer addresses only part of what the question asks",
        )
    # Nothing in common with the question: a lexical judge cannot tell a
    # paraphrase from a miss, so this is "partly", never a confident "no".
    return _out(
        "partly", 50, _surface(missing, question) or asked, "the answer shares no word with the question"
    )
