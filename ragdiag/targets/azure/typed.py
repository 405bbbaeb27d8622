"""The SDK's typed path: a `SearchRequest` as `SearchClient.search` keyword arguments.

`build_kwargs` maps the request onto the installed SDK's keyword arguments and models
(`VectorizedQuery`, `VectorizableTextQuery`, `HybridSearch` where it exists); preview-only
parameters that the SDK lacks go into a body patch (`bodypatch.py`), and with a GA API
version they are not sent but counted (`unsent`). `search` sends one request and reads the
first page of results; a `raw_response_hook` also captures the raw JSON body, because 11.x
result dicts drop boosted scores and debug info.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.model import SearchRequest
from ragdiag.targets.azure import params
from ragdiag.targets.azure.bodypatch import PATCH_OPTION
from ragdiag.targets.azure.retry import MalformedResponse
from ragdiag.targets.azure.sdk import has_model_attr, search_parameters


def parse_options(spec: str) -> tuple[str, dict[str, str]]:
    """'extractive|count-3,threshold-0.7' -> ('extractive', {'count': '3', 'threshold': '0.7'})."""
    head, *rest = spec.split("|")
    opts: dict[str, str] = {}
    for part in ",".join(rest).split(","):
        name, _, value = part.strip().partition("-")
        if name:
            opts[name.lower()] = value
    return head.strip(), opts


def build_kwargs(req: SearchRequest, key: str, *, preview: bool, unsent: Callable[[str], None]
                 ) -> tuple[dict[str, Any], dict[str, Any]]:
    """SDK keyword arguments and the preview-only body patch for one request."""
    from azure.search.documents import models

    accepted = search_parameters()
    kw: dict[str, Any] = {"search_text": req.search, "top": req.top}
    for _, sdk, _, value in params.plain(req):
        kw[sdk] = value
    sel = params.selected(req, key)
    if sel is not None:
        kw["select"] = sel
    if req.count:
        kw["include_total_count"] = True
    if req.captions:
        kind, opts = parse_options(req.captions)
        kw["query_caption"] = kind
        if "highlight" in opts:
            kw["query_caption_highlight_enabled"] = opts["highlight"].lower() == "true"
    if req.answers:
        kind, opts = parse_options(req.answers)
        kw["query_answer"] = kind
        if "count" in opts:
            kw["query_answer_count"] = int(opts["count"])
        if "threshold" in opts:
            kw["query_answer_threshold"] = float(opts["threshold"])
    if req.debug:
        kw["debug"] = req.debug
    patch: dict[str, Any] = {"body": {}, "vector_queries": {}}
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
                    unsent("filterOverride")
                elif has_model_attr(q, "filter_override"):
                    q.filter_override = vq.filter_override
                else:
                    patch["vector_queries"][i] = {"filterOverride": vq.filter_override}
            vqs.append(q)
        kw["vector_queries"] = vqs
        kw["vector_filter_mode"] = req.vector_filter_mode
    if req.max_text_recall_size is not None:
        if not preview:
            unsent("maxTextRecallSize")
        elif "hybrid_search" in accepted and "*" not in accepted and hasattr(models, "HybridSearch"):
            kw["hybrid_search"] = models.HybridSearch(max_text_recall_size=req.max_text_recall_size)
        else:
            patch["body"]["hybridSearch"] = {"maxTextRecallSize": req.max_text_recall_size}
    for attr, rest in (("query_rewrites", "queryRewrites"), ("query_language", "queryLanguage")):
        value = getattr(req, attr)
        if value is None:
            continue
        if not preview:
            unsent(rest)
        elif attr in accepted and "*" not in accepted:
            kw[attr] = value
        else:
            patch["body"][rest] = value
    for name in list(kw):
        if name != "search_text" and "*" not in accepted and name not in accepted:
            unsent(name)
            del kw[name]
    return kw, patch


def plain_kwargs(*, search: str = "*", count: bool = False, top: int | None = None, skip: int = 0,
                 filter: str | None = None, select: list[str] | None = None,
                 orderby: list[str] | None = None) -> dict[str, Any]:
    """SDK keyword arguments of a count or document-listing search (`rawjson.plain_body`)."""
    kw: dict[str, Any] = {"search_text": search}
    if count:
        kw["include_total_count"] = True
    if top is not None:
        kw["top"] = top
    if skip:
        kw["skip"] = skip
    if filter:
        kw["filter"] = filter
    if select:
        kw["select"] = list(select)
    if orderby:
        kw["order_by"] = list(orderby)
    return kw


async def search(client: Any, kwargs: Mapping[str, Any], patch: Mapping[str, Any] | None,
                 call_options: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    """One search request: (SDK result dicts of the first page, raw JSON body)."""
    captured: dict[str, Any] = {}

    def hook(pipeline_response: Any) -> None:
        resp = pipeline_response.http_response
        captured["status"] = resp.status_code
        if resp.status_code in (200, 206):
            try:
                captured["body"] = json.loads(resp.text())
            except Exception:  # the SDK's own parse raises the real error
                captured["body"] = None

    extra: dict[str, Any] = {"raw_response_hook": hook, **call_options}
    if patch and (patch.get("body") or patch.get("vector_queries")):
        extra[PATCH_OPTION] = patch
    res = client.search(**kwargs, **extra)
    if inspect.isawaitable(res):
        res = await res
    items: list[Mapping[str, Any]] = []
    try:
        async for page in res.by_page():
            async for item in page:
                items.append(item)
            break  # one page: ragdiag never follows server-side paging implicitly
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        if captured.get("status") not in (200, 206):
            raise
        # the SDK could not deserialise a 200 answer of the wrong shape: a failed request
        from ragdiag.errors import MalformedAnswerError

        raise MalformedAnswerError(f"the search service answered HTTP 200 with a malformed body the SDK cannot "
                                   f"read ({type(exc).__name__}: {str(exc)[:160]})") from None
    body = captured.get("body")
    if not isinstance(body, dict):
        raise MalformedResponse("the search response body could not be read as JSON")
    return items, body
