"""The protocol every search target implements, with its optional capabilities declared.

Targets are read-only. Every target has `name`, `capabilities`, `fingerprint()`,
`schema()`, `search()` and `count()`. What not every target can do is declared in
`capabilities` (never discovered with `getattr`), and checks ask the audit context
(`ctx.supports("documents")`) before they rely on it:

- ``documents``: `iter_documents(select, filter)` streams the index's records;
- ``get_document``: `get_document(key, select)` reads one record by key;
- ``security_values``: `security_values(keys, field)` returns each key's security values
  even when the field is not retrievable (the local index reads its own records);
- ``stages``: traces carry the keyword leg, vector legs and the fused pool (not only hits);
- ``sql_probes``: the target runs the client's own SQL (`template` with its WHERE clauses and
  LIMIT) and answers variants of it: `probe(request, drop=, limit=)`, `stage_counts(request)`.

`fingerprint()` identifies what the target would answer (index content, search
semantics, reranker): the runner's trace cache is keyed by it, so a changed index never
answers from a stale cache.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ragdiag.model import SearchRequest, Trace
from ragdiag.model.schema import IndexSchema

__all__ = ["CAPABILITIES", "Target", "missing_members"]

CAPABILITIES: tuple[str, ...] = ("documents", "get_document", "security_values", "stages", "sql_probes")
_CAPABILITY_METHODS: Mapping[str, str] = {"documents": "iter_documents", "get_document": "get_document",
                                          "security_values": "security_values", "sql_probes": "probe"}


@runtime_checkable
class Target(Protocol):
    """What the runner and the checks need from a search system."""

    name: str
    capabilities: frozenset[str]

    def fingerprint(self) -> str:
        """A stable identity of what the target would answer (changes when the index changes)."""
        ...

    def schema(self) -> IndexSchema:
        """The index definition: fields, vector fields, semantic configs, scoring profiles."""
        ...

    def search(self, request: SearchRequest) -> Trace:
        """Execute one request and return every stage the target can report."""
        ...

    def count(self, filter: str | None = None) -> int:
        """Number of records, optionally matching an OData filter."""
        ...


class DocumentSource(Protocol):
    """Capability ``documents``."""

    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        ...


class SecurityValues(Protocol):
    """Capability ``security_values``."""

    def security_values(self, keys: Sequence[str], field: str) -> dict[str, tuple[str, ...] | None]:
        ...


def missing_members(target: Any) -> list[str]:
    """What `target` lacks of the protocol and of the methods its capabilities promise."""
    missing = [m for m in ("name", "capabilities", "fingerprint", "schema", "search", "count")
               if not hasattr(target, m)]
    caps = getattr(target, "capabilities", frozenset()) or frozenset()
    unknown = sorted(set(caps) - set(CAPABILITIES))
    missing += [f"capability {c!r} is not one of {', '.join(CAPABILITIES)}" for c in unknown]
    missing += [f"{meth}() (promised by capability {cap!r})" for cap, meth in _CAPABILITY_METHODS.items()
                if cap in caps and not callable(getattr(target, meth, None))]
    return missing
