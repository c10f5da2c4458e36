"""The text a JSON tree holds, for secret checks: its keys and strings, never its numbers.

    json_strings(value)      every key and string value, in document order
    found(secrets, text)     the secrets standing in ``text`` as whole tokens: "48213"
                             inside a hex chunk id is not the PIN
A trace's numbers (latencies and timestamps to 15 digits) are not document
text, and once held "48213", a sample secret, by chance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any


def json_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from json_strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from json_strings(v)


def found(secrets: Iterable[str], text: str) -> list[str]:
    return [s for s in secrets if re.search(rf"(?<![0-9A-Za-z]){re.escape(s)}(?![0-9A-Za-z])", text)]
