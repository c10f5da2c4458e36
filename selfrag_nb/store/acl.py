"""Access control: the one rule, the ACL a document declares, and the SQL
prefilter LanceDB applies before anything ranks, grades or shows a chunk.

The rule (docs/access-control.md says the same in prose)::

    visible(chunk, user) =
        tenant matches     chunk.tenant == ""  or  chunk.tenant == user.tenant
        AND (
            "public" in chunk.roles              a document said it is public
         or user.id in chunk.users               the user is named (never anonymous)
         or any(r in chunk.roles for r in user.roles)
        )

    What a document declares -> what is stored (effective_acl):
      nothing                       roles ["public"]            (public)
        ... with default_access="private"   roles []            (nobody, until it gets an ACL)
      roles [finance]               roles [finance]             (finance only)
      users [bob]                   roles [], users [bob]       (bob only: NOT public)
      users [] or roles []          roles [], users []          (nobody: empty means nobody)
      roles [public], users [bob]   roles [public], users [bob] (public, said explicitly)
      tenant acme                   + tenant "acme"             (only users of tenant acme)
      tenant "" / null              refused                     (blank would mean every tenant)

    A stored document's ACL changing on re-ingest (writes.py, visibility.py):
      widens(before, after)         someone could read it who could not  -> refused
                                    unless ingest(allow_widen=True)
      otherwise                     narrowing / moving                   -> done, reported

    A key that looks like an ACL key but is not one ("Roles", "role", "User",
    "tennant", "groups", "acl", "permissions", ...) is refused by acl_key_error():
    loaders skip the file or record with that reason instead of storing the
    document public with the key as metadata.

    user (None = User() = anonymous: the public role only, named in no users list)
      -> access_filter(user)   ONE where-clause, applied by KnowledgeBase.search
                               as a LanceDB prefilter (never a post-filter)
      -> combine_filters(acl, where)  the caller's where ANDed, never replacing the
                               ACL; a where that could close the parenthesis is refused,
                               and so is quoting the check does not model ($$, E'')

Every name enters the SQL as a single-quoted literal with quotes doubled, so a
role such as ``x' OR 1=1 --`` is just a role nobody has. Names with control
characters are refused outright (they have no business in an ACL).
"""

from __future__ import annotations

from collections.abc import Iterable

from selfrag_nb.errors import InputError, InputTypeError
from selfrag_nb.store.acl_keys import acl_key_error
from selfrag_nb.store.types import ANONYMOUS, PUBLIC_ROLE, EffectiveACL, User
from selfrag_nb.text import validate_unicode

__all__ = [
    "ACL_KEYS",
    "DEFAULT_ACCESS",
    "EffectiveACL",
    "access_filter",
    "acl_key_error",
    "combine_filters",
    "effective_acl",
    "sql_literal",
    "validate_acl_name",
    "visible",
    "widens",
]

#: The keys of front matter, JSONL records and ``ingest(acl=...)`` that set access.
ACL_KEYS = ("roles", "users", "tenant")

#: What a document that declares no access gets: ``"public"`` (the default,
#: readable by everyone) or ``"private"`` (readable by nobody until it is given
#: an ACL; ``KnowledgeBase.open(path, default_access="private")``).
DEFAULT_ACCESS = ("public", "private")


def effective_acl(
    roles: Iterable[str] | None,
    users: Iterable[str] | None,
    tenant: str | None,
    *,
    default_access: str = "public",
) -> EffectiveACL:
    """What is stored for a document that declares ``roles`` / ``users`` /
    ``tenant`` (None: not declared).

    Public only when the document declares neither roles nor users (and the
    knowledge base's ``default_access`` is "public"), or when ``public`` is
    among its roles. An EMPTY list is a declaration: ``users: []`` restricts
    like ``roles: []`` does, to nobody (a config that yields an empty list
    must never publish what it was meant to restrict). A declared tenant must
    be a name: blank means "every tenant", so it is refused, not guessed."""
    if default_access not in DEFAULT_ACCESS:
        raise InputError(f"default_access must be 'public' or 'private', got {default_access!r}")
    r = tuple(roles) if roles is not None else None
    u = tuple(users) if users is not None else ()
    if r is None:
        declared = users is not None
        r = () if declared or default_access == "private" else (PUBLIC_ROLE,)
    for name in (*r, *u):
        validate_acl_name(name, "ACL name")
    t = ""
    if tenant is not None:
        if not isinstance(tenant, str) or not tenant.strip():
            raise InputError(
                f"tenant must be a non-blank name, got {tenant!r}: a blank tenant would make the "
                "document readable by every tenant; remove the key to mean that"
            )
        t = validate_acl_name(tenant, "tenant")
    return EffectiveACL(tuple(dict.fromkeys(r)), tuple(dict.fromkeys(u)), t)


def widens(before: EffectiveACL, after: EffectiveACL) -> bool:
    """True when someone could read a document under ``after`` who could not
    under ``before`` (the rule in ``visible``, reasoned over every possible user)."""
    if not after.roles and not after.users:
        return False  # readable by nobody: narrower than anything
    if before.tenant and after.tenant != before.tenant:
        return True  # tenant cleared or moved: another tenant's users gain it
    if PUBLIC_ROLE in before.roles:
        return False  # everyone (of the tenant) could already read it
    if PUBLIC_ROLE in after.roles:
        return True
    # A new role gives its holders access; a new user id gives that user
    # access (we cannot know that user's roles, so assume it is new).
    return not set(after.roles) <= set(before.roles) or not set(after.users) <= set(before.users)


def visible(roles: Iterable[str], users: Iterable[str], tenant: str, user: User | None) -> bool:
    """The access rule in Python: may ``user`` read a chunk stored with this
    ACL? The same rule as ``access_filter``'s SQL, written a second time on
    purpose: every row the store returns is checked here too, so a fault in
    the SQL prefilter (a parser change, a bad join with the caller's where)
    cannot hand a chunk to the wrong reader."""
    user = user if user is not None else User()
    if tenant and tenant != (user.tenant or ""):
        return False
    roles = tuple(roles)
    if any(r in roles for r in user.all_roles):  # "public" is among all_roles
        return True
    # Anonymous is nobody in particular (see access_filter).
    return user.id != ANONYMOUS and user.id in tuple(users)


def validate_acl_name(name: str, what: str = "ACL name") -> str:
    """``name`` when it is a non-blank string without control characters."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"{what} must be a non-blank string, got {name!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise InputError(f"{what} must not contain control characters, got {name!r}")
    return validate_unicode(what, name)


def sql_literal(value: str) -> str:
    """A SQL string literal: single quotes doubled (the only escape in SQL strings)."""
    return "'" + validate_acl_name(value, "SQL string value").replace("'", "''") + "'"


def access_filter(user: User | None) -> str:
    """The where-clause selecting exactly the chunks ``user`` may read."""
    user = user if user is not None else User()
    # "public" is among all_roles, so one array_has_any covers "the chunk is
    # public" and "one of the user's roles is in its roles".
    role_list = ", ".join(sql_literal(validate_acl_name(r, "role")) for r in user.all_roles)
    allowed = f"array_has_any(acl_roles, [{role_list}])"
    if user.id != ANONYMOUS:
        # Anonymous is nobody in particular: a document listing "anonymous"
        # among its users is not thereby readable by everyone who did not log in.
        allowed = f"({allowed} OR array_has(acl_users, {sql_literal(validate_acl_name(user.id, 'user id'))}))"
    if user.tenant:
        tenant = f"(tenant = '' OR tenant = {sql_literal(validate_acl_name(user.tenant, 'tenant'))})"
    else:
        tenant = "tenant = ''"
    return f"{allowed} AND {tenant}"


def combine_filters(acl: str, where: str | None) -> str:
    """The ACL AND the caller's own condition (parenthesised so an OR inside
    ``where`` cannot escape the ACL)."""
    if where is None:
        return acl
    if not isinstance(where, str):
        raise InputTypeError(f"where must be a SQL string, got {type(where).__name__}")
    if not where.strip():
        return acl
    _check_contained(where)
    return f"({acl}) AND ({where})"


def _check_contained(where: str) -> None:
    """Refuse a ``where`` that could close our parenthesis ("1=1) OR (1=1") or
    comment out the rest: parentheses must balance outside quoted strings and
    there must be no SQL comment or statement separator.

    The guard models only plain quoting: '...', "..." and `...` with the quote
    doubled inside, and a backslash as an ordinary character (which is how
    LanceDB 0.40's parser reads plain strings). Quoting it does not model fails
    closed, because the parser might end such a string elsewhere than the guard
    thinks: dollar quotes ($$ ... $$, $tag$ ... $tag$, which LanceDB 0.40 panics
    on) and prefixed strings (E'...' with backslash escapes, N'', X'', B'', R'',
    U&'')."""
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(where):
        c = where[i]
        if quote is not None:
            if c == quote:
                if where[i + 1 : i + 2] == quote:  # doubled quote inside a literal
                    i += 1
                else:
                    quote = None
        elif c == "$":
            raise InputError(
                f"where must not contain '$' outside a '...' string (dollar-quoted strings and "
                f"placeholders are not supported; write a single-quoted literal): {where!r}"
            )
        elif c in "'\"`":
            if i and (where[i - 1].isalnum() or where[i - 1] in "_&"):
                raise InputError(
                    f"where must not use a prefixed string such as E'...' or N'...' (escapes the "
                    f"check cannot follow; write a plain '...' literal, quotes doubled): {where!r}"
                )
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise InputError(f"where has an unmatched ')': {where!r}")
        elif where.startswith(("--", "/*"), i) or c == ";":
            raise InputError(f"where must be a single condition without comments or ';': {where!r}")
        i += 1
    if quote is not None:
        raise InputError(f"where has an unterminated quoted string: {where!r}")
    if depth:
        raise InputError(f"where has an unmatched '(': {where!r}")
