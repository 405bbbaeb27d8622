"""`AzureTarget`: a live Azure AI Search index, read-only, answering `SearchRequest`s with `Trace`s.

See the package docstring for the SDK versions and the robustness rules. The target owns
the credential, the budget and the statistics; the SDK client and its event loop live in
`runtime.Runtime`, failure classification in `retry.py`. Searches go one of two ways
(`transport`): "raw" (`rawjson.py`: the REST body through the SDK client's pipeline, the
answer parsed once) or "sdk" (`typed.py`: the SDK's keyword arguments and models, the
documented fallback); "auto", the default, is "raw" wherever the installed SDK supports it
(12.x) and "sdk" otherwise. Both give the same traces.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import random
import threading
import time
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from ragdiag.errors import (
    AuthRejectedError,
    ConfigError,
    MissingDependencyError,
    TargetError,
    TargetUnavailableError,
)
from ragdiag.model import SearchRequest, Trace
from ragdiag.model.schema import IndexSchema
from ragdiag.targets.azure import rawjson, typed
from ragdiag.targets.azure.bodypatch import body_patch_policy
from ragdiag.targets.azure.results import (
    answer_count,
    answer_values,
    build_trace,
    normalise_raw,
    plain,
    raw_results,
    typed_results,
)
from ragdiag.targets.azure.retry import Retryable, backoff_delay, classify
from ragdiag.targets.azure.runtime import AsyncTokenAdapter, Runtime, needs_env_settings
from ragdiag.targets.azure.sdk import SUPPORTED_SDK, default_api_version, sdk_version

log = logging.getLogger("ragdiag.targets.azure")

MAX_SKIP = 100_000
PAGE_SIZE = 1000
_SCOPE = "https://search.azure.com/.default"
TRANSPORTS = ("auto", "raw", "sdk")


def text_queries_without_vectorizer(schema: IndexSchema, req: SearchRequest) -> list[str]:
    """Vector fields that a text vector query (`kind: "text"`) of `req` searches although their
    profile names no vectorizer: Azure embeds query text only through an integrated vectorizer."""
    out: list[str] = []
    for vq in req.vector_queries:
        if vq.text is None:
            continue
        for name in vq.fields:
            if schema.has_field(name) and schema.field_vectorizer(name) is None and name not in out:
                out.append(name)
    return out


def vectorizer_message(index: str, fields: Sequence[str]) -> str:
    return (f"index '{index}': vector field(s) {', '.join(fields)} have no vectorizer in their vector "
            "profile, so Azure cannot embed query text (vectorQueries kind \"text\"); the request was "
            "not sent. Fix: add an integrated vectorizer to the field's vector profile "
            "(vectorSearch.vectorizers + profiles[].vectorizer), or supply each question's own "
            "embedding in the goldset (query_vector), which is sent as kind \"vector\"")


class AzureTarget:
    """A live Azure AI Search index, read-only, answering `SearchRequest`s with `Trace`s."""

    #: query text reaches a vector field only through its integrated vectorizer (`--plan` counts
    #: the searches refused for want of one)
    needs_vectorizer = True

    # traces carry hits only (no per-leg stages); security values only where retrievable
    capabilities = frozenset({"documents", "get_document", "embedding_model", "retries", "vectorizer_required",
                              "stats", "unsent_parameters"})

    def __init__(self, endpoint: str, index: str, *, credential: Any, api_version: str | None = None,
                 timeout_s: float = 30.0, retries: int = 4, concurrency: int = 4,
                 budget: int | None = None, api_key_env: str | None = None,
                 backoff_s: float = 0.5, max_backoff_s: float = 30.0,
                 name: str | None = None, owns_credential: bool = False,
                 transport: str = "auto") -> None:
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
        if transport not in TRANSPORTS:
            raise ConfigError(f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        raw_ok = rawjson.available(v)
        if transport == "raw" and not raw_ok:
            raise ConfigError(
                f"transport \"raw\" needs azure-search-documents 12.x (SearchClient.send_request "
                f"with the credential in the pipeline); installed: {'.'.join(map(str, v))}. Use "
                "transport = \"auto\" or \"sdk\"")
        from azure.core.credentials import AzureKeyCredential

        self.sdk_version = v
        #: "raw" (REST JSON through the SDK client's pipeline) or "sdk" (the SDK's models)
        self.transport = "raw" if transport == "raw" or (transport == "auto" and raw_ok) else "sdk"
        self._search_path = rawjson.search_path(index)
        self._env_settings = needs_env_settings()
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
                credential = AsyncTokenAdapter(credential)
        else:
            raise ConfigError(f"credential must be an AzureKeyCredential or a token credential, "
                              f"got {type(credential).__name__}")
        # The only reference to the secret: the credential object itself.
        self._credential = credential
        self._insecure = parts.scheme == "http"
        self._etag: str | None = None
        self._schema: IndexSchema | None = None
        self._rt = Runtime(self.index)
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
            concurrency=max(1, config.concurrency), budget=config.budget, name=t.name,
            transport=t.transport or "auto")

    def __repr__(self) -> str:
        cred = (f"api key from ${self.api_key_env}" if self.api_key_env else
                "api key" if self.credential_kind == "api_key" else "token credential")
        return (f"AzureTarget(endpoint={self.endpoint!r}, index={self.index!r}, "
                f"api_version={self.effective_api_version!r}, credential=<{cred}>)")

    def __reduce__(self) -> Any:
        raise TypeError("an AzureTarget holds a credential and cannot be pickled; pickle its traces")

    @property
    def effective_api_version(self) -> str:
        return self.api_version or default_api_version(self.sdk_version)

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
                "connection_timeout": self.timeout_s, "read_timeout": self.timeout_s,
                "use_env_settings": self._env_settings}

    async def _search_client(self) -> Any:
        if self._rt.client is None:
            from azure.search.documents.aio import SearchClient

            kwargs = self._client_kwargs()
            if self.api_version is None:
                kwargs.pop("api_version")
            self._rt.client = SearchClient(self.endpoint, self.index, self._credential,
                                           per_call_policies=[body_patch_policy()], **kwargs)
        return self._rt.client

    def _call_options(self) -> dict[str, Any]:
        return {"enforce_https": False} if (self._insecure and self.credential_kind == "token") else {}

    # ---- retries, budget, errors ----------------------------------------------------------
    def _spend(self) -> None:
        if self.budget is not None and self.stats["requests"] >= self.budget:
            raise TargetError(f"request budget exhausted: {self.budget} requests sent to "
                              f"{self.endpoint} (raise the budget to continue)")
        self.stats["requests"] += 1

    async def _call(self, op: Callable[[], Awaitable[Any]], what: str,
                    shape: Callable[[Any], Any] | None = None) -> Any:
        """Run one HTTP operation with budget, concurrency bound, timeout and retries.

        `shape` turns the answer into what the caller needs and raises `MalformedAnswerError`
        when it has the wrong shape: such an answer is a failed request (counted by the retry
        gate's breaker), not a success of the service."""
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
                        raise Retryable(f"no answer within {self.timeout_s:g} s", unreachable=True) from exc
                if shape is not None:
                    result = shape(result)
                if gate is not None:
                    gate.success()
                return result
            except TargetError:
                self.stats["failures"] += 1
                raise
            except Exception as exc:
                err = exc if isinstance(exc, Retryable) else self._classify(exc, what)
                if gate is not None:
                    if isinstance(err, Retryable) and err.unreachable:
                        gate.failure(f"{what}: {err.reason}")
                    elif isinstance(err, AuthRejectedError):
                        gate.failure(f"{what}: {err}", "auth")  # a revoked key refuses every request
                        err.counted = True
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
        return backoff_delay(attempt, retry_after, backoff_s=self.backoff_s,
                             max_backoff_s=self.max_backoff_s, rng=self._rng)

    def _credentials_hint(self) -> str:
        if self.credential_kind == "api_key":
            holder = self.api_key_env or "the configured key"
            return (f"check that {holder} holds a query key or that your identity has the "
                    f"Search Index Data Reader role")
        return "check that your identity has the Search Index Data Reader role on the service"

    def _classify(self, exc: BaseException, what: str) -> Retryable | TargetError:
        return classify(exc, what, endpoint=self.endpoint, credentials_hint=self._credentials_hint(),
                        timeout_s=self.timeout_s)

    # ---- search -------------------------------------------------------------------
    def _build_kwargs(self, req: SearchRequest, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """SDK keyword arguments and the preview-only body patch for one request."""
        return typed.build_kwargs(req, key, preview=self.preview_api, unsent=self._unsent)

    def _unsent(self, param: str) -> None:
        self.unsent_parameters[param] += 1
        if param not in self._warned:
            self._warned.add(param)
            log.warning("%s not sent: API version %s / azure-search-documents %s does not support it",
                        param, self.effective_api_version, ".".join(map(str, self.sdk_version)))

    async def _raw_search(self, kwargs: Mapping[str, Any], patch: Mapping[str, Any] | None
                          ) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
        """Typed path: (SDK result dicts of the first page, raw JSON body)."""
        client = await self._search_client()
        return await typed.search(client, kwargs, patch, self._call_options())

    async def _send_raw(self, data: bytes) -> dict[str, Any]:
        """Raw-JSON path: the parsed answer to one search body."""
        client = await self._search_client()
        return await rawjson.send(client, self._search_path, self.effective_api_version, data,
                                  self._call_options())

    async def _plain_search(self, **params: Any) -> dict[str, Any]:
        """The raw answer to a count or listing search (`rawjson.plain_body` parameters)."""
        if self.transport == "raw":
            return await self._send_raw(rawjson.encode(rawjson.plain_body(**params)))
        _, body = await self._raw_search(typed.plain_kwargs(**params), None)
        return body

    async def _key_field(self) -> str:
        return (await self._schema_async()).key_field.name

    async def _search_async(self, req: SearchRequest) -> Trace:
        key = await self._key_field()
        missing = text_queries_without_vectorizer(await self._schema_async(), req)
        if missing:  # Azure would refuse the request: say why before sending it
            raise TargetError(vectorizer_message(self.index, missing))
        if self.transport == "raw":
            data = rawjson.encode(rawjson.build_body(req, key, preview=self.preview_api,
                                                     unsent=self._unsent))
            t0 = time.perf_counter()
            body, results = await self._call(lambda: self._send_raw(data), "search", shape=raw_results)
            elapsed = (time.perf_counter() - t0) * 1000
        else:
            kwargs, patch = self._build_kwargs(req, key)
            t0 = time.perf_counter()
            body, results = await self._call(lambda: self._raw_search(kwargs, patch), "search",
                                             shape=lambda answer: typed_results(*answer))
            elapsed = (time.perf_counter() - t0) * 1000
        return build_trace(req, key, results, body, elapsed_ms=elapsed, target=self.name)

    @property
    def embedding_model(self) -> str | None:
        """The model of the vector fields' vectorizers, where the definition names one (else None;
        also before the definition was read: this never sends a request)."""
        schema = self._schema
        if schema is None:
            return None
        models = {v.model for f in schema.vector_fields if (v := schema.field_vectorizer(f.name)) and v.model}
        return ", ".join(sorted(models)) if models else None

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
        data = plain(idx.as_dict()) if hasattr(idx, "as_dict") else {}
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
            n = await self._call(lambda: self._plain_search(count=True, top=0, filter=filter), "count",
                                 shape=answer_count)
            if n is None:
                raise TargetError("the service returned no @odata.count for a count request")
            return n

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
            params: dict[str, Any] = {"top": PAGE_SIZE, "skip": skip, "filter": flt,
                                      "select": sent_sel,
                                      "orderby": [f"{key.name} asc"] if sortable else None}

            async def page(params: dict[str, Any] = params) -> list[dict[str, Any]]:
                return await self._call(lambda: self._plain_search(**params), "document listing",
                                        shape=lambda body: [normalise_raw(v).fields for v in answer_values(body)])

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


