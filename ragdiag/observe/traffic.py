"""Recorded Azure AI Search traffic: one JSON object per request, as `ragdiag record` writes it.

    {"seq": 17, "ts": "2026-12-02T08:00:01.123Z", "method": "POST",
     "path": "/indexes('docs')/docs/search.post.search", "operation": "search",
     "index": "docs", "api_version": "2026-04-01", "status": 200, "refused": false,
     "auth": "api-key", "permission_header": false, "user_agent": "azsdk-python-search-documents/12.0.0 ...",
     "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "client_request_id": "…",
     "body": {"search": "...", "vectorQueries": [...], "filter": "...", "top": 5, ...},
     "response": {"returned": 5, "count": null, "keys": ["a", ...], "scores": [0.03, ...],
                  "reranker_scores": [2.9, ...], "captions": false, "answers": false, "partial": null},
     "latency_ms": 12.4, "upstream_ms": 11.9}

`auth` names the kind of credential the client sent (``api-key``, ``bearer``, ``none``) and
`permission_header` whether ``x-ms-query-source-authorization`` was present: their values are
never written. `body` is the full request body of a read (search, suggest, autocomplete; a GET
search's query parameters), None for other operations and for refused writes. `response` is
None where the response was not a search result (a definition, a count, an error).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import InputDataError, RagdiagError
from ragdiag.inputs import limits

#: Request-body keys Azure accepts that the request model does not carry (kept in `body`).
UNMODELLED_KEYS = ("semanticErrorHandling", "semanticMaxWaitInMilliseconds", "sessionId",
                   "scoringStatistics", "minimumCoverage", "highlight", "highlightPreTag",
                   "highlightPostTag", "facets", "orderby", "semanticFields")
#: Operations that read documents (recorded with their body).
READS = ("search", "suggest", "autocomplete")
MAX_TRAFFIC_BYTES = 4 << 30


@dataclass(frozen=True)
class TrafficRecord:
    """One request the application sent through `ragdiag record`, and what came back."""

    seq: int
    ts: str
    method: str
    path: str
    operation: str
    index: str | None = None
    api_version: str | None = None
    status: int = 0
    refused: bool = False
    auth: str = "none"
    permission_header: bool = False
    user_agent: str | None = None
    trace_id: str | None = None
    client_request_id: str | None = None
    body: Mapping[str, Any] | None = None
    response: Mapping[str, Any] | None = None
    latency_ms: float | None = None
    upstream_ms: float | None = None
    line: int | None = field(default=None, compare=False)

    @property
    def is_search(self) -> bool:
        return self.operation == "search" and self.body is not None and not self.refused

    def request(self) -> Any:
        """The body as a `SearchRequest` (None when it is not a search or does not parse)."""
        if not self.is_search:
            return None
        from ragdiag.model import SearchRequest

        body = {k: v for k, v in dict(self.body or {}).items() if k not in UNMODELLED_KEYS}
        body.pop("@odata.type", None)
        try:
            return SearchRequest.from_dict(body)
        except (RagdiagError, TypeError, ValueError):
            return None

    @property
    def reranker_scores(self) -> tuple[float, ...]:
        return tuple(x for x in (self.response or {}).get("reranker_scores") or () if x is not None)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(str(k) for k in (self.response or {}).get("keys") or () if k is not None)

    @property
    def caller(self) -> str:
        """Who sent it: the trace id when the client propagated one, else its user agent."""
        if self.trace_id:
            return f"trace {self.trace_id[:16]}"
        return self.user_agent or "unknown client"

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in FIELDS}
        out["body"] = dict(self.body) if self.body is not None else None
        out["response"] = dict(self.response) if self.response is not None else None
        return out


FIELDS = ("seq", "ts", "method", "path", "operation", "index", "api_version", "status", "refused", "auth",
          "permission_header", "user_agent", "trace_id", "client_request_id", "body", "response",
          "latency_ms", "upstream_ms")


@dataclass(frozen=True)
class Traffic:
    """The records of one or more traffic files."""

    records: tuple[TrafficRecord, ...]
    paths: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[TrafficRecord]:
        return iter(self.records)

    def searches(self) -> list[TrafficRecord]:
        return [r for r in self.records if r.is_search]

    def refused_writes(self) -> list[TrafficRecord]:
        return [r for r in self.records if r.refused]

    def operations(self) -> Counter[str]:
        return Counter(r.operation for r in self.records)

    def __repr__(self) -> str:
        ops = ", ".join(f"{k} {n}" for k, n in self.operations().most_common()) or "none"
        return f"Traffic({len(self.records)} requests: {ops})"


def load_traffic(*paths: str | os.PathLike[str]) -> Traffic:
    """Load traffic files (JSONL written by `ragdiag record`); errors name file and line."""
    records: list[TrafficRecord] = []
    for path in paths:
        spath = str(path)
        text = limits.read_text(path, what="traffic file", max_bytes=MAX_TRAFFIC_BYTES)
        for lineno, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            if len(raw) > limits.MAX_LINE_CHARS:
                raise InputDataError(f"the line has {len(raw):,} characters; the limit is "
                                     f"{limits.MAX_LINE_CHARS:,}", path=spath, line=lineno)
            records.append(parse_record(limits.loads_json(raw, path=spath, line=lineno, what="traffic record"),
                                        path=spath, line=lineno))
    return Traffic(records=tuple(records), paths=tuple(str(p) for p in paths))


def parse_record(obj: Any, *, path: str | None = None, line: int | None = None) -> TrafficRecord:
    def err(message: str) -> InputDataError:
        return InputDataError(message, path=path, line=line)

    if not isinstance(obj, dict):
        raise err(f"a traffic record must be a JSON object, got {type(obj).__name__}")
    for key in ("seq", "method", "path", "operation"):
        if obj.get(key) is None:
            raise err(f"a traffic record needs {key!r} (written by ragdiag record); got keys "
                      f"{limits.excerpt(sorted(obj))}")
    values: dict[str, Any] = {}
    for key in FIELDS:
        v = obj.get(key)
        if key in ("seq", "status") and v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise err(f"{key!r} must be an integer, got {limits.excerpt(v)}")
        if key in ("body", "response") and v is not None and not isinstance(v, dict):
            raise err(f"{key!r} must be an object or null, got {type(v).__name__}")
        if key in ("latency_ms", "upstream_ms") and v is not None and (
                not isinstance(v, int | float) or isinstance(v, bool)):
            raise err(f"{key!r} must be a number or null, got {limits.excerpt(v)}")
        if key in ("refused", "permission_header") and v is not None and not isinstance(v, bool):
            raise err(f"{key!r} must be true or false, got {limits.excerpt(v)}")
        if v is not None:
            values[key] = v
    values.setdefault("ts", "")
    return TrafficRecord(**values, line=line)


__all__ = ["FIELDS", "READS", "Traffic", "TrafficRecord", "UNMODELLED_KEYS", "load_traffic", "parse_record"]
