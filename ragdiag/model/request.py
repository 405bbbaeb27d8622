"""The request model and the stage trace a search returns.

`SearchRequest` mirrors the body of Azure's `POST /indexes/{name}/docs/search`
in snake_case, so one request can go unchanged to the local target or a live
index. `Trace` holds every stage of one executed request (keyword leg, vector
legs, fused pool, rerank window, final hits) so that probes and widgets can
answer what-ifs without searching again.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from ragdiag.errors import InputDataError

QUERY_TYPES = ("simple", "full", "semantic")
VECTOR_FILTER_MODES = ("preFilter", "postFilter", "strictPostFilter")
DEFAULT_MAX_TEXT_RECALL_SIZE = 1000
RERANK_WINDOW = 50  # Azure's semantic ranker only sees the top 50 of the fused list
RRF_K = 60


@dataclass(frozen=True)
class VectorQuery:
    """One entry of `vectorQueries`: a text (vectorised by the target) or a raw vector."""

    fields: tuple[str, ...]
    text: str | None = None
    vector: tuple[float, ...] | None = None
    k: int = 50
    exhaustive: bool = False
    weight: float = 1.0
    filter_override: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.fields, str):
            object.__setattr__(self, "fields", tuple(f.strip() for f in self.fields.split(",") if f.strip()))
        if self.vector is not None and not isinstance(self.vector, tuple):
            object.__setattr__(self, "vector", tuple(float(x) for x in self.vector))
        if (self.text is None) == (self.vector is None):
            raise InputDataError("a vector query needs exactly one of 'text' or 'vector'")
        if not self.fields:
            raise InputDataError("a vector query needs at least one field in 'fields'")
        if self.k < 1:
            raise InputDataError(f"vector query k must be >= 1, got {self.k}")
        if not self.weight > 0:
            raise InputDataError(f"vector query weight must be > 0, got {self.weight}")

    @property
    def kind(self) -> str:
        return "text" if self.text is not None else "vector"

    @functools.cached_property
    def array(self) -> Any:
        """`vector` as a read-only float32 numpy array (None for a text query), computed once."""
        if self.vector is None:
            return None
        import numpy as np

        arr = np.asarray(self.vector, dtype=np.float32)
        arr.flags.writeable = False
        return arr

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


@dataclass(frozen=True)
class SearchRequest:
    """The body of an Azure AI Search query, snake_case."""

    search: str | None = None
    search_fields: tuple[str, ...] | None = None
    query_type: str = "simple"
    search_mode: str = "any"
    semantic_configuration: str | None = None
    semantic_query: str | None = None
    vector_queries: tuple[VectorQuery, ...] = ()
    vector_filter_mode: str = "preFilter"
    max_text_recall_size: int | None = None
    filter: str | None = None
    scoring_profile: str | None = None
    scoring_parameters: tuple[str, ...] = ()
    top: int = 50
    skip: int = 0
    select: tuple[str, ...] | None = None
    count: bool = False
    captions: str | None = None
    answers: str | None = None
    query_rewrites: str | None = None
    query_language: str | None = None
    debug: str | None = None

    def __post_init__(self) -> None:
        for name in ("search_fields", "select"):
            v = getattr(self, name)
            if isinstance(v, str):
                object.__setattr__(self, name, tuple(s.strip() for s in v.split(",") if s.strip()))
            elif isinstance(v, list):
                object.__setattr__(self, name, tuple(v))
        if isinstance(self.scoring_parameters, list | str):
            sp = self.scoring_parameters
            object.__setattr__(self, "scoring_parameters", (sp,) if isinstance(sp, str) else tuple(sp))
        vqs = tuple(v if isinstance(v, VectorQuery) else VectorQuery(**_vq_kwargs(v))
                    for v in self.vector_queries)
        object.__setattr__(self, "vector_queries", vqs)
        if self.query_type not in QUERY_TYPES:
            raise InputDataError(f"query_type must be one of {', '.join(QUERY_TYPES)}, got {self.query_type!r}")
        if self.vector_filter_mode not in VECTOR_FILTER_MODES:
            raise InputDataError(
                f"vector_filter_mode must be one of {', '.join(VECTOR_FILTER_MODES)}, "
                f"got {self.vector_filter_mode!r}")
        if self.top < 0 or self.skip < 0:
            raise InputDataError("top and skip must be >= 0")
        if self.max_text_recall_size is not None and not 1 <= self.max_text_recall_size <= 10000:
            raise InputDataError(
                f"max_text_recall_size must be between 1 and 10000, got {self.max_text_recall_size}")

    # ---- derived views ------------------------------------------------------
    @property
    def has_text_leg(self) -> bool:
        return bool(self.search and self.search.strip() and self.search.strip() != "*")

    @property
    def is_semantic(self) -> bool:
        return self.query_type == "semantic"

    @property
    def effective_semantic_text(self) -> str | None:
        return self.semantic_query if self.semantic_query else self.search

    @property
    def effective_max_text_recall_size(self) -> int:
        return self.max_text_recall_size or DEFAULT_MAX_TEXT_RECALL_SIZE

    def replace(self, **changes: Any) -> SearchRequest:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchRequest:
        """Build from snake_case or Azure camelCase keys (a REST body works).

        The input is untrusted (a request file, an emulator's client): every value's type is
        checked (`InputDataError` naming the key, and the line when `data` came from
        `loads_json_lined`)."""
        if not isinstance(data, Mapping):
            raise InputDataError(f"a search request must be a JSON object, found {_type_name(data)}",
                                 line=getattr(data, "line", None))
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        unknown = []
        for k, v in data.items():
            key = _CAMEL_TO_SNAKE.get(k, k)
            if key == "hybrid_search":
                if isinstance(v, Mapping) and v.get("maxTextRecallSize") is not None:
                    _check_value(v, "maxTextRecallSize", v["maxTextRecallSize"], "int")
                    kwargs["max_text_recall_size"] = int(v["maxTextRecallSize"])
                continue
            if key not in known:
                unknown.append(k)
                continue
            kwargs[key] = v
        if unknown:
            raise InputDataError(
                f"unknown request keys: {', '.join(sorted(unknown))}; allowed: {', '.join(sorted(known))}")
        for key, v in kwargs.items():
            _check_value(data, key, v, _REQUEST_TYPES.get(key, "any"))
        if "vector_queries" in kwargs:
            for vq in kwargs["vector_queries"] or ():
                if not isinstance(vq, Mapping | VectorQuery):
                    raise InputDataError(f"each vector query must be an object, found {_type_name(vq)}",
                                         line=getattr(data, "line", None))
                if isinstance(vq, Mapping):
                    for k, v in vq.items():
                        _check_value(vq, k, v, _VQ_TYPES.get(_VQ_KEYS.get(k, k), "any"))
            kwargs["vector_queries"] = tuple(_vq_kwargs(v) if isinstance(v, Mapping) else v
                                             for v in kwargs["vector_queries"] or ())
            try:
                kwargs["vector_queries"] = tuple(VectorQuery(**v) if isinstance(v, dict) else v
                                                 for v in kwargs["vector_queries"])
            except TypeError as exc:  # a required key is missing
                raise InputDataError(f"invalid vector query: {str(exc).split('.', 1)[-1].strip()}; a vector "
                                     "query needs 'fields' and one of 'text' or 'vector'",
                                     line=getattr(data, "line", None)) from None
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise InputDataError(f"invalid search request: {exc}") from exc

    @functools.cached_property
    def _fingerprint(self) -> str:
        # repr of a frozen dataclass of strings, numbers and tuples is deterministic and
        # much cheaper than a JSON round trip; computed once per request object
        return hashlib.sha256(repr(self).encode()).hexdigest()[:24]

    def fingerprint(self) -> str:
        """A stable hash of the request, the runner's cache key."""
        return self._fingerprint


_CAMEL_TO_SNAKE = {
    "searchFields": "search_fields",
    "queryType": "query_type",
    "searchMode": "search_mode",
    "semanticConfiguration": "semantic_configuration",
    "semanticQuery": "semantic_query",
    "vectorQueries": "vector_queries",
    "vectorFilterMode": "vector_filter_mode",
    "maxTextRecallSize": "max_text_recall_size",
    "hybridSearch": "hybrid_search",
    "scoringProfile": "scoring_profile",
    "scoringParameters": "scoring_parameters",
    "queryRewrites": "query_rewrites",
    "queryLanguage": "query_language",
}


#: the JSON type each request key must have ("strs": a list of strings or one comma-separated string)
_REQUEST_TYPES = {
    "search": "str?", "search_fields": "strs?", "query_type": "str", "search_mode": "str",
    "semantic_configuration": "str?", "semantic_query": "str?", "vector_queries": "list?",
    "vector_filter_mode": "str", "max_text_recall_size": "int?", "filter": "str?", "scoring_profile": "str?",
    "scoring_parameters": "strs?", "top": "int", "skip": "int", "select": "strs?", "count": "bool",
    "captions": "str?", "answers": "str?", "query_rewrites": "str?", "query_language": "str?", "debug": "str?"}
_VQ_TYPES = {"fields": "strs", "text": "str?", "vector": "numbers?", "k": "int", "exhaustive": "bool",
             "weight": "number", "filter_override": "str?", "kind": "str"}
_VQ_KEYS = {"k_nearest_neighbors": "k", "filterOverride": "filter_override"}
_TYPE_TEXT = {"str": "a string", "strs": "a list of strings (or one comma-separated string)", "int": "an integer",
              "bool": "true or false", "number": "a number", "numbers": "a list of numbers", "list": "a list"}


def _type_name(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object", type(None): "null"}.get(type(v), type(v).__name__)


def _check_value(where: Any, key: str, v: Any, kind: str) -> None:
    """`InputDataError` unless `v` has the JSON type `kind` ("?" suffix: null allowed)."""
    import math

    if kind == "any" or (kind.endswith("?") and v is None):
        return
    base = kind.rstrip("?")
    ok = {"str": lambda x: isinstance(x, str),
          "strs": lambda x: isinstance(x, str) or (isinstance(x, list | tuple) and all(isinstance(s, str) for s in x)),
          "int": lambda x: isinstance(x, int) and not isinstance(x, bool),
          "bool": lambda x: isinstance(x, bool),
          "number": lambda x: isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x),
          "numbers": lambda x: isinstance(x, list | tuple) and all(
              isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) for n in x),
          "list": lambda x: isinstance(x, list | tuple)}[base](v)
    if not ok:
        from ragdiag.inputs.limits import excerpt

        raise InputDataError(f"'{key}' must be {_TYPE_TEXT[base]}{' or null' if kind.endswith('?') else ''}, "
                             f"found {_type_name(v)} {excerpt(v, 60)}", line=getattr(where, "line", None))


def _vq_kwargs(v: Any) -> dict[str, Any]:
    if isinstance(v, VectorQuery):
        return dataclasses.asdict(v)
    d = dict(v)
    d.pop("kind", None)
    if "k_nearest_neighbors" in d:
        d["k"] = d.pop("k_nearest_neighbors")
    if "filterOverride" in d:
        d["filter_override"] = d.pop("filterOverride")
    if isinstance(d.get("fields"), str):
        d["fields"] = tuple(f.strip() for f in d["fields"].split(",") if f.strip())
    elif isinstance(d.get("fields"), list):
        d["fields"] = tuple(d["fields"])
    allowed = {f.name for f in fields(VectorQuery)}
    bad = set(d) - allowed
    if bad:
        raise InputDataError(
            f"unknown vector query keys: {', '.join(sorted(bad))}; allowed: {', '.join(sorted(allowed))}")
    return d


def _to_dict(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _to_dict(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, tuple | list):
        return [_to_dict(x) for x in obj]
    if isinstance(obj, Mapping):
        return {k: _to_dict(v) for k, v in obj.items()}
    return obj
