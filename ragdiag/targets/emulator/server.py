"""A read-only imitation of the Azure AI Search REST API, backed by local targets.

Speaks the subset ragdiag uses, in both URL forms (the documented
`/indexes/NAME/...` and the SDK's OData form `/indexes('NAME')/...`):

- `GET /indexes`, `GET /indexes/NAME` (definition + `@odata.etag`)
- `GET /indexes/NAME/docs/$count` (plain number), `GET /indexes/NAME/docs/KEY`
  (`/indexes('NAME')/docs('KEY')`), `GET /indexes/NAME/stats`
- `POST /indexes/NAME/docs/search` and `/indexes('NAME')/docs/search.post.search`
- `GET /indexes/NAME/docs?search=...&$top=...` (search by query parameters)
- `GET /servicestats`; `GET /ragdiag/stats` (counters, no auth)

Everything that would write (documents, indexes, indexers, data sources, ...)
is answered 403 and counted in `write_requests`. Authentication: the `api-key`
header must equal the configured key (or `Authorization: Bearer <token>` the
configured token); the key is never logged, echoed or exposed in stats.

Differences from Azure worth knowing: the semantic ranker is the local
target's reranker; text vector queries are embedded with the local target's
embedder, advertised in the definition as an integrated vectorizer
("ragdiag-emulator", kind customWebApi) on every vector profile; with
`vectorizer=False` the definition has none and, as on Azure, a text vector query
(`kind: "text"`) is refused with 400 while `kind: "vector"` queries work; `facets`, `highlight`,
`searchMode`, `scoringStatistics`, `minimumCoverage`, `sessionId`,
`semanticErrorHandling` and `semanticMaxWaitInMilliseconds` are accepted and
ignored; there is no server-side paging (`@odata.nextLink`); `orderby` supports
plain field names with `asc`/`desc` only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace as dc_replace
from datetime import date, datetime
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ragdiag.errors import ConfigError, RagdiagError
from ragdiag.http_server import BackgroundHandler, BackgroundHTTPServer, BackgroundServer
from ragdiag.model import SearchRequest, Trace
from ragdiag.model.schema import Vectorizer
from ragdiag.targets.base import has_capability
from ragdiag.targets.emulator.faults import FaultInjector, Faults

#: the integrated vectorizer the emulator advertises (it embeds query text with the local embedder)
EMULATOR_VECTORIZER = "ragdiag-emulator"

log = logging.getLogger("ragdiag.targets.emulator")

# Request-body keys Azure accepts that the emulator accepts and ignores.
IGNORED_BODY_KEYS = (
    "semanticErrorHandling",
    "semanticMaxWaitInMilliseconds",
    "sessionId",
    "scoringStatistics",
    "minimumCoverage",
    "highlight",
    "highlightPreTag",
    "highlightPostTag",
    "facets",
)
# searchMode, queryRewrites and queryLanguage map onto SearchRequest fields
# (the local target does not act on them).

_ODATA_INDEX = re.compile(r"^indexes\('((?:[^']|'')*)'\)$")
_ODATA_DOC = re.compile(r"^docs\('((?:[^']|'')*)'\)$")
_READ_POSTS = {"suggest", "autocomplete", "search.post.suggest", "search.post.autocomplete"}
_SEARCH_POSTS = {"search", "search.post.search"}
_WRITE_MESSAGE = "ragdiag emulator is read-only"


class _HTTPError(Exception):
    def __init__(self, status: int, code: str, message: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return obj.tolist()
    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, default=_json_default, ensure_ascii=False).encode("utf-8")


class _Stats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.search_requests = 0
        self.write_requests = 0
        self.auth_failures = 0
        self.faults_injected: Counter[str] = Counter()

    def add(self, name: str, n: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + n)

    def fault(self, kind: str) -> None:
        with self._lock:
            self.faults_injected[kind] += 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {"requests": self.requests, "search_requests": self.search_requests,
                    "write_requests": self.write_requests, "auth_failures": self.auth_failures,
                    "faults_injected": dict(self.faults_injected)}


class Emulator(BackgroundServer):
    """Serve local targets over Azure AI Search's REST API on loopback.

    >>> with Emulator({"docs": target}, api_key=key) as emu:
    ...     client = SearchClient(emu.url, "docs", AzureKeyCredential(key))
    """

    thread_name = "ragdiag-emulator"

    def __init__(self, targets: Mapping[str, Any] | Any, *, api_key: str | None,
                 token: str | None = None, host: str = "127.0.0.1", port: int = 0,
                 faults: Faults | None = None, vectorizer: bool = True) -> None:
        if not isinstance(targets, Mapping):
            targets = {targets.name: targets}
        if not targets:
            raise ConfigError("the emulator needs at least one index (name -> local target)")
        for name in targets:
            if not name or "/" in name or "'" in name:
                raise ConfigError(f"invalid index name {name!r} for the emulator")
        if api_key is not None and not api_key:
            raise ConfigError("the emulator's api_key must be a non-empty string or None (no auth)")
        super().__init__(host=host, port=port)
        self.targets = dict(targets)
        self.faults = faults or Faults()
        self.vectorizer = vectorizer
        self._injector = FaultInjector(self.faults)
        # The secrets live in a closure, not in attributes a repr or stats could show.
        self._check_auth = _make_auth_check(api_key, token)
        self.auth_required = api_key is not None or token is not None
        self._stats = _Stats()
        self._locks = {name: threading.Lock() for name in self.targets}
        self._etags = {name: _etag(name, t) for name, t in self.targets.items()}

    def __repr__(self) -> str:
        return (f"Emulator(url={self.url!r}, indexes={sorted(self.targets)}, "
                f"auth={'on' if self.auth_required else 'off'})")

    # ---- lifecycle (BackgroundServer) ------------------------------------------
    def start(self) -> str:
        if self.running:
            return self.url  # type: ignore[return-value]
        if self.host not in ("127.0.0.1", "localhost", "::1"):
            log.warning("the emulator is listening on %s, not loopback: anyone who can reach it "
                        "can query the served indexes with the key", self.host)
        url = super().start()
        log.info("emulator listening on %s (indexes: %s)", url, ", ".join(sorted(self.targets)))
        return url

    def stats(self) -> dict[str, Any]:
        """Counters: requests, search_requests, write_requests, auth_failures, faults_injected."""
        return self._stats.snapshot()

    # ---- request handling (called from handler threads) ----------------------
    def handle(self, h: _Handler, method: str) -> None:
        self._stats.add("requests")
        split = urlsplit(h.path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length > 0 else b""
        segs = [unquote(s) for s in split.path.split("/")[1:]]
        if segs and segs[-1] == "":
            segs = segs[:-1]
        try:
            if method == "GET" and segs == ["ragdiag", "stats"]:
                return h.send_json(200, self.stats())
            route, index, arg = _route(method, segs)
            if route == "write":
                self._stats.add("write_requests")
                log.warning("refused a write request: %s %s", method, split.path)
                raise _HTTPError(403, "Forbidden", _WRITE_MESSAGE)
            if not self._check_auth(h.headers):
                self._stats.add("auth_failures")
                raise _HTTPError(403, "Forbidden", "Authorization failed: the api-key header is "
                                 "missing or does not match a key of this service")
            if route == "search":
                self._stats.add("search_requests")
                return self._search(h, self._target(index), index, body)
            if route == "search_get":  # GET /docs?search=...&$top=... (LangChain's AzureAISearchRetriever)
                self._stats.add("search_requests")
                try:
                    get_body = get_search_body(query)
                except ValueError as exc:
                    raise _HTTPError(400, "InvalidRequestParameter", str(exc)) from exc
                return self._search(h, self._target(index), index, _dumps(get_body))
            if route == "list_indexes":
                defs = [self._definition(n) for n in sorted(self.targets)]
                if query.get("$select", "").strip() == "name":
                    defs = [{"name": d["name"]} for d in defs]
                return h.send_json(200, {"value": defs})
            if route == "index":
                self._target(index)
                return h.send_json(200, self._definition(index))
            if route == "count":
                return h.send_text(200, str(self._target(index).count()))
            if route == "index_stats":
                return h.send_json(200, {"documentCount": self._target(index).count(),
                                         "storageSize": 0, "vectorIndexSize": 0})
            if route == "document":
                return self._document(h, self._target(index), index, arg, query)
            if route == "servicestats":
                docs = sum(t.count() for t in self.targets.values())
                return h.send_json(200, {"counters": {
                    "documentCount": {"usage": docs, "quota": None},
                    "indexesCount": {"usage": len(self.targets), "quota": None}},
                    "limits": {"maxFieldsPerIndex": 1000}})
            if route == "unsupported":
                raise _HTTPError(400, "NotSupported",
                                 f"the ragdiag emulator does not implement {method} /{'/'.join(segs)}")
            raise _HTTPError(404, "ResourceNotFound", f"no such resource: /{'/'.join(segs)}")
        except _HTTPError as err:
            h.send_json(err.status, {"error": {"code": err.code, "message": err.message}},
                        headers=err.headers)
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
        except Exception as exc:  # an emulator bug must answer 500, not hang the client
            log.exception("emulator error on %s %s", method, split.path)
            h.send_json(500, {"error": {"code": "InternalServerError",
                                        "message": f"{type(exc).__name__}: {exc}"}})

    def _target(self, index: str | None) -> Any:
        t = self.targets.get(index or "")
        if t is None:
            raise _HTTPError(404, "ResourceNotFound",
                             f"The index '{index}' for service 'ragdiag-emulator' was not found.")
        return t

    def served_schema(self, index: str) -> Any:
        """The definition served: the local schema, with the emulator's vectorizer if enabled."""
        schema = self.targets[index].schema().with_name(index)
        if not self.vectorizer or not schema.vector_profiles:
            return schema
        profiles = tuple(p if p.vectorizer else dc_replace(p, vectorizer=EMULATOR_VECTORIZER)
                         for p in schema.vector_profiles)
        extra = () if any(v.name == EMULATOR_VECTORIZER for v in schema.vectorizers) else \
            (Vectorizer(EMULATOR_VECTORIZER, "customWebApi"),)
        return dc_replace(schema, vector_profiles=profiles, vectorizers=schema.vectorizers + extra)

    def _definition(self, index: str) -> dict[str, Any]:
        return {"@odata.etag": self._etags[index], **self.served_schema(index).to_azure()}

    def _document(self, h: _Handler, target: Any, index: str, key: str,
                  query: Mapping[str, str]) -> None:
        select = [s.strip() for s in query.get("$select", "").split(",") if s.strip()] or None
        # the served index's retrievable fields, from its schema (not an attribute of one target class)
        retrievable = {fl.name for fl in target.schema().fields if fl.retrievable and not fl.is_vector}
        if select and retrievable:
            bad = [s for s in select if s not in retrievable]
            if bad:
                raise _HTTPError(400, "InvalidRequestParameter",
                                 f"Invalid expression: could not find a retrievable field "
                                 f"'{bad[0]}' in index '{index}'.")
        with self._locks[index]:
            try:
                doc = target.get_document(key, select)
            except RagdiagError:
                doc = None
        if doc is None:
            raise _HTTPError(404, "DocumentNotFound",
                             f"Document with key '{key}' was not found in index '{index}'.")
        h.send_json(200, doc)

    def _search(self, h: _Handler, target: Any, index: str, raw: bytes) -> None:
        try:
            body = json.loads(raw.decode("utf-8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _HTTPError(400, "InvalidRequestBody", f"The request body is not valid JSON: {exc}") \
                from exc
        if not isinstance(body, dict):
            raise _HTTPError(400, "InvalidRequestBody", "The request body must be a JSON object.")
        fault = self._injector.draw()
        if self.faults.latency_ms:
            time.sleep(self.faults.latency_ms / 1000.0)
        if fault == "drop":
            self._stats.fault("drop")
            h.drop()
            return
        if fault == "429":
            self._stats.fault("429")
            raise _HTTPError(429, "TooManyRequests", "You are sending too many requests. "
                             "Please try again later.", self._injector.retry_after_headers())
        if fault == "503":
            self._stats.fault("503")
            raise _HTTPError(503, "ServiceUnavailable", "The service is temporarily unavailable.",
                             self._injector.retry_after_headers())
        payload = self._search_payload(target, index, body)
        data = _dumps(payload)
        if fault == "malformed":
            self._stats.fault("malformed")
            data = data[: max(1, len(data) // 2)]
        h.send_bytes(200, data, "application/json; odata.metadata=none; charset=utf-8")

    def _search_payload(self, target: Any, index: str, body: dict[str, Any]) -> dict[str, Any]:
        body = dict(body)
        orderby = body.pop("orderby", None)
        for k in IGNORED_BODY_KEYS:
            body.pop(k, None)
        try:
            req = SearchRequest.from_dict(body)
        except RagdiagError as exc:
            raise _HTTPError(400, "InvalidRequestParameter", str(exc)) from exc
        schema = self.served_schema(index)
        for vq in req.vector_queries:
            for name in vq.fields if vq.text is not None else ():
                if schema.has_field(name) and schema.field_vectorizer(name) is None:
                    raise _HTTPError(400, "InvalidRequestParameter",
                                     f"The field '{name}' in the vector query does not have a vectorizer "
                                     "defined; a vector query of kind 'text' needs one.")
        injected_partial = req.is_semantic and _has_semantic_text(req) and \
            self._injector.semantic_partial()
        run = req
        if injected_partial:
            self._stats.fault("semantic_partial")
            run = req.replace(query_type="simple", captions=None, answers=None)
        order = _parse_orderby(orderby) if orderby else None
        if order:
            if req.is_semantic:
                raise _HTTPError(400, "InvalidRequestParameter",
                                 "OrderBy is not supported together with semantic ranking.")
            run = run.replace(top=max(1, target.count()), skip=0)
        try:
            with self._locks[index]:
                trace = target.search(run)
        except RagdiagError as exc:
            raise _HTTPError(400, "InvalidRequestParameter", str(exc)) from exc
        hits = list(trace.hits)
        if order:
            for field, desc in reversed(order):
                _check_sortable(target, field)
                hits.sort(key=lambda hit, f=field: _sort_key(target, hit, f), reverse=desc)
            hits = hits[req.skip:req.skip + req.top]
        out: dict[str, Any] = {}
        if req.count:
            out["@odata.count"] = trace.count
        reason = None
        if injected_partial:
            reason = "capacityOverloaded"
        elif req.is_semantic and trace.partial_reason and _has_semantic_text(req):
            reason = "transient"
        if reason:
            out["@search.semanticPartialResponseReason"] = reason
            out["@search.semanticPartialResponseType"] = "baseResults"
        highlight = "highlight-false" not in (req.captions or "").lower()
        sem_text = req.effective_semantic_text or ""
        if req.answers and req.answers.lower().startswith("extractive") and trace.reranked:
            out["@search.answers"] = _answers(target, hits, req.answers, sem_text)
        debug_modes = {m.strip().lower() for m in (req.debug or "").split("|")}
        want_debug = bool(debug_modes & {"vector", "all"})
        vec_maps = _vector_maps(trace, len(req.vector_queries)) if want_debug else []
        text_map = dict(zip(trace.text.keys, trace.text.scores, strict=True)) \
            if (want_debug and trace.text is not None) else {}
        values = []
        for hit in hits:
            item: dict[str, Any] = {"@search.score": hit.score}
            if hit.reranker_score is not None and not reason:
                item["@search.rerankerScore"] = hit.reranker_score
                if hit.reranker_boosted_score is not None:
                    item["@search.rerankerBoostedScore"] = hit.reranker_boosted_score
            if hit.captions:
                item["@search.captions"] = [
                    {"text": c, "highlights": _highlight(c, sem_text) if highlight else ""}
                    for c in hit.captions]
            if want_debug:
                item["@search.documentDebugInfo"] = _debug_info(hit, text_map, vec_maps,
                                                                trace.text is not None)
            item.update(hit.fields)
            values.append(item)
        out["value"] = values
        return out


# ---- helpers ---------------------------------------------------------------------


def _make_auth_check(api_key: str | None, token: str | None):
    key_b = api_key.encode() if api_key else None
    token_b = token.encode() if token else None

    def check(headers: Any) -> bool:
        if key_b is None and token_b is None:
            return True
        given = headers.get("api-key")
        if key_b is not None and given is not None and hmac.compare_digest(given.encode(), key_b):
            return True
        auth = headers.get("Authorization") or ""
        if token_b is not None and auth.startswith("Bearer "):
            return hmac.compare_digest(auth[len("Bearer "):].strip().encode(), token_b)
        return False

    return check


def _etag(name: str, target: Any) -> str:
    h = hashlib.sha256(name.encode())
    h.update(json.dumps(target.schema().to_azure(), sort_keys=True).encode())
    h.update(str(target.fingerprint()).encode())  # changes when the index content changes
    return f'"0x{h.hexdigest()[:15].upper()}"'


def _route(method: str, segs: list[str]) -> tuple[str, str | None, str | None]:
    """(route, index name, argument) for a decoded path."""
    read = method == "GET"
    if not segs:
        return ("unsupported" if read else "write"), None, None
    head = segs[0]
    if head == "servicestats" and read:
        return "servicestats", None, None
    index: str | None = None
    rest: list[str]
    m = _ODATA_INDEX.match(head)
    if m:
        index, rest = m.group(1).replace("''", "'"), segs[1:]
    elif head == "indexes":
        if len(segs) == 1:
            return ("list_indexes" if read else "write"), None, None
        index, rest = segs[1], segs[2:]
    else:  # indexers, datasources, skillsets, synonymmaps, aliases, ...
        return ("not_found" if read else "write"), None, None
    if not rest:
        return ("index" if read else "write"), index, None
    if rest[0] in ("stats", "search.stats") and len(rest) == 1:
        return ("index_stats" if read else "write"), index, None
    dm = _ODATA_DOC.match(rest[0])
    if dm and len(rest) == 1:
        return ("document" if read else "write"), index, dm.group(1).replace("''", "'")
    if rest[0] != "docs":
        return ("unsupported" if read else "write"), index, None
    if len(rest) == 1:  # GET /docs?search=... (GET search), or a write
        return ("search_get" if read else "write"), index, None
    op = rest[1]
    if method == "POST" and op in _SEARCH_POSTS and len(rest) == 2:
        return "search", index, None
    if method == "POST" and op in _READ_POSTS:
        return "unsupported", index, None
    if not read:
        return "write", index, None
    if op == "$count" and len(rest) == 2:
        return "count", index, None
    if len(rest) == 2 and op not in _SEARCH_POSTS:
        return "document", index, op
    return "unsupported", index, None


#: GET search query parameters -> POST body keys (Azure's "Search Documents (GET)")
_GET_PARAMS = {"search": "search", "$top": "top", "$skip": "skip", "$filter": "filter", "$select": "select",
               "searchFields": "searchFields", "queryType": "queryType", "searchMode": "searchMode",
               "semanticConfiguration": "semanticConfiguration", "$count": "count", "$orderby": "orderby",
               "scoringProfile": "scoringProfile", "captions": "captions", "answers": "answers",
               "queryLanguage": "queryLanguage"}


def get_search_body(query: Mapping[str, str]) -> dict[str, Any]:
    """The POST body a GET search's query parameters stand for (unknown parameters dropped);
    ValueError for a `$top` or `$skip` that is not an integer."""
    body: dict[str, Any] = {}
    for name, key in _GET_PARAMS.items():
        if name not in query:
            continue
        v: Any = query[name]
        if key in ("top", "skip"):
            try:
                v = int(v)
            except ValueError:
                raise ValueError(f"{name} must be an integer, got {v!r}") from None
        elif key == "count":
            v = str(v).lower() == "true"
        body[key] = v
    return body


def _has_semantic_text(req: SearchRequest) -> bool:
    t = req.effective_semantic_text
    return bool(t and t.strip() and t.strip() != "*")


def _parse_orderby(text: str) -> list[tuple[str, bool]]:
    out = []
    for clause in str(text).split(","):
        parts = clause.split()
        if not parts:
            continue
        if len(parts) > 2 or (len(parts) == 2 and parts[1].lower() not in ("asc", "desc")) \
                or "(" in parts[0]:
            raise _HTTPError(400, "InvalidRequestParameter",
                             f"the ragdiag emulator supports $orderby on plain fields with asc/desc "
                             f"only, got {clause.strip()!r}")
        out.append((parts[0], len(parts) == 2 and parts[1].lower() == "desc"))
    return out


def _check_sortable(target: Any, field: str) -> None:
    schema = target.schema()
    if not schema.has_field(field) or not schema.field(field).sortable:
        raise _HTTPError(400, "InvalidRequestParameter",
                         f"Invalid expression: '{field}' is not a sortable field.")


def _sort_key(target: Any, hit: Any, field: str) -> tuple[int, Any]:
    v = hit.fields.get(field) if field in hit.fields else None
    if v is None:
        rec = target.records[target.row_of[hit.key]] if has_capability(target, "local_records") else {}
        v = rec.get(field)
    return (0, "") if v is None else (1, v)


def _vector_maps(trace: Trace, n_queries: int) -> list[dict[str, dict[str, float]]]:
    maps: list[dict[str, dict[str, float]]] = [{} for _ in range(n_queries)]
    for lst in trace.vectors:
        m = re.match(r"^vector\[(\d+)\]:(.+)$", lst.name)
        if not m or int(m.group(1)) >= n_queries:
            continue
        maps[int(m.group(1))][m.group(2)] = dict(zip(lst.keys, lst.scores, strict=True))
    return maps


def _debug_info(hit: Any, text_map: Mapping[str, float], vec_maps: list[dict[str, dict[str, float]]],
                has_text: bool) -> dict[str, Any]:
    vectors = []
    for per_field in vec_maps:
        entry = {}
        for field, sims in per_field.items():
            if hit.key in sims:
                cos = float(sims[hit.key])
                entry[field] = {"searchScore": 1.0 / (2.0 - cos), "vectorSimilarity": cos}
        vectors.append(entry)
    sub: dict[str, Any] = {}
    if has_text and hit.key in text_map:
        sub["text"] = {"searchScore": float(text_map[hit.key])}
    sub["vectors"] = vectors
    sub["documentBoost"] = float(hit.document_boost)
    return {"vectors": {"subscores": sub}}


_WORD = re.compile(r"\w+", re.UNICODE)


def _highlight(text: str, query: str) -> str:
    words = {w.lower() for w in _WORD.findall(query)}
    if not words:
        return text
    return _WORD.sub(lambda m: f"<em>{m.group(0)}</em>" if m.group(0).lower() in words
                     else m.group(0), text)


def _answers(target: Any, hits: list[Any], spec: str, query: str) -> list[dict[str, Any]]:
    """Extractive answers: the captions of the best reranked hits (count-N, threshold-X)."""
    count, threshold = 1, None
    for opt in spec.split("|")[1:]:
        for part in opt.split(","):
            name, _, value = part.strip().partition("-")
            try:
                if name.lower() == "count":
                    count = max(0, int(value))
                elif name.lower() == "threshold":
                    threshold = float(value)
            except ValueError as exc:
                raise _HTTPError(400, "InvalidRequestParameter",
                                 f"invalid answers option {part.strip()!r}") from exc
    out = []
    ranked = sorted((h for h in hits if h.reranker_score is not None),
                    key=lambda h: -h.reranker_score)
    for h in ranked:
        if len(out) >= count:
            break
        text = h.captions[0] if h.captions else _caption_for(target, h.key, query)
        if not text:
            continue
        score = max(0.0, min(1.0, h.reranker_score / 4.0))
        if threshold is not None and score < threshold:
            continue
        out.append({"key": h.key, "text": text, "highlights": _highlight(text, query),
                    "score": score})
    return out


def _caption_for(target: Any, key: str, query: str) -> str:
    from ragdiag.targets.local import _caption, _text_of

    try:
        rec = target.records[target.row_of[key]]
    except (AttributeError, KeyError):
        return ""
    return _caption(_text_of(rec.get("content")), query)


class _Server(BackgroundHTTPServer):
    owner: Emulator


class _Handler(BackgroundHandler):
    server_version = "ragdiag-emulator"
    log = log
    tcp_nodelay = True
    server: _Server

    def _dispatch(self) -> None:
        self.server.owner.handle(self, self.command)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_MERGE = _dispatch

    def send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send_bytes(status, _dumps(obj), "application/json; odata.metadata=none; charset=utf-8",
                        (headers or {}).items())

    def send_text(self, status: int, text: str) -> None:
        self.send_bytes(status, text.encode("utf-8"), "text/plain; charset=utf-8")

    def drop(self) -> None:
        """Close the connection without any response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def run_server(targets: Mapping[str, Any], *, host: str = "127.0.0.1", port: int = 0,
               api_key: str | None, faults: Faults | None = None, token: str | None = None,
               announce: Any = print) -> None:
    """Serve until interrupted (the `ragdiag serve` command); prints the URL, never the key."""
    emu = Emulator(targets, api_key=api_key, token=token, host=host, port=port, faults=faults)
    url = emu.start()
    announce(f"ragdiag emulator on {url}  (indexes: {', '.join(sorted(emu.targets))}; "
             f"auth: {'api-key required' if emu.auth_required else 'none'}; read-only)")
    if emu.faults.active:
        announce(f"fault injection: {emu.faults}")
    announce("Ctrl-C to stop")
    try:
        emu.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        emu.stop()
        announce(f"stopped; {json.dumps(emu.stats())}")


# the handler answers through the emulator, so it is defined after it
Emulator.handler, Emulator.server_class = _Handler, _Server

__all__ = ["EMULATOR_VECTORIZER", "Emulator", "Faults", "IGNORED_BODY_KEYS", "get_search_body", "run_server"]

