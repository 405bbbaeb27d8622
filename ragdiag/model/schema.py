"""The index schema, described the way Azure AI Search describes an index.

One model serves both targets: the local hybrid reads it to know which fields
are searchable, filterable, vectors or security fields; the Azure target maps a
live index definition onto it. `from_azure()` / `to_azure()` speak the REST
shape (camelCase) so a schema file is a real Azure index definition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError
from ragdiag.inputs.limits import excerpt

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
    #: the vectorizer that turns query text into a vector (``kind: "text"`` queries need one)
    vectorizer: str | None = None


@dataclass(frozen=True)
class Vectorizer:
    """An entry of ``vectorSearch.vectorizers``: what embeds query text at search time."""

    name: str
    kind: str  # azureOpenAI | customWebApi | aml | aiServicesVision | ...
    model: str | None = None  # the model name, where the definition says it (azureOpenAI: modelName)


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
    vectorizers: tuple[Vectorizer, ...] = ()

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

    def field_vectorizer(self, name: str) -> Vectorizer | None:
        """The vectorizer of a vector field's profile (None: the field has none, or it is unknown)."""
        prof = self.vector_profile(self.field(name).vector_profile)
        if prof is None or not prof.vectorizer:
            return None
        found = [v for v in self.vectorizers if v.name == prof.vectorizer]
        return found[0] if found else Vectorizer(prof.vectorizer, "unknown")

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
                "profiles": [{"name": p.name, "algorithm": p.algorithm,
                              **({"vectorizer": p.vectorizer} if p.vectorizer else {})}
                             for p in self.vector_profiles],
            }
            if self.vectorizers:
                out["vectorSearch"]["vectorizers"] = [_vectorizer_to_azure(v) for v in self.vectorizers]
        if self.permission_filter_option:
            out["permissionFilterOption"] = self.permission_filter_option
        return out

    @classmethod
    def from_azure(cls, data: Mapping[str, Any], *, path: str | None = None) -> IndexSchema:
        """Map an Azure index definition (REST JSON) onto the schema model.

        Every value is type-checked: a malformed definition (from a file or from the
        service) is a ConfigError naming the JSON path of the value (and, for a file
        read by `load`, its line), never a KeyError or TypeError.
        """
        r = _AzureReader(path)
        top = r.mapping(data, "the index definition")
        fields = []
        seen: dict[str, str] = {}
        for i, d in enumerate(r.array(top, "fields", "the index definition", required=True)):
            where = f"fields[{i}]"
            d = r.mapping(d, where, parent=top)
            name = r.string(d, "name", where, required=True)
            where = f"fields[{i}] ({excerpt(name, 40)})"
            if name in seen:
                raise r.error(f"{where}: the field name is used twice (also by {seen[name]})", d)
            seen[name] = f"fields[{i}]"
            ftype = r.string(d, "type", where, required=True)
            if not _TYPE_RE.fullmatch(ftype):
                raise r.error(f"{where}: 'type' must be an Edm type such as \"Edm.String\" or "
                              f"\"Collection(Edm.Single)\", got {excerpt(ftype)}", d)
            retrievable = r.boolean(d, "retrievable", where)
            if retrievable is None:
                retrievable = not r.boolean(d, "hidden", where, False)
            dimensions = r.integer(d, "dimensions", where, 1, 65536)
            if ftype == VECTOR and dimensions is None:
                raise r.error(f"{where}: a vector field (Collection(Edm.Single)) needs 'dimensions'", d)
            fields.append(Field(
                name=name, type=ftype,
                key=r.boolean(d, "key", where, False),
                searchable=r.boolean(d, "searchable", where, False),
                filterable=r.boolean(d, "filterable", where, False),
                retrievable=bool(retrievable),
                sortable=r.boolean(d, "sortable", where, False),
                facetable=r.boolean(d, "facetable", where, False),
                dimensions=dimensions,
                vector_profile=r.string(d, "vectorSearchProfile", where),
                analyzer=r.string(d, "analyzer", where),
                permission_filter=r.string(d, "permissionFilter", where),
            ))
        keys = [f.name for f in fields if f.key]
        if len(keys) > 1:
            raise r.error(f"the index definition has {len(keys)} key fields "
                          f"({excerpt(', '.join(keys), 80)}); an index has exactly one", top)
        profiles = tuple(_profile_from_azure(r.mapping(p, f"scoringProfiles[{i}]", parent=top), r,
                                             f"scoringProfiles[{i}]")
                         for i, p in enumerate(r.array(top, "scoringProfiles", "the index definition")))
        sem = r.mapping(top.get("semantic") or {}, "semantic", parent=top)
        configs = []
        for i, c in enumerate(r.array(sem, "configurations", "semantic")):
            where = f"semantic.configurations[{i}]"
            c = r.mapping(c, where, parent=sem)
            pf = r.mapping(c.get("prioritizedFields") or {}, f"{where}.prioritizedFields", parent=c)
            title = pf.get("titleField")
            title_name = (r.string(r.mapping(title, f"{where}.prioritizedFields.titleField", parent=pf),
                                   "fieldName", f"{where}.prioritizedFields.titleField")
                          if title is not None else None)

            def names(key: str, pf: Mapping[str, Any] = pf, where: str = where) -> tuple[str, ...]:
                items = r.array(pf, key, f"{where}.prioritizedFields")
                return tuple(r.string(r.mapping(x, f"{where}.prioritizedFields.{key}[{j}]", parent=pf),
                                      "fieldName", f"{where}.prioritizedFields.{key}[{j}]", required=True)
                             for j, x in enumerate(items))

            configs.append(SemanticConfiguration(
                name=r.string(c, "name", where, required=True),
                title_field=title_name,
                content_fields=names("prioritizedContentFields"),
                keywords_fields=names("prioritizedKeywordsFields"),
                ranking_order=r.string(c, "rankingOrder", where) or "BoostedRerankerScore",
            ))
        vs = r.mapping(top.get("vectorSearch") or {}, "vectorSearch", parent=top)
        algos: dict[str, Mapping[str, Any]] = {}
        for i, a in enumerate(r.array(vs, "algorithms", "vectorSearch")):
            a = r.mapping(a, f"vectorSearch.algorithms[{i}]", parent=vs)
            algos[r.string(a, "name", f"vectorSearch.algorithms[{i}]", required=True)] = a
        vprofiles = []
        for i, p in enumerate(r.array(vs, "profiles", "vectorSearch")):
            where = f"vectorSearch.profiles[{i}]"
            p = r.mapping(p, where, parent=vs)
            algorithm = r.string(p, "algorithm", where) or ""
            a = algos.get(algorithm, {})
            params_key = "hnswParameters" if a.get("hnswParameters") else "exhaustiveKnnParameters"
            params = r.mapping(a.get(params_key) or {}, f"vectorSearch.algorithms[{algorithm}].{params_key}",
                               parent=a)
            pwhere = f"the parameters of algorithm {excerpt(algorithm, 40)}"
            vprofiles.append(VectorSearchProfile(
                name=r.string(p, "name", where, required=True), algorithm=algorithm,
                kind=r.string(a, "kind", pwhere) or "hnsw",
                metric=r.string(params, "metric", pwhere) or "cosine",
                m=r.integer(params, "m", pwhere, 1, 1_000_000, 4),
                ef_construction=r.integer(params, "efConstruction", pwhere, 1, 1_000_000_000, 400),
                ef_search=r.integer(params, "efSearch", pwhere, 1, 1_000_000_000, 500),
                vectorizer=r.string(p, "vectorizer", where),
            ))
        vectorizers = []
        for i, z in enumerate(r.array(vs, "vectorizers", "vectorSearch")):
            where = f"vectorSearch.vectorizers[{i}]"
            z = r.mapping(z, where, parent=vs)
            params = next((z[k] for k in _VECTORIZER_PARAMS if isinstance(z.get(k), Mapping)), {})
            model = params.get("modelName") or params.get("modelVersion")
            vectorizers.append(Vectorizer(name=r.string(z, "name", where, required=True),
                                          kind=r.string(z, "kind", where) or "unknown",
                                          model=str(model) if model else None))
        return cls(
            name=r.string(top, "name", "the index definition", required=True),
            fields=tuple(fields),
            semantic_configurations=tuple(configs),
            default_semantic_configuration=r.string(sem, "defaultConfiguration", "semantic"),
            scoring_profiles=profiles,
            default_scoring_profile=r.string(top, "defaultScoringProfile", "the index definition"),
            vector_profiles=tuple(vprofiles),
            permission_filter_option=r.string(top, "permissionFilterOption", "the index definition"),
            vectorizers=tuple(vectorizers),
        )

    @classmethod
    def load(cls, path: str | Path) -> IndexSchema:
        """Read an index definition file (Azure's REST JSON); errors name the file and line."""
        from ragdiag.inputs.limits import loads_json_lined, read_text

        text = read_text(path, what="index definition", error=ConfigError)
        data = loads_json_lined(text, path=str(path), what="the index definition", error=ConfigError)
        return cls.from_azure(data, path=str(path))


# where a vectorizer's parameters sit, by kind (the REST names)
_VECTORIZER_PARAMS = ("azureOpenAIParameters", "customWebApiParameters", "amlParameters",
                      "aiServicesVisionParameters")


def _vectorizer_to_azure(v: Vectorizer) -> dict[str, Any]:
    out: dict[str, Any] = {"name": v.name, "kind": v.kind}
    if v.model and v.kind == "azureOpenAI":  # only Azure OpenAI's parameters name the model
        out["azureOpenAIParameters"] = {"modelName": v.model}
    return out


_TYPE_RE = re.compile(r"(Collection\()?Edm\.[A-Za-z][A-Za-z0-9]*\)?")


class _AzureReader:
    """Typed access to an index definition's values; errors carry the JSON path and line."""

    def __init__(self, path: str | None) -> None:
        self.path = path

    def error(self, message: str, obj: Any) -> ConfigError:
        if self.path is None:
            message = f"not a valid Azure index definition: {message}"
        return ConfigError(message, path=self.path, line=getattr(obj, "line", None))

    def mapping(self, value: Any, where: str, parent: Any = None) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(f"{where} must be an object, got {_kind(value)} {excerpt(value)}; "
                             "expected {\"name\": ..., \"fields\": [{\"name\": ..., \"type\": ...}]}",
                             value if hasattr(value, "line") else parent)
        return value

    def array(self, obj: Mapping[str, Any], key: str, where: str, required: bool = False) -> list[Any]:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(f"{where} needs '{key}', a list", obj)
            return []
        if not isinstance(value, list | tuple):
            raise self.error(f"{where}: '{key}' must be a list, got {_kind(value)} {excerpt(value)}", obj)
        return list(value)

    def string(self, obj: Mapping[str, Any], key: str, where: str, required: bool = False) -> Any:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(f"{where} needs '{key}', a non-empty string", obj)
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.error(f"{where}: '{key}' must be a{' non-empty' if required else ''} string, "
                             f"got {_kind(value)} {excerpt(value)}", obj)
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, where: str, default: bool | None = None) -> Any:
        value = obj.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.error(f"{where}: '{key}' must be true or false, got {_kind(value)} "
                             f"{excerpt(value)}", obj)
        return value

    def integer(self, obj: Mapping[str, Any], key: str, where: str, lo: int, hi: int,
                default: int | None = None) -> Any:
        value = obj.get(key)
        if value is None:
            return default
        if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
            raise self.error(f"{where}: '{key}' must be an integer from {lo} to {hi:,}, got "
                             f"{_kind(value)} {excerpt(value)}", obj)
        return value

    def number(self, obj: Mapping[str, Any], key: str, where: str, required: bool = False) -> Any:
        value = obj.get(key)
        if value is None:
            if required:
                raise self.error(f"{where} needs '{key}', a number", obj)
            return None
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise self.error(f"{where}: '{key}' must be a finite number, got {_kind(value)} "
                             f"{excerpt(value)}", obj)
        return value


def _kind(value: Any) -> str:
    for t, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                    (list, "a list"), (Mapping, "an object")):
        if isinstance(value, t):
            return name
    return "null" if value is None else type(value).__name__


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


def _profile_from_azure(d: Mapping[str, Any], r: _AzureReader | None = None,
                        where: str = "scoringProfiles[]") -> ScoringProfile:
    r = r or _AzureReader(None)
    name = r.string(d, "name", where, required=True)
    where = f"scoring profile {excerpt(name, 40)}"
    funcs = []
    for i, f in enumerate(r.array(d, "functions", where)):
        fwhere = f"{where}, functions[{i}]"
        f = r.mapping(f, fwhere, parent=d)
        mag = r.mapping(f.get("magnitude") or {}, f"{fwhere}.magnitude", parent=f)
        fr = r.mapping(f.get("freshness") or {}, f"{fwhere}.freshness", parent=f)
        tag = r.mapping(f.get("tag") or {}, f"{fwhere}.tag", parent=f)
        funcs.append(ScoringFunction(
            type=r.string(f, "type", fwhere, required=True),
            field_name=r.string(f, "fieldName", fwhere, required=True),
            boost=float(r.number(f, "boost", fwhere, required=True)),
            interpolation=r.string(f, "interpolation", fwhere) or "linear",
            boosting_range_start=r.number(mag, "boostingRangeStart", f"{fwhere}.magnitude"),
            boosting_range_end=r.number(mag, "boostingRangeEnd", f"{fwhere}.magnitude"),
            constant_boost_beyond_range=r.boolean(mag, "constantBoostBeyondRange", f"{fwhere}.magnitude",
                                                  False),
            boosting_duration=r.string(fr, "boostingDuration", f"{fwhere}.freshness"),
            tags_parameter=r.string(tag, "tagsParameter", f"{fwhere}.tag"),
        ))
    text = r.mapping(d.get("text") or {}, f"{where}.text", parent=d)
    weights = r.mapping(text.get("weights") or {}, f"{where}.text.weights", parent=text)
    return ScoringProfile(
        name=name,
        text_weights={str(k): float(r.number(weights, k, f"{where}.text.weights", required=True))
                      for k in weights},
        functions=tuple(funcs),
        function_aggregation=r.string(d, "functionAggregation", where) or "sum",
    )


def fields_of(schema: IndexSchema, names: Iterable[str]) -> tuple[Field, ...]:
    return tuple(schema.field(n) for n in names)
