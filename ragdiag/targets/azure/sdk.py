"""The installed azure-search-documents: its version, its default API version, what it accepts.

ragdiag supports `azure-search-documents` 12.x (primary; tested with 12.0.0) and 11.x
from 11.4 (vector queries appeared in 11.4, `debug` in 11.6). Each release has its own
default API version (`DEFAULT_API`). `search_parameters()` and `has_model_attr()` tell
the typed path (`typed.py`) which keyword arguments and model attributes the installed
release has; `has_send_request()` tells whether the raw-JSON path (`rawjson.py`) can send
through the client's own pipeline.
"""

from __future__ import annotations

import inspect
from typing import Any

from ragdiag.errors import MissingDependencyError

SUPPORTED_SDK = "azure-search-documents >= 11.4, < 13 (12.x primary)"
DEFAULT_API = {(12,): "2026-04-01", (11, 6): "2025-09-01", (11, 5): "2024-07-01",
               (11, 4): "2023-11-01"}


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


def default_api_version(v: tuple[int, ...]) -> str:
    """The API version an SDK release sends when none is configured."""
    for prefix, api in DEFAULT_API.items():
        if v[:len(prefix)] == prefix:
            return api
    return "2026-04-01" if v >= (12,) else "2024-07-01"


_SEARCH_PARAMS: frozenset[str] | None = None


def search_parameters() -> frozenset[str]:
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


def has_model_attr(model: Any, name: str) -> bool:
    """True if an SDK model (12.x hybrid model or 11.x msrest model) has attribute `name`."""
    cls = type(model)
    if name in getattr(cls, "_attribute_map", {}):  # msrest models (11.x)
        return True
    return name in vars(cls) or any(name in vars(b) for b in cls.__mro__[1:])
