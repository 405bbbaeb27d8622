"""The optimizer on the sample's misconfigured policy: held-out nDCG@10 of the current, the proposed
and the hand-tuned policy (sample_data/profiles/tuned.toml), wall time and requests.

For each seed (a different train / validation / test split) the optimizer runs from a fresh,
empty trace store, so `requests` counts every search it executes, as a live index would be
asked; the hand-tuned policy is scored on the same held-out questions (the config's
compare_profiles). The same is done once with 5-fold cross-validation (out-of-fold test
figures over all questions). Wall time is also given as a ratio to one cold run of the whole
goldset through the current policy in the same process (the cost of one policy what-if).

    python benchmarks/bench_optimize.py [--seeds 0,1,2,3,4] [--folds 5]

Writes benchmarks/results/optimize.json and prints a Markdown table.

    python benchmarks/bench_optimize.py --collections cisi,cacm,xquad-de [--seeds 0,1,2] [--label first-pass]

On three public collections new to the project (benchmarks/collections_data.py; fetched, never
committed): the `ragdiag init --beir` system of each (policy: keyword, vector, hybrid and
hybrid_semantic profiles, route default = hybrid), optimized per seed; held-out nDCG@10 of the
current policy, the proposal, the best existing profile on the same held-out questions and a
tuned bm25s + vector fusion (bench_baseline.py: its fusion weight chosen on the same train
questions). Writes benchmarks/results/optimize-collections-<label>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _context(cache: Path):
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_dir

    return build_context(load_config(sample_dir() / "audit.toml"), progress=False, cache_dir=cache)


def _one_policy_run(cache: Path) -> float:
    ctx = _context(cache)
    t0 = time.perf_counter()
    ctx.run_gold(ctx.policy)
    return time.perf_counter() - t0


def run(seed: int, folds: int) -> dict:
    from ragdiag.optimize import optimize_policy

    with tempfile.TemporaryDirectory(prefix="bench-opt-") as tmp:
        ref = _one_policy_run(Path(tmp) / "ref")
        ctx = _context(Path(tmp) / "opt")
        t0 = time.perf_counter()
        result = optimize_policy(ctx, seed=seed, folds=folds, log=lambda m: None)
        wall = time.perf_counter() - t0
    d = result.data
    return {"seed": seed, "folds": folds, "test_n": d["baseline"]["test"]["n"],
            "baseline": d["baseline"]["test"]["ndcg@10"], "proposed": d["proposed"]["test"]["ndcg@10"],
            "tuned": d["compare"]["test"]["ndcg@10"], "p_vs_baseline": d["p_value"],
            "p_vs_tuned": d["compare"]["p_value"],
            "proposed_minus_tuned": d["compare"]["proposed_vs_compare"]["ndcg@10"]["delta"],
            "changes": len(d["changes"]), "candidates": d["proposed"]["candidates"],
            "decision": d.get("decision", {}).get("outcome"),
            "tuned_hybrid": d.get("alternatives", {}).get("tuned_hybrid", {}).get("test", {}).get("ndcg@10"),
            "requests": d["requests"], "wall_s": wall, "one_policy_run_s": ref,
            "wall_ratio": wall / ref if ref else None,
            "load_1min": os.getloadavg()[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1,2,3,4")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--collections", help="comma-separated: cisi, cacm, xquad-de (benchmarks/collections_data.py)")
    ap.add_argument("--label", default="after", help="names the results file of --collections")
    args = ap.parse_args()
    if args.collections:
        from bench_baseline import run_collections

        run_collections([c for c in args.collections.split(",") if c],
                        [int(s) for s in args.seeds.split(",") if s.strip()], args.label)
        return
    rows = [run(int(s), 1) for s in args.seeds.split(",") if s.strip()]
    if args.folds > 1:
        rows.append(run(0, args.folds))
    out = ROOT / "benchmarks" / "results" / "optimize.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print("| split | test n | current | proposed | hand-tuned | proposed - tuned | p vs current (Holm) "
          "| p vs tuned (Holm) | changes | candidates | requests | wall s | x one policy run | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        split = f"seed {r['seed']}" if r["folds"] == 1 else f"{r['folds']}-fold"
        print(f"| {split} | {r['test_n']} | {r['baseline']:.3f} | {r['proposed']:.3f} | {r['tuned']:.3f} | "
              f"{r['proposed_minus_tuned']:+.3f} | {r['p_vs_baseline']:.2g} | {r['p_vs_tuned']:.2g} | "
              f"{r['changes']} | {r['candidates']} | {r['requests']} | {r['wall_s']:.1f} | "
              f"{r['wall_ratio']:.0f} | {r['load_1min']:.1f} |")
    single = [r for r in rows if r["folds"] == 1]
    if single:
        print(f"\nmean over {len(single)} seeds: current {statistics.mean(r['baseline'] for r in single):.3f}, "
              f"proposed {statistics.mean(r['proposed'] for r in single):.3f}, "
              f"tuned {statistics.mean(r['tuned'] for r in single):.3f}; proposed >= tuned in "
              f"{sum(r['proposed'] >= r['tuned'] for r in single)} of {len(single)}")


if __name__ == "__main__":
    main()
