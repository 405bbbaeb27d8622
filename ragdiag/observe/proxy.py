"""`ragdiag record`: a read-only recording reverse proxy for the Azure AI Search REST API.

The application points its search endpoint at the proxy and runs as usual. Reads are
forwarded to the upstream service (a real ``https://NAME.search.windows.net`` or
`ragdiag serve`): searches, suggest, autocomplete, document lookups, counts, index
definitions and statistics (every GET; POST only to ``docs/search``, ``docs/suggest`` and
``docs/autocomplete`` in both URL forms). Everything else (PUT, DELETE, PATCH, MERGE, a POST
that indexes documents, creates or runs anything) is refused with 403 before it reaches the
service, counted and recorded without its body.

Per request one JSON line goes to the traffic file (`ragdiag.observe.traffic`): the index, the
full body of a read, the API version, whether the permission header
(``x-ms-query-source-authorization``) was present, the kind of credential, the W3C trace id
(``traceparent``) and user agent of the caller; per response the document keys,
``@search.score``, ``@search.rerankerScore``, whether captions came back, ``@odata.count`` and
the latency. Keys, bearer tokens and the permission header's value never reach the file: they
are not recorded, and every line is scrubbed of the request's secret header values before it is
written (a client that put a token into its search text still leaves no token behind).

The hot path only forwards: parsing the response and writing the line happen on the writer
thread, so the proxy adds little latency (benchmarks/bench_record.py).
"""

from __future__ import annotations

import http.client
import json
import logging
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from ragdiag.errors import ConfigError
from ragdiag.http_server import (
    BackgroundHandler,
    BackgroundHTTPServer,
    BackgroundServer,
    wait_for_interrupt,
)

log = logging.getLogger("ragdiag.observe.proxy")

PERMISSION_HEADER = "x-ms-query-source-authorization"
STATS_PATH = "/ragdiag/record/stats"
#: headers whose values are secrets: never recorded, scrubbed from every line
SECRET_HEADERS = ("api-key", "authorization", PERMISSION_HEADER, "x-ms-token", "ocp-apim-subscription-key")
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
        "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding"}
_READ_POST_OPS = {"search": "search", "search.post.search": "search", "suggest": "suggest",
                  "search.post.suggest": "suggest", "autocomplete": "autocomplete",
                  "search.post.autocomplete": "autocomplete"}
_ODATA_INDEX = re.compile(r"^indexes\('((?:[^']|'')*)'\)$")
_ODATA_DOC = re.compile(r"^docs\('((?:[^']|'')*)'\)$")
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$")
#: query parameters that may carry a credential: never part of a recorded body
_SECRET_PARAMS = re.compile(r"(?i)^(api-?key|key|code|sig|token|access_token|subscription-key)$")
REDACTED = "[redacted]"


def classify(method: str, path: str) -> tuple[str, str | None, bool]:
    """(operation, index, is_read) for a request line (path without the query string)."""
    segs = [unquote(s) for s in path.split("/")[1:]]
    if segs and segs[-1] == "":
        segs = segs[:-1]
    index: str | None = None
    rest: list[str] = []
    if segs:
        m = _ODATA_INDEX.match(segs[0])
        if m:
            index, rest = m.group(1).replace("''", "'"), segs[1:]
        elif segs[0] == "indexes" and len(segs) > 1:
            index, rest = segs[1], segs[2:]
    read = method in ("GET", "HEAD", "OPTIONS")
    if method == "POST" and index is not None and len(rest) == 2 and rest[0] == "docs" \
            and rest[1] in _READ_POST_OPS:
        return _READ_POST_OPS[rest[1]], index, True
    if not read:
        return "write", index, False
    if index is None:
        if segs[:1] == ["indexes"]:
            return "list_indexes", None, True
        return ("servicestats" if segs[:1] == ["servicestats"] else "other"), None, True
    if not rest:
        return "index", index, True
    if rest[0] == "docs" and len(rest) == 1:
        return "search", index, True  # GET /docs?search=...
    if rest[0] == "docs" and len(rest) == 2:
        return ("count" if rest[1] == "$count" else "lookup"), index, True
    if _ODATA_DOC.match(rest[0]):
        return "lookup", index, True
    if rest[0] in ("stats", "search.stats"):
        return "index_stats", index, True
    return "other", index, True


@dataclass
class _Item:
    """What the writer thread needs to record one request (secrets kept only to scrub them)."""

    seq: int
    ts: float
    method: str
    path: str
    query: str
    operation: str
    index: str | None
    status: int
    refused: bool
    headers: dict[str, str]
    body: bytes
    response: bytes
    content_type: str
    latency_ms: float
    upstream_ms: float | None
    secrets: tuple[str, ...]


class _Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts = {"requests": 0, "forwarded": 0, "refused_writes": 0, "upstream_errors": 0, "recorded": 0,
                       "record_errors": 0}

    def add(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] += n

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return dict(self.counts)


class RecordingProxy(BackgroundServer):
    """Forward reads to `upstream`, refuse writes, record every request into `out` (JSONL).

    >>> with RecordingProxy("http://127.0.0.1:8765", out="traffic.jsonl") as proxy:
    ...     client = SearchClient(proxy.url, "docs", AzureKeyCredential(key))
    """

    thread_name = "ragdiag-record"
    join_timeout_s = 30.0
    port_option = "--listen"

    def __init__(self, upstream: str, *, out: str | Path, host: str = "127.0.0.1", port: int = 0,
                 api_key: str | None = None, tls: tuple[Path, Path] | None = None,
                 timeout_s: float = 60.0, append: bool = False) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--upstream must be an http(s) URL such as https://NAME.search.windows.net or "
                              f"http://127.0.0.1:8765 (ragdiag serve), got {upstream!r}")
        if parts.query or parts.fragment:
            raise ConfigError("--upstream takes the service URL without a query string (the api-key goes in "
                              "--api-key-env, never in a URL)")
        if api_key is not None and not api_key:
            raise ConfigError("the upstream api-key is empty: export it in the variable --api-key-env names")
        self.upstream = upstream.rstrip("/")
        self._scheme, self._uhost = parts.scheme, parts.hostname
        self._uport = parts.port or (443 if parts.scheme == "https" else 80)
        self._ubase = parts.path.rstrip("/")
        self._host_header = self._uhost if self._uport in (80, 443) else f"{self._uhost}:{self._uport}"
        super().__init__(host=host, port=port)
        self.out = Path(out)
        self.tls = tls
        self.timeout_s = timeout_s
        self.append = append
        # the key lives in a closure (never an attribute a repr could show)
        self._inject: Callable[[dict[str, str]], tuple[str, ...]] = _injector(api_key)
        self.stats_ = _Stats()
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._local = threading.local()
        self._key_fields: dict[str, str | None] = {}
        self._write_lock = threading.Lock()  # the writer thread writes, flush() may flush from another

    def __repr__(self) -> str:
        return f"RecordingProxy(url={self.url!r}, upstream={self.upstream!r}, out={str(self.out)!r})"

    # ---- lifecycle (BackgroundServer's hooks) ------------------------------------------------------
    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    def _open(self) -> None:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.out.open("a" if self.append else "w", encoding="utf-8")

    def _prepare(self, server: BackgroundHTTPServer) -> None:
        if self.tls is not None:
            from ragdiag.observe.tls import server_context

            # the handshake runs in the handler thread, not in the accept loop
            server.socket = server_context(*self.tls).wrap_socket(server.socket, server_side=True,
                                                                  do_handshake_on_connect=False)

    def _workers(self) -> list[threading.Thread]:
        return [threading.Thread(target=self._write_loop, name="ragdiag-record-writer", daemon=True)]

    def _stopping(self) -> None:
        self._queue.put(None)  # the writer drains the queue, then ends

    def _close(self) -> None:
        self._fh.close()

    def stats(self) -> dict[str, int]:
        """Counters: requests, forwarded, refused_writes, upstream_errors, recorded, record_errors."""
        return self.stats_.snapshot()

    def flush(self, timeout_s: float = 10.0) -> None:
        """Wait until every request answered so far is written."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._seq_lock:
                seq = self._seq
            done = self.stats_.snapshot()
            if done["recorded"] + done["record_errors"] >= seq:
                with self._write_lock:
                    if not self._fh.closed:
                        self._fh.flush()
                return
            time.sleep(0.005)

    # ---- the hot path (handler threads) ------------------------------------------------------------
    def next_seq(self) -> int:
        with self._seq_lock:
            self._seq += 1
            return self._seq

    def handle(self, h: _Handler) -> None:
        t0 = time.perf_counter()
        split = urlsplit(h.path)
        if h.command == "GET" and split.path == STATS_PATH:
            return h.send_bytes(200, json.dumps(self.stats()).encode(), "application/json")
        self.stats_.add("requests")
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length > 0 else b""
        operation, index, read = classify(h.command, split.path)
        headers = {k: v for k, v in h.headers.items()}
        secrets = _secret_values(headers)
        seq, ts = self.next_seq(), time.time()
        if not read:
            self.stats_.add("refused_writes")
            log.warning("refused a write: %s %s", h.command, split.path)
            data = json.dumps({"error": {"code": "Forbidden", "message": "ragdiag record is read-only: "
                                         f"{h.command} {split.path} was refused and not sent"}}).encode()
            h.send_bytes(403, data, "application/json; charset=utf-8")
            self._queue.put(_Item(seq, ts, h.command, split.path, split.query, operation, index, 403, True,
                                  headers, b"", b"", "", (time.perf_counter() - t0) * 1000, None, secrets))
            return
        fwd = {k: v for k, v in headers.items() if k.lower() not in _HOP}
        secrets = secrets + self._inject(fwd)
        fwd["Host"] = self._host_header
        fwd["Accept-Encoding"] = "identity"
        if body or h.command == "POST":
            fwd["Content-Length"] = str(len(body))
        t1 = time.perf_counter()
        try:
            status, rheaders, rbody = self._forward(h.command, self._ubase + h.path, body, fwd)
        except (OSError, http.client.HTTPException) as exc:
            self.stats_.add("upstream_errors")
            data = json.dumps({"error": {"code": "BadGateway", "message": f"ragdiag record: the upstream "
                                         f"service did not answer ({type(exc).__name__})"}}).encode()
            h.send_bytes(502, data, "application/json; charset=utf-8")
            self._queue.put(_Item(seq, ts, h.command, split.path, split.query, operation, index, 502, False,
                                  headers, body, b"", "", (time.perf_counter() - t0) * 1000, None, secrets))
            return
        upstream_ms = (time.perf_counter() - t1) * 1000
        self.stats_.add("forwarded")
        ctype = next((v for k, v in rheaders if k.lower() == "content-type"), "")
        h.send_bytes(status, rbody, ctype, [(k, v) for k, v in rheaders
                                       if k.lower() not in _HOP and k.lower() not in ("content-type", "content-encoding")])
        self._queue.put(_Item(seq, ts, h.command, split.path, split.query, operation, index, status, False, headers,
                              body, rbody, ctype, (time.perf_counter() - t0) * 1000, upstream_ms, secrets))

    def _connection(self, fresh: bool = False) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None or fresh:
            if conn is not None:
                conn.close()
            if self._scheme == "https":
                conn = http.client.HTTPSConnection(self._uhost, self._uport, timeout=self.timeout_s)
            else:
                conn = http.client.HTTPConnection(self._uhost, self._uport, timeout=self.timeout_s)
            self._local.conn = conn
        return conn

    def _forward(self, method: str, path: str, body: bytes, headers: Mapping[str, str]
                 ) -> tuple[int, list[tuple[str, str]], bytes]:
        for attempt in (0, 1):  # a kept-alive connection the upstream closed is reopened once
            conn = self._connection(fresh=attempt == 1)
            try:
                conn.request(method, path, body=body or None, headers=dict(headers))
                resp = conn.getresponse()
                data = resp.read()
                if conn.sock is not None:
                    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return resp.status, resp.getheaders(), data
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                    http.client.CannotSendRequest):
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    # ---- the writer thread ----------------------------------------------------------------------------
    def _write_loop(self) -> None:
        pending = 0
        while True:
            try:
                item = self._queue.get(timeout=0.2) if pending else self._queue.get()
            except queue.Empty:
                with self._write_lock:
                    self._fh.flush()
                pending = 0
                continue
            if item is None:
                break
            try:
                line = self._line(item)
                with self._write_lock:
                    self._fh.write(line + "\n")
                pending += 1
                self.stats_.add("recorded")
            except Exception:  # a record that cannot be built must not stop the recording
                log.exception("could not record request %s", item.seq)
                self.stats_.add("record_errors")
            if pending >= 256:
                with self._write_lock:
                    self._fh.flush()
                pending = 0
        # drain what arrived before the sentinel's producers stopped
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self._fh.write(self._line(item) + "\n")
                self.stats_.add("recorded")
        self._fh.flush()

    def _line(self, it: _Item) -> str:
        lower = {k.lower(): v for k, v in it.headers.items()}
        params = parse_qsl(it.query, keep_blank_values=True)
        api_version = next((v for k, v in params if k == "api-version"), None)
        rec: dict[str, Any] = {
            "seq": it.seq,
            "ts": datetime.fromtimestamp(it.ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "method": it.method, "path": it.path, "operation": it.operation, "index": it.index,
            "api_version": api_version, "status": it.status, "refused": it.refused,
            "auth": _auth_kind(lower), "permission_header": bool(lower.get(PERMISSION_HEADER)),
            "user_agent": lower.get("user-agent"), "trace_id": _trace_id(lower.get("traceparent")),
            "client_request_id": lower.get("x-ms-client-request-id"),
            "body": None, "response": None,
            "latency_ms": round(it.latency_ms, 3),
            "upstream_ms": round(it.upstream_ms, 3) if it.upstream_ms is not None else None,
        }
        if not it.refused and it.operation in ("search", "suggest", "autocomplete"):
            if it.method == "GET":  # a GET search: its query parameters as the POST body they stand for
                from ragdiag.targets.emulator.server import get_search_body

                safe = {k: v for k, v in params if k != "api-version" and not _SECRET_PARAMS.match(k)}
                try:
                    rec["body"] = get_search_body(safe)
                except ValueError:
                    rec["body"] = {"_unparsed": "&".join(f"{k}={v}" for k, v in safe.items())[:2000]}
            elif it.body:
                try:
                    rec["body"] = json.loads(it.body.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    rec["body"] = {"_unparsed": it.body[:2000].decode("utf-8", "replace")}
        if it.index and it.operation == "index" and it.status == 200:
            self._remember_key(it.index, it.response)
        if it.status == 200 and it.operation in ("search", "suggest", "autocomplete") and it.response:
            rec["response"] = self._summary(it)
        line = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
        for secret in sorted(set(it.secrets), key=len, reverse=True):
            if secret and len(secret) >= 4:
                line = line.replace(secret, REDACTED).replace(json.dumps(secret)[1:-1], REDACTED)
        return line

    def _remember_key(self, index: str, raw: bytes) -> None:
        try:
            definition = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return
        key = next((f.get("name") for f in definition.get("fields") or () if f.get("key")), None)
        if key:
            self._key_fields[index] = key

    def _key_field(self, it: _Item) -> str | None:
        """The index's key field: from a definition the client fetched, else one GET of it."""
        if it.index in self._key_fields:
            return self._key_fields[it.index]
        self._key_fields[it.index or ""] = None
        headers = {k: v for k, v in it.headers.items() if k.lower() not in _HOP and k.lower() != "content-type"}
        self._inject(headers)
        headers["Host"] = self._host_header
        version = next((v for k, v in parse_qsl(it.query) if k == "api-version"), "2024-07-01")
        path = f"{self._ubase}/indexes('{(it.index or '').replace(chr(39), chr(39) * 2)}')?api-version={version}"
        conn = (http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection)(
            self._uhost, self._uport, timeout=self.timeout_s)
        try:
            conn.request("GET", path, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            if resp.status == 200:
                self._remember_key(it.index or "", data)
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()
        return self._key_fields.get(it.index or "")

    def _summary(self, it: _Item) -> dict[str, Any] | None:
        try:
            data = json.loads(it.response.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return {"unparsed": True}
        if not isinstance(data, dict):
            return None
        values = [v for v in data.get("value") or () if isinstance(v, dict)]
        if it.operation != "search":
            return {"returned": len(values)}
        key = self._key_field(it) if values else None
        return {
            "returned": len(values),
            "count": data.get("@odata.count"),
            "keys": [v.get(key) for v in values] if key else None,
            "key_field": key,
            "scores": [v.get("@search.score") for v in values],
            "reranker_scores": [v.get("@search.rerankerScore") for v in values],
            "captions": any(v.get("@search.captions") for v in values),
            "answers": bool(data.get("@search.answers")),
            "partial": data.get("@search.semanticPartialResponseReason"),
        }


def _injector(api_key: str | None) -> Callable[[dict[str, str]], tuple[str, ...]]:
    """Replace the client's credential with the configured key (when one is); return it to scrub."""
    def inject(headers: dict[str, str]) -> tuple[str, ...]:
        if api_key is None:
            return ()
        for k in [k for k in headers if k.lower() in ("api-key", "authorization")]:
            del headers[k]
        headers["api-key"] = api_key
        return (api_key,)

    return inject


def _secret_values(headers: Mapping[str, str]) -> tuple[str, ...]:
    out = []
    for k, v in headers.items():
        if k.lower() in SECRET_HEADERS and v:
            out.append(v)
            scheme, _, token = v.partition(" ")
            if token and scheme.lower() in ("bearer", "basic", "sharedkey"):
                out.append(token.strip())
    return tuple(out)


def _auth_kind(lower: Mapping[str, str]) -> str:
    if lower.get("api-key"):
        return "api-key"
    scheme = (lower.get("authorization") or "").partition(" ")[0].lower()
    return scheme or "none"


def _trace_id(traceparent: str | None) -> str | None:
    m = _TRACEPARENT.match((traceparent or "").strip().lower())
    return m.group(1) if m else None


class _Server(BackgroundHTTPServer):
    request_queue_size = 128
    owner: RecordingProxy


class _Handler(BackgroundHandler):
    server_version = "ragdiag-record"
    log = log
    tcp_nodelay = True
    server: _Server

    def _dispatch(self) -> None:
        try:
            self.server.owner.handle(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_MERGE = do_HEAD = do_OPTIONS = _dispatch


def run_proxy(upstream: str, *, out: str | Path, host: str, port: int, api_key: str | None,
              tls: tuple[Path, Path] | None, otlp: Any = None, append: bool = False,
              announce: Callable[[str], None] = print) -> None:
    """Record until interrupted (the `ragdiag record` command); prints the URL, never the key."""
    proxy = RecordingProxy(upstream, out=out, host=host, port=port, api_key=api_key, tls=tls, append=append)
    url = proxy.start()
    announce(f"ragdiag record on {url} -> {upstream} (read-only; writes are refused with 403); "
             f"recording into {out}")
    if tls is not None:
        announce(f"TLS certificate: {tls[0]} (trust it with REQUESTS_CA_BUNDLE={tls[0]} or "
                 f"SSL_CERT_FILE={tls[0]}, or connection_verify=\"{tls[0]}\" in the Azure SDK)")
    if otlp is not None:
        announce(f"OTLP/HTTP traces on {otlp.url}/v1/traces -> {otlp.out}")
    announce("Ctrl-C to stop")
    try:
        wait_for_interrupt()
    finally:
        proxy.stop()
        if otlp is not None:
            otlp.stop()
        stats = proxy.stats()
        announce(f"stopped; {json.dumps(stats)}"
                 + (f"; {stats['refused_writes']} write request(s) refused" if stats["refused_writes"] else ""))


# the handler answers through the proxy, so it is defined after it
RecordingProxy.handler, RecordingProxy.server_class = _Handler, _Server

__all__ = ["PERMISSION_HEADER", "REDACTED", "RecordingProxy", "STATS_PATH", "classify", "run_proxy"]
