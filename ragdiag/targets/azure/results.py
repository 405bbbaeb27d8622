"""Search results onto one shape, whatever the SDK version; debug subscores.

- 12.x result dicts carry the raw REST keys (`@search.rerankerScore`,
  `@search.rerankerBoostedScore`, `@search.documentDebugInfo`) and snake_case aliases;
  11.x has `@search.reranker_score` only and drops boosted scores and debug info.
  `normalise_result` reads both, the raw REST item winning where both have a value.
  `normalise_raw` does the same for an item of the raw REST answer (the raw-JSON path).
- `parse_debug_subscores` reads `@search.documentDebugInfo` (`debug="vector"`): the BM25
  score of the text leg, the cosine per vector field and the document boost.
- `build_trace` turns the normalised results and the answer's page-level keys (count,
  semantic partial response) into the `Trace`, the same for both paths.
- `raw_results`, `typed_results`, `answer_values`, `answer_count` check the shape of an
  HTTP 200 answer while normalising it: a body that is not an object, a ``value`` that is not
  a list of objects, a score that is not a number (``"@search.score": "high"``) raise
  `MalformedAnswerError`, a failed request, never a value a check computes with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragdiag.errors import MalformedAnswerError, TargetError
from ragdiag.model import Hit, SearchRequest, Trace


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


def plain(obj: Any) -> Any:
    """Models (12.x hybrid models, 11.x msrest models) to plain dicts/lists."""
    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, Mapping):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [plain(x) for x in obj]
    as_dict = getattr(obj, "as_dict", None)
    if callable(as_dict):
        return plain(as_dict())
    return obj


def normalise_result(item: Mapping[str, Any], raw: Mapping[str, Any] | None = None) -> NormalisedResult:
    """Map an SDK result dict (11.x or 12.x keys) and/or the raw REST item onto one shape.

    The raw REST item wins where both have a value; 11.x-style keys
    (`@search.reranker_score`) and 12.x aliases are read when the raw item is absent.
    Keys starting with "@" are annotations (`@search.*`, `@odata.*`), never fields: Azure
    field names start with a letter.
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
    debug = plain(_first(maps, "@search.documentDebugInfo", "@search.document_debug_info"))
    if isinstance(debug, list):  # 2024-05-01-preview returned an array
        debug = debug[0] if debug else None
    source = raw if raw is not None else item
    fields = {k: v for k, v in source.items() if k[:1] != "@"}
    return NormalisedResult(
        score=float(score) if score is not None else 0.0,
        reranker_score=float(rr) if rr is not None else None,
        reranker_boosted_score=float(rrb) if rrb is not None else None,
        captions=tuple(captions),
        debug=debug if isinstance(debug, Mapping) else None,
        fields=fields,
    )


def normalise_raw(item: dict[str, Any]) -> NormalisedResult:
    """`normalise_result(item, item)` for an item of the raw REST answer (parsed JSON).

    The raw-JSON path calls this for every hit, so it reads the item directly, without
    the SDK-shape fallbacks.
    """
    get = item.get
    score = get("@search.score")
    rr = get("@search.rerankerScore")
    rrb = get("@search.rerankerBoostedScore")
    caps = get("@search.captions")
    captions: tuple[str, ...] = ()
    if caps:
        captions = tuple(str(c["text"]) for c in caps if isinstance(c, dict) and c.get("text"))
    debug = get("@search.documentDebugInfo")
    if isinstance(debug, list):  # 2024-05-01-preview returned an array
        debug = debug[0] if debug else None
    return NormalisedResult(
        score=float(score) if score is not None else 0.0,
        reranker_score=float(rr) if rr is not None else None,
        reranker_boosted_score=float(rrb) if rrb is not None else None,
        captions=captions,
        debug=debug if isinstance(debug, dict) else None,
        fields={k: v for k, v in item.items() if k[:1] != "@"},
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


def build_trace(req: SearchRequest, key: str, results: Sequence[NormalisedResult],
                body: Mapping[str, Any], *, elapsed_ms: float, target: str) -> Trace:
    """The `Trace` of one answered request (`body`: the raw answer, for its page-level keys).

    Reranker scores count only for a semantic request whose answer is not
    `baseResults`; `partial_reason` says why semantic ranking did not run when it was
    asked for and produced no scores.
    """
    partial_type = body.get("@search.semanticPartialResponseType")
    partial_reason_code = body.get("@search.semanticPartialResponseReason")
    semantic = req.is_semantic
    base_results = semantic and str(partial_type or "").lower() == "baseresults"
    use_rr = semantic and not base_results
    select = req.select
    hits = []
    for n in results:
        fields = n.fields
        if key not in fields:
            raise TargetError(f"a search result has no key field '{key}'; is it retrievable?")
        ts, sims, boost = parse_debug_subscores(n.debug) if n.debug else (None, {}, None)
        # (both normalisers build `fields` afresh: no copy needed)
        out = {f: fields.get(f) for f in select} if select is not None else fields
        hits.append(Hit(
            key=str(fields[key]), score=n.score, fields=out,
            reranker_score=n.reranker_score if use_rr else None,
            reranker_boosted_score=n.reranker_boosted_score if use_rr else None,
            text_score=ts, vector_similarities=sims, fused_score=n.score,
            document_boost=boost if boost is not None else 1.0, captions=n.captions))
    partial = None
    if semantic and hits:
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
    return Trace(request=req, hits=tuple(hits), reranked=bool(semantic and window and partial is None),
                 rerank_window=window, count=int(count) if count is not None else None,
                 partial_reason=partial, timings_ms={"total": elapsed_ms}, target=target)


# ---- the shape of an answer ----------------------------------------------------------------
def _malformed(what: str, found: Any) -> MalformedAnswerError:
    from ragdiag.inputs.limits import excerpt

    return MalformedAnswerError(f"the search service answered HTTP 200 with a malformed body: {what}, "
                                f"found {excerpt(found, 80)}; is a proxy or another service answering "
                                "at this endpoint?")


def _number(item: Mapping[str, Any], key: str) -> None:
    v = item.get(key)
    if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
        raise _malformed(f"'{key}' must be a number", v)


def answer_values(body: Any) -> list[dict[str, Any]]:
    """The ``value`` list of a search answer, each item an object (`MalformedAnswerError` if not)."""
    if not isinstance(body, Mapping):
        raise _malformed("the answer must be a JSON object", body)
    values = body.get("value")
    if values is None:
        return []
    if not isinstance(values, list):
        raise _malformed("'value' must be a list of results", values)
    for v in values:
        if not isinstance(v, dict):
            raise _malformed("each result in 'value' must be an object", v)
    return values


def answer_count(body: Any) -> int | None:
    """``@odata.count`` of an answer (None when absent), a non-negative integer."""
    if not isinstance(body, Mapping):
        raise _malformed("the answer must be a JSON object", body)
    n = body.get("@odata.count")
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise _malformed("'@odata.count' must be a non-negative integer", n)
    return n


def _checked(item: Mapping[str, Any]) -> None:
    for key in ("@search.score", "@search.rerankerScore", "@search.rerankerBoostedScore",
                "@search.reranker_score", "@search.reranker_boosted_score"):
        _number(item, key)
    caps = item.get("@search.captions")
    if caps is not None and not isinstance(caps, list | tuple):
        raise _malformed("'@search.captions' must be a list", caps)


def _debug_checked(n: NormalisedResult) -> NormalisedResult:
    if n.debug:
        try:
            parse_debug_subscores(n.debug)
        except (TypeError, ValueError, AttributeError):
            raise _malformed("'@search.documentDebugInfo' must hold numeric subscores", n.debug) from None
    return n


def raw_results(body: Any) -> tuple[dict[str, Any], list[NormalisedResult]]:
    """(body, normalised results) of a raw REST answer, its shape checked."""
    values = answer_values(body)
    answer_count(body)
    out = []
    for v in values:
        _checked(v)
        out.append(_debug_checked(normalise_raw(v)))
    return body, out


def typed_results(items: Sequence[Any], body: Any) -> tuple[dict[str, Any], list[NormalisedResult]]:
    """(body, normalised results) of the SDK path: its result dicts and the raw body."""
    raw_values = answer_values(body)
    answer_count(body)
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise _malformed("each result must be an object", item)
        raw = raw_values[i] if i < len(raw_values) else None
        _checked(item)
        if raw is not None:
            _checked(raw)
        out.append(_debug_checked(normalise_result(item, raw)))
    return body, out
