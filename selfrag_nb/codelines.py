"""Code lines: which lines of clean text are code, not words to quote.

    line --code_line()--> a prompt ("$ ", ">>> "), an import or definition, or
                          (not ending a sentence) a call, an assignment, a
                          command with a flag or a module:attribute argument
    clean text --lines()--> (kind, line) per non-blank line: "code" inside a ```
                          fence (``selfrag_nb.cleantext`` fences every code
                          block) or a code line, "item" a list item, "text"
    answer --code_only()--> nothing but code (markers aside): not an answer

The generate parser refuses a code-only answer and the offline generator
never quotes a code line. Pure ``re``; the signs are those of shells, REPLs
and the usual programming languages, never words of one corpus.
"""

from __future__ import annotations

import re

from selfrag_nb.text import strip_markers

__all__ = ["FENCE_RE", "ITEM_RE", "code_line", "code_only", "lines"]

#: A fenced code block's opening or closing line; a list item's marker (cleantext reads them too).
FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
ITEM_RE = re.compile(r"^(\s*)([-*+\u2022]|\d{1,9}[.)]|#\.)\s+(?=\S)")

# Shell and REPL prompts; statements that only code starts with.
_PROMPT_RE = re.compile(r"^\s*(?:\$|>>>|PS [^>\n]*>|[A-Za-z]:\\[^>\n]*>|In \[\d*\]:)(?:\s|$)")
_STATEMENT_RE = re.compile(
    r"^\s*(?:import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*\s*;?\s*$"
    r"|from\s+[\w.]+\s+import\s|(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]"
    r"|(?:const|let|var)\s+\w+\s*=|function\s+\w+\s*\(|(?:pub\s+)?fn\s+\w+\s*[(<]"
    r"|#include\s*[<\"]|#!/|@[A-Za-z_][\w.]*(?:\(.*\))?\s*$)"
)
# Without closing punctuation: a call, an assignment, a command with a flag
# or a module:attribute argument, a line ending in a brace or semicolon.
_CALL_RE = re.compile(r"^\s*(?:await\s+)?[A-Za-z_][\w.]*\(.*\)\s*;?\s*$")
_ASSIGN_RE = re.compile(r"^\s*[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*[-+*/|&]?=(?!=)\s*\S")
_FLAG_RE = re.compile(r"^\s*[a-z][\w.-]*(?:\s+\S+)*?\s+--?[A-Za-z][\w-]*(?:[=\s]|$)")
_MODULE_ATTR_RE = re.compile(r"^\s*[a-z][\w.-]*\s+(?:\S+\s+)*?[\w.-]+:[A-Za-z_]\w*(?:\s|$)")
_BRACE_END_RE = re.compile(r"[{};]\s*$")
_ENDED_RE = re.compile(r"[.!?。！？…][\"'”’)\]]*\s*$")


def code_line(line: str) -> bool:
    """A line of code rather than of text: a prompt ("$ ", ">>> "), an import
    or definition, or (not ending a sentence) a call, an assignment, a
    command with a flag or a module:attribute, a line ending in a brace."""
    s = line.strip()
    if not s:
        return False
    if _PROMPT_RE.match(s) or _STATEMENT_RE.match(s):
        return True
    if _ENDED_RE.search(s):
        return False
    return bool(
        _CALL_RE.match(s)
        or _ASSIGN_RE.match(s)
        or _FLAG_RE.match(s)
        or _MODULE_ATTR_RE.match(s)
        or (_BRACE_END_RE.search(s) and re.search(r"[(=]", s) and not _wordy(s))
    )


_PLAIN_WORD_RE = re.compile(r"^[A-Za-z][A-Za-z'’-]*$")


def _wordy(line: str) -> bool:
    """Mostly plain words: eight or more, and at least three in four of the
    line's pieces. Prose that ends an enumeration item with ";" ("Computing
    of Easter dates (any year), using Western or Julian algorithms;") reads
    so; a line of code ending in ";" or a brace is short or dense with symbols."""
    parts = line.split()
    plain = sum(1 for p in parts if _PLAIN_WORD_RE.match(p.strip("()[],;.:!?'\"")))
    return plain >= 8 and plain >= 0.75 * len(parts)


def lines(text: str) -> list[tuple[str, str]]:
    """Each non-blank line of clean text with its kind: "code" (inside a
    fence, or a code line), "item" (a list item) or "text"."""
    out: list[tuple[str, str]] = []
    fence = ""
    for line in text.split("\n"):
        st = line.strip()
        if not st:
            continue
        if fence:
            out.append(("code", line))
            fence = "" if st.startswith(fence) and not st.strip(fence[0]) else fence
            continue
        fm = FENCE_RE.match(line)
        if fm:
            fence = fm.group(1)
            out.append(("code", line))
            continue
        im = ITEM_RE.match(line)
        content = line[im.end() :] if im else line
        out.append(("code" if code_line(content) else "item" if im else "text", line))
    return out


def code_only(text: str) -> bool:
    """``text`` (citation markers aside) is nothing but code: a fenced block,
    even an unclosed one ("```jinja"), prompts, imports, commands."""
    found = lines(strip_markers(text))
    return bool(found) and all(kind == "code" for kind, _ in found)
