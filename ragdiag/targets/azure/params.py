"""The search parameters both transports send alike: one table, two spellings.

The raw-JSON path (`rawjson.build_body`) writes the REST body, the typed path
(`typed.build_kwargs`) the SDK's keyword arguments. For the plain parameters the two differ
only in the name (``semanticConfiguration`` / ``semantic_configuration_name``) and in how a
list goes out (comma-joined in REST where the API says so, a list to the SDK); they are listed
here once, in the order both paths send them, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragdiag.model import SearchRequest

#: request attribute, REST body key, SDK keyword, REST joins the list with commas
PLAIN: tuple[tuple[str, str, str, bool], ...] = (
    ("skip", "skip", "skip", False),
    ("search_fields", "searchFields", "search_fields", True),
    ("query_type", "queryType", "query_type", False),
    ("search_mode", "searchMode", "search_mode", False),
    ("semantic_configuration", "semanticConfiguration", "semantic_configuration_name", False),
    ("semantic_query", "semanticQuery", "semantic_query", False),
    ("filter", "filter", "filter", False),
    ("scoring_profile", "scoringProfile", "scoring_profile", False),
    ("scoring_parameters", "scoringParameters", "scoring_parameters", False),
)
#: the service's defaults, not sent (every other plain parameter is sent when it is set at all)
UNSENT_DEFAULTS: dict[str, Any] = {"query_type": "simple", "search_mode": "any"}


def plain(req: SearchRequest) -> Iterator[tuple[str, str, bool, Any]]:
    """(REST key, SDK keyword, REST joins, value) of each plain parameter the request sets;
    sequences as lists."""
    for attr, rest, sdk, join in PLAIN:
        value = getattr(req, attr)
        if attr in UNSENT_DEFAULTS:
            if value == UNSENT_DEFAULTS[attr]:
                continue
        elif not value:
            continue
        yield rest, sdk, join, list(value) if isinstance(value, tuple | list) else value


def selected(req: SearchRequest, key: str) -> list[str] | None:
    """The `select` list with the key field added (it identifies each hit; `Hit.fields` drops it
    again), or None when the request selects nothing."""
    if not req.select:
        return None
    sel = list(req.select)
    if key not in sel:
        sel.append(key)
    return sel


__all__ = ["PLAIN", "UNSENT_DEFAULTS", "plain", "selected"]
