"""The search space: per profile, the knobs the optimizer may turn and the options of each.

`knobs_for(profile, schema, ...)` lists them over what ragdiag already models: which existing
profile of the policy the route uses (`profile`: every other profile of the policy is a
candidate, so the optimizer starts from everything a consultant would try by hand), the legs
(`legs`: as they are, keyword only -- every vector query removed --, vector only -- the keyword
leg off), vector `k`, `max_text_recall_size`, the weight of each vector query from 0 (the
query removed: Azure accepts only weights > 0, so weight 0 is written as no query) to 4 (a
keyword leg at a quarter of the vector leg), field and text of each vector query (and one
added vector query on another vector field), the keyword and semantic text modes, the
semantic configuration, the scoring profile, and each pre-rerank filter clause on a
non-relevance field (quality, recency, source, as the prerank_filters check classifies them)
kept, dropped or turned into a boost.

The security clause is guarded, not the legs: no knob touches `security_trimming`, a vector
query's `filter_override` / `override_security`, the policy's `security_field` or a filter
clause on a security field; removing a leg is allowed (a leg that is not sent cannot leak),
and `guard_security` rejects any candidate that changes the clause of what is still sent:
every remaining vector query keeps a (filter_override, override_security) pair of the
baseline's, every security filter clause stays, `security_trimming` is unchanged. Every
candidate passes through it before it is evaluated; an existing profile whose clause differs
from the route's is not offered.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragdiag import odata
from ragdiag.errors import RagdiagError
from ragdiag.model.schema import IndexSchema
from ragdiag.policy import KEYWORD_TEXT_MODES, SEMANTIC_TEXT_MODES, VECTOR_TEXT_MODES, Profile

K_GRID = (20, 50, 100)
RECALL_GRID = (None, 250, 500)  # None: the service default (1000)
WEIGHT_GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)  # 0: the vector query removed
ADDED_VECTOR_WEIGHT = 0.5
TUNABLE_ROLES = ("quality", "recency", "source")  # scope, access and unknown clauses stay
KEEP, DROP = "keep", "drop"
AS_IS, KEYWORD_ONLY, VECTOR_ONLY = "as is", "keyword only", "vector only"
PROFILE_KNOB, LEGS_KNOB = "profile", "legs"


class SecurityClauseError(RagdiagError):
    """A candidate profile differs from its baseline in the security clause (never allowed)."""


@dataclass(frozen=True)
class Knob:
    """One knob of one profile: its name, the value it has now and the values to try."""

    name: str
    current: Any
    options: tuple[Any, ...]
    apply: Callable[[Profile, Any], Profile]

    def candidates(self) -> tuple[Any, ...]:
        return tuple(o for o in self.options if o != self.current)


def security_fields(schema: IndexSchema, security_field: str) -> frozenset[str]:
    """The fields that carry access rights: the schema's and the policy's security field."""
    return frozenset({f.name for f in schema.security_fields} | {security_field.split("/")[0]})


def _clauses(text: str | None) -> tuple[odata.Clause, ...]:
    return odata.clauses(odata.parse(text)) if text else ()


def _without_clause(text: str | None, clause_text: str) -> str | None:
    for c in _clauses(text):
        if c.text == clause_text:
            rest = odata.drop_clause(odata.parse(text or ""), c.index)
            return odata.render(rest) if rest is not None else None
    return text


def _replace_vq(profile: Profile, index: int, **changes: Any) -> Profile:
    vqs = list(profile.vector_queries)
    vqs[index] = dataclasses.replace(vqs[index], **changes)
    return profile.replace(vector_queries=tuple(vqs))


def _scoring_parameters(schema: IndexSchema, name: str | None, current: tuple[str, ...]) -> tuple[str, ...]:
    """Templates for scoring profile `name`: the current ones it has a parameter for, plus
    `<param>-{entities}` for each of its tag functions (the entity matcher fills them)."""
    if name is None:
        return ()
    params = [f.tags_parameter for f in schema.scoring_profile(name).functions if f.tags_parameter]
    kept = [t for t in current if t.split("-", 1)[0] in params]
    have = {t.split("-", 1)[0] for t in kept}
    return tuple(kept + [f"{p}-{{entities}}" for p in params if p not in have])


def _with_scoring(schema: IndexSchema) -> Callable[[Profile, Any], Profile]:
    def apply(p: Profile, name: Any) -> Profile:
        return p.replace(scoring_profile=name, scoring_parameters=_scoring_parameters(
            schema, name, p.scoring_parameters))
    return apply


def boost_profiles(schema: IndexSchema, field_name: str) -> tuple[str, ...]:
    """Scoring profiles of the index with a function on `field_name` (a boost for a filter on it)."""
    return tuple(sp.name for sp in schema.scoring_profiles
                 if any(f.field_name == field_name for f in sp.functions))


def _drop_vq(profile: Profile, index: int) -> Profile:
    """`profile` without vector query `index` (weight 0); refused when nothing would be searched."""
    vqs = tuple(v for i, v in enumerate(profile.vector_queries) if i != index)
    return profile.replace(vector_queries=vqs)


def _keyword_only(profile: Profile) -> Profile:
    if profile.keyword_text == "none":
        return profile.replace(vector_queries=(), keyword_text="verbatim")
    return profile.replace(vector_queries=())


def _vector_only(profile: Profile) -> Profile:
    vqs = tuple(dataclasses.replace(v, text="verbatim") if v.text == "keyword_text" else v
                for v in profile.vector_queries)
    semantic = "verbatim" if profile.semantic_text == "keyword_text" else profile.semantic_text
    return profile.replace(keyword_text="none", vector_queries=vqs, max_text_recall_size=None,
                           semantic_text=semantic)


def with_legs(profile: Profile, option: Any) -> Profile:
    """`profile` with both legs as they are, the keyword leg alone or the vector leg alone."""
    if option == KEYWORD_ONLY:
        return _keyword_only(profile)
    if option == VECTOR_ONLY:
        return _vector_only(profile)
    return profile


def legs_of(profile: Profile) -> str:
    if not profile.vector_queries:
        return KEYWORD_ONLY
    if profile.keyword_text == "none":
        return VECTOR_ONLY
    return AS_IS


def as_route(profile: Profile, other: Profile) -> Profile:
    """Existing profile `other` in the place of `profile` (its settings under `profile`'s name)."""
    return dataclasses.replace(other, name=profile.name, source=profile.source)


def security_differs(baseline: Profile, candidate: Profile, secure: Iterable[str]) -> list[str]:
    """What `candidate` changes in `baseline`'s security clause (empty: nothing)."""
    secure = frozenset(secure)
    problems = []
    if candidate.security_trimming != baseline.security_trimming:
        problems.append("security_trimming changed")
    pairs = {(vq.filter_override, vq.override_security) for vq in baseline.vector_queries}
    default = (None, True)  # a vector query without an override gets the identity clause of the filter
    for i, vq in enumerate(candidate.vector_queries):
        pair = (vq.filter_override, vq.override_security)
        if pair not in pairs and not (pair == default and not pairs):
            problems.append(f"vector query {i + 1}: filter_override / override_security changed")
    kept = {c.text for c in _clauses(candidate.filter)}
    for c in _clauses(baseline.filter):
        if c.fields & secure and c.text not in kept:
            problems.append(f"security clause '{c.text}' removed")
    base_secure = {c.text for c in _clauses(baseline.filter) if c.fields & secure}
    for c in _clauses(candidate.filter):
        if c.fields & secure and c.text not in base_secure:
            problems.append(f"security clause '{c.text}' added or changed")
    return problems


def knobs_for(profile: Profile, schema: IndexSchema, *, security_field: str,
              role_of: Callable[[odata.Clause], str],
              existing: Mapping[str, Profile] | None = None) -> list[Knob]:
    """The knobs of `profile` on `schema`, in the order coordinate descent turns them: the
    existing profiles (`existing`, the policy's) and the legs first, as they move the most."""
    knobs: list[Knob] = []
    vector_names = tuple(f.name for f in schema.vector_fields)
    semantic = profile.query_type == "semantic"
    secure = security_fields(schema, security_field)
    others = {name: p for name, p in (existing or {}).items()
              if name != profile.name and not security_differs(profile, as_route(profile, p), secure)}
    if others:
        by_name = dict(others)
        knobs.append(Knob(PROFILE_KNOB, profile.name, (profile.name, *sorted(by_name)),
                          lambda p, v, by_name=by_name: p if v == p.name else as_route(p, by_name[v])))
    if profile.vector_queries:
        legs = [AS_IS, KEYWORD_ONLY] + ([VECTOR_ONLY] if profile.keyword_text != "none" else [])
        current = legs_of(profile)
        knobs.append(Knob(LEGS_KNOB, current, tuple(dict.fromkeys([current, *legs])), with_legs))
    for clause in _clauses(profile.filter):
        if clause.fields & secure or role_of(clause) not in TUNABLE_ROLES:
            continue
        options: list[Any] = [KEEP, DROP]
        for field_name in sorted(clause.fields):
            options += [f"boost:{sp}" for sp in boost_profiles(schema, field_name)]

        def apply_clause(p: Profile, option: Any, text: str = clause.text) -> Profile:
            p = p.replace(filter=_without_clause(p.filter, text))
            if option.startswith("boost:"):
                p = _with_scoring(schema)(p, option.split(":", 1)[1])
            return p

        knobs.append(Knob(f"filter clause '{clause.text}'", KEEP, tuple(options), apply_clause))
    for i, vq in enumerate(profile.vector_queries):
        n = i + 1
        knobs.append(Knob(f"vector query {n}: k", vq.k, tuple(dict.fromkeys((vq.k, *K_GRID))),
                          lambda p, v, i=i: _replace_vq(p, i, k=v)))
        if len(vector_names) > 1 and len(vq.fields) == 1:
            knobs.append(Knob(f"vector query {n}: fields", vq.fields[0], vector_names,
                              lambda p, v, i=i: _replace_vq(p, i, fields=(v,))))
        knobs.append(Knob(f"vector query {n}: text", vq.text, VECTOR_TEXT_MODES,
                          lambda p, v, i=i: _replace_vq(p, i, text=v)))
        if len(profile.vector_queries) > 1 or profile.keyword_text != "none":
            knobs.append(Knob(f"vector query {n}: weight", vq.weight,
                              tuple(dict.fromkeys((vq.weight, *WEIGHT_GRID))),
                              lambda p, v, i=i: _drop_vq(p, i) if v == 0 else _replace_vq(p, i, weight=v)))
    used = {f for vq in profile.vector_queries for f in vq.fields}
    spare = tuple(f for f in vector_names if f not in used)
    if profile.vector_queries and spare:
        def add_vq(p: Profile, name: Any) -> Profile:
            if name is None:
                return p
            first = p.vector_queries[0]
            extra = dataclasses.replace(first, fields=(name,), weight=ADDED_VECTOR_WEIGHT)
            return p.replace(vector_queries=(*p.vector_queries, extra))
        knobs.append(Knob("added vector query (weight 0.5)", None, (None, *spare), add_vq))
    knobs.append(Knob("keyword_text", profile.keyword_text, KEYWORD_TEXT_MODES,
                      lambda p, v: p.replace(keyword_text=v)))
    if profile.keyword_text != "none" and profile.vector_queries:
        knobs.append(Knob("max_text_recall_size", profile.max_text_recall_size,
                          tuple(dict.fromkeys((profile.max_text_recall_size, *RECALL_GRID))),
                          lambda p, v: p.replace(max_text_recall_size=v)))
    if semantic:
        knobs.append(Knob("semantic_text", profile.semantic_text, SEMANTIC_TEXT_MODES,
                          lambda p, v: p.replace(semantic_text=v)))
        configs = tuple(c.name for c in schema.semantic_configurations)
        if len(configs) > 1:
            current = profile.semantic_configuration or schema.default_semantic_configuration
            knobs.append(Knob("semantic_configuration", current, configs,
                              lambda p, v: p.replace(semantic_configuration=v)))
    if schema.scoring_profiles:
        knobs.append(Knob("scoring_profile", profile.scoring_profile,
                          (None, *(sp.name for sp in schema.scoring_profiles)), _with_scoring(schema)))
    return knobs


def guard_security(baseline: Profile, candidate: Profile, *, secure: Iterable[str]) -> None:
    """Raise SecurityClauseError unless `candidate` keeps the baseline's security clause intact
    (`security_differs`): the same `security_trimming`, every security filter clause still
    present and none added, every vector query still sent carrying a (filter_override,
    override_security) pair of the baseline's (an added one: no override, the identity clause
    of the filter). Removing a leg does not touch the clause and passes."""
    problems = security_differs(baseline, candidate, secure)
    if problems:
        raise SecurityClauseError(f"profile '{baseline.name}': the optimizer produced a candidate that "
                                  f"touches the security clause ({'; '.join(problems)}); this is a bug "
                                  "in the search space, the candidate was not evaluated")


__all__ = ["ADDED_VECTOR_WEIGHT", "AS_IS", "DROP", "KEYWORD_ONLY", "LEGS_KNOB", "PROFILE_KNOB", "VECTOR_ONLY",
           "as_route", "legs_of", "security_differs", "with_legs", "K_GRID", "KEEP", "RECALL_GRID", "TUNABLE_ROLES", "WEIGHT_GRID",
           "Knob", "SecurityClauseError", "boost_profiles", "guard_security", "knobs_for", "security_fields"]
