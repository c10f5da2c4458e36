"""Small, dependency-free text utilities shared by the store, the stages and the
offline model.

    text -> normalize_key()      cache keys (NFKC, case, whitespace, punctuation)
    text -> detect_language()    "zh" when CJK dominates, else "en"
    text -> tokenize()           lower-cased words + CJK character bigrams
    text -> split_sentences()    sentence boundaries in English and Chinese
    word -> american()           a British spelling folded into the American one
    text -> printable()          terminal-safe: controls, bidi overrides, zero-width
                                 chars and lone surrogates shown as visible marks
    text -> lone_surrogate()     index of the first lone surrogate, or None
    text -> validate_unicode()   text, or a ValueError naming the argument and index
    text -> markers_in()         the [n] citation numbers; strip_markers(): text without them
    VIEW_CONTROLS / TERMINAL_CONTROLS / HIDDEN   the one table of invisible and
                                 control characters (views, terminals, injection flags)

Everything here is pure Python so ``import selfrag_nb`` stays fast.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from selfrag_nb.errors import InputError

__all__ = [
    "BIDI",
    "C0",
    "C1",
    "FORMAT",
    "HIDDEN",
    "INVISIBLE",
    "JOINERS",
    "MARKER",
    "SURROGATES",
    "TERMINAL_CONTROLS",
    "VIEW_CONTROLS",
    "ZERO_WIDTH",
    "char_class",
    "detect_language",
    "is_cjk",
    "lone_surrogate",
    "markers_in",
    "normalize_key",
    "printable",
    "split_sentences",
    "strip_markers",
    "tokenize",
    "validate_unicode",
]

# CJK Unified Ideographs, extension A and compatibility ideographs; kana and
# hangul are tokenised the same way (no spaces between words).
_CJK_RANGES = (
    (0x3040, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
)

# ASCII and full-width punctuation removed from cache keys (Self-RAG design:
# lower-case and strip "，。？！,?.!"; we take the whole punctuation class).
_PUNCT_RE = re.compile(r"[\s\u3000]+")

# A word: letters/digits with inner dots, dashes, underscores and slashes kept
# so identifiers ("ORD-2024-0042", "v2.3.1", "api/v1") survive as one token.
_WORD_RE = re.compile(r"[0-9A-Za-z\u00C0-\u024F]+(?:[._\-/:][0-9A-Za-z\u00C0-\u024F]+)*")

# Sentence ends: ASCII .!? followed by space/end, or CJK 。！？；, or newlines
# that separate paragraphs. Not an end: a period between digits (3.5) or
# letters without a following space, a period before a lowercase word (a
# sentence does not start with one), or the period of a common Latin or
# English abbreviation ("e.g. Red-Black trees", "Dr. Smith").
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "Mr.", "Mrs.", "Dr.", "No.", "Fig.", "al.")
_NOT_AFTER = "".join(f"(?<!\\b{re.escape(a)})" for a in _ABBREVIATIONS)
_SENT_END_RE = re.compile(rf"{_NOT_AFTER}(?<=[.!?])\s+(?![a-z])|(?<=[。！？；])|\n\s*\n")


# ------------------------------------------------------------ invisible characters
# One table of characters that hide, split or reorder text, read by every
# consumer: the views label VIEW_CONTROLS (display/markup.py, and the widgets'
# JS through display/js.py), printable() marks TERMINAL_CONTROLS, the
# injection flagger (llm/injection.py) drops HIDDEN before matching. Each is
# a tuple of inclusive (first, last) code point ranges.

Ranges = tuple[tuple[int, int], ...]

#: Bidi marks, embeddings, overrides and isolates: they reorder the text around them.
BIDI: Ranges = ((0x061C, 0x061C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2066, 0x2069))
#: Zero-width characters that hide or split text: ZWSP, word joiner, invisible operators, BOM.
ZERO_WIDTH: Ranges = ((0x200B, 0x200B), (0x2060, 0x2064), (0xFEFF, 0xFEFF))
#: ZWNJ and ZWJ: invisible, but Persian, Indic scripts and emoji sequences need them.
JOINERS: Ranges = ((0x200C, 0x200D),)
#: C0 controls other than tab, newline and carriage return, and DEL.
C0: Ranges = ((0x00, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0x7F, 0x7F))
#: C1 controls: ESC/CSI/OSC sequences clear screens, move cursors, open OSC-8 links.
C1: Ranges = ((0x80, 0x9F),)
#: Lone surrogates: they cannot be encoded, so printing one raises.
SURROGATES: Ranges = ((0xD800, 0xDFFF),)
#: Every format character (category Cf: soft hyphen, Arabic number signs,
#: zero-width, bidi, tags, ...); tests/reliability checks it against unicodedata.
FORMAT: Ranges = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001), (0xE0020, 0xE007F),
)  # fmt: skip
#: Invisible characters outside Cf: the combining grapheme joiner, Hangul
#: fillers, Khmer inherent vowels, Mongolian variation selectors, variation selectors.
INVISIBLE: Ranges = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180D), (0x180F, 0x180F),
    (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0),
)  # fmt: skip


def _union(*sets: Ranges, drop: Callable[[int], bool] = lambda cp: False) -> Ranges:
    points = sorted({cp for ranges in sets for a, b in ranges for cp in range(a, b + 1) if not drop(cp)})
    out: list[tuple[int, int]] = []
    for cp in points:
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return tuple(out)


#: What every view shows as a ``U+XXXX`` label instead of obeying (HTML, widgets, text lines).
VIEW_CONTROLS: Ranges = _union(C0, BIDI, ZERO_WIDTH, JOINERS)
#: What printable() marks for a terminal (carriage return too; joiners stay).
TERMINAL_CONTROLS: Ranges = _union(C0, ((0x0D, 0x0D),), C1, BIDI, ZERO_WIDTH, SURROGATES)
#: What the injection flagger removes before matching: everything a view labels
#: and every other invisible character, except whitespace (it separates words).
HIDDEN: Ranges = _union(VIEW_CONTROLS, FORMAT, INVISIBLE, drop=lambda cp: chr(cp).isspace())


def char_class(ranges: Ranges) -> str:
    """``ranges`` as a regex character class with ``\\u`` escapes, valid in
    Python and (for the Basic Multilingual Plane) in JavaScript: ``[\\u200b-\\u200f...]``."""

    def one(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"

    return "[" + "".join(one(a) if a == b else f"{one(a)}-{one(b)}" for a, b in ranges) + "]"


# What a terminal acts on instead of showing, or what hides or reorders text.
_UNPRINTABLE_RE = re.compile(char_class(TERMINAL_CONTROLS))
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    cp = ord(m.group(0))
    if cp < 0x20:
        return chr(0x2400 + cp)  # Control Pictures: ESC -> U+241B, BEL -> U+2407
    if cp == 0x7F:
        return "\u2421"
    return f"<U+{cp:04X}>"


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: every character a terminal would
    act on or that hides/reorders text is replaced by a visible mark
    (control pictures for C0/DEL, ``<U+XXXX>`` otherwise); newlines and tabs
    stay. Rich markup is not touched: wrap the result in ``rich.text.Text``."""
    return _UNPRINTABLE_RE.sub(_visible, text)


def lone_surrogate(text: str) -> int | None:
    """Index of the first lone surrogate (U+D800-U+DFFF) in ``text``, or None.
    Such a string is not valid Unicode: it cannot be encoded to UTF-8."""
    m = _SURROGATE_RE.search(text)
    return None if m is None else m.start()


def is_cjk(ch: str) -> bool:
    """True for an ideograph, kana or hangul character."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def normalize_key(text: str) -> str:
    """Normalise a question for cache keys: NFKC (full-width -> ASCII), case-fold,
    punctuation removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(c).startswith("P") else c for c in text)
    return _PUNCT_RE.sub(" ", text).strip()


def detect_language(text: str) -> str:
    """ "zh" when at least a fifth of the letters are CJK, else "en"."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for c in letters if is_cjk(c))
    return "zh" if cjk * 5 >= len(letters) else "en"


def tokenize(text: str) -> list[str]:
    """Lower-cased tokens: words (identifiers kept whole) and, for runs of CJK
    characters, each character's bigram with its neighbour (single characters
    for runs of length one). Bigrams are the usual unsupervised choice for
    Chinese retrieval when no dictionary segmenter is available."""
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if len(run) == 1:
            tokens.append(run[0])
        else:
            tokens.extend(run[i] + run[i + 1] for i in range(len(run) - 1))
        run.clear()

    pos = 0
    for m in _WORD_RE.finditer(text):
        for ch in text[pos : m.start()]:
            if is_cjk(ch):
                run.append(ch)
            elif run:
                flush()
        if run:
            flush()
        tokens.append(m.group(0))
        pos = m.end()
    for ch in text[pos:]:
        if is_cjk(ch):
            run.append(ch)
        elif run:
            flush()
    if run:
        flush()
    return tokens


#: British spellings folded into American ones ("licence" -> "license",
#: "colour" -> "color", "initialise" -> "initialize", "centre" -> "center"):
#: a fold, not a dictionary, so a word that merely ends so folds too
#: ("promise" -> "promize"); both sides of a comparison pass through it, and a
#: search that adds the folded word finds nothing more with a non-word.
_SPELLINGS = (
    (re.compile(r"(?<=\w\w)our(s?)$"), r"or\1"),
    (re.compile(r"(?<=\w{4})is(e|es|ed|ing|ation|ations)$"), r"iz\1"),
    (re.compile(r"(?<=\w{3})ys(e|es|ed|ing)$"), r"yz\1"),
    (re.compile(r"(?<=\w\w)enc(e|es)$"), r"ens\1"),
    (re.compile(r"(?<=\w\w)tre(s?)$"), r"ter\1"),
    (re.compile(r"(?<=\w\w)ogue(s?)$"), r"og\1"),
)


def american(word: str) -> str:
    """``word`` (lower case) with a British spelling folded into the American one."""
    for pattern, repl in _SPELLINGS:
        word = pattern.sub(repl, word)
    return word


def split_sentences(text: str) -> list[str]:
    """Split into sentences, keeping each sentence's closing punctuation.
    Works for English, Chinese and mixed text; empty pieces are dropped."""
    parts = _SENT_END_RE.split(text)
    return [p.strip() for p in parts if p and p.strip()]


def validate_unicode(name: str, text: str) -> str:
    """``text`` unchanged, or a ValueError naming ``name`` when it holds a lone
    surrogate: such a string cannot be encoded, so it would fail much later
    (in a search filter, in ``Trace.to_json``) with an error naming nothing.
    Refused rather than repaired: guessing the intended character is not
    possible, and the trace must keep what was asked."""
    i = lone_surrogate(text)
    if i is not None:
        raise InputError(
            f"{name} contains a lone surrogate U+{ord(text[i]):04X} at index {i}; text must be valid Unicode"
        )
    return text


# Citation markers: [1], [1, 2], [1][2], full-width 【1】 and ［1］, lists
# with Chinese commas. One pattern for generate, verify and finish.
MARKER = r"[\[【［]\s*\d{1,3}(?:\s*[,，、]\s*\d{1,3})*\s*[\]】］]"
_MARKER_RE = re.compile(r"[\[【［]\s*(\d{1,3}(?:\s*[,，、]\s*\d{1,3})*)\s*[\]】］]")
_STRIP_MARKERS_RE = re.compile(rf"\s*{MARKER}")


def markers_in(text: str) -> list[int]:
    """The [n] numbers in ``text`` (in order of first use, repeats removed)."""
    nums: list[int] = []
    for m in _MARKER_RE.finditer(text):
        for part in re.split(r"[,，、]", m.group(1)):
            n = int(part.strip())
            if n not in nums:
                nums.append(n)
    return nums


def strip_markers(text: str) -> str:
    """``text`` without its citation markers (and the space before each)."""
    return _STRIP_MARKERS_RE.sub("", text)
