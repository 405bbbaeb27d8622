"""``ragdiag optimize``: a proposed policy validated on held-out questions.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ragdiag.cli._common import _console, _log, _print_table


def cmd_optimize(args: argparse.Namespace) -> int:
    """Propose a policy validated on held-out goldset questions (or print the plan with --plan)."""
    from ragdiag.audit import build_context
    from ragdiag.errors import ConfigError
    from ragdiag.inputs.config import load_config
    from ragdiag.optimize import optimize_policy, plan_optimization

    if not args.plan and not args.out:
        raise ConfigError("optimize needs --out DIR (the folder for profiles.toml and optimize.json); "
                          "or --plan to see the plan without searching")
    if args.budget is not None and args.budget < 0:
        raise ConfigError(f"--budget must be a number of requests >= 0, got {args.budget}")
    config = load_config(Path(args.config))
    if not args.plan:  # refused now, not after the optimisation ran
        from ragdiag.outputs import check_output_dir

        check_output_dir(args.out, "optimizer outputs")
    if not config.profiles:
        raise ConfigError("optimize needs the current policy: set [inputs] profiles in the audit config",
                          path=str(config.path))
    if not config.goldset:
        raise ConfigError("optimize needs a goldset with expected sources: set [inputs] goldset in the "
                          "audit config", path=str(config.path))
    ctx = build_context(config, log=_log, progress=not args.quiet)
    con = _console()
    if args.plan:
        plan = plan_optimization(ctx, budget=args.budget, seed=args.seed, folds=args.folds)
        cols = ["split", "profile", "train", "validation", "test", "knobs", "candidates_per_pass",
                "max_candidates", "max_requests"]
        _print_table(con, f"ragdiag optimize --plan: {getattr(ctx.target, 'name', 'the target')} "
                          f"({plan['folds']} fold(s), nothing is sent)",
                     cols, [[str(r[c]) for c in cols] for r in plan["rows"]], right=cols[2:])
        con.print(f"{plan['questions']} questions; at most {plan['max_candidates']} candidates and "
                  f"{plan['max_requests']} requests (distinct requests are sent once, repeats come from "
                  f"the cache); the current policy still needs {plan['baseline_uncached']} uncached "
                  f"requests; budget {plan['budget'] if plan['budget'] is not None else 'none'}"
                  + (f", of which {plan['reserve']} are kept for the current policy and the held-out "
                     "comparison" if plan["budget"] is not None else ""))
        return 0
    log = (lambda m: None) if args.quiet else _log
    result = optimize_policy(ctx, budget=args.budget, seed=args.seed, folds=args.folds, log=log)
    prof, res = result.write(args.out)
    d = result.data
    bt, pt = d["baseline"]["test"], d["proposed"]["test"]

    def f(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}"

    rows = [["baseline", d["baseline"].get("policy", ""), f(d["baseline"]["train"]["ndcg@10"]),
             f(bt["ndcg@10"]), f(bt["recall@50"])],
            ["proposed", result.proposed.name, f(d["proposed"]["train"]["ndcg@10"]), f(pt["ndcg@10"]),
             f(pt["recall@50"])]]
    if d["compare"]:
        ct = d["compare"]["test"]
        rows.append(["compare", d["compare"]["policy"], "", f(ct["ndcg@10"]), f(ct["recall@50"])])
    p = d["p_value"]
    dec = d.get("decision") or {}
    best = (dec.get("validation") or {}).get("best_existing")
    if best:
        et = dec["test"]["existing"][best]
        rows.append(["best existing", best, "", f(et["ndcg@10"]), f(et["recall@50"])])
    tuned = (d.get("alternatives") or {}).get("tuned_hybrid")
    if tuned:
        rows.append(["simple hybrid", "tuned vector weight", "", f(tuned["test"]["ndcg@10"]),
                     f(tuned["test"]["recall@50"])])
    con.print(f"{len(d['changes'])} changes; held-out nDCG@10 proposed vs baseline: Holm-adjusted "
              f"p = {'-' if p is None else format(p, '.2g')}; requests sent {d['requests']}")
    _print_table(con, f"ragdiag optimize: {config.name} ({bt['n']} held-out questions)",
                 ["policy", "name", "train nDCG@10", "test nDCG@10", "test recall@50"], rows,
                 right=("train nDCG@10", "test nDCG@10", "test recall@50"))
    if result.message:
        con.print(f"decision: {result.message}", markup=False, highlight=False)
    con.print(f"policy: {prof}" if prof else "policy: none written (see the decision)")
    con.print(f"result: {res}")
    return 0
