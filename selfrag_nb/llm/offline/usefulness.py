"""The usefulness role: does the answer answer the question that was asked?

    lexical <- phrases <- question <- ... <- usefulness <- model
                                             ^^^^^^^^^^ here (layer 6): imports
                                             lexical, phrases, question, subject.

    UsefulnessInputs(question, answer, history)
      -> answer without [n] markers; empty                        -> no
      -> small talk / arithmetic question                         -> yes when a reply / a number is given
      -> form: lines that are JSON, markup or code are set aside (how-to
         questions may be answered by a command); nothing else left, or the
         rest a fragment cut mid-sentence, a bare name or only
         questions                                                -> no
      -> the answer says the documents hold no answer             -> no
      -> a how-to question and no instruction (imperative, "you can",
         "by <doing>", something to type); English answers only  -> no
      -> "what is X for / meant for / the purpose of X" and no intent,
         use or goal ("intended", "used to", "for <doing>", "so that")  -> no
      -> answer type: "how many / how long / 多少" needs a number ("how many
         <things>": next to their name, which it counts), "when / 何时" a date,
         digits or a time word, "who" a name the question does not hold (capitalised,
         or by its form: "xeus-python") next to the question's verb or an agent word
         ("by", "author"), "what / which <kind>" or "what is the ... version" a thing
         of that kind: the kind's word, a version number for a version (not another
         thing's: "Python 3.15"),
         a name where the question's preposition points ("written in
         Rust"), any name for a project or a person              -> no when absent
      -> another thing: the answer opens with a name by form the question
         does not hold and misses its names; or its figures are all for
         a case the question rules out ("not free-threaded")       -> no
      -> subject: the question's named things (phrases.entities), a who / which / what
         question read without its "instead of X" clause (question.without_excluded: X
         is what the answer is not), a name written apart as written together
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
from collections import Counter

from selfrag_nb.codelines import ITEM_RE, code_line
from selfrag_nb.llm.offline import lexical
from selfrag_nb.llm.offline.lexical import STOP_EN, bag, coverage, stem, strip_citations, terms, wordset
from selfrag_nb.llm.offline.phrases import arithmetic, entities, social_kind
from selfrag_nb.llm.offline.question import (
    DATE_RE_ANY,
    HOW_TO_Q_RE,
    PURPOSE_Q_RE,
    PURPOSE_RE,
    answer_language,
    effective_question,
    without_excluded,
)
from selfrag_nb.llm.offline.subject import bare_names, subject_names
from selfrag_nb.llm.schemas import UsefulnessInputs, UsefulnessOut
from selfrag_nb.text import is_cjk, split_sentences, tokenize

__all__ = ["usefulness"]

#: The question asks explicitly for an amount or a duration.
_NUMBER_Q_RE = re.compile(r"\bhow (?:many|much|long|often|old)\b|多少|多久|几[个天次年月周]", re.IGNORECASE)
#: The question asks explicitly for a point in time.
_WHEN_Q_RE = re.compile(r"^\s*when\b|\bwhat (?:date|year|time)\b|什么时候|何时|哪一?天|哪一?年", re.I)
_WHICH_Q_RE = re.compile(r"^\s*(?:which|who|what(?:'s| is) the name)\b|哪个|哪些|谁", re.IGNORECASE)
_NUMBER_RE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundred|"
    r"thousand|million|once|twice|daily|weekly|monthly|yearly|annually|hourly|unlimited|infinite|"
    r"every|biweekly|fortnightly|quarterly|no limit|none|several|few)\b|[一二两三四五六七八九十百千万]",
    re.IGNORECASE,
)
# "When" is answered by a point in time: digits (a year, a version's date),
# not the number words of "how often" ("every", "few").
_DIGIT_RE = re.compile(r"\d|[一二两三四五六七八九十]")
_TIME_WORD_RE = re.compile(r"\b(?:since|until|before|after|ago|year|month|day|today|now)\b|年|月|日", re.I)


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
        "come comes put puts"
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


def _words(text: str) -> list[str]:
    return re.findall(r"[\w'’.-]+", text)


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
    words = _words(text)
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
    head = _asked_head(question)
    if m is None or not head:
        return False
    prefix = _prefix(stem(head))
    return any(w.startswith(prefix) for w in bag(m.group(1)))


#: "What/Which <noun phrase> <verb> ...?" and "How many <noun> ...": the
#: noun names the kind of thing asked for (a license, a port, a release).
_HEAD_Q_RE = re.compile(
    r"^\s*(?:(?:in|from|on|at|for|with|under|by|to) )?(?:what|which)\s+((?:[\w.-]+\s+){0,5}?)"
    r"(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|must|may|[a-z]+ed)\b",
    re.IGNORECASE,
)
_HOW_MANY_RE = re.compile(
    r"^\s*how many\s+((?:[\w.-]+\s+){0,3}?)(?:are|is|do|does|did|can|were|has|have)\b", re.I
)
# Kinds of thing a name answers by itself ("Which project ...?" -> "Stackless"),
# and kinds a version number answers ("Which release ...?" -> "2.14").
_NAMED_KINDS = wordset(
    "project projects package packages library libraries module modules tool tools framework frameworks "
    "company companies organisation organization person people team product products one ones thing things "
    "service services app application"
)
_VERSION_KINDS = wordset("version versions release releases")
_THE_VERSION_Q_RE = re.compile(r"^\s*what(?:'s| is| are) the (?:\S+ ){0,3}?(versions?|releases?)\b", re.I)
_PREPOSITIONS = wordset("of for in on to from with at by about under over into")
#: "What kind / type / sort of X": X is the kind asked for.
_KIND_OF = wordset("kind kinds type types sort sorts form forms")
_VERSION_NUMBER_RE = re.compile(r"\bv?\d+(?:\.\d+)+\b")
#: A version number with the word before it, if any ("Python 3.9", "psutil 6.1.1").
_VERSIONED_RE = re.compile(r"(?:\b([A-Za-z][\w.-]*?)(?:\s+|/))?(\bv?\d+(?:\.\d+)+)\b")
#: A number with the word it belongs to, in the question ("Python 3.9", "HTTP/2").
_OWNED_NUMBER_RE = re.compile(r"\b([A-Za-z][\w.-]*?)(?:\s+|/)v?\d+(?:\.\d+)*\b")


def _prefix(key: str) -> str:
    return key[: max(4, len(key) - 2)]


def _spelled(abag: Counter[str], qterms: dict[str, float]) -> Counter[str]:
    """The answer's stems, plus each question stem the answer spells another
    way ("licence" / "licensed", "organise" / "organized"): same first letters."""
    out = Counter(abag)
    for k in qterms:
        if k not in out and len(k) >= 5 and any(w.startswith(_prefix(k)) for w in abag):
            out[k] = 1
    return out


def _asked_head(question: str) -> str:
    """The noun that names what is asked for ("license" in "What license is
    X released under?"), "" when the question has none ("What is X?")."""
    if v := _THE_VERSION_Q_RE.match(question):
        return v.group(1).lower()  # "What is the oldest Python version X supports?"
    m = _HEAD_Q_RE.match(question) or _HOW_MANY_RE.match(question)
    if m is None:
        return ""
    words_in = m.group(1).split()
    if len(words_in) >= 2 and words_in[0].lower() in _KIND_OF and words_in[1].lower() == "of":
        words_in = words_in[2:]  # "what kind of tokeniser": the kind is "tokeniser"
    phrase = []
    for w in words_in:
        if w.lower() in _PREPOSITIONS:
            break  # "version of attrs": the kind is "version"
        phrase.append(w)
    words = [w for w in phrase if w.lower() not in STOP_EN]
    return words[-1].lower() if words else ""


def _names_kind(answer: str, head: str, question: str) -> bool:
    """The answer gives a thing of the kind ``head`` asks for; a version
    must be one the question does not already hold ("Which release dropped
    3.9?" is not answered by "This release drops 3.9")."""
    if head in _VERSION_KINDS:
        asked = set(_VERSION_NUMBER_RE.findall(question))
        # A version after a word the question puts before one of its own
        # ("Python 3.9") is that other thing's version ("adds Python 3.15"),
        # not the release asked about.
        # So is a version of a protocol the question names by number: it asks
        # which release added "HTTP/2", and "HTTP/1.1" is not a release.
        others = {m.group(1).lower() for m in _OWNED_NUMBER_RE.finditer(question)}
        return any(
            m.group(2) not in asked and (m.group(1) or "").lower() not in others
            for m in _VERSIONED_RE.finditer(answer)
        )
    if _slot_filled(question, answer) or _object_named(question, answer):
        return True
    if head in _NAMED_KINDS or (head.endswith("s") and stem(head) != head):
        # A plural asks for instances ("Which payment methods ...?" -> "cheques
        # and cash"), which a list names without repeating the kind.
        return True
    # Spellings differ ("licence" / "licensed"): the stem's first letters will do.
    prefix = _prefix(stem(head))
    return any(w.startswith(prefix) for w in bag(answer))


#: Words from a number to the things it counts ("over 500 languages",
#: "1300+ external plugins", "retries a failed request three times").
COUNT_WINDOW = 4


def _counted(question: str) -> set[str]:
    """The stems of what "how many <things> ..." counts ("languages", "text",
    "formats" in "How many languages and text formats does X support?")."""
    m = _HOW_MANY_RE.match(question)
    if m is None:
        return set()
    out: set[str] = set()
    for w in m.group(1).split():
        if w.lower() in _PREPOSITIONS:
            break
        if w.lower() not in STOP_EN:
            out.add(stem(w.lower()))
    return out


#: "In which language is X written?" (a fronted preposition) and "Which
#: formatter does X aim for parity with?" (a stranded one): the verb or noun
#: the preposition binds to, and the preposition.
_FRONTED_RE = re.compile(
    r"^\s*(in|on|from|with|by|at|for|to|under|into)\s+(?:which|what)\b.*\b([a-z]{3,})\W*$", re.I
)
_STRANDED_RE = re.compile(
    r"^\s*(?:which|what|who)\b.*\b([a-z]{3,})\s+(in|on|from|with|by|at|for|to|under|into|after|of)\W*$", re.I
)


def _slot_filled(question: str, answer: str) -> bool:
    """The answer puts something new where the question asks: "written in
    Rust" for "In which language is X written?", "parity with Flake8 ... and
    Black" for "Which formatter does X aim for parity with?". The kind's own
    word need not be there: a name fills the slot."""
    m = _FRONTED_RE.match(question)
    word, prep = (m.group(2), m.group(1)) if m else ("", "")
    if not m:
        m2 = _STRANDED_RE.match(question)
        if m2 is None:
            return False
        word, prep = m2.group(1), m2.group(2)
    asked = set(bag(question))
    slot = re.compile(
        rf"\b{re.escape(_prefix(stem(word.lower())))}\w*\s+{prep.lower()}\s+(?:the\s+|a\s+|an\s+)?([\w.+#-]+)",
        re.I,
    )
    return any(stem(f.lower().strip(".-")) not in asked for f in slot.findall(answer))


#: "What / Which <kind> does X <verb> ...?": do-support, then the predicate.
_DO_PREDICATE_RE = re.compile(r"^\s*(?:what|which)\b.*?\b(?:do|does|did)\s+(.+?)\W*$", re.IGNORECASE)
#: A name: a capitalised or mixed-case word ("AssertionError", "Don"), or a
#: compound written with a hyphen, dot, digit or underscore ("calendar-based").
_NAME_LIKE_RE = re.compile(r"^(?:[A-Z]\w*|\w*[a-z][A-Z]\w*|\w+[-_.]\w[\w.-]*|\w*\d\w*)$")


#: Verbs among the stopwords: the predicate's verb may be one ("does X use").
_STOP_VERBS = wordset("use need get want say tell know let")


def _object_named(question: str, answer: str) -> bool:
    """A do-support question ("What exception does X raise?") asks for its
    verb's object: the answer names one when a word of the question's
    predicate is followed, past at most two function words ("an", "like"),
    by a name the question does not hold ("raise an AssertionError", "works
    like Don Libes' Expect", "uses calendar-based versioning"). A common word
    there ("raise errors") names nothing of the kind."""
    m = _DO_PREDICATE_RE.match(question)
    if m is None:
        return False
    asked = set(bag(question))
    prefixes = {
        _prefix(stem(w.lower()))
        for w in _words(m.group(1))
        if w.lower() not in STOP_EN or w.lower() in _STOP_VERBS
    }
    prefixes.discard("")
    for sent in split_sentences(answer):
        words = _words(sent)
        for i, w in enumerate(words):
            if not any(w.lower().startswith(p) for p in prefixes):
                continue
            for raw in words[i + 1 : i + 4]:
                nxt = raw.strip(".'’")
                if nxt[:1].islower() and nxt in STOP_EN:
                    continue  # "an", "like"; a capitalised "Don" is a name
                if _NAME_LIKE_RE.match(nxt) and stem(nxt.lower()) not in asked:
                    return True
                break
    return False


_WHO_Q_RE = re.compile(r"^\s*who\b", re.IGNORECASE)
#: Words that mark who did something ("written by X", "X, the maintainer",
#: "Copyright 2020 X"): the agent slot of English, whatever the verb.
_AGENT_MARKS = frozenset(
    stem(w)
    for w in wordset(
        "by author authors authored maintainer maintainers maintained creator created developer developers "
        "developed written wrote writer copyright owner owned steward stewardship"
    )
)
#: Where the role words after "who" end: the thing the role is held over begins.
_ROLE_STOPS = wordset("the a an this that these those of for in on at to his her its their")
#: Words between a name and the word that gives it its role, at most.
AGENT_WINDOW = 4


def _names_agent(answer: str, question: str) -> bool:
    """A "who" answer names someone in the role asked about: a capitalised word
    or a name by its form (``_FORMED_NAME_RE``) the question does not hold,
    within ``AGENT_WINDOW`` words of the
    question's own verb or noun ("wrote", "stewardship") or of a word that
    marks an agent ("by", "author", "copyright"). A name elsewhere is someone
    or something doing another thing ("iniconfig raises an Error")."""
    asked = set(bag(question))
    named = {stem(t.lower()) for e in entities(question) for t in tokenize(e.text)}
    named |= {stem(t.lower()) for n in bare_names(question) for t in tokenize(n)}
    # The role is said right after "who", up to the thing it is held over:
    # "Who created | the Hypothesis testing library?", "Who has taken over
    # stewardship | of HTTPX?", "Who wrote | iniconfig?" (the last word).
    # Words describing that thing ("testing") do not place a name.
    cues = set(_AGENT_MARKS)
    for t in tokenize(question)[1:-1]:
        key = stem(t.lower())
        if t.lower() in _ROLE_STOPS or key in named:
            break
        if t.lower() not in STOP_EN:
            cues.add(key)
    for sent in split_sentences(answer):
        words = _words(sent)
        keys = [stem(w.lower().strip(".,;:'’")) for w in words]
        for i, w in enumerate(words):
            # a name is capitalised, or a name by its form in lower case
            # ("xeus-python", "quill_labs"): projects act too
            named_here = w[:1].isupper() or _FORMED_NAME_RE.match(w.strip(".,;:'’()\"")) is not None
            if not named_here or w.lower() in STOP_EN or keys[i] in asked:
                continue
            near = keys[max(0, i - AGENT_WINDOW) : i] + keys[i + 1 : i + 1 + AGENT_WINDOW]
            if any(k in cues for k in near):
                return True
    return False


#: A word that is a name by its form wherever it stands, even first in a
#: sentence where any word is capitalised: inner capitals or digits, joined
#: parts ("pyzmq-2.1.11", "X-Ray", "pyca/cryptography"), or an acronym ("AWS").
_FORMED_NAME_RE = re.compile(r"^(?:\w*[a-z]\w*[A-Z]\w*|[A-Za-z]\w*\d[\w.]*|\w+[-_./]\w[\w./-]*|[A-Z]{2,})$")


def _other_subject(answer: str, question: str) -> str:
    """The name the answer opens with, when it is a name by its form and the
    question does not hold it ("pyzmq-2.1.11 was the last version ..." to a
    question about pyca/cryptography): the sentence is about that thing."""
    # The sentence's subject: its first word, or the word after a
    # determiner ("The AWS SDK ..."). A label's value ("License: MIT") is not.
    words = answer.strip().split()[:2]
    if len(words) == 2 and words[0].lower() in _DETERMINERS:
        words = words[1:]
    first = words[0].rstrip(".,;:") if words and not words[0].endswith(":") else ""
    if not _FORMED_NAME_RE.match(first):
        return ""
    asked = set(bag(question))
    return "" if any(k in asked for k in bag(first)) else first


#: Words before a noun that make it definite or a demonstrative: "The AWS SDK".
_DETERMINERS = wordset("the a an this that these those its their")
#: "(not free-threaded)", "non-Windows", "other than Linux", "except macOS":
#: a case the question leaves out.
_EXCLUDED_RE = re.compile(
    r"\b(?:not|non-|other than|except(?: for)?|excluding)\s*([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)",
    re.IGNORECASE,
)


#: A figure standing alone ("3.20", "4.4.1"), not the digit of a name ("argon2").
_FIGURE_RE = re.compile(r"(?<![\w.])\d+(?:\.\d+)*(?!\w)")


def _excluded_case(answer: str, question: str) -> str:
    """The case the question excludes, when the answer speaks of it and every
    figure the answer gives stands in a sentence about it ("On free-threaded
    CPython ... CMake 4.4.1" to "on a regular (not free-threaded) CPython"):
    the answer is about what was ruled out ("" otherwise)."""
    found = [m.group(1) for m in _EXCLUDED_RE.finditer(question)]
    cases = [c for c in found if c.split()[0].lower() not in STOP_EN]
    if not cases:
        return ""
    sents = [x for x in split_sentences(answer) if _words(x)]
    for case in cases:
        keys = [stem(w.lower()) for w in _words(case)]
        scoped = [x for x in sents if all(k in bag(x) for k in keys) and not _EXCLUDED_RE.search(x)]
        # The figures the answer gives are all for the excluded case: nothing
        # else in it states a number for the case asked about.
        rest = [x for x in sents if x not in scoped]
        if scoped and not any(_FIGURE_RE.search(x) for x in rest):
            return case
    return ""


#: Verbs that open an instruction ("Use ...", "Set ...", "Pass ..."): the
#: imperative is how English tells someone what to do.
_INSTRUCTION_VERBS = wordset(
    "use set run call pass add install import configure enable disable create write put define decorate "
    "mark wrap apply specify register replace remove change edit open select click type enter provide "
    "choose include append insert start stop restart upgrade update download build compile load save "
    "export send return subclass inherit override assign declare initialise initialize try check see"
)
#: "you can use ...", "users need to set ...": an instruction in the second person.
_MODAL_RE = re.compile(
    r"\b(?:you|one|users?)\s+(?:can|could|should|must|may|need\s+to|have\s+to|will\s+need\s+to)\s+\w+",
    re.IGNORECASE,
)
#: "by passing ...", "by setting ...": the means.
_BY_ING_RE = re.compile(r"\bby\s+\w+ing\b", re.IGNORECASE)
#: Something to type: inline code, a call, a decorator, an option, a setting,
#: a dotted name ("gc.disable()", "@evented", "--timeout", "max_age=600").
_CODE_TOKEN_RE = re.compile(
    r"`[^`]+`|\w\((?:[^)]*)\)|(?<![\w@])@[A-Za-z_]\w*|(?<![\w-])--?[A-Za-z][\w-]*|\w=\S|"
    r"\b[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*\b"
)


#: A command line: lower-case words, no sentence ending ("pip install tool").
_COMMAND_RE = re.compile(r"^\s*\$?\s*[a-z][\w.-]*\s+[a-z][\w.:/=-]*(?:\s+\S+)*?\s*$(?<![.!?:])")


def _instructs(answer: str) -> bool:
    """The answer to a how-to question says what to do: an imperative, a
    "you can / need to ...", a "by <doing>", or something to type. An answer
    that only describes how a thing works ("the plugin starts a timer thread
    which ...") does not."""
    if _MODAL_RE.search(answer) or _BY_ING_RE.search(answer) or _CODE_TOKEN_RE.search(answer):
        return True
    for line in answer.splitlines():
        bare, _ = strip_citations(line)
        if _COMMAND_RE.match(bare) and len(bare.split()) <= 8:
            return True
    for sent in split_sentences(answer):
        words = _words(sent.strip().lstrip("-*•0123456789.) "))
        if words and words[0].lower() in _INSTRUCTION_VERBS:
            return True
    return False


def _counts(answer: str, things: set[str]) -> bool:
    """A number in the answer; for "how many <things>", a number that counts
    them: within ``COUNT_WINDOW`` words of one of their words in one sentence.
    A number elsewhere in the sentence counts something else ("pip 24.2+ ...
    verifying certificates" says nothing about how many certificates)."""
    if not things:
        return bool(_NUMBER_RE.search(answer))
    for sent in split_sentences(answer):
        words = _words(sent)
        at_number = [i for i, w in enumerate(words) if _NUMBER_RE.search(w)]
        at_thing = [i for i, w in enumerate(words) if stem(w.lower().strip(".'’-")) in things]
        if any(abs(i - j) <= COUNT_WINDOW for i in at_number for j in at_thing):
            return True
    return False


def _subject(question: str) -> tuple[dict[str, float], list[str]]:
    """(content terms without frame words, the question's named things)."""
    qterms = {k: w for k, w in terms(question).items() if k not in _FRAME}
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
        if _NUMBER_RE.search(answer) or calc.value is None:
            return _out("yes", 90, "", "the arithmetic question gets a result")
        return _out("no", 10, "the result of the calculation", "the answer gives no number")
    how_to = bool(HOW_TO_Q_RE.search(question))
    which = bool(_WHICH_Q_RE.search(question))
    # Lines that are not prose (code, JSON, markup) answer nothing; the
    # rest is judged, and an answer that carries such lines is at most partly useful.
    junk = [p for p in (_line_problem(ln, how_to) for ln in answer.splitlines() if ln.strip()) if p]
    prose = "\n".join(ln for ln in answer.splitlines() if ln.strip() and not _line_problem(ln, how_to))
    form = junk[0] if junk and not prose.strip() else _form_problem(prose, which)
    if form == "a bare name" and _labelled_value(prose, question):
        form = ""  # "License: MIT": a heading and its value, the kind asked for named
    if form:
        return _out("no", 10, f"a statement that answers: {asked}", f"the answer is {form}, not a statement")
    answer = prose
    if _NO_ANSWER_RE.search(answer):
        return _out("no", 5, f"an answer to: {asked}", "the answer says the documents do not answer it")
    # The verbs and modals below are English: a Chinese answer (a question
    # answered from Chinese documents) is not judged by them.
    if how_to and not zh and not any(is_cjk(c) for c in answer) and not _instructs(answer):
        return _out(
            "no",
            20,
            "the step, command or option to use",
            "the question asks how to do something, and the answer gives no step, command or option",
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
    head = "" if purpose else _asked_head(question)
    if _NUMBER_Q_RE.search(question) and not _counts(answer, _counted(question)):
        what = "数量或时长" if zh else f"the number of {head}" if head else "a number or duration"
        return _out("no", 20, what, f"the question asks {asked!r}, and the answer states no such number")
    if head and not _HOW_MANY_RE.search(question) and not _names_kind(answer, head, question):
        return _out(
            "no",
            20,
            f"the {head} asked about",
            f"the question asks which {head}, and the answer names none",
        )
    if _WHEN_Q_RE.search(question) and not (
        DATE_RE_ANY.search(answer) or _DIGIT_RE.search(answer) or _TIME_WORD_RE.search(answer)
    ):
        what = "日期或时间" if zh else "a date or time"
        return _out("no", 20, what, "the question asks when, and the answer gives no date or time")
    if _WHO_Q_RE.match(question) and not _names_agent(answer, question):
        what = "人名或机构" if zh else "a person or an organisation"
        return _out("no", 20, what, "the question asks who, and the answer names no one in that role")
    # What the answer is not ("Who ... instead of the default X?") is not
    # what it must say; the excluded-case check below reads the whole question.
    about = without_excluded(question)
    qterms, named = _subject(about)
    # "ONNX Runtime is ..." answers "What is onnxruntime?": one name, written apart
    abag = _spelled(bag(answer), qterms) + lexical.joined_words(about, answer)
    share, missing = coverage(qterms, abag) if qterms else (1.0, [])
    absent = [n for n in named if not any(abag.get(k, 0) for k in terms(n))]
    subjects = subject_names(about, [])
    spaced = [w.strip(".,;:?!()'\"") for w in about.split()]  # "pyca/cryptography" whole
    subjects += [w for w in spaced if _FORMED_NAME_RE.match(w) and w not in subjects]
    unsaid = [n for n in subjects if not any(abag.get(k, 0) for k in terms(n))]
    # A name by its form is surely a name; a capitalised word may be a
    # qualifier ("Python versions"), so the answer must miss every one of those.
    lost = unsaid and (len(unsaid) == len(subjects) or any(_FORMED_NAME_RE.match(n) for n in unsaid))
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
