"""The profile optimizer: a proposed policy per route, validated on held-out goldset questions.

    result = ragdiag.optimize_policy(ctx)      # ctx = ragdiag.build_context(config)
    result.write("optimize-out")               # profiles.toml + optimize.json
    result.data["proposed"]["test"]["ndcg@10"], result.data["p_value"]
    result.outcome, result.message   # "proposed" | "existing_profile" | "keep", with the figures

Modules: `space` (the knobs per profile and the security guard), `splits` (train /
validation / test, k-fold), `search` (coordinate descent, validation selection, the budget
guard, the evaluator that reuses the tuner's `run_profile`), `run` (`optimize_policy`,
`plan_optimization`) and `result` (`OptimizeResult`, the two output files).
"""

from __future__ import annotations

from ragdiag.optimize.result import (
           KEYS,
           OPTIONAL_KEYS,
           PROFILES_FILE,
           RESULT_FILE,
           OptimizeResult,
           load_result,
)
from ragdiag.optimize.run import optimize_policy, plan_optimization
from ragdiag.optimize.search import Evaluator
from ragdiag.optimize.space import SecurityClauseError, guard_security, knobs_for
from ragdiag.optimize.splits import Split, split_cases

__all__ = ["KEYS", "OPTIONAL_KEYS", "PROFILES_FILE", "RESULT_FILE", "Evaluator", "OptimizeResult", "SecurityClauseError",
           "Split", "guard_security", "knobs_for", "load_result", "optimize_policy", "plan_optimization",
           "split_cases"]
