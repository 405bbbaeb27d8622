"""The search: coordinate descent per route on the train split, selection on the validation split.

Why coordinate descent over the knob grid: a profile has 10-20 knobs of 2-4 values each, so
the full grid is millions of profiles, while one pass of coordinate descent costs the sum of
the option counts (~30 what-ifs per route). Most knobs act on one stage each (k and field on
a vector leg, recall size on the keyword leg, texts on one channel, the semantic
configuration on the reranker), so they interact weakly and one knob at a time gets most of
the gain; each what-if only recomputes the stage its knob touches (the local target's stage
caches, the runner's trace cache). Successive halving would spend its budget on random full
profiles, most of them far from the current policy; a descent path is also what a consultant
can read: every step is one change with its train gain. The known weakness: two knobs that
only help together (neither alone) are not found; the descent stops when a pass changes nothing.

Overfitting: the descent accepts a change only when it raises train nDCG@10 (ties break on
recall@50); every accepted step is a candidate, and the step with the best validation
nDCG@10 is selected (the earliest on ties, i.e. the fewest changes). Test questions are
never seen before the final comparison.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import ConfigError, RagdiagError, TargetError
from ragdiag.metrics import NDCG_10, RECALL_50, Evaluation
from ragdiag.optimize.space import guard_security, knobs_for, security_fields
from ragdiag.policy import Policy, Profile

MAX_PASSES = 3
MIN_GAIN = 1e-9
PHASES = ("search", "select", "test")


@dataclass(frozen=True)
class Step:
    """One accepted change of the descent: the profile after it and its train metrics."""

    profile: Profile
    knob: str
    before: Any
    after: Any
    train: Mapping[str, float]
    validation: Mapping[str, float] = field(default_factory=dict)


def _value(v: Any) -> Any:
    return "unset" if v is None else (list(v) if isinstance(v, tuple) else v)


def _num(v: Any) -> float | None:
    return None if v is None or math.isnan(v) else float(v)


def change_dict(profile: str, step: Step, train_before: float | None) -> dict[str, Any]:
    """One change as optimize.json lists it (train nDCG@10 before and after the step)."""
    return {"profile": profile, "knob": step.knob, "from": _value(step.before), "to": _value(step.after),
            "train_ndcg@10": [_num(train_before), _num(step.train.get(NDCG_10))],
            "validation_ndcg@10": _num(step.validation.get(NDCG_10))}


class Evaluator:
    """Scores a profile on a set of goldset questions through the tuner's `run_profile` (the
    runner answers repeated requests from its cache); memoised by (profile, question ids).

    `phase` says what the evaluation is for (search, select or test); a subclass can record it
    (the leakage test does). `cost` counts the requests an evaluation would still send.
    """

    def __init__(self, ctx: Any, policy: Policy, runner: Any = None) -> None:
        self.ctx = ctx
        self.policy = policy
        self.runner = runner or ctx.runner
        self._memo: dict[tuple[Any, ...], Evaluation] = {}

    def _requests(self, profile: Profile | None, cases: Sequence[Any], policy: Policy | None = None) -> list[Any]:
        if profile is None:
            queries = self.ctx.gold_queries(policy, cases=list(cases))
        else:
            queries = self.ctx.gold_queries(self.policy.with_profile(profile), profile=profile.name,
                                            cases=list(cases))
        return [r for q in queries for r in q.requests]

    def cost(self, profile: Profile | None, cases: Sequence[Any], policy: Policy | None = None) -> int:
        """Distinct requests of the evaluation that neither the runner nor its store hold."""
        if not cases:
            return 0
        seen = {}
        for r in self._requests(profile, cases, policy):
            seen.setdefault(r.fingerprint(), r)
        return sum(self.runner.cached(r) is None for r in seen.values())

    def evaluate(self, profile: Profile, cases: Sequence[Any], *, phase: str) -> Evaluation:
        key = (profile, tuple(c.id for c in cases))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        from ragdiag.tuner.evaluate import run_profile

        run = run_profile(self.ctx, profile, cases, policy=self.policy, runner=self.runner,
                          label=f"optimize:{profile.name}:{phase}")
        ev = self._scored(run)
        self._memo[key] = ev
        return ev

    def evaluate_policy(self, policy: Policy, cases: Sequence[Any], *, phase: str) -> Evaluation:
        """Another policy (the config's compare_profiles) routed by its own routing table."""
        return self._scored(self.ctx.run_gold(policy, cases=list(cases), label=f"optimize:{policy.name}:{phase}"))

    def _scored(self, run: Any) -> Evaluation:
        if run.failures:
            f = run.failures[0]
            raise TargetError(f"{len(run.failures)} of {len(run.queries)} optimizer requests failed "
                              f"({f.kind}: {f.reason}); nothing was proposed")
        return run.evaluation(self.ctx.goldset)


def _score(ev: Evaluation) -> tuple[float, float]:
    return (ev.aggregate.get(NDCG_10, 0.0), ev.aggregate.get(RECALL_50, 0.0))


class BudgetGuard:
    """Keeps the requests of the search below the budget, leaving `reserve()` (what the baseline
    and the final comparison still need) unspent; a candidate that would cross the line is not
    evaluated and the search stops."""

    def __init__(self, runner: Any, budget: int | None, reserve: Callable[[], int]) -> None:
        self.runner = runner
        self.budget = budget
        self.reserve = reserve
        self.exhausted = False

    def allows(self, cost: int) -> bool:
        if self.budget is None:
            return True
        if self.runner.stats.sent + cost + self.reserve() > self.budget:
            self.exhausted = True
            return False
        return True


def descend(evaluator: Evaluator, baseline: Profile, train: Sequence[Any], validation: Sequence[Any], *,
            schema: Any, security_field: str, role_of: Callable[[Any], str], guard: BudgetGuard,
            log: Callable[[str], None] = lambda m: None, max_passes: int = MAX_PASSES) -> tuple[list[Step], int]:
    """Coordinate descent on `train` from `baseline`; every accepted step is also scored on
    `validation` (for the selection). Returns the steps and the number of candidates tried.
    The baseline's own requests are not guarded here: the guard's reserve holds them."""
    secure = security_fields(schema, security_field)
    current = baseline
    best = evaluator.evaluate(current, train, phase="search")
    best_score = _score(best)
    base_val = evaluator.evaluate(current, validation, phase="select")
    steps = [Step(current, "", None, None, dict(best.aggregate), dict(base_val.aggregate))]
    tried = 0
    def knobs(profile: Profile) -> list[Any]:
        return knobs_for(profile, schema, security_field=security_field, role_of=role_of)

    for n_pass in range(1, max_passes + 1):
        changed = False
        pending = knobs(current)
        done: set[str] = set()
        while pending and not guard.exhausted:
            knob = pending.pop(0)
            done.add(knob.name)
            winner: tuple[tuple[float, float], Profile, Any, Evaluation] | None = None
            for option in knob.candidates():
                try:
                    cand = knob.apply(current, option)
                except ConfigError:
                    continue  # a combination that cannot work (e.g. no text for the reranker)
                guard_security(baseline, cand, secure=secure)
                cost = (evaluator.cost(cand, train) + evaluator.cost(cand, validation)
                        if guard.budget is not None else 0)
                if not guard.allows(cost):
                    log(f"optimize: {baseline.name}: request budget reached, search stopped")
                    break
                tried += 1
                ev = evaluator.evaluate(cand, train, phase="search")
                s = _score(ev)
                if s[0] > best_score[0] + MIN_GAIN or (abs(s[0] - best_score[0]) <= MIN_GAIN
                                                       and s[1] > best_score[1] + MIN_GAIN):
                    if winner is None or s > winner[0]:
                        winner = (s, cand, option, ev)
            if winner is not None:
                s, cand, option, ev = winner
                val = evaluator.evaluate(cand, validation, phase="select")
                steps.append(Step(cand, knob.name, knob.current, option, dict(ev.aggregate), dict(val.aggregate)))
                log(f"optimize: {baseline.name}: pass {n_pass}: {knob.name} {_value(knob.current)} → "
                    f"{_value(option)} (train nDCG@10 {best_score[0]:.3f} → {s[0]:.3f})")
                current, best_score, changed = cand, s, True
                # the knobs again from the changed profile (a boost sets the scoring profile, an
                # added vector query brings its own knobs), those of this pass not yet turned
                pending = [k for k in knobs(current) if k.name not in done]
        if not changed or guard.exhausted:
            break
    return steps, tried


def select(steps: Sequence[Step]) -> int:
    """Index of the step with the best validation nDCG@10 (the earliest on ties)."""
    best_i, best_v = 0, None
    for i, s in enumerate(steps):
        v = s.validation.get(NDCG_10)
        if v is not None and (best_v is None or v > best_v + MIN_GAIN):
            best_i, best_v = i, v
    return best_i


def schema_of(ctx: Any) -> Any:
    if ctx.target is None:
        raise ConfigError("optimize needs a search target ([target] in the audit config): every "
                          "candidate profile is run against it")
    try:
        return ctx.target.schema()
    except RagdiagError as exc:
        raise TargetError(f"optimize could not read the index schema: {exc}") from exc


__all__ = ["MAX_PASSES", "PHASES", "BudgetGuard", "Evaluator", "Step", "change_dict", "descend", "schema_of",
           "select"]
