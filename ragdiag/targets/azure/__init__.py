"""The live target: a read-only adapter for an Azure AI Search index.

Supported SDK versions: `azure-search-documents` 12.x (primary; tested with
12.0.0, default API version 2026-04-01) and 11.x from 11.4 (vector queries
appeared in 11.4; `debug` in 11.6).

Two ways to send a search (`transport`, also a `[target]` key):

- "raw" (the default wherever it works: 12.x): the REST JSON body is built by
  ragdiag and sent as an `azure.core.rest.HttpRequest` through
  `SearchClient.send_request`, i.e. through the SDK client's own azure-core
  pipeline (authentication, request ids, logging with the key redacted,
  tracing, transport timeouts); the JSON answer is parsed once into the trace.
  This skips the SDK's model (de)serialisation, which cost most of the client's
  CPU per request (figures in benchmarks/README.md, "Live target").
- "sdk": `SearchClient.search` with keyword arguments and SDK models, the
  documented fallback (and the only way with 11.x, whose api-key is added
  outside the pipeline). "auto" picks "raw" when the installed SDK supports it.

Both give the same traces. Differences between SDK versions handled on the
typed path:

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

Modules, one concept each: `sdk` (installed SDK version, default API versions, what it
accepts), `rawjson` (the raw-JSON transport: REST body, `send_request`, one JSON parse),
`typed` (the request as SDK keyword arguments and models), `bodypatch` (the
per-call policy that adds preview-only keys to the SDK's body), `results` (result
normalisation, debug subscores), `retry` (retryable failures, Retry-After, backoff),
`runtime` (the private event loop), `target` (`AzureTarget`), `kind` (the `[target]`
config kind).
"""

from __future__ import annotations

# MAX_SKIP, PAGE_SIZE and _retry_after were top-level names of this package before the
# split and stay importable from here (target.py reads the paging limits: patch them there).
from ragdiag.targets.azure.results import NormalisedResult, normalise_result, parse_debug_subscores
from ragdiag.targets.azure.retry import retry_after as _retry_after  # noqa: F401
from ragdiag.targets.azure.sdk import SUPPORTED_SDK, sdk_version
from ragdiag.targets.azure.target import MAX_SKIP as MAX_SKIP
from ragdiag.targets.azure.target import PAGE_SIZE as PAGE_SIZE
from ragdiag.targets.azure.target import AzureTarget

__all__ = ["AzureTarget", "NormalisedResult", "SUPPORTED_SDK", "normalise_result",
           "parse_debug_subscores", "sdk_version"]
