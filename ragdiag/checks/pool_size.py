"""Check 2: does the fused candidate pool reach the reranker's 50-document window after filters?

Configured pool per profile = max_text_recall_size (1000 by default, 0 without a
keyword leg) + k of every (vector query, field). Measured pool per question =
distinct candidates reaching fusion after every filter (local: the trace's pool;
live: the hits of a top-50 request without reranking, which is min(pool, 50)).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ragdiag.checks._common import (
    evidence,
    incomplete,
    needs_policy,
    needs_questions,
    num,
    pct,
    profile_used_by,
    quantile,
)
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.model import DEFAULT_MAX_TEXT_RECALL_SIZE
from ragdiag.model.findings import Finding

ID = "pool_size"


def configured_pool(profile: Any) -> tuple[int, int, int]:
    """(text recall, vector neighbours, total) a profile can put into fusion."""
    text = 0 if profile.keyword_text == "none" else (profile.max_text_recall_size or DEFAULT_MAX_TEXT_RECALL_SIZE)
    vec = sum(vq.k * len(vq.fields) for vq in profile.vector_queries)
    return text, vec, text + vec


def measured_pool(trace: Any) -> int:
    return trace.pool_size if trace.pool is not None else len(trace.hits)


@register
class PoolSize:
    id = ID
    needs = ("target", "profiles", "questions")

    def run(self, ctx: Any, spec: Any) -> Finding:
        skipped = needs_policy(ctx, ID)
        if skipped:
            return skipped
        policy = ctx.policy
        min_conf = spec.threshold("min_configured_pool")
        min_meas = spec.threshold("measured_pool_min")
        max_share = spec.threshold("max_share_below")
        max_k = spec.threshold("max_k")
        big_index = spec.threshold("exhaustive_index_size")
        used_by = profile_used_by(policy)

        fails, warns, recs, config_rows = [], [], [], []
        index_size = ctx.target.count()
        for p in policy.profiles.values():
            text, vec, total = configured_pool(p)
            semantic = p.query_type == "semantic"
            ks = ", ".join(f"{'+'.join(vq.fields)} k={vq.k}{' exhaustive' if vq.exhaustive else ''}"
                           for vq in p.vector_queries) or "none"
            config_rows.append((p.name, ", ".join(used_by.get(p.name, [])) or "-", "yes" if semantic else "no",
                                text if text else "no keyword leg", ks, total, p.vector_filter_mode,
                                p.filter or ""))
            if semantic and total < min_conf:
                fails.append(f"{p.name}: configured pool {total} < {min_conf}")
                small = [vq for vq in p.vector_queries if vq.k < 50]
                what = ", ".join(f"k={vq.k} on {'+'.join(vq.fields)}" for vq in small)
                recs.append(f"profile '{p.name}': set k = 50 on every vector query ({what} now)"
                            + ("" if p.keyword_text != "none" else
                               " and add a keyword leg (keyword_text = \"keywords\", max_text_recall_size >= 50)")
                            + "; control what users see with top")
            for vq in p.vector_queries:
                if vq.k > max_k:
                    warns.append(f"{p.name}: k={vq.k} > {max_k}")
                    recs.append(f"profile '{p.name}': lower k from {vq.k} to 50; the reranker only uses 50")
                if vq.exhaustive and index_size > big_index:
                    warns.append(f"{p.name}: exhaustive on an index of {index_size} documents")
                    recs.append(f"profile '{p.name}': set exhaustive = false (HNSW) except for ground truth runs")

        latency_notes = [f"{p.name}: k={vq.k}" for p in policy.profiles.values() for vq in p.vector_queries
                         if 50 < vq.k <= max_k]
        exhaustive_notes = [p.name for p in policy.profiles.values() if any(vq.exhaustive for vq in p.vector_queries)]

        metrics: dict[str, Any] = {"profiles": len(policy.profiles), "index_documents": index_size,
                                   "configured_fail_profiles": len(fails)}
        ev = [evidence("Configured pool per profile",
                       ("profile", "routes", "semantic", "keyword recall", "vector queries",
                        "configured pool", "filter mode", "filter"), config_rows)]
        measured_note = ""
        inc: dict[str, int] = {}
        no_questions = needs_questions(ctx, ID)
        if no_questions is None:
            run = ctx.run_gold(policy, probe=probes.pool(50), label="pool sizes")
            inc = incomplete(run)
            per_profile: dict[str, list[int]] = defaultdict(list)
            per_query = []
            for q, trace in run.traces():
                size = measured_pool(trace)
                per_profile[q.profile].append(size)
                per_query.append((q.case.id, q.intent, q.profile, size))
            sizes = [r[3] for r in per_query]
            below = [s < min_meas for s in sizes]
            share_below = sum(below) / len(below) if below else None
            metrics.update({"queries": len(sizes), "measured_pool_p5": quantile(sizes, 0.05),
                            "measured_pool_median": quantile(sizes, 0.5), "share_below": share_below})
            rows = []
            for name, vals in sorted(per_profile.items()):
                sb = sum(v < min_meas for v in vals) / len(vals)
                rows.append((name, len(vals), num(quantile(vals, 0.05), 0), num(quantile(vals, 0.5), 0),
                             min(vals), pct(sb)))
                prof = policy.profiles[name]
                if sb > 0 and prof.vector_filter_mode != "preFilter" and prof.filter:
                    rows[-1] = rows[-1] + (f"{prof.vector_filter_mode} with filter: post-filtering "
                                           "removes candidates after top-k",)
                else:
                    rows[-1] = rows[-1] + ("",)
            ev.append(evidence(f"Measured pool after filters ({ctx.question_source} questions)",
                               ("profile", "queries", "p5", "median", "min", f"share < {min_meas}", "cause"),
                               rows))
            ev.append(evidence("Pool size per question", ("case", "intent", "profile", "pool"), per_query,
                               note="input of the pool-size figure"))
            if share_below is not None and share_below > max_share:
                starving = [r[0] for r in rows if r[5] != "0%"]
                warns.append(f"measured pool < {min_meas} for {pct(share_below)} of queries "
                             f"(profiles: {', '.join(starving)})")
                for name in starving:
                    prof = policy.profiles[name]
                    if prof.vector_filter_mode != "preFilter" and prof.filter:
                        recs.append(f"profile '{name}': use vector_filter_mode = \"preFilter\"; "
                                    f"{prof.vector_filter_mode} filters after top-k and shrinks the pool")
        else:
            measured_note = " (measured pool not run: no goldset or query log)"

        if latency_notes:
            ev.append(evidence("Vector queries with k above 50 (latency without benefit)", ("profile",),
                               [(n,) for n in latency_notes]))
        if exhaustive_notes:
            ev.append(evidence("Profiles with exhaustive search", ("profile",), [(n,) for n in exhaustive_notes],
                               note=f"index has {index_size} documents; exhaustive bypasses HNSW on every query"))
        status = "fail" if fails else "warn" if warns else "pass"
        if fails:
            headline = f"{len(fails)} semantic profile(s) cannot fill the 50-document window: " + "; ".join(fails)
        elif warns:
            headline = "pool concerns: " + "; ".join(warns)
        else:
            headline = (f"every semantic profile can fill the 50-document window; median measured pool "
                        f"{num(metrics.get('measured_pool_median'), 0)}")
        return Finding(check_id=ID, status=status, headline=headline + measured_note, metrics=metrics,
                       evidence=tuple(ev), recommendations=tuple(dict.fromkeys(recs)), incomplete=inc,
                       figures=("pool_size",))
