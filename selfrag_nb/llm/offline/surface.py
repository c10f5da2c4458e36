"""Document surface for the offline generator and verifier: readable text and key terms.

    lexical <- surface <- generate | verify
               ^^^^^^^ here: imports lexical (stem, tokenize via bag, quantities)
                       and the control-character tables of ``selfrag_nb.text``.

    chunk text --readable()--> terminal escapes and control characters removed,
                               Markdown tables rendered one sentence per row:
        | Plan | Monthly uptime |            "Plan Pro: Monthly uptime 99.9%."
        | --- | --- |                ->
        | Pro | 99.9% |
    claim --table_markup()-->  True for raw table syntax ("| Pro | 30 days |"):
                               markup states nothing, it is never "supported"
    claim --key_terms()-->     the specific things it names: names (capitalised
                               words past the first, acronyms), units after a
                               number, currencies and payment coins
    key terms x evidence --missing_key_terms()--> the ones no evidence mentions

Both the generator and the verifier read chunk text through ``readable``, so a
rendered table row the generator quotes is a sentence the verifier finds again.
The rule the verifier applies with ``missing_key_terms``: a claim whose key
content appears in none of its evidence is unsupported (``docs/offline_model.md``).
"""

from __future__ import annotations

import re
from collections import Counter

from selfrag_nb.llm.offline.lexical import STOP_EN, bag, quantities, stem
from selfrag_nb.text import BIDI, C0, C1, ZERO_WIDTH, char_class

__all__ = ["key_terms", "missing_key_terms", "readable", "table_markup"]

# ESC/CSI/OSC sequences go whole (their parameters are not text); then every
# remaining control character a terminal would act on.
_ESCAPE_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[@-Z\\-_]"
)
_CONTROL_RE = re.compile(
    char_class(C0) + "|" + char_class(C1) + "|" + char_class(BIDI) + "|" + char_class(ZERO_WIDTH)
)


def _strip_controls(text: str) -> str:
    text = _ESCAPE_RE.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL_RE.sub("", text)


def _is_row(line: str) -> bool:
    s = line.strip()
    return len(s) > 1 and s.startswith("|") and s.endswith("|")


def _is_separator(line: str) -> bool:
    s = line.strip()
    return "---" in s and not s.replace("|", "").replace(":", "").replace("-", "").strip()


def _cells(line: str) -> list[str]:
    return [" ".join(c.split()) for c in line.strip()[1:-1].split("|")]


def _row_sentence(header: list[str] | None, cells: list[str]) -> str:
    """One table row as a sentence: "<first header> <row label>: <header> <cell>; ..."."""
    cells = [c.rstrip(".") for c in cells]
    if header is not None and len(header) == len(cells):
        subject = f"{header[0]} {cells[0]}".strip()
        rest = "; ".join(f"{h} {c}".strip() for h, c in zip(header[1:], cells[1:], strict=True) if c)
        text = f"{subject}: {rest}" if subject and rest else subject or rest
    else:
        text = ", ".join(c for c in cells if c)
    return f"{text}." if text else ""


def _render_tables(text: str) -> str:
    lines = text.split("\n")
    out: list[str] = []
    header: list[str] | None = None
    for i, line in enumerate(lines):
        if not _is_row(line):
            header = None
            out.append(line)
            continue
        if _is_separator(line):
            continue
        if i + 1 < len(lines) and _is_separator(lines[i + 1]):
            header = _cells(line)  # a header row names columns and states nothing
            continue
        sentence = _row_sentence(header, _cells(line))
        if sentence:
            out.append(sentence)
    return "\n".join(out)


def readable(text: str) -> str:
    """Chunk text as the offline model quotes it: no terminal escapes or
    control characters (tab and newline stay), tables rendered as sentences."""
    return _render_tables(_strip_controls(text))


def table_markup(text: str) -> bool:
    """Raw Markdown table syntax: a row ("| a | b |") or a separator."""
    s = text.strip()
    return s.count("|") >= 2 or _is_separator(s)


# Currencies and payment coins, each with the forms evidence may use for it.
_MONEY_FORMS: tuple[frozenset[str], ...] = tuple(
    frozenset(forms.split())
    for forms in (
        "usd $ dollar dollars 美元",
        "eur € euro euros 欧元",
        "gbp £ pound pounds sterling 英镑",
        "jpy yen 日元",
        "cny rmb yuan 人民币 元",
        "bitcoin bitcoins btc 比特币",
        "ethereum ether eth 以太坊",
        "crypto cryptocurrency cryptocurrencies 加密货币",
        "chf franc francs",
        "inr rupee rupees",
    )
)
_MONEY: dict[str, frozenset[str]] = {f: forms for forms in _MONEY_FORMS for f in forms if f != "元"}
# Whole words only: a piece of an identifier ("Yx1" in "req_7Yx1") is not a
# name; identifiers are exact terms, checked on their own.
_WORD_RE = re.compile(r"(?<!\w)[A-Za-z][A-Za-z0-9]*(?!\w)")
_CJK_MONEY_RE = re.compile("|".join(sorted((f for f in _MONEY if not f.isascii()), key=len, reverse=True)))
_MONEY_SYMBOLS = frozenset(f for f in _MONEY if len(f) == 1 and not f.isalnum())


def key_terms(text: str) -> dict[str, frozenset[str]]:
    """The specific things a claim names -> the forms that count as the same
    thing in evidence: capitalised words after the first ("paid in Bitcoin",
    "approved by Oliver"), acronyms and mixed-case names anywhere ("SSO",
    "iOS"), the unit after a number ("30 weeks"), currencies and payment
    coins ("bitcoin", "$", "欧元"). Stopwords are never key terms."""
    out: dict[str, frozenset[str]] = {}
    for i, m in enumerate(_WORD_RE.finditer(text)):
        w = m.group(0)
        low = w.lower()
        if low in _MONEY:
            out[low] = _MONEY[low]
            continue
        if len(w) < 2 or low in STOP_EN:
            continue
        inner_caps = any(c.isupper() for c in w[1:])
        if (i > 0 and w[0].isupper()) or inner_caps:
            out[low] = frozenset({stem(low)})
    for m in _CJK_MONEY_RE.finditer(text):
        out[m.group(0)] = _MONEY[m.group(0)]
    for unit in quantities(text):
        if unit in _MONEY_SYMBOLS:
            out[unit] = _MONEY[unit]
        elif unit.isascii() and unit.isalpha() and unit not in STOP_EN:
            out.setdefault(unit, frozenset({unit}))
    return out


def missing_key_terms(claim: str, evidence_text: str, evidence_bag: Counter[str] | None = None) -> list[str]:
    """The claim's key terms that appear nowhere in ``evidence_text`` (all of
    the claim's evidence joined): by stemmed word, by word prefix, or, for a
    currency, by any of its forms or symbols."""
    ev_bag = evidence_bag if evidence_bag is not None else bag(evidence_text)
    ev_lower = evidence_text.lower()
    ev_units = set(quantities(evidence_text))
    missing = []
    for key, forms in key_terms(claim).items():
        found = False
        for form in forms:
            if not form.isascii() or not form.isalnum():
                found = form in ev_lower
            else:
                found = (
                    form in ev_bag
                    or form in ev_units
                    or re.search(rf"(?<![a-z0-9]){re.escape(form)}", ev_lower) is not None
                )
            if found:
                break
        if not found:
            missing.append(key)
    return missing
