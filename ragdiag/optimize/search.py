"""The search: coordinate descent per route on the train split, selection on the validation split.

Why coordinate descent over the knob grid: a profile has 10-20 knobs of 2-4 values each, so
the full grid is millions of profiles, while one pass of coordinate descent costs the sum of
the option counts (~30 what-ifs per route). Most knobs act on one stage each (k and field on
a vector leg, recall size on the keyword leg, texts on one channel, the semantic
configuration on the reranker), so they interact weakly and one knob at a time gets most of
the gain; each what-if only recomputes the stage its knob touches (the local target's stage
caches, the runner's trace cache). Successive halving would spend its budget on random full
profiles, most of them far from the current policy; a descent path is also what a consultant
can read: every step is one change with its train gain.

Pairs coordinate descent cannot reach: two knobs that only help together (neither alone) are
invisible to it. When a pass changes nothing, the `PAIR_BEAM` best single changes of that pass
(by train nDCG@10, each from another knob, even those below the current score) are combined
two at a time (at most PAIR_BEAM * (PAIR_BEAM - 1) / 2 = 15 candidates); the best pair that
beats the current profile on train is taken as one step and the descent goes on from it
(at most `MAX_PAIR_ROUNDS` times). Near misses are where a useful pair usually sits (k with a
weight, a leg removed with the other leg's k), and the beam keeps the cost at a fraction of
the full grid of pairs (~30 knob options give ~400 pairs).

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
PAIR_BEAM = 6
MAX_PAIR_ROUNDS = 2
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
            log: Callable[[str], None] = lambda m: None, max_passes: int = MAX_PASSES,
            existing: Mapping[str, Profile] | None = None, pairs: bool = True) -> tuple[list[Step], int]:
    """Coordinate descent on `train` from `baseline` (with `existing` profiles as candidates of
    the `profile` knob), then pairs of near-miss changes; every accepted step is also scored on
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
        return knobs_for(profile, schema, security_field=security_field, role_of=role_of, existing=existing)

    def try_candidate(cand: Profile) -> tuple[tuple[float, float], Evaluation] | None:
        nonlocal tried
        guard_security(baseline, cand, secure=secure)
        cost = (evaluator.cost(cand, train) + evaluator.cost(cand, validation)
                if guard.budget is not None else 0)
        if not guard.allows(cost):
            log(f"optimize: {baseline.name}: request budget reached, search stopped")
            return None
        tried += 1
        ev = evaluator.evaluate(cand, train, phase="search")
        return _score(ev), ev

    def better(s: tuple[float, float]) -> bool:
        return s[0] > best_score[0] + MIN_GAIN or (abs(s[0] - best_score[0]) <= MIN_GAIN
                                                   and s[1] > best_score[1] + MIN_GAIN)

    def accept(cand: Profile, name: str, before: Any, after: Any, ev: Evaluation, s: tuple[float, float],
               label: str) -> None:
        nonlocal current, best_score
        val = evaluator.evaluate(cand, validation, phase="select")
        steps.append(Step(cand, name, before, after, dict(ev.aggregate), dict(val.aggregate)))
        log(f"optimize: {baseline.name}: {label}: {name} {_value(before)} → {_value(after)} "
            f"(train nDCG@10 {best_score[0]:.3f} → {s[0]:.3f})")
        current, best_score = cand, s

    pair_rounds = 0
    while True:
        near: dict[tuple[str, Any], tuple[tuple[float, float], Any]] = {}  # this pass's single changes
        for n_pass in range(1, max_passes + 1):
            changed = False
            near = {}
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
                    if cand == current:
                        continue
                    got = try_candidate(cand)
                    if got is None:
                        break
                    s, ev = got
                    near[(knob.name, option)] = (s, knob)
                    if better(s) and (winner is None or s > winner[0]):
                        winner = (s, cand, option, ev)
                if winner is not None:
                    s, cand, option, ev = winner
                    accept(cand, knob.name, knob.current, option, ev, s, f"pass {n_pass}")
                    changed = True
                    near = {}
                    # the knobs again from the changed profile (a boost sets the scoring profile, an
                    # added vector query brings its own knobs), those of this pass not yet turned
                    pending = [k for k in knobs(current) if k.name not in done]
            if not changed or guard.exhausted:
                break
        if not pairs or pair_rounds >= MAX_PAIR_ROUNDS or guard.exhausted or len(near) < 2:
            break
        pair_rounds += 1
        if not _pair_step(near, current, try_candidate, better, accept):
            break
    return steps, tried


def _pair_step(near: Mapping[tuple[str, Any], tuple[tuple[float, float], Any]], current: Profile,
               try_candidate: Callable[[Profile], Any], better: Callable[[Any], bool],
               accept: Callable[..., None]) -> bool:
    """Combine the PAIR_BEAM best single changes (one per knob) two at a time; take the best pair
    that beats `current` on train. True when one was taken."""
    beam: list[tuple[str, Any, Any]] = []
    seen_knobs: set[str] = set()
    for (name, option), (_s, knob) in sorted(near.items(), key=lambda kv: (-kv[1][0][0], -kv[1][0][1],
                                                                            kv[0][0], str(kv[0][1]))):
        if name in seen_knobs:
            continue
        seen_knobs.add(name)
        beam.append((name, option, knob))
        if len(beam) == PAIR_BEAM:
            break
    winner = None
    for i, (na, oa, ka) in enumerate(beam):
        for nb, ob, kb in beam[i + 1:]:
            try:
                cand = ka.apply(kb.apply(current, ob), oa)
            except (ConfigError, IndexError):
                continue
            if cand == current:
                continue
            got = try_candidate(cand)
            if got is None:
                return False
            s, ev = got
            if better(s) and (winner is None or s > winner[0]):
                winner = (s, cand, (na, nb), (ka.current, kb.current), (oa, ob), ev)
    if winner is None:
        return False
    s, cand, names, before, after, ev = winner
    accept(cand, " + ".join(names), before, after, ev, s, "pair")
    return True


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


__all__ = ["MAX_PAIR_ROUNDS", "MAX_PASSES", "PAIR_BEAM", "PHASES", "BudgetGuard", "Evaluator", "Step", "change_dict", "descend", "schema_of",
           "select"]
