"""Ablation of every profile element: what each element costs or earns, measured on the goldset.

A check that recognises the elements it was taught and passes the rest is the toy version of
an audit. Here every element of every profile that changes the ranking is listed
(`elements_of`), neutralised -- dropped, or set to its documented default -- as one what-if,
and measured on the goldset questions its profile serves, whatever its name or role:

=======================  =====================================  ===================
element                  neutralised means                      owner check
=======================  =====================================  ===================
filter clause            the clause dropped (security: never)   prerank_filters
filter_override clause   the clause dropped from the override   prerank_filters
vector_filter_mode       ``preFilter`` (the default)            pool_size
k (per vector query)     50 (the documented default count)      pool_size
max_text_recall_size     unset (1,000, the default)             pool_size
weight (per vector q.)   1.0 (the default)                      pool_size
exhaustive               false (HNSW, the default)              pool_size
scoring profile          none (and no scoring parameters)       reranker_scores
scoring parameter        the parameter left out                 reranker_scores
semantic configuration   the index's default configuration      reranker_scores
semantic ranking         off (fused order)                      reranker_scores
keyword text             the question verbatim                  shared_query_text
semantic text            the question verbatim                  shared_query_text
vector text (per vq)     the question verbatim                  shared_query_text
vector field (per vq)    each other vector field of its size    shared_query_text
vector query             removed (when another leg remains)     shared_query_text
search_fields            every searchable field (the default)   shared_query_text
search_mode              ``any`` (the default)                  shared_query_text
=======================  =====================================  ===================

An element already at its default has nothing to neutralise (``at_default``); one that
cannot be changed without breaking the profile says why (``not_ablatable``). ``top``,
``select``, captions and answers do not change the ranking the goldset measures and are not
listed. The security clause (the identity's, or a clause on a security field) is outside the
ablation by construction: no what-if removes it.

Each what-if is one cached run of the profile's routed questions through the runner (all of
them batched in one `Runner.run_fused` call, so the local target embeds once and reuses its
stage caches; a warm trace store answers them all). Metrics: nDCG@10 and recall@50 with and
without the element on the same questions, the paired t-test of each (the Wilcoxon signed-rank
test where the t-test is undefined: every question changed by the same amount), and Holm's correction
over the family of tests on the same questions (every element x metric of one profile that
changed at least one question's value; profiles serve disjoint questions): an element **hurts** when
neutralising it raises a metric with Holm-adjusted p < alpha, **helps** when it lowers one
(and none rises), else it is **neutral**. The owner check judges its elements with the
thresholds of its own spec (`ragdiag.checks._ablation`).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag import odata
from ragdiag.errors import ConfigError, InputDataError, RagdiagError

__all__ = ["OWNERS", "METRICS", "Element", "ElementResult", "Ablation", "elements_of", "measure_ablation",
           "skipped_ablation"]

METRICS = ("ndcg@10", "recall@50")
DEFAULT_K = 50  # "Both k and top are optional. Unspecified, the default number of results is 50."
DEFAULT_ALPHA = 0.05

OWNERS: Mapping[str, str] = {
    "filter_clause": "prerank_filters",
    "override_clause": "prerank_filters",
    "vector_filter_mode": "pool_size",
    "k": "pool_size",
    "max_text_recall_size": "pool_size",
    "weight": "pool_size",
    "exhaustive": "pool_size",
    "scoring_profile": "reranker_scores",
    "scoring_parameter": "reranker_scores",
    "semantic_configuration": "reranker_scores",
    "semantic_ranking": "reranker_scores",
    "keyword_text": "shared_query_text",
    "semantic_text": "shared_query_text",
    "vector_text": "shared_query_text",
    "vector_field": "shared_query_text",
    "vector_query": "shared_query_text",
    "search_fields": "shared_query_text",
    "search_mode": "shared_query_text",
}


@dataclass(frozen=True)
class Element:
    """One element of one profile, and its neutralised form.

    `element` says what it is now (``"confidence_score ge 0.85"``, ``"k = 20"``), `neutral`
    what it becomes (``"dropped"``, ``"k = 50"``); `apply` turns the profile into its
    neutralised variant (None: nothing to neutralise, `status` says why)."""

    id: str
    profile: str
    kind: str
    element: str
    neutral: str
    owner: str
    where: str | None = None  # "filter", "vector query 1", ...
    role: str | None = None  # a filter clause's role where classified (informational only)
    status: str = "measured"  # measured | at_default | not_ablatable
    note: str | None = None
    value: str | None = None  # the neutral value where it has one (k 50, the other field, ...)
    apply: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ElementResult:
    """The measurement of one element: metrics with it (as configured) and without it
    (neutralised), on the same questions; p (paired t-test) and p_holm (Holm over the tests on
    the same profile's questions, `family` of them); the verdict (hurts | helps | neutral | at_default |
    not_ablatable | not_measured)."""

    element: Element
    questions: int = 0
    routes: tuple[str, ...] = ()
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    verdict: str = "not_measured"
    reason: str | None = None
    judged_by: str | None = None
    family: int = 0  # the tests Holm corrected over together (those on this profile's questions)
    failed: int = 0  # requests of the what-if that failed (of `questions`)

    @property
    def id(self) -> str:
        return self.element.id

    @property
    def owner(self) -> str:
        return self.element.owner

    def gain(self, metric: str) -> float | None:
        """What neutralising the element changes (without - with); > 0: the element costs this much."""
        m = self.metrics.get(metric) or {}
        return m.get("delta")

    def p_holm(self, metric: str) -> float | None:
        return (self.metrics.get(metric) or {}).get("p_holm")

    def worst(self) -> tuple[str | None, float | None, float | None]:
        """(metric, gain, p_holm) of the metric neutralising the element raises most."""
        best: tuple[str | None, float | None, float | None] = (None, None, None)
        for m in METRICS:
            g = self.gain(m)
            if g is not None and (best[1] is None or g > best[1]):
                best = (m, g, self.p_holm(m))
        return best

    def judge(self, alpha: float = DEFAULT_ALPHA, min_gain: float = 0.0) -> str:
        """hurts / helps / neutral under `alpha` (Holm-adjusted) and a minimum effect `min_gain`."""
        if self.element.status != "measured" or not self.metrics:
            return self.verdict
        hurts = helps = False
        for m in METRICS:
            d, p = self.gain(m), self.p_holm(m)
            if d is None or p is None or not p < alpha:
                continue
            if d > 0 and d >= min_gain:
                hurts = True
            elif d < 0 and -d >= min_gain:
                helps = True
        return "hurts" if hurts else ("helps" if helps else "neutral")

    def to_dict(self) -> dict[str, Any]:
        e = self.element
        return {"id": e.id, "profile": e.profile, "kind": e.kind, "element": e.element, "where": e.where,
                "role": e.role, "owner": e.owner, "neutralised": e.neutral, "value": e.value, "status": e.status,
                "note": e.note,
                "questions": self.questions, "routes": list(self.routes),
                "metrics": {m: dict(v) for m, v in self.metrics.items()},
                "verdict": self.verdict, "reason": self.reason, "judged_by": self.judged_by,
                "holm_family": self.family, "failed_requests": self.failed}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ElementResult:
        e = Element(id=str(d["id"]), profile=str(d.get("profile", "")), kind=str(d.get("kind", "")),
                    element=str(d.get("element", "")), neutral=str(d.get("neutralised", "")),
                    owner=str(d.get("owner", "")), where=d.get("where"), role=d.get("role"),
                    status=str(d.get("status", "measured")), note=d.get("note"), value=d.get("value"))
        return cls(element=e, questions=int(d.get("questions") or 0), routes=tuple(d.get("routes") or ()),
                   metrics={m: dict(v) for m, v in (d.get("metrics") or {}).items()},
                   verdict=str(d.get("verdict", "not_measured")), reason=d.get("reason"),
                   judged_by=d.get("judged_by"), family=int(d.get("holm_family") or 0),
                   failed=int(d.get("failed_requests") or 0))


@dataclass
class Ablation:
    """Every element's result; `status` skipped (with `reason`) without a goldset."""

    status: str
    reason: str | None = None
    results: list[ElementResult] = field(default_factory=list)
    alpha: float = DEFAULT_ALPHA
    family: int = 0  # the number of tests Holm corrected (per profile: one family per profile's questions)

    @property
    def measured(self) -> bool:
        return self.status == "measured"

    def for_owner(self, owner: str) -> list[ElementResult]:
        return [r for r in self.results if r.owner == owner]

    def for_profile(self, profile: str) -> list[ElementResult]:
        return [r for r in self.results if r.element.profile == profile]

    def get(self, element_id: str) -> ElementResult | None:
        return next((r for r in self.results if r.id == element_id), None)

    def record_verdict(self, element_id: str, verdict: str, judged_by: str) -> None:
        """The owner check's verdict under its own spec's thresholds (what the JSON reports)."""
        for i, r in enumerate(self.results):
            if r.id == element_id:
                self.results[i] = dataclasses.replace(r, verdict=verdict, judged_by=judged_by)

    def to_dict(self) -> dict[str, Any]:
        """The ``ablation`` of the findings JSON (schema: findings.schema.json)."""
        if not self.measured:
            return {"status": self.status, "reason": self.reason}
        return {"status": self.status, "reason": self.reason, "metrics": list(METRICS), "test": "paired_ttest",
                "correction": "Holm, per profile", "alpha": self.alpha, "family": self.family,
                "elements": [r.to_dict() for r in self.results]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Ablation | None:
        if not d:
            return None
        return cls(status=str(d.get("status", "skipped")), reason=d.get("reason"),
                   results=[ElementResult.from_dict(x) for x in d.get("elements") or ()],
                   alpha=float(d.get("alpha") or DEFAULT_ALPHA), family=int(d.get("family") or 0))

    def __repr__(self) -> str:
        if not self.measured:
            return f"<Ablation skipped: {self.reason}>"
        hurt = sum(r.verdict == "hurts" for r in self.results)
        return f"<Ablation {len(self.results)} elements, {hurt} hurt (Holm over {self.family} tests)>"


def skipped_ablation(reason: str) -> Ablation:
    return Ablation(status="skipped", reason=reason)


# ---------------------------------------------------------------------------
# the elements of a profile


def _replace_vq(profile: Any, index: int, **changes: Any) -> Any:
    vqs = list(profile.vector_queries)
    vqs[index] = dataclasses.replace(vqs[index], **changes)
    return profile.replace(vector_queries=tuple(vqs))


def _drop_clause(text: str, index: int) -> str | None:
    rest = odata.drop_clause(odata.parse(text), index)
    return odata.render(rest) if rest is not None else None


def _effective(profile: Any, mode: str) -> str:
    """A channel's effective text mode (``keyword_text`` follows the keyword channel)."""
    return profile.keyword_text if mode == "keyword_text" else mode


def elements_of(profile: Any, schema: Any, *, security_field: str,
                role_of: Callable[[Any], str] | None = None) -> list[Element]:
    """Every ranking element of `profile` on `schema`, each with its neutralised variant."""
    out: list[Element] = []
    p = profile
    name = p.name
    secure = frozenset({f.name for f in schema.security_fields} | {security_field.split("/")[0]})

    def add(kind: str, element: str, neutral: str, apply: Callable[[Any], Any] | None, *, sub: str = "",
            where: str | None = None, role: str | None = None, status: str = "measured",
            note: str | None = None, value: str | None = None) -> None:
        eid = f"{name}:{kind}" + (f"[{sub}]" if sub else "")
        out.append(Element(eid, name, kind, element, neutral, OWNERS[kind], where=where, role=role,
                           status=status if apply is not None or status != "measured" else "not_ablatable",
                           note=note, value=value, apply=apply))

    # filter clauses (the profile's filter and each vector query's override)
    for c in odata.clauses(odata.parse(p.filter)) if p.filter else ():
        role = role_of(c) if role_of is not None else None
        if c.fields & secure:
            add("filter_clause", c.text, "kept: the security clause is never ablated", None, sub=str(c.index + 1),
                where="filter", role="access", status="not_ablatable", note="security clause")
            continue
        add("filter_clause", c.text, "dropped", lambda q, i=c.index: q.replace(filter=_drop_clause(q.filter, i)),
            sub=str(c.index + 1), where="filter", role=role)
    for vi, vq in enumerate(p.vector_queries):
        for c in odata.clauses(odata.parse(vq.filter_override)) if vq.filter_override else ():
            role = role_of(c) if role_of is not None else None
            where = f"vector query {vi + 1} filter_override"
            if c.fields & secure:
                add("override_clause", c.text, "kept: the security clause is never ablated", None,
                    sub=f"{vi + 1}.{c.index + 1}", where=where, role="access", status="not_ablatable",
                    note="security clause")
                continue

            def drop_override(q: Any, vi: int = vi, i: int = c.index) -> Any:
                rest = _drop_clause(q.vector_queries[vi].filter_override, i)
                return _replace_vq(q, vi, filter_override=rest if rest is not None else "true")

            add("override_clause", c.text, "dropped", drop_override, sub=f"{vi + 1}.{c.index + 1}", where=where,
                role=role)
    has_text = p.keyword_text != "none"
    lists = int(has_text) + sum(len(vq.fields) for vq in p.vector_queries)
    if p.vector_queries:
        if p.vector_filter_mode != "preFilter":
            add("vector_filter_mode", p.vector_filter_mode, "set to preFilter",
                lambda q: q.replace(vector_filter_mode="preFilter"))
        else:
            add("vector_filter_mode", "preFilter", "set to preFilter", None, status="at_default")
    for vi, vq in enumerate(p.vector_queries):
        where = f"vector query {vi + 1}"
        sub = str(vi + 1)
        if vq.k != DEFAULT_K:
            add("k", f"k = {vq.k}", f"set to k = {DEFAULT_K}", lambda q, vi=vi: _replace_vq(q, vi, k=DEFAULT_K), sub=sub,
                where=where, value=str(DEFAULT_K))
        else:
            add("k", f"k = {vq.k}", f"set to k = {DEFAULT_K}", None, sub=sub, where=where, status="at_default")
        if lists > 1:
            if vq.weight != 1.0:
                add("weight", f"weight {vq.weight:g}", "set to weight 1", lambda q, vi=vi: _replace_vq(q, vi, weight=1.0),
                    sub=sub, where=where)
            else:
                add("weight", "weight 1", "set to weight 1", None, sub=sub, where=where, status="at_default")
        if vq.exhaustive:
            add("exhaustive", "exhaustive", "switched off (HNSW)",
                lambda q, vi=vi: _replace_vq(q, vi, exhaustive=False), sub=sub, where=where)
        mode = _effective(p, vq.text)
        if mode != "verbatim":
            add("vector_text", f"text = {vq.text}" + (f" ({mode})" if vq.text == "keyword_text" else ""),
                "set to the question verbatim", lambda q, vi=vi: _replace_vq(q, vi, text="verbatim"), sub=sub, where=where)
        else:
            add("vector_text", f"text = {vq.text}", "set to the question verbatim", None, sub=sub, where=where, status="at_default")
        dims = {schema.field(f).dimensions for f in vq.fields if schema.has_field(f)}
        others = [f.name for f in schema.vector_fields if f.name not in vq.fields and f.dimensions in dims]
        for other in others:
            add("vector_field", "+".join(vq.fields), f"replaced by {other}", lambda q, vi=vi, o=other: _replace_vq(q, vi, fields=(o,)),
                sub=f"{vi + 1}:{other}", where=where, value=other)
        if lists - len(vq.fields) >= 1:
            def drop_vq(q: Any, vi: int = vi) -> Any:
                return q.replace(vector_queries=tuple(v for j, v in enumerate(q.vector_queries) if j != vi))
            add("vector_query", "+".join(vq.fields) + f" (k {vq.k})", "removed", drop_vq, sub=sub, where=where)
        else:
            add("vector_query", "+".join(vq.fields) + f" (k {vq.k})", "removed", None, sub=sub, where=where,
                status="not_ablatable", note="the only leg of the profile")
    if has_text and p.vector_queries:
        if p.max_text_recall_size is not None and p.max_text_recall_size != 1000:
            add("max_text_recall_size", f"max_text_recall_size {p.max_text_recall_size}", "unset (1000, the default)",
                lambda q: q.replace(max_text_recall_size=None))
        else:
            add("max_text_recall_size", "unset (1000)", "unset (1000, the default)", None, status="at_default")
    if p.scoring_profile:
        add("scoring_profile", p.scoring_profile, "removed (no scoring profile)",
            lambda q: q.replace(scoring_profile=None, scoring_parameters=()))
        for ti, template in enumerate(p.scoring_parameters):
            add("scoring_parameter", template, "left out",
                lambda q, t=template: q.replace(scoring_parameters=tuple(x for x in q.scoring_parameters if x != t)),
                sub=str(ti + 1))
    else:
        add("scoring_profile", "none", "removed (no scoring profile)", None, status="at_default")
    semantic = p.query_type == "semantic"
    if semantic:
        default_cfg = schema.default_semantic_configuration or (
            schema.semantic_configurations[0].name if schema.semantic_configurations else None)
        current = p.semantic_configuration or default_cfg
        if current and default_cfg and current != default_cfg:
            add("semantic_configuration", current, f"set to {default_cfg}",
                lambda q, d=default_cfg: q.replace(semantic_configuration=d), value=default_cfg)
        else:
            add("semantic_configuration", str(current), f"set to {default_cfg}", None, status="at_default")
        add("semantic_ranking", "semantic ranking", "switched off (fused order)",
            lambda q: q.replace(query_type="simple", captions=None, answers=None, query_rewrites=None))
    if has_text and p.keyword_text != "verbatim":
        add("keyword_text", f"keyword_text = {p.keyword_text}", "set to the question verbatim",
            lambda q: q.replace(keyword_text="verbatim"))
    elif not has_text and p.vector_queries:
        add("keyword_text", "keyword_text = none (no keyword leg)", "set to the question verbatim",
            lambda q: q.replace(keyword_text="verbatim"))
    else:
        add("keyword_text", "keyword_text = verbatim", "set to the question verbatim", None, status="at_default")
    if semantic:
        mode = _effective(p, p.semantic_text)
        if mode == "none":
            add("semantic_text", "semantic_text = keyword_text (none)", "set to the question verbatim",
                lambda q: q.replace(semantic_text="verbatim"))
        elif mode != "verbatim":
            add("semantic_text", f"semantic_text = {p.semantic_text}" +
                (f" ({mode})" if p.semantic_text == "keyword_text" else ""), "set to the question verbatim",
                lambda q: q.replace(semantic_text="verbatim"))
        else:
            add("semantic_text", f"semantic_text = {p.semantic_text}", "set to the question verbatim", None,
                status="at_default")
    if has_text:
        searchable = tuple(schema.searchable_fields)
        if p.search_fields is not None and set(p.search_fields) != set(searchable):
            add("search_fields", ", ".join(p.search_fields), "widened to every searchable field",
                lambda q: q.replace(search_fields=None))
        else:
            add("search_fields", "every searchable field", "widened to every searchable field", None, status="at_default")
        if p.search_mode != "any":
            add("search_mode", f"search_mode = {p.search_mode}", "set to any",
                lambda q: q.replace(search_mode="any"))
    return out


# ---------------------------------------------------------------------------
# measuring


def _holm(pvalues: Mapping[Any, float | None]) -> dict[Any, float | None]:
    from ragdiag.metrics import holm

    return holm(pvalues)


def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) else x


def measure_ablation(ctx: Any, policy: Any = None, base_run: Any = None,
                     role_of: Callable[[Any], str] | None = None) -> Ablation:
    """Neutralise every element of every profile the goldset reaches, one cached what-if each."""
    from ragdiag.engine.funnel import why_not_measurable
    from ragdiag.engine.gold import GoldQuery, GoldRun
    from ragdiag.metrics import compare, evaluate
    from ragdiag.model import Trace

    policy = policy if policy is not None else ctx.policy
    gap = why_not_measurable(ctx, policy, "what an element costs can only be measured on judged questions")
    if gap:
        return skipped_ablation(gap)
    qrels = ctx.goldset.qrels()
    if base_run is None:
        base_run = ctx.run_gold(policy, label="baseline")
    schema = ctx.target.schema()
    # the answerable questions each profile serves, as the policy routes them
    served: dict[str, list[Any]] = defaultdict(list)
    routes: dict[str, set[str]] = defaultdict(set)
    for q in base_run.queries:
        if qrels.get(q.case.id):
            served[q.profile].append(q)
            routes[q.profile].add(q.intent)
    base_eval = base_run.evaluation(ctx.goldset)
    base_failed = {q.case.id for q, r in zip(base_run.queries, base_run.results, strict=True)
                   if not isinstance(r, Trace)}
    elements: list[Element] = []
    honoured = honoured_kinds(ctx)
    for name, prof in policy.profiles.items():
        if name not in served:
            continue
        elements += [e for e in elements_of(prof, schema, security_field=policy.security_field, role_of=role_of)
                     if honoured is None or e.kind in honoured]
    groups: list[tuple[Any, ...]] = []
    plan: list[tuple[Element, list[GoldQuery] | None, str | None]] = []
    for e in elements:
        if e.apply is None:
            plan.append((e, None, None))
            continue
        try:
            variant = e.apply(policy.profiles[e.profile])
            vpolicy = policy.with_profile(variant)
            cases = [q.case for q in served[e.profile]]
            queries = ctx.gold_queries(vpolicy, cases=cases)
        except (ConfigError, InputDataError, RagdiagError) as exc:
            plan.append((dataclasses.replace(e, status="not_ablatable", note=str(exc)), None, None))
            continue
        plan.append((e, queries, None))
        groups.extend(q.requests for q in queries)
    results = ctx.runner.run_fused(groups, label="ablation") if groups else []
    out: list[ElementResult] = []
    pvals: dict[tuple[int, str], float | None] = {}
    pos = 0
    for e, queries, _ in plan:
        if queries is None:
            out.append(ElementResult(e, verdict=e.status, reason=e.note))
            continue
        res = results[pos:pos + len(queries)]
        pos += len(queries)
        run = GoldRun(f"ablation {e.id}", queries, list(res))
        ids = [q.case.id for q in queries]
        failed = len(run.failures)  # the what-if's own requests
        base_lost = sum(1 for q in served[e.profile] if q.case.id in base_failed)
        if failed or base_lost:  # a what-if that could not run measures nothing: never "neutral"
            # the first failure's own reason (`failed` says how many): what the owner reports
            reason = run.failures[0].reason if failed else f"{base_lost} of {len(queries)} baseline requests failed"
            out.append(ElementResult(e, questions=len(queries), routes=tuple(sorted(routes[e.profile])),
                                     verdict="not_measured", reason=reason, failed=failed))
            continue
        with_ev = base_eval.subset(ids)
        without_ev = evaluate(run.ranked(), {cid: qrels[cid] for cid in ids if cid in qrels})
        metrics: dict[str, dict[str, Any]] = {}
        for m in METRICS:
            if m not in with_ev.measures or m not in without_ev.measures:
                continue
            c = compare(with_ev, without_ev, m)
            # the paired t-test; where it is undefined (every question changed by the same amount:
            # zero variance) the Wilcoxon signed-rank test of the same pairs stands in for it
            p, test = _num(c.p_ttest), "paired_ttest"
            if p is None and (c.wins or c.losses):
                p, test = _num(c.p_wilcoxon), "wilcoxon"
            metrics[m] = {"with": _num(c.a_mean), "without": _num(c.b_mean), "delta": _num(c.mean_delta),
                          "p": p, "test": test, "wins": c.wins, "ties": c.ties, "losses": c.losses, "n": c.n}
            if c.wins or c.losses:  # a test where no question changed cannot reject: not in the family
                pvals[(len(out), m)] = p
        out.append(ElementResult(e, questions=len(queries), routes=tuple(sorted(routes[e.profile])),
                                 metrics=metrics, verdict="neutral"))
    # Holm's family: the tests on one profile's questions (every element x metric of it that changed
    # at least one question's value; one that changed none cannot reject and is left out); profiles
    # serve disjoint questions, so their tests are corrected apart
    families: dict[str, dict[tuple[int, str], float | None]] = defaultdict(dict)
    for (i, m), pv in pvals.items():
        families[out[i].element.profile][(i, m)] = pv
    adjusted: dict[tuple[int, str], float | None] = {}
    sizes: dict[str, int] = {}
    for prof, fam in families.items():
        adjusted.update(_holm(fam))
        sizes[prof] = sum(1 for pv in fam.values() if pv is not None)
    final: list[ElementResult] = []
    for i, r in enumerate(out):
        if r.metrics:
            metrics = {m: {**v, "p_holm": _num(adjusted.get((i, m), v["p"]))} for m, v in r.metrics.items()}
            r = dataclasses.replace(r, metrics=metrics, family=sizes.get(r.element.profile, 0))
            r = dataclasses.replace(r, verdict=r.judge())
        final.append(r)
    return Ablation(status="measured", results=final, family=sum(sizes.values()))


def honoured_kinds(ctx: Any) -> frozenset[str] | None:
    """The element kinds the target reads from a request (None: all of them). A target that runs
    the client's own SQL reads only the question's text and, through ``:limit``, the vector k;
    its WHERE clauses are ablated by prerank_filters on the SQL itself."""
    if not ctx.supports("sql_probes"):
        return None
    params = set(ctx.target.template.parameters or ()) if ctx.supports("sql_probes") else set()
    kinds = {"vector_text"} if "embedding" in params else set()
    if "query_text" in params:
        kinds.add("keyword_text")
    if "limit" in params:
        kinds.add("k")
    return frozenset(kinds)


def profile_of(policy: Any, element: Element) -> Any:
    """The neutralised profile of `element` (the what-if it measured)."""
    if element.apply is None:
        return policy.profiles[element.profile]
    return element.apply(policy.profiles[element.profile])


def by_route(ablation: Ablation, route: str) -> list[ElementResult]:
    return [r for r in ablation.results if route in r.routes]


def top_costs(results: Sequence[ElementResult], n: int = 3) -> list[ElementResult]:
    """The elements that cost the most (largest gain when neutralised), hurting ones first."""
    measured = [r for r in results if r.metrics and (r.worst()[1] or 0) > 0]
    return sorted(measured, key=lambda r: (r.verdict != "hurts", -(r.worst()[1] or 0)))[:n]
