"""The draft's own expected agreement: do two independent drafts rank the policy's profiles alike?

A drafted goldset is only useful if it ranks retrieval configurations the way real judgements
would. That cannot be measured without real judgements, but its precondition can: two drafts
made with different seeds (other passages, other templates, other synonyms) must rank the
policy's profiles alike, or the ranking is an accident of the draw. `expected_agreement` runs
every profile of the policy on both drafts' answerable cases, scores nDCG@10 and compares the
two orderings with Kendall's tau-b. Below `TRUST_TAU` the draft says it cannot be trusted to
rank policies; above it the draft is consistent with itself, which is necessary, not
sufficient (on the benchmarks two seeds agreed at tau 0.93-1.0 on a collection where the
drafts ranked the profiles against the real judgements: see benchmarks/draft.md).

A second, independent precondition: the rule families (fact, overview, definition, ...) of
one draft must not rank the profiles in opposite ways, or the draft's overall ranking is an
accident of its mix of question types. Every family with at least `MIN_FAMILY_CASES`
answerable cases is ranked on its own; below `FAMILY_TAU` for any pair the draft is not
trusted either (on the benchmarks this caught the collection whose families disagreed,
tau 0.15-0.62, and whose drafts matched the real ranking at only 0.29-0.57).

Both are consistency, not validity. A draft is `trusted` only when, in addition, the questions
the system really gets (a query log, the user's question list) behave like the drafted ones
on the same profiles (`drafting.validity.compare_workloads`); `status` says which of these
it is: "trusted", "not trusted" (inconsistent), "cannot say" (consistent, but the real
questions are unlike the drafted ones, e.g. topical requests against drafted lookups of one
record), "unmeasured" (consistent; no real questions, so validity is not measured) or "not
measured" (too few profiles scored to compare the drafts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragdiag.drafting.validity import compare_workloads, kendall_tau

__all__ = ["FAMILY_TAU", "MIN_FAMILY_CASES", "STATUSES", "TRUST_TAU", "expected_agreement", "kendall_tau"]

TRUST_TAU = 0.8
FAMILY_TAU = 0.5
MIN_FAMILY_CASES = 8
STATUSES = ("trusted", "not trusted", "cannot say", "unmeasured", "not measured")


def _ndcg(target: Any, profile: Any, cases: Sequence[Any], security_field: str,
          identities: Mapping[str, Sequence[str]]) -> float | None:
    from ragdiag.metrics import NDCG_10, evaluate
    from ragdiag.policy import Identity

    run: dict[str, list[str]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for c in cases:
        if c.refused or not c.sources:
            continue
        who = Identity(c.as_user, tuple(identities[c.as_user])) if c.as_user in identities else None
        request = profile.build(c.question, who, security_field=security_field)
        run[c.id] = list(target.search(request).keys)
        qrels[c.id] = {k: g for k, g in c.sources}
    if not qrels:
        return None
    return float(evaluate(run, qrels).aggregate[NDCG_10])


def expected_agreement(target: Any, policy: Any, drafts: Sequence[Any], *,
                       identities: Mapping[str, Sequence[str]] | None = None,
                       real_questions: Sequence[str] | None = None,
                       real_source: str = "real questions") -> dict[str, Any]:
    """Kendall's tau between the rankings of `policy`'s profiles by nDCG@10 on two drafts
    (`drafts`: two `Draft`s of different seeds), with the per-profile figures and the verdict.
    `real_questions` (the query log's or the user's questions, `real_source` names them): what
    the drafted questions are compared with before the draft may be called trusted."""
    idents = {k: tuple(v) for k, v in (identities or {}).items()}
    names = sorted(policy.profiles)
    scores = {n: [_ndcg(target, policy.profiles[n], d.cases, policy.security_field, idents) for d in drafts]
              for n in names}
    usable = [n for n in names if all(v is not None for v in scores[n])]
    tau = kendall_tau([scores[n][0] for n in usable], [scores[n][1] for n in usable]) if len(usable) >= 3 else None
    families = _families(target, policy, drafts[0], idents, names)
    pairs = {f"{a} vs {b}": kendall_tau([families[a][n] for n in names], [families[b][n] for n in names])
             for i, a in enumerate(sorted(families)) for b in sorted(families)[i + 1:]}
    low = {k: v for k, v in pairs.items() if v is not None and v < FAMILY_TAU}
    consistent = tau is not None and tau >= TRUST_TAU and not low
    workload = None
    if consistent and real_questions:

        drafted = [c.question for c in drafts[0].cases if not c.refused and c.sources]
        workload = compare_workloads(target, policy.profiles, drafted, list(real_questions),
                                     security_field=policy.security_field, source=real_source)
    trusted = consistent and workload is not None and workload["resembles"] is True
    if tau is None:
        verdict = (f"not measured: fewer than 3 profiles ({len(usable)}) could be scored on both drafts"
                   if len(usable) < 3 else "not measured: every profile scores alike on a draft")
    elif tau < TRUST_TAU:
        verdict = (f"two independent drafts rank the {len(usable)} profiles differently (tau {tau:.2f} < "
                   f"{TRUST_TAU}): this draft cannot be trusted to rank policies; review it or judge by hand")
    elif low:
        worst = min(low, key=lambda k: low[k])
        verdict = (f"its question types rank the profiles in opposite ways ({worst}: tau {low[worst]:.2f} < "
                   f"{FAMILY_TAU}): the overall ranking depends on the mix of question types, so this draft "
                   "cannot be trusted to rank policies; weigh the types as your users ask, or judge by hand")
    else:
        consistent_text = (f"two independent drafts rank the {len(usable)} profiles alike (tau {tau:.2f} >= "
                           f"{TRUST_TAU}) and so do its question types")
        if workload is None or workload["resembles"] is None:
            why = ("; ".join(workload["reasons"]) if workload is not None
                   else "no real questions to compare the drafted ones with (name a query log or a goldset of "
                        "your users' questions in [inputs])")
            verdict = (f"{consistent_text}: consistent with itself, validity unmeasured ({why}); "
                       "consistency is necessary, not proof that real judgements agree")
        elif workload["resembles"]:
            verdict = (f"{consistent_text}, and the {workload['source']} behave like the drafted ones on these "
                       f"profiles (pooled agreement order tau {workload['pooled_tau']:.2f}, first hit agreed on "
                       f"{workload['real']['first_hit']:.0%} vs {workload['drafted']['first_hit']:.0%}): trusted "
                       "to rank policies for this workload")
        else:
            verdict = (f"{consistent_text}, but cannot say whether real judgements would rank them so: "
                       + "; ".join(workload["reasons"])
                       + ". The draft ranks profiles for questions your system does not get; judge some of the "
                         "real questions by hand")
    status = ("trusted" if trusted else "not trusted" if not consistent and tau is not None
              else "not measured" if tau is None
              else "unmeasured" if workload is None or workload["resembles"] is None else "cannot say")
    return {"tau": tau, "trusted": trusted, "status": status, "workload": workload,
            "threshold": TRUST_TAU, "seeds": [d.seed for d in drafts],
            "profiles": {n: [None if v is None else round(v, 4) for v in scores[n]] for n in names},
            "families": {"tau": pairs, "threshold": FAMILY_TAU,
                         "ndcg@10": {f: {n: round(v, 4) for n, v in fam.items()} for f, fam in families.items()}},
            "verdict": verdict}


def _families(target: Any, policy: Any, draft: Any, identities: Mapping[str, Sequence[str]],
              names: Sequence[str]) -> dict[str, dict[str, float]]:
    """nDCG@10 of every profile on each rule family of `draft` with enough answerable cases."""
    by_rule: dict[str, list[Any]] = {}
    for c in draft.cases:
        if not c.refused and c.sources:
            by_rule.setdefault(c.rule, []).append(c)
    out: dict[str, dict[str, float]] = {}
    for rule, cases in sorted(by_rule.items()):
        if len(cases) < MIN_FAMILY_CASES:
            continue
        vals = {n: _ndcg(target, policy.profiles[n], cases, policy.security_field, identities) for n in names}
        if all(v is not None for v in vals.values()):
            out[rule] = vals  # type: ignore[assignment]
    return out
