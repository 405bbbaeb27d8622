"""Every what-if knob of the sample on a warm target, this checkout against another, paired.

A what-if changes one knob of `fact_template` (53 of the 230 sample questions are routed
there) and re-evaluates the whole goldset, as the tuner does: a runner of its own over the
audit's trace store (`ragdiag.tuner.widget._memory_runner`), the target warm (the baseline
ran, so its stage caches hold the unchanged legs). Every value is one the target has never
seen, so every "first" evaluation sends 53 new requests. Knobs: a new k, a new vector
weight, a dropped filter clause (each clause in turn), the keyword text mode, a new
keyword recall cap (`max_text_recall_size`) and the profile's `top`.

Each checkout runs in fresh processes (`--src DIR` puts another checkout's `ragdiag` first
on the path, e.g. a `git archive main` export), alternated A/B/A/B so the shared machine's
load treats both alike. Reported per knob: median wall and process CPU ms of the first
evaluations (CPU includes FAISS's threads), and the ratio this checkout / the other.

    python benchmarks/bench_whatif.py [--src /path/to/main-export] [--rounds 3] [--values 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KNOBS = ("k", "weight", "clause", "text", "recall", "top")


def _knob_profiles(fact, knob: str, n: int, offset: int) -> list:
    from dataclasses import replace

    from ragdiag import odata

    if knob == "k":
        return [fact.replace(vector_queries=tuple(replace(v, k=51 + offset + i) for v in fact.vector_queries))
                for i in range(n)]
    if knob == "weight":
        return [fact.replace(vector_queries=tuple(replace(v, weight=1.5 + 0.25 * (offset + i))
                                                  for v in fact.vector_queries)) for i in range(n)]
    if knob == "clause":
        count = len(odata.clauses(odata.parse(fact.filter)))
        return [fact.replace(filter=odata.render(odata.drop_clause(odata.parse(fact.filter), i)))
                for i in range(count)]
    if knob == "text":  # ("none" is refused for fact_template: its vector texts are the keyword text)
        return [fact.replace(keyword_text=m) for m in ("verbatim", "keywords") if m != fact.keyword_text]
    if knob == "recall":
        return [fact.replace(max_text_recall_size=500 + 37 * (offset + i)) for i in range(n)]
    if knob == "top":
        return [fact.replace(top=11 + offset + i) for i in range(n)]
    raise ValueError(knob)


def worker(n_values: int, offset: int) -> dict:
    """One process: open the sample, run the baseline twice, then every knob's what-ifs."""
    from ragdiag.audit import build_context
    from ragdiag.engine.context import GoldRun
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import open_sample_target, sample_dir
    from ragdiag.tuner.widget import _memory_runner

    open_sample_target("structured", progress=False)
    tmp = tempfile.mkdtemp(prefix="ragdiag-bench-whatif-")
    ctx = build_context(load_config(sample_dir() / "audit.toml"), progress=False, cache_dir=Path(tmp))
    policy = ctx.policy

    def evaluate(pol, runner=None) -> float:
        queries = ctx.gold_queries(pol)
        results = (runner or ctx.runner).run_fused([q.requests for q in queries])
        return GoldRun("what-if", queries, results).evaluation(ctx.goldset).aggregate["ndcg@10"]

    evaluate(policy)
    evaluate(policy)
    whatif = _memory_runner(ctx.runner)
    fact = policy.profiles["fact_template"]
    out: dict = {}
    for knob in KNOBS:
        walls, cpus, sent, ndcg = [], [], [], []
        for prof in _knob_profiles(fact, knob, n_values, offset):
            pol = policy.with_profile(prof)
            s0 = whatif.stats.sent
            c0, t0 = time.process_time(), time.perf_counter()
            ndcg.append(round(evaluate(pol, whatif), 4))
            walls.append((time.perf_counter() - t0) * 1000)
            cpus.append((time.process_time() - c0) * 1000)
            sent.append(whatif.stats.sent - s0)
        out[knob] = {"wall_ms": walls, "cpu_ms": cpus, "sent": sent, "ndcg@10": ndcg}
    return out


def _run(src: str | None, n_values: int, offset: int) -> dict:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--values", str(n_values),
           "--offset", str(offset)]
    res = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", help="another checkout's root (its ragdiag/ is imported instead)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--values", type=int, default=3)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "whatif.json"))
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.values, args.offset)))
        return
    variants = {"this": None, "other": args.src} if args.src else {"this": None}
    runs: dict[str, list[dict]] = {v: [] for v in variants}
    load = [os.getloadavg()[0]]
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(variants)[::-1]
        for v in order:
            runs[v].append(_run(variants[v], args.values, 0))
    load.append(os.getloadavg()[0])
    summary: dict = {}
    for knob in KNOBS:
        row: dict = {}
        for v, rs in runs.items():
            walls = [w for r in rs for w in r[knob]["wall_ms"]]
            cpus = [c for r in rs for c in r[knob]["cpu_ms"]]
            row[v] = {"wall_median_ms": round(statistics.median(walls), 1), "wall_max_ms": round(max(walls), 1),
                      "cpu_median_ms": round(statistics.median(cpus), 1),
                      "sent_each": rs[0][knob]["sent"], "ndcg@10": rs[0][knob]["ndcg@10"]}
        if "other" in row:
            row["cpu_ratio"] = round(row["this"]["cpu_median_ms"] / row["other"]["cpu_median_ms"], 3)
            row["wall_ratio"] = round(row["this"]["wall_median_ms"] / row["other"]["wall_median_ms"], 3)
            row["same_ndcg"] = row["this"]["ndcg@10"] == row["other"]["ndcg@10"]
        summary[knob] = row
        line = "  ".join(f"{v}: wall {row[v]['wall_median_ms']:7.1f} ms, CPU {row[v]['cpu_median_ms']:6.1f} ms"
                         for v in variants)
        extra = f"  CPU ratio {row['cpu_ratio']:.2f}, same nDCG {row['same_ndcg']}" if "other" in row else ""
        print(f"{knob:7s} {line}{extra}")
    print(f"load average (1 min) start / end: {load[0]:.1f} / {load[1]:.1f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rounds": args.rounds, "values": args.values, "load_1min": load,
                               "summary": summary, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
