"""Chunking: a document's text -> size-bounded chunks with a heading path.

    text
      -> sections          headings set the heading path "Refund policy > Exceptions",
                            in the document's style (HeadingStyle):
                              markdown   "# Title" (ATX) and underlined "Title / ===="
                                         (setext: "=" level 1, "-" level 2), outside
                                         ``` fences
                              atx        "# Title" only (HTML pages, whose <h1>..<h6>
                                         the loader writes so)
                              underline  reStructuredText / plain-text section titles: a
                                         line under- (and maybe over-) lined by one
                                         punctuation character repeated at least as long
                                         as the title; levels in order of first use
                              none       one section
                            an underlined title counts only as a paragraph of its own
                            (a blank line or a heading before it): a "---" under running
                            text stays text; nothing in a fence or HTML comment is one
      -> paragraphs         blank lines
      -> sentences          selfrag_nb.text.split_sentences (English and Chinese)
      -> pack               greedy: sentences join until max_chars; a sentence longer
                            than max_chars is cut hard (at a space when one is near);
                            a lead-in paragraph ending in ":" opens the next chunk
                            with what it introduces rather than closing this one
      -> [Chunk(text, heading, ordinal)]

iter_chunks yields the same chunks one at a time, each step lazy (lines,
sections, paragraphs), so ingesting a big file holds its text and the chunks
not yet embedded, not lists of every line, paragraph and chunk.

The heading lines themselves are not repeated in chunk text: they live in
``heading`` and in the context header (``context_header``) that is embedded
and full-text indexed together with the text (contextual retrieval), while
the text shown as evidence stays the document's own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, TypeAlias

from selfrag_nb.errors import InputError
from selfrag_nb.text import is_cjk, split_sentences

__all__ = [
    "DEFAULT_MAX_CHARS",
    "Chunk",
    "HeadingStyle",
    "chunk_text",
    "context_header",
    "first_title",
    "has_body_text",
    "iter_chunks",
]

DEFAULT_MAX_CHARS = 800

HeadingStyle: TypeAlias = Literal["none", "atx", "markdown", "underline"]
_STYLES = ("none", "atx", "markdown", "underline")

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_COMMENT = re.compile(r"^ {0,3}<!--")
# A reStructuredText directive (".. image:: logo.png"), as against a comment,
# a substitution definition (".. |b| image:: b.svg") or a target (".. _x: url").
_DIRECTIVE = re.compile(r"^\.\.\s+[\w:.+-]+::")
# CommonMark's setext underline: "=" or "-" only, up to three spaces in.
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# A reStructuredText adornment: one non-alphanumeric printable ASCII character, repeated.
_ADORN = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
# Lines that are never a title's text: list items, table rows, quotes, HTML, fences.
_NOT_TITLE = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|[|>]|<|```|~~~)")


@dataclass(frozen=True)
class Chunk:
    """One piece of a document."""

    text: str
    heading: str  # "A > B", "" outside any heading
    ordinal: int  # position in the document, from 0


def _lines(text: str) -> Iterator[str]:
    """``text.split("\n")`` one line at a time: no list of every line of a big file."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _style(headings: bool | str) -> HeadingStyle:
    if headings is True:
        return "markdown"
    if headings is False:
        return "none"
    if headings not in _STYLES:
        raise InputError(f"headings must be one of {', '.join(_STYLES)} (or True / False), got {headings!r}")
    return headings  # type: ignore[return-value]  # checked against _STYLES just above


def _underlined(
    body: list[str], line: str, style: HeadingStyle, seen: list[tuple[str, bool]]
) -> tuple[int, str, int] | None:
    """(lines of ``body`` the title takes, title, level) when ``line`` underlines
    the end of ``body`` as a title of its own, else None."""
    if style == "markdown":
        m = _SETEXT.match(line)
        if m is None or not body or body[-1].startswith("    "):
            return None
        used, title, level = 1, body[-1].strip(), 1 if m.group(1)[0] == "=" else 2
    elif style == "underline":
        m = _ADORN.match(line)
        if m is None or not body:
            return None
        title, mark = body[-1].strip(), line.rstrip()
        # with an overline (the same line above the title) the title may be inset
        over = len(body) >= 2 and body[-2].rstrip() == mark
        if not over and body[-1][:1].isspace():
            return None  # an indented line is a quote or literal block, not a title
        if len(mark) < len(title):
            return None
        used = 2 if over else 1
        key = (mark[0], over)
        if key not in seen:
            seen.append(key)
        level = seen.index(key) + 1
    else:
        return None
    before = body[: len(body) - used]
    if not title or _NOT_TITLE.match(body[-1]) or _ADORN.match(title) or (before and before[-1].strip()):
        return None
    return used, title, level


def _sections(text: str, headings: bool | str) -> Iterator[tuple[tuple[tuple[int, str], ...], str]]:
    """(heading path as (level, title) pairs, body) in document order, one section at a time."""
    style = _style(headings)
    if style == "none":
        yield (), text
        return
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    seen: list[tuple[str, bool]] = []  # underline styles in order of first use
    verbatim = ""  # the line that closes a fence or HTML comment we are in, if any

    def flush() -> tuple[tuple[tuple[int, str], ...], str] | None:
        joined = "\n".join(body).strip("\n")
        body.clear()
        return (tuple(stack), joined) if joined.strip() else None

    for line in _lines(text):
        if verbatim:
            body.append(line)
            if (verbatim == "```" and _FENCE.match(line)) or (verbatim == "-->" and "-->" in line):
                verbatim = ""
            continue
        if style != "underline":
            comment = _COMMENT.match(line)
            if _FENCE.match(line) or (comment and "-->" not in line[comment.end() :]):
                # CommonMark: the lines of a fence or an HTML comment are not Markdown
                verbatim = "```" if comment is None else "-->"
                body.append(line)
                continue
        m = _HEADING.match(line) if style != "underline" else None
        under = None if m else _underlined(body, line, style, seen)
        if m is None and under is None:
            body.append(line)
            continue
        if under is not None:
            level, title = under[2], under[1]
            del body[len(body) - under[0] :]  # the title's lines: it lives in the path
        else:
            level, title = len(m.group(1)), m.group(2).strip()  # type: ignore[union-attr]  # m is set here
        section = flush()
        if section is not None:
            yield section
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    section = flush()
    if section is not None:
        yield section


def first_title(text: str, headings: bool | str) -> str | None:
    """The document's title, if it has one: in Markdown its first level-1
    heading; in reStructuredText and plain text, as docutils reads it, a lone
    top-level section title with nothing before it but comments, substitution
    definitions and targets (a README's "Features" after its introduction is a
    section, not the document's title)."""
    style = _style(headings)
    tops: list[str] = []
    before = ""  # the text before the first heading
    # a last body line, so a document ending in headings still yields its path
    for path, body in _sections(text + "\n\n.", style):
        if not path and not tops:
            before = body
        top = path[0] if path and path[0][0] == 1 else None
        if top is not None and (not tops or tops[-1] != top[1]):
            tops.append(top[1])
            if style != "underline":
                return top[1]  # Markdown: the first level-1 heading, wherever it stands
    if style != "underline":
        return None
    if len(tops) != 1 or any(
        line.strip() and not line[:1].isspace() and (not line.startswith("..") or _DIRECTIVE.match(line))
        for line in before.split("\n")
    ):
        return None
    return tops[0]


def _hard_split(sentence: str, max_chars: int) -> list[str]:
    pieces: list[str] = []
    rest = sentence
    while len(rest) > max_chars:
        cut = rest.rfind(" ", int(max_chars * 0.8), max_chars + 1)
        if cut <= 0:
            cut = max_chars
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def _joiner(left: str, right: str) -> str:
    # Chinese sentences follow each other without a space; English ones with one.
    return (
        ""
        if (left and is_cjk(left[-1]))
        or (left and left[-1] in "。！？；：，")
        or (right and is_cjk(right[0]))
        else " "
    )


_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_LEADING_BLANKS = re.compile(r"^(?:[ \t]*\n)+")


def _paragraphs(body: str) -> Iterator[str]:
    """The paragraphs of ``body`` (split at blank lines) one at a time."""
    start = 0
    for m in _PARAGRAPH_BREAK.finditer(body):
        yield body[start : m.start()]
        start = m.end()
    yield body[start:]


def _keep_lead_in(current: str, piece: str, sep: str, max_chars: int) -> tuple[str, str]:
    """(the chunk to close, what opens the next one before ``piece``). A last
    paragraph ending in ":" introduces what follows ("There are a few
    servers that use it:" over the list of them): it moves to the next chunk
    with its list, when there is other text to close and the two fit."""
    head, _, last = current.rpartition("\n\n")
    introduces = sep == "\n\n" and head.strip() and last.rstrip().endswith((":", "："))
    if introduces and len(last) + len(sep) + len(piece) <= max_chars:
        return head, last + sep
    return current, ""


def _pack(body: str, max_chars: int) -> Iterator[str]:
    current = ""
    for para in _paragraphs(body):
        if not para.strip():
            continue
        # keep a paragraph's own line breaks (lists, tables) when it fits whole,
        # and its first line's indentation: an indented paragraph is a code
        # block (reStructuredText after "::" or ".. code-block::", Markdown's
        # four spaces), which cleantext can only tell by the indentation
        whole = _LEADING_BLANKS.sub("", para.rstrip())
        units = [whole] if len(whole.strip()) <= max_chars else split_sentences(para)
        for i, unit in enumerate(units):
            for piece in _hard_split(unit, max_chars) if len(unit) > max_chars else [unit]:
                sep = "\n\n" if i == 0 else _joiner(current, piece)
                if not current:
                    current = piece
                elif len(current) + len(sep) + len(piece) <= max_chars:
                    current += sep + piece
                else:
                    done, lead = _keep_lead_in(current, piece, sep, max_chars)
                    yield done
                    current = lead + piece
    if current:
        yield current


def iter_chunks(
    text: str, *, headings: bool | str = False, max_chars: int = DEFAULT_MAX_CHARS
) -> Iterator[Chunk]:
    """``chunk_text`` one chunk at a time: a big document is never held as a
    list of every chunk (or paragraph, or line) besides its own text."""
    if max_chars < 50:
        raise InputError(f"max_chars must be at least 50, got {max_chars}")
    ordinal = 0
    for path, body in _sections(text, headings):
        heading = " > ".join(t for _, t in path)
        for t in _pack(body, max_chars):
            yield Chunk(text=t, heading=heading, ordinal=ordinal)
            ordinal += 1


def chunk_text(text: str, *, headings: bool | str = False, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_chars`` characters.

    ``headings`` (a HeadingStyle; ``True`` is "markdown") reads the document's
    headings into each chunk's heading path."""
    if max_chars < 50:
        raise InputError(f"max_chars must be at least 50, got {max_chars}")
    return list(iter_chunks(text, headings=headings, max_chars=max_chars))


def has_body_text(text: str, *, headings: bool | str = False) -> bool:
    """Whether ``chunk_text`` yields any chunk: some text outside heading lines."""
    return any(body.strip() for _, body in _sections(text, headings))


def context_header(title: str, heading: str) -> str:
    """Title + heading path, without repeating a title that is the first heading."""
    if not heading:
        return title
    if not title or heading == title or heading.startswith(title + " > "):
        return heading
    return f"{title} > {heading}"
