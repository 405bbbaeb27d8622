"""An in-memory target for extenders and tests: records in a list, a keyword leg you can check by hand.

`MockTarget` implements the `Target` protocol without an index, a model or a network: a
search scores each record by how many query terms its searchable fields contain (the count is
the score, ties broken by key), applies the request's OData filter with ragdiag's own
evaluator, and returns the top hits with the selected fields. It declares only the
capabilities it has (``documents``, ``get_document``); pass ``capabilities=`` to narrow them
(a target that cannot stream records) and ``text=False`` to return hits without field values
(a target whose hits carry no text)::

    from ragdiag.extend import MockTarget

    target = MockTarget([{"id": "a", "content": "Kündigungsfrist drei Monate"},
                         {"id": "b", "content": "Urlaub"}])
    target.search(SearchRequest(search="kündigungsfrist", select=("id", "content"))).keys  # ("a",)

Like every target it is read-only: nothing it is given is changed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ragdiag.model import SearchRequest, Trace
from ragdiag.model.schema import STRING, Field, IndexSchema
from ragdiag.model.trace import Hit, RankedList

__all__ = ["MockTarget"]

_WORD = re.compile(r"\w+", re.UNICODE)


def _terms(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text or "")}


class MockTarget:
    """Records in memory behind the `Target` protocol (see the module docstring)."""

    def __init__(self, records: Iterable[Mapping[str, Any]], *, schema: IndexSchema | None = None,
                 key: str = "id", name: str = "mock",
                 capabilities: Iterable[str] = ("documents", "get_document"), text: bool = True) -> None:
        self.records: tuple[dict[str, Any], ...] = tuple(dict(r) for r in records)
        self.name = name
        self.capabilities = frozenset(capabilities)
        self._text = text
        self._schema = schema or self._infer_schema(key)
        self._key = self._schema.key_field.name
        self._by_key = {str(r[self._key]): r for r in self.records}
        if len(self._by_key) != len(self.records):
            raise ValueError(f"MockTarget records need distinct values of key field {self._key!r}")
        self.requests: list[SearchRequest] = []  # every request searched, for tests to read

    def _infer_schema(self, key: str) -> IndexSchema:
        names = list(dict.fromkeys(n for r in self.records for n in r))
        if key not in names:
            names.insert(0, key)
        fields = tuple(Field(name=n, type=STRING, key=n == key, searchable=n != key, filterable=True)
                       for n in names)
        return IndexSchema(name=self.name, fields=fields)

    # ---- the protocol -------------------------------------------------------------------
    def fingerprint(self) -> str:
        body = json.dumps([self.name, sorted(self.capabilities), self._text, self.records],
                          sort_keys=True, default=str)
        return "mock:" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]

    def schema(self) -> IndexSchema:
        return self._schema

    def _matching(self, filter: str | None) -> list[dict[str, Any]]:
        if not filter:
            return list(self.records)
        from ragdiag.odata.evaluate import compile_filter

        keep = compile_filter(filter)
        return [r for r in self.records if keep(r)]

    def count(self, filter: str | None = None) -> int:
        return len(self._matching(filter))

    def search(self, request: SearchRequest) -> Trace:
        self.requests.append(request)
        query = request.search or " ".join(v.text or "" for v in request.vector_queries)
        terms = _terms(query) if query.strip() != "*" else set()
        fields = request.search_fields or tuple(f.name for f in self._schema.fields if f.searchable)
        scored: list[tuple[str, float]] = []
        for r in self._matching(request.filter):
            if terms:
                words = set().union(*(_terms(str(r.get(f, "") or "")) for f in fields))
                score = float(len(terms & words))
                if score <= 0:
                    continue
            else:
                score = 1.0  # "*" or an empty query: every record matches equally
            scored.append((str(r[self._key]), score))
        scored.sort(key=lambda ks: (-ks[1], ks[0]))
        leg = RankedList("text", [k for k, _ in scored], [s for _, s in scored])
        page = scored[request.skip:request.skip + request.top]
        select = request.select or tuple(f.name for f in self._schema.fields if f.retrievable)
        hits = tuple(Hit(key=k, score=s, text_score=s, text_rank=request.skip + i + 1,
                         fields=self._fields(self._by_key[k], select))
                     for i, (k, s) in enumerate(page))
        return Trace(request=request, hits=hits, text=leg, pool=leg,
                     count=len(scored) if request.count else None, target=self.name)

    def _fields(self, record: Mapping[str, Any], select: Sequence[str]) -> dict[str, Any]:
        if not self._text:
            return {self._key: record[self._key]}
        return {f: record[f] for f in select if f in record}

    # ---- capabilities ---------------------------------------------------------------------
    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        """Capability ``documents``: the records (the `select`ed fields) matching `filter`."""
        for r in self._matching(filter):
            yield {f: r[f] for f in select if f in r} if select else dict(r)

    def get_document(self, key: str, select: Sequence[str] | None = None) -> dict[str, Any] | None:
        """Capability ``get_document``: one record by key, or None."""
        r = self._by_key.get(str(key))
        if r is None:
            return None
        return {f: r[f] for f in select if f in r} if select else dict(r)

    def __repr__(self) -> str:
        return f"MockTarget({self.name!r}, {len(self.records)} records, capabilities={sorted(self.capabilities)})"
