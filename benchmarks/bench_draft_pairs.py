"""The sample's drafts before and after issue 29: which profile pairs do they order unlike the real
goldset, and can the real goldset order those pairs at all?

For the six profiles of bench_draft.py's sample run, per-question nDCG@10 on the real goldset
and on each drafted goldset; per pair of profiles a paired sign-flip test on the real
goldset's per-question differences (4,000 flips, seed 0) says whether the real goldset
resolves the pair (p < 0.05); per draft: Kendall tau against the real order, the pairs it
swaps, and how many resolved pairs it orders like the real goldset. Also nDCG@10 per rule
(per intent on the real goldset) for the seed-1 drafts, which is where the change shows.

The drafts "before" are those committed at e18b897 (read with git), "after" those in
benchmarks/results/draft-sample-seed*.yaml.

    python benchmarks/bench_draft_pairs.py   # -> results/draft-sample-pairs.json
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
BEFORE = "e18b897"  # the drafts before issue 29's overlap cap and overview rule
FLIPS = 4000


def _sign_flip_p(a: dict[str, float], b: dict[str, float], rng: random.Random) -> float:
    d = [a[q] - b[q] for q in a]
    obs = abs(sum(d))
    hits = sum(abs(sum(x if rng.random() < 0.5 else -x for x in d)) >= obs - 1e-12 for _ in range(FLIPS))
    return (hits + 1) / (FLIPS + 1)


def main() -> None:
    import yaml
    from bench_draft import basic_profiles
    from scipy.stats import kendalltau

    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.inputs.goldset import load_goldset
    from ragdiag.sample.system import sample_config

    ctx = build_context(load_config(sample_config()), progress=False,
                        cache_dir=Path(tempfile.mkdtemp(prefix="bench-pairs-")))
    profiles = basic_profiles(["content", "title", "section_title"], "group_ids", with_semantic_variants=False)
    profiles["misconfigured policy"] = ctx.policy
    profiles["tuned policy"] = ctx.compare_policy
    names = list(profiles)

    def per_question(gs, label: str) -> dict[str, dict[str, float]]:
        out = {}
        for n, pol in profiles.items():
            ctx.forget_gold_runs()  # drafts of different seeds share case ids
            ev = ctx.run_gold(pol, cases=list(gs), label=f"{n}:{label}").evaluation(gs)
            out[n] = {q: v["ndcg@10"] for q, v in ev.per_query.items()}
        return out

    def by_group(pq: dict[str, dict[str, float]], group: dict[str, str]) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for n, vals in pq.items():
            acc: dict[str, list[float]] = {}
            for q, v in vals.items():
                acc.setdefault(group[q], []).append(v)
            out[n] = {g: round(sum(x) / len(x), 3) for g, x in sorted(acc.items())}
        return out

    def mean(d: dict[str, float]) -> float:
        return sum(d.values()) / len(d)

    rng = random.Random(0)
    real = per_question(ctx.goldset, "real")
    rm = {n: mean(real[n]) for n in names}
    pairs = {(a, b): {"real_diff": round(rm[a] - rm[b], 4), "p": round(_sign_flip_p(real[a], real[b], rng), 4)}
             for a, b in itertools.combinations(names, 2)}
    resolved = [k for k, v in pairs.items() if v["p"] < 0.05]
    result: dict = {"real": {n: round(v, 4) for n, v in rm.items()},
                    "real_by_intent": by_group(real, {c.id: c.intent for c in ctx.goldset}),
                    "pairs": {f"{a} / {b}": v for (a, b), v in pairs.items()}, "drafts": {}}
    tmp = Path(tempfile.mkdtemp(prefix="bench-pairs-drafts-"))
    for when in ("before", "after"):
        for seed in (0, 1, 2):
            name = f"benchmarks/results/draft-sample-seed{seed}.yaml"
            path = tmp / f"{when}-{seed}.yaml"
            if when == "before":
                path.write_text(subprocess.run(["git", "show", f"{BEFORE}:{name}"], cwd=HERE.parent, check=True,
                                               capture_output=True, text=True).stdout, encoding="utf-8")
            else:
                path.write_text((HERE.parent / name).read_text(encoding="utf-8"), encoding="utf-8")
            gs = load_goldset(path)
            pq = per_question(gs, f"{when}{seed}")
            dm = {n: mean(pq[n]) for n in names}
            row = {"tau": round(float(kendalltau([rm[n] for n in names], [dm[n] for n in names]).statistic), 3),
                   "ndcg@10": {n: round(v, 4) for n, v in dm.items()},
                   "swapped": [f"{a} / {b}" for (a, b), v in pairs.items() if (v["real_diff"] > 0) != (dm[a] > dm[b])],
                   "resolved_pairs": len(resolved),
                   "resolved_agree": sum((pairs[k]["real_diff"] > 0) == (dm[k[0]] > dm[k[1]]) for k in resolved)}
            if seed == 1:
                rules = {c["id"]: c["rule"] for c in yaml.safe_load(path.read_text(encoding="utf-8"))}
                row["by_rule"] = by_group(pq, rules)
            result["drafts"][f"{when} seed {seed}"] = row
            print(f"{when} seed {seed}: tau {row['tau']}, resolved pairs ordered as real "
                  f"{row['resolved_agree']}/{row['resolved_pairs']}, swapped {row['swapped']}", flush=True)
    out = HERE / "results" / "draft-sample-pairs.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written {out}")


if __name__ == "__main__":
    main()
