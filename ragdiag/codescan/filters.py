"""Filter clauses of a (possibly partial) OData filter text, and the role of each clause's fields."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragdiag.codescan.patterns import SECURITY_FIELD_RE, SECURITY_FILTER_RE
from ragdiag.codescan.values import PLACEHOLDER_RE


def _split_top_level_and(text: str) -> list[str]:
    parts, depth, quote, start, i = [], 0, False, 0, 0
    low = text.lower()
    while i < len(text):
        ch = text[i]
        if ch == "'":
            quote = not quote
        elif not quote:
            if ch in "({":
                depth += 1
            elif ch in ")}":
                depth -= 1
            elif depth == 0 and low.startswith(" and ", i):
                parts.append(text[start:i])
                start = i + 5
                i += 5
                continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def _strip_parens(text: str) -> str:
    while text.startswith("(") and text.endswith(")"):
        depth = 0
        for i, ch in enumerate(text):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(text) - 1:
                return text
        text = text[1:-1].strip()
    return text


def _outside_quotes(text: str) -> str:
    return re.sub(r"'(?:[^']|'')*'", "''", text)


@dataclass(frozen=True)
class FilterClause:
    text: str
    fields: tuple[str, ...]
    literal: bool          # no unresolved parts at all
    opaque: bool           # an unresolved part outside string literals: may be anything


def filter_clauses(text: str) -> tuple[list[FilterClause], bool]:
    """Top-level `and` clauses of a (possibly partial) filter text, and whether the list is complete.

    Fully known text goes through `ragdiag.odata` (canonical rendering); text
    with placeholders is split naively. A placeholder outside string literals
    makes its clause opaque and the list incomplete.
    """
    from ragdiag.errors import FilterError
    from ragdiag.odata import clauses as odata_clauses
    from ragdiag.odata import parse

    if not text.strip():
        return [], True
    if not PLACEHOLDER_RE.search(text):
        try:
            return [FilterClause(c.text, tuple(sorted(c.fields)), True, False)
                    for c in odata_clauses(parse(text))], True
        except (FilterError, RecursionError, ValueError):
            pass
    # placeholders may hold quotes or parentheses of their own: protect them while splitting
    held: list[str] = []

    def hold(m: re.Match[str]) -> str:
        held.append(m.group(0))
        return f"{{#{len(held) - 1}}}"

    protected = PLACEHOLDER_RE.sub(hold, text)
    if not held:
        return _clauses_raw(text)
    found, complete = _clauses_raw(protected)
    return [FilterClause(re.sub(r"\{#(\d+)\}", lambda m: held[int(m.group(1))], c.text), c.fields, c.literal,
                         c.opaque) for c in found], complete


def _clauses_raw(text: str) -> tuple[list[FilterClause], bool]:
    """`filter_clauses` on text whose placeholders hold no quotes or parentheses."""
    from ragdiag.errors import FilterError
    from ragdiag.odata import clauses as odata_clauses
    from ragdiag.odata import parse

    out: list[FilterClause] = []
    complete = True
    for raw in _split_top_level_and(text):
        raw = _strip_parens(raw)
        if not raw.strip():
            continue
        if " and " in raw.lower() and _split_top_level_and(raw) != [raw]:
            sub, sub_complete = _clauses_raw(raw)
            out.extend(sub)
            complete = complete and sub_complete
            continue
        has_ph = bool(PLACEHOLDER_RE.search(raw))
        opaque = has_ph and bool(PLACEHOLDER_RE.search(_outside_quotes(raw)))
        norm = " ".join(raw.split())
        fields: tuple[str, ...] = ()
        if not has_ph:
            try:
                parsed = odata_clauses(parse(raw))
                norm = " and ".join(c.text for c in parsed)
                fields = tuple(sorted({f for c in parsed for f in c.fields}))
            except (FilterError, RecursionError, ValueError):
                pass
        if not fields and not opaque:
            m = re.match(r"\s*(?:not\s+)?(?:search\.in\s*\(\s*)?([A-Za-z_][\w/]*)", raw)
            if m:
                fields = (m.group(1).split("/")[0],)
        out.append(FilterClause(norm, fields, not has_ph, opaque))
        complete = complete and not opaque
    return out, complete


def clause_role(fields: tuple[str, ...], text: str = "") -> str:
    """The role of a filter clause's fields: security, quality, recency, source, scope or other."""
    names = [f.lower() for f in fields]
    if any(SECURITY_FIELD_RE.match(f) for f in names) or SECURITY_FILTER_RE.search(text):
        return "security"
    if any(re.search(r"confidence|quality|score|rating|ocr|extraction", f) for f in names):
        return "quality"
    if any(re.search(r"date|time|updated|created|modified|year|fresh|timestamp", f) for f in names):
        return "recency"
    if any(re.search(r"source|doc_type|type|category|origin|language|lang", f) for f in names):
        return "source"
    if any(re.search(r"entity|tenant|parent|level|id$|_id|key", f) for f in names):
        return "scope"
    return "other"

