"""Metadata that names access but is not access control: refused by a principle.

A document declares access only with ``roles``, ``users`` and ``tenant`` at
the top level of its front matter or JSONL record (store/acl.py). Anything
else that a reader would take for access control ("read_roles",
"confidential: true", a nested "metadata.roles") would be stored as harmless
metadata and leave the document public, so the loaders skip such a document
with the reason this module gives.

    key -> words(key)
             NFKC, hidden characters dropped ("ro\\u200bles"), accents dropped
             ("rôles"), Cyrillic/Greek look-alikes as Latin ("rоles"),
             split on _ - . space and camelCase, casefolded
        -> a word names access when
             its singular is an access word (role, user, group, acl, owner, org, ...)
             or it is run together from known words, one of them an access word
             ("allowedroles" = allowed + roles, "readroles" = read + roles)
             or it is one edit from roles/users/tenant ("rolse", "tennant")
    acl_key_error(key)            a top-level key: the reason, or None
    metadata_access_error(meta)   a whole metadata mapping: top-level keys,
                                  keys of nested objects at any depth (where
                                  even "roles" sets nothing), and values that
                                  are a classification marker ("confidential")

The words are a principle (what the key is ABOUT), not a list of refused
keys: any spelling built from them is refused, so a new synonym such as
"visible_to_teams" needs no new entry.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

# The same small table of Cyrillic/Greek letters read as Latin that the
# injection flagger uses: one table for both.
from selfrag_nb.llm.injection import _CONFUSABLES
from selfrag_nb.text import HIDDEN, char_class

__all__ = ["acl_key_error", "key_words", "metadata_access_error", "names_access"]

#: The ACL keys (store/acl.py ACL_KEYS; acl.py imports this module, so it
#: cannot be imported from there; a test checks the two agree).
_ACL_KEYS = ("roles", "users", "tenant")

#: Words that name access, in the singular. A key holding one of them (or its
#: plural) is about who may read the document.
_ACCESS_WORDS = frozenset(
    {
        "role", "user", "group", "acl", "access", "permission", "perm", "reader", "viewer",
        "audience", "owner", "ownership", "member", "membership", "visibility", "visible",
        "classification", "classified", "confidential", "confidentiality", "sensitivity",
        "clearance", "secret", "tenant", "org", "organization", "organisation", "workspace",
        "customer", "team", "department", "dept", "restricted", "restrict", "restriction",
        "private", "public", "share", "shared", "sharing", "allow", "allowed", "allowlist",
        "deny", "denied", "denylist", "entitlement", "rbac",
    }
)  # fmt: skip
#: Ordinary words that appear run together with an access word in a key
#: ("readroles", "visibleto", "userids"): they let such a key be split, and
#: are harmless on their own.
_JOINING_WORDS = frozenset(
    {
        "read", "write", "view", "edit", "to", "by", "with", "for", "id", "name", "list", "only",
        "can", "may", "who", "level", "scope", "right", "is", "of", "and", "or", "key", "policy",
        "rule", "control", "mode", "type", "tag", "label", "code", "uid", "gid", "email", "account",
    }
)  # fmt: skip
#: Words one edit away from an ACL key that are ordinary metadata.
_NOT_A_MISSPELLING = frozenset({"rules", "uses", "used", "rose", "roses", "rolls", "holes", "poles", "tenet", "tenets", "rolex"})  # fmt: skip
_EDIT_TARGETS = ("roles", "users", "tenant")

# A value that IS a classification marker (the whole value, not a word in a
# sentence) says its author meant to restrict the document: "sensitivity:
# confidential", "label: restricted", "tags: [internal only]". Matching the
# whole value keeps false positives low: a description that mentions a
# confidential process is fine. "internal" alone is left out (too common as
# a topic: "internal tools").
_MARKER_VALUES = frozenset(
    {
        "confidential", "strictly confidential", "highly confidential", "restricted", "secret",
        "top secret", "classified", "private", "internal only", "internal use only",
        "for internal use only", "need to know", "not public", "do not distribute", "do not share",
    }
)  # fmt: skip

_HIDDEN_RE = re.compile(char_class(HIDDEN))
# camelCase and ACRONYMWord boundaries: "allowedRoles" -> allowed Roles,
# "ACLRoles" -> ACL Roles, "orgID" -> org ID.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^0-9a-zA-Z]+|(?<=[a-zA-Z])(?=[0-9])|(?<=[0-9])(?=[a-zA-Z])")


def _skeleton(key: str) -> str:
    """``key`` as the Latin letters a reader sees: NFKC, hidden characters
    dropped, accents dropped, Cyrillic/Greek look-alikes mapped (case kept,
    for the camelCase split)."""
    text = _HIDDEN_RE.sub("", unicodedata.normalize("NFKC", key))
    text = "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", text).translate(_CONFUSABLES)


def key_words(key: str) -> list[str]:
    """The casefolded words of ``key``: "Allowed_readRoles" -> ["allowed", "read", "roles"]."""
    return [w.casefold() for w in _SEPARATORS.split(_CAMEL.sub(" ", _skeleton(key))) if w]


def _singulars(word: str) -> tuple[str, ...]:
    out = [word]
    if word.endswith("ies"):
        out.append(word[:-3] + "y")
    if word.endswith("es"):
        out.append(word[:-2])
    if word.endswith("s"):
        out.append(word[:-1])
    return tuple(out)


def _is_access(word: str) -> bool:
    return any(w in _ACCESS_WORDS for w in _singulars(word))


def _is_known(word: str) -> bool:
    return any(w in _ACCESS_WORDS or w in _JOINING_WORDS for w in _singulars(word))


def _run_together(word: str) -> bool:
    """True when ``word`` splits wholly into known words, one of them an
    access word ("allowedroles", "aclroles", "readroles", "visibleto")."""
    n = len(word)
    # reach[i]: (word[:i] splits into known words, and one was an access word)
    reach: list[tuple[bool, bool] | None] = [None] * (n + 1)
    reach[0] = (True, False)
    for i in range(n):
        here = reach[i]
        if here is None:
            continue
        for j in range(i + 2, min(n, i + 20) + 1):  # no known word is longer
            piece = word[i:j]
            if _is_known(piece):
                hit = here[1] or _is_access(piece)
                prev = reach[j]
                reach[j] = (True, hit or (prev is not None and prev[1]))
    end = reach[n]
    return end is not None and end[1]


def _one_edit(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by one insertion, deletion,
    substitution or swap of neighbours (Damerau-Levenshtein distance 1)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        i, j = diff[0], diff[-1]
        return len(diff) == 2 and j == i + 1 and a[i] == b[j] and a[j] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _misspelt(word: str) -> str | None:
    """The ACL key ``word`` is one edit from ("rolse" -> "roles"), or None."""
    if word in _NOT_A_MISSPELLING:
        return None
    return next((k for k in _EDIT_TARGETS if _one_edit(word, k)), None)


@functools.lru_cache(maxsize=4096)  # JSONL records repeat the same keys line after line
def names_access(key: str) -> bool:
    """True when a word of ``key`` names access (the ACL keys included)."""
    return any(_is_access(w) or _run_together(w) or _misspelt(w) for w in key_words(key))


def _hint(key: str, words: list[str]) -> str:
    joined = "".join(words)
    for acl_key in _ACL_KEYS:
        if joined in (acl_key, acl_key.rstrip("s")) or _misspelt(joined) == acl_key:
            return f"write {acl_key!r} (lowercase, Latin letters)"
    return "declare access with 'roles', 'users' or 'tenant'"


def _lookalikes(key: str) -> str:
    odd = [c for c in unicodedata.normalize("NFKC", key) if not c.isascii()]
    return (
        f" (it holds non-Latin or hidden characters: {', '.join(f'U+{ord(c):04X}' for c in odd)})"
        if odd
        else ""
    )


def acl_key_error(key: str) -> str | None:
    """Why ``key`` (top level of front matter or a JSONL record) must not be
    stored as metadata, or None when it is an ACL key or ordinary metadata.

    Fail closed: a document with ``read_roles: [finance]`` would otherwise be
    stored public with "read_roles" as a harmless-looking metadata field."""
    if key in _ACL_KEYS:
        return None
    if not names_access(key):
        return None
    return (
        f"key {key!r} looks like access control but is not an ACL key{_lookalikes(key)} "
        f"(the ACL keys are {', '.join(repr(k) for k in _ACL_KEYS)}); {_hint(key, key_words(key))}, "
        "or rename it"
    )


def _marker(value: Any) -> str | None:
    """The classification marker ``value`` is ("confidential"), or None."""
    if not isinstance(value, str) or len(value) > 40:
        return None
    words = " ".join(re.split(r"[\s_\-.:/]+", _skeleton(value).casefold())).strip()
    return words if words in _MARKER_VALUES else None


def metadata_access_error(meta: Mapping[str, Any]) -> str | None:
    """The first reason ``meta`` (a document's front matter or JSONL record)
    names access without declaring it, or None.

    Top-level ``roles`` / ``users`` / ``tenant`` are the ACL and ``title`` is
    the title: their values are not looked at. Every other value is walked
    (dicts at any depth, lists of dicts): a nested key that names access, the
    ACL keys included ({"metadata": {"roles": [...]}} sets nothing), and a
    value that is a classification marker are refused."""
    stack: list[tuple[str, Any]] = []
    for key, value in meta.items():
        name = str(key)
        refused = acl_key_error(name)
        if refused is not None:
            return refused
        if name not in (*_ACL_KEYS, "title"):
            stack.append((name, value))
    while stack:  # a loop, not recursion: a JSON record may nest deeper than the stack
        where, value = stack.pop()
        if isinstance(value, Mapping):
            for key, item in value.items():
                path = f"{where}.{key}"
                if names_access(str(key)):
                    return (
                        f"key {path!r} looks like access control but is nested inside {where!r}"
                        f"{_lookalikes(str(key))}: only top-level 'roles', 'users', 'tenant' set access; "
                        "move it to the top level, or rename it"
                    )
                stack.append((path, item))
        elif isinstance(value, (list, tuple)):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
        else:
            marker = _marker(value)
            if marker is not None:
                return (
                    f"metadata {where!r} is {value!r}, which looks like access control (a "
                    f"classification marker) but restricts nothing; declare who may read the document "
                    "with 'roles', 'users' or 'tenant', or change the value"
                )
    return None
