"""Evaluating a tuned profile against its baseline on the questions routed to it.

`evaluate_profile(ctx, profile, baseline) -> TunerResult`: pool sizes, top-1
reranker scores and nDCG@10 / recall@10 / recall@50 / MRR against the baseline
with paired t-tests; `drilldown(trace, qrels) -> [DrillRow]`: where each
relevant document of one question is (keyword leg, vector legs, fused pool,
rerank window, final rank) and where it was lost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag import odata
from ragdiag.errors import RagdiagError
from ragdiag.metrics import MRR, NDCG_10, RECALL_10, RECALL_50, Comparison, compare, holm
from ragdiag.model import RERANK_WINDOW, Trace
from ragdiag.policy import Policy, Profile
from ragdiag.tuner.state import filter_clauses, profile_changes

METRICS = (NDCG_10, RECALL_10, RECALL_50, MRR)
POOL_MIN = RERANK_WINDOW  # a pool below the reranker's window starves it
SCORE_OK = 2.0  # reranker score of a "somewhat relevant" top-1 (0..4 scale)
ALPHA = 0.05
#: the multiple-comparison correction of the significance markers: Holm across the metrics shown
CORRECTION = "Holm"


# ---- which questions ---------------------------------------------------------------
def profile_cases(ctx: Any, profile: str, *, policy: Policy | None = None) -> list[Any]:
    """The question cases (goldset, else query log) the policy routes to `profile` by intent."""
    policy = policy or ctx.policy
    out = []
    for case in ctx.question_cases():
        intent = case.intent if case.intent and case.intent != "unknown" else None
        route = policy.route_intent(intent) if intent else policy.route(case.question)
        if route.profile_name == profile:
            out.append(case)
    return out


def run_profile(ctx: Any, profile: Profile, cases: Sequence[Any], *, policy: Policy | None = None,
                runner: Any = None, label: str | None = None) -> Any:
    """Execute `cases` through `profile` (not cached by policy identity, unlike `ctx.run_gold`)."""
    from ragdiag.audit import GoldRun

    policy = (policy or ctx.policy).with_profile(profile)
    queries = ctx.gold_queries(policy, profile=profile.name, cases=list(cases))
    runner = runner or ctx.runner
    results = runner.run_fused([q.requests for q in queries], label=label or f"tuner:{profile.name}")
    return GoldRun(label or profile.name, queries, results)


# ---- results ---------------------------------------------------------------------------
def _quantile(values: Sequence[float], q: float) -> float | None:
    vals = sorted(values)
    if not vals:
        return None
    pos = (len(vals) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def pool_summary(sizes: Sequence[int]) -> dict[str, Any]:
    """n, p5, median, mean, min and the share of pools below the reranker window."""
    n = len(sizes)
    return {"n": n, "p5": _quantile(sizes, 0.05), "median": _quantile(sizes, 0.5),
            "mean": sum(sizes) / n if n else None, "min": min(sizes) if n else None,
            "share_below": sum(s < POOL_MIN for s in sizes) / n if n else None}


def score_summary(scores: Sequence[float | None]) -> dict[str, Any]:
    """Top-1 reranker scores: n reranked, median, mean, share below 2.0, queries without one."""
    vals = [s for s in scores if s is not None]
    n = len(vals)
    return {"n": n, "median": _quantile(vals, 0.5), "mean": sum(vals) / n if n else None,
            "share_below": sum(v < SCORE_OK for v in vals) / n if n else None,
            "missing": len(scores) - n}


def top1_score(trace: Trace) -> float | None:
    """The reranker score of the first hit, None when not reranked or no hits."""
    if not trace.reranked or not trace.hits:
        return None
    h = trace.hits[0]
    return h.reranker_boosted_score if h.reranker_boosted_score is not None else h.reranker_score


@dataclass
class TunerResult:
    """The tuned profile's run next to the baseline's, on the same routed questions."""

    profile: Profile
    baseline: Profile
    cases: list[Any]
    run: Any  # GoldRun
    baseline_run: Any  # GoldRun
    evaluation: Any  # Evaluation | None (no goldset)
    baseline_evaluation: Any
    comparisons: dict[str, Comparison] = field(default_factory=dict)
    elapsed_ms: float = 0.0
    sent: int = 0  # requests that reached the target (not answered by the runner's cache)

    @property
    def changes(self) -> list[str]:
        return profile_changes(self.baseline, self.profile)

    @staticmethod
    def _traces(run: Any) -> list[Trace]:
        return [t for _, t in run.traces()]

    @property
    def pool_sizes(self) -> list[int]:
        return [t.pool_size for t in self._traces(self.run)]

    @property
    def baseline_pool_sizes(self) -> list[int]:
        return [t.pool_size for t in self._traces(self.baseline_run)]

    @property
    def top1_scores(self) -> list[float | None]:
        return [top1_score(t) for t in self._traces(self.run)]

    @property
    def baseline_top1_scores(self) -> list[float | None]:
        return [top1_score(t) for t in self._traces(self.baseline_run)]

    @property
    def failures(self) -> list[Any]:
        return self.run.failures

    def pool_summary(self, baseline: bool = False) -> dict[str, Any]:
        return pool_summary(self.baseline_pool_sizes if baseline else self.pool_sizes)

    def score_summary(self, baseline: bool = False) -> dict[str, Any]:
        return score_summary(self.baseline_top1_scores if baseline else self.top1_scores)

    def metric(self, name: str, baseline: bool = False) -> float | None:
        ev = self.baseline_evaluation if baseline else self.evaluation
        return None if ev is None else ev.aggregate.get(name)

    def metric_rows(self) -> list[dict[str, Any]]:
        """Per metric: baseline, tuned, mean delta, p (paired t-test), p_holm (Holm-adjusted
        across the metrics shown) and the significance marker, which uses p_holm < ALPHA."""
        shown = [(m, self.comparisons[m]) for m in METRICS if m in self.comparisons]
        adjusted = holm({m: c.p_ttest for m, c in shown})
        rows = []
        for m, c in shown:
            p_holm = adjusted[m]
            rows.append({"metric": m, "baseline": c.a_mean, "tuned": c.b_mean, "delta": c.mean_delta,
                         "wins": c.wins, "ties": c.ties, "losses": c.losses, "p": c.p_ttest,
                         "p_holm": p_holm, "significant": p_holm is not None and p_holm < ALPHA, "n": c.n})
        return rows

    def trace(self, case_id: str, baseline: bool = False) -> Trace | None:
        run = self.baseline_run if baseline else self.run
        for q, t in run.traces():
            if q.case.id == case_id:
                return t
        return None

    def case(self, case_id: str) -> Any:
        return next(c for c in self.cases if c.id == case_id)


def evaluate_profile(ctx: Any, profile: Profile, baseline: Profile, *, policy: Policy | None = None,
                     cases: Sequence[Any] | None = None, runner: Any = None,
                     baseline_run: Any = None) -> TunerResult:
    """Run `profile` and `baseline` on the questions routed to the baseline's profile and
    compare them (give `baseline_run` to reuse an earlier baseline run)."""
    t0 = time.perf_counter()
    policy = policy or ctx.policy
    runner = runner or ctx.runner
    sent0 = runner.stats.sent
    cases = list(cases) if cases is not None else profile_cases(ctx, baseline.name, policy=policy)
    if baseline_run is None:
        baseline_run = run_profile(ctx, baseline, cases, policy=policy, runner=runner,
                                   label=f"{baseline.name} (baseline)")
    run = baseline_run if profile == baseline else run_profile(
        ctx, profile, cases, policy=policy, runner=runner, label=f"{profile.name} (tuned)")
    ev = bev = None
    comparisons: dict[str, Comparison] = {}
    gold = getattr(ctx, "goldset", None)
    if gold is not None:
        bev = baseline_run.evaluation(gold)
        ev = run.evaluation(gold)
        if len(ev.per_query):
            comparisons = {m: compare(bev, ev, m) for m in METRICS}
    return TunerResult(profile=profile, baseline=baseline, cases=cases, run=run,
                       baseline_run=baseline_run, evaluation=ev, baseline_evaluation=bev,
                       comparisons=comparisons, elapsed_ms=(time.perf_counter() - t0) * 1000,
                       sent=runner.stats.sent - sent0)


# ---- drill-down ----------------------------------------------------------------------
@dataclass(frozen=True)
class DrillRow:
    """Where one relevant document of one question is, stage by stage (ranks are 1-based)."""

    key: str
    grade: int
    keyword_rank: int | None
    vector_ranks: tuple[tuple[str, int | None], ...]
    pool_rank: int | None
    in_window: bool | None  # None: the request was not reranked
    final_rank: int | None
    lost_at: str  # "" when it reached the top; else the loss funnel's stage (filter, retrieval, window, ...)
    excluded_by: tuple[str, ...] = ()  # filter clauses the document fails
    in_index: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"key": self.key, "grade": self.grade, "keyword": self.keyword_rank,
                **{name: rank for name, rank in self.vector_ranks},
                "pool": self.pool_rank, "in window": self.in_window, "final": self.final_rank,
                "lost at": self.lost_at}


_COMPILED: dict[str, Any] = {}


def _document_check(target: Any, key: str, clauses: Sequence[str]) -> tuple[bool | None, tuple[str, ...]]:
    """(exists in the index, clauses it fails); (None, ()) when the target cannot tell."""
    if target is None:
        return None, ()
    from ragdiag.targets.base import has_capability

    records, row_of = (target.records, target.row_of) if has_capability(target, "local_records") else (None, None)
    if isinstance(records, Sequence) and isinstance(row_of, Mapping):  # the local target
        row = row_of.get(key)
        if row is None:
            return False, ()
        rec = records[row]
        failing = []
        for text in clauses:
            fn = _COMPILED.get(text)
            if fn is None:
                fn = _COMPILED[text] = odata.compile_filter(text)
            if not fn(rec):
                failing.append(text)
        return True, tuple(failing)
    try:  # any other target: a count per clause (a few requests, on demand)
        key_field = target.schema().key_field.name
        this = f"{key_field} eq {odata.quote(key)}"
        if target.count(this) == 0:
            return False, ()
        return True, tuple(c for c in clauses if target.count(f"{this} and ({c})") == 0)
    except RagdiagError:
        return None, ()


def drilldown(trace: Trace, qrels: Mapping[str, int], *, top: int | None = None,
              target: Any = None) -> list[DrillRow]:
    """One row per relevant document (grade >= 1) of a question: rank in the keyword leg, in
    each vector leg, in the fused pool after filters, inside the rerank window or not, the
    final rank, and the loss funnel's stage that lost it before the first `top` results
    (default: the request's top; `ragdiag.engine.funnel.classify`, the audit's own
    classification, so the tuner's "lost at" and the findings' ``loss_funnel`` say the same).
    With `target`, documents absent everywhere are checked against each filter clause.
    """
    from ragdiag.engine.funnel import Admission, classify, view_of_trace

    req = trace.request
    top = top if top is not None else req.top
    final = {k: i for i, k in enumerate(trace.keys, 1)}
    window = set(trace.rerank_window)
    clause_texts = [c.text for c in filter_clauses(req.filter)]
    access = _access_clauses(target, req.filter)
    view = view_of_trace(trace)
    rows = []
    for key, grade in sorted(qrels.items(), key=lambda kv: (-kv[1], kv[0])):
        if grade < 1:
            continue
        kw = trace.text.rank_of(key) if trace.text is not None else None
        vec = tuple((v.name, v.rank_of(key)) for v in trace.vectors)
        pool = trace.pool.rank_of(key) if trace.pool is not None else None
        in_window = (key in window) if trace.reranked else None
        fr = final.get(key)
        in_legs = kw is not None or any(r is not None for _, r in vec)
        exists, excluded = None, ()
        if (fr is None or fr > top) and not in_legs:
            exists, excluded = _document_check(target, key, clause_texts)
        admission = Admission(exists=exists, admitted=not excluded,
                              failing=tuple((t, t in access) for t in excluded))
        stage = classify(view, key, admission, top=top)[0]
        rows.append(DrillRow(key=key, grade=int(grade), keyword_rank=kw, vector_ranks=vec,
                             pool_rank=pool, in_window=in_window, final_rank=fr,
                             lost_at="" if stage == "top" else stage,
                             excluded_by=excluded, in_index=exists))
    return rows


def _access_clauses(target: Any, flt: str | None) -> set[str]:
    """The clauses of `flt` on the target's security fields (the identity's rights, not a filter)."""
    try:
        secure = {f.name for f in target.schema().security_fields} if target is not None else set()
    except (RagdiagError, AttributeError):
        secure = set()
    return {c.text for c in filter_clauses(flt) if c.fields & secure}


def key_outside(pool_rank: int | None) -> bool:
    return pool_rank is None or pool_rank > RERANK_WINDOW
