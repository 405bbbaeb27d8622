"""OpenTelemetry spans with OpenInference semantic conventions, from OTLP JSON.

The file format is the OpenTelemetry Collector's file exporter (``file`` exporter, JSON
encoding): one ``ExportTraceServiceRequest`` in OTLP/JSON per line
(``{"resourceSpans": [{"resource": ..., "scopeSpans": [{"spans": [...]}]}]}``, trace and span
ids hex-encoded, 64-bit integers as strings). `ragdiag record --otlp PORT` writes the same
format from what instrumented applications export over OTLP/HTTP. A file holding one such
object (or a list of them) as a whole JSON document is read too.

Phoenix and Langfuse exports are not read: neither documents a stable export file format
(Phoenix exports dataframes of its own columns; Langfuse's export is its API's JSON); both
can send OTLP to a collector or to `ragdiag record --otlp`.

OpenInference attributes read (``openinference-semantic-conventions``; the names are checked
against the package by tests/test_observe_spans.py): ``openinference.span.kind`` (RETRIEVER,
LLM, CHAIN, TOOL, AGENT, EMBEDDING, RERANKER, ...), ``input.value``, ``output.value``,
``retrieval.documents.N.document.id|score|content``, ``llm.token_count.prompt|completion|total``,
``llm.model_name``, ``tool.name``, ``user.id``, ``session.id``.
"""

from __future__ import annotations

import base64
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.inputs import limits

SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
OUTPUT_VALUE = "output.value"
DOCUMENTS = "retrieval.documents"
PROMPT_TOKENS = "llm.token_count.prompt"
COMPLETION_TOKENS = "llm.token_count.completion"
TOTAL_TOKENS = "llm.token_count.total"
MODEL_NAME = "llm.model_name"
TOOL_NAME = "tool.name"
USER_ID = "user.id"
SESSION_ID = "session.id"
KINDS = ("RETRIEVER", "LLM", "CHAIN", "TOOL", "AGENT", "EMBEDDING", "RERANKER", "GUARDRAIL", "EVALUATOR")
MAX_TRACE_BYTES = 4 << 30
_DOC = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(id|score|content|metadata)$")
#: metadata keys that carry a document's id when `document.id` is absent (LangChain puts the store's key there)
_ID_KEYS = ("id", "key", "doc_id", "document_id", "chunk_id")
_HEX = re.compile(r"^[0-9a-fA-F]+$")


@dataclass(frozen=True)
class RetrievedDocument:
    id: str | None
    score: float | None
    content: str | None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    """One span: ids, name, OpenInference kind, times, flattened attributes."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str | None
    start_ns: int
    end_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)
    service: str | None = None

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attributes.get(name, default)

    @property
    def input_value(self) -> str | None:
        v = self.attributes.get(INPUT_VALUE)
        return v if isinstance(v, str) else None

    @property
    def user_id(self) -> str | None:
        return self.attributes.get(USER_ID)

    @property
    def session_id(self) -> str | None:
        return self.attributes.get(SESSION_ID)

    @property
    def prompt_tokens(self) -> int | None:
        return _int(self.attributes.get(PROMPT_TOKENS))

    @property
    def completion_tokens(self) -> int | None:
        return _int(self.attributes.get(COMPLETION_TOKENS))

    def documents(self) -> list[RetrievedDocument]:
        """The retrieved documents of a RETRIEVER span, in rank order."""
        found: dict[int, dict[str, Any]] = defaultdict(dict)
        for k, v in self.attributes.items():
            m = _DOC.match(k)
            if m:
                found[int(m.group(1))][m.group(2)] = v
        out = []
        for _, d in sorted(found.items()):
            meta = _metadata(d.get("metadata"))
            doc_id = d.get("id")
            if doc_id is None:
                doc_id = next((meta[k] for k in _ID_KEYS if meta.get(k) is not None), None)
            out.append(RetrievedDocument(id=None if doc_id is None else str(doc_id), score=_float(d.get("score")),
                                         content=d.get("content"), metadata=meta))
        return out


@dataclass(frozen=True)
class Spans:
    spans: tuple[Span, ...]
    paths: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.spans)

    def __iter__(self) -> Iterator[Span]:
        return iter(self.spans)

    def of_kind(self, kind: str) -> list[Span]:
        return [s for s in self.spans if s.kind == kind]

    def traces(self) -> dict[str, list[Span]]:
        """trace id -> its spans in start order."""
        out: dict[str, list[Span]] = defaultdict(list)
        for s in self.spans:
            out[s.trace_id].append(s)
        return {t: sorted(v, key=lambda s: s.start_ns) for t, v in out.items()}

    def __repr__(self) -> str:
        kinds = defaultdict(int)
        for s in self.spans:
            kinds[s.kind or "-"] += 1
        return f"Spans({len(self.spans)} spans in {len(self.traces())} traces: {dict(kinds)})"


def load_spans(*paths: str | os.PathLike[str]) -> Spans:
    """Spans of OTLP JSON files (collector file exporter lines, or one JSON document)."""
    spans: list[Span] = []
    for path in paths:
        spath = str(path)
        text = limits.read_text(path, what="trace file", max_bytes=MAX_TRACE_BYTES)
        stripped = text.strip()
        if not stripped:
            continue
        docs: list[tuple[int, Any]] = []
        first = stripped.splitlines()[0].strip()
        if stripped.startswith("[") or (first.startswith("{") and not first.endswith("}")):
            docs.append((1, limits.loads_json(text, path=spath, what="OTLP JSON")))
        else:
            for lineno, raw in enumerate(text.splitlines(), start=1):
                if raw.strip():
                    docs.append((lineno, limits.loads_json(raw, path=spath, line=lineno, what="OTLP JSON")))
        for lineno, doc in docs:
            for request in doc if isinstance(doc, list) else [doc]:
                spans.extend(spans_of(request, path=spath, line=lineno))
    return Spans(spans=tuple(spans), paths=tuple(str(p) for p in paths))


def spans_of(request: Any, *, path: str | None = None, line: int | None = None) -> list[Span]:
    """The spans of one ExportTraceServiceRequest in OTLP/JSON."""
    def err(message: str) -> InputDataError:
        return InputDataError(message, path=path, line=line)

    if not isinstance(request, Mapping) or "resourceSpans" not in request:
        raise err("expected an OTLP JSON ExportTraceServiceRequest ({\"resourceSpans\": [...]}), as the "
                  "OpenTelemetry Collector's file exporter writes; got "
                  f"{limits.excerpt(sorted(request) if isinstance(request, Mapping) else request)}")
    out = []
    for rs in request.get("resourceSpans") or ():
        resource = attributes((rs.get("resource") or {}).get("attributes"))
        service = resource.get("service.name")
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or ():
            for sp in ss.get("spans") or ():
                try:
                    attrs = attributes(sp.get("attributes"))
                    out.append(Span(trace_id=_id(sp.get("traceId")), span_id=_id(sp.get("spanId")),
                                    parent_id=_id(sp.get("parentSpanId")) or None, name=str(sp.get("name") or ""),
                                    kind=(str(attrs[SPAN_KIND]).upper() if attrs.get(SPAN_KIND) else None),
                                    start_ns=int(sp.get("startTimeUnixNano") or 0),
                                    end_ns=int(sp.get("endTimeUnixNano") or 0), attributes=attrs,
                                    service=service))
                except (TypeError, ValueError) as exc:
                    raise err(f"a span that is not OTLP JSON: {limits.excerpt(str(exc))}") from None
    return out


def attributes(items: Iterable[Mapping[str, Any]] | None) -> dict[str, Any]:
    """OTLP KeyValue list -> plain dict (arrays as tuples, kvlists as dicts)."""
    out: dict[str, Any] = {}
    for kv in items or ():
        if isinstance(kv, Mapping) and "key" in kv:
            out[str(kv["key"])] = any_value(kv.get("value") or {})
    return out


def any_value(v: Mapping[str, Any]) -> Any:
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return tuple(any_value(x) for x in (v["arrayValue"] or {}).get("values") or ())
    if "kvlistValue" in v:
        return attributes((v["kvlistValue"] or {}).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _id(value: Any) -> str:
    """A trace or span id as lower-case hex (OTLP JSON is hex; protobuf-to-JSON gives base64)."""
    if not value:
        return ""
    s = str(value)
    if _HEX.match(s) and len(s) in (16, 32):
        return s.lower()
    try:
        return base64.b64decode(s, validate=True).hex()
    except (ValueError, TypeError):
        return s


def _metadata(v: Any) -> dict[str, Any]:
    """`document.metadata`: a JSON object as text (OpenInference) or already a mapping."""
    if isinstance(v, Mapping):
        return dict(v)
    if isinstance(v, str) and v.strip().startswith("{"):
        import json

        try:
            data = json.loads(v)
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}
    return {}


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


__all__ = ["KINDS", "RetrievedDocument", "Span", "Spans", "any_value", "attributes", "load_spans", "spans_of"]
