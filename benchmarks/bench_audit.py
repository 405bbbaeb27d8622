"""Audit-level timings on the sample system: what-ifs from the runner's cache, the checks, the audit.

    .venv/bin/python benchmarks/bench_audit.py [--out benchmarks/results/audit.json]

Measured in one process on the embedded sample (misconfigured policy, 230 goldset
questions), the index already built and embeddings cached on disk (a cold start
that embeds the corpus is timed by bench_local_target.py):

- what-if: change one profile parameter (k, a vector weight, drop a filter clause, the
  keyword text mode) and re-evaluate every goldset question; each knob is set to several
  values never seen before, so every "first" evaluation sends new requests to a warm
  target (the baseline ran: stage caches filled), "repeat" answers from the runner;
- the six runtime checks together, cold (fresh runner, fresh process state) and
  warm (same context, every request already cached);
- the full audit (all ten checks), cold and warm.
Ratios are reported against the baseline evaluation in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUNTIME = ("reranker_scores", "pool_size", "prerank_filters", "shared_query_text", "route_counts", "goldset")


def _ctx(cache: Path):
    """A fresh audit context (empty trace cache) over the shared target with cleared stage caches."""
    from ragdiag.audit import build_context
    from ragdiag.sample.system import open_sample_target

    open_sample_target("structured", progress=False).clear_stage_caches()
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir

    return build_context(load_config(sample_dir() / "audit.toml"), progress=False, cache_dir=cache)


def _evaluate(ctx, policy, runner=None) -> float:
    from ragdiag.engine.context import GoldRun

    queries = ctx.gold_queries(policy)
    results = (runner or ctx.runner).run_fused([q.requests for q in queries])
    run = GoldRun("what-if", queries, results)
    return run.evaluation(ctx.goldset).aggregate["ndcg@10"]


def _timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def what_ifs(ctx, n_values: int = 5) -> dict:
    """One knob of fact_template at a time, each to `n_values` values never seen before (so
    every "first" re-evaluation sends new requests), on a warm target (the baseline ran)."""
    from dataclasses import replace

    from ragdiag import odata

    policy = ctx.policy
    fact = policy.profiles["fact_template"]
    clauses = odata.clauses(odata.parse(fact.filter))
    modes = [m for m in ("verbatim", "keywords", "none") if m != fact.keyword_text]
    knobs = {
        "new k (50 -> 51..)": [fact.replace(vector_queries=tuple(replace(v, k=51 + i) for v in fact.vector_queries))
                               for i in range(n_values)],
        "new vector weight (1.0 -> 1.5..)": [fact.replace(vector_queries=tuple(
            replace(v, weight=1.5 + 0.25 * i) for v in fact.vector_queries)) for i in range(n_values)],
        "dropped filter clause": [fact.replace(filter=odata.render(odata.drop_clause(odata.parse(fact.filter), i)))
                                  for i in range(len(clauses))],
        # ("none" is refused for fact_template: its vector and semantic texts are the keyword text)
        "keyword text mode": [fact.replace(keyword_text=m) for m in modes if m != "none"],
    }
    from ragdiag.tuner.widget import _memory_runner

    # what-ifs run as the tuner runs them: a runner of their own over the audit's trace store
    whatif = _memory_runner(ctx.runner)
    cold_ms, base = _timed(lambda: _evaluate(ctx, policy))
    warm_base_ms, _ = _timed(lambda: _evaluate(ctx, policy))
    out = {"baseline_cold_ms": round(cold_ms, 1), "baseline_repeat_ms": round(warm_base_ms, 1),
           "baseline_ndcg@10": round(base, 4), "what_ifs": {}}
    for name, profiles in knobs.items():
        firsts, agains, sent, cpus = [], [], [], []
        for prof in profiles:
            pol = policy.with_profile(prof)
            s0 = whatif.stats.sent
            c0 = time.thread_time()
            first, ndcg = _timed(lambda pol=pol: _evaluate(ctx, pol, whatif))
            cpus.append((time.thread_time() - c0) * 1000)
            sent.append(whatif.stats.sent - s0)
            firsts.append(first)
            agains.append(_timed(lambda pol=pol: _evaluate(ctx, pol, whatif))[0])
        out["what_ifs"][name] = {"first_ms_each": [round(x, 1) for x in firsts],
                                 "first_median_ms": round(statistics.median(firsts), 1),
                                 "first_max_ms": round(max(firsts), 1),
                                 "first_cpu_median_ms": round(statistics.median(cpus), 1),
                                 "repeat_median_ms": round(statistics.median(agains), 1),
                                 "new_requests_each": sent, "last_ndcg@10": round(ndcg, 4)}
    return out


def checks(ctx, ids=None) -> dict:
    from ragdiag.audit import run_checks

    cold, result = _timed(lambda: run_checks(ctx, checks=ids))
    warm, _ = _timed(lambda: run_checks(ctx, checks=ids))
    return {"cold_ms": round(cold, 1), "warm_ms": round(warm, 1),
            "statuses": {f.check_id: f.status for f in result.findings},
            "requests_sent": ctx.runner.stats.sent}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "audit.json"))
    args = ap.parse_args()
    from ragdiag.sample.system import open_sample_target

    t0 = time.perf_counter()
    open_sample_target("structured", progress=False)
    open_ms = (time.perf_counter() - t0) * 1000
    import os

    results: dict = {"open_index_ms": round(open_ms, 1), "load_1min_start": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory() as tmp:
        results["what_if"] = what_ifs(_ctx(Path(tmp) / "a"))
    with tempfile.TemporaryDirectory() as tmp:
        results["six_runtime_checks"] = checks(_ctx(Path(tmp) / "b"), RUNTIME)
    with tempfile.TemporaryDirectory() as tmp:
        results["full_audit"] = checks(_ctx(Path(tmp) / "c"))
    results["load_1min_end"] = os.getloadavg()[0]
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
