"""Check 2: does the fused candidate pool reach the reranker's 50-document window after filters?

Configured pool per profile = max_text_recall_size (1000 by default, 0 without a
keyword leg) + k of every (vector query, field). Measured pool per question =
distinct candidates reaching fusion after every filter (local: the trace's pool;
live: the hits of a top-50 request without reranking, which is min(pool, 50)).

Client code (code-only audits too): the pool each search call site can put into fusion,
read from the code: text recall (`max_text_recall_size`, 1000 when the site has a keyword
leg, 0 without one; an SQL full-text `LIMIT`) plus the vector `k`, per site with its class,
`top`, whether semantic ranking is on (always, under a condition, or not), and the verdict.
A request-path site with semantic ranking whose pool is below ``min_configured_pool``
fails; a `k` above ``max_k`` warns; exhaustive KNN on the request path is noted. Sites of
other classes (tests, scripts, notebooks) are listed, not judged.

Evidence a pass needs: at least one semantic profile whose configured pool was
examined (with questions, its measured pools), or a request-path site with semantic
ranking whose code-derived pool was judged. Without either there is no window to fill:
skipped (unless a k or exhaustive setting warns on its own).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ragdiag.checks import _observed
from ragdiag.checks._ablation import judge_owned
from ragdiag.checks._code_evidence import at, locate, on_request_path, site_class
from ragdiag.checks._common import profile_used_by, quantile
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.model import DEFAULT_MAX_TEXT_RECALL_SIZE, RERANK_WINDOW

ID = "pool_size"
AZURE_KINDS = ("azure_search", "rest_search")
#: kinds whose pool is what the framework or the SQL query returns (no semantic ranker in front)
OTHER_KINDS = ("sql_similarity", "langchain", "llamaindex", "faiss_search", "haystack", "vector_db")


def configured_pool(profile: Any) -> tuple[int, int, int]:
    """(text recall, vector neighbours, total) a profile can put into fusion."""
    text_ = 0 if profile.keyword_text == "none" else (profile.max_text_recall_size or DEFAULT_MAX_TEXT_RECALL_SIZE)
    vec = sum(vq.k * len(vq.fields) for vq in profile.vector_queries)
    return text_, vec, text_ + vec


def measured_pool(trace: Any) -> int:
    return trace.pool_size if trace.pool is not None else len(trace.hits)


@register
class PoolSize(Check):
    id = ID
    needs = ("target|client_code|traffic", "profiles|client_code|traffic")
    uses = ("questions",)
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        scan = ctx.code_scan() if ctx.has("client_code") else None
        code_pools = self._code(v, spec, scan) if scan is not None else None
        if not (ctx.has("target") and ctx.has("profiles")):
            v.note("runtime_not_run", why=v.msg("why_no_target" if not ctx.has("target") else "why_no_profiles"))
            if code_pools:
                v.passed("pass_code", n=len(code_pools), min=spec.threshold("min_configured_pool"),
                         where=tuple(code_pools[:3]))
            return
        if ctx.supports("sql_probes"):  # the candidates are the client's SQL LIMIT, no semantic ranker
            from ragdiag.checks._sql_clauses import judge_sql_pool

            judge_sql_pool(ctx, spec, v)
            return
        self._runtime(ctx, spec, v, code_pools)

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.pool_size(ctx, spec, v)

    # ---- client code: the pool each call site can put into fusion ----------------------------------------
    def _code(self, v: Verdict, spec: Any, scan: Any) -> list[str]:
        """The code-derived pools; returns the request-path semantic sites judged (their places)."""
        min_conf = spec.threshold("min_configured_pool")
        max_k = spec.threshold("max_k")
        rows, judged, exhaustive = [], [], []
        for s in scan.search_calls:
            if s.kind not in AZURE_KINDS + OTHER_KINDS:
                continue
            sem = _semantic(s)
            leg, text_ = _text_recall(s)
            k = _int(s.params.get("k"))
            k_passed = s.params.get("k") is not None
            top = _int(s.params.get("top"))
            if s.kind in AZURE_KINDS:
                low = (text_ or 0) + (k or 0)          # what is surely in the pool
                known = (leg is not None) and (k is not None or not k_passed)
                pool = low if known else None
            else:
                pool = ((text_ or 0) + (k or 0)) if (k is not None or text_) else None
                low = pool or 0
            if not on_request_path(s):
                verdict = v.msg("pv_not_judged", cls=site_class(v, s))
            elif s.kind in OTHER_KINDS:
                verdict = v.msg("pv_no_ranker", kind=s.kind)
            elif sem == "no":
                verdict = v.msg("pv_not_semantic")
            elif low >= min_conf:
                verdict = v.msg("pv_fills", pool=low, min=min_conf, when=v.msg("when_" + sem))
                judged.append(at(s))
                v.observed("code_semantic_sites")
            elif pool is None:
                verdict = v.msg("pv_unresolved")
            else:
                verdict = v.msg("pv_below", pool=pool, min=min_conf)
                judged.append(at(s))
                v.observed("code_semantic_sites")
                v.fail("code_pool_below", where=at(s), pool=pool, text=text_ or 0, k=k or 0, min=min_conf,
                       when=v.msg("when_" + sem))
                locate(v, s, "loc_code_pool_below", level="error", pool=pool, min=min_conf)
                v.recommend("rec_code_k", where=at(s), k=k or 0)
            if on_request_path(s) and k is not None and k > max_k:
                v.warn("code_k_above", where=at(s), k=k, max=max_k)
                v.recommend("rec_lower_k_code", where=at(s), k=k)
            ex = s.params.get("exhaustive")
            if on_request_path(s) and ex is not None and ex.resolved and ex.value is True:
                exhaustive.append(at(s))
            rows.append((at(s), site_class(v, s), s.kind, v.msg("sem_" + sem), leg, text_, k, top, pool, verdict))
        if rows:
            v.table("code_pools", "t_code_pools", ("site", "site_class", "kind", "semantic", "keyword_leg",
                                                   "text_recall", "vector_k", "top", "pool", "verdict"), rows,
                    note="n_code_pools", min=min_conf)
        if exhaustive:
            v.note("code_exhaustive", where=tuple(exhaustive), documents=spec.threshold("exhaustive_index_size"))
            v.recommend("rec_exhaustive_code", where=tuple(exhaustive))
        if not judged and scan is not None:
            req = [s for s in scan.request_sites() if s.kind in AZURE_KINDS + OTHER_KINDS]
            v.nothing_observed("no_semantic_site", sites=len(req), files=scan.files_scanned)
        return judged

    # ---- the profiles (target and profiles) ---------------------------------------------------------------
    def _runtime(self, ctx: Any, spec: Any, v: Verdict, code_pools: list[str] | None) -> None:
        policy = ctx.policy
        min_conf = spec.threshold("min_configured_pool")
        min_meas = spec.threshold("measured_pool_min")
        max_share = spec.threshold("max_share_below")
        max_k = spec.threshold("max_k")
        big_index = spec.threshold("exhaustive_index_size")
        used_by = profile_used_by(policy)
        semantic = [p for p in policy.profiles.values() if p.query_type == "semantic"]
        if not code_pools:
            v.nothing_observed("no_semantic_profile", profiles=len(policy.profiles))

        index_size = ctx.target.count()
        config_rows = []
        configured_fails = 0
        for p in policy.profiles.values():
            text_, vec, total = configured_pool(p)
            is_sem = p.query_type == "semantic"
            ks = ", ".join(f"{'+'.join(vq.fields)} k={vq.k}{' exhaustive' if vq.exhaustive else ''}"
                           for vq in p.vector_queries) or "-"
            config_rows.append((p.name, ", ".join(used_by.get(p.name, [])) or "-", is_sem,
                                text_ if text_ else 0, ks, total, p.vector_filter_mode, p.filter or ""))
            if is_sem:
                v.observed("semantic_profiles_configured")
                if total < min_conf:
                    configured_fails += 1
                    v.fail("configured_below", profile=p.name, pool=total, min=min_conf)
                    small = tuple(f"k={vq.k} ({'+'.join(vq.fields)})" for vq in p.vector_queries if vq.k < RERANK_WINDOW)
                    v.recommend("rec_set_k" if p.keyword_text != "none" else "rec_set_k_and_keyword",
                                profile=p.name, now=small)
            for vq in p.vector_queries:
                if vq.k > max_k:
                    v.warn("k_above", profile=p.name, k=vq.k, max=max_k)
                    v.recommend("rec_lower_k", profile=p.name, k=vq.k)
                if vq.exhaustive and index_size > big_index:
                    v.warn("exhaustive_large", profile=p.name, documents=index_size)
                    v.recommend("rec_exhaustive_off", profile=p.name)
        v.metric("profiles", len(policy.profiles))
        v.metric("semantic_profiles", len(semantic))
        v.metric("index_documents", index_size)
        v.metric("configured_fail_profiles", configured_fails)
        v.table("configured_pool", "t_configured",
                ("profile", "routes", "semantic", "keyword_recall", "vector_queries", "configured_pool",
                 "filter_mode", "filter"), config_rows)
        above = [(p.name, vq.k) for p in policy.profiles.values() for vq in p.vector_queries
                 if RERANK_WINDOW < vq.k <= max_k]
        if above:
            v.table("k_above_window", "t_k_above", ("profile", "k"), above)
        exhaustive = [(p.name,) for p in policy.profiles.values() if any(vq.exhaustive for vq in p.vector_queries)]
        if exhaustive:
            v.table("exhaustive_profiles", "t_exhaustive", ("profile",), exhaustive, note="n_exhaustive",
                    documents=index_size)

        if not semantic:
            judge_owned(ctx, spec, v, ID)
            if code_pools:
                v.passed("pass_code", n=len(code_pools), min=min_conf, where=tuple(code_pools[:3]))
            elif v.observations.get("elements_ablated"):
                v.passed("pass_ablated", n=v.observations["elements_ablated"])
            return
        if not ctx.has("questions"):
            v.note("measured_not_run")
            v.passed("pass_configured", profiles=len(semantic), min=min_conf)
            return
        anonymous, logged, users = ctx.anonymous_log_questions() if hasattr(ctx, "anonymous_log_questions") \
            else (0, 0, [])
        if anonymous:  # their pools are an unrestricted user's: larger than a real user's
            v.note("anonymous_questions", n=anonymous, questions=logged, users=tuple(users[:3]))
        run = ctx.run_gold(policy, probe=probes.pool(RERANK_WINDOW), label="pool sizes")
        v.requests(run)
        sem_names = {p.name for p in semantic}
        per_profile: dict[str, list[int]] = defaultdict(list)
        per_query = []
        for q, trace in run.traces():
            size = measured_pool(trace)
            per_query.append((q.case.id, q.intent, q.profile, size))
            if q.profile in sem_names:
                per_profile[q.profile].append(size)
        sizes = [s for vals in per_profile.values() for s in vals]
        if not sizes:  # questions exist, but no route sends any to a semantic profile
            v.note("measured_unrouted", profiles=tuple(sorted(sem_names)), questions=len(per_query))
            judge_owned(ctx, spec, v, ID)
            v.passed("pass_configured", profiles=len(semantic), min=min_conf)
            return
        v.observed("pools_measured", len(sizes))
        share_below = sum(s < min_meas for s in sizes) / len(sizes) if sizes else None
        v.metric("queries", len(sizes))
        v.metric("measured_pool_p5", quantile(sizes, 0.05))
        v.metric("measured_pool_median", quantile(sizes, 0.5))
        v.metric("share_below", share_below)
        rows = []
        starving = []
        for name, vals in sorted(per_profile.items()):
            sb = sum(x < min_meas for x in vals) / len(vals)
            prof = policy.profiles[name]
            post = sb > 0 and prof.vector_filter_mode != "preFilter" and bool(prof.filter)
            rows.append((name, len(vals), quantile(vals, 0.05), quantile(vals, 0.5), min(vals), sb,
                         v.msg("cause_post_filter", mode=prof.vector_filter_mode) if post else ""))
            if sb > 0:
                starving.append((name, post, prof.vector_filter_mode))
        v.table("measured_pool", "t_measured", ("profile", "queries", "p5", "median", "min", "share_below",
                                                "cause"), rows, source=ctx.question_source, min=min_meas)
        v.table("pool_per_question", "t_per_question", ("case", "intent", "profile", "pool"), per_query,
                note="n_per_question")
        if share_below is not None and share_below > max_share:
            v.warn("measured_below", share=share_below, min=min_meas, profiles=tuple(n for n, _, _ in starving))
            for name, post, mode in starving:
                if post:
                    v.recommend("rec_prefilter", profile=name, mode=mode)
        # k, recall size, weights, filter mode, exhaustive: each neutralised on the goldset
        judge_owned(ctx, spec, v, ID)
        v.passed("pass_measured", profiles=len(semantic), min=min_conf, median=quantile(sizes, 0.5),
                 questions=len(sizes))

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "pool_per_question", "profile", "pool")
        if not rows:
            return None
        by_profile: dict[str, list[int]] = defaultdict(list)
        for profile, size in rows:
            by_profile[profile].append(int(size))
        names = sorted(by_profile)
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7, 3.2))
        ax.boxplot([[max(x, 1) for x in by_profile[n]] for n in names], tick_labels=names, showfliers=True)
        ax.set_yscale("log")
        ax.axhline(RERANK_WINDOW, color="red", linestyle="--", linewidth=1,
                   label=text(ID, "fig_window", lang, window=RERANK_WINDOW))
        ax.set_ylabel(text(ID, "fig_ylabel", lang))
        ax.set_title(text(ID, "fig_title", lang))
        ax.tick_params(axis="x", rotation=30, labelsize=8)
        ax.legend(fontsize=8)
        fig.tight_layout()
        return fig


def _int(p: Any) -> int | None:
    if p is None or not p.resolved or isinstance(p.value, bool) or not isinstance(p.value, int | float):
        return None
    return int(p.value)


def _semantic(site: Any) -> str:
    """``yes``, ``conditional`` (under a condition, a setting or the request) or ``no``."""
    p = site.params.get("query_type")
    if p is None:
        return "no"
    if p.value is None or "semantic" not in str(p.value).lower():
        # one branch of `"semantic" if configured else "simple"`: semantic under that condition; and a non-semantic
        # default that a value the code does not show replaces at run time (`payload.get("query_type", "simple")`,
        # a setting) is no evidence that the ranker is off
        replaced = p.resolved and (p.override or "").startswith(("request:", "expression:", "condition:", "env:"))
        return "conditional" if (not p.resolved and "semantic" in (p.expression or "").lower()) or replaced else "no"
    cond = (not p.resolved or p.source.startswith("when:") or "(conditional)" in p.source
            or (p.override or "").startswith(("condition:", "request:", "env:", "parameter:")))
    return "conditional" if cond else "yes"


def _text_recall(site: Any) -> tuple[bool | None, int | None]:
    """(keyword leg?, text recall): a keyword leg recalls max_text_recall_size (1000 by default)."""
    sql = site.params.get("text_k")
    if sql is not None:
        n = _int(sql)
        return True, n
    if site.kind not in AZURE_KINDS:
        return False, 0
    explicit = _int(site.params.get("max_text_recall_size"))
    p = site.params.get("search_text")
    if site.channel_vars.get("search_text") or (p is not None and not p.resolved):
        leg: bool | None = True
    elif p is not None and p.resolved:
        leg = p.value not in (None, "", "*")
    else:
        leg = None if site.channel_vars else False
    if leg:
        return True, explicit if explicit is not None else DEFAULT_MAX_TEXT_RECALL_SIZE
    return leg, 0 if leg is False else None
