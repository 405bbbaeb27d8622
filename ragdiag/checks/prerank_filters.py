"""Check 3: is anything filtered out before the reranker on an axis that is not relevance?

Every filter clause (profile filters, the `filter_override` of each vector query, resolved
filters in the client code, the query log) is classified by field role: access (the
schema's security fields), scope, quality, recency, source. Each quality/recency/source
clause of a profile is ablated on the questions its profile serves (the policy with the
clause dropped where it sits, filter or override): how many goldset-relevant documents it
removes from the candidate pool, out of the relevant documents the profile can reach at
all (those its filters admit without the clause, asked of the target; the others are
counted apart with the clause that excludes them), and recall@k / nDCG@10 with and
without it. Without a goldset: how many of the unfiltered top 50 it removes. The query
log is read for fallback cascades.

Evidence a pass needs: at least one filter clause examined and classified. No filter
anywhere: skipped. A clause whose role is unknown warns (name its field in [roles]).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from ragdiag import odata
from ragdiag.checks import _observed
from ragdiag.checks._ablation import judge_owned
from ragdiag.checks._common import Reach, leg_filters, paired
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.errors import RagdiagError
from ragdiag.model import Trace

ID = "prerank_filters"
SUSPICIOUS = ("quality", "recency", "source")
HOW = {"quality": "how_magnitude", "recency": "how_freshness", "source": "how_tag"}
UNFILTERED_TOP = 50
ABLATION_COLUMNS = ("profile", "where", "clause", "role", "questions", "relevant_removed", "relevant_reachable",
                    "relevant_unreachable", "share_removed", "top50_removed", "recall10_with", "recall10_without",
                    "recall50_with", "recall50_without", "ndcg10_with", "ndcg10_without")


def classify(fields: frozenset[str], security: set[str], roles: dict[str, tuple[str, ...]]) -> str:
    """The role of a clause from the fields it touches (access wins, then the name hints)."""
    if fields & security:
        return "access"
    for role in ("quality", "recency", "source", "scope"):
        hints = roles.get(role, ())
        if any(h.lower() in f.lower() for f in fields for h in hints):
            return role
    return "unclassified"


@dataclasses.dataclass(frozen=True)
class Site:
    """A clause of a profile: in its filter (`vq` None) or in vector query `vq`'s filter_override."""

    profile: str
    vq: int | None
    clause: odata.Clause
    role: str


def profile_sites(policy: Any, role_of: Callable[[odata.Clause], str]) -> list[Site]:
    out = []
    for p in policy.profiles.values():
        for vq, flt in [(None, p.filter)] + [(i, q.filter_override) for i, q in enumerate(p.vector_queries)]:
            if flt:
                out += [Site(p.name, vq, c, role_of(c)) for c in odata.clauses(odata.parse(flt))]
    return out


def without(policy: Any, site: Site) -> Any:
    """The policy with the site's clause dropped where it sits (an emptied override admits all)."""
    p = policy.profiles[site.profile]
    if site.vq is None:
        rest = odata.drop_clause(odata.parse(p.filter), site.clause.index)
        return policy.with_profile(p.replace(filter=odata.render(rest) if rest is not None else None))
    vqs = list(p.vector_queries)
    rest = odata.drop_clause(odata.parse(vqs[site.vq].filter_override), site.clause.index)
    vqs[site.vq] = dataclasses.replace(vqs[site.vq], filter_override=odata.render(rest) if rest is not None
                                       else "true")
    return policy.with_profile(p.replace(vector_queries=tuple(vqs)))


def _pool(trace: Any) -> set[str]:
    return set(trace.pool.keys if trace.pool is not None else trace.keys)


def _clauses(texts: Iterable[str | None]) -> Iterable[odata.Clause]:
    for t in texts:
        if t:
            try:
                yield from odata.clauses(odata.parse(t))
            except RagdiagError:
                continue


@register
class PrerankFilters(Check):
    id = ID
    needs = ("target|traffic", "profiles|traffic")
    uses = ("questions", "goldset", "query_log", "client_code")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        if not (ctx.has("target") and ctx.has("profiles")):
            return  # recorded traffic only: judged in observe()
        policy = ctx.policy
        roles = {k: tuple(vals) for k, vals in spec.roles.items()}
        schema = ctx.target.schema()
        security = {f.name for f in schema.security_fields} | {policy.security_field.split("/")[0]}

        def role_of(c: odata.Clause) -> str:
            return classify(c.fields, security, roles)

        warn_any = bool(spec.threshold("warn_any_nonrelevance_clause"))
        v.nothing_observed("no_filter_clause")
        if ctx.supports("sql_probes"):  # the filters are the client's SQL WHERE clauses
            from ragdiag.checks._sql_clauses import judge_sql_clauses

            judge_sql_clauses(ctx, spec, v, classify, roles, security, SUSPICIOUS)
            return

        sites = profile_sites(policy, role_of)
        rows = [(_source(v, s), s.profile if s.vq is None else v.msg("cell_profile_where", profile=s.profile,
                                                                    where=_where(v, s, True)), s.clause.text,
                 s.role, ", ".join(sorted(s.clause.fields))) for s in sites]
        unclassified = {s.clause.text for s in sites if s.role == "unclassified"}
        v.observed("profile_clauses", sum(s.vq is None and s.role != "unclassified" for s in sites))
        v.observed("override_clauses", sum(s.vq is not None and s.role != "unclassified" for s in sites))

        scan = ctx.code_scan() if ctx.has("client_code") else None
        code: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
        for site in scan.search_calls if scan is not None else ():
            f = site.params.get("filter")
            for c in _clauses([f.value] if f is not None and f.resolved and isinstance(f.value, str) else []):
                role = role_of(c)
                rows.append((v.msg("source_code"), f"{site.file}:{site.line}", c.text, role,
                             ", ".join(sorted(c.fields))))
                code[(c.text, role)].append((site.file, site.line))
        log: Counter[tuple[str, str]] = Counter()
        for c in _clauses(e.filter for e in ctx.query_log.entries) if ctx.has("query_log") else ():
            role = role_of(c)
            log[("" if role == "access" else c.text, role)] += 1  # identity clauses differ per user
        for (clause, role), _n in [*code.items(), *log.items()]:
            if role == "unclassified":
                unclassified.add(clause)
        v.observed("code_clauses", sum(role != "unclassified" for _, role in code))
        v.observed("query_log_clauses", sum(role != "unclassified" for _, role in log))
        v.table("clauses", "t_clauses", ("source", "where", "clause", "role", "fields"),
                [(src, where, clause, _role(v, role), fields) for src, where, clause, role, fields in rows])
        if any(role != "access" for _, role in log):
            v.table("query_log_clauses", "t_log_clauses", ("clause", "role", "requests"),
                    [(t, _role(v, r), n) for (t, r), n in log.most_common() if r != "access"])
        v.metric("profile_clauses", sum(s.vq is None for s in sites))
        v.metric("override_clauses", sum(s.vq is not None for s in sites))
        v.metric("suspicious_profile_clauses", sum(s.role in SUSPICIOUS for s in sites))
        v.metric("code_clauses", sum(len(w) for w in code.values()))

        suspicious = [s for s in sites if s.role in SUSPICIOUS]
        # a clause ragdiag cannot classify is measured like a suspicious one, never ignored
        measured = suspicious + ([s for s in sites if s.role == "unclassified"] if ctx.has("goldset") else [])
        ablation = _Ablation(ctx, v, spec, role_of, warn_any)
        ablation.run(policy, measured, schema)
        for s in measured:
            if s.role == "unclassified" and s.clause.text in ablation.measured:
                unclassified.discard(s.clause.text)
                v.observed("unclassified_clauses_measured")
        # every clause of every profile, whatever its role, as one what-if on the goldset
        judge_owned(ctx, spec, v, ID, severity=lambda r: _severity(r, role_of), quiet=ablation.failed_ids)
        for (clause, role), where in code.items():
            if role in SUSPICIOUS:
                if warn_any:
                    v.warn("code_clause", clause=clause, role=v.msg(f"role_{role}"), sites=len(where),
                           where=f"{where[0][0]}:{where[0][1]}")
                for file, line in where:
                    v.location(file, line, "loc_code_clause", clause=clause, role=v.msg(f"role_{role}"))
        in_profiles = {s.clause.text for s in suspicious}
        for (clause, role), n in log.items():
            if role in SUSPICIOUS and clause not in in_profiles and warn_any:
                v.warn("log_clause", clause=clause, role=v.msg(f"role_{role}"), requests=n)
        if unclassified:
            v.warn("unclassified", n=len(unclassified), clauses=tuple(sorted(unclassified)[:3]))
            v.recommend("rec_roles")
        _cascades(ctx, v)
        counted = ("profile_clauses", "override_clauses", "code_clauses", "query_log_clauses",
                   "unclassified_clauses_measured")
        v.passed("pass_clauses_measured" if v.observations["unclassified_clauses_measured"] else "pass_clauses",
                 clauses=sum(v.observations[k] for k in counted),
                 measured=v.observations["unclassified_clauses_measured"],
                 profile=v.observations["profile_clauses"],
                 override=v.observations["override_clauses"], code=v.observations["code_clauses"],
                 log=v.observations["query_log_clauses"])

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.prerank_filters(ctx, spec, v)

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "ablation", "profile", "clause", "recall50_with", "recall50_without")
        rows = [r for r in rows or () if r[2] is not None and r[3] is not None]
        if not rows:
            return None
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7, 0.6 + 0.6 * len(rows)))
        y = range(len(rows))
        ax.barh([i + 0.2 for i in y], [r[3] for r in rows], height=0.4, label=text(ID, "fig_without", lang))
        ax.barh([i - 0.2 for i in y], [r[2] for r in rows], height=0.4, label=text(ID, "fig_with", lang))
        ax.set_yticks(list(y), [f"{r[0]}: {r[1]}" for r in rows], fontsize=8)
        ax.set_xlabel(text(ID, "fig_xlabel", lang))
        ax.set_xlim(0, 1)
        ax.set_title(text(ID, "fig_title", lang))
        ax.legend(fontsize=8)
        fig.tight_layout()
        return fig


class _Ablation:
    """Each suspicious profile clause dropped on the questions its profile serves."""

    def __init__(self, ctx: Any, v: Verdict, spec: Any, role_of: Callable[[odata.Clause], str],
                 warn_any: bool) -> None:
        self.ctx, self.v, self.role_of, self.warn_any = ctx, v, role_of, warn_any
        self.fail_share = spec.threshold("fail_removed_relevant_share")
        self.reach = Reach(ctx)
        self.removed: list[tuple[Any, ...]] = []
        self.unreachable: list[tuple[Any, ...]] = []
        self.measured: set[str] = set()  # clause texts measured on the goldset
        self.failed_ids: set[str] = set()  # ablation element ids this measurement already failed

    def run(self, policy: Any, suspicious: list[Site], schema: Any) -> None:
        """Measure each clause (suspicious ones, and unclassified ones when a goldset exists)."""
        ctx, v = self.ctx, self.v
        cases = ctx.question_cases()
        ablation = []
        for s in suspicious:
            if s.role in HOW:
                _recommend(v, s, schema)
            mine = [cs for cs in cases if _routes_to(policy, cs, s.profile)]
            params = dict(clause=s.clause.text, role=v.msg(f"role_{s.role}"), profile=s.profile, where=_where(v, s))
            if not mine:
                if s.role in HOW:
                    v.warn("not_ablated", **params)
                continue
            base = ctx.run_gold(policy, cases=mine, label=f"{s.profile} baseline")
            dropped = ctx.run_gold(without(policy, s), cases=mine, label=f"{s.profile} without {s.clause.text}")
            v.requests(base)
            v.requests(dropped)
            head = (s.profile, _where(v, s, True), s.clause.text, _role(v, s.role), len(mine))
            if not ctx.has("goldset"):
                lost = []
                for _q, with_t, without_t in paired(base, dropped):
                    top = list((without_t.pool.keys if without_t.pool is not None else without_t.keys)[:UNFILTERED_TOP])
                    if top:
                        lost.append(len(set(top) - _pool(with_t)) / len(top))
                avg = sum(lost) / len(lost) if lost else None
                ablation.append(head + (None, None, None, None, avg) + (None,) * 6)
                if self.warn_any:
                    v.warn("removes_top50", share=avg, **params)
                continue
            m = self.measure(s, base, dropped)
            ev_with, ev_without = base.evaluation(ctx.goldset), dropped.evaluation(ctx.goldset)
            e_with, e_without = ev_with.aggregate, ev_without.aggregate
            _effects(v, s, mine, ev_with, ev_without)
            ablation.append(head + (m["removed"], m["reachable"], m["unreachable"], m["share"], None)
                            + tuple(e.get(k) for k in ("recall@10", "recall@50", "ndcg@10") for e in (e_with, e_without)))
            label = f"{s.profile}: {s.clause.text}" + (f" [vector query {s.vq + 1}]" if s.vq is not None else "")
            v.metric(f"removed_relevant_share[{label}]", m["share"])
            v.metric(f"relevant_unreachable[{label}]", m["unreachable"])
            self.measured.add(s.clause.text)
            if m["share"] is None:
                if s.role in SUSPICIOUS:
                    v.warn("none_reachable", unreachable=m["unreachable"], excluded=m["excluded"], **params)
            elif m["share"] >= self.fail_share:
                v.fail("removes_relevant_unreach" if m["unreachable"] else "removes_relevant", removed=m["removed"],
                       reachable=m["reachable"], share=m["share"], unreachable=m["unreachable"],
                       excluded=m["excluded"], **params)
                self.failed_ids.add(_element_id(s))
                if s.role not in HOW:
                    _recommend(v, s, schema)
            elif self.warn_any and s.role in SUSPICIOUS:
                v.warn("filters_before_rerank", **params)
        if ablation:
            v.table("ablation", "t_ablation", ABLATION_COLUMNS, ablation, note="n_ablation")
        if self.removed:
            v.table("removed_documents", "t_removed", ("clause", "case", "document", "rank_without"), self.removed)
        if self.unreachable:
            v.table("unreachable_documents", "t_unreachable", ("clause", "case", "document", "excluded_by"),
                    self.unreachable, note="n_unreachable")
        if self.reach.error:
            v.note("reach_unknown", error=self.reach.error)

    def measure(self, s: Site, base: Any, dropped: Any) -> dict[str, Any]:
        """Relevant documents the clause removes, out of those its profile can reach without it."""
        qrels = self.ctx.goldset.qrels()
        items = []
        for qa, qb, with_t, without_t in zip(base.queries, dropped.queries, base.results, dropped.results,
                                             strict=True):
            rel = {k for k, g in qrels.get(qa.case.id, {}).items() if g >= 1}
            if rel and isinstance(with_t, Trace) and isinstance(without_t, Trace):
                items.append((qa.case.id, rel, leg_filters(qb.requests), with_t, without_t))
        reachable = self.reach.admitted([(rel, legs) for _, rel, legs, _, _ in items])
        why = self.reach.excluded([(rel - ok, legs) for (_, rel, legs, _, _), ok in zip(items, reachable, strict=True)])
        removed = n_reach = n_unreach = 0
        excluded: Counter[str] = Counter()
        for (cid, rel, _legs, with_t, without_t), ok, reasons in zip(items, reachable, why, strict=True):
            gone = (rel & _pool(without_t)) - _pool(with_t)
            ok = ok | gone
            removed, n_reach, n_unreach = removed + len(gone), n_reach + len(ok), n_unreach + len(rel - ok)
            self.removed += [(s.clause.text, cid, k, without_t.pool.rank_of(k) if without_t.pool is not None else None)
                             for k in sorted(gone)]
            for k in sorted(rel - ok):
                by = [self._name(c) for c in reasons.get(k, ())] or [self.v.msg("not_in_index")]
                excluded.update(by)
                self.unreachable.append((s.clause.text, cid, k, self.v.msg("joined", items=tuple(by))))
        return {"removed": removed, "reachable": n_reach, "unreachable": n_unreach,
                "share": removed / n_reach if n_reach else None,
                "excluded": tuple(self.v.msg("excluded_n", clause=c, n=n) for c, n in excluded.most_common(3))}

    def _name(self, clause: odata.Clause) -> Any:
        # identity clauses differ per user: name them by their role, not their groups
        return self.v.msg("security_clause") if self.role_of(clause) == "access" else clause.text


def _where(v: Verdict, s: Site, cell: bool = False) -> Any:
    """Where the clause sits: a message for sentences, a short cell text for tables."""
    if not cell:
        return v.msg("where_filter") if s.vq is None else v.msg("where_override", n=s.vq + 1)
    return v.msg("cell_filter") if s.vq is None else v.msg("cell_override", n=s.vq + 1)


def _source(v: Verdict, s: Site) -> Any:
    return v.msg("source_profile" if s.vq is None else "source_override")


def _role(v: Verdict, role: str) -> Any:
    return v.msg(f"role_{role}")


def _effects(v: Verdict, s: Site, cases: list[Any], ev_with: Any, ev_without: Any) -> None:
    """nDCG@10 and recall@50 with and without the clause, paired on the profile's questions."""
    from ragdiag.metrics import compare

    intents = tuple(sorted({c.intent for c in cases if c.intent}))
    for metric in ("ndcg@10", "recall@50"):
        if metric not in ev_with.measures or metric not in ev_without.measures:
            continue
        c = compare(ev_with, ev_without, metric)
        if c.n and (c.wins or c.losses):  # a clause that changes no question's metric has no effect
            v.effect(metric, c.a_mean, c.b_mean, p=c.p_ttest, n=c.n, action="eff_drop_clause",
                     scope="eff_scope_intents", clause=s.clause.text, profile=s.profile,
                     scope_params={"n": c.n, "intents": intents or (s.profile,)})


def _routes_to(policy: Any, case: Any, profile: str) -> bool:
    intent = case.intent if case.intent and case.intent != "unknown" else None
    route = policy.route(case.question) if intent is None else policy.route_intent(intent)
    return route.profile_name == profile


def _element_id(s: Site) -> str:
    """The ablation element id of a profile clause (`ragdiag.engine.ablation.elements_of`)."""
    if s.vq is None:
        return f"{s.profile}:filter_clause[{s.clause.index + 1}]"
    return f"{s.profile}:override_clause[{s.vq + 1}.{s.clause.index + 1}]"


def _severity(result: Any, role_of: Callable[[odata.Clause], str]) -> str | None:
    """A scope clause is the client's choice: its measured cost warns; any other clause's fails
    by the default rule (`ragdiag.checks._ablation`)."""
    try:
        clause = odata.clauses(odata.parse(result.element.element))[0]
    except (RagdiagError, IndexError):
        return None
    return "warn" if role_of(clause) == "scope" else None


def _recommend(v: Verdict, s: Site, schema: Any) -> None:
    """Replace the filter with a scoring-profile function (naming one the index already has)."""
    if s.role not in HOW:  # a clause on a field no rule names: measured, the fix is the client's
        v.recommend("rec_unclassified_clause", profile=s.profile, clause=s.clause.text)
        return
    fields = sorted(s.clause.fields)
    have = [sp.name for sp in schema.scoring_profiles for fn in sp.functions if fn.field_name in s.clause.fields]
    params = dict(profile=s.profile, clause=s.clause.text, field=fields[0] if fields else "-", how=v.msg(HOW[s.role]))
    if have:
        v.recommend("rec_scoring_function_existing", scoring_profile=have[0], **params)
    else:
        v.recommend("rec_scoring_function", **params)


def _cascades(ctx: Any, v: Verdict) -> None:
    cascades = ctx.query_log.cascades() if ctx.has("query_log") else []
    if not cascades:
        return
    v.metric("fallback_cascades", len(cascades))
    v.table("cascades", "t_cascades", ("user", "question", "attempts", "filters"),
            [(cz.user, cz.question, len(cz.entries), " -> ".join(f or "(none)" for f in cz.filters))
             for cz in cascades[:50]])
    v.warn("cascades", n=len(cascades))
    v.recommend("rec_cascade")
