"""What a question is about, and whether a piece of evidence is about it.

    lexical <- phrases <- question <- relevance <- evidence | subject <- assess | generate <- ...
                                                             ^^^^^^^ here: imports lexical,
                                                                     phrases; shared by
                                                                     assess and generate.

    question + evidence --subject_names()--> the things the question names:
        a quoted term, an identifier ("E4012"), a word of three hyphenated
        parts ("py-partiql-parser") or of two words ("pydantic-settings",
        not "built-in"), a run of capitalised words ("Sorted Containers", "Docker
        SDK"), a capitalised word inside the sentence ("Pygments"), and any
        document the question names by its own name (a word equal to an
        evidence's file name or title: "idna" for idna.md; two or three
        words it writes together, "Its Dangerous" for itsdangerous.md; the project of
        "owner/project", "pyca/cryptography" for cryptography.rst), a code
        identifier ("importlib_metadata", "os.environ"), and a bare word
        where English needs a determiner: the subject of an inverted
        question ("does fastjsonschema support", "is filelock released"),
        the last object of "Who maintains mdurl?", the subject of a relative
        clause ("the version that pytest supports"), or the word before
        "release" / "version" in "In which pytest release ...?" (not a
        qualifier: "major", "latest") (bare_names); a project's
        conventional file ("README", "CHANGELOG") names the document, not a thing
    name + evidence --mentions()--> the evidence's text, title, heading,
        source or metadata values hold the name: every word of it, or the name
        as a whole word, written apart or together ("sortedcontainers" for
        "Sorted Containers"), a hyphenated word by its parts ("Protobuf over
        HTTP" for "Protobuf-over-HTTP"), a CamelCase one by its capitalised
        words ("Beautiful Soup" for "BeautifulSoup"); a longer word that starts with it is another
        name ("httpx2" is not "HTTPX")
    names + evidence --about()--> the share of the names it mentions
    names + evidence --subject_share()--> about(), plus 1 for the document
        of one of them (its title or file name is the name)

Why: a question about one thing answered from a document about another is
the most confident kind of wrong answer (the licence line of the wrong
package). Generate prefers evidence about the question's subject; assess
refuses when no passage mentions it, and says which name is missing.
"""

from __future__ import annotations

import re
from collections import Counter

from selfrag_nb.llm.offline.abbrev import numeronym_words
from selfrag_nb.llm.offline.lexical import JOINED_MIN, STOP_EN, bag, compact, doc_names, stem, wordset
from selfrag_nb.llm.offline.phrases import entities
from selfrag_nb.llm.schemas import Evidence
from selfrag_nb.text import is_cjk, tokenize

__all__ = ["about", "bare_names", "mentions", "subject_names", "subject_share"]

_QUOTES = frozenset("\"'“‘「『《")
#: The conventional file names of a software project, written in capitals:
#: a question naming one ("the X README", "its CHANGELOG") names where a
#: thing is said, not the thing.
_PROJECT_FILES = wordset(
    "readme license licence changelog changes contributing authors install copying news history notice todo"
)

#: A wh-question with subject-auxiliary inversion: the word after the
#: auxiliary is the subject, and a verb or participle follows it. The
#: wh-phrase may carry its preposition ("Under what licence is X distributed?");
#: a preposition after the word makes it a noun phrase ("was support for ...").
#: Do-support inverts wherever it stands ("What does X do?"); another
#: auxiliary right after the wh-word has the wh-word for its subject ("Who has
#: taken over ...?": "taken" is the verb), so it must follow a noun of the
#: wh-phrase ("What license is X released under?").
_INVERTED_RE = re.compile(
    r"^\s*(?:(?:under|in|on|for|with|from|since|to|at|by|after|before|until)\s+)?(?:what|which|who|whom|whose|how|when|where|why)\b(?:[^?]*?\b(?:do|does|did)|[^?]*?\b(?!(?:what|which|who|whom|whose|how|when|where|why)\b)"
    r"[a-z][\w-]*\s+(?P<aux>is|was|has|can|will|should|could|would))\s+([A-Za-z][\w.+-]*?)(?:'s)?\s+(?!(?:for|of|in|on|with|to|from|by|at|about|as|into)\b)[a-z]{2,}",
    re.IGNORECASE,
)
#: "In which pytest release ...?", "Which jiter version ...?": one bare word
#: between the wh-word and "release" / "version" is whose release it is,
#: unless it says which one (a qualifier: "major", "latest", "stable").
_RELEASE_OF_RE = re.compile(
    r"^\s*(?:(?:in|from|since|with|by|for|at|after|before|until)\s+)?(?:which|what)\s+([a-z][\w.+-]*)\s+(?:release|version)s?\b",
    re.IGNORECASE,
)
_RELEASE_QUALIFIERS = wordset(
    "major minor patch point bugfix feature security maintenance lts stable beta alpha final initial "
    "latest last first next new newer newest old older oldest current earliest previous recent upcoming "
    "future supported minimum maximum particular specific exact same python"
)
#: "Which standard-library modules does ...": the words between the wh-word and
#: the auxiliary.
_KIND_PHRASE_RE = re.compile(
    r"^\s*(?:which|what)\s+((?:[\w-]+\s+){1,4}?)(?:do|does|did|is|are|was|were|has|have|can)\b", re.IGNORECASE
)
#: "Who maintains X?": a verb and one bare word ending the question.
_WHO_OBJECT_RE = re.compile(r"^\s*who\s+[a-z]+s\s+([A-Za-z][\w.+-]*?)\s*\?*\s*$", re.IGNORECASE)


#: "... the minimum PyPy version that pytest supports?": a relative clause's
#: subject, one bare word before its verb (the pronoun follows a noun: a
#: question's own "Which" opens no relative clause).
_RELATIVE_SUBJECT_RE = re.compile(
    r"(?<=[A-Za-z0-9]\s)(?:that|which)\s+([a-z][\w.+-]*?)\s+(?:does\s+not\s+|doesn't\s+|still\s+)?[a-z]+(?:s|ed)\b",
    re.IGNORECASE,
)


def bare_names(question: str) -> list[str]:
    """Words standing alone where English puts a determiner before a singular
    common noun: the subject of an inverted question ("What license is
    filelock released under?", "Which versions does fastjsonschema
    support?") and the last object of "Who maintains mdurl?". Such a word is a
    proper name even in lower case. Pronouns and function words ("do I need",
    "is it") and gerunds, which stand alone as mass nouns ("How does caching
    work?"), are not."""
    out: list[str] = []
    if (r := _RELEASE_OF_RE.match(question)) and r.group(1).lower() not in STOP_EN | _RELEASE_QUALIFIERS:
        out.append(r.group(1))
    for r in _RELATIVE_SUBJECT_RE.finditer(question):
        word = r.group(1)
        # a bare plural is a common noun ("that users need"); a singular one is a name
        plural = word.endswith("s") and not word.endswith(("ss", "us", "is"))
        if word.lower() not in STOP_EN and not plural and not word.lower().endswith("ing"):
            out.append(word)
    for rx in (_INVERTED_RE, _WHO_OBJECT_RE):
        m = rx.match(question)
        if m is None:
            continue
        word = m.group(m.lastindex or 1).rstrip(".")
        if word.lower() in STOP_EN or len(word) < 2 or word.lower().endswith("ing"):
            continue
        if m.groupdict().get("aux") and word.lower().endswith(("ed", "en")):
            # "Which endpoint was added in v3.2?": a participle after "be" or
            # "have" is the wh-phrase's own verb (passive, perfect), not a subject.
            continue
        out.append(word)
    return out


def _doc_names(ev: Evidence) -> set[str]:
    return doc_names(ev.title, ev.source)


_IDENT_PART_RE = re.compile(r"[_./]")


def _identifier(token: str) -> bool:
    """A code identifier: words joined by "_", "." or "/" ("importlib_metadata",
    "os.environ", "urllib.parse"), each part two characters or more and not a
    function word ("and/or", "e.g", "i/o" are not), not a version ("v1.2", "3.9")."""
    parts = _IDENT_PART_RE.split(token)
    if len(parts) < 2 or not token[:1].isalpha() or (token[0] in "vV" and token[1:2].isdigit()):
        return False
    return all(len(p) >= 2 and p.isalnum() and p.lower() not in STOP_EN for p in parts) and any(
        p.isalpha() and len(p) >= 3 for p in parts
    )


def _compound(token: str) -> bool:
    """Two words of three letters or more joined by a hyphen, neither a
    function word nor a participle, the first not an adjective that opens a
    compound modifier: "pydantic-settings", "read-only" (not "built-in",
    "e-mail"; not "free-threaded", "community-maintained" or "large-file",
    which describe rather than name)."""
    parts = token.split("-")
    return (
        len(parts) == 2
        and parts[0].lower() not in _MODIFIER_HEADS
        and all(
            len(p) >= 3 and p.isalpha() and p.lower() not in STOP_EN and not p.lower().endswith(("ed", "ing"))
            for p in parts
        )
    )


#: Adjectives that open a compound modifier ("large-file storage",
#: "high-level API", "long-running task"): the compound describes a noun.
_MODIFIER_HEADS = wordset(
    "large small big high low long short full half open deep wide fast slow hard soft hot cold new old "
    "well ill free self multi single double cross real top"
)


def _names_file(question: str, token: str) -> bool:
    """``token`` owns a project file the question names ("the quill-settings
    README"): it says where a thing is written, not what is asked about."""
    after = question.split(token, 1)[-1].split()
    return bool(after) and after[0].isupper() and after[0].lower() in _PROJECT_FILES


def subject_names(question: str, evidence: list[Evidence]) -> list[str]:
    """The things ``question`` names (see the module doc), in question order."""
    found: list[str] = []
    for e in entities(question):
        words = e.text.split()
        quoted = e.rank == 0 and question[e.position : e.position + 1] in _QUOTES
        capitalised = all(w[:1].isupper() or w[:1].isdigit() for w in words)
        if e.rank in (0, 1) and not quoted and not capitalised:
            # "Pro subscription" (a noun with its head word), "long are API" (a
            # capitalised word with its neighbours): phrases, not names.
            continue
        if e.rank == 3 and (e.position == 0 or (e.text.isupper() and len(e.text) <= 4)):
            # The first word of a sentence is capitalised anyway; a short
            # acronym ("API", "SDK", "CSS") is a common noun of its field.
            continue
        if any(is_cjk(c) for c in e.text):
            continue  # Chinese has no capitals or spaces to mark a name: phrases run on
        # "the pydantic-settings README lists ...", "the Quill CHANGELOG": the
        # document a thing is said in, not the thing.
        # Only the capitalised file name: "Apache License" and "Release History"
        # are names of things, "LICENSE" and "CHANGELOG" are files.
        name = " ".join(w for w in e.text.split() if not (w.isupper() and w.lower() in _PROJECT_FILES))
        if name:
            found.append(name)
    bare = bare_names(question)
    found.extend(bare)
    # "Which standard-library modules does AnyIO provide ...?": with its subject
    # after the auxiliary, the words of the wh-phrase describe the kind asked for.
    kind = _KIND_PHRASE_RE.match(question) if bare else None
    kind_words = set(kind.group(1).lower().split()) if kind else set()
    docs = set().union(*(_doc_names(ev) for ev in evidence)) if evidence else set()
    toks = tokenize(question)
    # "When does Its Dangerous verify ...?": words a document's own name writes
    # together are one name, a function word among them too ("itsdangerous.md").
    # (first, so that they win over their parts: "Dangerous" alone names nothing)
    joined = [
        _as_written(question, toks[i : i + n])
        for n in (3, 2)
        for i in range(len(toks) - n + 1)
        if len(run := compact("".join(toks[i : i + n]))) >= JOINED_MIN and run in docs
    ]
    found = [*joined, *found]
    for tok in toks:
        key = compact(tok)
        # "pyca/cryptography": an owner and its project, the project's document
        # named by the part after the slash.
        tail = tok.rsplit("/", 1)[-1] if tok.count("/") == 1 else ""
        if len(key) >= 2 and key in docs and tok not in STOP_EN:
            found.append(tok)
        elif len(compact(tail)) >= 2 and compact(tail) in docs:
            found.append(tail)
        elif tok.count("-") >= 2 or (
            _compound(tok) and not _names_file(question, tok) and tok not in kind_words
        ):
            # "py-partiql-parser", "pydantic-settings": a name; a compound
            # modifier ("read-only") is one too, mentioned wherever its words are.
            found.append(tok)
        elif _identifier(tok):
            found.append(tok)  # "importlib_metadata", "os.environ": code names a thing
    out: list[str] = []
    seen: set[str] = set()
    for name in found:
        key = compact(name)
        if key and key not in seen and not any(key in s for s in seen):
            seen.add(key)
            out.append(name)
    return out


def _as_written(question: str, words: list[str]) -> str:
    """``words`` (tokens, lower case) as ``question`` writes them ("Its Dangerous")."""
    m = re.search(r"[\W_]+".join(re.escape(w) for w in words), question, re.IGNORECASE)
    return m.group(0) if m else " ".join(words)


_ALNUM_RE = re.compile(r"[^\W_]+")
_LATIN = r"[a-z0-9\u00c0-\u024f]"


def _whole(name: str) -> re.Pattern[str] | None:
    """The name as a whole word, its parts written apart or together
    ("Sorted Containers" in "sortedcontainers"), never as the start or the
    end of a longer word: "HTTPX" is not "httpx2", "Click" not "ClickHouse"."""
    parts = [re.escape(p) for p in _ALNUM_RE.findall(name.lower())]
    if not parts:
        return None
    # Latin letters and digits bound a word; a CJK character does not (a name
    # runs straight into Chinese text: "使用Quillstack同步").
    return re.compile(rf"(?<!{_LATIN})" + r"[\W_]*".join(parts) + rf"(?!{_LATIN})")


def mentions(name: str, ev: Evidence) -> bool:
    """The evidence (text, title, heading, source, metadata values such as
    ``plan: Pro``) names ``name``."""
    meta = " ".join(str(v) for v in ev.metadata.values() if isinstance(v, (str, int, float)))
    where = f"{ev.text} {ev.title} {ev.heading} {ev.source} {meta}"
    whole = _whole(name)
    if whole is not None and whole.search(where.lower()):
        return True
    words = tokenize(name)
    found = bag(where)
    if words and all(_said(w, found) for w in words):
        return True
    if len(words) == 1 and numeronym_words(words, where):
        return True  # "K8s" names Kubernetes
    # "BeautifulSoup" in "Beautiful Soup": a name written together in CamelCase
    # is its capitalised words written apart.
    parts = _CAMEL_PART_RE.findall(name) if _CAMEL_RE.fullmatch(name) else []
    return len(parts) >= 2 and all(found.get(stem(p.lower()), 0) for p in parts)


_CAMEL_RE = re.compile(r"(?:[A-Z][a-z]{2,}){2,}")
_CAMEL_PART_RE = re.compile(r"[A-Z][a-z]+")


def _said(word: str, found: Counter[str]) -> bool:
    """``word`` of a name is in the bag: whole (a version also with its "v"), or, for a hyphenated compound,
    every part that is a content word ("Protobuf-over-HTTP" in "Protobuf
    over HTTP"): the hyphens bind a compound modifier, the words are its."""
    if found.get(stem(word), 0):
        return True
    if word[:1].isdigit() and found.get(f"v{word}", 0):
        return True  # "v2.14.4" in a changelog heading is version 2.14.4
    parts = [p for p in word.split("-") if len(p) > 3 and p.lower() not in STOP_EN] if "-" in word else []
    return bool(parts) and all(found.get(stem(p), 0) for p in parts)


def about(names: list[str], ev: Evidence) -> float:
    """Share (0..1) of ``names`` the evidence mentions (1.0 when there are none)."""
    if not names:
        return 1.0
    return sum(mentions(n, ev) for n in names) / len(names)


def subject_share(names: list[str], ev: Evidence) -> float:
    """How much ``ev`` is about what the question names: the share of the
    names it mentions (``about``), plus 1 when it is the document of one of
    them (its title or file name is the name: "flask.md" for "Flask"). A
    README that mentions Flask in passing is less about Flask than Flask's own."""
    own = any(compact(n) in _doc_names(ev) for n in names)
    return about(names, ev) + (1.0 if own else 0.0)
