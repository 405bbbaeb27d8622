"""Observed evidence: what an application really sent, recorded or imported, never inferred.

- `traffic`: the recorded Azure AI Search requests and responses (`ragdiag record`), one JSON
  object per line (`TrafficRecord`), and their loader;
- `proxy`: the read-only recording reverse proxy behind `ragdiag record` (writes refused with
  403 and counted; keys, tokens and the permission header's value never reach the file);
- `tls`: the generated certificate for the proxy's https side;
- `spans`: OpenTelemetry spans with OpenInference semantic conventions (RETRIEVER, LLM,
  CHAIN, TOOL, AGENT), from the OpenTelemetry Collector's file exporter (OTLP JSON lines);
- `otlp`: the OTLP/HTTP receiver behind `ragdiag record --otlp PORT` (protobuf or JSON);
- `pglog`: the statements a client sent to Postgres, from the server log
  (``log_min_duration_statement = 0``) or ``pg_stat_statements``;
- `shapes`: request shapes, their clusters (de facto routes) and the drift between them;
- `evidence`: everything observed for one audit (`Observed`), what the checks read.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Observed", "Span", "TrafficRecord", "load_observed", "load_spans", "load_traffic"]

_HOME = {"Observed": "evidence", "load_observed": "evidence", "Span": "spans", "load_spans": "spans",
         "TrafficRecord": "traffic", "load_traffic": "traffic"}


def __getattr__(name: str) -> Any:  # lazy: `ragdiag record` starts without importing the rest
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(f"ragdiag.observe.{_HOME[name]}"), name)
    raise AttributeError(name)
