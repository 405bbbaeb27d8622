"""The raw-JSON path: the REST body built here, sent through the SDK client's own pipeline.

The typed path (`typed.py`) turns a `SearchRequest` into SDK models, which the SDK
serialises to JSON; the response JSON is deserialised into SDK models and then converted
back to dicts, and ragdiag reads the raw body once more for what 11.x drops. On 2 cores
that model layer was most of the client's CPU per request. Here the body is the REST
JSON written directly (`build_body`), sent as an `azure.core.rest.HttpRequest` with
`SearchClient.send_request`, i.e. through the same azure-core pipeline and policies the
SDK's own methods use: authentication (api-key or bearer token), request ids, user agent,
logging with the key redacted, distributed tracing, the transport's connection and read
timeouts (azure-core's retries stay off; `AzureTarget._call` retries), and the response
body is parsed once (`send`). The answer is the REST shape that `results.py` reads.

It needs `SearchClient.send_request` with the credential applied by a pipeline policy:
azure-search-documents 12.x (`available()`). 11.x adds the api-key per operation outside
the pipeline, so there the target keeps the typed path.

Request mapping, keyword by keyword the same as the typed path's (`typed.build_kwargs` and
the SDK's serialiser); tests compare the bodies both paths send. Preview-only parameters
(`hybridSearch.maxTextRecallSize`, `vectorQueries[].filterOverride`, `queryRewrites`,
`queryLanguage`) go into the body only with a preview API version; otherwise `unsent`
counts them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from ragdiag.model import SearchRequest
from ragdiag.targets.azure import params
from ragdiag.targets.azure.retry import MalformedResponse
from ragdiag.targets.azure.typed import parse_options

ACCEPT = "application/json;odata.metadata=none"
_HEADERS = {"Accept": ACCEPT, "Content-Type": "application/json"}


def available(sdk_version: tuple[int, ...]) -> bool:
    """True if the installed SDK can send a raw request through its authenticated pipeline."""
    if sdk_version < (12,):
        return False
    try:
        from azure.search.documents.aio import SearchClient
    except ImportError:  # pragma: no cover - the SDK is installed when this is asked
        return False
    return callable(getattr(SearchClient, "send_request", None))


def search_path(index: str) -> str:
    """The SDK's URL form for a search POST (relative to the endpoint)."""
    name = quote(index.replace("'", "''"), safe="")
    return f"/indexes('{name}')/docs/search.post.search"


def _captions(spec: str) -> str:
    kind, opts = parse_options(spec)
    if "highlight" in opts:
        return f"{kind}|highlight-{'true' if opts['highlight'].lower() == 'true' else 'false'}"
    return kind


def _answers(spec: str) -> str:
    kind, opts = parse_options(spec)
    parts = []
    if "count" in opts:
        parts.append(f"count-{int(opts['count'])}")
    if "threshold" in opts:
        parts.append(f"threshold-{float(opts['threshold'])}")
    # The SDK writes "kind,threshold-x" when only a threshold is given; "kind|threshold-x"
    # is the REST syntax.
    return f"{kind}|{','.join(parts)}" if parts else kind


def build_body(req: SearchRequest, key: str, *, preview: bool, unsent: Callable[[str], None]
               ) -> dict[str, Any]:
    """The REST search body for one request (what the typed path's SDK call serialises to)."""
    body: dict[str, Any] = {}
    if req.search is not None:
        body["search"] = req.search
    body["top"] = req.top
    for rest, _, join, value in params.plain(req):
        body[rest] = ",".join(value) if join else value
    sel = params.selected(req, key)
    if sel is not None:
        body["select"] = ",".join(sel)
    if req.count:
        body["count"] = True
    if req.captions:
        body["captions"] = _captions(req.captions)
    if req.answers:
        body["answers"] = _answers(req.answers)
    if req.debug:
        body["debug"] = req.debug
    if req.vector_queries:
        vqs = []
        for vq in req.vector_queries:
            q: dict[str, Any]
            if vq.vector is not None:
                q = {"kind": "vector", "vector": vq.vector}
            else:
                q = {"kind": "text", "text": vq.text}
            q["k"] = vq.k
            q["fields"] = ",".join(vq.fields)
            if vq.exhaustive:
                q["exhaustive"] = True
            if vq.weight != 1.0:
                q["weight"] = vq.weight
            if vq.filter_override is not None:
                if preview:
                    q["filterOverride"] = vq.filter_override
                else:
                    unsent("filterOverride")
            vqs.append(q)
        body["vectorQueries"] = vqs
        body["vectorFilterMode"] = req.vector_filter_mode
    if req.max_text_recall_size is not None:
        if preview:
            body["hybridSearch"] = {"maxTextRecallSize": req.max_text_recall_size}
        else:
            unsent("maxTextRecallSize")
    for attr, rest in (("query_rewrites", "queryRewrites"), ("query_language", "queryLanguage")):
        value = getattr(req, attr)
        if value is not None:
            if preview:
                body[rest] = value
            else:
                unsent(rest)
    return body


def plain_body(*, search: str = "*", count: bool = False, top: int | None = None, skip: int = 0,
               filter: str | None = None, select: list[str] | None = None,
               orderby: list[str] | None = None) -> dict[str, Any]:
    """The body of a count or document-listing search (no `SearchRequest` behind it)."""
    body: dict[str, Any] = {"search": search}
    if count:
        body["count"] = True
    if top is not None:
        body["top"] = top
    if skip:
        body["skip"] = skip
    if filter:
        body["filter"] = filter
    if select:
        body["select"] = ",".join(select)
    if orderby:
        body["orderby"] = ",".join(orderby)
    return body


def encode(body: Mapping[str, Any]) -> bytes:
    """The body as UTF-8 JSON (tuples become arrays)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


async def send(client: Any, path: str, api_version: str, data: bytes,
               call_options: Mapping[str, Any]) -> dict[str, Any]:
    """POST `data` through the client's pipeline; the parsed JSON answer (HTTP 200/206).

    Other statuses raise what the SDK's own methods raise (`ClientAuthenticationError`
    for 401, `ResourceNotFoundError` for 404, else `HttpResponseError`), with the
    response attached so that `retry.classify` reads its status and Retry-After headers.
    """
    from azure.core.rest import HttpRequest

    request = HttpRequest("POST", path, params={"api-version": api_version},
                          headers=_HEADERS, content=data)
    # stream=True: azure-core's ContentDecodePolicy would otherwise parse the JSON once
    # more before handing the response over; the body is read right here instead.
    response = await client.send_request(request, stream=True, **call_options)
    try:
        content = await response.read()
    finally:
        await response.close()
    status = response.status_code
    if status not in (200, 206):
        _raise_for(response)
    try:
        body = json.loads(content)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise MalformedResponse(f"the search response body is not JSON ({exc})") from exc
    if not isinstance(body, dict):
        raise MalformedResponse("the search response body is not a JSON object")
    return body


def _raise_for(response: Any) -> None:
    from azure.core.exceptions import (
        ClientAuthenticationError,
        HttpResponseError,
        ResourceExistsError,
        ResourceNotFoundError,
        ResourceNotModifiedError,
        map_error,
    )

    error_map = {401: ClientAuthenticationError, 404: ResourceNotFoundError,
                 409: ResourceExistsError, 304: ResourceNotModifiedError}
    map_error(status_code=response.status_code, response=response, error_map=error_map)
    raise HttpResponseError(response=response)
