"""`optimize_policy(ctx)`: the proposed policy with held-out evidence; `plan_optimization(ctx)`: what it
would cost, sending nothing.

Per route (the profile the policy sends a question type to), coordinate descent on the train
split proposes, the validation split selects, and the test split compares the proposed policy
with the current one (and the config's compare_profiles) by the paired t-test with Holm's
correction across nDCG@10, recall@10, recall@50 and MRR, as the tuner does. With k folds the
test figures are out-of-fold (each question scored by a policy searched without it) and the
written policy is searched once more on all questions (train / validation only).

Never propose worse (`decide`): the proposal is written only when it beats, on the validation
split, both the current policy and the best single existing profile (every profile the policy
has, sent every route's questions, security clause kept), and is not significantly worse
(Holm-adjusted p < `ALPHA` with a negative delta) than either on the test split; otherwise the
decision is to use the better existing profile (when it beats the current policy the same way)
or to keep the current policy, with the figures. With k folds every fold decides so (its test
part vetoes) and the out-of-fold figure of the decided policies is the procedure's; the final
decision uses the final validation split and the out-of-fold comparison as the veto.

Against a simple tuned baseline (`tuned_hybrid`): per route the plain hybrid a good engineer
writes first -- the keyword leg plus one vector query (k = 50) on the route's vector field,
no filter but the security clause, no scoring profile, no reranker -- with its vector weight
chosen on the same train and validation questions from 0 (keyword only) to vector only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragdiag.errors import ConfigError
from ragdiag.metrics import NDCG_10, Evaluation, compare
from ragdiag.optimize.result import OptimizeResult
from ragdiag.optimize.search import (
    MAX_PAIR_ROUNDS,
    MAX_PASSES,
    PAIR_BEAM,
    BudgetGuard,
    Evaluator,
    change_dict,
    descend,
    schema_of,
    select,
)
from ragdiag.optimize.space import (
    _clauses,
    _without_clause,
    as_route,
    guard_security,
    knobs_for,
    security_differs,
    security_fields,
)
from ragdiag.optimize.splits import Split, final_split, resolve_folds, split_cases
from ragdiag.policy import Policy, Profile
from ragdiag.policy.profile import VectorQuerySpec

ALPHA = 0.05
TUNED_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, math.inf)  # 0: keyword only, inf: vector only
KEEP, EXISTING, PROPOSED = "keep", "existing_profile", "proposed"


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


MIN_GAIN_DECIDE = 1e-9


def _gt(a: float | None, b: float | None) -> bool:
    return a is not None and (b is None or a > b + MIN_GAIN_DECIDE)


def _significantly_worse(cand: Evaluation, against: Mapping[str, Evaluation]) -> dict[str, Any] | None:
    """The first of `against` that `cand` is significantly worse than by nDCG@10, or None."""
    for name, ev in against.items():
        vs = paired(ev, cand)[NDCG_10]
        if vs["delta"] is not None and vs["delta"] < 0 and vs["p_holm"] is not None and vs["p_holm"] < ALPHA:
            return {"against": name, "delta": vs["delta"], "p_holm": vs["p_holm"], "n": vs["n"]}
    return None


def _f(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def decision_message(decision: Mapping[str, Any], policy: Policy) -> str:
    """One sentence with the figures: what to do with the result."""
    val = decision["validation"]
    ex = val.get("existing", {})
    basis = "validation" if val.get("basis", "validation split") == "validation split" else "out-of-fold"
    figures = (f"{basis} nDCG@10 ({val['n']} questions): current {_f(val['current'])}, proposed "
               f"{_f(val['proposed'])}" + (f", best existing profile '{val['best_existing']}' "
                                           f"{_f(ex.get(val['best_existing']))}" if val.get("best_existing") else ""))
    vetoed = decision.get("vetoed")
    why = (f"; the proposal is significantly worse than the {vetoed['against']} on test (nDCG@10 "
           f"{vetoed['delta']:+.3f}, Holm p = {vetoed['p_holm']:.2g})" if vetoed else "")
    if decision["outcome"] == PROPOSED:
        return f"proposed: it beats the current policy and every existing profile ({figures})."
    if decision["outcome"] == EXISTING:
        routes = ", ".join(sorted({f"{i} = \"{decision['profile']}\"" for i in policy.routes} |
                                  ({f"default = \"{decision['profile']}\""} if policy.default_route else set())))
        return (f"use the existing profile '{decision['profile']}' (set [routes] {routes}); no proposal was "
                f"written, it does not beat that profile ({figures}{why}).")
    return f"keep the current policy: no proposal was written ({figures}{why})."


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
        self._extra: list[Any] | None = None

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

    # ---- the alternatives a consultant would try by hand -------------------------------------
    def _tuned_routes(self) -> list[str]:
        return sorted({self.route_of(c) for c in self.cases})

    def existing_policies(self) -> dict[str, dict[str, Profile]]:
        """Per existing profile Q: the profiles with every route's questions sent to Q (under the
        route's name; a route whose security clause differs from Q's keeps its own profile)."""
        secure = security_fields(self.schema, self.policy.security_field)
        out: dict[str, dict[str, Profile]] = {}
        for qname, q in self.policy.profiles.items():
            m = dict(self.policy.profiles)
            used = False
            for r in self._tuned_routes():
                base = self.policy.profiles[r]
                cand = as_route(base, q)
                if not security_differs(base, cand, secure):
                    m[r] = cand
                    used = True
            if used:
                out[qname] = m
        return out

    def simple_hybrid(self, p: Profile, weight: float) -> Profile | None:
        """The plain hybrid of route profile `p`: keyword leg (verbatim) plus one vector query
        (k = 50, weight `weight`; 0: none, inf: the keyword leg off) on p's vector field, no filter
        but p's security clauses, no scoring profile, no reranker; None when it cannot be built."""
        secure = security_fields(self.schema, self.policy.security_field)
        filt = p.filter
        for c in _clauses(p.filter):
            if not c.fields & secure:
                filt = _without_clause(filt, c.text)
        fields = (p.vector_queries[0].fields if p.vector_queries else
                  (self.schema.vector_fields[0].name,) if self.schema.vector_fields else None)
        ref = p.vector_queries[0] if p.vector_queries else None
        vqs: tuple[VectorQuerySpec, ...] = ()
        if weight > 0 and fields:
            vqs = (VectorQuerySpec(fields=tuple(fields), k=50, weight=1.0 if math.isinf(weight) else weight,
                                   text="verbatim", filter_override=ref.filter_override if ref else None,
                                   override_security=ref.override_security if ref else True),)
        elif weight > 0:
            return None
        try:
            cand = p.replace(query_type="simple", semantic_configuration=None, semantic_text="keyword_text",
                             keyword_text="none" if math.isinf(weight) else "verbatim", vector_queries=vqs,
                             filter=filt, scoring_profile=None, scoring_parameters=(), max_text_recall_size=None,
                             captions=None, answers=None, query_rewrites=None)
        except ConfigError:
            return None
        guard_security(p, cand, secure=secure)
        return cand

    def tuned_hybrid(self, tune_ids: Sequence[str], test_ids: Sequence[str]) -> tuple[dict[str, Profile], Evaluation,
                                                                                          dict[str, Any]]:
        """Per route the simple hybrid's weight best on `tune_ids`, scored on `test_ids`."""
        profiles = dict(self.policy.profiles)
        weights: dict[str, Any] = {}
        tune = self.routed(tune_ids)
        for r in sorted(self.routed(test_ids)):
            best: tuple[float, Profile, float] | None = None
            for w in TUNED_WEIGHTS:
                cand = self.simple_hybrid(self.policy.profiles[r], w)
                if cand is None or r not in tune:
                    continue
                v = self.evaluator.evaluate(cand, tune[r], phase="search").aggregate.get(NDCG_10, 0.0)
                if best is None or v > best[0] + MIN_GAIN_DECIDE:
                    best = (v, cand, w)
            if best is not None:
                profiles[r] = best[1]
                weights[r] = "vector only" if math.isinf(best[2]) else ("keyword only" if best[2] == 0 else best[2])
        return profiles, self.evaluate(profiles, test_ids, "test"), weights

    def reserve(self) -> int:
        """Requests the baseline and the final comparison may still need: the current policy, every
        existing profile and the simple hybrid's weights on every question and the compare policy
        on the test questions (as far as not cached), plus every test request once for the
        proposed policy until the test phase has begun."""
        n = self.evaluator.cost(None, self.cases, self.policy)
        if self.ctx.compare_policy is not None:
            n += self.evaluator.cost(None, self.test_cases, self.ctx.compare_policy)
        if not self.testing:
            n += self.test_requests
        n += sum(1 for r in self.extra_requests() if self.ctx.runner.cached(r) is None)
        return n

    def extra_requests(self) -> list[Any]:
        """The distinct requests of the alternatives (existing profiles, simple hybrids) on every
        question, computed once."""
        if self._extra is None:
            seen: dict[str, Any] = {}
            routed = self.routed([c.id for c in self.cases])
            profiles: list[Profile] = []
            for m in self.existing_policies().values():
                profiles += [m[r] for r in routed]
            for r in routed:
                profiles += [h for w in TUNED_WEIGHTS if (h := self.simple_hybrid(self.policy.profiles[r], w))]
            for prof in profiles:
                for q in self.ctx.gold_queries(self.policy.with_profile(prof), profile=prof.name,
                                               cases=routed.get(prof.name, [])):
                    for req in q.requests:
                        seen.setdefault(req.fingerprint(), req)
            self._extra = list(seen.values())
        return self._extra

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
                               role_of=self.role_of, guard=guard, log=self.log, existing=self.policy.profiles)
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

    # ---- never propose worse ---------------------------------------------------------------
    def decide(self, ids: Sequence[str], prop_ev: Evaluation, ev_of: Callable[[Mapping[str, Profile]], Evaluation],
               veto: Callable[[Mapping[str, Profile], str | None], dict[str, Any] | None], basis: str,
               proposed: Mapping[str, Profile]) -> tuple[str, str | None, dict[str, Any]]:
        """(outcome, existing profile or None, figures): the proposal when it beats the current
        policy and the best existing profile on `ids` (`prop_ev` its figure there, `ev_of` the
        others') and `veto` finds it not significantly worse on test; else the best existing
        profile on the same terms against the current policy; else keep."""
        base = self.policy.profiles
        nd = lambda ev: _num(ev.aggregate.get(NDCG_10))  # noqa: E731
        v_cur, v_prop = nd(ev_of(base)), nd(prop_ev)
        existing = self.existing_policies()
        v_ex = {q: nd(ev_of(m)) for q, m in existing.items()}
        order = sorted(v_ex, key=lambda q: (-(v_ex[q] or 0.0), dict(existing[q]) != dict(base), q))
        best = order[0] if order else None
        v_best = v_ex[best] if best else None
        fig: dict[str, Any] = {"validation": {"n": len(ids), "basis": basis, "current": v_cur, "proposed": v_prop,
                                              "existing": v_ex, "best_existing": best}}
        if ids and _gt(v_prop, v_cur) and (v_best is None or _gt(v_prop, v_best)):
            failed = veto(proposed, best)
            if failed is None:
                return PROPOSED, None, fig
            fig["vetoed"] = failed
        elif ids:
            fig["not_better"] = ("the current policy" if not _gt(v_prop, v_cur) else f"existing profile '{best}'")
        if best is not None and ids and _gt(v_best, v_cur) and dict(existing[best]) != dict(base):
            failed = veto(existing[best], None)
            if failed is None:
                return EXISTING, best, fig
            fig["existing_vetoed"] = failed
        return KEEP, None, fig

    def test_veto(self, test_ids: Sequence[str], cur_test: Evaluation | None = None,
                  ) -> Callable[[Mapping[str, Profile], str | None], dict[str, Any] | None]:
        """A veto on `test_ids`: significantly worse than the current policy (and than the best
        existing profile, when named) by nDCG@10 (paired t-test, Holm across the four metrics)."""
        def veto(profiles: Mapping[str, Profile], best: str | None) -> dict[str, Any] | None:
            if not test_ids:
                return None
            cand = self.evaluate(profiles, test_ids, "test")
            against = {"current policy": cur_test or self.evaluate(self.policy.profiles, test_ids, "test")}
            if best is not None:
                against[f"existing profile '{best}'"] = self.evaluate(self.existing_policies()[best], test_ids, "test")
            return _significantly_worse(cand, against)
        return veto

    def chosen(self, outcome: str, profile: str | None, proposed: Mapping[str, Profile]) -> dict[str, Profile]:
        if outcome == PROPOSED:
            return dict(proposed)
        if outcome == EXISTING and profile is not None:
            return dict(self.existing_policies()[profile])
        return dict(self.policy.profiles)

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
            val = split.validation
            outcome, ex_name, fig = self.decide(
                val, self.evaluate(proposed, val, "select"), lambda m: self.evaluate(m, val, "select"),
                self.test_veto(test_ids), "validation split", proposed)
            outcome_test = self.evaluate(self.chosen(outcome, ex_name, proposed), test_ids, "test")
            tuned_profiles, tuned_test, tuned_weights = self.tuned_hybrid(split.train + split.validation, test_ids)
            fold_changes: list[list[dict[str, Any]]] = []
        else:
            test_evs, tuned_evs, fold_changes = [], [], []
            tuned_weights = {}
            for k, split in enumerate(self.splits, 1):
                prop_k, ch_k, n = self.search(split, guard, f" fold {k}/{self.folds}")
                tried += n
                fold_changes.append(ch_k)
                test_evs.append(self.evaluate(prop_k, split.test, "test"))  # paid from the reserve
                _tp, t_ev, tuned_weights = self.tuned_hybrid(split.train + split.validation, split.test)
                tuned_evs.append(t_ev)
            prop_test = merge(test_evs)
            tuned_test = merge(tuned_evs)
            final = final_split(self.cases, self.route_of, seed=self.seed)
            proposed, changes, n = self.search(final, guard, " (all questions)")
            tried += n
            train_ids = final.train
            test_ids = tuple(i for s in self.splits for i in s.test)
            self.testing = True

            # with k folds a fold's validation part is a handful of questions: the decision uses the
            # out-of-fold figures instead (every question scored by a proposal searched without it;
            # the current policy and the existing profiles are not searched, so their figures on all
            # questions are held out as they are), and the same figures veto
            def ev_of(profiles: Mapping[str, Profile]) -> Evaluation:
                return self.evaluate(profiles, test_ids, "test")

            def oof_veto(profiles: Mapping[str, Profile], best: str | None) -> dict[str, Any] | None:
                cand = prop_test if profiles is proposed else ev_of(profiles)
                against = {"current policy": ev_of(base)}
                if best is not None:
                    against[f"existing profile '{best}'"] = ev_of(self.existing_policies()[best])
                return _significantly_worse(cand, against)

            outcome, ex_name, fig = self.decide(test_ids, prop_test, ev_of, oof_veto,
                                                "out-of-fold (every question)", proposed)
            outcome_test = prop_test if outcome == PROPOSED else ev_of(self.chosen(outcome, ex_name, proposed))
        base_test = self.evaluate(base, test_ids, "test")
        existing_test = {q: metrics_dict(self.evaluate(m, test_ids, "test"))
                         for q, m in self.existing_policies().items()}
        best_ex = fig["validation"]["best_existing"]
        decision = {"outcome": outcome, "profile": ex_name, **fig,
                    "test": {"n": len(test_ids), "outcome": metrics_dict(outcome_test),
                             "existing": existing_test,
                             **({"proposed_vs_best_existing": paired(
                                 self.evaluate(self.existing_policies()[best_ex], test_ids, "test"), prop_test)}
                                if best_ex else {})},
                    "message": ""}
        decision["message"] = decision_message(decision, self.policy)
        data: dict[str, Any] = {
            "baseline": {"policy": self.policy.name, "train": metrics_dict(self.evaluate(base, train_ids, "search")),
                         "test": metrics_dict(base_test)},
            "proposed": {"train": metrics_dict(self.evaluate(proposed, train_ids, "search")),
                         "test": metrics_dict(prop_test), "test_vs_baseline": paired(base_test, prop_test),
                         "method": "coordinate descent over every existing profile, the legs and the knobs, "
                                   "pairs of near misses (train), selection (validation), paired t-test with "
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
            "decision": decision,
            "alternatives": {"tuned_hybrid": {"weights": tuned_weights, "test": metrics_dict(tuned_test),
                                              "proposed_vs_tuned": paired(tuned_test, prop_test),
                                              "description": "per route: keyword leg + one vector query "
                                                             "(k = 50), security clause only, no scoring "
                                                             "profile, no reranker; vector weight chosen "
                                                             "on train + validation"}},
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
                                  role_of=self.role_of, existing=self.policy.profiles) if tuned else []
                per_pass = sum(len(kn.candidates()) for kn in knobs)
                n_tr, n_va, n_te = len(train.get(name, ())), len(val.get(name, ())), len(test.get(name, ()))
                pair_cands = MAX_PAIR_ROUNDS * PAIR_BEAM * (PAIR_BEAM - 1) // 2
                cands = MAX_PASSES * per_pass + pair_cands if tuned else 0
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


__all__ = ["ALPHA", "EXISTING", "KEEP", "PROPOSED", "TUNED_WEIGHTS", "decision_message", "merge", "metrics_dict", "optimize_policy", "paired", "plan_optimization"]
