"""An OTLP/HTTP trace receiver: `ragdiag record --otlp PORT`.

Instrumented applications export to ``http://127.0.0.1:PORT/v1/traces`` (the OTLP/HTTP
convention; 4318 is the usual port), protobuf (``application/x-protobuf``, decoded with
``opentelemetry-proto``, the ``traces`` extra) or JSON (``application/json``), optionally
gzip-compressed. Each export is appended as one line of OTLP/JSON with hex ids: the format of
the OpenTelemetry Collector's file exporter, so `ragdiag.observe.spans.load_spans` reads what
the receiver wrote and what a collector wrote alike. Nothing else is accepted (404/415).
"""

from __future__ import annotations

import gzip
import json
import logging
import threading
from pathlib import Path
from typing import Any

from ragdiag.http_server import BackgroundHandler, BackgroundHTTPServer, BackgroundServer
from ragdiag.observe.spans import _id

log = logging.getLogger("ragdiag.observe.otlp")
TRACES_PATH = "/v1/traces"
MAX_EXPORT_BYTES = 64 << 20


def protobuf_to_json(data: bytes) -> dict[str, Any]:
    """An ExportTraceServiceRequest in protobuf as OTLP/JSON (hex ids)."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    msg = ExportTraceServiceRequest()
    msg.ParseFromString(data)
    doc = MessageToDict(msg)
    for rs in doc.get("resourceSpans") or ():
        for ss in rs.get("scopeSpans") or ():
            for sp in ss.get("spans") or ():
                for key in ("traceId", "spanId", "parentSpanId"):
                    if sp.get(key):
                        sp[key] = _id(sp[key])
                for link in sp.get("links") or ():
                    for key in ("traceId", "spanId"):
                        if link.get(key):
                            link[key] = _id(link[key])
    return doc


class OtlpReceiver(BackgroundServer):
    """Receive OTLP/HTTP trace exports and append them to `out` as OTLP/JSON lines."""

    thread_name = "ragdiag-otlp"
    join_timeout_s = 10.0
    port_option = "--otlp"

    def __init__(self, *, out: str | Path, host: str = "127.0.0.1", port: int = 4318,
                 append: bool = False) -> None:
        super().__init__(host=host, port=port)
        self.out = Path(out)
        self.append = append
        self.exports = 0
        self.spans = 0
        self.rejected = 0
        self._lock = threading.Lock()

    def _open(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.out.open("a" if self.append else "w", encoding="utf-8")

    def _close(self) -> None:
        self._fh.close()

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"exports": self.exports, "spans": self.spans, "rejected": self.rejected}

    def accept(self, doc: dict[str, Any]) -> None:
        n = sum(len(ss.get("spans") or ()) for rs in doc.get("resourceSpans") or ()
                for ss in rs.get("scopeSpans") or ())
        line = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()
            self.exports += 1
            self.spans += n

    def reject(self) -> None:
        with self._lock:
            self.rejected += 1


class _Server(BackgroundHTTPServer):
    owner: OtlpReceiver


class _Handler(BackgroundHandler):
    server_version = "ragdiag-otlp"
    log = log
    server: _Server

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        recv = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        if self.path.split("?")[0] != TRACES_PATH:
            self.rfile.read(length)
            recv.reject()
            return self.send_bytes(404, b'{"message":"only /v1/traces is received here"}', "application/json")
        if length > MAX_EXPORT_BYTES:
            recv.reject()
            self.close_connection = True
            return self.send_bytes(413, b'{"message":"export too large"}', "application/json")
        data = self.rfile.read(length)
        if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            data = gzip.decompress(data)
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            if ctype == "application/x-protobuf":
                doc = protobuf_to_json(data)
                reply, rtype = b"", "application/x-protobuf"
            elif ctype == "application/json":
                doc = json.loads(data.decode("utf-8"))
                if not isinstance(doc, dict):
                    raise ValueError("not an object")
                reply, rtype = b"{}", "application/json"
            else:
                recv.reject()
                return self.send_bytes(415, b'{"message":"send application/x-protobuf or application/json"}',
                                   "application/json")
        except Exception as exc:  # a malformed export is the client's: 400, never a crash
            recv.reject()
            return self.send_bytes(400, json.dumps({"message": f"not an OTLP trace export: {type(exc).__name__}"}
                                               ).encode(), "application/json")
        recv.accept(doc)
        self.send_bytes(200, reply, rtype)


# the handler answers through the receiver, so it is defined after it
OtlpReceiver.handler, OtlpReceiver.server_class = _Handler, _Server

__all__ = ["OtlpReceiver", "TRACES_PATH", "protobuf_to_json"]
