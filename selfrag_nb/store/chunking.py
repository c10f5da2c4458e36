"""Chunking: a document's text -> size-bounded chunks with a heading path.

    text
      -> sections          Markdown headings (outside ``` fences) set the heading
                            path "Refund policy > Exceptions"; plain text is one section
      -> paragraphs         blank lines
      -> sentences          selfrag_nb.text.split_sentences (English and Chinese)
      -> pack               greedy: sentences join until max_chars; a sentence longer
                            than max_chars is cut hard (at a space when one is near)
      -> [Chunk(text, heading, ordinal)]

The heading lines themselves are not repeated in chunk text: they live in
``heading`` and in the context header (``context_header``) that is embedded
and full-text indexed together with the text (contextual retrieval), while
the text shown as evidence stays the document's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from selfrag_nb.errors import InputError
from selfrag_nb.text import is_cjk, split_sentences

__all__ = ["DEFAULT_MAX_CHARS", "Chunk", "chunk_text", "context_header", "has_body_text"]

DEFAULT_MAX_CHARS = 800

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Chunk:
    """One piece of a document."""

    text: str
    heading: str  # "A > B", "" outside any heading
    ordinal: int  # position in the document, from 0


def _sections(text: str, headings: bool) -> list[tuple[str, str]]:
    """(heading path, body) in document order."""
    if not headings:
        return [("", text)]
    out: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    in_fence = False

    def flush() -> None:
        joined = "\n".join(body).strip("\n")
        if joined.strip():
            out.append((" > ".join(t for _, t in stack), joined))
        body.clear()

    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m is None:
            body.append(line)
            continue
        flush()
        level = len(m.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, m.group(2).strip()))
    flush()
    return out


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


def _pack(body: str, max_chars: int) -> list[str]:
    chunks: list[str] = []
    current = ""
    for para in re.split(r"\n\s*\n", body):
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
                    chunks.append(current)
                    current = piece
    if current:
        chunks.append(current)
    return chunks


def chunk_text(text: str, *, headings: bool = False, max_chars: int = DEFAULT_MAX_CHARS) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``max_chars`` characters.

    ``headings=True`` reads Markdown headings into each chunk's heading path."""
    if max_chars < 50:
        raise InputError(f"max_chars must be at least 50, got {max_chars}")
    chunks: list[Chunk] = []
    for heading, body in _sections(text, headings):
        chunks.extend(Chunk(text=t, heading=heading, ordinal=0) for t in _pack(body, max_chars))
    return [Chunk(text=c.text, heading=c.heading, ordinal=i) for i, c in enumerate(chunks)]


def has_body_text(text: str, *, headings: bool = False) -> bool:
    """Whether ``chunk_text`` yields any chunk: some text outside heading lines."""
    return bool(_sections(text, headings))


def context_header(title: str, heading: str) -> str:
    """Title + heading path, without repeating a title that is the first heading."""
    if not heading:
        return title
    if not title or heading == title or heading.startswith(title + " > "):
        return heading
    return f"{title} > {heading}"
