"""Observed evidence per check: what the application was recorded sending (not a check).

Each function here is called by one check's `observe()` after its own evaluation, with the
audit's `Observed` (``ctx.observed``: `ragdiag record` traffic, Postgres statements,
OpenInference traces). It adds the verdict the traffic supports, with the number of observed
requests (or spans) it rests on (metric ``observed_requests`` and a headline note), and where
the code evidence says otherwise it names both and trusts the traffic: the code-derived fault
is withdrawn (`Verdict.retract`) and a note says what the code claimed and what was sent.

Texts are the ``observed.<name>`` messages of ``ragdiag/checks/observed.toml``.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from ragdiag.checks._reranker_bands import Bands, judge
from ragdiag.checks.base import Verdict
from ragdiag.observe.shapes import filter_clauses, pool, quantile, template

SHOW = 3
CASCADE_WINDOW_S = 30.0
_SQL_LIMIT = re.compile(r"\blimit\s+(\d+|\$\d+)", re.I)


def _obs(ctx: Any) -> Any:
    return getattr(ctx, "observed", None)


def _basis(v: Verdict, n: int, what: str = "requests") -> None:
    v.metric("observed_requests" if what == "requests" else f"observed_{what}", n)
    v.note(f"observed.basis_{what}", n=n)


def _pass_if_none(v: Verdict, before: bool, name: str, **params: Any) -> None:
    """The observed pass headline when the check's own inputs judged nothing."""
    if not before or not v.has_pass_headline:
        v.passed(f"observed.{name}", **params)


def _trust(v: Verdict, gone: list[Any], observed: Any) -> None:
    """Name the code claim that the traffic contradicts, and what was observed instead."""
    if gone:
        v.note("observed.trust_traffic", code=tuple(gone[:SHOW]), observed=observed)
        v.metric("observed_contradicts_code", len(gone))


# ---- 1. reranker scores ----------------------------------------------------------------------------
def reranker_scores(ctx: Any, spec: Any, v: Verdict) -> None:
    obs = _obs(ctx)
    sem = [s for s in obs.searches if s.request.is_semantic]
    if not sem:
        if obs.searches:
            v.note("observed.rr_no_semantic", n=len(obs.searches))
        return
    before = v.has_observations
    if v.skipped:
        v.unskip()
    bands = Bands.from_spec(spec)
    warn_median, band = bands.warn_median, bands.band
    top1: dict[str, list[float]] = defaultdict(list)
    partial: list[Any] = []
    for s in sem:
        scores = s.record.reranker_scores
        semantic_text = (s.request.effective_semantic_text or "").strip()
        if (s.record.response or {}).get("partial") or (semantic_text and semantic_text != "*" and s.record.keys
                                                        and not scores):
            partial.append(s)
            continue
        if scores:
            top1[obs.route_of(s)].append(scores[0])
    rows = []
    for route, vals in sorted(top1.items()):
        j = judge(vals, bands)  # check 1's bands, the same function its measured scores go through
        if j.median_level is not None:
            getattr(v, j.median_level)("observed.rr_median_below", route=route, median=j.median, min=j.median_min,
                                       requests=len(vals))
        if j.share_warns:
            v.warn("observed.rr_share_below", route=route, share=j.share_below_threshold,
                   threshold=bands.share_threshold, max=bands.warn_share, requests=len(vals))
        rows.append((route, len(vals), quantile(vals, 0.1), j.median, quantile(vals, 0.9),
                     j.share_below_band, v.msg(f"observed.verdict_{j.verdict}")))
    v.table("observed_scores", "observed.t_scores", ("obs_route", "obs_requests", "top1_p10", "top1_median",
                                                      "top1_p90", "share_below_band"), [r[:6] for r in rows],
            band=band)
    if partial:
        v.warn("observed.rr_partial", n=len(partial), requests=len(sem))
    all_top1 = [x for vals in top1.values() for x in vals]
    v.observed("observed_semantic_requests", len(all_top1))
    v.metric("observed_median_top1", quantile(all_top1, 0.5))
    measured = v.metrics.get("median_top1")
    observed_median = quantile(all_top1, 0.5)
    if measured is not None and observed_median is not None and (measured < warn_median) != (observed_median < warn_median):
        v.note("observed.rr_disagree", measured=measured, observed=observed_median, min=warn_median,
               requests=len(all_top1))
    _basis(v, len(sem))
    if all_top1:
        _pass_if_none(v, before, "rr_pass", requests=len(all_top1), routes=len(top1), median=observed_median)


# ---- 2. pool size ------------------------------------------------------------------------------------
def pool_size(ctx: Any, spec: Any, v: Verdict) -> None:
    obs = _obs(ctx)
    min_conf, max_k = spec.threshold("min_configured_pool"), spec.threshold("max_k")
    before = v.has_observations
    sql = _sql_limits(v, obs)
    if not obs.searches:
        if sql:
            _basis(v, sql)
        return
    rows: dict[tuple[str, Any, Any, int, bool], int] = Counter()
    sem_pools: list[int] = []
    below: Counter[str] = Counter()
    over_k: Counter[tuple[str, int]] = Counter()
    for s in obs.searches:
        req, route = s.request, obs.route_of(s)
        p = pool(req)
        ks = ", ".join(f"{'+'.join(vq.fields)}={vq.k}{' exhaustive' if vq.exhaustive else ''}"
                       for vq in req.vector_queries) or "-"
        text = (req.max_text_recall_size or 1000) if req.has_text_leg else 0
        rows[(route, ks, text, req.top, req.is_semantic, p)] += 1
        if req.is_semantic:
            sem_pools.append(p)
            if p < min_conf:
                below[route] += 1
        for vq in req.vector_queries:
            if vq.k > max_k:
                over_k[(route, vq.k)] += 1
    v.table("observed_pools", "observed.t_pools", ("obs_route", "obs_vector_k", "obs_text_recall", "top",
                                                    "semantic", "pool", "obs_requests"),
            [(*key, n) for key, n in sorted(rows.items(), key=lambda kv: -kv[1])], min=min_conf)
    for route, n in below.items():
        v.fail("observed.pool_below", route=route, n=n, requests=len(sem_pools), min=min_conf,
               pool=min(pool(s.request) for s in obs.searches if obs.route_of(s) == route and s.request.is_semantic))
    for (route, k), n in over_k.items():
        v.warn("observed.k_above", route=route, k=k, max=max_k, n=n)
    if sem_pools:
        v.observed("observed_semantic_requests", len(sem_pools))
        v.metric("observed_pool_min", min(sem_pools))
        v.metric("observed_pool_median", quantile(sem_pools, 0.5))
        if not below:  # every semantic request sent fills the window: a code claim of less is contradicted
            _trust(v, v.retract("code_pool_below"), v.msg("observed.pool_all_fill", n=len(sem_pools), min=min_conf))
    else:
        v.observed("observed_requests", len(obs.searches))
        v.note("observed.pool_no_semantic", n=len(obs.searches))
    if not over_k:
        _trust(v, v.retract("code_k_above"), v.msg("observed.k_all_within", n=len(obs.searches), max=max_k))
    _basis(v, len(obs.searches) + sql)
    if sem_pools and not below:
        _pass_if_none(v, before, "pool_pass", requests=len(sem_pools), min=min_conf, pool=min(sem_pools))
    elif not sem_pools:
        _pass_if_none(v, before, "pool_pass_no_ranker", requests=len(obs.searches))


def _sql_limits(v: Verdict, obs: Any) -> int:
    """The LIMIT each similarity statement sent (what a pgvector app's pool is)."""
    stmts = obs.similarity()
    if not stmts:
        return 0
    rows: Counter[tuple[str, str]] = Counter()
    for st in stmts:
        m = _SQL_LIMIT.search(st.sql)
        limit = "-"
        if m:
            limit = m.group(1)
            if limit.startswith("$") and st.params and int(limit[1:]) <= len(st.params):
                limit = st.params[int(limit[1:]) - 1] or "NULL"
        rows[(st.normalized[:160], limit)] += st.calls
    v.table("observed_sql_limits", "observed.t_sql_limits", ("obs_statement", "obs_limit", "obs_requests"),
            [(*k, n) for k, n in rows.most_common()])
    v.observed("observed_statements", sum(rows.values()))
    return sum(rows.values())


# ---- 3. pre-rerank filters ----------------------------------------------------------------------------
def prerank_filters(ctx: Any, spec: Any, v: Verdict) -> None:
    from ragdiag.checks.prerank_filters import SUSPICIOUS, classify

    obs = _obs(ctx)
    if not obs.searches:
        return
    before = v.has_observations
    roles = {k: tuple(vals) for k, vals in spec.roles.items()}
    security = _security_fields(ctx)
    warn_any = bool(spec.threshold("warn_any_nonrelevance_clause"))
    counts: Counter[tuple[str, str]] = Counter()
    fields_of: dict[str, str] = {}
    with_filter = 0
    for s in obs.searches:
        cl = filter_clauses(s.request.filter)
        with_filter += bool(cl)
        for c in cl:
            role = classify(c.fields, security | {f for f in c.fields if _is_security(f)}, roles)
            t = template(c.text)
            counts[(t, role)] += 1
            fields_of[t] = ", ".join(sorted(c.fields))
    n = len(obs.searches)
    if counts:
        v.table("observed_clauses", "observed.t_clauses", ("clause", "role", "fields", "obs_requests", "obs_share"),
                [(t, v.msg(f"prerank_filters.role_{r}"), fields_of[t], k, k / n) for (t, r), k in counts.most_common()],
                requests=n)
    for (t, role), k in counts.items():
        if role in SUSPICIOUS and warn_any:
            v.warn("observed.clause_sent", clause=t, role=v.msg(f"prerank_filters.role_{role}"), n=k, requests=n)
    seen = {t for t, _ in counts}
    unseen = v.retract("code_clause", when=lambda m: template(str(m.params.get("clause", ""))) not in seen)
    if unseen:
        _trust(v, unseen, v.msg("observed.clauses_unseen", n=n))
    cascades = _cascades(obs)
    if cascades:
        v.table("observed_cascades", "observed.t_cascades", ("obs_caller", "question", "obs_attempts", "filters"),
                [(c, q, len(fs), " -> ".join(f or "(none)" for f in fs)) for c, q, fs in cascades[:50]])
        v.warn("observed.cascades", n=len(cascades), requests=n)
    v.metric("observed_requests_with_filter", with_filter)
    v.observed("observed_requests", n)
    _basis(v, n)
    if not counts:
        _pass_if_none(v, before, "filters_none", requests=n)
    else:
        _pass_if_none(v, before, "filters_pass", clauses=len(counts), requests=n)


def _cascades(obs: Any) -> list[tuple[str, str, list[str | None]]]:
    """The same text from the same caller re-sent within the window with another filter."""
    from datetime import datetime

    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for s in obs.searches:
        text = " ".join((s.request.search or "").casefold().split())
        if text and text != "*":
            groups[(obs.caller(s), text)].append(s)
    out = []
    for (caller, _), items in groups.items():
        items.sort(key=lambda s: (s.record.ts, s.record.seq))
        chain = [items[0]]
        for s in items[1:] + [None]:
            if s is not None:
                try:
                    gap = (datetime.fromisoformat(s.record.ts.replace("Z", "+00:00"))
                           - datetime.fromisoformat(chain[-1].record.ts.replace("Z", "+00:00"))).total_seconds()
                except ValueError:
                    gap = CASCADE_WINDOW_S + 1
                if gap <= CASCADE_WINDOW_S:
                    chain.append(s)
                    continue
            filters = [c.request.filter for c in chain]
            if len(chain) > 1 and len(set(filters)) > 1:
                out.append((caller, chain[0].request.search or "", filters))
            if s is not None:
                chain = [s]
    return out


# ---- 4. one text for three channels ------------------------------------------------------------------
def shared_query_text(ctx: Any, spec: Any, v: Verdict) -> None:
    from ragdiag.checks.shared_query_text import channel_texts, identical

    obs = _obs(ctx)
    if not obs.searches:
        return
    before = v.has_observations
    flags, rows = [], []
    for s in obs.searches:
        same = identical(s.request)
        kw, vec, sem = channel_texts(s.request)
        if not vec and any(vq.vector is not None for vq in s.request.vector_queries):
            vec = ("(vector)",)
        if same is not None:
            flags.append(same)
        if len(rows) < 8:
            rows.append((obs.route_of(s), kw or "-", " | ".join(vec) or "-", sem or "-", same))
    v.table("observed_channels", "observed.t_channels", ("obs_route", "keyword", "vector", "semantic", "one_text"),
            rows, n=len(obs.searches))
    if not flags:
        v.note("observed.channels_not_comparable", n=len(obs.searches))
        return
    share = sum(flags) / len(flags)
    v.metric("observed_identical_share", share)
    v.observed("observed_requests_compared", len(flags))
    if share > spec.threshold("warn_identical_share"):
        v.warn("observed.identical", share=share, n=len(flags))
        v.recommend("rec_separate_texts")
    _basis(v, len(flags))
    _pass_if_none(v, before, "sqt_pass", share=share, n=len(flags))


# ---- 6. de facto routes ----------------------------------------------------------------------------------
def route_counts(ctx: Any, spec: Any, v: Verdict) -> None:
    obs = _obs(ctx)
    if not obs.searches:
        return
    before = v.has_observations
    routes = obs.routes()
    min_share = spec.threshold("min_traffic_share")
    v.table("observed_routes", "observed.t_routes", ("obs_route", "obs_requests", "obs_share", "obs_shapes"),
            [(r.label, r.requests, r.share, len(r.shapes)) for r in routes], n=len(obs.searches))
    v.metric("observed_routes", len(routes))
    if len(routes) < 2:
        v.note("observed.one_route", route=routes[0].label, n=len(obs.searches))
        _basis(v, len(obs.searches))
        return
    if v.skipped:  # the policy has one route, the application searches in several ways
        v.unskip()
        v.note("observed.routes_not_in_policy", n=len(routes), requests=len(obs.searches))
    for r in routes:
        v.observed("observed_routes")
        if r.share < min_share:
            v.warn("observed.route_low_traffic", route=r.label, share=r.share, min=min_share, n=r.requests)
    _basis(v, len(obs.searches))
    _pass_if_none(v, before, "routes_pass", routes=len(routes), requests=len(obs.searches), min=min_share)


# ---- 7. call sites: drift between the shapes of one route, loops per trace ---------------------------------
def call_sites(ctx: Any, spec: Any, v: Verdict) -> None:
    obs = _obs(ctx)
    before = v.has_observations
    fail_on_drift = bool(spec.threshold("fail_on_filter_drift"))
    drifting = 0
    if obs.searches:
        rows = []
        for r in obs.routes():
            for param, values in r.drift():
                rows.append((r.label, param, tuple(f"{val if val is not None else '(none)'} × {n}" for val, n in values)))
                if param == "filter":
                    drifting += 1
                    judge = v.fail if fail_on_drift else v.warn
                    judge("observed.filter_drift", route=r.label,
                          variants=tuple(f"{val or '(none)'}: {n}" for val, n in values[:SHOW]), requests=r.requests)
        if rows:
            v.table("observed_drift", "observed.t_drift", ("obs_route", "parameter", "obs_variants"), rows)
        v.metric("observed_drifting_routes", drifting)
        v.observed("observed_requests", len(obs.searches))
        if not drifting:  # no route of the traffic drifts in its filter: a code claim of drift is not what was sent
            _trust(v, v.retract("clause_drift", "security_missing"),
                   v.msg("observed.no_filter_drift", n=len(obs.searches), routes=len(obs.routes())))
        _basis(v, len(obs.searches))
    loops = obs.loops()
    if loops:
        retrievals = [lp.retrievals for lp in loops]
        v.table("observed_loops", "observed.t_loops", ("obs_trace", "obs_root", "obs_retrievals", "obs_llm_calls",
                                                        "obs_tool_calls", "obs_user"),
                [(lp.trace_id, lp.root, lp.retrievals, lp.llm_calls, lp.tool_calls, lp.user or "-")
                 for lp in sorted(loops, key=lambda lp: -lp.retrievals)[:100]])
        v.metric("observed_traces", len(loops))
        v.metric("observed_max_retrievals_per_trace", max(retrievals))
        v.metric("observed_median_retrievals_per_trace", quantile(retrievals, 0.5))
        v.note("observed.loops", traces=len(loops), max=max(retrievals), median=quantile(retrievals, 0.5))
        v.observed("observed_traces", len(loops))
    if obs.searches or loops:
        _pass_if_none(v, before, "call_sites_pass", requests=len(obs.searches), traces=len(loops))


# ---- 8. context budgets ------------------------------------------------------------------------------------
def context_budgets(ctx: Any, spec: Any, v: Verdict) -> None:
    obs = _obs(ctx)
    llm = [s for s in obs.llm_spans() if s.prompt_tokens is not None]
    if not llm:
        if obs.llm_spans():
            v.note("observed.no_token_counts", n=len(obs.llm_spans()))
        return
    before = v.has_observations
    budget = int(v.metrics.get("budget_tokens") or spec.threshold("default_budget_tokens"))
    declared = bool(v.metrics.get("budget_declared"))
    window = int(v.metrics.get("model_window_tokens") or spec.threshold("model_window_tokens"))
    reserve = int(v.metrics.get("answer_reserve_tokens") or spec.threshold("answer_reserve_tokens"))
    by_model: dict[str, list[int]] = defaultdict(list)
    for s in llm:
        by_model[str(s.attr("llm.model_name") or "-")].append(int(s.prompt_tokens))
    rows = []
    over = []
    for model, vals in sorted(by_model.items()):
        p95 = quantile(vals, 0.95)
        rows.append((model, len(vals), quantile(vals, 0.5), p95, max(vals), budget))
        if p95 is not None and p95 > budget:
            over.append((model, p95, len(vals)))
    v.table("observed_context", "observed.t_context", ("obs_model", "obs_llm_calls", "p50", "p95", "max", "budget"),
            rows)
    tokens = [int(s.prompt_tokens) for s in llm]
    p95_all = quantile(tokens, 0.95)
    v.metric("observed_prompt_tokens_p95", p95_all)
    v.metric("observed_prompt_tokens_max", max(tokens))
    for model, p95, n in over:
        (v.fail if declared else v.warn)("observed.context_over", model=model, p95=p95, budget=budget, n=n)
    if max(tokens) > window - reserve:
        v.fail("observed.context_over_window", max=max(tokens), window=window, reserve=reserve)
    docs = [len(s.documents()) for s in obs.retrievers() if s.documents()]
    if docs:
        v.metric("observed_documents_per_retrieval_max", max(docs))
    v.observed("observed_llm_calls", len(llm))
    if not over:  # the context the model got stayed within the budget: a missing visible bound is not what happened
        _trust(v, v.retract("unbounded_calls"), v.msg("observed.context_within", p95=p95_all, budget=budget,
                                                          n=len(llm)))
    _basis(v, len(llm), "llm_calls")
    if not over:
        _pass_if_none(v, before, "context_pass", p95=p95_all, budget=budget, n=len(llm))


# ---- 9. ACL trimming -------------------------------------------------------------------------------------------
def acl_trimming(ctx: Any, spec: Any, v: Verdict) -> None:
    obs = _obs(ctx)
    stmts = obs.similarity()
    if not obs.searches and not stmts:
        return
    before = v.has_observations
    security = _security_fields(ctx)
    rows: Counter[tuple[str, bool]] = Counter()
    examples: dict[str, str] = {}
    via: Counter[str] = Counter()
    for s in obs.searches:
        clause = any(f in security or _is_security(f) for c in filter_clauses(s.request.filter) for f in c.fields)
        header = s.record.permission_header
        ok = clause or header
        via.update(["header"] * header + ["clause"] * clause)
        caller = obs.caller(s)
        rows[(caller, ok)] += 1
        if not ok:
            examples.setdefault(caller, (s.request.search or "*")[:80])
    for st in stmts:
        where = st.sql.lower().partition("where")[2]
        ok = bool(where) and bool(_SQL_SECURITY.search(where) or any(f.lower() in where for f in security if f))
        via.update(["sql"] * ok)
        rows[("postgres", ok)] += st.calls
        if not ok:
            examples.setdefault("postgres", st.normalized[:80])
    total = sum(rows.values())
    missing = sum(n for (_, ok), n in rows.items() if not ok)
    callers = sorted({c for c, _ in rows}, key=lambda c: -rows[(c, False)])
    v.table("observed_acl", "observed.t_acl", ("obs_caller", "obs_requests", "obs_without", "obs_example"),
            [(c, rows[(c, True)] + rows[(c, False)], rows[(c, False)], examples.get(c, "")) for c in callers])
    v.metric("observed_requests", total)
    v.metric("observed_without_trimming", missing)
    if 0 < missing < total:
        bad = tuple(f"{c} ({rows[(c, False)]})" for c in callers if rows[(c, False)])[:SHOW]
        v.fail("observed.acl_missing", n=missing, m=total, callers=bad)
        v.recommend("observed.rec_acl_missing", callers=bad)
    elif missing == total:
        known = bool(security) or ctx.has("identities")
        if known:
            v.warn("observed.acl_none", m=total)
        else:
            v.note("observed.acl_none_unknown", m=total)
    else:
        v.observed("observed_trimmed_requests", total)
        mechanisms = tuple(v.msg(f"observed.via_{k}") for k, _ in via.most_common())
        _trust(v, v.retract("code_no_clause", "security_fields_unused", "agent_unsecured"),
               v.msg("observed.acl_all", m=total, via=mechanisms))
        _pass_if_none(v, before, "acl_pass", m=total, via=mechanisms)
    _basis(v, total)


_SQL_SECURITY = re.compile(r"\b(?:acls?|group_ids?|groups|allowed_[a-z0-9_]+|owner_ids?|user_ids?|tenant_ids?|"
                           r"permissions?|roles?)\b\s*(?:&&|@>|<@|=|in\b|\?|&)", re.I)


def _is_security(field: str) -> bool:
    from ragdiag.codescan.patterns import SECURITY_FIELD_RE

    return bool(SECURITY_FIELD_RE.match(field.split("/")[0]))


def _security_fields(ctx: Any) -> set[str]:
    out: set[str] = set()
    policy = getattr(ctx, "policy", None)
    if policy is not None and getattr(policy, "security_field", None):
        out.add(policy.security_field.split("/")[0])
    if getattr(ctx, "target", None) is not None:
        try:
            out |= {f.name for f in ctx.target.schema().security_fields}
        except Exception:  # noqa: BLE001 - a schema that cannot be read adds nothing here
            pass
    return out


__all__ = ["acl_trimming", "call_sites", "context_budgets", "pool_size", "prerank_filters", "reranker_scores",
           "route_counts", "shared_query_text"]
