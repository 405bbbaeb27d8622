"""Named query profiles: the retrieval policy as data, one profile per route.

A policy file (TOML) holds the profiles and the routing table; a profile turns
(question, identity) into the complete `SearchRequest`, so every search goes
through one place that decides the channel texts, vector fields and weights,
filters, scoring profile, semantic configuration and the security clause:

    policy = load_policy("profiles.toml")
    route, request = policy.request_for("What does E-4021 mean?",
                                        Identity("anna", ("sales", "all-staff")))
    route.intent, route.profile.name, request.filter

The file:

    [policy]
    name = "tuned"
    security_field = "group_ids"      # the identity clause is built on this field

    [routes]                           # intent -> profile; `default` for the rest
    fact = "fact"
    default = "fact"

    [defaults]                         # keys every profile inherits unless it sets them
    query_type = "semantic"

    [profiles.fact]
    search_fields = ["content", "title"]
    keyword_text = "keywords"          # verbatim | keywords | none (no keyword leg)
    filter = "level eq 'evidence'"
      [[profiles.fact.vector_queries]]
      fields = ["content_vector"]
      k = 50

The accepted keys are the fields of `Profile` and `VectorQuerySpec` (error
messages list them). TOML has no null: an empty string clears an optional
string inherited from `[defaults]` (`filter = ""`).

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
import json
import re
import string
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from ragdiag import odata
from ragdiag.errors import ConfigError, FilterError, InputDataError
from ragdiag.inputs.tomlfile import TomlLocator
from ragdiag.model import QUERY_TYPES, VECTOR_FILTER_MODES, SearchRequest, VectorQuery
from ragdiag.model.schema import STRING, STRING_COLLECTION, IndexSchema
from ragdiag.policy.routing import INTENTS, explain
from ragdiag.policy.text import keywords

KEYWORD_TEXT_MODES = ("verbatim", "keywords", "none")
SEMANTIC_TEXT_MODES = ("verbatim", "keywords", "keyword_text")
VECTOR_TEXT_MODES = ("verbatim", "keywords", "keyword_text")
SEARCH_MODES = ("any", "all")
TEMPLATE_FIELDS = ("entities",)
DEFAULT_SECURITY_FIELD = "group_ids"
DEFAULT_ROUTE_KEY = "default"
NO_SOURCE: tuple[str, int] = ("", 0)

_FIELD_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*")
_TEMPLATE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*-")


# ---- identities ---------------------------------------------------------------
@dataclass(frozen=True)
class Identity:
    """A caller: a name (for reports) and the groups that the security clause admits."""

    name: str
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        g = self.groups
        if isinstance(g, str) or not all(isinstance(x, str) for x in g):
            raise InputDataError(
                f"identity '{self.name}': groups must be a list of strings, got {g!r}")
        object.__setattr__(self, "groups", tuple(g))


# ---- value conversion and checks (shared by the loader and the dataclasses) -----
class _Invalid(Exception):
    """A value is wrong; the caller adds where (file, line, key)."""


def _describe(v: Any) -> str:
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
             (list, "an array"), (tuple, "an array"), (dict, "a table"))
    for t, name in kinds:
        if isinstance(v, t):
            return f"{name} ({json.dumps(v, default=str)})"
    return f"{type(v).__name__} ({v!r})"


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise _Invalid(f"must be a string, got {_describe(v)}")
    return v


def _opt_str(v: Any) -> str | None:
    return _str(v) or None


def _enum(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def conv(v: Any) -> str:
        s = _str(v)
        if s not in choices:
            raise _Invalid(f"must be one of {', '.join(choices)}; got {s!r}")
        return s
    return conv


def _names(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) and x for x in v):
        raise _Invalid(f'must be an array of field names, e.g. ["content", "title"]; got {_describe(v)}')
    return tuple(v)


def _opt_names(v: Any) -> tuple[str, ...] | None:
    return _names(v) or None


def _some_names(v: Any) -> tuple[str, ...]:
    names = _names((v,) if isinstance(v, str) else v)
    if not names:
        raise _Invalid('needs at least one field, e.g. ["content_vector"]')
    return names


def _int(low: int, high: int | None = None) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise _Invalid(f"must be an integer, got {_describe(v)}")
        if v < low or (high is not None and v > high):
            rng = f"between {low} and {high}" if high is not None else f">= {low}"
            raise _Invalid(f"must be {rng}, got {v}")
        return v
    return conv


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise _Invalid(f"must be true or false, got {_describe(v)}")
    return v


def _weight(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _Invalid(f"must be a number, got {_describe(v)}")
    if not v > 0:
        raise _Invalid(f"must be > 0, got {v}")
    return float(v)


def _filter(v: Any) -> str | None:
    s = _opt_str(v)
    if s is not None:
        try:
            odata.parse(s)
        except FilterError as exc:
            raise _Invalid(f"does not parse as OData: {exc}") from exc
    return s


def _template_fields(template: str) -> list[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise _Invalid(f"template {template!r} is malformed: {exc}") from exc
    out = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in TEMPLATE_FIELDS or spec or conversion:
            raise _Invalid(f"template {template!r} uses {{{name}}}; available placeholders: "
                           + ", ".join(f"{{{n}}}" for n in TEMPLATE_FIELDS))
        out.append(name)
    return out


def _templates(v: Any) -> tuple[str, ...]:
    if not isinstance(v, list | tuple) or not all(isinstance(x, str) for x in v):
        raise _Invalid(f'must be an array of strings, e.g. ["entities-{{entities}}"]; got {_describe(v)}')
    for t in v:
        if not _TEMPLATE_NAME.match(t):
            raise _Invalid(f"template {t!r} must look like 'name-value', e.g. 'entities-{{entities}}'")
        _template_fields(t)
    return tuple(v)


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
_POLICY_KEYS = ("name", "description", "security_field")
_TOP_KEYS = ("policy", "routes", "defaults", "profiles")


def _where(source: tuple[str, int]) -> dict[str, Any]:
    return {"path": source[0] or None, "line": source[1] or None}


def _convert_fields(obj: Any, converters: Mapping[str, Callable[[Any], Any]], what: str,
                    source: tuple[str, int]) -> None:
    """Normalise and check a dataclass's fields in place (programmatic construction, replace())."""
    for key, conv in converters.items():
        v = getattr(obj, key)
        if v is None and _optional(obj, key):
            continue
        try:
            object.__setattr__(obj, key, conv(list(v) if isinstance(v, tuple) else v))
        except _Invalid as exc:
            raise ConfigError(f"{what}: '{key}' {exc}", key=key, **_where(source)) from None


def _optional(obj: Any, key: str) -> bool:
    f = next(f for f in dataclasses.fields(obj) if f.name == key)
    return f.default is None


# ---- profiles ---------------------------------------------------------------------
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
        pre = f"{at}profile '{self.name}': "
        out: list[str] = []
        searchable = set(schema.searchable_fields)
        for name in self.search_fields or ():
            if not schema.has_field(name):
                out.append(f"{pre}search field '{name}' is not in index '{schema.name}'; "
                           f"searchable fields: {', '.join(schema.searchable_fields) or 'none'}")
            elif name not in searchable:
                out.append(f"{pre}search field '{name}' is not searchable; "
                           f"searchable fields: {', '.join(schema.searchable_fields) or 'none'}")
        retrievable = set(schema.retrievable_fields)
        for name in self.select or ():
            if name not in retrievable:
                out.append(f"{pre}select field '{name}' is not a retrievable field of index "
                           f"'{schema.name}'; retrievable: {', '.join(schema.retrievable_fields)}")
        if self.query_type == "semantic":
            try:
                schema.semantic_configuration(self.semantic_configuration)
            except ConfigError as exc:
                out.append(f"{pre}{exc}")
        else:
            for key in ("captions", "answers", "query_rewrites"):
                if getattr(self, key):
                    out.append(f"{pre}'{key}' needs query_type = 'semantic' (it is "
                               f"'{self.query_type}'); Azure rejects the request")
        if self.query_rewrites:
            if not self.query_language:
                out.append(f"{pre}query_rewrites needs query_language (the search text's "
                           "language); Azure rejects the request without it")
            if any(vq.text not in (self.keyword_text, "keyword_text") for vq in self.vector_queries):
                out.append(f"{pre}query_rewrites need the vector text identical to the search "
                           "text (Azure); a vector query here embeds a different text")
        if self.scoring_profile:
            try:
                sp = schema.scoring_profile(self.scoring_profile)
            except ConfigError as exc:
                out.append(f"{pre}{exc}")
            else:
                params = {f.tags_parameter for f in sp.functions if f.tags_parameter}
                for t in self.scoring_parameters:
                    name = t.split("-", 1)[0]
                    if name not in params:
                        out.append(f"{pre}scoring parameter '{name}' is not a parameter of scoring "
                                   f"profile '{sp.name}'; its parameters: "
                                   f"{', '.join(sorted(params)) or 'none'}")
        elif self.scoring_parameters:
            out.append(f"{pre}scoring_parameters are set but no scoring_profile uses them")
        vector_names = {f.name for f in schema.vector_fields}
        for i, vq in enumerate(self.vector_queries, 1):
            for name in vq.fields:
                if name not in vector_names:
                    out.append(f"{pre}vector query {i}: '{name}' is not a vector field of index "
                               f"'{schema.name}'; vector fields: {', '.join(sorted(vector_names)) or 'none'}")
            if vq.filter_override:
                out.extend(f"{pre}vector query {i} filter_override: {m}"
                           for m in _filter_problems(vq.filter_override, schema))
        if self.filter:
            out.extend(f"{pre}filter: {m}" for m in _filter_problems(self.filter, schema))
        return out

    def to_toml(self) -> dict[str, Any]:
        """The profile's table as a dict for `tomli_w` (None, empty and name/source left out)."""
        return _toml_dict(self)


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


# ---- policies ----------------------------------------------------------------------
@dataclass(frozen=True)
class Route:
    """Where a question went: its intent, the profile, and why."""

    intent: str
    profile: Profile
    rule: str = "explicit"  # the classifier rule that fired, or "explicit"
    fallback: bool = False  # the intent had no route of its own: the default profile was used

    @property
    def profile_name(self) -> str:
        return self.profile.name


@dataclass(frozen=True)
class Policy:
    """The profiles and the routing table of one retrieval policy."""

    name: str
    description: str
    profiles: Mapping[str, Profile]
    routes: Mapping[str, str]
    default_route: str | None
    security_field: str = DEFAULT_SECURITY_FIELD
    path: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        profiles = dict(self.profiles)
        for key, p in profiles.items():
            if not isinstance(p, Profile) or p.name != key:
                raise ConfigError(f"policy '{self.name}': profiles must map each name to the "
                                  f"Profile of that name; '{key}' does not", path=self.path)
        object.__setattr__(self, "profiles", profiles)
        object.__setattr__(self, "routes", dict(self.routes))
        if not _FIELD_PATH.fullmatch(self.security_field or ""):
            raise ConfigError(f"security_field must be a field name such as 'group_ids', got "
                              f"{self.security_field!r}", path=self.path, key="security_field")
        for intent, target in [*self.routes.items(), (DEFAULT_ROUTE_KEY, self.default_route)]:
            if intent != DEFAULT_ROUTE_KEY and intent not in INTENTS:
                raise ConfigError(_unknown_intent(intent), path=self.path, key=f"routes.{intent}")
            if target is not None and target not in profiles:
                raise ConfigError(_missing_profile(intent, target, profiles), path=self.path,
                                  key=f"routes.{intent}")

    # ---- routing ---------------------------------------------------------------------
    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            raise ConfigError(f"policy '{self.name}' has no profile '{name}'; profiles: "
                              f"{', '.join(self.profiles)}", path=self.path) from None

    def route_intent(self, intent: str, *, rule: str = "explicit") -> Route:
        """The route for a known intent (no classifier)."""
        target = self.routes.get(intent)
        if target is not None:
            return Route(intent, self.profiles[target], rule)
        if self.default_route is not None:
            return Route(intent, self.profiles[self.default_route], rule, fallback=True)
        if len(self.profiles) == 1:
            return Route(intent, next(iter(self.profiles.values())), rule, fallback=True)
        raise ConfigError(f"no route for intent '{intent}' and no default route; add "
                          f"`default = \"<profile>\"` under [routes] (profiles: "
                          f"{', '.join(self.profiles)})", path=self.path, key="routes.default")

    def route(self, question: str) -> Route:
        """Classify `question` (ragdiag.policy.routing) and pick its profile."""
        intent, rule = explain(question)
        return self.route_intent(intent, rule=rule)

    def request_for(self, question: str, identity: Identity | None, *, intent: str | None = None,
                    entities: Sequence[str] = ()) -> tuple[Route, SearchRequest]:
        """Route `question` (an explicit `intent` skips the classifier) and build its request."""
        route = self.route(question) if intent is None else self.route_intent(intent)
        request = route.profile.build(question, identity, security_field=self.security_field,
                                      entities=entities)
        return route, request

    # ---- checks and edits ----------------------------------------------------------
    def validate_against(self, schema: IndexSchema) -> list[str]:
        """Problems of the policy on `schema` (fields, configurations, filters), not raised."""
        out: list[str] = []
        pre = f"{self.path}: " if self.path else ""
        root = self.security_field.split("/")[0]
        if not schema.has_field(root):
            out.append(f"{pre}security field '{self.security_field}' is not in index "
                       f"'{schema.name}'; the identity clause would be rejected (fields: "
                       f"{', '.join(schema.field_names)})")
        elif "/" not in self.security_field:
            f = schema.field(root)
            if not f.filterable:
                out.append(f"{pre}security field '{f.name}' is not filterable; the identity "
                           "clause cannot be applied")
            if f.type != STRING_COLLECTION:
                out.append(f"{pre}security field '{f.name}' is {f.type}, not {STRING_COLLECTION}; "
                           f"the identity clause uses {f.name}/any(...)"
                           + (" (a single-valued string field needs search.in directly)"
                              if f.type == STRING else ""))
        for p in self.profiles.values():
            out.extend(p.validate_against(schema))
        return out

    def with_profile(self, profile: Profile) -> Policy:
        """A copy with `profile` added or replacing the one of the same name."""
        return dataclasses.replace(self, profiles={**self.profiles, profile.name: profile})

    def dump(self) -> str:
        return dump_policy(self)


def _unknown_intent(intent: str) -> str:
    return (f"route '{intent}' is not an intent; intents: {', '.join(INTENTS)} "
            f"(and '{DEFAULT_ROUTE_KEY}' for all others)")


def _missing_profile(intent: str, target: str, profiles: Mapping[str, Any]) -> str:
    return (f"route '{intent}' names profile '{target}', which is not defined; profiles: "
            f"{', '.join(profiles) or 'none'}")


# ---- TOML text -----------------------------------------------------------------------
def dump_profile(profile: Profile) -> str:
    """`[profiles.<name>]` as TOML text, ready to paste into a policy file."""
    return tomli_w.dumps({"profiles": {profile.name: profile.to_toml()}})


def dump_policy(policy: Policy) -> str:
    """The policy as TOML that `load_policy` reads back to an equal Policy (defaults resolved)."""
    head: dict[str, Any] = {"name": policy.name}
    if policy.description:
        head["description"] = policy.description
    head["security_field"] = policy.security_field
    routes = dict(policy.routes)
    if policy.default_route is not None:
        routes[DEFAULT_ROUTE_KEY] = policy.default_route
    data: dict[str, Any] = {"policy": head}
    if routes:
        data["routes"] = routes
    data["profiles"] = {name: p.to_toml() for name, p in policy.profiles.items()}
    return tomli_w.dumps(data)


def load_policy(path: str | Path) -> Policy:
    """Read and check a policy file; errors are ConfigErrors naming file, line and key."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("profiles file not found", path=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the profiles file: {exc}", path=str(path)) from None
    return loads_policy(text, path=str(path), default_name=p.stem)


def loads_policy(text: str, *, path: str | None = None, default_name: str = "policy") -> Policy:
    """Like `load_policy` for TOML text; `path` only names the source in messages."""
    where = path or "<string>"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"at line (\d+)", msg)
        line = int(m.group(1)) if m else getattr(exc, "lineno", None)
        if line is None and "end of document" in msg:
            line = max(1, len(text.splitlines()))
        raise ConfigError(f"TOML syntax error: {msg}", path=where, line=line) from None
    return _Loader(text, where).policy(data, path, default_name)


class _Loader:
    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.loc = TomlLocator(text)

    def fail(self, message: str, table: tuple[Any, ...], key: str | None = None) -> ConfigError:
        dotted = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in table)
        dotted = dotted.replace(".[", "[")
        full = f"{dotted}.{key}" if key and dotted else (key or dotted or None)
        return ConfigError(message, path=self.where, line=self.loc.line(table, key), key=full)

    def table(self, value: Any, table: tuple[Any, ...], key: str | None = None) -> dict[str, Any]:
        if not isinstance(value, dict):
            name = _table_name(table + ((key,) if key else ()))
            raise self.fail(f"{name} must be a table, got {_describe(value)}", table, key)
        return value

    def unknown(self, data: Mapping[str, Any], allowed: Sequence[str], table: tuple[Any, ...]) -> None:
        for key in data:
            if key not in allowed:
                raise self.fail(f"unknown key '{key}' in {_table_name(table)}; allowed keys: "
                                f"{', '.join(allowed)}", table, key)

    def convert(self, conv: Callable[[Any], Any], value: Any, table: tuple[Any, ...], key: str) -> Any:
        try:
            return conv(value)
        except _Invalid as exc:
            raise self.fail(f"'{key}' in {_table_name(table)} {exc}", table, key) from None

    def policy(self, data: dict[str, Any], path: str | None, default_name: str) -> Policy:
        self.unknown(data, _TOP_KEYS, ())
        head = self.table(data.get("policy", {}), (), "policy")
        self.unknown(head, _POLICY_KEYS, ("policy",))
        name = self.convert(_str, head.get("name", default_name), ("policy",), "name")
        description = self.convert(_str, head.get("description", ""), ("policy",), "description")
        security_field = self.convert(_str, head.get("security_field", DEFAULT_SECURITY_FIELD),
                                      ("policy",), "security_field")
        if not _FIELD_PATH.fullmatch(security_field):
            raise self.fail(f"'security_field' in [policy] must be a field name such as "
                            f"'group_ids', got {security_field!r}", ("policy",), "security_field")

        defaults = self.profile_values(self.table(data.get("defaults", {}), (), "defaults"),
                                       ("defaults",))
        raw_profiles = self.table(data.get("profiles", {}), (), "profiles")
        if not raw_profiles:
            raise self.fail("no profiles defined; add a [profiles.<name>] table", (), "profiles")
        profiles: dict[str, Profile] = {}
        for pname, raw in raw_profiles.items():
            table = ("profiles", pname)
            values = {**defaults, **self.profile_values(self.table(raw, ("profiles",), pname), table)}
            profiles[pname] = self.make_profile(pname, values, table)

        routes_raw = self.table(data.get("routes", {}), (), "routes")
        routes: dict[str, str] = {}
        default_route = None
        for intent, target in routes_raw.items():
            target = self.convert(_str, target, ("routes",), intent)
            if intent != DEFAULT_ROUTE_KEY and intent not in INTENTS:
                raise self.fail(_unknown_intent(intent), ("routes",), intent)
            if target not in profiles:
                raise self.fail(_missing_profile(intent, target, profiles), ("routes",), intent)
            if intent == DEFAULT_ROUTE_KEY:
                default_route = target
            else:
                routes[intent] = target
        return Policy(name=name, description=description, profiles=profiles, routes=routes,
                      default_route=default_route, security_field=security_field, path=path)

    def profile_values(self, raw: dict[str, Any], table: tuple[Any, ...]
                       ) -> dict[str, tuple[Any, tuple[Any, ...]]]:
        """Checked values of one profile (or [defaults]) table: key -> (value, origin table)."""
        allowed = [*_PROFILE_CONVERTERS, "vector_queries"]
        self.unknown(raw, allowed, table)
        out: dict[str, tuple[Any, tuple[Any, ...]]] = {}
        for key, value in raw.items():
            if key == "vector_queries":
                out[key] = (self.vector_queries(value, table), table)
            else:
                out[key] = (self.convert(_PROFILE_CONVERTERS[key], value, table, key), table)
        return out

    def vector_queries(self, value: Any, table: tuple[Any, ...]) -> tuple[VectorQuerySpec, ...]:
        if not isinstance(value, list):
            raise self.fail(f"'vector_queries' in {_table_name(table)} must be an array of tables "
                            f"([[...vector_queries]]), got {_describe(value)}", table, "vector_queries")
        out = []
        for i, raw in enumerate(value):
            vt = (*table, "vector_queries", i)
            raw = self.table(raw, table, "vector_queries")
            self.unknown(raw, list(_VQ_CONVERTERS), vt)
            if "fields" not in raw:
                raise self.fail(f"{_table_name(vt)} needs 'fields', e.g. fields = [\"content_vector\"]",
                                vt)
            kwargs = {k: self.convert(_VQ_CONVERTERS[k], v, vt, k) for k, v in raw.items()}
            out.append(VectorQuerySpec(**kwargs, source=(self.where, self.loc.line(vt) or 0)))
        return tuple(out)

    def make_profile(self, name: str, values: Mapping[str, tuple[Any, tuple[Any, ...]]],
                     table: tuple[Any, ...]) -> Profile:
        kwargs = {k: v for k, (v, _) in values.items()}
        # Key combinations that cannot work, reported at the line of the key that is set.
        for index, key, message in _cross_problems({**_PROFILE_DEFAULTS, **kwargs}):
            if index is None:
                origin = values[key][1] if key in values else table
                raise self.fail(f"profile '{name}': {message}", origin, key)
            origin = values["vector_queries"][1]
            raise self.fail(f"profile '{name}': {message}", (*origin, "vector_queries", index), key)
        return Profile(name=name, **kwargs, source=(self.where, self.loc.line(table) or 0))


_PROFILE_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(Profile)
                                     if f.name not in ("name", "source")}


def _table_name(table: tuple[Any, ...]) -> str:
    if not table:
        return "the top level"
    if isinstance(table[-1], int):
        return f"[[{'.'.join(map(str, table[:-1]))}]] #{table[-1] + 1}"
    return f"[{'.'.join(map(str, table))}]"


__all__ = [
    "DEFAULT_SECURITY_FIELD",
    "KEYWORD_TEXT_MODES",
    "SEMANTIC_TEXT_MODES",
    "VECTOR_TEXT_MODES",
    "Identity",
    "Policy",
    "Profile",
    "Route",
    "VectorQuerySpec",
    "dump_policy",
    "dump_profile",
    "load_policy",
    "loads_policy",
]
