"""Keep credentials out of everything we store or show.

    text --replace known secrets--> --replace key-shaped tokens--> --scrub URLs--> safe text
          (api_key given,            (sk-..., Bearer ..., key=...)   (scrub_urls)
           *_API_KEY / *_TOKEN env values,
           and each one's disguises: split by spaces, newlines or
           punctuation, reversed, base64 (standard / urlsafe, any
           alignment), URL-encoded)

    scrub_url(url)     http://user:PASS@host/p?api_key=K&x=1 -> http://user:***@host/p?api_key=***&x=1
                       (userinfo password; query / fragment parameters named like
                       secrets: key, token, secret, password, signature, sig,
                       credential, auth, X-Amz-Signature, ...)
    scrub_urls(text)   every scheme://... in free text through scrub_url, and every
                       ?name=value / &name=value quoted without its URL
    shorten(text)      at most 500 characters (error bodies kept in a trace)

Used on error messages, log-bound text and cassette entries before they leave
the model layer. A Completion, a trace, a log line or a cassette never holds
an API key: this is the one place that enforces it.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import quote, quote_plus, urlsplit, urlunsplit

__all__ = [
    "ERROR_LIMIT",
    "REDACTED",
    "URL_SECRET",
    "environment_secrets",
    "redact",
    "scrub_url",
    "scrub_urls",
    "shorten",
    "url_secrets",
]

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
#: A disguise (base64 core, letters of a split key) shorter than this is not searched for.
_MIN_DISGUISE_LEN = 8
#: What a provider may put between two characters of an echoed key: up to six
#: characters that are not letters or digits (" ... ", "\n", "-"), or %XX escapes.
_GAP = r"(?:%[0-9A-Fa-f]{2}|[^A-Za-z0-9]){0,6}"

#: What a secret inside a URL becomes (``***``: the form storage options use).
URL_SECRET = "***"  # noqa: S105 - the mask, not a password
#: Query / fragment parameters whose values are secrets, by the words in their names
#: (compared lowercased, "-" read as "_": X-Amz-Signature -> x_amz_signature).
_SECRET_PARAM_WORDS = (
    "key", "token", "secret", "passw", "pwd", "signature", "credential", "auth", "session",
)  # fmt: skip
#: Whole parameter names that are secrets without one of those words in them.
_SECRET_PARAM_NAMES = frozenset({"sig", "sas", "code", "pass", "jwt"})
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,15}://[^\s'\"<>`]+")
#: A parameter of a query or fragment quoted without its URL ("url: /v1/traces?api_key=...",
#: as urllib3 reports a failed request).
_PARAM_IN_TEXT = re.compile(r"(?<=[?&#;])([A-Za-z0-9_.\-]{1,64})=([^&#;\s'\"<>()]+)")
#: Error bodies kept in a trace are cut to this many characters.
ERROR_LIMIT = 500


def environment_secrets() -> list[str]:
    """Values of environment variables named like secrets (``*_API_KEY``,
    ``*_TOKEN``, ...), longest first."""
    values = {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v) >= _MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str | None] = (), *, patterns: bool = True) -> str:
    """``text`` with every given secret, every secret-named environment
    value and (``patterns=True``) every key-shaped token and every secret in
    a URL replaced by ``[REDACTED]`` (``***`` in URLs). Model answers use
    ``patterns=False``: known secrets only (their disguises included), so
    ordinary prose that merely looks key-shaped is kept verbatim."""
    if not text:
        return text
    known = [s for s in secrets if s and len(s) >= _MIN_SECRET_LEN]
    ordered = sorted({*known, *environment_secrets()}, key=len, reverse=True)
    for secret in ordered:
        text = text.replace(secret, REDACTED)
    for secret in ordered:
        for disguise in _disguises(secret):
            text = text.replace(disguise, REDACTED)
        text = _spread(secret).sub(REDACTED, text)
    if not patterns:
        return text
    text = _PATTERNS[0].sub(REDACTED, text)
    text = _PATTERNS[1].sub(f"Bearer {REDACTED}", text)
    text = _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return scrub_urls(text)


def shorten(text: str, limit: int = ERROR_LIMIT) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis marks the cut): a
    provider's error body is evidence, not a document to keep whole."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


@lru_cache(maxsize=256)
def _disguises(secret: str) -> tuple[str, ...]:
    """Encodings of ``secret`` a provider or a proxy may echo: reversed,
    URL-encoded, and base64 (standard and urlsafe) at each of the three
    alignments it can have inside a longer base64 text (``Basic
    base64(user:key)``): the characters that depend on the secret alone."""
    raw = secret.encode()
    every = "".join(f"%{b:02X}" for b in raw)
    forms = {secret[::-1], quote(secret, safe=""), quote_plus(secret), every, every.lower()}
    for shift in range(3):
        padded = b"\0" * shift + raw
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            full = encode(padded).decode().rstrip("=")
            # characters mixing the zero padding (start) or the bytes after
            # the secret (the last group) are not the secret's own
            start = 4 if shift else 0
            end = len(full) - (len(full) % 4 or 4) if shift or len(raw) % 3 else len(full)
            core = full[start:end]
            if len(core) >= _MIN_DISGUISE_LEN:
                forms.add(core)
    forms.discard(secret)
    return tuple(sorted((f for f in forms if len(f) >= _MIN_DISGUISE_LEN), key=len, reverse=True))


@lru_cache(maxsize=256)
def _spread(secret: str) -> re.Pattern[str]:
    """The letters and digits of ``secret``, forwards or backwards, with up to
    six other characters (or %XX escapes) between any two: the key split by spaces,
    newlines, dashes or dots (a body wrapped at 40 columns, "s k - t e s t")."""
    core = [c for c in secret if c.isascii() and c.isalnum()]
    if len(core) < _MIN_DISGUISE_LEN:
        return re.compile(r"(?!x)x")  # matches nothing
    # each character also as its %XX escape (a key URL-encoded in part)
    chars = [f"(?:{re.escape(c)}|%{ord(c):02X}|%{ord(c):02x})" for c in core]
    forwards = _GAP.join(chars)
    backwards = _GAP.join(reversed(chars))
    return re.compile(f"(?:{forwards})|(?:{backwards})")


def _secret_param(name: str) -> bool:
    folded = name.strip().lower().replace("-", "_")
    return folded in _SECRET_PARAM_NAMES or any(w in folded for w in _SECRET_PARAM_WORDS)


def _scrub_params(params: str) -> str:
    """``a=1&api_key=K`` -> ``a=1&api_key=***``, byte for byte otherwise."""
    out = []
    for part in params.split("&"):
        name, eq, value = part.partition("=")
        out.append(f"{name}={URL_SECRET}" if eq and value and _secret_param(name) else part)
    return "&".join(out)


def scrub_url(url: str) -> str:
    """``url`` safe to show: the userinfo password and the values of query
    and fragment parameters named like secrets (api_key, token, access_token,
    X-Amz-Signature, sig, ...) become ``***``; everything else is kept as
    written, so the URL still says where it points. A string that is not a
    URL is returned unchanged."""
    if not isinstance(url, str) or "://" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:  # an unparseable netloc ("http://[::1"): show nothing after the scheme
        return url.split("://", 1)[0] + "://" + URL_SECRET
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon and password:
            netloc = f"{user}:{URL_SECRET}@{host}"
    query = _scrub_params(parts.query) if parts.query else parts.query
    fragment = _scrub_params(parts.fragment) if "=" in parts.fragment else parts.fragment
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def url_secrets(url: str) -> list[str]:
    """The secret parts of ``url`` (userinfo password, values of secret-named
    query and fragment parameters), for callers that must also catch them
    where a library quotes them outside the URL."""
    if not isinstance(url, str) or "://" not in url:
        return []
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return []
    found = [password] if password else []
    for params in (parts.query, parts.fragment):
        for part in params.split("&"):
            name, eq, value = part.partition("=")
            if eq and value and _secret_param(name):
                found.append(value)
    return found


def scrub_urls(text: str) -> str:
    """``text`` with every ``scheme://...`` in it through :func:`scrub_url`
    (trailing punctuation a sentence puts after a URL is left alone), and
    every secret-named ``?name=value`` / ``&name=value`` quoted without its
    URL (urllib3: "Max retries exceeded with url: /v1/traces?api_key=...")."""
    if not text or ("://" not in text and "=" not in text):
        return text

    def one(m: re.Match[str]) -> str:
        url = m.group(0)
        stripped = url.rstrip(".,;:)]}!?")
        return scrub_url(stripped) + url[len(stripped) :]

    def param(m: re.Match[str]) -> str:
        return f"{m.group(1)}={URL_SECRET}" if _secret_param(m.group(1)) else m.group(0)

    return _PARAM_IN_TEXT.sub(param, _URL_IN_TEXT.sub(one, text))
