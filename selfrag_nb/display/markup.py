"""Text into HTML: the one escaping path every static renderer uses.

    untrusted text ──escape()──> html.escape(quote=True)
                                 + every invisible / bidi / control character
                                   (CONTROL_RE = text.VIEW_CONTROLS) shown as ⟨U+202E⟩
    neutralize(text)      the same labels for plain text (text/plain faces, widget state)

Views reach HTML only through ``escape`` in ``tree.to_html`` (a view tree
splits control characters out as labelled spans while it is built,
tree.text_kids; attribute values also get ``=`` as ``&#61;``).

No renderer calls ``html.escape`` itself (tests/display/test_display_escaping.py
checks): a hostile question (U+202E, U+200B, ``<script>``, ``"``) looks the
same, inert and visible, in every view. Also here: number formats and the
span finders the views share.
"""

from __future__ import annotations

import html
import re

from selfrag_nb.cleantext import clean, clean_text
from selfrag_nb.text import VIEW_CONTROLS, char_class

#: Characters kept per text field before truncation (a note says so).
TEXT_LIMIT = 20_000

#: What every view labels instead of obeying: selfrag_nb.text.VIEW_CONTROLS
#: (C0 controls but tab/newline/CR, bidi marks/overrides/isolates, zero-width
#: characters and joiners, BOM). The widgets' JS gets the same class (display/js.py).
CONTROL_RE = re.compile(char_class(VIEW_CONTROLS))


def _text_label(m: re.Match[str]) -> str:
    return f"⟨U+{ord(m.group(0)):04X}⟩"


def neutralize(text: str) -> str:
    """Plain-text form of ``text`` with control characters made visible as ⟨U+XXXX⟩."""
    return CONTROL_RE.sub(_text_label, text)


def escape(text: object) -> str:
    """The only way text enters HTML: escaped (quotes too), controls visible as ⟨U+XXXX⟩."""
    return CONTROL_RE.sub(_text_label, html.escape(str(text), quote=True))


# ----------------------------------------------------------------- spans


def find_all(text: str, needle: str) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of ``needle`` (exact, then case-insensitive)."""
    if not needle:
        return []
    hay, pin = text, needle
    if needle not in text:
        hay, pin = text.casefold(), needle.casefold()
        if len(hay) != len(text):  # casefold changed lengths: offsets would drift
            return []
    spans, i = [], hay.find(pin)
    while i >= 0:
        spans.append((i, i + len(pin)))
        i = hay.find(pin, i + len(pin))
    return spans


def locate_span(chunk: str, span: str, start: int, end: int) -> tuple[int, int] | None:
    """Where the evidence span sits in its chunk: the recorded offsets when
    they match, else the first occurrence, else None. Models read the clean
    chunk text (``selfrag_nb.cleantext``), so a span is usually a quote of it
    and its recorded offsets cover the original words with the markup
    between them: those match when the original there cleans to the span;
    without offsets the quote is found in the clean text and mapped back."""
    valid = 0 <= start < end <= len(chunk)
    if valid and (
        not span or chunk[start:end] == span or _words(clean_text(chunk[start:end])) == _words(span)
    ):
        return start, end
    found = find_all(chunk, span.strip())
    if found:
        return found[0]
    a, b = clean(chunk).locate(span) if span.strip() else (-1, -1)
    return (a, b) if a >= 0 else None


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


# --------------------------------------------------------------- numbers


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return "unknown"
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def plural(n: int, noun: str) -> str:
    """``n`` and its noun, with an s unless ``n`` is 1: "1 call", "3 calls"."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def pct(v: float) -> str:
    """A CSS percentage clamped to 0..100."""
    return f"{max(0.0, min(100.0, v)):.1f}%"
