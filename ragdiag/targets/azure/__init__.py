"""The live target: a read-only adapter for an Azure AI Search index.

Supported SDK versions: `azure-search-documents` 12.x (primary; tested with
12.0.0, default API version 2026-04-01) and 11.x from 11.4 (vector queries
appeared in 11.4; `debug` in 11.6). Differences handled here:

- result dicts: 12.x carries the raw REST keys (`@search.rerankerScore`,
  `@search.rerankerBoostedScore`, `@search.documentDebugInfo`) and snake_case
  aliases; 11.x has `@search.reranker_score` only and drops boosted scores and
  debug info. Every search also captures the raw response body (a
  `raw_response_hook`), so both versions yield the same `Hit`s
  (`normalise_result`).
- index definition: 12.x reads it with `SearchIndexClient.get_index` (its
  `as_dict()` is the REST shape); 11.x's `SearchIndexClient` refuses `http://`
  endpoints, so ragdiag falls back to a raw `GET /indexes('NAME')` through an
  azure-core pipeline with the same credential.
- preview-only request parameters (`hybridSearch.maxTextRecallSize`,
  `vectorQueries[].filterOverride`, `queryRewrites`, `queryLanguage`) are not
  keyword arguments of the GA SDKs. They are sent only when the API version is
  a preview one (natively when the SDK has them, otherwise by a per-call
  pipeline policy that adds them to the JSON body); with a GA API version they
  are not sent and counted in `target.unsent_parameters`, so an audit can say
  "maxTextRecallSize not sent: GA API".

Robustness: an async `SearchClient` runs on a private event loop in a
background thread (so `search()` can be called from the runner's worker
threads), with an asyncio semaphore bounding concurrency, a timeout per
attempt, retries with exponential backoff and jitter that honour `Retry-After`
and `retry-after-ms` on 429/503, and a request budget. azure-core's own retries
are switched off so that every HTTP attempt is counted in `target.stats`.

Credentials come from the environment only (`from_config`, `from_env`): the key
lives inside the `AzureKeyCredential` and nowhere else; it is never logged,
printed or put into a trace. The target has no write method.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import logging
import os
import random
import threading
import time
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from ragdiag.errors import ConfigError, MissingDependencyError, TargetError, TargetUnavailableError
from ragdiag.model import Hit, SearchRequest, Trace
from ragdiag.model.schema import IndexSchema

log = logging.getLogger("ragdiag.targets.azure")

SUPPORTED_SDK = "azure-search-documents >= 11.4, < 13 (12.x primary)"
MAX_SKIP = 100_000
PAGE_SIZE = 1000
_RETRY_STATUS = {408, 429, 500, 502, 503, 504}
_THROTTLE_STATUS = {429, 503}
_DEFAULT_API = {(12,): "2026-04-01", (11, 6): "2025-09-01", (11, 5): "2024-07-01",
                (11, 4): "2023-11-01"}
_PATCH_OPTION = "ragdiag_body_patch"
_SCOPE = "https://search.azure.com/.default"


# ---- SDK detection -----------------------------------------------------------------


def sdk_version() -> tuple[int, ...]:
    """The installed azure-search-documents version as a tuple, e.g. (12, 0, 0)."""
    try:
        from importlib.metadata import version

        raw = version("azure-search-documents")
    except Exception as exc:  # PackageNotFoundError and broken metadata alike
        raise MissingDependencyError(
            "the Azure target needs azure-search-documents (12.x recommended): "
            "pip install 'azure-search-documents>=12'") from exc
    parts = []
    for p in raw.split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
        if not p.isdigit():
            break
    return tuple(parts) or (0,)


def _default_api_version(v: tuple[int, ...]) -> str:
    for prefix, api in _DEFAULT_API.items():
        if v[:len(prefix)] == prefix:
            return api
    return "2026-04-01" if v >= (12,) else "2024-07-01"


# ---- result normalisation ----------------------------------------------------------


@dataclass(frozen=True)
class NormalisedResult:
    """One search result with every score and the document fields, whatever the SDK version."""

    score: float
    reranker_score: float | None
    reranker_boosted_score: float | None
    captions: tuple[str, ...]
    debug: Mapping[str, Any] | None
    fields: Mapping[str, Any]


def _first(maps: Sequence[Mapping[str, Any] | None], *keys: str) -> Any:
    for m in maps:
        if not m:
            continue
        for k in keys:
            v = m.get(k)
            if v is not None:
                return v
    return None


def _plain(obj: Any) -> Any:
    """Models (12.x hybrid models, 11.x msrest models) to plain dicts/lists."""
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(x) for x in obj]
    as_dict = getattr(obj, "as_dict", None)
    if callable(as_dict):
        return _plain(as_dict())
    return obj


def normalise_result(item: Mapping[str, Any], raw: Mapping[str, Any] | None = None) -> NormalisedResult:
    """Map an SDK result dict (11.x or 12.x keys) and/or the raw REST item onto one shape.

    The raw REST item wins where both have a value; 11.x-style keys
    (`@search.reranker_score`) and 12.x aliases are read when the raw item is absent.
    """
    maps = [raw, item]
    score = _first(maps, "@search.score")
    rr = _first(maps, "@search.rerankerScore", "@search.reranker_score")
    rrb = _first(maps, "@search.rerankerBoostedScore", "@search.reranker_boosted_score")
    caps_raw = _first(maps, "@search.captions")
    captions: list[str] = []
    for c in caps_raw or ():
        text = c.get("text") if isinstance(c, Mapping) else getattr(c, "text", None)
        if text:
            captions.append(str(text))
    debug = _plain(_first(maps, "@search.documentDebugInfo", "@search.document_debug_info"))
    if isinstance(debug, list):  # 2024-05-01-preview returned an array
        debug = debug[0] if debug else None
    source = raw if raw is not None else item
    fields = {k: v for k, v in source.items() if not k.startswith(("@search.", "@odata."))}
    return NormalisedResult(
        score=float(score) if score is not None else 0.0,
        reranker_score=float(rr) if rr is not None else None,
        reranker_boosted_score=float(rrb) if rrb is not None else None,
        captions=tuple(captions),
        debug=debug if isinstance(debug, Mapping) else None,
        fields=fields,
    )


def _g(d: Any, camel: str, snake: str) -> Any:
    if not isinstance(d, Mapping):
        return None
    v = d.get(camel)
    return d.get(snake) if v is None else v


def parse_debug_subscores(debug: Mapping[str, Any] | None
                          ) -> tuple[float | None, dict[str, float], float | None]:
    """(BM25 text score, cosine per vector field, document boost) from `@search.documentDebugInfo`.

    Vector fields keep the similarity of the first vector query that scored them,
    as the local target does.
    """
    if not debug:
        return None, {}, None
    sub = _g(_g(debug, "vectors", "vectors"), "subscores", "subscores")
    if not isinstance(sub, Mapping):
        return None, {}, None
    ts = _g(_g(sub, "text", "text"), "searchScore", "search_score")
    sims: dict[str, float] = {}
    for per_query in _g(sub, "vectors", "vectors") or ():
        if not isinstance(per_query, Mapping):
            continue
        for fname, d in per_query.items():
            sim = _g(d, "vectorSimilarity", "vector_similarity")
            if sim is not None and fname not in sims:
                sims[fname] = float(sim)
    boost = _g(sub, "documentBoost", "document_boost")
    return (float(ts) if ts is not None else None), sims, (float(boost) if boost is not None else None)


# ---- request mapping -----------------------------------------------------------------


def _parse_options(spec: str) -> tuple[str, dict[str, str]]:
    """'extractive|count-3,threshold-0.7' -> ('extractive', {'count': '3', 'threshold': '0.7'})."""
    head, *rest = spec.split("|")
    opts: dict[str, str] = {}
    for part in ",".join(rest).split(","):
        name, _, value = part.strip().partition("-")
        if name:
            opts[name.lower()] = value
    return head.strip(), opts


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms`, `x-ms-retry-after-ms` or `Retry-After`."""
    if not headers:
        return None
    lower = {str(k).lower(): v for k, v in headers.items()}
    for h in ("retry-after-ms", "x-ms-retry-after-ms"):
        if lower.get(h):
            try:
                return max(0.0, float(lower[h]) / 1000.0)
            except ValueError:
                pass
    ra = lower.get("retry-after")
    if ra:
        try:
            return max(0.0, float(ra))
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(ra)
                return max(0.0, when.timestamp() - time.time())
            except (TypeError, ValueError):
                return None
    return None


def _body_patch_policy() -> Any:
    """A per-call azure-core policy that merges preview-only keys into the search body."""
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class _BodyPatchPolicy(SansIOHTTPPolicy):
        def on_request(self, request: Any) -> None:
            patch = request.context.options.pop(_PATCH_OPTION, None)
            if not patch:
                return
            hr = request.http_request
            content = hr.content if hasattr(hr, "content") else hr.body
            if isinstance(content, bytes | bytearray):
                content = content.decode("utf-8")
            body = json.loads(content)
            body.update(patch.get("body", {}))
            for i, extra in patch.get("vector_queries", {}).items():
                body["vectorQueries"][int(i)].update(extra)
            data = json.dumps(body).encode("utf-8")
            if hasattr(hr, "set_bytes_body"):  # legacy transport HttpRequest (11.x)
                hr.set_bytes_body(data)
            else:  # azure.core.rest.HttpRequest (12.x)
                headers = hr._set_body(content=data)  # noqa: SLF001 - no public setter
                if "Content-Length" in headers:
                    hr.headers["Content-Length"] = headers["Content-Length"]

    return _BodyPatchPolicy()


class _AsyncTokenAdapter:
    """Wraps a synchronous TokenCredential for the async client."""

    def __init__(self, cred: Any) -> None:
        self._cred = cred

    async def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(
            None, lambda: self._cred.get_token(*scopes, **kwargs))

    async def close(self) -> None:
        close = getattr(self._cred, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return f"_AsyncTokenAdapter({type(self._cred).__name__})"


class _Runtime:
    """The private event loop, its thread and the async SDK client of one target.

    Kept apart from the target so a `weakref.finalize` can shut it down when a
    target is dropped without `close()` (the holder never points back to it).
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread: threading.Thread | None = None
        self.client: Any = None
        self.sem: asyncio.Semaphore | None = None
        self.schema_lock: asyncio.Lock | None = None
        self.closables: list[Any] = []  # e.g. an azure-identity credential we created

    def ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self.lock:
            if self.loop is None or self.loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, daemon=True,
                                          name=f"ragdiag-azure-{self.name}")
                thread.start()
                self.loop, self.thread = loop, thread
            return self.loop

    def shutdown(self) -> None:
        with self.lock:
            loop, thread = self.loop, self.thread
            self.loop = self.thread = None
        if loop is None or loop.is_closed():
            return

        async def _close() -> None:
            client, self.client, self.sem, self.schema_lock = self.client, None, None, None
            for obj in ([client] if client is not None else []) + self.closables:
                try:
                    res = obj.close()
                    if inspect.isawaitable(res):
                        await res
                except Exception:  # closing must not raise
                    log.debug("error while closing %r", type(obj).__name__, exc_info=True)

        try:
            if loop.is_running():
                asyncio.run_coroutine_threadsafe(_close(), loop).result(timeout=10)
        except Exception:
            log.debug("error while closing the Azure target", exc_info=True)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)
            if not loop.is_running():
                loop.close()


class _MalformedResponse(Exception):
    """A 2xx answer whose body is not the JSON it should be."""


class _Retryable(Exception):
    def __init__(self, reason: str, retry_after: float | None = None, throttled: bool = False,
                 unreachable: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.throttled = throttled
        self.unreachable = unreachable  # no answer at all: refused, reset, dropped, timed out


# ---- the target -----------------------------------------------------------------------


class AzureTarget:
    """A live Azure AI Search index, read-only, answering `SearchRequest`s with `Trace`s."""

    # traces carry hits only (no per-leg stages); security values only where retrievable
    capabilities = frozenset({"documents", "get_document"})

    def __init__(self, endpoint: str, index: str, *, credential: Any, api_version: str | None = None,
                 timeout_s: float = 30.0, retries: int = 4, concurrency: int = 4,
                 budget: int | None = None, api_key_env: str | None = None,
                 backoff_s: float = 0.5, max_backoff_s: float = 30.0,
                 name: str | None = None, owns_credential: bool = False) -> None:
        v = sdk_version()
        if v < (11, 4):
            raise MissingDependencyError(
                f"azure-search-documents {'.'.join(map(str, v))} is too old: ragdiag needs "
                f"{SUPPORTED_SDK}; pip install 'azure-search-documents>=12'")
        if isinstance(credential, str | bytes):
            raise ConfigError(
                "pass the key as AzureKeyCredential(os.environ[...]) or use AzureTarget.from_env / "
                "from_config, which read it from an environment variable; never a literal string")
        endpoint = (endpoint or "").strip().rstrip("/")
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"endpoint must look like https://<service>.search.windows.net, "
                              f"got {endpoint!r}")
        loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
        if parts.scheme == "http" and not loopback:
            raise ConfigError(f"refusing to send credentials over plain http to {parts.hostname}: "
                              "use https (plain http is only allowed for the local emulator)")
        if not index:
            raise ConfigError("an Azure target needs an index name")
        if timeout_s <= 0 or retries < 0 or concurrency < 1 or (budget is not None and budget < 0):
            raise ConfigError("timeout_s must be > 0, retries >= 0, concurrency >= 1, budget >= 0")
        from azure.core.credentials import AzureKeyCredential

        self.sdk_version = v
        self.endpoint = endpoint
        self.index = index
        self.name = name or index
        self.api_version = api_version
        self.timeout_s = float(timeout_s)
        self.retries = int(retries)
        self.concurrency = int(concurrency)
        self.budget = budget
        self.api_key_env = api_key_env
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.stats: dict[str, int] = {"requests": 0, "retries": 0, "failures": 0, "throttled": 0}
        self.unsent_parameters: Counter[str] = Counter()
        if isinstance(credential, AzureKeyCredential):
            self.credential_kind = "api_key"
        elif hasattr(credential, "get_token"):
            self.credential_kind = "token"
            if not inspect.iscoroutinefunction(credential.get_token):
                credential = _AsyncTokenAdapter(credential)
        else:
            raise ConfigError(f"credential must be an AzureKeyCredential or a token credential, "
                              f"got {type(credential).__name__}")
        # The only reference to the secret: the credential object itself.
        self._credential = credential
        self._insecure = parts.scheme == "http"
        self._etag: str | None = None
        self._schema: IndexSchema | None = None
        self._rt = _Runtime(self.index)
        if self.credential_kind == "token" and owns_credential:
            self._rt.closables.append(credential)
        self._finalizer = weakref.finalize(self, self._rt.shutdown)
        self._warned: set[str] = set()
        self._rng = random.Random()
        # The retry gate (the runner installs its circuit breaker, ragdiag.engine.breaker):
        # asked before every attempt (allow() -> None or why not), told of attempts that got
        # no answer (failure) and of answers (success); None: retries as configured.
        self.retry_gate: Any = None

    # ---- construction from the environment -------------------------------------------------
    @classmethod
    def from_env(cls, endpoint: str, index: str, *, api_key_env: str = "AZURE_SEARCH_API_KEY",
                 credential: str = "api_key", **kwargs: Any) -> AzureTarget:
        """Build with a key read from `api_key_env` (or azure-identity when credential="default")."""
        if credential == "default":
            try:
                from azure.identity.aio import DefaultAzureCredential
            except ImportError as exc:
                raise MissingDependencyError(
                    "credential = \"default\" needs azure-identity: pip install azure-identity") from exc
            return cls(endpoint, index, credential=DefaultAzureCredential(), owns_credential=True,
                       **kwargs)
        if credential != "api_key":
            raise ConfigError(f"credential must be 'api_key' or 'default', got {credential!r}")
        value = os.environ.get(api_key_env, "")
        if not value.strip():
            raise TargetError(
                f"environment variable {api_key_env} is not set (or empty): export it with a query "
                f"key of the search service, or use credential = \"default\" for azure-identity")
        from azure.core.credentials import AzureKeyCredential

        return cls(endpoint, index, credential=AzureKeyCredential(value.strip()),
                   api_key_env=api_key_env, **kwargs)

    @classmethod
    def from_config(cls, config: Any) -> AzureTarget:
        """Build from an `AuditConfig` whose target kind is 'azure'."""
        t = config.target
        if t.kind != "azure":
            raise ConfigError(f"AzureTarget.from_config needs target kind 'azure', got {t.kind!r}")
        if not t.endpoint or not t.index:
            raise ConfigError("an azure target needs 'endpoint' and 'index'")
        return cls.from_env(
            t.endpoint, t.index, api_key_env=t.api_key_env or "AZURE_SEARCH_API_KEY",
            credential=t.credential or "api_key", api_version=t.api_version,
            timeout_s=config.timeout_s, retries=config.retries,
            concurrency=max(1, config.concurrency), budget=config.budget, name=t.name)

    def __repr__(self) -> str:
        cred = (f"api key from ${self.api_key_env}" if self.api_key_env else
                "api key" if self.credential_kind == "api_key" else "token credential")
        return (f"AzureTarget(endpoint={self.endpoint!r}, index={self.index!r}, "
                f"api_version={self.effective_api_version!r}, credential=<{cred}>)")

    def __reduce__(self) -> Any:
        raise TypeError("an AzureTarget holds a credential and cannot be pickled; pickle its traces")

    @property
    def effective_api_version(self) -> str:
        return self.api_version or _default_api_version(self.sdk_version)

    @property
    def preview_api(self) -> bool:
        return "preview" in self.effective_api_version.lower()

    # ---- event loop plumbing -----------------------------------------------------------
    def _run(self, coro: Awaitable[Any]) -> Any:
        loop = self._rt.ensure_loop()
        if threading.current_thread() is self._rt.thread:
            raise RuntimeError("AzureTarget's synchronous API was called from its own event loop")
        return asyncio.run_coroutine_threadsafe(coro, loop).result()  # type: ignore[arg-type]

    def close(self) -> None:
        """Close the HTTP sessions and stop the background loop (a later call reopens them)."""
        self._rt.shutdown()

    def __enter__(self) -> AzureTarget:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _client_kwargs(self) -> dict[str, Any]:
        return {"api_version": self.effective_api_version, "retry_total": 0,
                "connection_timeout": self.timeout_s, "read_timeout": self.timeout_s}

    async def _search_client(self) -> Any:
        if self._rt.client is None:
            from azure.search.documents.aio import SearchClient

            kwargs = self._client_kwargs()
            if self.api_version is None:
                kwargs.pop("api_version")
            self._rt.client = SearchClient(self.endpoint, self.index, self._credential,
                                           per_call_policies=[_body_patch_policy()], **kwargs)
        return self._rt.client

    def _call_options(self) -> dict[str, Any]:
        return {"enforce_https": False} if (self._insecure and self.credential_kind == "token") else {}

    # ---- retries, budget, errors ----------------------------------------------------------
    def _spend(self) -> None:
        if self.budget is not None and self.stats["requests"] >= self.budget:
            raise TargetError(f"request budget exhausted: {self.budget} requests sent to "
                              f"{self.endpoint} (raise the budget to continue)")
        self.stats["requests"] += 1

    async def _call(self, op: Callable[[], Awaitable[Any]], what: str) -> Any:
        """Run one HTTP operation with budget, concurrency bound, timeout and retries."""
        if self._rt.sem is None:
            self._rt.sem = asyncio.Semaphore(self.concurrency)
        sem = self._rt.sem
        gate = self.retry_gate
        attempt = 0
        while True:
            stop = gate.allow() if gate is not None else None
            if stop is not None:
                self.stats["failures"] += 1
                raise TargetUnavailableError(f"{what} not sent: {stop}", counted=True)
            try:
                self._spend()
                async with sem:
                    try:
                        result = await asyncio.wait_for(op(), self.timeout_s)
                    except TimeoutError as exc:
                        raise _Retryable(f"no answer within {self.timeout_s:g} s",
                                         unreachable=True) from exc
                if gate is not None:
                    gate.success()
                return result
            except TargetError:
                self.stats["failures"] += 1
                raise
            except Exception as exc:
                err = exc if isinstance(exc, _Retryable) else self._classify(exc, what)
                if gate is not None:
                    if isinstance(err, _Retryable) and err.unreachable:
                        gate.failure(f"{what}: {err.reason}")
                    elif getattr(exc, "status_code", None) is not None and isinstance(err, TargetError):
                        gate.success()  # the service answered; the request was at fault
                if isinstance(err, TargetError):
                    self.stats["failures"] += 1
                    raise err from exc
                if err.throttled:
                    self.stats["throttled"] += 1
                if attempt >= self.retries:
                    self.stats["failures"] += 1
                    raise TargetUnavailableError(
                        f"{what} failed after {attempt + 1} attempt(s): {err.reason}",
                        counted=gate is not None and err.unreachable) from exc
                delay = self._delay(attempt, err.retry_after)
                attempt += 1
                self.stats["retries"] += 1
                log.debug("%s: %s; retry %d/%d in %.3f s", what, err.reason, attempt, self.retries,
                          delay)
                await self._backoff(delay)

    async def _backoff(self, seconds: float) -> None:
        """Sleep before a retry; wake early when the retry gate closes (no wait is wasted)."""
        gate = self.retry_gate
        if gate is None:
            await asyncio.sleep(seconds)
            return
        end = time.monotonic() + seconds
        while gate.allow() is None:
            left = end - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, 0.05))

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, max(self.max_backoff_s, 60.0)) * self._rng.uniform(1.0, 1.1)
        base = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
        return base * self._rng.uniform(0.5, 1.0)

    def _credentials_hint(self) -> str:
        if self.credential_kind == "api_key":
            holder = self.api_key_env or "the configured key"
            return (f"check that {holder} holds a query key or that your identity has the "
                    f"Search Index Data Reader role")
        return "check that your identity has the Search Index Data Reader role on the service"

    def _classify(self, exc: BaseException, what: str) -> _Retryable | TargetError:
        from azure.core.exceptions import (
            ClientAuthenticationError,
            DecodeError,
            DeserializationError,
            HttpResponseError,
            ResourceNotFoundError,
            ServiceRequestError,
            ServiceResponseError,
        )

        status = getattr(exc, "status_code", None)
        if isinstance(exc, DecodeError | DeserializationError | json.JSONDecodeError
                      | _MalformedResponse):  # DecodeError is an HttpResponseError (HTTP 200)
            return _Retryable(f"malformed response ({type(exc).__name__})")
        if isinstance(exc, HttpResponseError) and status is not None:
            if status in (401, 403):
                return TargetError(f"the search service rejected the credentials (HTTP {status}): "
                                   f"{self._credentials_hint()}")
            if status in _RETRY_STATUS:
                headers = getattr(getattr(exc, "response", None), "headers", None)
                return _Retryable(f"HTTP {status}", _retry_after(headers) if status in
                                  _THROTTLE_STATUS else None, throttled=status in _THROTTLE_STATUS)
            if isinstance(exc, ResourceNotFoundError) or status == 404:
                return TargetError(f"{what}: not found at {self.endpoint} (HTTP 404): "
                                   f"{_service_message(exc)}")
            return TargetError(f"the search service rejected the {what} (HTTP {status}): "
                               f"{_service_message(exc)}")
        if isinstance(exc, ClientAuthenticationError):
            return TargetError(f"could not authenticate to the search service: "
                               f"{type(exc).__name__}: {_service_message(exc)}; "
                               f"{self._credentials_hint()}")
        if isinstance(exc, ServiceResponseError):
            return _Retryable(f"connection dropped ({type(exc).__name__})", unreachable=True)
        if isinstance(exc, ServiceRequestError):
            return _Retryable(f"connection failed ({type(exc).__name__}: {exc})", unreachable=True)
        if isinstance(exc, ConnectionError | OSError):
            return _Retryable(f"connection error ({type(exc).__name__})", unreachable=True)
        return TargetError(f"{what} failed: {type(exc).__name__}: {exc}")

    # ---- search -------------------------------------------------------------------
    def _build_kwargs(self, req: SearchRequest, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """SDK keyword arguments and the preview-only body patch for one request."""
        from azure.search.documents import models

        accepted = _search_parameters()
        kw: dict[str, Any] = {"search_text": req.search, "top": req.top}
        if req.skip:
            kw["skip"] = req.skip
        if req.search_fields:
            kw["search_fields"] = list(req.search_fields)
        if req.query_type != "simple":
            kw["query_type"] = req.query_type
        if req.search_mode != "any":
            kw["search_mode"] = req.search_mode
        if req.semantic_configuration:
            kw["semantic_configuration_name"] = req.semantic_configuration
        if req.semantic_query:
            kw["semantic_query"] = req.semantic_query
        if req.filter:
            kw["filter"] = req.filter
        if req.scoring_profile:
            kw["scoring_profile"] = req.scoring_profile
        if req.scoring_parameters:
            kw["scoring_parameters"] = list(req.scoring_parameters)
        if req.select:
            sel = list(req.select)
            if key not in sel:
                sel.append(key)  # the key identifies each hit; dropped again from Hit.fields
            kw["select"] = sel
        if req.count:
            kw["include_total_count"] = True
        if req.captions:
            kind, opts = _parse_options(req.captions)
            kw["query_caption"] = kind
            if "highlight" in opts:
                kw["query_caption_highlight_enabled"] = opts["highlight"].lower() == "true"
        if req.answers:
            kind, opts = _parse_options(req.answers)
            kw["query_answer"] = kind
            if "count" in opts:
                kw["query_answer_count"] = int(opts["count"])
            if "threshold" in opts:
                kw["query_answer_threshold"] = float(opts["threshold"])
        if req.debug:
            kw["debug"] = req.debug
        patch: dict[str, Any] = {"body": {}, "vector_queries": {}}
        preview = self.preview_api
        if req.vector_queries:
            vqs = []
            for i, vq in enumerate(req.vector_queries):
                common: dict[str, Any] = {"k_nearest_neighbors": vq.k, "fields": ",".join(vq.fields)}
                if vq.exhaustive:
                    common["exhaustive"] = True
                if vq.weight != 1.0:
                    common["weight"] = vq.weight
                if vq.vector is not None:
                    q = models.VectorizedQuery(vector=list(vq.vector), **common)
                else:
                    q = models.VectorizableTextQuery(text=vq.text, **common)
                if vq.filter_override is not None:
                    if not preview:
                        self._unsent("filterOverride")
                    elif _has_attr(q, "filter_override"):
                        q.filter_override = vq.filter_override
                    else:
                        patch["vector_queries"][i] = {"filterOverride": vq.filter_override}
                vqs.append(q)
            kw["vector_queries"] = vqs
            kw["vector_filter_mode"] = req.vector_filter_mode
        if req.max_text_recall_size is not None:
            if not preview:
                self._unsent("maxTextRecallSize")
            elif "hybrid_search" in accepted and "*" not in accepted and hasattr(models, "HybridSearch"):
                kw["hybrid_search"] = models.HybridSearch(max_text_recall_size=req.max_text_recall_size)
            else:
                patch["body"]["hybridSearch"] = {"maxTextRecallSize": req.max_text_recall_size}
        for attr, rest in (("query_rewrites", "queryRewrites"), ("query_language", "queryLanguage")):
            value = getattr(req, attr)
            if value is None:
                continue
            if not preview:
                self._unsent(rest)
            elif attr in accepted and "*" not in accepted:
                kw[attr] = value
            else:
                patch["body"][rest] = value
        for name in list(kw):
            if name != "search_text" and "*" not in accepted and name not in accepted:
                self._unsent(name)
                del kw[name]
        return kw, patch

    def _unsent(self, param: str) -> None:
        self.unsent_parameters[param] += 1
        if param not in self._warned:
            self._warned.add(param)
            log.warning("%s not sent: API version %s / azure-search-documents %s does not support it",
                        param, self.effective_api_version, ".".join(map(str, self.sdk_version)))

    async def _raw_search(self, kwargs: Mapping[str, Any], patch: Mapping[str, Any] | None
                          ) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
        """One search request: (SDK result dicts of the first page, raw JSON body)."""
        client = await self._search_client()
        captured: dict[str, Any] = {}

        def hook(pipeline_response: Any) -> None:
            resp = pipeline_response.http_response
            captured["status"] = resp.status_code
            if resp.status_code in (200, 206):
                try:
                    captured["body"] = json.loads(resp.text())
                except Exception:  # the SDK's own parse raises the real error
                    captured["body"] = None

        extra: dict[str, Any] = {"raw_response_hook": hook, **self._call_options()}
        if patch and (patch.get("body") or patch.get("vector_queries")):
            extra[_PATCH_OPTION] = patch
        res = client.search(**kwargs, **extra)
        if inspect.isawaitable(res):
            res = await res
        items: list[Mapping[str, Any]] = []
        async for page in res.by_page():
            async for item in page:
                items.append(item)
            break  # one page: ragdiag never follows server-side paging implicitly
        body = captured.get("body")
        if not isinstance(body, dict):
            raise _MalformedResponse("the search response body could not be read as JSON")
        return items, body

    async def _key_field(self) -> str:
        return (await self._schema_async()).key_field.name

    async def _search_async(self, req: SearchRequest) -> Trace:
        key = await self._key_field()
        kwargs, patch = self._build_kwargs(req, key)
        t0 = time.perf_counter()
        items, body = await self._call(lambda: self._raw_search(kwargs, patch), "search")
        elapsed = (time.perf_counter() - t0) * 1000
        raw_values = body.get("value") or []
        partial_type = body.get("@search.semanticPartialResponseType")
        partial_reason_code = body.get("@search.semanticPartialResponseReason")
        base_results = req.is_semantic and str(partial_type or "").lower() == "baseresults"
        hits = []
        for i, item in enumerate(items):
            raw = raw_values[i] if i < len(raw_values) and isinstance(raw_values[i], Mapping) else None
            n = normalise_result(item, raw)
            if key not in n.fields:
                raise TargetError(f"a search result has no key field '{key}'; is it retrievable?")
            ts, sims, boost = parse_debug_subscores(n.debug)
            fields = dict(n.fields)
            if req.select is not None:
                fields = {f: fields.get(f) for f in req.select}
            rr = None if (base_results or not req.is_semantic) else n.reranker_score
            rrb = None if (base_results or not req.is_semantic) else n.reranker_boosted_score
            hits.append(Hit(
                key=str(n.fields[key]), score=n.score, fields=fields, reranker_score=rr,
                reranker_boosted_score=rrb, text_score=ts, vector_similarities=sims,
                fused_score=n.score, document_boost=boost if boost is not None else 1.0,
                captions=n.captions))
        partial = None
        if req.is_semantic and hits:
            if base_results:
                partial = ("semantic ranking did not run: the service returned base results "
                           f"({partial_reason_code or 'no reason given'})")
            elif all(h.reranker_score is None for h in hits):
                sem = req.effective_semantic_text
                why = ("`*` or empty search text disables semantic ranking"
                       if not sem or not sem.strip() or sem.strip() == "*"
                       else "the service returned no reranker scores")
                partial = f"semantic ranking did not run: {why}"
        window = tuple(h.key for h in hits if h.reranker_score is not None)
        count = body.get("@odata.count")
        return Trace(request=req, hits=tuple(hits), reranked=bool(req.is_semantic and window
                                                                  and partial is None),
                     rerank_window=window, count=int(count) if count is not None else None,
                     partial_reason=partial, timings_ms={"total": elapsed}, target=self.name)

    def search(self, request: SearchRequest) -> Trace:
        """Execute one request (thread-safe; blocks until answered or failed)."""
        return self._run(self._search_async(request))

    # ---- index definition -----------------------------------------------------------
    async def _schema_async(self) -> IndexSchema:
        if self._schema is not None:
            return self._schema
        if self._rt.schema_lock is None:
            self._rt.schema_lock = asyncio.Lock()
        async with self._rt.schema_lock:  # concurrent first searches read the definition once
            if self._schema is None:
                await self._read_schema()
        return self._schema  # type: ignore[return-value]

    async def _read_schema(self) -> None:
        if self.sdk_version >= (12,):
            data = await self._call(self._get_index_sdk, "index definition read")
        else:
            data = await self._call(self._get_index_raw, "index definition read")
        etag = data.get("@odata.etag")
        schema = IndexSchema.from_azure(data)
        self._etag = str(etag) if etag else None
        self._schema = schema

    async def _get_index_sdk(self) -> dict[str, Any]:
        from azure.search.documents.indexes.aio import SearchIndexClient

        kwargs = self._client_kwargs()
        if self.api_version is None:
            kwargs.pop("api_version")
        try:
            client = SearchIndexClient(self.endpoint, self._credential, **kwargs)
        except ValueError:  # an SDK refusing http:// (11.x behaviour): read it raw
            return await self._get_index_raw()
        async with client:
            idx = await client.get_index(self.index, **self._call_options())
        data = _plain(idx.as_dict()) if hasattr(idx, "as_dict") else {}
        if "fields" not in data or (data["fields"] and "type" not in data["fields"][0]):
            return await self._get_index_raw()  # not the REST shape: ask the service directly
        if not data.get("@odata.etag") and getattr(idx, "e_tag", None):
            data["@odata.etag"] = idx.e_tag
        return data

    async def _get_index_raw(self) -> dict[str, Any]:
        """GET /indexes('NAME') through an azure-core pipeline with the same credential."""
        from azure.core import AsyncPipelineClient
        from azure.core.credentials import AzureKeyCredential
        from azure.core.pipeline.policies import (
            AsyncBearerTokenCredentialPolicy,
            AzureKeyCredentialPolicy,
            HeadersPolicy,
        )
        from azure.core.rest import HttpRequest

        if isinstance(self._credential, AzureKeyCredential):
            auth: Any = AzureKeyCredentialPolicy(self._credential, "api-key")
        else:
            auth = AsyncBearerTokenCredentialPolicy(self._credential, _SCOPE)
        policies = [HeadersPolicy({"Accept": "application/json;odata.metadata=minimal"}), auth]
        name = self.index.replace("'", "''")
        request = HttpRequest("GET", f"{self.endpoint}/indexes('{quote(name, safe='')}')",
                              params={"api-version": self.effective_api_version})
        async with AsyncPipelineClient(base_url=self.endpoint, policies=policies) as client:
            response = await client.send_request(request, stream=False, **self._call_options())
            response.raise_for_status()
            return response.json()

    def schema(self) -> IndexSchema:
        """The index definition (read once, then cached), including permission-filter fields."""
        return self._run(self._schema_async())

    @property
    def etag(self) -> str | None:
        return self._etag

    def fingerprint(self) -> str:
        """Endpoint + index + definition etag: changes when the index definition changes."""
        if self._schema is None:
            self.schema()
        return f"azure:{self.endpoint}/indexes/{self.index}@{self._etag or 'no-etag'}"

    # ---- documents -------------------------------------------------------------------
    def count(self, filter: str | None = None) -> int:
        """Number of documents matching `filter` (search=*, count, top=0)."""
        async def go() -> int:
            kw: dict[str, Any] = {"search_text": "*", "include_total_count": True, "top": 0}
            if filter:
                kw["filter"] = filter
            _, body = await self._call(lambda: self._raw_search(kw, None), "count")
            n = body.get("@odata.count")
            if n is None:
                raise TargetError("the service returned no @odata.count for a count request")
            return int(n)

        return self._run(go())

    def get_document(self, key: str, select: Sequence[str] | None = None) -> dict[str, Any]:
        async def go() -> dict[str, Any]:
            client = await self._search_client()
            kw: dict[str, Any] = dict(self._call_options())
            if select:
                kw["selected_fields"] = list(select)
            doc = await self._call(lambda: client.get_document(key, **kw), f"document {key!r}")
            return {k: v for k, v in dict(doc).items() if not k.startswith(("@search.", "@odata."))}

        return self._run(go())

    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        """Stream documents page by page (1000 each); never loads the index at once.

        With a sortable key the pages are ordered by key and, past `$skip`'s limit of
        100,000, continue with `key gt 'last'` ranges; without one, paging stops
        with an error at 100,000 documents.
        """
        schema = self.schema()
        key = schema.key_field
        sortable = key.sortable and key.filterable
        sel = list(select) if select else None
        sent_sel = (sel + [key.name]) if sel is not None and key.name not in sel else sel
        skip = 0
        last: str | None = None
        while True:
            flt = filter
            if last is not None:
                rng = f"{key.name} gt '{last.replace(chr(39), chr(39) * 2)}'"
                flt = f"({filter}) and {rng}" if filter else rng
            kw: dict[str, Any] = {"search_text": "*", "top": PAGE_SIZE}
            if skip:
                kw["skip"] = skip
            if flt:
                kw["filter"] = flt
            if sent_sel:
                kw["select"] = sent_sel
            if sortable:
                kw["order_by"] = [f"{key.name} asc"]

            async def page(kw: dict[str, Any] = kw) -> list[dict[str, Any]]:
                _, body = await self._call(lambda: self._raw_search(kw, None), "document listing")
                return [normalise_result(v, v).fields for v in body.get("value") or []]

            docs = self._run(page())
            for d in docs:
                yield {f: d.get(f) for f in sel} if sel is not None else dict(d)
            if len(docs) < PAGE_SIZE:
                return
            skip += len(docs)
            if skip + PAGE_SIZE > MAX_SKIP:
                if not sortable:
                    raise TargetError(
                        f"cannot page past {MAX_SKIP:,} documents: the key field '{key.name}' is "
                        "not sortable and filterable, so key-range paging is impossible; narrow "
                        "the listing with a filter")
                last, skip = str(docs[-1][key.name]), 0


_SEARCH_PARAMS: frozenset[str] | None = None


def _search_parameters() -> frozenset[str]:
    """Keyword arguments the installed async `SearchClient.search` accepts."""
    global _SEARCH_PARAMS
    if _SEARCH_PARAMS is None:
        from azure.search.documents.aio import SearchClient

        params = inspect.signature(SearchClient.search).parameters
        if "top" not in params:  # an SDK whose search() takes **kwargs only: send everything
            _SEARCH_PARAMS = frozenset({"*"})
        else:
            _SEARCH_PARAMS = frozenset(params)
    return _SEARCH_PARAMS


def _has_attr(model: Any, name: str) -> bool:
    cls = type(model)
    if name in getattr(cls, "_attribute_map", {}):  # msrest models (11.x)
        return True
    return name in vars(cls) or any(name in vars(b) for b in cls.__mro__[1:])


def _service_message(exc: BaseException) -> str:
    err = getattr(exc, "error", None)
    msg = getattr(err, "message", None) if err is not None else None
    if msg:
        return str(msg)
    text = str(getattr(exc, "message", None) or exc)
    return text.splitlines()[0] if text else type(exc).__name__


__all__ = ["AzureTarget", "NormalisedResult", "SUPPORTED_SDK", "normalise_result",
           "parse_debug_subscores", "sdk_version"]
