"""How an owner check judges the profile elements it owns from their ablation (not a check).

`judge_owned(ctx, spec, v, owner)` reads the audit's ablation (`AuditContext.ablation`, every
profile element neutralised on the goldset, `ragdiag.engine.ablation`), keeps the elements
`owner` owns, and decides with the owner spec's thresholds:

- an element **hurts** when neutralising it raises nDCG@10 or recall@50 with a Holm-adjusted
  p below ``ablation_alpha``: a finding of the owner whatever the element's name or role --
  ``fail`` when the gain is at least ``ablation_fail_delta``, ``warn`` below it (or where the
  caller says the element is a deliberate choice, e.g. a scope clause), with the measured
  effect (`Verdict.effect`, p Holm-adjusted) so the report can rank it;
- every measured element counts as positive evidence (``elements_ablated``) and is listed in
  the ``element_ablation`` table (helps / neutral / at default / not ablatable, with why);
- without a goldset the ablation is skipped and the finding says so (a note), so a pass then
  rests on what else the check observed, never on an element nobody measured.

The verdict the owner reached is written back into the ablation (`Ablation.record_verdict`),
which is what the findings JSON reports per element.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ragdiag.checks.base import Verdict

__all__ = ["judge_owned", "thresholds"]

DEFAULT_ALPHA = 0.05
DEFAULT_FAIL_DELTA = 0.02
COLUMNS = ("profile", "element", "kind", "where", "neutralised", "questions", "ndcg10_with", "ndcg10_without",
           "recall50_with", "recall50_without", "p_holm", "verdict")


def _threshold(spec: Any, name: str, default: float) -> float:
    if spec is not None and getattr(spec, "has_threshold", None) and spec.has_threshold(name):
        return float(spec.threshold(name))
    return default


def thresholds(spec: Any) -> tuple[float, float]:
    """(alpha, fail delta) of the owner's spec (the defaults when an older spec copy lacks them)."""
    return (_threshold(spec, "ablation_alpha", DEFAULT_ALPHA),
            _threshold(spec, "ablation_fail_delta", DEFAULT_FAIL_DELTA))


def _significant(r: Any, alpha: float) -> tuple[str | None, float | None, float | None]:
    """(metric, gain, p_holm) of the largest significant gain from neutralising the element."""
    best: tuple[str | None, float | None, float | None] = (None, None, None)
    for m, vals in r.metrics.items():
        d, p = vals.get("delta"), vals.get("p_holm")
        if d is None or p is None or not p < alpha or d <= 0:
            continue
        if best[1] is None or d > best[1]:
            best = (m, d, p)
    return best


def judge_owned(ctx: Any, spec: Any, v: Verdict, owner: str, *,
                severity: Callable[[Any], str | None] | None = None,
                quiet: Iterable[str] = ()) -> list[Any]:
    """Judge the owner's ablated elements into `v`; returns the hurting results.

    `severity(result)` may return ``"warn"`` for an element that is a deliberate choice (the
    loss is reported, the decision left to the client) or None for the default rule; element
    ids in `quiet` were already reported by the check's own finer measurement (their verdict
    is recorded, no second message)."""
    get = getattr(ctx, "ablation", None)
    if not callable(get):
        return []
    ab = get()
    if not ab.measured:
        if ctx.has("target") and ctx.has("profiles"):
            v.note("common.abl_not_run", reason=ab.reason or "")
        return []
    mine = ab.for_owner(owner)
    if not mine:
        return []
    alpha, fail_delta = thresholds(spec)
    quiet = set(quiet)
    rows, hurting = [], []
    measured = 0
    for r in mine:
        verdict = r.judge(alpha)
        if r.metrics:
            measured += 1
        if r.element.status == "measured":  # the what-if's requests are this check's evidence too
            v.count_requests(r.questions, r.failed, r.reason, r.element.profile)
        ab.record_verdict(r.id, verdict, owner)
        e = r.element
        if e.status == "at_default":  # nothing to neutralise: in the JSON's ablation, not in the table
            continue
        nd, rc = r.metrics.get("ndcg@10") or {}, r.metrics.get("recall@50") or {}
        p_holm = min((m.get("p_holm") for m in r.metrics.values() if m.get("p_holm") is not None), default=None)
        rows.append((e.profile, e.element, e.kind, e.where or "", v.msg(f"common.abl_n_{e.kind}", element=e.element,
                                                                              profile=e.profile, value=e.value or ""),
                     r.questions or None, nd.get("with"),
                     nd.get("without"), rc.get("with"), rc.get("without"), p_holm,
                     v.msg(f"common.abl_v_{verdict}")))
        if verdict != "hurts":
            continue
        hurting.append(r)
        metric, gain, p = _significant(r, alpha)
        vals = r.metrics[metric]
        n = vals.get("n") or r.questions
        what = dict(element=e.element, profile=e.profile, value=e.value or "")
        action = v.msg(f"common.abl_do_{e.kind}", **what)
        params = dict(element=e.element, profile=e.profile, neutral=v.msg(f"common.abl_n_{e.kind}", **what),
                      metric=metric, before=vals["with"], after=vals["without"], p=p, n=n)
        v.effect(metric, vals["with"], vals["without"], p=p, n=n, test="paired_ttest_holm",
                 action=f"common.abl_do_{e.kind}", scope="common.abl_scope",
                 scope_params={"n": n, "profile": e.profile}, **what)
        if r.id in quiet:
            continue
        level = severity(r) if severity is not None else None
        level = level or ("fail" if gain >= fail_delta else "warn")
        (v.fail if level == "fail" else v.warn)("common.abl_hurts", **params)
        v.recommend("common.abl_rec", action=action, metric=metric, before=vals["with"], after=vals["without"],
                    p=p)
    v.observed("elements_ablated", measured)
    v.metric("elements_ablated", measured)
    v.metric("elements_hurting", len(hurting))
    v.table("element_ablation", "common.t_element_ablation", COLUMNS, rows, note="common.n_element_ablation",
            alpha=alpha, family=ab.family)
    return hurting
