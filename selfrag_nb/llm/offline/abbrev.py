"""Abbreviations, read as the words they stand for (pure functions).

    lexical <- abbrev <- relevance | subject | generate | usefulness

    text "GC" + question "garbage collection"   --acronym_words()-->   garbag, collect
    text "K8s" + question word "Kubernetes"     --numeronym_words()--> kubernetes
    question "What does X stand for?"           --expansion_of()-->    initials pattern

An acronym spells the initials of words standing in a row; a numeronym
keeps a word's first and last letters and counts the letters between
("K8s" is Kubernetes, "i18n" internationalization, "a11y" accessibility).
Both are matched against the question's own words only: nothing here
knows any particular abbreviation.
"""

from __future__ import annotations

import re
from collections import Counter

from selfrag_nb.llm.offline.lexical import STOP_EN, stem
from selfrag_nb.text import tokenize

__all__ = ["acronym_words", "expansion_of", "numeronym_words"]

_ACRONYM_RE = re.compile(r"\b([A-Z]{2,5})s?\b")


def acronym_words(question: str, text: str) -> Counter[str]:
    """Stems of the question's words that an acronym of ``text`` abbreviates:
    "GC" in the text, "garbage collection" in the question -> garbag, collect
    (once per mention). The words must stand in a row in the question and
    their initials spell the acronym; an acronym the question writes itself
    needs no expansion."""
    words = [t for t in tokenize(question) if t.isalpha()]
    asked = set(words)
    out: Counter[str] = Counter()
    for m in _ACRONYM_RE.finditer(text):
        short = m.group(1).lower()
        if short in asked:
            continue
        n = len(short)
        for i in range(len(words) - n + 1):
            run = words[i : i + n]
            if "".join(w[0] for w in run) == short and not any(w in STOP_EN for w in run):
                for w in run:
                    out[stem(w)] += 1
                break
    for w in numeronym_words(words, text):
        out[stem(w)] += 1
    return out


#: A numeronym: a letter, how many letters it leaves out (three or more, so
#: not "p2p" or "e2e"), a letter.
_NUMERONYM_RE = re.compile(r"(?<![\w-])([A-Za-z])([3-9]|[1-9]\d)([A-Za-z])(?![\w-])")


def numeronym_words(words: list[str], text: str) -> set[str]:
    """The words of ``words`` that a numeronym in ``text`` abbreviates
    ("K8s" -> "Kubernetes"): same first and last letter, and the number
    counts the letters between."""
    found = {(m.group(1).lower(), int(m.group(2)), m.group(3).lower()) for m in _NUMERONYM_RE.finditer(text)}
    if not found:
        return set()
    return {
        w for w in words if len(w) >= 5 and w.isalpha() and (w[0].lower(), len(w) - 2, w[-1].lower()) in found
    }


#: "What does X stand for?", "What does the "ng" in X stand for?", "What is X
#: short for?", "What does the acronym X mean?": X's letters are initials.
_STANDS_FOR_Q_RE = re.compile(
    r"^\s*what\s+(?:does|do|did)\s+(?:the\s+(?:name|word|acronym|abbreviation|initialism|letters?)\s+)?"
    r"(?:the\s+)?[\"'“‘]?(?P<a>[A-Za-z][\w.-]{1,11}?)[\"'”’]?\s+(?:in\s+[\"'“‘]?[\w.-]+[\"'”’]?\s+)?stands?\s+for\b|"
    r"^\s*what\s+is\s+[\"'“‘]?(?P<b>[A-Za-z][\w.-]{1,11}?)[\"'”’]?\s+short\s+for\b|"
    r"^\s*what\s+does\s+the\s+(?:acronym|abbreviation|initialism)\s+[\"'“‘]?(?P<c>[A-Za-z][\w.-]{1,11}?)[\"'”’]?"
    r"\s+mean\b",
    re.IGNORECASE,
)


def expansion_of(question: str) -> re.Pattern[str] | None:
    """For "What does X stand for?", the words X's letters are the initials
    of: capitalised words in a row, parts joined by a hyphen counting as words
    and function words in lower case skipped ("Command Line Interface Creation
    Kit" for "Click", "Next-Generation" for "ng", "JSON Object Signing and
    Encryption" for "JOSE"); None for any other question."""
    m = _STANDS_FOR_Q_RE.match(question)
    if m is None:
        return None
    letters = re.sub(r"[^A-Za-z]", "", m.group("a") or m.group("b") or m.group("c"))
    if not 2 <= len(letters) <= 12:
        return None
    # Function words in lower case between them carry no initial ("JSON
    # Object Signing and Encryption" for "JOSE").
    joint = r"(?:[\s-]+(?:and|or|of|for|the|in|on|to|with|a|an|&))*[\s-]+"
    words = joint.join(rf"{c.upper()}[A-Za-z]*" for c in letters)
    return re.compile(rf"(?<![\w-]){words}(?![\w-])")
