"""Clean text: document markup out, the words in, and a map back to the original.

Every model role that reads chunk text (grade, rerank, assess, generate,
verify) reads it through ``clean_text``, and answers quote it. The stored
chunk (``Hit.text``) never changes: ``clean`` also says, for every clean
character, which span of the original it came from, so a quote of the clean
text is found again in the original (views highlight it there).

    chunk text ("\\r\\n" and "\\r" read as "\\n")
      -> _parse: line by line, into blocks
           code     ``` / ~~~ fences and <pre> kept verbatim; RST literal blocks
                    (after "::"), ``.. code-block::`` bodies, indented blocks
                    after a blank line, >>> sessions and a paragraph of one
                    `code span`, fenced in ```
           dropped  RST directive headers and options, comments, ``.. _targets:``,
                    ``.. |sub| image::`` definitions (``replace::`` ones are
                    remembered), Markdown ``[label]: url`` definitions (labels
                    remembered), heading under/overlines, rules, <!-- comments -->,
                    lines of nothing but |badges|
           heading  "# Title" (hashes dropped), underlined titles
           item     list items ("- ", "1. ") and RST fields; continuation lines joined
           row      table rows, one per line, and an RST ``list-table``'s rows as
                    the Markdown table it stands for ("| a | b |", a separator
                    after its header rows); "> " quotes read as blocks
           para     lines joined (_soft): a hard wrap becomes one space (none
                    between CJK characters); a deliberate break (a short line,
                    then a capitalised line whose first word would have fitted)
                    starts a new block, so a title never runs into its text
      -> _inline per block (not code), in this order:
           RST roles, interpreted text and `code` -> their text, set aside
           HTML: comments, <img>, tags (a placeholder like <path> is kept),
           entities decoded; Markdown images and badges dropped, links -> their
           text (inline, [text][ref], defined [text]; text that only points,
           "documentation" or "here", keeps its web address); footnote references
           dropped; emphasis markers; |substitutions|; "name_" references;
           backslash escapes; runs of spaces -> one
      -> blocks joined: "\\n" after a deliberate break and between items or
         rows, "\\n\\n" otherwise
    = CleanText(text, starts, ends)   clean[i] came from original[starts[i]:ends[i]]
                                      (the map is kept piece by piece: selfrag_nb._mapped)
        .span(a, b)                   the original span of clean[a:b]
        .locate(quote)                a quote of the clean text -> its original span

Which lines are code (``lines``, ``code_line``, ``code_only``): selfrag_nb.codelines;
what the markup languages' lines look like: selfrag_nb._markup.
Pure ``re`` and ``html.unescape``; the rules are properties of Markdown, RST
and HTML, never words of one corpus. Not read: CSS (display:none text stays),
RST grid-table cells, nested Markdown inside HTML blocks.
"""

from __future__ import annotations

import html
import re
import unicodedata
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from selfrag_nb._mapped import Mapped, join, join_lines
from selfrag_nb._markup import (
    ADORN_RE,
    AMBIGUOUS_TAGS,
    ANON_TARGET_RE,
    ATX_RE,
    BADGES_RE,
    BLOCK_TAGS,
    BORDER_RE,
    CODE_DIRECTIVES,
    CRLF_RE,
    DIRECTIVE_RE,
    DOCTEST_RE,
    DROPPED_DIRECTIVES,
    EXPLICIT_RE,
    FIELD_RE,
    FOOTNOTE_RE,
    HTML_END_RE,
    HTML_START_RE,
    LANGUAGE_ARGUMENT,
    NOTEDEF_RE,
    OPENERS,
    OPTION_RE,
    PRE_RE,
    QUOTE_RE,
    REFDEF_RE,
    ROW_RE,
    SENTENCE_END,
    SUBST_DEF_RE,
    TAGS,
    TARGET_RE,
    TEXT_ARGUMENT,
    names,
    points,
)
from selfrag_nb.codelines import FENCE_RE, ITEM_RE, code_line, code_only, lines

__all__ = ["CleanText", "clean", "clean_text", "code_line", "code_only", "lines"]


@dataclass(frozen=True)
class CleanText:
    """Clean text and its map: clean character ``i`` came from
    ``original[starts[i]:ends[i]]`` (inserted characters stand for what they replace)."""

    original: str
    text: str
    starts: array[int] = field(repr=False)
    ends: array[int] = field(repr=False)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of ``text[start:end]``: from the first character's
        source to the last one's, markup between them included."""
        if not self.text:
            return 0, 0
        start = max(0, min(start, len(self.text)))
        if end <= start:
            p = self.starts[start] if start < len(self.text) else self.ends[-1]
            return p, p
        return self.starts[start], self.ends[min(end, len(self.text)) - 1]

    def locate(self, quote: str) -> tuple[int, int]:
        """Where a quote of the clean text sits in the original: found
        exactly, then ignoring case and runs of whitespace; (-1, -1) when absent."""
        quote = quote.strip()
        if not quote:
            return -1, -1
        i = self.text.find(quote)
        if i >= 0:
            return self.span(i, i + len(quote))
        pattern = r"\s+".join(re.escape(w) for w in quote.split())
        m = re.search(pattern, self.text, flags=re.IGNORECASE)
        return self.span(*m.span()) if m else (-1, -1)


@lru_cache(maxsize=512)
def clean(text: str) -> CleanText:
    """``text`` without markup, with the map back to it (cached: every stage
    of a question reads the same chunks)."""
    src = Mapped.of(text).sub(CRLF_RE, lambda m: ["\n"])
    defs = _Defs()
    blocks = _parse(_split_lines(src), defs)
    out: list[Mapped] = []
    prev: _Block | None = None
    for blk in blocks:
        body = blk.text if blk.kind == "code" else _inline(blk.text, defs, table=blk.kind == "row")
        if not body.s.strip():
            continue
        if prev is not None:
            same = blk.kind == prev.kind and blk.kind in ("item", "row")
            close = (
                (blk.tight or same)
                and "heading" not in (blk.kind, prev.kind)
                and "code" not in (blk.kind, prev.kind)
            )
            out.append(Mapped.lit("\n" if close else "\n\n", prev.text.end, body.at(0)))
        out.append(body)
        prev = _Block(blk.kind, body, blk.tight)
    res = join(out) if out else Mapped("", [], [], 0)
    return CleanText(text, res.s, array("i", res.a), array("i", res.b))


def clean_text(text: str) -> str:
    """``text`` as models read it and answers quote it: no markup, no hard
    line breaks inside a paragraph (``clean(text).text``)."""
    return clean(text).text if text else text


# ---------------------------------------------------------------- blocks


@dataclass
class _Block:
    kind: str  # code | heading | item | row | para
    text: Mapped
    #: No blank line before it in the original (a deliberate line break).
    tight: bool = False


@dataclass
class _Defs:
    """What a chunk defines for its own references: Markdown reference labels
    ("[label]: url", casefolded), RST ``.. |name| replace:: text`` substitutions."""

    labels: set[str] = field(default_factory=set)
    subs: dict[str, str] = field(default_factory=dict)


def _split_lines(t: Mapped) -> list[Mapped]:
    breaks = [m.start() for m in re.finditer("\n", t.s)]
    return [t.cut(a, b) for a, b in zip([0, *(x + 1 for x in breaks)], [*breaks, len(t.s)], strict=True)]


def _indent(s: str) -> int:
    """Leading whitespace width, a tab counted as four columns."""
    s = s.expandtabs(4)
    return len(s) - len(s.lstrip())


def _dedent(ls: Sequence[Mapped]) -> list[Mapped]:
    """Lines without their common leading whitespace (blank lines emptied)."""
    widths = [len(x.s) - len(x.s.lstrip()) for x in ls if x.s.strip()]
    k = min(widths) if widths else 0
    return [x.cut(min(k, len(x.s))) if x.s.strip() else x.cut(len(x.s)) for x in ls]


def _width(s: str) -> int:
    """Display columns: East Asian wide characters (CJK) count twice."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _html_tag(stripped: str) -> str:
    m = HTML_START_RE.match(stripped)
    return m.group(1).lower() if m and m.group(1).lower() in TAGS else ""


def _fenced(ls: Sequence[Mapped], lang: Mapped | None = None) -> Mapped:
    """A code block as clean text shows every code block: fenced in ```."""
    body = join_lines(_dedent(ls))
    start, end = ls[0].at(0), ls[-1].end
    opening = [Mapped.lit("```", start, start), *([lang] if lang else []), Mapped.lit("\n", start, start)]
    return join([*opening, body, Mapped.lit("\n```", end, end)])


def _starts_block(ls: Sequence[Mapped], k: int) -> bool:
    """Line ``k`` cannot continue a paragraph: it opens a block of its own
    (or is a title: an adornment follows it)."""
    s = ls[k].s
    if any(p.match(s) for p in OPENERS) or s.strip().startswith("<!--") or _html_tag(s) in BLOCK_TAGS:
        return True
    return k + 1 < len(ls) and _underlines(s, ls[k + 1].s)


def _underlines(title: str, line: str) -> bool:
    """``line`` underlines ``title``. A run of backticks or tildes shorter than
    the title is a code fence opening right under a paragraph ("... with the
    following command:" then "```"), not a reStructuredText underline, which
    is at least as long as its title."""
    if not ADORN_RE.match(line):
        return False
    return not (FENCE_RE.match(line) and len(line.strip()) < len(title.strip()))


def _unclosed(acc: str) -> bool:
    """Markup opened and not closed yet: a link, a tag, inline code."""
    return (
        acc.count("[") > acc.count("]")
        or acc.count("(") > acc.count(")")
        or acc.count("`") % 2 == 1
        or (acc.rfind("<") > acc.rfind(">"))
    )


#: Lower-case English words that need what follows (articles, prepositions, conjunctions).
_OPEN_END = names("a an the of on in at to for from by with into onto about as than and or nor but via per")


def _soft(acc: str, done: Sequence[str], nxt: str, width: int) -> bool:
    """Is the break between the last line of ``done`` (joined: ``acc``) and ``nxt`` a
    hard wrap inside one paragraph? Yes when markup is still open, the line ends in
    punctuation or a word that needs what follows ("on"), continues a sentence from
    the line before it, or the next one does not start a capitalised word. Otherwise
    (a title, a name, "4. Your data" before its text) only when the next line's
    first word would not have fitted on this one: the wrap width is the longest
    line so far (``width``, with the next one), at least 60 columns."""
    a, b = done[-1].strip(), nxt.strip()
    if not a or not b or _unclosed(acc) or a[-1] in SENTENCE_END or a[0].islower():
        return True
    if a.split()[-1] in _OPEN_END:
        return True  # "... with modern versions of Python on" / "Linux, macOS and Windows."
    before = done[-2].strip() if len(done) > 1 else ""
    if before and before[-1] not in ".!?。！？:：":
        return True  # the line carries on a sentence: no title starts here
    first = b[0]
    if not (first.isupper() or (first.isalpha() and not first.islower()) or _width(first) == 2):
        return True
    return _width(a) + 1 + _width(b.split()[0]) > max(width, 60)


def _collect(ls: Sequence[Mapped], i: int, first: Mapped) -> tuple[Mapped, int]:
    """A paragraph or list item from line ``i`` on: (its text, hard wraps
    joined; the next line). It ends at a blank line, a line that opens a
    block, or a deliberate break (the next block then follows tight)."""
    width = _width(ls[i].s.strip())
    parts = [first]
    acc = first.s
    done = [ls[i].s]
    k = i + 1
    if _html_close(ls[i].s):
        return first, k
    while k < len(ls) and ls[k].s.strip() and not _starts_block(ls, k):
        nxt = ls[k]
        width = max(width, _width(nxt.s.strip()))
        if not _soft(acc, done, nxt.s, width):
            break
        parts[-1] = parts[-1].cut(0, len(parts[-1].s.rstrip()))
        a, b = parts[-1].s, nxt.s.strip()
        sep = "" if a and b and _width(a[-1]) == _width(b[0]) == 2 else " "
        parts.append(Mapped.lit(sep, ls[k - 1].end, nxt.at(len(nxt.s) - len(nxt.s.lstrip()))))
        parts.append(nxt.strip())
        acc += sep + b
        done.append(nxt.s)
        k += 1
        if _html_close(nxt.s):
            break
    return join(parts).strip(), k


def _html_close(s: str) -> bool:
    m = HTML_END_RE.search(s)
    return bool(m and m.group(1).lower() in BLOCK_TAGS)


def _body_end(ls: Sequence[Mapped], i: int, indent: int) -> int:
    """The end of an RST explicit block at line ``i``: its indented body."""
    j = i + 1
    while j < len(ls) and (not ls[j].s.strip() or _indent(ls[j].s) > indent):
        j += 1
    while j > i + 1 and not ls[j - 1].s.strip():
        j -= 1
    return j


def _explicit(ls: Sequence[Mapped], i: int, j: int, rest: Mapped, defs: _Defs) -> list[_Block]:
    """An RST explicit markup block (lines ``i`` to ``j``): a directive, a
    target, a substitution definition, a footnote or a comment."""
    body = list(ls[i + 1 : j])
    r = rest.s
    if TARGET_RE.match(r):
        return []
    m = SUBST_DEF_RE.match(r)
    if m:
        if m.group(2) == "replace":
            defs.subs[m.group(1)] = " ".join([m.group(3), *(x.s.strip() for x in body)]).strip()
        return []
    m = FOOTNOTE_RE.match(r)
    if m:
        return _parse([rest.cut(m.end()), *_dedent(body)], defs)
    m = DIRECTIVE_RE.match(r)
    if m is None:
        return []  # a comment
    name = m.group(1).lower()
    header = next((int(h.group(1)) for x in body if (h := _HEADER_ROWS_RE.match(x.s))), 0)
    while body and (OPTION_RE.match(body[0].s) or not body[0].s.strip()):
        # options, and the blank line that ends them
        if not body[0].s.strip():
            body = body[1:]
            break
        body = body[1:]
    if name in CODE_DIRECTIVES:
        lang = rest.cut(m.start(2), m.end(2)).strip() if m.group(2) and name in LANGUAGE_ARGUMENT else None
        return [_Block("code", _fenced(body, lang))] if any(x.s.strip() for x in body) else []
    if name in DROPPED_DIRECTIVES:
        return []
    lines_ = _dedent(body)
    if name == "list-table" and (table := _list_table(lines_, header)) is not None:
        title = [_Block("para", rest.cut(m.start(2)).strip())] if m.group(2) else []
        return title + table
    if name in TEXT_ARGUMENT and m.group(2):
        lines_ = [rest.cut(m.start(2)), *lines_]
    return _parse(lines_, defs)


_HEADER_ROWS_RE = re.compile(r"^\s*:header-rows:\s*(\d+)")
#: A list-table's row ("* - cell") and its further cells ("  - cell").
_LIST_ROW_RE = re.compile(r"^\*\s+-(?:\s+|$)")
_LIST_CELL_RE = re.compile(r"^\s+-(?:\s+|$)")


def _list_table(body: Sequence[Mapped], header: int) -> list[_Block] | None:
    """An RST ``list-table``, a list of rows each a list of cells, as the
    Markdown table it stands for ("| Platform | Support Level |", a separator
    after the ``:header-rows:``), so a row reads as one line under its column
    names; a cell's further lines join it. The bars stand for the cell
    markers. None when the body is not such a list (read it as text then)."""
    rows: list[list[list[Mapped]]] = []
    for line in body:
        if m := _LIST_ROW_RE.match(line.s):
            rows.append([[line.cut(m.end())]])
        elif rows and (m := _LIST_CELL_RE.match(line.s)):
            rows[-1].append([line.cut(m.end())])
        elif rows:
            if line.s.strip():
                rows[-1][-1].append(line.strip())
        elif line.s.strip():
            return None  # text before the first row: not a list of rows
    if not rows:
        return None
    out: list[_Block] = []
    for n, row in enumerate(rows):
        cells = [_spaced([x.strip() for x in parts]) for parts in row]
        pieces: list[Mapped] = []
        for cell in cells:
            pieces += [Mapped.lit("| ", cell.at(0), cell.at(0)), cell, Mapped.lit(" ", cell.end, cell.end)]
        pieces.append(Mapped.lit("|", cells[-1].end, cells[-1].end))
        out.append(_Block("row", join(pieces), tight=bool(out)))
        if n + 1 == header:
            rule = Mapped.lit("|---" * len(cells) + "|", cells[-1].end, cells[-1].end)
            out.append(_Block("row", rule, True))
    return out


def _spaced(lines_: Sequence[Mapped]) -> Mapped:
    """Lines of one paragraph joined, one space standing for each break."""
    pieces: list[Mapped] = []
    for i, line in enumerate(lines_):
        if i:
            pieces.append(Mapped.lit(" ", lines_[i - 1].end, line.at(0)))
        pieces.append(line)
    return join(pieces)


#: A paragraph that is one inline code span and nothing else.
_SPAN_PARA_RE = re.compile(r"^(`+)(?P<code>[^`\n]*[^`\s][^`\n]*)\1$")


def _parse(ls: Sequence[Mapped], defs: _Defs) -> list[_Block]:
    """Lines -> blocks (see the module docstring)."""
    out: list[_Block] = []
    i, n = 0, len(ls)
    blank = True  # a blank line (or the start) comes before line i
    literal = False  # the last paragraph ended in "::": an indented block is code
    while i < n:
        line = ls[i]
        s = line.s
        st = s.strip()
        if not st:
            blank, i = True, i + 1
            continue
        tight, blank = not blank, False
        ind = _indent(s)
        fm = FENCE_RE.match(s)
        if fm:
            mark = fm.group(1)
            j = next((k for k in range(i + 1, n) if ls[k].s.strip().startswith(mark[0] * len(mark))), n)
            if j == n and st == mark:  # a bare fence never closed: the end of a block a chunk cut
                i += 1
                continue
            out.append(_Block("code", join_lines(ls[i : min(j + 1, n)])))
            i, literal = j + 1, False
            continue
        if PRE_RE.match(s):
            j = i
            while j < n and "</pre" not in ls[j].s.lower():
                j += 1
            pre = join_lines(ls[i : min(j + 1, n)])
            pre = pre.sub(_TAG_RE, lambda m: []).sub(_ENTITY_RE, _entity)
            out.append(_Block("code", _fenced(_split_lines(pre))))
            i, literal = j + 1, False
            continue
        need = 1 if literal else 4
        if (
            not tight
            and ind >= need
            and not _html_tag(st)
            and not (out and out[-1].kind == "item" and not literal)
        ):
            j = i
            while j < n and (not ls[j].s.strip() or _indent(ls[j].s) >= need):
                j += 1
            while not ls[j - 1].s.strip():
                j -= 1
            chunk = ls[i:j]
            if literal or not _prose_like(chunk):
                out.append(_Block("code", _fenced(chunk)))
            else:  # an indented quotation, not code
                out += _parse(_dedent(chunk), defs)
            i, literal = j, False
            continue
        literal = False
        em = EXPLICIT_RE.match(s)
        if em:
            j = _body_end(ls, i, ind)
            rest = line.cut(em.start(1)) if em.group(1) is not None else line.cut(len(s))
            out += _explicit(ls, i, j, rest, defs)
            i, blank = j, True
            continue
        rd = REFDEF_RE.match(s)
        if rd or ANON_TARGET_RE.match(s) or BORDER_RE.match(s) or BADGES_RE.match(s):
            if rd:
                defs.labels.add(rd.group(1).casefold())
            i += 1
            continue
        if st.startswith("<!--") and "-->" not in st:
            while i < n and "-->" not in ls[i].s:
                i += 1
            i += 1
            continue
        if ADORN_RE.match(s):
            over = i + 2 < n and ls[i + 1].s.strip() and ls[i + 2].s.strip()[:1] == st[:1]
            if over and ADORN_RE.match(ls[i + 2].s):
                out.append(_Block("heading", ls[i + 1].strip()))
                i += 3
            else:
                i += 1  # a rule or transition
            continue
        if i + 1 < n and _underlines(s, ls[i + 1].s) and not ROW_RE.match(s):
            out.append(_Block("heading", line.strip()))
            i += 2
            continue
        hm = ATX_RE.match(s)
        if hm:
            out.append(_Block("heading", line.cut(hm.start(1), hm.end(1))))
            i += 1
            continue
        if ROW_RE.match(s):
            out.append(_Block("row", line.strip(), tight))
            i += 1
            continue
        if QUOTE_RE.match(s):  # a block quote: its lines without ">", read as blocks
            j = i
            while j < n and QUOTE_RE.match(ls[j].s):
                j += 1
            out += _parse([x.cut(len(x.s) - len(QUOTE_RE.sub("", x.s, count=1))) for x in ls[i:j]], defs)
            i = j
            continue
        if DOCTEST_RE.match(s):
            j = i  # a session runs to a blank line, or to the fence a chunk cut it from
            while j < n and ls[j].s.strip() and not FENCE_RE.match(ls[j].s):
                j += 1
            out.append(_Block("code", _fenced(ls[i:j])))
            i = j
            continue
        first, kind = _item_start(line)
        nd = NOTEDEF_RE.match(s)
        if nd:
            first = line.cut(nd.end())
        text, i = _collect(ls, i, first)
        span = _SPAN_PARA_RE.match(text.s) if kind == "para" else None
        if span:
            # A paragraph of one inline code span ("`pip install x[extra]`"
            # under "To include the extra, use:") is a command set apart to be
            # typed: a code block, as if it were fenced.
            out.append(_Block("code", _fenced([text.cut(span.start("code"), span.end("code"))])))
            continue
        if kind == "para" and text.s.endswith("::"):
            literal = True
            if text.s.strip() == "::":
                continue  # "::" alone only announces the block: it reads as nothing
            text = text.cut(0, len(text.s) - 2) if text.s[-3:-2].isspace() else text.cut(0, len(text.s) - 1)
            text = text.strip()
        out.append(_Block(kind, text, tight))
    return out


def _item_start(line: Mapped) -> tuple[Mapped, str]:
    """A list item or field line -> (its first text, "item"); else (the line, "para")."""
    s = line.s
    m = ITEM_RE.match(s)
    if m:
        marker = m.group(2)
        lead = line.cut(0, m.start(2))
        if marker[0].isdigit():
            return join([lead, line.cut(m.start(2))]), "item"
        return join(
            [lead, Mapped.lit("- ", line.at(m.start(2)), line.at(m.end())), line.cut(m.end())]
        ), "item"
    f = FIELD_RE.match(s)
    if f:
        sep = Mapped.lit(": ", line.at(f.end(1)), line.at(f.end()))
        return join([line.cut(f.start(1), f.end(1)), sep, line.cut(f.end())]), "item"
    return line.strip(), "para"


def _prose_like(ls: Sequence[Mapped]) -> bool:
    """An indented block that reads as text (an RST block quote), not code:
    it ends a sentence and no line of it is code."""
    text = " ".join(x.s.strip() for x in ls if x.s.strip())
    return (
        text[-1:] in ".!?。！？"
        and len(text.split()) >= 4
        and not any(code_line(x.s) for x in ls if x.s.strip())
        and not re.search(r"[{};=]\s*$", text)
    )


# ---------------------------------------------------------------- inline

# RST roles and interpreted text (:func:`x`, `x`:role:, `text <url>`_) and
# inline code (``x``, `x`): their content is kept as it is, never read as markup.
_CODE_SPAN_RE = re.compile(
    r"``(?P<lit>[^`]|[^`].*?[^`])``(?!`)"
    r"|(?P<role>:[A-Za-z][\w:+.-]*:)?(?<!`)`(?P<t>[^`]+)`(?!`)(?P<post>:[A-Za-z][\w:+.-]*:|__?(?!\w))?"
)
_TITLE_TARGET_RE = re.compile(r"^(.*?)\s*<([^<>]*)>$", re.DOTALL)
_COMMENT_RE = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_AUTOLINK_RE = re.compile(r"<((?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]+)|(?:[^\s<>@]+@[^\s<>@]+\.[A-Za-z]+))>")
_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)((?:\s+[^<>]*?)?)\s*(/?)>")
_ENTITY_RE = re.compile(r"&(?:#\d{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_URL = r"(?:[^()\s]|\([^()\s]*\))*"
_MD_IMAGE_RE = re.compile(rf"!\[[^\[\]]*\](?:\(\s*{_URL}(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)|\[[^\[\]]*\])")
_MD_SHORT_IMAGE_RE = re.compile(r"!\[([^\[\]]+)\]")
_MD_LINK_RE = re.compile(
    rf"\[((?:[^\[\]]|\[[^\[\]]*\])*)\](?:(\()\s*<?({_URL})>?(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)|\[[^\[\]]*\])"
)
_MD_SHORT_LINK_RE = re.compile(r"(?<![\]\\])\[([^\[\]^][^\[\]]*)\](?![\[(:])")
_NOTE_REF_RE = re.compile(r"\[\^[^\]\s]+\]|\s?\[(?:#[\w-]*|\*|\d+|[A-Za-z][\w.-]*)\]_")
_EMPHASIS_RES = (
    re.compile(r"(?<![\w*\\])(\*\*\*|\*\*|\*)(?=[^\s*])(.{1,500}?)(?<=[^\s*\\])\1(?![\w*])"),
    re.compile(r"(?<![\w\\])(___|__|_)(?=[^\s_])(.{1,500}?)(?<=[^\s_\\])\1(?!\w)"),
    re.compile(r"(?<![~\\])(~~)(?=\S)(.{1,500}?)(?<=\S)\1(?!~)"),
)
_SUBST_RE = re.compile(r"(?<![\w|])\|([^\s|](?:[^|]*[^\s|])?)\|(?:__?)?(?![\w|])")
# "Django_": a name without inner underscores (an identifier such as "qs_live_" stays).
_SIMPLE_REF_RE = re.compile(r"(?<![\w`/.:-])([A-Za-z0-9][A-Za-z0-9.+-]*)__?(?=[\s.,;:!?)\]'\"]|$)")
_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_SPACES_RE = re.compile(r"[ \t\u00a0]{2,}|[\t\u00a0]")
_PLACEHOLDER = 0xF0000  # Supplementary Private Use Area-A: code spans set aside


def _entity(m: re.Match[str]) -> list[int | str | Mapped]:
    decoded = html.unescape(m.group(0))
    return [0] if decoded == m.group(0) else [decoded.replace("\u00a0", " ")]


def _tag(m: re.Match[str]) -> list[int | str | Mapped]:
    name = m.group(2).lower()
    closing, attrs, selfclose = m.group(1), m.group(3).strip(), m.group(4)
    if name not in TAGS and not (name in AMBIGUOUS_TAGS and (closing or attrs or selfclose)):
        return [0]  # not a tag: a placeholder such as <path> or <name>
    return [" "] if name in BLOCK_TAGS or name == "br" else []


def _code_span(t: Mapped, m: re.Match[str]) -> Mapped:
    """The text of an inline code span or an RST role / reference."""
    if m.group("lit") is not None:
        inner = t.cut(m.start("lit"), m.end("lit"))
        return inner.strip() if inner.s.strip() else inner
    inner = t.cut(m.start("t"), m.end("t"))
    if m.group("role") is None and m.group("post") is None:
        return inner.strip() if inner.s.strip() else inner
    tt = _TITLE_TARGET_RE.match(inner.s)
    if tt and points(tt.group(1), tt.group(2)):  # `documentation <https://...>`_
        return inner.sub(_TITLE_TARGET_RE, lambda m: [1, " (", 2, ")"])
    if tt:  # `title <target>` shows the title (or the target when there is none)
        g = 1 if tt.group(1).strip() else 2
        inner = inner.cut(tt.start(g), tt.end(g))
    s = inner.s
    if m.group("role") is not None:
        if s.startswith("!"):
            inner, s = inner.cut(1), s[1:]
        if s.startswith("~"):  # ~pkg.mod.func shows "func"
            inner = inner.cut(max(s.rfind("."), 0) + 1)
    return inner


def _inline(t: Mapped, defs: _Defs, *, table: bool = False) -> Mapped:
    """One block's inline markup out (see the module docstring for the order)."""
    kept: dict[str, Mapped] = {}

    def keep(m: re.Match[str]) -> list[int | str | Mapped]:
        key = chr(_PLACEHOLDER + len(kept))
        kept[key] = _code_span(t, m)
        return [key]

    if not any(ord(c) >= _PLACEHOLDER for c in t.s):
        t = t.sub(_CODE_SPAN_RE, keep)
    t = t.sub(_COMMENT_RE, lambda m: []).sub(_AUTOLINK_RE, lambda m: [1])
    t = t.sub(_TAG_RE, _tag).sub(_ENTITY_RE, _entity)
    t = t.sub(_MD_IMAGE_RE, lambda m: [])
    t = t.sub(_MD_SHORT_IMAGE_RE, lambda m: [] if m.group(1).casefold() in defs.labels else [0])
    for _ in range(3):  # a link inside a link's text (badges are gone by now)
        t = t.sub(_MD_LINK_RE, lambda m: [1, " ", 2, 3, ")"] if points(m[1], m[3]) else [1])
    t = t.sub(_MD_SHORT_LINK_RE, lambda m: [1] if m.group(1).casefold() in defs.labels else [0])
    t = t.sub(_NOTE_REF_RE, lambda m: [])
    for _ in range(2):  # ***nested** emphasis*
        for pattern in _EMPHASIS_RES:
            t = t.sub(pattern, lambda m: [2])
    if not table:
        t = t.sub(_SUBST_RE, lambda m: [defs.subs[m.group(1)]] if m.group(1) in defs.subs else [1])
    t = t.sub(_SIMPLE_REF_RE, lambda m: [1]).sub(_ESCAPE_RE, lambda m: [1])
    t = t.sub(_SPACES_RE, lambda m: [" "])
    if kept:
        t = t.sub(re.compile("[" + "".join(kept) + "]"), lambda m: [kept[m.group(0)]])
    return t.strip()
