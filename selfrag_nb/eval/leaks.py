"""Secret checks: does a labelled secret stand anywhere in a trace?

    trace --model_dump(json, minus question/history/user)--> data
      _strings(data): every key and string value   --folded (NFKC, casefold)-->
        a secret inside one, other than inside a longer hex digest      -> leaked
      _numbers(data): every number  == the secret read as a number      -> leaked

A secret is document text the asking user may not see (the question set's
``secret`` label), so it is looked for where text is. A trace's numbers are
measurements, and its hex ids are hashes: the digits of a latency of
0.0482131 ms or of a chunk id ``3fa48213c9e1`` are not the secret "48213".
A number a document stored as a number (front matter ``pin: 48213``) is.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selfrag_nb.trace import Trace

__all__ = ["trace_leaks"]


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _strings(obj: Any) -> Iterable[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def _numbers(obj: Any) -> Iterable[float]:
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield float(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _numbers(v)


#: A generated identifier: eight or more hex digits, letters and digits mixed
#: (a chunk id, a content or prompt hash). Its digits are a hash's, never
#: document text, and a 64-digit digest holds a given 5-digit number by chance
#: about once in 30 traces.
_DIGEST_RE = re.compile(r"(?<![0-9a-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8,}(?![0-9a-z])")


def _stands_in(secret: str, text: str) -> bool:
    """``secret`` occurs in ``text`` (both folded) other than inside a longer digest."""
    digests = [m.span() for m in _DIGEST_RE.finditer(text)]
    start = text.find(secret)
    while start >= 0:
        end = start + len(secret)
        if not any(a <= start and end <= b and b - a > len(secret) for a, b in digests):
            return True
        start = text.find(secret, start + 1)
    return False


def _as_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def trace_leaks(trace: Trace, secrets: Sequence[str]) -> list[str]:
    """The labelled secrets that appear in the trace (records, model calls,
    config): access-control failures. The question, history and user are
    excluded since the asker supplied them.

    A secret is document text, so it leaks when it stands in the trace's text
    (every key and string, case- and width-folded, anywhere in a word: the
    label is a substring), or when it is a number and one of the trace's
    numbers equals it (a metadata value ``48213``). The digits of a
    measurement (a latency of 0.0482131 ms) or of a generated id (chunk id
    ``3fa48213c9e1``) are not the secret."""
    if not secrets:
        return []
    data = trace.model_dump(mode="json", exclude={"question", "history", "user"})
    texts = [_norm(s) for s in _strings(data)]
    numbers = set(_numbers(data))
    leaked = []
    for s in secrets:
        folded = _norm(s)
        value = _as_number(folded)
        if any(_stands_in(folded, t) for t in texts) or (value is not None and value in numbers):
            leaked.append(s)
    return leaked
