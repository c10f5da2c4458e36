"""Metadata blocks at the top of a text file: parsed, or the file is skipped.

A block a reader takes for metadata but the loader does not read would
become body text of a document that declares no access: ``roles: [finance]``
searchable in a public document. So a block is either parsed here, or
``parse_front_matter`` raises and the loader skips the file with the reason.

    text
      -> line separators \\r\\n, \\r, U+2028, U+2029, U+0085 as \\n
      -> passed over: blank lines, whitespace, BOM, zero-width characters
      -> the first line opens
           ---              YAML-style front matter: key: value lines      parsed
           +++              TOML front matter (tomllib)                    parsed
           <!-- ... -->     an HTML comment of key: value lines only       parsed
           anything else    no front matter: the whole text is the body
      -> the top of what follows (check_unread): a block that is NOT read
           ----, +++++, "--- yaml", a second ---   with key: value lines   raise
           <!-- ... -->     with a key that names access                   raise
           first paragraph  "roles: x" / ":roles: x" (MultiMarkdown,       raise
                            reStructuredText fields) naming access
      -> (metadata, body)

Values of the ``---`` block: quoted or bare strings, ints, true/false and
``[a, b]`` lists; nested YAML (indented lines, ``- item`` lists, ``{...}``)
is not read, so such a block raises rather than being half-read.
"""

from __future__ import annotations

import datetime
import re
import textwrap
from typing import Any

from selfrag_nb.errors import InputError
from selfrag_nb.store.acl_keys import names_access

__all__ = ["normalise_lines", "parse_front_matter"]

_LINE_BREAKS = re.compile("\r\n|[\r\u2028\u2029\u0085]")
# What may come before a front matter fence without the fence losing its
# meaning to a reader: whitespace, and characters that show nothing (BOM,
# zero-width space, word joiner, soft hyphen, bidi and joiner marks).
_LEADING = re.compile(r"[\s\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]*")
_FM_LINE = re.compile(r"^([A-Za-z_][\w\-]*)\s*:\s*(.*?)\s*$")
_LIST_ITEM = re.compile(r"""(?:'[^']*'|"[^"]*"|[^,'"])+|[^,]+""")
# A fence a reader takes for front matter that is not "---" or "+++" exactly.
_FENCE_LIKE = re.compile(r"(-{3,}|\+{3,})\s*[A-Za-z]*")
_FENCE_END = re.compile(r"\s*(-{3,}|\+{3,}|\.{3})\s*")
# "key: value" or "key = value" inside a block that is not read: a key of at
# most 40 characters after an optional comment or list marker.
_KEY_VALUE = re.compile(r"^\s*(?:[#*%/;>\-]+\s*)?([^\W\d][^:=\n]{0,39}?)\s*[:=]")
# The first paragraph of a body read as metadata by other tools:
# "roles: finance" (MultiMarkdown, Pelican) or ":roles: finance" (reST fields).
_UNFENCED_KEY = re.compile(r"^\s*(?::([^\s:]+):|([^\s:=]+)\s*[:=])")
#: How far into an unterminated block the check looks for key: value lines.
_BLOCK_LINES = 60


def normalise_lines(text: str) -> str:
    """``text`` with every line separator as ``\\n`` (U+2028 / U+2029 too:
    a reader sees a new line there, so block detection must as well)."""
    return _LINE_BREAKS.sub("\n", text)


def _fm_scalar(raw: str, lineno: int) -> Any:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    if raw.startswith(("{", "[", "&", "*", "!", "|", ">", "'", '"')):
        # flow mappings, unterminated lists or quotes, anchors, tags, block
        # scalars: YAML this reader does not model; a half-read value could hide an ACL
        raise InputError(f"front matter line {lineno}: value {raw!r} is YAML this reader does not parse")
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    return raw


def _fm_value(raw: str, lineno: int) -> Any:
    if raw.startswith("[") and raw.endswith("]"):
        # items split at commas outside quotes: ['hr, legal'] is one item
        items = _LIST_ITEM.findall(raw[1:-1])
        return [_fm_scalar(p.strip(), lineno) for p in items if p.strip()]
    return _fm_scalar(raw, lineno)


def _key_value_lines(lines: list[str], first_lineno: int) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for i, line in enumerate(lines, start=first_lineno):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _FM_LINE.match(line)
        if m is None:
            raise InputError(f"front matter line {i} is not 'key: value': {line!r}")
        if m.group(1) in meta:
            raise InputError(f"front matter line {i} repeats the key {m.group(1)!r}")
        meta[m.group(1)] = _fm_value(m.group(2), i)
    return meta


def _closing(lines: list[str], fence: str) -> int:
    """Index of the line closing a block opened by ``fence`` (lines[0])."""
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == fence:
            return i
    raise InputError(f"front matter starts with {fence!r} but has no closing {fence!r}")


def _plain(value: Any) -> Any:
    """A TOML value as JSON-ready metadata (dates as ISO strings)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return value


def _toml(block: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError as exc:  # Python 3.10: no TOML reader, so the block cannot be read
        raise InputError("TOML front matter ('+++') needs Python 3.11 or later (tomllib)") from exc
    try:
        return dict(_plain(tomllib.loads(block)))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"TOML front matter ('+++') does not parse: {exc}") from exc


def _comment(top: str) -> tuple[str, str] | None:
    """(inside, after) of an HTML comment opening ``top``, or None when unterminated."""
    end = top.find("-->", 4)
    return None if end < 0 else (top[4:end], top[end + 3 :])


def _lineno(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(metadata, body)`` of ``text``: the metadata block at its top parsed
    and split off, or ``({}, text)`` when there is none.

    Raises ``InputError`` (a ValueError) when a block is malformed (no
    closing fence, a line that is not ``key: value``, TOML that does not
    parse) or when a block a reader would take for metadata is not read
    (see the module docstring): the caller skips the file with the reason."""
    text = normalise_lines(text)
    lead = _LEADING.match(text)
    skip = lead.end() if lead else 0
    top, base = text[skip:], _lineno(text, skip)
    lines = top.split("\n")
    first = lines[0].strip()
    meta: dict[str, Any] = {}
    body, read = text, False
    if first in ("---", "+++"):
        close = _closing(lines, first)
        inside = lines[1:close]
        meta = _key_value_lines(inside, base + 1) if first == "---" else _toml("\n".join(inside))
        body, read = "\n".join(lines[close + 1 :]), True
    elif first.startswith("<!--"):
        parts = _comment(top)
        if parts is not None:
            try:
                meta = _key_value_lines(textwrap.dedent(parts[0]).strip().split("\n"), base)
            except InputError:
                meta = {}  # not metadata after all: check_unread decides whether it may stay text
            if meta:
                body, read = parts[1], True
    check_unread(body, already_read=read)
    return meta, body


def _names_access(key: str) -> bool:
    # Three words at most: "The roles of each team are:" is a sentence, not a key.
    return len(key.split()) <= 3 and names_access(key)


def check_unread(text: str, *, already_read: bool = False) -> None:
    """Raise when the top of ``text`` holds a metadata-looking block that is
    not read (``already_read``: a block was just parsed, so even a ``---``
    block here is a second one, not read)."""
    lead = _LEADING.match(text)
    top = text[lead.end() if lead else 0 :]
    lines = top.split("\n")
    first = lines[0].strip()
    if _FENCE_LIKE.fullmatch(first) and (already_read or first not in ("---", "+++")):
        block = []
        for line in lines[1:_BLOCK_LINES]:
            if _FENCE_END.fullmatch(line):
                break
            block.append(line)
        keys = [m.group(1) for m in map(_KEY_VALUE.match, block) if m]
        filled = [line for line in block if line.strip()]
        # An access key, or a block of key: value lines only (two or more: one
        # "API: Reference" line between rules is a reST title, not metadata).
        if any(map(_names_access, keys)) or (len(keys) >= 2 and len(keys) == len(filled)):
            why = "a second metadata block" if first in ("---", "+++") else f"a block fenced with {first!r}"
            raise InputError(
                f"{why} at the top holds 'key: value' lines but is not read as front matter "
                "(front matter is one block fenced with '---' exactly, or '+++' for TOML): fix the fence"
            )
        return
    if first.startswith("<!--"):
        parts = _comment(top)
        inside = parts[0] if parts is not None else "\n".join(lines[:_BLOCK_LINES])[4:]
        for line in inside.split("\n"):
            m = _KEY_VALUE.match(line)
            if m and _names_access(m.group(1)):
                raise InputError(
                    f"the HTML comment at the top names access ({m.group(1).strip()!r}) but is not read "
                    "as front matter (only a comment of 'key: value' lines is): declare access in a "
                    "'---' front matter block"
                )
        return
    if not _UNFENCED_KEY.match(lines[0]):
        return
    for line in lines:
        if not line.strip():
            break
        m = _UNFENCED_KEY.match(line)
        key = (m.group(1) or m.group(2)) if m else None
        if key and names_access(key):
            raise InputError(
                f"the first lines name access ({line.strip()!r}) but are not a front matter block, "
                "so they would be public text: put them between '---' lines at the top of the file, "
                "or reword them"
            )
