"""Keep credentials out of everything we store or show.

    text --replace known secrets--> --replace key-shaped tokens--> safe text
          (api_key given,            (sk-..., Bearer ..., key=...)
           *_API_KEY / *_TOKEN env values)

Used on error messages, log-bound text and cassette entries before they leave
the model layer. A Completion, a trace, a log line or a cassette never holds
an API key: this is the one place that enforces it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

__all__ = ["REDACTED", "environment_secrets", "redact"]

REDACTED = "[REDACTED]"

#: Environment variables whose values are treated as secrets.
_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)

# Key-shaped tokens providers echo back in error messages ("Incorrect API key
# provided: sk-abc...xyz") or that sit in headers.
_PATTERNS = (
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=\-]+"),
    re.compile(r"(?i)\b(api[_-]?key|x-api-key|authorization)([\"']?\s*[:=]\s*[\"']?)[^\s\"',}]+"),
)

# Shorter values are too likely to be ordinary words to replace blindly.
_MIN_SECRET_LEN = 6


def environment_secrets() -> list[str]:
    """Values of environment variables named like secrets (``*_API_KEY``,
    ``*_TOKEN``, ...), longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= _MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] = (), *, patterns: bool = True) -> str:
    """``text`` with every given secret, every secret-named environment
    value and (``patterns=True``) every key-shaped token replaced by
    ``[REDACTED]``. Model answers use ``patterns=False``: exact secrets only,
    so ordinary prose that merely looks key-shaped is kept verbatim."""
    if not text:
        return text
    known = [s for s in secrets if s and len(s) >= _MIN_SECRET_LEN]
    for secret in sorted({*known, *environment_secrets()}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    if not patterns:
        return text
    text = _PATTERNS[0].sub(REDACTED, text)
    text = _PATTERNS[1].sub(f"Bearer {REDACTED}", text)
    return _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
