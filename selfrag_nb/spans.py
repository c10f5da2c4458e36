"""Protected spans: the exact pieces of a question a rewrite must not lose.

    original question
      -> extract_spans()      quoted > order > identifier > amount > date > version > name > number
                              + negations (not/no/without/never/n't, 不/没有/无法/未/非)
      -> [ProtectedSpan(text, kind)]
    rewrite + spans
      -> check_rewrite()      every span kept (exact for IDs/numbers, case-insensitive for
                              words and quotes), negations neither dropped nor added
      -> SpanCheck(ok, missing, reason)

A rewrite may change the wording, never the product,
version, number, time or negation of the question ("which are NOT supported"
must not become "which are supported"). Pure Python, no model involved.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from selfrag_nb.trace import ProtectedSpan

__all__ = ["SpanCheck", "check_rewrite", "count_negations", "extract_spans"]

# Kinds compared exactly (after NFKC); every other kind is compared case-insensitively.
_EXACT_KINDS = frozenset({"identifier", "order", "version", "date", "amount", "number"})

# Earlier entries win when two candidates overlap (a quoted ID stays one quoted span).
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "quoted",
        re.compile(
            r"\"([^\"]{1,200})\"|“([^”]{1,200})”|「([^」]{1,200})」|『([^』]{1,200})』|‘([^’]{1,200})’"
        ),
    ),
    (
        "order",
        re.compile(
            r"(?i)(?:\b(?:order|ord|invoice|inv|ticket|case)\s*(?:no\.?|number|#|id)?\s*[:#]?\s*|#|订单号?\s*[:：]?\s*|工单号?\s*[:：]?\s*)"
            # The whole token, and not a year: "order 2000年1月1日" names a day.
            r"(?<![\w-])([A-Za-z]{0,6}-?\d[\dA-Za-z-]{3,})(?![\dA-Za-z-]|\s*年)"
        ),
    ),
    # API paths (/v3/invoices/{id}); letters and digits mixed, or joined by - _ / .
    # (ORD-2024-0042, SKU_12, X200, E4012.); snake_case parameters (per_page).
    (
        "identifier",
        re.compile(
            r"(?<![\w/])/[A-Za-z0-9_{}.\-]*[A-Za-z0-9_}](?:/[A-Za-z0-9_{}.\-]*[A-Za-z0-9_}])*"
            r"|(?<![\w.])(?=[A-Za-z0-9_\-/.]*[A-Za-z])(?=[A-Za-z0-9_\-/.]*\d)[A-Za-z0-9]+(?:[-_/][A-Za-z0-9]+)+(?!\w|\.\w)"
            r"|(?<![\w.])(?=\w*[A-Za-z])(?=\w*\d)[A-Za-z]+\d+[A-Za-z0-9]*(?!\w|\.\w)"
            r"|\b[a-z][a-z0-9]*_[a-z0-9_]+\b"
        ),
    ),
    # Amounts before dates and versions: "$1900" is an amount, not the year 1900,
    # and "$1,900.50" is not the version "900.50".
    (
        "amount",
        re.compile(
            r"[$€£¥￥]\s?\d[\d,]*(?:\.\d+)?(?:\s?[kKmM]\b)?|\d[\d,]*(?:\.\d+)?\s?(?:%|％|元|美元|欧元|(?i:usd|eur|gbp|cny|rmb|dollars?|euros?)\b)"
        ),
    ),
    (
        "date",
        re.compile(
            r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{4}\b"
            r"|\d{4}\s*年(?:\s*\d{1,2}\s*月)?(?:\s*\d{1,2}\s*[日号])?|\d{1,2}\s*月\s*\d{1,2}\s*[日号]"
            r"|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}\b)"
            r"|(?i:\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?\s+\d{4}\b)"
            r"|(?i:\bQ[1-4]\s*\d{4}\b)|\b(?:19|20)\d{2}\b"
        ),
    ),
    ("version", re.compile(r"(?i)(?<![\w.])v?\d+(?:\.\d+){1,3}(?![\w.])|(?i:\bv\d+\b)")),
    # Names: mixed case (macOS 11) or Capitalised words inside a sentence (Free, Quillstack Sync,
    # Windows 7), with a trailing version number kept.
    (
        "name",
        re.compile(
            r"\b[a-z]+[A-Z][A-Za-z]*(?:\s\d+(?:\.\d+)*)?\b"
            r"|(?<=[a-z0-9,;:]\s)[A-Z][a-z][A-Za-z]*(?:\s[A-Z][a-z][A-Za-z]*)*(?:\s\d+(?:\.\d+)*\b)?"
        ),
    ),
    ("number", re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w.])|(?<![0-9.])\d+(?=[\u4e00-\u9fff])")),
)

# All-caps acronyms (SSO, SAML, GDPR) name products and features: keep them too.
_ACRONYM_RE = re.compile(r"(?<![\w-])[A-Z]{2,10}(?![\w-])")

# English negations, lower-cased; "n't" also matches inside "doesn't", "can't".
_EN_NEG_RE = re.compile(r"\b(?:not|no|without|never|cannot|none|nor)\b|n't\b|n’t\b")
# Chinese negations, longest first; words that merely contain 不/未/非/无 are not negations.
_ZH_NEG = ("没有", "无法", "不", "未", "非", "没")
_ZH_NOT_NEG = ("不过", "不错", "不少", "不仅", "不但", "不久", "不断", "不同", "未来", "非常", "并非常")


@dataclass(frozen=True)
class SpanCheck:
    """Whether one rewrite keeps the protected spans of the original."""

    ok: bool
    missing: list[str] = field(default_factory=list)
    reason: str = ""


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _zh_negations(text: str) -> list[str]:
    found: list[str] = []
    i = 0
    while i < len(text):
        if any(text.startswith(w, i) for w in _ZH_NOT_NEG):
            i += 2
            continue
        for w in _ZH_NEG:
            if text.startswith(w, i):
                found.append(w)
                i += len(w)
                break
        else:
            i += 1
    return found


def _en_negations(text: str) -> list[str]:
    return [m.group(0).replace("’", "'") for m in _EN_NEG_RE.finditer(text.lower())]


def count_negations(text: str) -> int:
    """How many negation words (English and Chinese) ``text`` holds."""
    text = _nfkc(text)
    return len(_en_negations(text)) + len(_zh_negations(text))


def extract_spans(question: str) -> list[ProtectedSpan]:
    """The protected spans of ``question`` in order of appearance (negations last)."""
    text = _nfkc(question)
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, ProtectedSpan]] = []

    def overlaps(a: int, b: int) -> bool:
        return any(a < e and s < b for s, e in taken)

    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            # The group holds the value without its quotes / "order" prefix.
            gi = next((i for i in range(1, (m.lastindex or 0) + 1) if m.group(i)), 0)
            start, end = m.span(gi)
            value = text[start:end].strip()
            if not value or overlaps(start, end):
                continue
            taken.append((start, end))
            found.append((start, ProtectedSpan(text=value, kind=kind)))
    for m in _ACRONYM_RE.finditer(text):
        if not overlaps(*m.span()):
            taken.append(m.span())
            found.append((m.start(), ProtectedSpan(text=m.group(0), kind="identifier")))
    found.sort(key=lambda p: p[0])
    spans = [s for _, s in found]
    seen: set[tuple[str, str]] = set()
    out: list[ProtectedSpan] = []
    for s in spans:
        if (s.text, s.kind) not in seen:
            seen.add((s.text, s.kind))
            out.append(s)
    for neg in dict.fromkeys([*_en_negations(text), *_zh_negations(text)]):
        out.append(ProtectedSpan(text=neg, kind="negation"))
    return out


def _contains(haystack: str, span: ProtectedSpan, *, strict: bool = True) -> bool:
    value = _nfkc(span.text)
    if span.kind in _EXACT_KINDS:
        if not strict:
            # Exact, but not as part of a longer number/identifier ("2024" inside "20245").
            pattern = r"(?<![0-9A-Za-z])" + re.escape(value) + r"(?![0-9A-Za-z])"
            return re.search(pattern, haystack) is not None or (
                value in haystack and not value[-1:].isalnum()
            )
        # Strict also refuses "v2.3" inside "v2.3.1", "5%" inside "15%" and "1900"
        # inside "ORD-2019-1900" (a part of an identifier joined by - _ /): a value
        # that starts or ends with a symbol ("$30", "30%") has no boundary on that side.
        left = r"(?<![0-9A-Za-z])(?<!\d\.)(?<![0-9A-Za-z][-_/])" if value[:1].isalnum() else ""
        right = r"(?![0-9A-Za-z])(?!\.\d)(?![-_/][0-9A-Za-z])" if value[-1:].isalnum() else ""
        return re.search(left + re.escape(value) + right, haystack) is not None
    return value.casefold() in haystack.casefold()


def check_rewrite(original: str, rewrite: str, spans: list[ProtectedSpan] | None = None) -> SpanCheck:
    """Check that ``rewrite`` keeps every protected span of ``original`` and its
    negations (none dropped, none added)."""
    if spans is None:
        spans = extract_spans(original)
    text, orig = _nfkc(rewrite), _nfkc(original)
    # Strict boundaries where the original itself meets them (a year read out of
    # "$1900.01" does not), so the original always passes its own check.
    missing = [
        s.text for s in spans if s.kind != "negation" and not _contains(text, s, strict=_contains(orig, s))
    ]
    if missing:
        return SpanCheck(False, missing, "protected span missing: " + ", ".join(missing))
    orig_en, new_en = _en_negations(_nfkc(original)), _en_negations(text)
    orig_zh, new_zh = _zh_negations(_nfkc(original)), _zh_negations(text)
    lost = [w for w in dict.fromkeys(orig_zh) if w not in new_zh and not (w == "没" and "没有" in new_zh)]
    if len(new_en) < len(orig_en) or len(new_zh) < len(orig_zh) or lost:
        neg = [s.text for s in spans if s.kind == "negation"] or orig_en + orig_zh
        return SpanCheck(False, neg, "negation dropped: the rewrite flips the question's meaning")
    if len(new_en) > len(orig_en) or len(new_zh) > len(orig_zh):
        return SpanCheck(False, [], "negation added: the rewrite flips the question's meaning")
    return SpanCheck(True)
