"""Find JSON in raw model text and repair the usual slips. Never raises.

    extract_json(text) -> every JSON object / array, in order
      text ──sources──> fenced blocks (```json ... ```, unterminated too), then the whole text
           ──for each "{" / "[" start (at most MAX_STARTS per source):
               json.raw_decode                                    ok -> value
               else _Lenient (recursive descent over almost-JSON):
                 'single' / “typographic” / 「corner」 quotes, trailing commas,
                 bare keys and bare words, True/None/NaN, // and # comments,
                 full-width ：and ，, depth <= 64, bare words <= 200 chars
                                                                  ok -> value
           ──a dict or list: yield it, resume after it; else try the next start

    wrapped_answer(text, keys) -> (True, value) when the text is a JSON object
      holding an answer under one of ``keys`` (after at most one lead-in line,
      bare or in a json fence): a model that wrapped its plain-text answer

Outermost values only: after a value is yielded the scan resumes past its
end, so nested objects are not yielded again. This module knows nothing of
roles or schemas: ``selfrag_nb.llm.parsing`` turns what it finds into each
role's output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, ClassVar

from selfrag_nb.llm.coerce import pick

__all__ = ["MAX_STARTS", "extract_json", "sources", "wrapped_answer"]

#: How many "{"/"[" start positions we try per source before giving up.
MAX_STARTS = 24
_MAX_DEPTH = 64
_MAX_BARE = 200


class _MalformedError(ValueError):
    """Raised by ``_Lenient`` when the text is not even almost-JSON; caught by
    ``extract_json``, which then tries the next start position."""


_START_RE = re.compile(r"[\[{]")
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def sources(text: str) -> list[str]:
    """Where to look for JSON: every non-empty fenced block, in order, then the
    whole text (a model may fence one object and chat around another)."""
    fenced = [m.group(2) for m in _FENCE_RE.finditer(text) if m.group(2).strip()]
    return [*fenced, text]


def extract_json(text: str) -> Iterator[Any]:
    """Every JSON object or array found in ``text`` (fenced blocks first), in
    order of position, outermost first. Lenient about the usual model slips."""
    decoder = json.JSONDecoder()
    for src in sources(text):
        starts = 0
        pos = 0
        while starts < MAX_STARTS:
            m = _START_RE.search(src, pos)
            if m is None:
                break
            starts += 1
            i = m.start()
            value: Any = None
            end = -1
            try:
                value, end = decoder.raw_decode(src, i)
            except (ValueError, RecursionError):
                try:
                    value, end = _Lenient(src, i).parse()
                except (_MalformedError, RecursionError, ValueError, OverflowError):
                    end = -1
            if end > i and isinstance(value, dict | list):
                yield value
                pos = end
            else:
                pos = i + 1


class _Lenient:
    """A small recursive-descent parser for almost-JSON. Accepts single and
    typographic quotes, trailing commas, bare keys and bare word values,
    Python literals, // and # comments, and full-width ：，."""

    _WS = " \t\r\n\u3000"

    def __init__(self, s: str, i: int) -> None:
        self.s = s
        self.i = i
        self.depth = 0

    def parse(self) -> tuple[Any, int]:
        value = self.value()
        return value, self.i

    def _skip(self) -> None:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in self._WS:
                self.i += 1
            elif s.startswith("//", self.i) or c == "#":
                nl = s.find("\n", self.i)
                self.i = len(s) if nl < 0 else nl + 1
            else:
                return

    def _peek(self) -> str:
        self._skip()
        if self.i >= len(self.s):
            raise _MalformedError("unexpected end of JSON")
        return self.s[self.i]

    def value(self) -> Any:
        c = self._peek()
        if c == "{":
            return self._container("{", "}")
        if c == "[":
            return self._container("[", "]")
        if c in "\"'“‘「":
            return self._string()
        return self._bare(in_key=False)

    def _container(self, open_: str, close: str) -> Any:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _MalformedError("JSON nested too deeply")
        self.i += 1
        is_obj = open_ == "{"
        out_d: dict[str, Any] = {}
        out_l: list[Any] = []
        while True:
            c = self._peek()
            if c == close:
                self.i += 1
                self.depth -= 1
                return out_d if is_obj else out_l
            if c in ",，":
                self.i += 1
                continue
            if is_obj:
                key = self._string() if c in "\"'“‘「" else self._bare(in_key=True)
                if self._peek() not in ":：":
                    raise _MalformedError("expected ':' after a key")
                self.i += 1
                out_d[str(key)] = self.value()
            else:
                out_l.append(self.value())
            nxt = self._peek()
            if nxt not in ",，" and nxt != close:
                raise _MalformedError(f"expected ',' or {close!r}")

    _CLOSERS: ClassVar[dict[str, str]] = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」"}
    _ESCAPES: ClassVar[dict[str, str]] = {
        "n": "\n",
        "t": "\t",
        "r": "\r",
        "b": "\b",
        "f": "\f",
        "/": "/",
        "\\": "\\",
        '"': '"',
        "'": "'",
    }

    def _string(self) -> str:
        s = self.s
        close = self._CLOSERS[s[self.i]]
        self.i += 1
        buf: list[str] = []
        while self.i < len(s):
            c = s[self.i]
            if c == "\\" and self.i + 1 < len(s):
                nxt = s[self.i + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", s[self.i + 2 : self.i + 6] or ""):
                    buf.append(chr(int(s[self.i + 2 : self.i + 6], 16)))
                    self.i += 6
                    continue
                buf.append(self._ESCAPES.get(nxt, nxt))
                self.i += 2
                continue
            if c == close:
                self.i += 1
                return "".join(buf)
            buf.append(c)
            self.i += 1
        raise _MalformedError("unterminated string")

    _BARE_END: ClassVar[frozenset[str]] = frozenset(",，}]:：\n")

    def _bare(self, *, in_key: bool) -> Any:
        s = self.s
        start = self.i
        while self.i < len(s) and s[self.i] not in self._BARE_END:
            if s[self.i] in "{[" or (in_key and s[self.i] in "}]\"'"):
                break
            self.i += 1
            if self.i - start > _MAX_BARE:
                # Bare words are short (true, 85分, keyInfo); a long run is not JSON.
                raise _MalformedError("unquoted text too long")
        word = s[start : self.i].strip()
        if not word:
            raise _MalformedError(f"unexpected character {s[start : start + 1]!r}")
        if in_key:
            return word
        low = word.lower()
        if low in ("true", "false"):
            return low == "true"
        if low in ("null", "none", "nil"):
            return None
        if re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", word):
            num = float(word)
            if re.fullmatch(r"[-+]?\d+", word):
                return int(word)
            return num
        if low in ("nan", "infinity", "+infinity", "-infinity", "inf", "-inf"):
            return float(low.replace("infinity", "inf"))
        return word


#: One lead-in line before a JSON answer ("Here is the answer:").
_LEAD_IN_RE = re.compile(r"^[^\n{]{1,200}[:：][ \t]*\n")
_JSON_FENCE_RE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)\n?```", re.DOTALL | re.IGNORECASE)


def wrapped_answer(text: str, keys: tuple[str, ...]) -> tuple[bool, Any]:
    """(True, value) when ``text`` (after at most one lead-in line) is a JSON
    object, bare or in a json fence, with one of ``keys`` (an answer key). The whole object is
    decoded first: a fence or a "[2]" inside the answer string is not JSON."""
    lead = _LEAD_IN_RE.match(text)
    for cand in (text, text[lead.end() :] if lead else ""):
        inner = cand.strip()
        fence = _JSON_FENCE_RE.fullmatch(inner)
        if fence and fence.group(1).lstrip().startswith("{"):
            inner = fence.group(1).strip()
        if not (inner.startswith("{") and inner.endswith("}")):
            continue
        try:
            values: list[Any] = [json.loads(inner)]
        except ValueError:
            values = [v for v in extract_json(inner) if isinstance(v, dict)]
        for value in values:
            if isinstance(value, dict):
                found, ans = pick(value, keys)
                if found:
                    return True, ans
    return False, None
