"""Answer kinds: what kind of answer a question asks for, and whether an answer gives one.

    lexical <- phrases <- question <- ... <- answer_kind <- usefulness <- model
                                             ^^^^^^^^^^^ here: imports lexical,
                                             phrases, question, subject; the
                                             usefulness judge asks it, and
                                             generate (instructs for how-tos,
                                             wants_names / listed_names).

    question --asked_head()--> the kind's noun: "license" in "What license is X
                released under?", "version" in "What is the oldest ... version?"
    (answer, head, question) --names_kind()--> the answer gives a thing of that
                kind: the kind's word, a version the question does not hold, a
                name where the question's preposition points ("written in
                Rust"), the object of its verb ("raises AssertionError"), a
                name written as code for a class, function, exception ...
    "how many <things>" --counted()--> their stems --counts()--> a number next to them
    "who ..." --names_agent()--> a name next to the question's verb or an
                agent word ("by", "author")
    "which environment variable ..." --names_variable()--> a variable's name
                (question.ENV_VAR_RE: "QUILL_LOG_SCOPE", "$HOME")
    "how do I ..." --instructs()--> an imperative (first, or after a fronted
                "To / If / When ..." clause), "you can ...", "by <doing>", or
                something to type (code, an option, an environment variable)
    "which <things> ..." --wants_names()--> answered by naming instances
                --listed_names()--> the names a sentence gives (capitalised
                words after its first, code names the question does not hold)

Only properties of English questions and answers: question words, word
order, the forms names and code take.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections import Counter

from selfrag_nb.llm.offline.lexical import INSTRUCTION_VERBS, STOP_EN, bag, stem, strip_citations, wordset
from selfrag_nb.llm.offline.phrases import entities
from selfrag_nb.llm.offline.question import CODE_Q_RE, ENV_Q_RE, ENV_VAR_RE, code_names
from selfrag_nb.llm.offline.subject import bare_names
from selfrag_nb.text import split_sentences, tokenize

__all__ = [
    "FORMED_NAME_RE",
    "HOW_MANY_RE",
    "NUMBER_RE",
    "VERSION_KINDS",
    "WHERE_Q_RE",
    "WHO_Q_RE",
    "addresses_reader",
    "asked_head",
    "counted",
    "counts",
    "gives_place",
    "instructs",
    "listed_names",
    "names_agent",
    "names_kind",
    "names_variable",
    "slot_filled",
    "spelled",
    "stem_prefix",
    "unremarked",
    "wants_names",
    "words_of",
]


#: A number, in digits or words, or a frequency ("twice", "daily").
NUMBER_RE = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundreds?|"
    r"thousands?|millions?|billions?|dozens?|tens\s+of|once|twice|daily|weekly|monthly|yearly|annually|hourly|unlimited|infinite|"
    r"every|biweekly|fortnightly|quarterly|no limit|none|several|few)\b|[一二两三四五六七八九十百千万]",
    re.IGNORECASE,
)


_WORD_RE = re.compile(r"[\w'’.-]+")


def words_of(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def commas_after(text: str) -> list[bool]:
    """For each word of ``words_of(text)``: is a comma right after it?"""
    return [text[m.end() : m.end() + 1] == "," for m in _WORD_RE.finditer(text)]


#: "What/Which <noun phrase> <verb> ...?" and "How many <noun> ...": the
#: noun names the kind of thing asked for (a license, a port, a release). A
#: verb in "-ed" is lower case: "Which Typeshed version ..." names a thing.
_HEAD_Q_RE = re.compile(
    r"^\s*(?:(?:in|from|on|at|for|with|under|by|to) )?(?:what|which)\s+((?:[\w.-]+\s+){0,5}?)"
    r"(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|must|may|(?-i:[a-z]+ed))\b",
    re.IGNORECASE,
)
HOW_MANY_RE = re.compile(
    # "How many characters long may a line be?": the things are "characters".
    r"^\s*how many\s+((?:[\w.-]+\s+){0,3}?)(?:(?:long|wide|high|deep|old|big|large|tall)\s+)?"
    r"(?:are|is|do|does|did|can|were|has|have|may|might|must|should|could|would|will)\b",
    re.I,
)
# Kinds of thing a name answers by itself ("Which project ...?" -> "Stackless"),
# and kinds a version number answers ("Which release ...?" -> "2.14").
_NAMED_KINDS = wordset(
    "project projects package packages library libraries module modules tool tools framework frameworks "
    "company companies organisation organization person people team product products one ones thing things "
    "service services app application"
)
#: The kinds a version number answers ("Which release ...?").
VERSION_KINDS = wordset("version versions release releases")
#: Kinds a name answers by its form ("Under what module name ...?" -> "typing_inspection").
_NAME_KINDS = wordset("name names")
#: Kinds an address answers ("What website is its documentation on?").
_WEB_KINDS = wordset("website websites site sites url urls homepage address page link domain")
_ADDRESS_RE = re.compile(
    r"https?://\S|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|edu|gov|ai|co|info)\b", re.I
)
#: Kinds named with a "#" (IRC and chat channels, tags): "#pyca".
_HASH_KINDS = wordset("channel channels room rooms tag tags hashtag hashtags")
_HASH_NAME_RE = re.compile(r"(?<![\w&])#[A-Za-z][\w.-]*")
#: Parts of a text, answered by a part's label ("Which part of the standard
#: ...?" -> "Annex A", "Section 3.2", "Part II").
_PART_KINDS = wordset("part parts section sections portion portions chapter chapters")
_LABELLED_RE = re.compile(r"\b([A-Z][a-z]+)\s+(?:[A-Z]|[IVX]+|\d+(?:\.\d+)*)\b")
_THE_VERSION_Q_RE = re.compile(r"^\s*what(?:'s| is| are) the (?:\S+ ){0,3}?(versions?|releases?)\b", re.I)
_PREPOSITIONS = wordset("of for in on to from with at by about under over into")
#: Words that open what a kind excludes ("other than", "except", "besides").
_EXCEPT_WORDS = wordset("than except besides instead rather apart aside")
#: "What kind / type / sort of X": X is the kind asked for.
_KIND_OF = wordset("kind kinds type types sort sorts form forms")
_VERSION_NUMBER_RE = re.compile(r"\bv?\d+(?:\.\d+)+\b")
#: A version number with the word before it, if any ("Python 3.9", "psutil 6.1.1").
_VERSIONED_RE = re.compile(r"(?:\b([A-Za-z][\w.-]*?)(?:\s+|/))?(\bv?\d+(?:\.\d+)+)\b")
#: A number with the word it belongs to, in the question ("Python 3.9", "HTTP/2").
_OWNED_NUMBER_RE = re.compile(r"\b([A-Za-z][\w.-]*?)(?:\s+|/)v?\d+(?:\.\d+)*\b")
#: What the versions asked for are of: "Which OpenSSL versions ...", "which
#: versions of libzmq ...", "which version of the Brindle server ...".
_VERSIONS_OF_RE = re.compile(
    r"\b(?:which|what)\s+((?:[\w.+-]+\s+){0,2}?)(?:versions?|releases?)\b"
    r"(?:\s+of\s+(?:the\s+|an?\s+)?([\w.+-]+(?:\s+[\w.+-]+){0,3}))?",
    re.I,
)


def _versions_of(question: str) -> set[str]:
    """The words naming what the asked-for versions belong to (lower case)."""
    m = _VERSIONS_OF_RE.search(question)
    if m is None:
        return set()
    # "of the classic Jupyter Notebook does X ...": the of-phrase ends at the
    # first function word (the verb's auxiliary), at most four words long.
    of = list(itertools.takewhile(lambda w: w.lower() not in STOP_EN, (m.group(2) or "").split()))
    return {w.lower() for w in [*m.group(1).split(), *of]}


def stem_prefix(key: str) -> str:
    return key[: max(4, len(key) - 2)]


def spelled(abag: Counter[str], qterms: dict[str, float]) -> Counter[str]:
    """The answer's stems, plus each question stem the answer spells another
    way ("licence" / "licensed", "organise" / "organized"): same first letters."""
    out = Counter(abag)
    for k in qterms:
        if k not in out and len(k) >= 5 and any(w.startswith(stem_prefix(k)) for w in abag):
            out[k] = 1
    return out


#: "Which versions of <a long name> does X work with?": the head is
#: "versions" however far the verb is (the of-phrase names whose versions).
_VERSIONS_OF_Q_RE = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w.+-]+\s+){0,2}?(versions?|releases?)\s+of\b", re.I
)


def asked_head(question: str) -> str:
    """The noun that names what is asked for ("license" in "What license is
    X released under?"), "" when the question has none ("What is X?")."""
    if v := _THE_VERSION_Q_RE.match(question) or _VERSIONS_OF_Q_RE.match(question):
        return v.group(1).lower()  # "What is the oldest Python version X supports?"
    m = _HEAD_Q_RE.match(question) or HOW_MANY_RE.match(question)
    if m is None:
        return ""
    words_in = m.group(1).split()
    if len(words_in) >= 2 and words_in[0].lower() in _KIND_OF and words_in[1].lower() == "of":
        words_in = words_in[2:]  # "what kind of tokeniser": the kind is "tokeniser"
    phrase = []
    for w in words_in:
        if w.lower() in _PREPOSITIONS or w.lower() in _EXCEPT_WORDS:
            # "version of attrs": the kind is "version"; "languages other than
            # Python": "languages" (what follows names what the answer is not)
            break
        phrase.append(w)
    words = [w for w in phrase if w.lower() not in STOP_EN]
    if words and words[-1].lower() in _KIND_OF:
        return ""  # "In what form does X ship ...?" asks for a description, not a "form"
    return words[-1].lower() if words else ""


def names_kind(answer: str, head: str, question: str) -> bool:
    """The answer gives a thing of the kind ``head`` asks for; a version
    must be one the question does not already hold ("Which release dropped
    3.9?" is not answered by "This release drops 3.9")."""
    if head in VERSION_KINDS:
        asked = set(_VERSION_NUMBER_RE.findall(question))
        # A version after a word the question puts before one of its own
        # ("Python 3.9") is that other thing's version ("adds Python 3.15"),
        # not the release asked about.
        # So is a version of a protocol the question names by number: it asks
        # which release added "HTTP/2", and "HTTP/1.1" is not a release.
        others = {m.group(1).lower() for m in _OWNED_NUMBER_RE.finditer(question)}
        # "Which OpenSSL versions ...?" is not answered by "Python 3.9+ and
        # PyPy3 7.3.11+": a version after another name (capitalised) is that
        # thing's ("CPython 3.9" is Python's). A version alone ("supports
        # 3.9+") may be of what was asked.
        of = _versions_of(question)
        return any(
            m.group(2) not in asked
            and (owner := m.group(1) or "").lower() not in others
            and (not of or not owner[:1].isupper() or any(w in owner.lower() for w in of))
            for m in _VERSIONED_RE.finditer(answer)
        )
    if slot_filled(question, answer) or _object_named(question, answer):
        return True
    if CODE_Q_RE.match(question) and code_names(answer, question):
        return True  # "defaults to OAS32Validator" names the class asked for
    if head in _NAME_KINDS and any(
        FORMED_NAME_RE.match(w) and stem(w.lower()) not in bag(question) for w in words_of(answer)
    ):
        return True  # "imported from the typing_inspection module" names the module asked for
    if head in _PART_KINDS and any(
        stem(m.group(1).lower()) not in bag(question) for m in _LABELLED_RE.finditer(answer)
    ):
        return True  # "the grammar provided in Annex A of the C99 standard"
    if head in _WEB_KINDS:
        # "the official documentation" says no address: a URL, a domain, or a
        # name the question does not hold ("Read the Docs") is where it is.
        return bool(_ADDRESS_RE.search(answer)) or _new_name(answer, question)
    if head in _HASH_KINDS and any(m.lower() not in question.lower() for m in _HASH_NAME_RE.findall(answer)):
        return True  # "join #pyca on irc.libera.chat" names the channel
    if _KIND_OF_Q_RE.match(question):
        held = bag(question)
        if any(stem(w) not in held for m in _COPULA_RE.finditer(answer) for w in tokenize(m.group(1))):
            return True  # "X is a Jupyter Server Extension" says what kind of component X is
    if head in _NAMED_KINDS or (head.endswith("s") and stem(head) != head):
        # A plural asks for instances ("Which payment methods ...?" -> "cheques
        # and cash"), which a list names without repeating the kind.
        return True
    # Spellings differ ("licence" / "licensed"): the stem's first letters will do.
    prefix = stem_prefix(stem(head))
    if any(w.startswith(prefix) for w in bag(answer)):
        return True
    # A code name ends on its kind: "NotebookConfigShimMixin" is a mixin,
    # "SessionMiddleware" a middleware, "ValueError" an error.
    return any(
        stem(m.group(1).lower()).startswith(prefix) and m.group(0).lower() not in question.lower()
        for m in _CAMEL_TAIL_RE.finditer(answer)
    )


#: "What kind of Jupyter component is X?" asks what X is: a copula with a
#: noun phrase answers it, whatever word it uses for the kind.
_KIND_OF_Q_RE = re.compile(r"^\s*(?:what|which)\s+(?:kind|type|sort)s?\s+of\b[^?]*?\b(?:is|are)\b", re.I)
_COPULA_RE = re.compile(r"\b(?:is|are)\s+(?:a|an)\s+((?:[\w.-]+\s+){0,2}[\w.-]+)", re.I)


#: A CamelCase name and its last part ("NotebookConfigShimMixin" -> "Mixin").
_CAMEL_TAIL_RE = re.compile(r"\b[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]+)*([A-Z][a-z0-9]+)\b")


#: Words from a number to the things it counts ("over 500 languages",
#: "1300+ external plugins", "retries a failed request three times").
COUNT_WINDOW = 4
#: A share, not a count: "100% coverage", "40 percent".
_SHARE_RE = re.compile(r"\d+(?:[.,]\d+)*\s*(?:%|per\s?cent\b)", re.IGNORECASE)


def counted(question: str) -> set[str]:
    """The stems of what "how many <things> ..." counts ("languages", "text",
    "formats" in "How many languages and text formats does X support?")."""
    m = HOW_MANY_RE.match(question)
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
    r"^\s*(?:which|what|who)\b.*\b([a-z]{3,})\s+(in|on|from|with|by|at|for|to|under|into|after|of)"
    # ... also before a purpose clause: "What is X compiled with to make it faster?"
    r"(?:\s+(?:to|in order to|so that)\s+[^?]*)?\W*$",
    re.I,
)


@functools.lru_cache(maxsize=256)
def _slot(question: str) -> tuple[re.Pattern[str], frozenset[str]] | None:
    """The place a fronted or stranded preposition asks about, as a pattern
    ("compil\\w* with <word>"), and the question's own stems; None when the
    question has no such place. Per question, not per sentence: generate asks
    for every candidate sentence."""
    m = _FRONTED_RE.match(question)
    word, prep = (m.group(2), m.group(1)) if m else ("", "")
    if not m:
        m2 = _STRANDED_RE.match(question)
        if m2 is None:
            return None
        word, prep = m2.group(1), m2.group(2)
    slot = re.compile(
        rf"\b{re.escape(stem_prefix(stem(word.lower())))}\w*\s+{prep.lower()}\s+(?:the\s+|a\s+|an\s+)?([\w.+#-]+)",
        re.I,
    )
    return slot, frozenset(bag(question))


def slot_filled(question: str, answer: str) -> bool:
    """The answer puts something new where the question asks: "written in
    Rust" for "In which language is X written?", "parity with Flake8 ... and
    Black" for "Which formatter does X aim for parity with?". The kind's own
    word need not be there: a name fills the slot."""
    found = _slot(question)
    if found is None:
        return False
    slot, asked = found
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
        stem_prefix(stem(w.lower()))
        for w in words_of(m.group(1))
        if w.lower() not in STOP_EN or w.lower() in _STOP_VERBS
    }
    prefixes.discard("")
    for sent in split_sentences(answer):
        words = words_of(sent)
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


WHO_Q_RE = re.compile(r"^\s*who\b", re.IGNORECASE)
#: Words that mark who did something ("written by X", "X, the maintainer",
#: "Copyright 2020 X", "Thanks to X for the illustration"): the agent slot
#: of English, whatever the verb.
_AGENT_MARKS = frozenset(
    stem(w)
    for w in wordset(
        "by author authors authored maintainer maintainers maintained creator created developer developers "
        "developed written wrote writer copyright owner owned steward stewardship thanks thank credit credits "
        "courtesy"
    )
)
#: The agent marks that are nouns: what an appositive name can rename.
_ROLE_NOUNS = frozenset(
    stem(w)
    for w in wordset("author authors maintainer maintainers creator developer developers writer owner")
)
#: Where the role words after "who" end: the thing the role is held over begins.
_ROLE_STOPS = wordset("the a an this that these those of for in on at to his her its their")
#: Words between a name and the word that gives it its role, at most.
AGENT_WINDOW = 4
#: Words of the phrase a name after a comma renames, at most.
APPOSITIVE_WORDS = 10


def names_agent(answer: str, question: str) -> bool:
    """A "who" answer names someone in the role asked about: a capitalised word
    or a name by its form (``FORMED_NAME_RE``) the question does not hold,
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
    # The question's own verb in another form: "chose" asked, "chosen" said.
    verbs: set[str] = set()
    for t in tokenize(question)[1:-1]:
        key = stem(t.lower())
        if t.lower() in _ROLE_STOPS or key in named:
            break
        if t.lower() not in STOP_EN:
            cues.add(key)
            verbs.add(stem_prefix(key))

    def cue(k: str) -> bool:
        return k in cues or any(k.startswith(v) for v in verbs)

    for sent in split_sentences(answer):
        words = words_of(sent)
        commas = commas_after(sent)
        keys = [stem(w.lower().strip(".,;:'’")) for w in words]
        for i, w in enumerate(words):
            # a name is capitalised, or a name by its form in lower case
            # ("xeus-python", "quill_labs"): projects act too
            named_here = w[:1].isupper() or FORMED_NAME_RE.match(w.strip(".,;:'’()\"")) is not None
            if not named_here or w.lower() in STOP_EN or keys[i] in asked:
                continue
            # A name of several capitalised words is one ("the entire IPython
            # Development Team"): the window opens where it starts.
            first = i
            while first > 0 and words[first - 1][:1].isupper() and words[first - 1].lower() not in STOP_EN:
                first -= 1
            near = keys[max(0, first - AGENT_WINDOW) : i] + keys[i + 1 : i + 1 + AGENT_WINDOW]
            if any(cue(k) for k in near) or _appositive(commas[:i], keys[:i]):
                return True
    return False


def _appositive(commas: list[bool], keys: list[str]) -> bool:
    """A name set off by a comma renames the noun phrase before it: "the
    author of the original Boto library, Mitch Garnaat". That phrase, back to
    the comma before it (at most ``APPOSITIVE_WORDS`` words), holds a role
    noun ("author", "maintainer"); a verb there ("written in 2010, Python 2
    era") does not make the next name its agent. ``commas`` and ``keys`` are
    the words before the name."""
    if not commas or not commas[-1]:
        return False
    start = len(commas) - 1
    while start > 0 and len(commas) - start < APPOSITIVE_WORDS and not commas[start - 1]:
        start -= 1
    return any(k in _ROLE_NOUNS for k in keys[start:])


#: A word that is a name by its form wherever it stands, even first in a
#: sentence where any word is capitalised: inner capitals or digits, joined
#: parts ("pyzmq-2.1.11", "X-Ray", "pyca/cryptography"), or an acronym ("AWS").
FORMED_NAME_RE = re.compile(r"^(?:\w*[a-z]\w*[A-Z]\w*|[A-Za-z]\w*\d[\w.]*|\w+[-_./]\w[\w./-]*|[A-Z]{2,})$")


#: Verbs that open an instruction ("Use ...", "Set ...", "Pass ..."): the
#: imperative is how English tells someone what to do.
#: "Please" before an imperative is politeness: "please use the contact form".
_PLEASE_RE = re.compile(r"^\s*please,?\s+", re.IGNORECASE)
#: A clause put before the main one, saying the goal or the condition ("To
#: enable logging without code changes, set ...", "If it is off, turn ...").
_FRONTED_CLAUSE_RE = re.compile(
    r"^\s*(?:to|in order to|if|when|once|before|after|for)\b[^,;:]{1,160},\s*", re.IGNORECASE
)
#: "you can use ...", "users need to set ...": an instruction in the second person.
_MODAL_RE = re.compile(
    r"\b(?:you|one|users?)\s+(?:can|could|should|must|may|need\s+to|have\s+to|will\s+need\s+to)\s+\w+",
    re.IGNORECASE,
)
#: "by passing ...", "by setting ...": the means.
_BY_ING_RE = re.compile(r"\bby\s+\w+ing\b", re.IGNORECASE)
#: Something to type: inline code, a call, a decorator, an option, a setting,
#: a dotted name ("gc.disable()", "@evented", "--timeout", "max_age=600"; two
#: letters or more each side, so not "e.g." or "i.e."); an environment
#: variable's name is one too (question.ENV_VAR_RE).
_CODE_TOKEN_RE = re.compile(
    r"`[^`]+`|\w\((?:[^)]*)\)|(?<![\w@])@[A-Za-z_]\w*|(?<![\w-])--?[A-Za-z][\w-]*|\w=\S|"
    r"\b[a-z_][a-z0-9_]+\.[a-z_][a-z0-9_]+(?:\.[a-z_][a-z0-9_]+)*\b"
)


#: A command line: lower-case words, no sentence ending ("pip install tool").
_COMMAND_RE = re.compile(r"^\s*\$?\s*[a-z][\w.-]*\s+[a-z][\w.:/=-]*(?:\s+\S+)*?\s*$(?<![.!?:])")


def instructs(answer: str) -> bool:
    """The answer to a how-to question says what to do: an imperative (the
    sentence's or, after a fronted "To ... ," / "If ... ," clause, the main
    clause's first word), a "you can / need to ...", a "by <doing>", or
    something to type. An answer
    that only describes how a thing works ("the plugin starts a timer thread
    which ...") does not."""
    if _MODAL_RE.search(answer) or _BY_ING_RE.search(answer) or _CODE_TOKEN_RE.search(answer):
        return True
    if ENV_VAR_RE.search(answer):
        return True
    for line in answer.splitlines():
        bare, _ = strip_citations(line)
        if _COMMAND_RE.match(bare) and len(bare.split()) <= 8:
            return True
    return _imperative(answer)


def _imperative(answer: str) -> bool:
    for sent in split_sentences(answer):
        bare = _PLEASE_RE.sub("", sent.strip().lstrip("-*•0123456789.) "))
        # The imperative opens the main clause, which a goal or a condition
        # may come before: "To enable X, set ...".
        for clause in (bare, _PLEASE_RE.sub("", _FRONTED_CLAUSE_RE.sub("", bare, count=1))):
            words = words_of(clause)
            if words and words[0].lower().endswith("ly"):
                words = words[1:]  # "Automatically convert ...", "Optionally set ..."
            if words and words[0].lower() in INSTRUCTION_VERBS:
                return True
    return False


def addresses_reader(sentence: str) -> bool:
    """The sentence tells the reader what they can or must do ("you can set
    ...", "Set ..."): a surer instruction than code it merely mentions ("if
    you call get_event_loop() ...")."""
    return bool(_MODAL_RE.search(sentence)) or _imperative(sentence)


#: "Where ...?" asks for a place.
WHERE_Q_RE = re.compile(r"^\s*where\b", re.IGNORECASE)
#: A place: a locative preposition before what follows it ("at FriendFeed",
#: "in the extension's node_modules", "across three offices"), an address or
#: a path, or a noun for a place ("the releases page", "headquarters").
_PLACE_RE = re.compile(
    r"\b(?:in|on|at|under|inside|within|into|from|via|through|onto|across|near|outside)\s+\S|https?://|\w/\w|"
    r"\b(?:page|site|website|repository|repo|folder|directory|channel|forum|tracker|tab|section|server|"
    r"office|headquarters|city|country|address)s?\b",
    re.IGNORECASE,
)


def gives_place(answer: str, question: str = "") -> bool:
    """The answer to a where-question names a place: as ``_PLACE_RE`` reads
    one, or a name the question does not hold ("Dublin (headquarters)")."""
    return bool(_PLACE_RE.search(answer)) or _new_name(answer, question)


def _new_name(answer: str, question: str) -> bool:
    """The answer names (capitalised, not a sentence's first word) something
    the question does not hold."""
    asked = set(bag(question))
    return any(stem(n.lower()) not in asked for n in _NAMES_RE.findall(answer))


def names_variable(answer: str, question: str) -> bool:
    """A question asking for an environment variable ("Which environment
    variable ...?", "How do I ... through an environment variable?") is
    answered by one's name; any other question needs none."""
    return not ENV_Q_RE.search(question) or bool(ENV_VAR_RE.search(answer))


def counts(answer: str, things: set[str], question: str = "") -> bool:
    """A number in the answer; for "how many <things>", a number that counts
    them: within ``COUNT_WINDOW`` words of one of their words in one sentence.
    A number elsewhere in the sentence counts something else ("pip 24.2+ ...
    verifying certificates" says nothing about how many certificates), and
    so does one inside a word the question holds (the "6" and "2" of the
    model "minilm-l6-v2" it asks about)."""
    if not things:
        held = {w.lower().strip(".") for w in words_of(question) if any(c.isdigit() for c in w)}
        said = " ".join(w for w in words_of(answer) if w.lower().strip(".") not in held)
        return bool(NUMBER_RE.search(said))
    for sent in split_sentences(answer):
        # A percentage is a share, not a count ("100% coverage" is not how many tests).
        words = words_of(_SHARE_RE.sub(" share ", sent))
        at_number = [i for i, w in enumerate(words) if NUMBER_RE.search(w)]
        # "~800 lines-of-code": a hyphenated compound names each of its parts.
        at_thing = [
            i
            for i, w in enumerate(words)
            if any(stem(p) in things for p in re.split(r"[-/]", w.lower().strip(".'’-")) if p)
        ]
        if any(abs(i - j) <= COUNT_WINDOW for i in at_number for j in at_thing):
            return True
        # "with no required dependencies" counts them: none.
        at_none = [i for i, w in enumerate(words) if w.lower() in ("no", "zero")]
        if any(0 < j - i <= 3 for i in at_none for j in at_thing):
            return True
    return False


#: A remark in brackets: "Which draft (not yet final) RFCs ...?" asks for several RFCs.
_REMARK_RE = re.compile(r"\s*\([^()]*\)")


def unremarked(question: str) -> str:
    """The question without its remarks in brackets."""
    return _REMARK_RE.sub("", question)


#: "Which X ...?" asks for names: a sentence naming several things is likelier the answer.
_WHICH_RE = re.compile(
    r"^\s*(?:which|what)\s+(?:[\w\-]+\s+){0,2}?[\w\-]+s\s+(?:are|were|do|does|did|can|is|has|have)\b|^\s*哪些",
    re.IGNORECASE,
)
_NAMES_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z0-9]+")
#: "Which packages use X?": which, a plural noun, then whatever verb (a
#: modifier before the noun could be a noun taken for the verb: "Which
#: company supports X?").
_WHICH_PLURAL_RE = re.compile(
    r"^\s*(?i:which)\s+(?!(?:does|has|was|is|this|its)\b)[a-z][\w\-]*[a-hj-rtv-z]s\s+(?!of\b)[a-z]"
)
#: A name written as code: words joined by "-" or "_" ("otlp-proto-grpc", "otlp_http").
_CODE_WORD_RE = re.compile(r"\b[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+\b")


def _code_word(word: str) -> bool:
    """A joined word is a name when English would not write it so: an
    underscore, a digit, or three parts none of them a function word
    ("well-known" and "up-to-date" are English; "otlp-proto-grpc" is not)."""
    parts = re.split(r"[-_]", word)
    if "_" in word or any(c.isdigit() for c in word):
        return True
    return len(parts) >= 3 and not any(p in STOP_EN for p in parts)


def wants_names(question: str) -> bool:
    """ "Which Xs are / does ...?", "Which packages use X?": answered by naming
    instances (bracketed remarks aside)."""
    plain = unremarked(question)
    return bool(_WHICH_RE.match(plain) or _WHICH_PLURAL_RE.match(plain))


def listed_names(sentence: str, question: str) -> set[str]:
    """The names a sentence gives: capitalised words after its first, and
    code names the question does not hold ("opentelemetry-exporter-otlp-proto-grpc")."""
    asked = question.lower()
    code = {w for m in _CODE_WORD_RE.finditer(sentence) if _code_word(w := m.group(0)) and w not in asked}
    return set(_NAMES_RE.findall(sentence)) | code
