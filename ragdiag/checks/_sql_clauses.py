"""prerank_filters and pool_size on a target that runs the client's own SQL (capability ``sql_probes``).

The filters are the WHERE clauses of the client's retrieval query, not OData. Each clause is
classified by the mapped columns it names (the groups column is access; the others by the
spec's ``[roles]`` hints: validity dates are recency), the candidates before and after each
clause are counted per identity (`stage_counts`), and every clause that is not access is dropped
on the goldset's questions (the template run without it): how many expected sources it removes
from the candidates the LIMIT keeps, and the hit rate of the chunks the model gets (the profile's
`top`) with and without it. pool_size compares the candidate LIMIT with the depth the client's
reranker reads (``[target] rerank_depth``); without a reranker there is no window to fill.
"""

from __future__ import annotations

from typing import Any

from ragdiag.checks.base import Verdict

__all__ = ["judge_sql_clauses", "judge_sql_pool"]


def _example_request(ctx: Any, ident: Any) -> Any:
    prof = ctx.policy.route("example question").profile
    return prof.build("example question", ident, security_field=ctx.policy.security_field)


def judge_sql_clauses(ctx: Any, spec: Any, v: Verdict, classify: Any, roles: dict[str, tuple[str, ...]],
                      security: set[str], suspicious: tuple[str, ...]) -> None:
    t = ctx.target
    clauses = t.template.clauses
    if not clauses:
        v.skip("sql_no_where")
    role = {c.index: classify(t.clause_columns(c.index), security, roles) for c in clauses}
    v.table("sql_clauses", "t_sql_clauses", ("clause_no", "clause", "role", "fields"),
            [(c.index + 1, c.text, v.msg(f"role_{role[c.index]}"), ", ".join(sorted(t.clause_columns(c.index))))
             for c in clauses])
    v.observed("sql_clauses", sum(r != "unclassified" for r in role.values()))
    v.metric("sql_clauses", len(clauses))
    rows = []
    for name, ident in sorted(ctx.identities.items()):
        counts = t.stage_counts(_example_request(ctx, ident))
        rows.append((name, *[n for _label, n in counts]))
    if rows:
        v.table("sql_stage_counts", "t_sql_stage_counts", ("identity", "no_where", *[f"after_{i + 1}" for i in
                                                                                      range(len(clauses))]),
                rows, note="n_sql_stage_counts")
    unclassified = [c.text for c in clauses if role[c.index] == "unclassified"]
    if unclassified:
        v.warn("unclassified", n=len(unclassified), clauses=tuple(unclassified[:3]))
        v.recommend("rec_roles")
    ablate = [c for c in clauses if role[c.index] != "access"]
    if not ablate:
        v.passed("pass_sql", n=len(clauses))
        return
    if not ctx.has("goldset"):
        unmeasured = [c.text for c in ablate if role[c.index] in suspicious]
        if unmeasured and spec.threshold("warn_any_nonrelevance_clause"):
            # as on OData filters: a quality, recency or source clause whose cost nothing
            # measured is a warning, not a pass
            v.warn("sql_not_measured", n=len(unmeasured), clauses=tuple(unmeasured[:3]))
        else:
            v.note("sql_not_ablated")
        v.passed("pass_sql", n=len(clauses))
        return
    run = ctx.run_gold(ctx.policy, label="baseline")
    v.requests(run)
    fail_share = spec.threshold("fail_removed_relevant_share")
    out = []
    for c in ablate:
        removed = reachable = hit_with = hit_without = questions = 0
        for q, trace in run.traces():
            rel = set(q.case.source_keys)
            if not rel:
                continue
            top = ctx.policy.profiles[q.profile].top or len(trace.hits)
            probe = t.probe(q.requests[0], drop=(c.index,))
            with_pool, without_pool = set(trace.pool.keys) & rel, set(probe.pool.keys) & rel
            questions += 1
            removed += len(without_pool - with_pool)
            reachable += len(without_pool | with_pool)
            hit_with += bool(set(trace.keys[:top]) & rel)
            hit_without += bool(set(probe.keys[:top]) & rel)
        share = removed / reachable if reachable else 0.0
        out.append((c.index + 1, c.text, v.msg(f"role_{role[c.index]}"), questions, removed, reachable,
                    round(share, 3), round(hit_with / questions, 3) if questions else None,
                    round(hit_without / questions, 3) if questions else None))
        v.observed("sql_clauses_ablated", 1)
        v.metric(f"sql_clause_{c.index + 1}_removed_share", round(share, 4))
        if questions and share > fail_share:
            r = role[c.index]
            if r in ("quality", "source"):
                v.fail("sql_removes_relevant", clause=c.text, role=v.msg(f"role_{r}"), share=share, n=removed)
            else:  # validity dates and scopes are deliberate: the goldset may expect what they exclude
                v.warn("sql_removes_expected", clause=c.text, role=v.msg(f"role_{r}"), share=share, n=removed)
            v.recommend("rec_sql_clause", clause=c.text)
        if questions:
            v.effect("hit_rate@top", hit_with / questions, hit_without / questions, n=questions,
                     action="eff_drop_sql_clause", scope="eff_scope_sql", clause=c.text)
    v.table("sql_ablation", "t_sql_ablation", ("clause_no", "clause", "role", "questions", "relevant_removed",
                                               "relevant_reachable", "share_removed", "hit_with", "hit_without"),
            out, note="n_sql_ablation")
    v.passed("pass_sql_ablated", n=len(clauses), ablated=len(ablate))


def judge_sql_pool(ctx: Any, spec: Any, v: Verdict) -> None:
    t = ctx.target
    profiles = list(ctx.policy.profiles.values())
    ident = next(iter(ctx.identities.values()), None)
    limits = {p.name: t.limit_of(p.build("example question", ident, security_field=ctx.policy.security_field))
              for p in profiles}
    tops = {p.name: p.top for p in profiles}
    depth = t.rerank_depth
    v.table("sql_pool", "t_sql_pool", ("profile", "sql_limit", "top", "rerank_depth"),
            [(p, limits[p], tops[p], depth) for p in limits])
    if depth is None:
        v.skip("sql_no_reranker", limits=tuple(sorted({str(x) for x in limits.values()})),
               tops=tuple(sorted({str(x) for x in tops.values()})))
    for p, lim in limits.items():
        v.observed("sql_limits_judged", 1)
        if lim is None:
            v.warn("sql_no_limit", profile=p)
        elif lim < depth:
            v.fail("sql_limit_below_depth", profile=p, limit=lim, depth=depth)
            v.recommend("rec_sql_limit", depth=depth)
    v.passed("pass_sql_pool", depth=depth, limits=tuple(sorted({str(x) for x in limits.values()})))
