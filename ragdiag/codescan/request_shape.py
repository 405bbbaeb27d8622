"""Request shapes: SDK keywords, REST body keys and JS SDK options mapped to the scanner's parameter names."""

from __future__ import annotations

from typing import Any

from ragdiag.codescan.values import Val, combine, lit, unknown


def shared_channels(channels: dict[str, str | None]) -> bool:
    """True when the keyword text variable also feeds a vector text or the semantic query."""
    kw = channels.get("search_text")
    if not kw:
        return False
    return any(v == kw for k, v in channels.items() if k != "search_text" and v)



SDK_PARAMS = {"top": "top", "filter": "filter", "query_type": "query_type",
              "semantic_configuration_name": "semantic_configuration",
              "scoring_profile": "scoring_profile", "vector_filter_mode": "vector_filter_mode",
              "select": "select", "search_fields": "search_fields"}
#: REST body key -> scanner parameter name (GET query-string forms with `$`).
REST_PARAMS = {"top": "top", "$top": "top", "filter": "filter", "$filter": "filter",
               "queryType": "query_type", "semanticConfiguration": "semantic_configuration",
               "scoringProfile": "scoring_profile", "vectorFilterMode": "vector_filter_mode",
               "select": "select", "$select": "select", "searchFields": "search_fields"}
#: JS SDK option -> scanner parameter name.
JS_SDK_PARAMS = {"top": "top", "filter": "filter", "queryType": "query_type",
                 "scoringProfile": "scoring_profile", "select": "select",
                 "searchFields": "search_fields"}



def rest_request(sources: tuple[Val | None, ...], ref) -> tuple[dict[str, Val], dict[str, str | None], Any]:
    """Scanner parameters, channel variables and builder of a REST search sent as a query string
    and/or a body (dict Vals; either may be None), shared by the Python and JS scanners."""
    params: dict[str, Val] = {}
    channels: dict[str, str | None] = {}
    builder = None
    for src in sources:
        if src is not None and src.kind == "dict":
            p, ch = rest_params(src, ref)
            params.update(p)
            channels.update(ch)
            builder = builder or src.builder
            if src.items and "search" in src.items:
                params["search_text"] = src.items["search"]
    return params, channels, builder


def rest_params(body: Val, ref) -> tuple[dict[str, Val], dict[str, str | None]]:
    """Scanner parameters and channel variables of a REST search body (dict Val)."""
    items = body.items or {}
    params = {REST_PARAMS[k]: v for k, v in items.items() if k in REST_PARAMS}
    channels: dict[str, str | None] = {}
    if "search" in items:
        channels["search_text"] = ref(items["search"])
    if "semanticQuery" in items:
        channels["semantic_query"] = ref(items["semanticQuery"])
    vqs = items.get("vectorQueries")
    if vqs is not None:
        entries = [e for e in (vqs.elems or []) if e.kind == "dict"] if vqs.kind == "list" else []
        if not entries:
            params["k"] = unknown("rest_body", vqs.expr)
        for pname, key in (("k", "k"), ("exhaustive", "exhaustive"), ("vector_fields", "fields"),
                           ("weight", "weight")):
            present = [e.items[key] for e in entries if e.items and key in e.items]
            if pname == "exhaustive" and present:
                present = [e.items[key] if e.items and key in e.items else lit(False, "default") for e in entries]
            if present:
                params[pname] = combine(present, "rest_body")
        n_text = n_vec = 0
        for e in entries:
            if e.items and "text" in e.items:
                n_text += 1
                channels["vector_text" if n_text == 1 else f"vector_text_{n_text}"] = ref(e.items["text"])
            if e.items and "vector" in e.items:
                n_vec += 1
                channels["vector" if n_vec == 1 else f"vector_{n_vec}"] = ref(e.items["vector"], True)
    return params, channels



def header(headers: Val | None, name: str) -> Val | None:
    """The value of header `name` (case-insensitive) in a resolved headers dict, or None."""
    if headers is None or headers.kind != "dict" or not headers.items:
        return None
    for k, v in headers.items.items():
        if k.lower() == name:
            return v
    return None
