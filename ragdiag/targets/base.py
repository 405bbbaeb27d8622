"""The protocol every search target implements, with its optional capabilities declared.

Targets are read-only. Every target has `name`, `capabilities`, `fingerprint()`,
`schema()`, `search()` and `count()`. What not every target can do or tell is declared in
`capabilities` (never discovered with `getattr`): `CAPABILITY_MEMBERS` says which members
each capability promises, `missing_members` checks them when the target is opened, and
callers ask `has_capability(target, name)` (checks: `ctx.supports(name)`) before they use one:

- ``documents``: `iter_documents(select, filter)` streams the index's records;
- ``get_document``: `get_document(key, select)` reads one record by key;
- ``security_values``: `security_values(keys, field)` returns each key's security values
  even when the field is not retrievable (the local index reads its own records);
- ``stages``: traces carry the keyword leg, vector legs and the fused pool (not only hits);
- ``sql_probes``: the target runs the client's own SQL (`template` with its WHERE clauses and
  LIMIT) and answers variants of it: `probe(request, drop=, limit=)`, `stage_counts(request)`,
  `clause_admission(request, keys)`, `clause_columns(i)`, `limit_of(request)`, with its column
  `mapping` and declared `rerank_depth`;
- ``prepare``: `prepare(requests)` readies a batch before it is searched (embeds the texts);
- ``compact_traces``: traces hold ids into `key_table`; `record(row)` reads a row's fields;
- ``local_records``: the records in memory (`records`, `row_of`), `matching_keys(keys, filter)`;
- ``embedder``: the target embeds query texts itself with `embedder` (model, dimension);
- ``embedding_model``: `embedding_model` names the model its stored vectors come from;
- ``reranker``: `reranker` is the reranker it applies (its `name`);
- ``retries``: the target retries on its own and asks `retry_gate` (the runner's breaker) first;
- ``vectorizer_required``: vector queries by text need a vectorizer on the index (Azure);
- ``description``: `describe()` returns facts for the audit's metadata;
- ``text_analysis``: `text_analysis` describes its keyword analysis (language, stemming);
- ``stats``: `stats` counts what it sent (requests, retries) for the audit's metadata;
- ``unsent_parameters``: `unsent_parameters` names request parameters it cannot send.

`fingerprint()` identifies what the target would answer (index content, search
semantics, reranker): the runner's trace cache is keyed by it, so a changed index never
answers from a stale cache.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ragdiag.model import SearchRequest, Trace
from ragdiag.model.schema import IndexSchema

__all__ = ["CAPABILITIES", "CAPABILITY_MEMBERS", "Target", "has_capability", "missing_members"]

#: capability -> the members it promises (attributes or methods; see the module docstring)
CAPABILITY_MEMBERS: Mapping[str, tuple[str, ...]] = {
    "documents": ("iter_documents",),
    "get_document": ("get_document",),
    "security_values": ("security_values",),
    "stages": (),
    "sql_probes": ("probe", "stage_counts", "clause_admission", "clause_columns", "limit_of", "template",
                   "mapping", "rerank_depth"),
    "prepare": ("prepare",),
    "compact_traces": ("key_table", "record"),
    "local_records": ("records", "row_of", "matching_keys"),
    "embedder": ("embedder",),
    "embedding_model": ("embedding_model",),
    "reranker": ("reranker",),
    "retries": ("retry_gate",),
    "vectorizer_required": (),
    "description": ("describe",),
    "text_analysis": ("text_analysis",),
    "stats": ("stats",),
    "unsent_parameters": ("unsent_parameters",),
}
CAPABILITIES: tuple[str, ...] = tuple(CAPABILITY_MEMBERS)
_METHODS = frozenset({"iter_documents", "get_document", "security_values", "probe", "stage_counts",
                      "clause_admission", "clause_columns", "limit_of", "prepare", "record", "matching_keys", "describe"})


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


def has_capability(target: Any, capability: str) -> bool:
    """Whether `target` declares `capability` (its members were checked when it was opened)."""
    if capability not in CAPABILITY_MEMBERS:
        raise ValueError(f"unknown target capability {capability!r}; capabilities: {', '.join(CAPABILITIES)}")
    return target is not None and capability in (getattr(target, "capabilities", None) or ())


def missing_members(target: Any) -> list[str]:
    """What `target` lacks of the protocol and of the members its capabilities promise."""
    missing = [m for m in ("name", "capabilities", "fingerprint", "schema", "search", "count")
               if not hasattr(target, m)]
    caps = getattr(target, "capabilities", frozenset()) or frozenset()
    if not isinstance(caps, frozenset | set | tuple | list):
        return [*missing, f"capabilities must be a frozenset of names, got {type(caps).__name__}"]
    unknown = sorted(set(caps) - set(CAPABILITIES))
    missing += [f"capability {c!r} is not one of {', '.join(CAPABILITIES)}" for c in unknown]
    for cap in CAPABILITIES:
        if cap not in caps:
            continue
        for member in CAPABILITY_MEMBERS[cap]:
            present = callable(getattr(target, member, None)) if member in _METHODS else hasattr(target, member)
            if not present:
                missing.append(f"{member}{'()' if member in _METHODS else ''} (promised by capability {cap!r})")
    return missing
