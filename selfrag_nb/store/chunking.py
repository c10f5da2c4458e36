"""Chunking: a document's text -> size-bounded chunks with a heading path.

    text
      -> sections          Markdown headings (outside ``` fences) set the heading
                            path "Refund policy > Exceptions"; plain text is one section
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

from selfrag_nb.errors import InputError
from selfrag_nb.text import is_cjk, split_sentences

__all__ = ["DEFAULT_MAX_CHARS", "Chunk", "chunk_text", "context_header", "has_body_text", "iter_chunks"]

DEFAULT_MAX_CHARS = 800

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


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


def _sections(text: str, headings: bool) -> Iterator[tuple[str, str]]:
    """(heading path, body) in document order, one section at a time."""
    if not headings:
        yield "", text
        return
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    in_fence = False

    def flush() -> tuple[str, str] | None:
        joined = "\n".join(body).strip("\n")
        body.clear()
        return (" > ".join(t for _, t in stack), joined) if joined.strip() else None

    for line in _lines(text):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m is None:
            body.append(line)
            continue
        section = flush()
        if section is not None:
            yield section
        level = len(m.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, m.group(2).strip()))
    section = flush()
    if section is not None:
        yield section


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
        # keep a paragraph's own line breaks (lists, tables) when it fits whole
        units = [para.strip()] if len(para.strip()) <= max_chars else split_sentences(para)
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


def iter_chunks(text: str, *, headings: bool = False, max_chars: int = DEFAULT_MAX_CHARS) -> Iterator[Chunk]:
    """``chunk_text`` one chunk at a time: a big document is never held as a
    list of every chunk (or paragraph, or line) besides its own text."""
    if max_chars < 50:
        raise InputError(f"max_chars must be at least 50, got {max_chars}")
    ordinal = 0
    for heading, body in _sections(text, headings):
        for t in _pack(body, max_chars):
            yield Chunk(text=t, heading=heading, ordinal=ordinal)
            ordinal += 1


def chunk_text(text: str, *, headings: bool = False, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_chars`` characters.

    ``headings=True`` reads Markdown headings into each chunk's heading path."""
    if max_chars < 50:
        raise InputError(f"max_chars must be at least 50, got {max_chars}")
    return list(iter_chunks(text, headings=headings, max_chars=max_chars))


def has_body_text(text: str, *, headings: bool = False) -> bool:
    """Whether ``chunk_text`` yields any chunk: some text outside heading lines."""
    return any(body.strip() for _, body in _sections(text, headings))


def context_header(title: str, heading: str) -> str:
    """Title + heading path, without repeating a title that is the first heading."""
    if not heading:
        return title
    if not title or heading == title or heading.startswith(title + " > "):
        return heading
    return f"{title} > {heading}"
