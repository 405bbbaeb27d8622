"""The protocol every search target implements. Targets are read-only."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from ragdiag.model import SearchRequest, Trace
from ragdiag.model.schema import IndexSchema


@runtime_checkable
class Target(Protocol):
    """What the runner and the checks need from a search system."""

    name: str

    def schema(self) -> IndexSchema:
        """The index definition: fields, vector fields, semantic configs, scoring profiles."""
        ...

    def search(self, request: SearchRequest) -> Trace:
        """Execute one request and return every stage the target can report."""
        ...

    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        """Stream the index's records (for chunk analysis), never loading all at once remotely."""
        ...

    def count(self, filter: str | None = None) -> int:
        """Number of records, optionally matching an OData filter."""
        ...
