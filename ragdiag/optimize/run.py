"""`optimize_policy(ctx)`: the proposed policy with held-out evidence; `plan_optimization(ctx)`: what it
would cost, sending nothing.

Per route (the profile the policy sends a question type to), coordinate descent on the train
split proposes, the validation split selects, and the test split compares the proposed policy
with the current one (and the config's compare_profiles) by the paired t-test with Holm's
correction across nDCG@10, recall@10, recall@50 and MRR, as the tuner does. With k folds the
test figures are out-of-fold (each question scored by a policy searched without it) and the
written policy is searched once more on all questions (train / validation only).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragdiag.errors import ConfigError
from ragdiag.metrics import NDCG_10, Evaluation, compare
from ragdiag.optimize.result import OptimizeResult
from ragdiag.optimize.search import (
    MAX_PASSES,
    BudgetGuard,
    Evaluator,
    change_dict,
    descend,
    schema_of,
    select,
)
from ragdiag.optimize.space import knobs_for, security_fields
from ragdiag.optimize.splits import Split, final_split, resolve_folds, split_cases
from ragdiag.policy import Policy, Profile


def _require(ctx: Any) -> None:
    if ctx.policy is None:
        raise ConfigError("optimize needs the current policy: set [inputs] profiles in the audit config")
    if ctx.goldset is None:
        raise ConfigError("optimize needs a goldset with expected sources ([inputs] goldset): without "
                          "judged questions there is nothing to optimise against")


def _cases(ctx: Any) -> list[Any]:
    qrels = ctx.goldset.qrels()
    cases = [c for c in ctx.question_cases() if any(g >= 1 for g in qrels.get(c.id, {}).values())]
    if len(cases) < 3:
        raise ConfigError(f"optimize needs at least 3 goldset questions with a relevant expected source, "
                          f"the goldset has {len(cases)}")
    return cases


def _route_of(policy: Policy) -> Callable[[Any], str]:
    def route(case: Any) -> str:
        intent = case.intent if case.intent and case.intent != "unknown" else None
        return (policy.route_intent(intent) if intent else policy.route(case.question)).profile_name
    return route


def _role_of(schema: Any, policy: Policy) -> Callable[[Any], str]:
    from ragdiag.checks.prerank_filters import ID, classify
    from ragdiag.inputs.checklist import load_checklist

    roles = {k: tuple(v) for k, v in load_checklist()[ID].roles.items()}
    secure = set(security_fields(schema, policy.security_field))
    return lambda clause: classify(clause.fields, secure, roles)


def merge(evaluations: Sequence[Evaluation], name: str = "") -> Evaluation:
    """One evaluation of disjoint question sets (the per-route runs of one policy)."""
    per_query: dict[str, dict[str, float]] = {}
    for ev in evaluations:
        per_query.update({q: dict(v) for q, v in ev.per_query.items()})
    measures = evaluations[0].measures if evaluations else ()
    n = len(per_query)
    aggregate = {m: (sum(v[m] for v in per_query.values()) / n if n else math.nan) for m in measures}
    return Evaluation(per_query=per_query, aggregate=aggregate, name=name, measures=tuple(measures))


def metrics_dict(ev: Evaluation) -> dict[str, Any]:
    from ragdiag.tuner.evaluate import METRICS

    return {**{m: _num(ev.aggregate.get(m)) for m in METRICS}, "n": len(ev.per_query)}


def _num(v: Any) -> float | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def paired(a: Evaluation, b: Evaluation) -> dict[str, dict[str, Any]]:
    """b against a per metric: mean delta, wins / ties / losses, p (paired t-test) and p_holm."""
    from ragdiag.tuner.evaluate import METRICS, holm

    comps = {m: compare(a, b, m) for m in METRICS}
    adjusted = holm({m: c.p_ttest for m, c in comps.items()})
    return {m: {"delta": _num(c.mean_delta), "wins": c.wins, "ties": c.ties, "losses": c.losses,
                "p": _num(c.p_ttest), "p_holm": _num(adjusted[m]), "n": c.n} for m, c in comps.items()}


class _Optimizer:
    def __init__(self, ctx: Any, *, budget: int | None, seed: int, folds: int | None,
                 evaluator: Evaluator | None, log: Callable[[str], None]) -> None:
        _require(ctx)
        self.ctx = ctx
        self.policy: Policy = ctx.policy
        self.schema = schema_of(ctx)
        self.cases = _cases(ctx)
        self.by_id = {c.id: c for c in self.cases}
        self.route_of = _route_of(self.policy)
        self.role_of = _role_of(self.schema, self.policy)
        self.folds = resolve_folds(folds, len(self.cases))
        self.seed = seed
        self.log = log
        if budget is not None and (not isinstance(budget, int) or budget < 0):
            raise ConfigError(f"--budget must be a number of requests >= 0, got {budget!r}")
        self.budget = budget if budget is not None else ctx.runner.budget
        self.evaluator = evaluator or Evaluator(ctx, self.policy)
        self.splits = split_cases(self.cases, self.route_of, seed=seed, folds=self.folds)
        self.test_cases = [self.by_id[i] for s in self.splits for i in s.test]
        self.test_requests = sum(len(q.requests) for q in ctx.gold_queries(self.policy, cases=self.test_cases))
        self.testing = False

    def routed(self, ids: Sequence[str]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for i in ids:
            c = self.by_id[i]
            out.setdefault(self.route_of(c), []).append(c)
        return out

    def evaluate(self, profiles: Mapping[str, Profile], ids: Sequence[str], phase: str) -> Evaluation:
        evs = [self.evaluator.evaluate(profiles[name], cases, phase=phase)
               for name, cases in sorted(self.routed(ids).items())]
        return merge(evs)

    def reserve(self) -> int:
        """Requests the baseline and the final comparison may still need: the current policy on
        every question and the compare policy on the test questions (as far as not cached), plus
        every test request once for the proposed policy until the test phase has begun."""
        n = self.evaluator.cost(None, self.cases, self.policy)
        if self.ctx.compare_policy is not None:
            n += self.evaluator.cost(None, self.test_cases, self.ctx.compare_policy)
        if not self.testing:
            n += self.test_requests
        return n

    def search(self, split: Split, guard: BudgetGuard, label: str) -> tuple[dict[str, Profile], list[dict[str, Any]], int]:
        proposed = dict(self.policy.profiles)
        changes: list[dict[str, Any]] = []
        tried = 0
        train, val = self.routed(split.train), self.routed(split.validation)
        for name in sorted(train):
            if name not in val:
                continue
            self.log(f"optimize{label}: {name}: {len(train[name])} train, {len(val[name])} validation questions")
            steps, n = descend(self.evaluator, self.policy.profiles[name], train[name], val[name],
                               schema=self.schema, security_field=self.policy.security_field,
                               role_of=self.role_of, guard=guard, log=self.log)
            tried += n
            chosen = select(steps)
            proposed[name] = steps[chosen].profile
            prev = steps[0].train.get(NDCG_10)
            for s in steps[1:chosen + 1]:
                changes.append(change_dict(name, s, prev))
                prev = s.train.get(NDCG_10)
            if chosen < len(steps) - 1:
                self.log(f"optimize{label}: {name}: validation kept {chosen} of {len(steps) - 1} steps")
        return proposed, changes, tried

    def run(self) -> OptimizeResult:
        runner = self.ctx.runner
        if self.budget is None:
            return self._run(runner, BudgetGuard(runner, None, lambda: 0))
        reserve = self.reserve()
        if reserve > self.budget:
            raise ConfigError(f"a request budget of {self.budget} cannot pay for the current policy on the "
                              f"goldset and the held-out comparison alone ({reserve} requests); raise "
                              "--budget or see --plan")
        # the runner refuses anything past the budget too: a miscount fails loudly, never overspends
        before = runner.budget
        cap = runner.stats.sent + self.budget
        runner.budget = cap if before is None else min(before, cap)
        try:
            return self._run(runner, BudgetGuard(runner, cap, self.reserve))
        finally:
            runner.budget = before

    def _run(self, runner: Any, guard: BudgetGuard) -> OptimizeResult:
        sent0 = runner.stats.sent
        base = dict(self.policy.profiles)
        tried = 0
        if self.folds == 1:
            split = self.splits[0]
            proposed, changes, tried = self.search(split, guard, "")
            train_ids, test_ids = split.train, split.test
            self.testing = True
            prop_test = self.evaluate(proposed, test_ids, "test")
            fold_changes: list[list[dict[str, Any]]] = []
        else:
            test_evs, fold_changes = [], []
            for k, split in enumerate(self.splits, 1):
                prop_k, ch_k, n = self.search(split, guard, f" fold {k}/{self.folds}")
                tried += n
                fold_changes.append(ch_k)
                test_evs.append(self.evaluate(prop_k, split.test, "test"))  # paid from the reserve
            prop_test = merge(test_evs)
            final = final_split(self.cases, self.route_of, seed=self.seed)
            proposed, changes, n = self.search(final, guard, " (all questions)")
            tried += n
            train_ids = final.train
            test_ids = tuple(i for s in self.splits for i in s.test)
        base_test = self.evaluate(base, test_ids, "test")
        data: dict[str, Any] = {
            "baseline": {"policy": self.policy.name, "train": metrics_dict(self.evaluate(base, train_ids, "search")),
                         "test": metrics_dict(base_test)},
            "proposed": {"train": metrics_dict(self.evaluate(proposed, train_ids, "search")),
                         "test": metrics_dict(prop_test), "test_vs_baseline": paired(base_test, prop_test),
                         "method": "coordinate descent (train), selection (validation), paired t-test with "
                                   "Holm correction (test)",
                         "split": {"folds": self.folds, "seed": self.seed, "train": len(train_ids),
                                   "test": len(test_ids),
                                   "test_is": "out-of-fold" if self.folds > 1 else "one held-out split"},
                         "candidates": tried, "budget_reached": guard.exhausted,
                         **({"fold_changes": fold_changes} if fold_changes else {})},
            "compare": None,
            "changes": changes,
            "p_value": None,
            "requests": 0,
        }
        data["p_value"] = data["proposed"]["test_vs_baseline"][NDCG_10]["p_holm"]
        if self.ctx.compare_policy is not None:
            cases = [self.by_id[i] for i in test_ids]
            comp = self.evaluator.evaluate_policy(self.ctx.compare_policy, cases, phase="test")
            vs = paired(comp, prop_test)
            data["compare"] = {"policy": self.ctx.compare_policy.name, "test": metrics_dict(comp),
                               "proposed_vs_compare": vs, "p_value": vs[NDCG_10]["p_holm"]}
        data["requests"] = runner.stats.sent - sent0
        proposed_policy = Policy(name=f"{self.policy.name}-optimized",
                                 description=f"proposed by ragdiag optimize from '{self.policy.name}'",
                                 profiles=proposed, routes=self.policy.routes,
                                 default_route=self.policy.default_route,
                                 security_field=self.policy.security_field)
        return OptimizeResult(baseline=self.policy, proposed=proposed_policy, data=data)

    def plan(self) -> dict[str, Any]:
        rows = []
        total_candidates = total_requests = 0
        for k, split in enumerate(self.splits + ([final_split(self.cases, self.route_of, seed=self.seed)]
                                                 if self.folds > 1 else []), 1):
            train, val, test = self.routed(split.train), self.routed(split.validation), self.routed(split.test)
            for name in sorted(set(train) | set(test)):
                p = self.policy.profiles[name]
                tuned = name in train and name in val
                knobs = knobs_for(p, self.schema, security_field=self.policy.security_field,
                                  role_of=self.role_of) if tuned else []
                per_pass = sum(len(kn.candidates()) for kn in knobs)
                n_tr, n_va, n_te = len(train.get(name, ())), len(val.get(name, ())), len(test.get(name, ()))
                cands = MAX_PASSES * per_pass if tuned else 0
                reqs = (1 + cands) * n_tr + (1 + MAX_PASSES * len(knobs)) * n_va + 3 * n_te if tuned else 3 * n_te
                rows.append({"split": k, "profile": name, "train": n_tr, "validation": n_va, "test": n_te,
                             "knobs": len(knobs), "candidates_per_pass": per_pass,
                             "max_candidates": cands, "max_requests": reqs})
                total_candidates += cands
                total_requests += reqs
        return {"rows": rows, "folds": self.folds, "max_candidates": total_candidates,
                "max_requests": total_requests, "budget": self.budget,
                "baseline_uncached": self.evaluator.cost(None, self.cases, self.policy),
                "questions": len(self.cases),
                "reserve": self.reserve()}


def optimize_policy(ctx: Any, *, budget: int | None = None, seed: int = 0, folds: int | None = None,
                    evaluator: Evaluator | None = None, log: Callable[[str], None] | None = None) -> OptimizeResult:
    """Propose a policy for `ctx` (an `AuditContext` with a target, policy and goldset):
    coordinate descent per route on the train split, selection on validation, the paired
    comparison on held-out test questions. `budget` caps the requests sent (default: the
    config's [runner] budget); `folds` None picks k-fold for a small goldset."""
    return _Optimizer(ctx, budget=budget, seed=seed, folds=folds, evaluator=evaluator,
                      log=log or ctx.log).run()


def plan_optimization(ctx: Any, *, budget: int | None = None, seed: int = 0,
                      folds: int | None = None) -> dict[str, Any]:
    """What `optimize_policy` would do: per split and route the questions, knobs, candidates
    and an upper bound on the requests; nothing is sent (the schema is read)."""
    return _Optimizer(ctx, budget=budget, seed=seed, folds=folds, evaluator=None, log=lambda m: None).plan()


__all__ = ["merge", "metrics_dict", "optimize_policy", "paired", "plan_optimization"]
