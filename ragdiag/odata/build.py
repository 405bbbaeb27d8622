"""Build filter text safely from values: the security-trimming filter.

`search_in_any` is how a caller turns a user's group ids into
`group_ids/any(g: search.in(g, 'a|b', '|'))` without any value being able to
break out of its string literal or be split into two values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragdiag.errors import FilterError
from ragdiag.odata.parser import KEYWORDS
from ragdiag.odata.render import quote

MATCH_NOTHING = "false"
"""What `search_in_any` returns for no values: valid in Azure, matches no document."""

_PREFERRED_DELIMITERS = "|,;~^#!$%&*+=:/\\`@"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*")


def pick_delimiter(values: Sequence[str]) -> str:
    """A single delimiter character that occurs in none of the values (prefers `|`)."""
    used = set().union(*values) if values else set()
    for ch in _PREFERRED_DELIMITERS:
        if ch not in used:
            return ch
    code = 0x2400  # Unicode "control pictures", then onwards: always terminates
    while True:
        ch = chr(code)
        if ch not in used and not ch.isspace() and ch != "'":
            return ch
        code += 1


def search_in_any(field: str, values: Sequence[str], var: str = "g") -> str:
    """`field/any(var: search.in(var, 'v1|v2', '|'))` matching documents that share a value.

    Quotes are doubled and the delimiter is a character none of the values contain,
    so a value is never split or able to escape its literal. Empty strings are
    dropped (search.in ignores empty pieces anyway). With no values left the result
    is `false`: a user with no groups must see nothing, and `false` is valid Azure
    syntax that matches nothing everywhere, unlike relying on how an empty
    search.in list is treated. Callers that need the field visible in the filter
    text should special-case the empty list themselves.
    """
    if not isinstance(field, str) or not _PATH.fullmatch(field):
        raise FilterError(f"not a field path: {field!r} (expected e.g. group_ids or a/b)")
    if not _IDENT.fullmatch(var) or var in KEYWORDS:
        raise FilterError(f"not a usable range variable name: {var!r}")
    if isinstance(values, str):
        raise FilterError(f"values must be a sequence of strings, not the single string {values!r}")
    kept: list[str] = []
    for v in values:
        if not isinstance(v, str):
            raise FilterError(f"search_in_any values must be strings, got {type(v).__name__}")
        if v:
            kept.append(v)
    kept = list(dict.fromkeys(kept))
    if not kept:
        return MATCH_NOTHING
    delim = pick_delimiter(kept)
    return f"{field}/any({var}: search.in({var}, {quote(delim.join(kept))}, {quote(delim)}))"
