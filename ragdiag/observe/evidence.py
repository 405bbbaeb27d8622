"""Everything observed for one audit: recorded searches, spans and Postgres statements.

`Observed` is what the checks read (`ragdiag.checks._observed`): the recorded searches with
their parsed request and shape, the de facto routes, the spans of instrumented applications
(RETRIEVER, LLM, CHAIN, TOOL, AGENT), the loops per trace, and the similarity statements sent
to Postgres. A recorded search is attributed to its caller by the W3C trace id it carried
(``traceparent``); without one, by the RETRIEVER span of the same text whose time window holds
it; else by its user agent.

`load_observed(traffic=[...], traces=[...])` reads the files of ``[inputs] traffic`` (files of
`ragdiag record`, and Postgres server logs) and ``[inputs] traces`` (OTLP JSON lines); each
file's format is recognised from its first line.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.observe.pglog import Statement, iter_similarity, load_statements
from ragdiag.observe.shapes import Route, Shape, routes, shape_of
from ragdiag.observe.spans import Span, Spans, load_spans
from ragdiag.observe.traffic import Traffic, TrafficRecord, load_traffic


@dataclass(frozen=True)
class ObservedSearch:
    record: TrafficRecord
    request: Any  # SearchRequest
    shape: Shape


@dataclass(frozen=True)
class Loop:
    """One trace's loop: how many retrievals, LLM calls and tool calls it made."""

    trace_id: str
    root: str
    retrievals: int
    llm_calls: int
    tool_calls: int
    user: str | None


class Observed:
    """Observed evidence of one audit; each part may be empty."""

    def __init__(self, traffic: Traffic | None = None, spans: Spans | None = None,
                 statements: Sequence[Statement] = (), paths: Sequence[str] = ()) -> None:
        self.traffic = traffic or Traffic(records=())
        self.spans = spans or Spans(spans=())
        self.statements = list(statements)
        self.paths = tuple(paths)
        self.searches: list[ObservedSearch] = []
        self.unparsed: list[TrafficRecord] = []
        for r in self.traffic.searches():
            req = r.request()
            if req is None:
                self.unparsed.append(r)
            else:
                self.searches.append(ObservedSearch(r, req, shape_of(r.index, req)))
        self._retrievers: list[Span] | None = None

    # ---- what is there -----------------------------------------------------------------------------
    @property
    def has_traffic(self) -> bool:
        return bool(self.searches or self.similarity())

    @property
    def has_traces(self) -> bool:
        return len(self.spans) > 0

    @property
    def requests(self) -> int:
        """Search requests observed (recorded searches and similarity statements)."""
        return len(self.searches) + len(self.similarity())

    def similarity(self) -> list[Statement]:
        return list(iter_similarity(self.statements))

    def refused_writes(self) -> int:
        return len(self.traffic.refused_writes())

    def routes(self) -> list[Route]:
        return routes(s.shape for s in self.searches)

    def route_of(self, search: ObservedSearch) -> str:
        from ragdiag.observe.shapes import route_label

        return route_label(search.shape.route)

    # ---- spans ---------------------------------------------------------------------------------
    def retrievers(self) -> list[Span]:
        if self._retrievers is None:
            self._retrievers = self.spans.of_kind("RETRIEVER")
        return self._retrievers

    def llm_spans(self) -> list[Span]:
        return self.spans.of_kind("LLM")

    def loops(self) -> list[Loop]:
        """Per trace with at least one retrieval or LLM call: its counts."""
        out = []
        for trace_id, spans in self.spans.traces().items():
            by_id = {s.span_id: s for s in spans}
            # a framework nests spans of one kind (LlamaIndex: retrieve -> _retrieve, predict -> complete):
            # one call is the outermost span of its kind
            kinds = Counter(s.kind for s in spans if not _inside_same_kind(s, by_id))
            if not (kinds["RETRIEVER"] or kinds["LLM"]):
                continue
            ids = set(by_id)
            roots = [s for s in spans if not s.parent_id or s.parent_id not in ids]
            user = next((s.user_id for s in spans if s.user_id), None)
            out.append(Loop(trace_id, roots[0].name if roots else spans[0].name, kinds["RETRIEVER"], kinds["LLM"],
                            kinds["TOOL"], user))
        return out

    def caller(self, search: ObservedSearch) -> str:
        """The trace that sent a search (its id, by header or by its RETRIEVER span), else its user agent."""
        r = search.record
        if r.trace_id:
            return f"trace {r.trace_id}"
        span = self.span_for(search)
        if span is not None:
            return f"trace {span.trace_id}"
        return r.user_agent or "unknown client"

    def span_for(self, search: ObservedSearch) -> Span | None:
        t = _epoch_ns(search.record.ts)
        if t is None:
            return None
        text = (search.request.search or "").strip()
        slack = 2_000_000_000
        best = None
        for s in self.retrievers():
            if s.start_ns - slack <= t <= s.end_ns + slack:
                if text and (s.input_value or "").strip() == text:
                    return s
                best = best or s
        return best

    def summary(self) -> dict[str, Any]:
        """For ``meta.observed`` of the findings: what the verdicts rest on."""
        return {"files": list(self.paths), "requests": len(self.traffic), "searches": len(self.searches),
                "unparsed_searches": len(self.unparsed), "refused_writes": self.refused_writes(),
                "spans": len(self.spans), "traces": len(self.spans.traces()),
                "statements": len(self.statements), "similarity_statements": len(self.similarity())}

    def __repr__(self) -> str:
        s = self.summary()
        return (f"Observed({s['searches']} searches, {s['spans']} spans in {s['traces']} traces, "
                f"{s['similarity_statements']} similarity statements)")


def _inside_same_kind(span: Span, by_id: dict[str, Span]) -> bool:
    seen: set[str] = set()
    parent = by_id.get(span.parent_id or "")
    while parent is not None and parent.span_id not in seen:
        if parent.kind == span.kind:
            return True
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_id or "")
    return False


def _epoch_ns(ts: str) -> int | None:
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1e9)
    except (ValueError, AttributeError):
        return None


def file_kind(path: str | os.PathLike[str]) -> str:
    """``traffic``, ``traces`` or ``postgres_log``, from the file's first non-empty line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                line = raw.strip()
                if not line:
                    continue
                if line.startswith(("{", "[")):
                    head = line[:4000]
                    if "resourceSpans" in head:
                        return "traces"
                    if '"operation"' in head:
                        return "traffic"
                    return "traces" if line.startswith("[") else "traffic"
                return "postgres_log"
    except FileNotFoundError:
        raise InputDataError("observed evidence file not found", path=str(path)) from None
    except OSError as exc:
        raise InputDataError(f"cannot read the observed evidence file: {exc.strerror}", path=str(path)) from None
    return "traffic"


def load_observed(traffic: Sequence[str | os.PathLike[str]] = (),
                  traces: Sequence[str | os.PathLike[str]] = ()) -> Observed:
    """Read ``[inputs] traffic`` (ragdiag record files, Postgres logs) and ``[inputs] traces``."""
    kinds: dict[str, list[Path]] = {"traffic": [], "traces": [], "postgres_log": []}
    for p in list(traffic) + list(traces):
        kinds[file_kind(p)].append(Path(p))
    return Observed(traffic=load_traffic(*kinds["traffic"]) if kinds["traffic"] else None,
                    spans=load_spans(*kinds["traces"]) if kinds["traces"] else None,
                    statements=load_statements(*kinds["postgres_log"]) if kinds["postgres_log"] else (),
                    paths=[str(p) for p in list(traffic) + list(traces)])


__all__ = ["Loop", "Observed", "ObservedSearch", "file_kind", "load_observed"]
