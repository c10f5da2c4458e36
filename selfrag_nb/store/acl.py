"""Access control: a User -> the SQL prefilter LanceDB applies before ranking.

    user (None = anonymous)
      -> roles  = user.all_roles            (always includes "public")
      -> visible = (array_has_any(acl_roles, [roles]) OR array_has(acl_users, id))
                   AND (tenant = '' OR tenant = user.tenant)
      -> AND (caller's where)               ANDed, never replacing the ACL; a where that
                                            could close the parenthesis is refused, and so
                                            is quoting the check does not model ($$, E'')

Every name enters the SQL as a single-quoted literal with quotes doubled, so a
role such as ``x' OR 1=1 --`` is just a role nobody has. Names with control
characters are refused outright (they have no business in an ACL).
"""

from __future__ import annotations

from selfrag_nb.store.types import PUBLIC_ROLE, User

__all__ = ["access_filter", "combine_filters", "sql_literal", "validate_acl_name"]


def validate_acl_name(name: str, what: str = "ACL name") -> str:
    """``name`` when it is a non-blank string without control characters."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{what} must be a non-blank string, got {name!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ValueError(f"{what} must not contain control characters, got {name!r}")
    return name


def sql_literal(value: str) -> str:
    """A SQL string literal: single quotes doubled (the only escape in SQL strings)."""
    return "'" + validate_acl_name(value, "SQL string value").replace("'", "''") + "'"


def access_filter(user: User | None) -> str:
    """The where-clause selecting exactly the chunks ``user`` may read."""
    roles = user.all_roles if user is not None else (PUBLIC_ROLE,)
    role_list = ", ".join(sql_literal(validate_acl_name(r, "role")) for r in roles)
    allowed = f"array_has_any(acl_roles, [{role_list}])"
    if user is not None:
        allowed = f"({allowed} OR array_has(acl_users, {sql_literal(validate_acl_name(user.id, 'user id'))}))"
    if user is not None and user.tenant:
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
        raise TypeError(f"where must be a SQL string, got {type(where).__name__}")
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
            raise ValueError(
                f"where must not contain '$' outside a '...' string (dollar-quoted strings and "
                f"placeholders are not supported; write a single-quoted literal): {where!r}"
            )
        elif c in "'\"`":
            if i and (where[i - 1].isalnum() or where[i - 1] in "_&"):
                raise ValueError(
                    f"where must not use a prefixed string such as E'...' or N'...' (escapes the "
                    f"check cannot follow; write a plain '...' literal, quotes doubled): {where!r}"
                )
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise ValueError(f"where has an unmatched ')': {where!r}")
        elif where.startswith(("--", "/*"), i) or c == ";":
            raise ValueError(f"where must be a single condition without comments or ';': {where!r}")
        i += 1
    if quote is not None:
        raise ValueError(f"where has an unterminated quoted string: {where!r}")
    if depth:
        raise ValueError(f"where has an unmatched '(': {where!r}")
