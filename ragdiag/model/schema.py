"""The index schema, described the way Azure AI Search describes an index.

One model serves both targets: the local hybrid reads it to know which fields
are searchable, filterable, vectors or security fields; the Azure target maps a
live index definition onto it. `from_azure()` / `to_azure()` speak the REST
shape (camelCase) so a schema file is a real Azure index definition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError

STRING = "Edm.String"
INT32 = "Edm.Int32"
INT64 = "Edm.Int64"
DOUBLE = "Edm.Double"
BOOLEAN = "Edm.Boolean"
DATETIME = "Edm.DateTimeOffset"
STRING_COLLECTION = "Collection(Edm.String)"
VECTOR = "Collection(Edm.Single)"

SCALAR_TYPES = (STRING, INT32, INT64, DOUBLE, BOOLEAN, DATETIME)


@dataclass(frozen=True)
class Field:
    """One index field with Azure's attribute flags."""

    name: str
    type: str
    key: bool = False
    searchable: bool = False
    filterable: bool = False
    retrievable: bool = True
    sortable: bool = False
    facetable: bool = False
    dimensions: int | None = None
    vector_profile: str | None = None
    analyzer: str | None = None
    # Native document-level access control ("userIds" | "groupIds" | "rbacScope").
    permission_filter: str | None = None

    @property
    def is_vector(self) -> bool:
        return self.type == VECTOR

    @property
    def is_collection(self) -> bool:
        return self.type.startswith("Collection(")

    @property
    def element_type(self) -> str:
        return self.type[len("Collection("):-1] if self.is_collection else self.type


@dataclass(frozen=True)
class SemanticConfiguration:
    """Which fields the semantic ranker reads: title, content, keywords."""

    name: str
    title_field: str | None
    content_fields: tuple[str, ...]
    keywords_fields: tuple[str, ...] = ()
    ranking_order: str = "BoostedRerankerScore"


@dataclass(frozen=True)
class ScoringFunction:
    """A freshness, magnitude or tag function of a scoring profile."""

    type: str  # magnitude | freshness | tag
    field_name: str
    boost: float
    interpolation: str = "linear"
    # magnitude
    boosting_range_start: float | None = None
    boosting_range_end: float | None = None
    constant_boost_beyond_range: bool = False
    # freshness (XSD dayTimeDuration, e.g. "P365D")
    boosting_duration: str | None = None
    # tag
    tags_parameter: str | None = None


@dataclass(frozen=True)
class ScoringProfile:
    name: str
    text_weights: Mapping[str, float] = field(default_factory=dict)
    functions: tuple[ScoringFunction, ...] = ()
    function_aggregation: str = "sum"


@dataclass(frozen=True)
class VectorSearchProfile:
    name: str
    algorithm: str  # name of an algorithm configuration
    kind: str = "hnsw"  # hnsw | exhaustiveKnn
    metric: str = "cosine"
    m: int = 4
    ef_construction: int = 400
    ef_search: int = 500


@dataclass(frozen=True)
class IndexSchema:
    """An index definition: fields, semantic configurations, scoring profiles."""

    name: str
    fields: tuple[Field, ...]
    semantic_configurations: tuple[SemanticConfiguration, ...] = ()
    default_semantic_configuration: str | None = None
    scoring_profiles: tuple[ScoringProfile, ...] = ()
    default_scoring_profile: str | None = None
    vector_profiles: tuple[VectorSearchProfile, ...] = ()
    permission_filter_option: str | None = None  # "enabled" when native ACL is on

    # ---- lookups -------------------------------------------------------------
    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise ConfigError(
            f"index '{self.name}' has no field '{name}'; fields: {', '.join(self.field_names)}"
        )

    def has_field(self, name: str) -> bool:
        return any(f.name == name for f in self.fields)

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def key_field(self) -> Field:
        for f in self.fields:
            if f.key:
                return f
        raise ConfigError(f"index '{self.name}' has no key field")

    @property
    def searchable_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.searchable and not f.is_vector)

    @property
    def filterable_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.filterable and not f.is_vector)

    @property
    def retrievable_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.retrievable and not f.is_vector)

    @property
    def vector_fields(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.is_vector)

    @property
    def security_fields(self) -> tuple[Field, ...]:
        """Fields that carry access rights: native permission filters or ACL-named collections."""
        out = []
        for f in self.fields:
            if f.permission_filter:
                out.append(f)
            elif f.filterable and f.type == STRING_COLLECTION and _looks_like_acl(f.name):
                out.append(f)
        return tuple(out)

    def semantic_configuration(self, name: str | None = None) -> SemanticConfiguration:
        name = name or self.default_semantic_configuration
        for c in self.semantic_configurations:
            if c.name == name:
                return c
        if name is None and self.semantic_configurations:
            return self.semantic_configurations[0]
        known = ", ".join(c.name for c in self.semantic_configurations) or "none"
        raise ConfigError(f"index '{self.name}' has no semantic configuration '{name}'; known: {known}")

    def scoring_profile(self, name: str) -> ScoringProfile:
        for p in self.scoring_profiles:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.scoring_profiles) or "none"
        raise ConfigError(f"index '{self.name}' has no scoring profile '{name}'; known: {known}")

    def vector_profile(self, name: str | None) -> VectorSearchProfile | None:
        for p in self.vector_profiles:
            if p.name == name:
                return p
        return None

    def with_name(self, name: str) -> IndexSchema:
        return replace(self, name=name)

    # ---- Azure REST shape ------------------------------------------------------
    def to_azure(self) -> dict[str, Any]:
        """The index definition as Azure's REST API returns it (GET /indexes/NAME)."""
        fields = []
        for f in self.fields:
            d: dict[str, Any] = {
                "name": f.name,
                "type": f.type,
                "key": f.key,
                "searchable": f.searchable,
                "filterable": f.filterable,
                "retrievable": f.retrievable,
                "sortable": f.sortable,
                "facetable": f.facetable,
            }
            if f.dimensions is not None:
                d["dimensions"] = f.dimensions
                d["vectorSearchProfile"] = f.vector_profile
            if f.analyzer:
                d["analyzer"] = f.analyzer
            if f.permission_filter:
                d["permissionFilter"] = f.permission_filter
            fields.append(d)
        out: dict[str, Any] = {"name": self.name, "fields": fields}
        if self.scoring_profiles:
            out["scoringProfiles"] = [_profile_to_azure(p) for p in self.scoring_profiles]
        out["defaultScoringProfile"] = self.default_scoring_profile
        if self.semantic_configurations:
            out["semantic"] = {
                "defaultConfiguration": self.default_semantic_configuration,
                "configurations": [
                    {
                        "name": c.name,
                        "rankingOrder": c.ranking_order,
                        "prioritizedFields": {
                            "titleField": {"fieldName": c.title_field} if c.title_field else None,
                            "prioritizedContentFields": [{"fieldName": n} for n in c.content_fields],
                            "prioritizedKeywordsFields": [{"fieldName": n} for n in c.keywords_fields],
                        },
                    }
                    for c in self.semantic_configurations
                ],
            }
        if self.vector_profiles:
            out["vectorSearch"] = {
                "algorithms": [
                    {
                        "name": p.algorithm,
                        "kind": p.kind,
                        **(
                            {"hnswParameters": {"metric": p.metric, "m": p.m,
                                                "efConstruction": p.ef_construction,
                                                "efSearch": p.ef_search}}
                            if p.kind == "hnsw"
                            else {"exhaustiveKnnParameters": {"metric": p.metric}}
                        ),
                    }
                    for p in self.vector_profiles
                ],
                "profiles": [{"name": p.name, "algorithm": p.algorithm} for p in self.vector_profiles],
            }
        if self.permission_filter_option:
            out["permissionFilterOption"] = self.permission_filter_option
        return out

    @classmethod
    def from_azure(cls, data: Mapping[str, Any]) -> IndexSchema:
        """Map an Azure index definition (REST JSON) onto the schema model."""
        try:
            fields = []
            for d in data["fields"]:
                retrievable = d.get("retrievable")
                if retrievable is None:
                    retrievable = not d.get("hidden", False)
                fields.append(Field(
                    name=d["name"],
                    type=d["type"],
                    key=bool(d.get("key", False)),
                    searchable=bool(d.get("searchable", False)),
                    filterable=bool(d.get("filterable", False)),
                    retrievable=bool(retrievable),
                    sortable=bool(d.get("sortable", False)),
                    facetable=bool(d.get("facetable", False)),
                    dimensions=d.get("dimensions"),
                    vector_profile=d.get("vectorSearchProfile"),
                    analyzer=d.get("analyzer"),
                    permission_filter=d.get("permissionFilter"),
                ))
            profiles = tuple(_profile_from_azure(p) for p in data.get("scoringProfiles") or ())
            sem = data.get("semantic") or {}
            configs = []
            for c in sem.get("configurations") or ():
                pf = c.get("prioritizedFields") or {}
                title = (pf.get("titleField") or {}).get("fieldName")
                configs.append(SemanticConfiguration(
                    name=c["name"],
                    title_field=title,
                    content_fields=tuple(x["fieldName"] for x in pf.get("prioritizedContentFields") or ()),
                    keywords_fields=tuple(x["fieldName"] for x in pf.get("prioritizedKeywordsFields") or ()),
                    ranking_order=c.get("rankingOrder") or "BoostedRerankerScore",
                ))
            vs = data.get("vectorSearch") or {}
            algos = {a["name"]: a for a in vs.get("algorithms") or ()}
            vprofiles = []
            for p in vs.get("profiles") or ():
                a = algos.get(p.get("algorithm"), {})
                params = a.get("hnswParameters") or a.get("exhaustiveKnnParameters") or {}
                vprofiles.append(VectorSearchProfile(
                    name=p["name"], algorithm=p.get("algorithm", ""), kind=a.get("kind", "hnsw"),
                    metric=params.get("metric", "cosine"), m=params.get("m", 4),
                    ef_construction=params.get("efConstruction", 400),
                    ef_search=params.get("efSearch", 500),
                ))
            return cls(
                name=data["name"],
                fields=tuple(fields),
                semantic_configurations=tuple(configs),
                default_semantic_configuration=sem.get("defaultConfiguration"),
                scoring_profiles=profiles,
                default_scoring_profile=data.get("defaultScoringProfile"),
                vector_profiles=tuple(vprofiles),
                permission_filter_option=data.get("permissionFilterOption"),
            )
        except (KeyError, TypeError) as exc:
            raise ConfigError(
                f"not an Azure index definition: missing or malformed {exc}; expected "
                "{'name': ..., 'fields': [{'name': ..., 'type': ...}, ...]}"
            ) from exc

    @classmethod
    def load(cls, path: str | Path) -> IndexSchema:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise ConfigError("index definition file not found", path=str(path)) from exc
        except json.JSONDecodeError as exc:
            raise ConfigError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from exc
        return cls.from_azure(data)


def _looks_like_acl(name: str) -> bool:
    n = name.lower()
    return any(t in n for t in ("group", "acl", "oid", "user_ids", "userids", "permission", "allowed"))


def _profile_to_azure(p: ScoringProfile) -> dict[str, Any]:
    funcs = []
    for f in p.functions:
        d: dict[str, Any] = {"type": f.type, "fieldName": f.field_name, "boost": f.boost,
                             "interpolation": f.interpolation}
        if f.type == "magnitude":
            d["magnitude"] = {"boostingRangeStart": f.boosting_range_start,
                              "boostingRangeEnd": f.boosting_range_end,
                              "constantBoostBeyondRange": f.constant_boost_beyond_range}
        elif f.type == "freshness":
            d["freshness"] = {"boostingDuration": f.boosting_duration}
        elif f.type == "tag":
            d["tag"] = {"tagsParameter": f.tags_parameter}
        funcs.append(d)
    out: dict[str, Any] = {"name": p.name, "functionAggregation": p.function_aggregation,
                           "functions": funcs}
    if p.text_weights:
        out["text"] = {"weights": dict(p.text_weights)}
    return out


def _profile_from_azure(d: Mapping[str, Any]) -> ScoringProfile:
    funcs = []
    for f in d.get("functions") or ():
        mag = f.get("magnitude") or {}
        fr = f.get("freshness") or {}
        tag = f.get("tag") or {}
        funcs.append(ScoringFunction(
            type=f["type"], field_name=f["fieldName"], boost=float(f["boost"]),
            interpolation=f.get("interpolation", "linear"),
            boosting_range_start=mag.get("boostingRangeStart"),
            boosting_range_end=mag.get("boostingRangeEnd"),
            constant_boost_beyond_range=bool(mag.get("constantBoostBeyondRange", False)),
            boosting_duration=fr.get("boostingDuration"),
            tags_parameter=tag.get("tagsParameter"),
        ))
    return ScoringProfile(
        name=d["name"],
        text_weights=dict((d.get("text") or {}).get("weights") or {}),
        functions=tuple(funcs),
        function_aggregation=d.get("functionAggregation", "sum"),
    )


def fields_of(schema: IndexSchema, names: Iterable[str]) -> tuple[Field, ...]:
    return tuple(schema.field(n) for n in names)
