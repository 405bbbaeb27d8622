"""Query profiles: `Profile` (and its `VectorQuerySpec`s) turns a question into the complete request.

Security: with an identity, the clause `security_field/any(g: search.in(g,
'<groups>', '|'))` is built from the identity's groups by
`odata.search_in_any` (values escaped, never taken from the question) and
put FIRST, `and`-ed with the profile's filter. A vector query's
`filter_override` replaces the top-level filter for that query (as on Azure),
so the clause is added to it too unless `override_security = false`, which is
a deliberate leak the ACL check reports.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tomli_w

from ragdiag import odata
from ragdiag.errors import ConfigError, FilterError, InputDataError
from ragdiag.model import QUERY_TYPES, VECTOR_FILTER_MODES, SearchRequest, VectorQuery
from ragdiag.model.schema import IndexSchema
from ragdiag.policy.convert import (
    _bool,
    _convert_fields,
    _enum,
    _filter,
    _int,
    _opt_names,
    _opt_str,
    _some_names,
    _str,
    _template_fields,
    _templates,
    _weight,
    _where,
)
from ragdiag.policy.identity import Identity
from ragdiag.policy.text import keywords

KEYWORD_TEXT_MODES = ("verbatim", "keywords", "none")
SEMANTIC_TEXT_MODES = ("verbatim", "keywords", "keyword_text")
VECTOR_TEXT_MODES = ("verbatim", "keywords", "keyword_text")
SEARCH_MODES = ("any", "all")
NO_SOURCE: tuple[str, int] = ("", 0)

_PROFILE_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "description": _str,
    "query_type": _enum(QUERY_TYPES),
    "search_mode": _enum(SEARCH_MODES),
    "semantic_configuration": _opt_str,
    "search_fields": _opt_names,
    "keyword_text": _enum(KEYWORD_TEXT_MODES),
    "semantic_text": _enum(SEMANTIC_TEXT_MODES),
    "vector_filter_mode": _enum(VECTOR_FILTER_MODES),
    "max_text_recall_size": _int(1, 10000),
    "filter": _filter,
    "scoring_profile": _opt_str,
    "scoring_parameters": _templates,
    "top": _int(0),
    "select": _opt_names,
    "count": _bool,
    "captions": _opt_str,
    "answers": _opt_str,
    "query_language": _opt_str,
    "query_rewrites": _opt_str,
    "security_trimming": _bool,
}
_VQ_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "fields": _some_names,
    "k": _int(1),
    "exhaustive": _bool,
    "weight": _weight,
    "text": _enum(VECTOR_TEXT_MODES),
    "filter_override": _filter,
    "override_security": _bool,
}


@dataclass(frozen=True)
class VectorQuerySpec:
    """One vector query of a profile: fields, k, weight and which text it embeds."""

    fields: tuple[str, ...]
    k: int = 50
    exhaustive: bool = False
    weight: float = 1.0
    text: str = "verbatim"
    filter_override: str | None = None
    override_security: bool = True
    source: tuple[str, int] = field(default=NO_SOURCE, compare=False, repr=False)

    def __post_init__(self) -> None:
        _convert_fields(self, _VQ_CONVERTERS, "vector query", self.source)

    def to_toml(self) -> dict[str, Any]:
        return _toml_dict(self)


@dataclass(frozen=True)
class Profile:
    """A named query profile: everything needed to build the complete request."""

    name: str
    description: str = ""
    query_type: str = "simple"
    search_mode: str = "any"
    semantic_configuration: str | None = None
    search_fields: tuple[str, ...] | None = None
    keyword_text: str = "verbatim"
    semantic_text: str = "keyword_text"
    vector_queries: tuple[VectorQuerySpec, ...] = ()
    vector_filter_mode: str = "preFilter"
    max_text_recall_size: int | None = None
    filter: str | None = None
    scoring_profile: str | None = None
    scoring_parameters: tuple[str, ...] = ()
    top: int = 50
    select: tuple[str, ...] | None = None
    count: bool = False
    captions: str | None = None
    answers: str | None = None
    query_language: str | None = None
    query_rewrites: str | None = None
    security_trimming: bool = True
    source: tuple[str, int] = field(default=NO_SOURCE, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError(f"a profile needs a non-empty name, got {self.name!r}", **_where(self.source))
        _convert_fields(self, _PROFILE_CONVERTERS, f"profile '{self.name}'", self.source)
        vqs = []
        for v in self.vector_queries:
            if isinstance(v, Mapping):
                v = VectorQuerySpec(**v)
            if not isinstance(v, VectorQuerySpec):
                raise ConfigError(f"profile '{self.name}': vector_queries must hold VectorQuerySpec "
                                  f"entries, got {v!r}", key="vector_queries", **_where(self.source))
            vqs.append(v)
        object.__setattr__(self, "vector_queries", tuple(vqs))
        for index, key, message in _cross_problems(
                {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}):
            src = self.vector_queries[index].source if index is not None else self.source
            raise ConfigError(f"profile '{self.name}': {message}", key=key,
                              **_where(src if src[0] else self.source))

    # ---- building requests -----------------------------------------------------
    def build(self, question: str, identity: Identity | None, *, security_field: str,
              entities: Sequence[str] = ()) -> SearchRequest:
        """The complete request for `question` asked by `identity` (None: no security clause)."""
        if not isinstance(question, str):
            raise InputDataError(f"a question must be a string, got {type(question).__name__}")
        channel = {"verbatim": question, "keywords": keywords(question)}
        search = None if self.keyword_text == "none" else channel[self.keyword_text]
        semantic_query = None
        if self.query_type == "semantic" and self.semantic_text != "keyword_text":
            semantic_query = channel[self.semantic_text]
        identity_clause = None
        if identity is not None and self.security_trimming:
            identity_clause = odata.search_in_any(security_field, identity.groups)
        vqs = []
        for spec in self.vector_queries:
            override = spec.filter_override
            if override is not None and spec.override_security:
                override = _conjoin(identity_clause, override)
            vqs.append(VectorQuery(
                fields=spec.fields,
                text=search if spec.text == "keyword_text" else channel[spec.text],
                k=spec.k, exhaustive=spec.exhaustive, weight=spec.weight,
                filter_override=override))
        return SearchRequest(
            search=search,
            search_fields=self.search_fields,
            query_type=self.query_type,
            search_mode=self.search_mode,
            semantic_configuration=self.semantic_configuration,
            semantic_query=semantic_query,
            vector_queries=tuple(vqs),
            vector_filter_mode=self.vector_filter_mode,
            max_text_recall_size=self.max_text_recall_size,
            filter=_conjoin(identity_clause, self.filter),
            scoring_profile=self.scoring_profile,
            scoring_parameters=self.scoring_parameters_for(entities),
            top=self.top,
            select=self.select,
            count=self.count,
            captions=self.captions,
            answers=self.answers,
            query_rewrites=self.query_rewrites,
            query_language=self.query_language,
        )

    def scoring_parameters_for(self, entities: Sequence[str] = ()) -> tuple[str, ...]:
        """The templates filled in; a template using {entities} is omitted when there are none."""
        if isinstance(entities, str) or not all(isinstance(e, str) for e in entities):
            raise InputDataError(f"entities must be a list of strings, got {entities!r}")
        kept = [e for e in dict.fromkeys(entities) if e]
        value = ",".join(_scoring_value(e) for e in kept)
        out = []
        for template in self.scoring_parameters:
            if "entities" in _template_fields(template) and not kept:
                continue
            out.append(template.format(entities=value))
        return tuple(out)

    def replace(self, **changes: Any) -> Profile:
        """A copy with `changes` applied and checked (what-if tuning)."""
        return dataclasses.replace(self, **changes)

    # ---- checks against an index ---------------------------------------------------
    def validate_against(self, schema: IndexSchema) -> list[str]:
        """Problems of this profile on `schema`, as messages (nothing raised)."""
        at = f"{self.source[0]}:{self.source[1]}: " if self.source[0] and self.source[1] else (
            f"{self.source[0]}: " if self.source[0] else "")
        return [f"{at}profile '{self.name}': {message}" for _, _, message in self.problems_against(schema)]

    def problems_against(self, schema: IndexSchema) -> list[tuple[str, int | None, str]]:
        """Problems of this profile on `schema`: (key, vector query index or None, message),
        so a caller can point at the key's line (`ragdiag.inputs.validate`)."""
        differs = any(vq.text not in (self.keyword_text, "keyword_text") for vq in self.vector_queries)
        return request_shape_problems(self, schema, vector_text_differs=differs)

    def to_toml(self) -> dict[str, Any]:
        """The profile's table as a dict for `tomli_w` (None, empty and name/source left out)."""
        return _toml_dict(self)


def request_shape_problems(p: Any, schema: IndexSchema, *, vector_text_differs: bool = False
                           ) -> list[tuple[str, int | None, str]]:
    """Problems of a profile or a `SearchRequest` `p` on `schema` (the attributes they share:
    fields, configurations, vector queries, filters): (key, vector query index or None, message).
    `vector_text_differs`: a vector query embeds another text than the search text."""
    out: list[tuple[str, int | None, str]] = []
    searchable = set(schema.searchable_fields)
    for name in p.search_fields or ():
        if not schema.has_field(name):
            out.append(("search_fields", None, f"search field '{name}' is not in index '{schema.name}'; "
                       f"searchable fields: {', '.join(schema.searchable_fields) or 'none'}"))
        elif name not in searchable:
            out.append(("search_fields", None, f"search field '{name}' is not searchable; "
                       f"searchable fields: {', '.join(schema.searchable_fields) or 'none'}"))
    retrievable = set(schema.retrievable_fields)
    for name in p.select or ():
        if name not in retrievable:
            out.append(("select", None, f"select field '{name}' is not a retrievable field of index "
                       f"'{schema.name}'; retrievable: {', '.join(schema.retrievable_fields)}"))
    if p.query_type == "semantic":
        try:
            schema.semantic_configuration(p.semantic_configuration)
        except ConfigError as exc:
            out.append(("semantic_configuration" if p.semantic_configuration else "query_type",
                        None, str(exc)))
    else:
        for key in ("captions", "answers", "query_rewrites"):
            if getattr(p, key):
                out.append((key, None, f"'{key}' needs query_type = 'semantic' (it is "
                           f"'{p.query_type}'); Azure rejects the request"))
    if p.query_rewrites:
        if not p.query_language:
            out.append(("query_rewrites", None, "query_rewrites needs query_language (the search "
                       "text's language); Azure rejects the request without it"))
        if vector_text_differs:
            out.append(("query_rewrites", None, "query_rewrites need the vector text identical to "
                       "the search text (Azure); a vector query here embeds a different text"))
    if p.scoring_profile:
        try:
            sp = schema.scoring_profile(p.scoring_profile)
        except ConfigError as exc:
            out.append(("scoring_profile", None, str(exc)))
        else:
            params = {f.tags_parameter for f in sp.functions if f.tags_parameter}
            for t in p.scoring_parameters:
                name = t.split("-", 1)[0]
                if name not in params:
                    out.append(("scoring_parameters", None, f"scoring parameter '{name}' is not a "
                               f"parameter of scoring profile '{sp.name}'; its parameters: "
                               f"{', '.join(sorted(params)) or 'none'}"))
    elif p.scoring_parameters:
        out.append(("scoring_parameters", None, "scoring_parameters are set but no scoring_profile "
                    "uses them"))
    vectors = {f.name: f for f in schema.vector_fields}
    for i, vq in enumerate(p.vector_queries):
        for name in vq.fields:
            if name not in vectors:
                out.append(("fields", i, f"vector query {i + 1}: '{name}' is not a vector field of index "
                           f"'{schema.name}'; vector fields: {', '.join(sorted(vectors)) or 'none'}"))
        dims = {vectors[n].dimensions for n in vq.fields if n in vectors}
        if len(dims) > 1:
            shown = ", ".join(f"{n} {vectors[n].dimensions}" for n in vq.fields if n in vectors)
            out.append(("fields", i, f"vector query {i + 1}: one query vector searches all its fields, "
                       f"but their dimensions differ ({shown}); give each dimension its own vector query"))
        if vq.filter_override:
            out.extend(("filter_override", i, f"vector query {i + 1} filter_override: {m}")
                       for m in _filter_problems(vq.filter_override, schema))
    if p.filter:
        out.extend(("filter", None, f"filter: {m}") for m in _filter_problems(p.filter, schema))
    return out


def _filter_problems(text: str, schema: IndexSchema) -> list[str]:
    try:
        odata.validate(text, schema)
    except FilterError as exc:
        return [str(exc)]
    return []


def _cross_problems(p: Mapping[str, Any]) -> list[tuple[int | None, str, str]]:
    """Key combinations that cannot work: (vector query index or None, key, message)."""
    out: list[tuple[int | None, str, str]] = []
    vqs: Sequence[VectorQuerySpec] = p["vector_queries"]
    if p["keyword_text"] == "none":
        if p["query_type"] == "semantic" and p["semantic_text"] == "keyword_text":
            out.append((None, "semantic_text",
                        "semantic_text = 'keyword_text' gives the reranker no text when "
                        "keyword_text = 'none'; set semantic_text to 'verbatim' or 'keywords'"))
        for i, vq in enumerate(vqs):
            if vq.text == "keyword_text":
                out.append((i, "text", "a vector query with text = 'keyword_text' has no text when "
                                       "keyword_text = 'none'; use 'verbatim' or 'keywords'"))
        if not vqs:
            out.append((None, "keyword_text",
                        "keyword_text = 'none' and no vector_queries: the profile searches nothing"))
    return out


def _scoring_value(value: str) -> str:
    """One scoring-parameter value; values with commas or quotes are single-quoted (quotes doubled)."""
    if "," in value or "'" in value:
        return "'" + value.replace("'", "''") + "'"
    return value


def _fully_parenthesised(text: str) -> bool:
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    in_str = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_str:
            if ch == "'":
                if i + 1 < len(text) and text[i + 1] == "'":
                    i += 1
                else:
                    in_str = False
        elif ch == "'":
            in_str = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(text) - 1:
                return False
        i += 1
    return True


def _conjoin(first: str | None, second: str | None) -> str | None:
    """`first and second`; `second` parenthesised when its top level is an `or`."""
    second = second.strip() if second else None
    if not first:
        return second
    if not second:
        return first
    if isinstance(odata.parse(second), odata.Or) and not _fully_parenthesised(second):
        second = f"({second})"
    return f"{first} and {second}"


def _toml_dict(obj: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        if f.name in ("name", "source"):
            continue
        v = getattr(obj, f.name)
        if v is None or v == "" or v == ():
            continue
        if f.name == "vector_queries":
            out[f.name] = [vq.to_toml() for vq in v]
        elif isinstance(v, tuple):
            out[f.name] = list(v)
        else:
            out[f.name] = v
    return out


def dump_profile(profile: Profile) -> str:
    """`[profiles.<name>]` as TOML text, ready to paste into a policy file."""
    return tomli_w.dumps({"profiles": {profile.name: profile.to_toml()}})


__all__ = [
    "KEYWORD_TEXT_MODES",
    "NO_SOURCE",
    "SEARCH_MODES",
    "SEMANTIC_TEXT_MODES",
    "VECTOR_TEXT_MODES",
    "Identity",
    "Profile",
    "VectorQuerySpec",
    "dump_profile",
]
