"""The profile tuner: turn a profile's knobs and watch pool sizes, scores and goldset metrics.

    tuner = ProfileTuner(ctx, "definition")   # ctx = build_context(load_config(path))
    tuner                                      # in Jupyter: controls + live outputs

Everything is computed on the goldset questions the policy routes to the chosen
profile (by their intent), so one change re-runs a few dozen requests; on the
local target most of them are answered from its stage caches (keyword leg,
each vector leg, reranker scores per text and key), so only the stage a knob
touches is recomputed.

The computation is separate from the widgets and testable without a frontend:

- `TunerState`: the knob values; `TunerState.from_profile(p).with_k(50).profile()`
  is the tuned `Profile` (fields left at the baseline's value stay untouched);
- `evaluate_profile(ctx, profile, baseline) -> TunerResult`: pool sizes, top-1
  reranker scores and nDCG@10 / recall@10 / recall@50 / MRR against the baseline
  with paired t-tests;
- `drilldown(trace, qrels) -> [DrillRow]`: where each relevant document of one
  question is (keyword leg, vector legs, fused pool, rerank window, final rank)
  and where it was lost;
- `pool_html`, `scores_html`, `metrics_html`, `drill_html`: the outputs as HTML.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragdiag import odata
from ragdiag.errors import ConfigError, RagdiagError
from ragdiag.metrics import MRR, NDCG_10, RECALL_10, RECALL_50, Comparison, compare
from ragdiag.model import DEFAULT_MAX_TEXT_RECALL_SIZE, RERANK_WINDOW, VECTOR_FILTER_MODES, Trace
from ragdiag.policy.profile import (
    KEYWORD_TEXT_MODES,
    SEMANTIC_TEXT_MODES,
    VECTOR_TEXT_MODES,
    Policy,
    Profile,
    dump_policy,
    dump_profile,
)

METRICS = (NDCG_10, RECALL_10, RECALL_50, MRR)
POOL_MIN = RERANK_WINDOW  # a pool below the reranker's window starves it
SCORE_OK = 2.0  # reranker score of a "somewhat relevant" top-1 (0..4 scale)
K_MAX = 200
RECALL_MAX = 2000
TOP_MAX = 100
ALPHA = 0.05

_POOL_BINS: tuple[tuple[str, int, float], ...] = (
    ("0", 0, 1), ("1-9", 1, 10), ("10-24", 10, 25), ("25-49", 25, 50), ("50-99", 50, 100),
    ("100-249", 100, 250), ("250-499", 250, 500), ("500-999", 500, 1000), ("1000+", 1000, math.inf))
_SCORE_BINS: tuple[tuple[str, float, float], ...] = tuple(
    (f"{lo:.1f}-{lo + 0.5:.1f}", lo, lo + 0.5 if lo < 3.5 else math.inf) for lo in
    (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5))


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


# ---- the knobs -----------------------------------------------------------------------
@dataclass(frozen=True)
class TunerState:
    """Knob values of one profile; `profile()` applies them to the baseline.

    Per vector query: `ks`, `weights`, `exhaustive`, `vector_texts`. `clauses`
    says which top-level clauses of the baseline's filter are kept.
    `max_text_recall_size` None means the target's default (1000).
    """

    baseline: Profile
    ks: tuple[int, ...]
    weights: tuple[float, ...]
    exhaustive: tuple[bool, ...]
    vector_texts: tuple[str, ...]
    vector_filter_mode: str
    max_text_recall_size: int | None
    top: int
    reranker: bool
    keyword_text: str
    semantic_text: str
    clauses: tuple[bool, ...]

    @classmethod
    def from_profile(cls, baseline: Profile, current: Profile | None = None) -> TunerState:
        """Knobs at `current`'s values (default: the baseline's), relative to `baseline`."""
        p = current or baseline
        vqs = p.vector_queries if len(p.vector_queries) == len(baseline.vector_queries) \
            else baseline.vector_queries
        kept = tuple(True for _ in filter_clauses(baseline.filter))
        if current is not None and current.filter != baseline.filter:
            texts = {c.text for c in filter_clauses(current.filter)}
            kept = tuple(c.text in texts for c in filter_clauses(baseline.filter))
        return cls(baseline=baseline, ks=tuple(v.k for v in vqs), weights=tuple(v.weight for v in vqs),
                   exhaustive=tuple(v.exhaustive for v in vqs), vector_texts=tuple(v.text for v in vqs),
                   vector_filter_mode=p.vector_filter_mode, max_text_recall_size=p.max_text_recall_size,
                   top=p.top, reranker=p.query_type == "semantic", keyword_text=p.keyword_text,
                   semantic_text=p.semantic_text, clauses=kept)

    def with_k(self, k: int) -> TunerState:
        """Every vector query with `k` neighbours."""
        return replace(self, ks=tuple(int(k) for _ in self.ks))

    def with_(self, **changes: Any) -> TunerState:
        return replace(self, **changes)

    def filter(self) -> str | None:
        """The baseline's filter with the unchecked clauses dropped."""
        cl = filter_clauses(self.baseline.filter)
        if all(self.clauses) or len(self.clauses) != len(cl):
            return self.baseline.filter
        kept = odata.conjoin(c.expr for c, on in zip(cl, self.clauses, strict=True) if on)
        return odata.render(kept) if kept is not None else None

    def profile(self) -> Profile:
        """The tuned profile: the baseline with every changed knob applied (raises ConfigError
        for combinations that cannot work, e.g. no keyword leg and no semantic text)."""
        b = self.baseline
        changes: dict[str, Any] = {}
        vqs = []
        for i, vq in enumerate(b.vector_queries):
            new = {}
            for key, values in (("k", self.ks), ("weight", self.weights), ("exhaustive", self.exhaustive),
                                ("text", self.vector_texts)):
                if i < len(values) and values[i] != getattr(vq, key):
                    new[key] = values[i]
            vqs.append(replace(vq, **new) if new else vq)
        if tuple(vqs) != b.vector_queries:
            changes["vector_queries"] = tuple(vqs)
        recall = self.max_text_recall_size
        if recall != b.max_text_recall_size and not (
                b.max_text_recall_size is None and recall == DEFAULT_MAX_TEXT_RECALL_SIZE):
            changes["max_text_recall_size"] = recall
        for key in ("vector_filter_mode", "top", "keyword_text", "semantic_text"):
            if getattr(self, key) != getattr(b, key):
                changes[key] = getattr(self, key)
        if self.reranker != (b.query_type == "semantic"):
            if self.reranker:
                changes["query_type"] = "semantic"
            else:
                changes.update(query_type="simple", captions=None, answers=None, query_rewrites=None)
        flt = self.filter()
        if flt != b.filter:
            changes["filter"] = flt
        return b.replace(**changes) if changes else b


def filter_clauses(text: str | None) -> tuple[odata.Clause, ...]:
    """Top-level clauses of a filter text (none for no filter)."""
    return odata.clauses(odata.parse(text)) if text else ()


def profile_changes(baseline: Profile, tuned: Profile) -> list[str]:
    """Human-readable differences, e.g. ["vector query 1: k 20 → 50"]."""
    out = []
    for key in ("query_type", "keyword_text", "semantic_text", "vector_filter_mode",
                "max_text_recall_size", "top", "filter", "captions", "answers", "query_rewrites"):
        a, b = getattr(baseline, key), getattr(tuned, key)
        if a != b:
            out.append(f"{key}: {a!r} → {b!r}" if key == "filter" else f"{key} {a} → {b}")
    for i, (va, vb) in enumerate(zip(baseline.vector_queries, tuned.vector_queries, strict=False), 1):
        for key in ("k", "weight", "exhaustive", "text", "fields", "filter_override"):
            a, b = getattr(va, key), getattr(vb, key)
            if a != b:
                out.append(f"vector query {i}: {key} {a} → {b}")
    return out


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
        """Per metric: baseline, tuned, mean delta, p (paired t-test), significance marker."""
        rows = []
        for m in METRICS:
            c = self.comparisons.get(m)
            if c is None:
                continue
            rows.append({"metric": m, "baseline": c.a_mean, "tuned": c.b_mean, "delta": c.mean_delta,
                         "wins": c.wins, "ties": c.ties, "losses": c.losses, "p": c.p_ttest,
                         "significant": c.significant(ALPHA), "n": c.n})
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
    lost_at: str  # "" when it reached the top; else filter / keyword+vector recall / ...
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
    records, row_of = getattr(target, "records", None), getattr(target, "row_of", None)
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
    final rank, and where it was lost before the first `top` results (default: the request's
    top). With `target`, documents absent everywhere are checked against each filter clause.
    """
    req = trace.request
    top = top if top is not None else req.top
    final = {k: i for i, k in enumerate(trace.keys, 1)}
    window = set(trace.rerank_window)
    clause_texts = [c.text for c in filter_clauses(req.filter)]
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
        if fr is None or fr > top:
            if not in_legs:
                exists, excluded = _document_check(target, key, clause_texts)
            lost = _lost_at(trace, exists, excluded, in_legs, pool)
        else:
            lost = ""
        rows.append(DrillRow(key=key, grade=int(grade), keyword_rank=kw, vector_ranks=vec,
                             pool_rank=pool, in_window=in_window, final_rank=fr, lost_at=lost,
                             excluded_by=excluded, in_index=exists))
    return rows


def _lost_at(trace: Trace, exists: bool | None, excluded: Sequence[str], in_legs: bool,
             pool: int | None) -> str:
    if exists is False:
        return "not in index"
    if excluded:
        return "filter"
    if not in_legs:
        if trace.text is None and not trace.vectors:
            return "not in pool"  # a target without stage lists (e.g. live): no finer answer
        return "keyword+vector recall"
    if trace.pool is not None and pool is None:
        return "fusion cut"
    if trace.reranked:
        return "rerank window" if key_outside(pool) else "reranking"
    return "fusion cut"


def key_outside(pool_rank: int | None) -> bool:
    return pool_rank is None or pool_rank > RERANK_WINDOW


# ---- HTML ------------------------------------------------------------------------------
def _f(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _histogram(rows: Sequence[tuple[str, int, int]], colour: str = "#4c78a8") -> str:
    """A compact two-column HTML histogram: label | baseline bar | tuned bar."""
    peak = max([1] + [max(a, b) for _, a, b in rows])

    def bar(n: int, c: str) -> str:
        w = round(120 * n / peak)
        return (f'<span style="display:inline-block;height:9px;width:{w}px;background:{c}"></span>'
                f' <span style="font-size:85%">{n}</span>')

    body = "".join(f"<tr><td style='text-align:right;padding:0 6px'>{html.escape(lab)}</td>"
                   f"<td style='padding:0 6px'>{bar(a, '#bbbbbb')}</td><td style='padding:0 6px'>"
                   f"{bar(b, colour)}</td></tr>" for lab, a, b in rows)
    return ("<table style='border-collapse:collapse;font-size:90%;line-height:1.1'><tr><th></th>"
            "<th>baseline</th><th>tuned</th></tr>" + body + "</table>")


def _bin_counts(values: Sequence[float], bins: Sequence[tuple[str, float, float]]) -> list[int]:
    return [sum(lo <= v < hi for v in values) for _, lo, hi in bins]


def pool_text(summary: Mapping[str, Any]) -> str:
    return (f"p5 {_f(summary['p5'])}, median {_f(summary['median'])}, mean {_f(summary['mean'], 1)}, "
            f"min {_f(summary['min'])}, share < {POOL_MIN}: {_pct(summary['share_below'])}")


def pool_html(result: TunerResult) -> str:
    """Pool size after filters per question: summary line and histogram, tuned vs baseline."""
    s, b = result.pool_summary(), result.pool_summary(baseline=True)
    counts = zip(_bin_counts(result.baseline_pool_sizes, _POOL_BINS),
                 _bin_counts(result.pool_sizes, _POOL_BINS), strict=True)
    rows = [(lab, a, c) for (lab, _, _), (a, c) in zip(_POOL_BINS, counts, strict=True)]
    return (f"<div class='ragdiag-pool-summary'><b>Pool after filters</b> ({s['n']} questions): "
            f"<span class='ragdiag-pool-tuned'>{pool_text(s)}</span><br>"
            f"<span style='color:#777'>baseline: {pool_text(b)}</span></div>" + _histogram(rows))


def score_text(summary: Mapping[str, Any]) -> str:
    missing = f", {summary['missing']} without a score" if summary["missing"] else ""
    return (f"median {_f(summary['median'], 2)}, mean {_f(summary['mean'], 2)}, "
            f"share < {SCORE_OK:.1f}: {_pct(summary['share_below'])}{missing}")


def scores_html(result: TunerResult) -> str:
    """Top-1 reranker scores (0-4) per question, tuned vs baseline."""
    s, b = result.score_summary(), result.score_summary(baseline=True)
    tuned = [v for v in result.top1_scores if v is not None]
    base = [v for v in result.baseline_top1_scores if v is not None]
    rows = [(lab, a, c) for (lab, _, _), a, c in zip(
        _SCORE_BINS, _bin_counts(base, _SCORE_BINS), _bin_counts(tuned, _SCORE_BINS), strict=True)]
    return (f"<div><b>Top-1 reranker score</b>: {score_text(s)}<br>"
            f"<span style='color:#777'>baseline: {score_text(b)}</span></div>" + _histogram(rows, "#f58518"))


def metrics_html(result: TunerResult) -> str:
    """nDCG@10, recall@10, recall@50, MRR: baseline, tuned, delta (* = paired t-test p < 0.05)."""
    rows = result.metric_rows()
    if not rows:
        return "<div><b>Goldset metrics</b>: no goldset judgments for these questions</div>"
    body = []
    for r in rows:
        d = r["delta"]
        colour = "#2a7d2a" if d > 1e-9 else "#b22222" if d < -1e-9 else "#555"
        mark = "*" if r["significant"] else ""
        body.append(f"<tr><td>{html.escape(r['metric'])}</td><td>{r['baseline']:.3f}</td>"
                    f"<td>{r['tuned']:.3f}</td><td style='color:{colour}'>{d:+.3f}{mark}</td>"
                    f"<td>{r['wins']}/{r['ties']}/{r['losses']}</td><td>{_f(r['p'], 3)}</td></tr>")
    n = rows[0]["n"]
    return (f"<div class='ragdiag-metrics'><b>Goldset metrics</b> ({n} judged questions; "
            f"* paired t-test p &lt; {ALPHA})<table style='font-size:90%'><tr><th>metric</th>"
            "<th>baseline</th><th>tuned</th><th>Δ</th><th>wins/ties/losses</th><th>p</th></tr>"
            + "".join(body) + "</table></div>")


def drill_html(rows: Sequence[DrillRow], *, baseline_rows: Sequence[DrillRow] = (),
               top: int | None = None) -> str:
    """The drill-down table of one question."""
    if not rows:
        return "<div>no relevant documents judged for this question</div>"
    names = [n for n, _ in rows[0].vector_ranks]
    base = {r.key: r for r in baseline_rows}

    def rank(x: int | None) -> str:
        return "–" if x is None else str(x)

    head = ("<tr><th>document</th><th>grade</th><th>keyword</th>"
            + "".join(f"<th>{html.escape(n.split(':', 1)[-1])}</th>" for n in names)
            + "<th>pool</th><th>in window</th><th>final</th><th>lost at</th>"
            + ("<th>baseline final</th>" if base else "") + "</tr>")
    body = []
    for r in rows:
        window = "–" if r.in_window is None else ("yes" if r.in_window else "no")
        lost = r.lost_at or "✓"
        if r.excluded_by:
            lost += ": " + "; ".join(r.excluded_by)
        b = base.get(r.key)
        body.append(f"<tr><td style='white-space:nowrap'>{html.escape(r.key)}</td><td>{r.grade}</td><td>{rank(r.keyword_rank)}</td>"
                    + "".join(f"<td>{rank(v)}</td>" for _, v in r.vector_ranks)
                    + f"<td>{rank(r.pool_rank)}</td><td>{window}</td><td>{rank(r.final_rank)}</td>"
                    f"<td>{html.escape(lost)}</td>"
                    + (f"<td>{rank(b.final_rank) if b else '–'}</td>" if base else "") + "</tr>")
    note = f"<div style='color:#777;font-size:85%'>lost = not within the first {top} results</div>" \
        if top else ""
    return ("<table class='ragdiag-drill' style='font-size:90%;line-height:1.2'>" + head + "".join(body) + "</table>"
            + note)


# ---- the widget ------------------------------------------------------------------------
def _memory_runner(runner: Any) -> Any:
    """A runner of its own (its own stats and budget count) over the audit runner's trace store:
    what-ifs and the audit share every stored trace. Its traces are written with the store's
    next batch, not after every slider move."""
    from ragdiag.engine.runner import Runner

    return Runner(runner.target, budget=runner.budget, concurrency=runner.concurrency, progress=False,
                  store=runner.store, flush_each_run=False)


class ProfileTuner:
    """An ipywidgets tuner for one profile of the context's policy (see the module docstring).

    `widget` is the container; the controls are attributes (`k_slider`, `recall_slider`,
    `top_slider`, `exhaustive_box`, `filter_mode`, `reranker_box`, `keyword_text`,
    `vector_text`, `semantic_text`, `vq_k_sliders`, `weight_sliders`, `clause_boxes`,
    `save_path`, `save_what`, `save_button`) and the outputs are HTML widgets
    (`status_html`, `metrics_html`, `pool_html`, `scores_html`, `drill_html`).
    `result` is the last `TunerResult`.
    """

    def __init__(self, ctx: Any, profile: str | None = None, *, policy: Policy | None = None,
                 runner: Any = None, save_path: str | Path | None = None) -> None:
        import ipywidgets as W

        self.ctx = ctx
        self.policy: Policy = policy or ctx.policy
        if self.policy is None:
            raise ConfigError("the profile tuner needs a policy: set [inputs] profiles in the audit config")
        # what-ifs run on a runner of their own sharing the audit's trace store; baselines go
        # through the context's runner
        self.runner = runner or _memory_runner(ctx.runner)
        if profile is not None and profile not in self.policy.profiles:
            raise ConfigError(f"policy '{self.policy.name}' has no profile '{profile}'; profiles: "
                              f"{', '.join(self.policy.profiles)}")
        self.tuned: dict[str, Profile] = {}  # tuned profiles by name (kept when switching)
        self.result: TunerResult | None = None
        self.error: str | None = None
        self._baseline_runs: dict[str, Any] = {}
        self._results: dict[Profile, TunerResult] = {}  # revisited settings cost nothing
        self._cases: dict[str, list[Any]] = {}
        self._suspend = False
        self._save_path_given = save_path is not None

        slider = {"continuous_update": False, "style": {"description_width": "150px"},
                  "layout": W.Layout(width="420px")}
        drop = {"style": {"description_width": "150px"}, "layout": W.Layout(width="330px")}
        names = list(self.policy.profiles)
        self.profile_dropdown = W.Dropdown(options=names, value=profile or names[0],
                                           description="profile", **drop)
        self.k_slider = W.IntSlider(min=1, max=K_MAX, value=50, description="k (all vector queries)",
                                    **slider)
        self.k_slider.add_class("ragdiag-k")
        self.recall_slider = W.IntSlider(min=1, max=RECALL_MAX, value=DEFAULT_MAX_TEXT_RECALL_SIZE,
                                         description="max_text_recall_size", **slider)
        self.top_slider = W.IntSlider(min=1, max=TOP_MAX, value=10, description="top", **slider)
        self.exhaustive_box = W.Checkbox(description="exhaustive (all vector queries)", indent=False)
        self.reranker_box = W.Checkbox(description="semantic reranker (query_type semantic)",
                                       indent=False)
        self.filter_mode = W.Dropdown(options=list(VECTOR_FILTER_MODES), description="vector filter mode",
                                      **drop)
        self.keyword_text = W.Dropdown(options=list(KEYWORD_TEXT_MODES), description="keyword text",
                                       **drop)
        self.vector_text = W.Dropdown(options=list(VECTOR_TEXT_MODES), description="vector text (all)",
                                      **drop)
        self.semantic_text = W.Dropdown(options=list(SEMANTIC_TEXT_MODES), description="semantic text",
                                        **drop)
        self.vq_k_sliders: list[Any] = []
        self.weight_sliders: list[Any] = []
        self.clause_boxes: list[Any] = []
        self.vq_box = W.VBox()
        self.clause_box = W.VBox()
        self.reset_button = W.Button(description="Reset", icon="undo", tooltip="every knob back to the baseline")
        self.save_path = W.Text(description="save to", **drop)
        self.save_what = W.ToggleButtons(options=["policy", "profile"], value="policy",
                                         tooltips=["the whole policy with the tuned profile(s)",
                                                   "only [profiles.<name>]"])
        self.save_button = W.Button(description="Save profile", icon="save", button_style="primary")
        self.save_status = W.HTML()
        self.status_html = W.HTML()
        self.metrics_html = W.HTML()
        self.pool_html = W.HTML()
        self.pool_html.add_class("ragdiag-pool")
        self.scores_html = W.HTML()
        self.drill_dropdown = W.Dropdown(description="question", style={"description_width": "70px"},
                                         layout=W.Layout(width="95%"))
        self.drill_html = W.HTML()
        if save_path is not None:
            self.save_path.value = str(save_path)

        def section(title: str) -> Any:
            return W.HTML(f"<b>{html.escape(title)}</b>")

        controls = W.VBox([
            self.profile_dropdown,
            section("Candidates"), self.k_slider, self.vq_box, self.exhaustive_box, self.filter_mode,
            self.recall_slider, self.top_slider, self.reranker_box,
            section("Channel texts"), self.keyword_text, self.vector_text, self.semantic_text,
            section("Filter clauses (uncheck to drop)"), self.clause_box,
            section("Save"), self.save_path, self.save_what,
            W.HBox([self.save_button, self.reset_button]), self.save_status,
        ], layout=W.Layout(width="440px", min_width="440px"))
        outputs = W.VBox([self.status_html, self.metrics_html, self.pool_html, self.scores_html,
                          section("Drill-down"), self.drill_dropdown, self.drill_html],
                         layout=W.Layout(flex="1 1 auto", padding="0 0 0 12px"))
        self.widget = W.HBox([controls, outputs], layout=W.Layout(width="100%"))
        self.widget.add_class("ragdiag-tuner")

        self.profile_dropdown.observe(self._on_profile, names="value")
        self.k_slider.observe(self._on_k, names="value")
        for w in (self.recall_slider, self.top_slider, self.exhaustive_box, self.reranker_box,
                  self.filter_mode, self.keyword_text, self.vector_text, self.semantic_text):
            w.observe(self._on_change, names="value")
        self.drill_dropdown.observe(self._on_drill, names="value")
        self.save_button.on_click(lambda _b: self._save_clicked())
        self.reset_button.on_click(lambda _b: self.reset())
        self._load(self.profile_dropdown.value)

    # ---- display -------------------------------------------------------------------
    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ---- state ----------------------------------------------------------------------
    @property
    def profile_name(self) -> str:
        return str(self.profile_dropdown.value)

    @property
    def baseline(self) -> Profile:
        return self.policy.profiles[self.profile_name]

    def cases(self, name: str | None = None) -> list[Any]:
        name = name or self.profile_name
        if name not in self._cases:
            self._cases[name] = profile_cases(self.ctx, name, policy=self.policy)
        return self._cases[name]

    def state(self) -> TunerState:
        """The knob values as a `TunerState`."""
        b = self.baseline
        n = len(b.vector_queries)
        loaded = self._loaded
        # the "all vector queries" controls keep per-query values until they are changed
        exhaustive = loaded.exhaustive
        if n and bool(self.exhaustive_box.value) != loaded.exhaustive[0]:
            exhaustive = tuple(bool(self.exhaustive_box.value) for _ in range(n))
        texts = loaded.vector_texts
        if n and self.vector_text.value != loaded.vector_texts[0]:
            texts = tuple(self.vector_text.value for _ in range(n))
        return TunerState(
            baseline=b, ks=tuple(s.value for s in self.vq_k_sliders),
            weights=tuple(float(s.value) for s in self.weight_sliders),
            exhaustive=exhaustive, vector_texts=texts,
            vector_filter_mode=self.filter_mode.value,
            max_text_recall_size=self.recall_slider.value,
            top=self.top_slider.value, reranker=bool(self.reranker_box.value),
            keyword_text=self.keyword_text.value, semantic_text=self.semantic_text.value,
            clauses=tuple(bool(c.value) for c in self.clause_boxes))

    def tuned_profile(self) -> Profile:
        return self.state().profile()

    def tuned_policy(self) -> Policy:
        """The policy with every tuned profile swapped in."""
        policy = self.policy
        for p in self.tuned.values():
            policy = policy.with_profile(p)
        return policy

    # ---- loading a profile into the controls ---------------------------------------------
    def _load(self, name: str, current: Profile | None = None) -> None:
        import ipywidgets as W

        baseline = self.policy.profiles[name]
        st = TunerState.from_profile(baseline, current or self.tuned.get(name))
        self._loaded = st
        self._suspend = True
        try:
            for s in self.vq_k_sliders + self.weight_sliders + self.clause_boxes:
                s.unobserve_all()
                s.close()
            slider = {"continuous_update": False, "style": {"description_width": "150px"},
                      "layout": W.Layout(width="420px")}
            self.vq_k_sliders, self.weight_sliders, rows = [], [], []
            for i, vq in enumerate(baseline.vector_queries):
                label = f"{i + 1}: {'+'.join(vq.fields)}"
                ks = W.IntSlider(min=1, max=max(K_MAX, st.ks[i]), value=st.ks[i], description=f"k {label}",
                                 **slider)
                ws = W.FloatSlider(min=min(0.1, st.weights[i]), max=max(5.0, st.weights[i]), step=0.1,
                                   value=st.weights[i],
                                   description=f"weight {i + 1}", readout_format=".1f", **slider)
                ks.observe(self._on_change, names="value")
                ws.observe(self._on_change, names="value")
                self.vq_k_sliders.append(ks)
                self.weight_sliders.append(ws)
                rows += [ks, ws]
            self.vq_box.children = rows
            has_vq = bool(baseline.vector_queries)
            self.k_slider.max = max([K_MAX, *st.ks])
            self.k_slider.disabled = not has_vq
            self.k_slider.value = st.ks[0] if has_vq else 50
            self.exhaustive_box.disabled = not has_vq
            self.exhaustive_box.value = bool(st.exhaustive and st.exhaustive[0])
            self.vector_text.disabled = not has_vq
            if has_vq:
                self.vector_text.value = st.vector_texts[0]
            self.filter_mode.value = st.vector_filter_mode
            # ranges grow to fit a profile's own values, so loading never clamps (= changes) them
            self.recall_slider.max = max(RECALL_MAX, st.max_text_recall_size or 0)
            self.recall_slider.value = st.max_text_recall_size or DEFAULT_MAX_TEXT_RECALL_SIZE
            self.top_slider.max = max(TOP_MAX, st.top)
            self.top_slider.value = max(st.top, 1)
            self.reranker_box.value = st.reranker
            self.keyword_text.value = st.keyword_text
            self.recall_slider.disabled = st.keyword_text == "none"
            self.semantic_text.value = st.semantic_text
            self.clause_boxes = []
            for c, on in zip(filter_clauses(baseline.filter), st.clauses, strict=True):
                box = W.Checkbox(value=on, description=c.text, indent=False,
                                 layout=W.Layout(width="auto"))
                box.observe(self._on_change, names="value")
                self.clause_boxes.append(box)
            self.clause_box.children = self.clause_boxes or [W.HTML("<i>no filter</i>")]
            if not self._save_path_given:
                self.save_path.value = f"{self.policy.name}-{name}-tuned.toml"
            opts = [(f"{c.id}: {c.question[:70]}", c.id) for c in self.cases(name) if c.expect_sources]
            self.drill_dropdown.options = opts
            self.drill_dropdown.value = opts[0][1] if opts else None
        finally:
            self._suspend = False
        self.update()

    # ---- events ------------------------------------------------------------------------
    def _on_profile(self, change: Mapping[str, Any]) -> None:
        self._load(change["new"])

    def _on_k(self, change: Mapping[str, Any]) -> None:
        if self._suspend:
            return
        self._suspend = True
        try:
            for s in self.vq_k_sliders:
                s.value = change["new"]
        finally:
            self._suspend = False
        self.update()

    def _on_change(self, change: Mapping[str, Any]) -> None:
        if self._suspend:
            return
        self.recall_slider.disabled = self.keyword_text.value == "none"
        self.update()

    def _on_drill(self, change: Mapping[str, Any]) -> None:
        if not self._suspend:
            self._render_drill()

    def reset(self) -> None:
        """Every knob back to the baseline profile."""
        self.tuned.pop(self.profile_name, None)
        self._load(self.profile_name, self.baseline)

    # ---- computing -----------------------------------------------------------------------
    def update(self) -> TunerResult | None:
        """Recompute every output from the current knobs (called on every change)."""
        name = self.profile_name
        try:
            tuned = self.tuned_profile()
        except RagdiagError as exc:
            self.error = str(exc)
            self.status_html.value = (f"<div style='color:#b22222'>not applied: {html.escape(str(exc))}"
                                      "</div>")
            return None
        self.error = None
        if tuned == self.baseline:
            self.tuned.pop(name, None)
        else:
            self.tuned[name] = tuned
        result = self._results.get(tuned)
        if result is None:
            t0 = time.perf_counter()
            sent0 = self._sent()
            base_run = self._baseline_runs.get(name)
            if base_run is None:
                base_run = self._baseline_runs[name] = run_profile(
                    self.ctx, self.baseline, self.cases(name), policy=self.policy,
                    label=f"{name} (baseline)")
            result = evaluate_profile(self.ctx, tuned, self.baseline, policy=self.policy,
                                      cases=self.cases(name), runner=self.runner, baseline_run=base_run)
            result.elapsed_ms = (time.perf_counter() - t0) * 1000
            result.sent = self._sent() - sent0
            if len(self._results) > 256:
                self._results.pop(next(iter(self._results)))
            self._results[tuned] = result
        else:
            result = replace(result, elapsed_ms=0.0, sent=0)
        self.result = result
        self._render(result)
        return result

    def _sent(self) -> int:
        runners = {id(r): r for r in (self.runner, self.ctx.runner)}
        return sum(r.stats.sent for r in runners.values())

    def _render(self, r: TunerResult) -> None:
        intents = sorted({c.intent for c in r.cases})
        changes = r.changes
        failures = r.failures
        status = (f"<div class='ragdiag-status'><b>{html.escape(r.profile.name)}</b>: {len(r.cases)} "
                  f"{html.escape(self.ctx.question_source)} questions routed here "
                  f"(intents: {html.escape(', '.join(intents) or 'none')}); "
                  f"{r.sent} new requests, {r.elapsed_ms:.0f} ms"
                  + (f"; <span style='color:#b22222'>{len(failures)} failed: "
                     f"{html.escape(failures[0].reason)}</span>" if failures else "")
                  + "<br><span style='color:#555'>changes: "
                  + (html.escape("; ".join(changes)) if changes else "none (baseline)")
                  + "</span></div>")
        self.status_html.value = status
        self.metrics_html.value = metrics_html(r)
        self.pool_html.value = pool_html(r)
        self.scores_html.value = scores_html(r)
        self._render_drill()

    def drill(self, case_id: str | None = None) -> tuple[list[DrillRow], list[DrillRow]]:
        """Drill-down rows (tuned, baseline) of one question of the current result."""
        r = self.result
        case_id = case_id or self.drill_dropdown.value
        if r is None or case_id is None:
            return [], []
        case = r.case(case_id)
        qrels = dict(case.expect_sources)
        out = []
        for baseline, prof in ((False, r.profile), (True, r.baseline)):
            t = r.trace(case_id, baseline=baseline)
            out.append(drilldown(t, qrels, top=prof.top, target=self.ctx.target) if t is not None else [])
        return out[0], out[1]

    def _render_drill(self) -> None:
        r = self.result
        if r is None or self.drill_dropdown.value is None:
            self.drill_html.value = "<i>no judged questions routed to this profile</i>"
            return
        rows, base = self.drill()
        case = r.case(self.drill_dropdown.value)
        t = r.trace(case.id)
        head = (f"<div><i>{html.escape(case.question)}</i>"
                + (f" — as {html.escape(case.as_user)}" if case.as_user else "")
                + (f"; pool {t.pool_size}, reranked: {'yes' if t.reranked else 'no'}" if t else "")
                + "</div>")
        self.drill_html.value = head + drill_html(rows, baseline_rows=base, top=r.profile.top)

    # ---- saving ----------------------------------------------------------------------------
    def save(self, path: str | Path | None = None, what: str | None = None) -> Path:
        """Write the tuned policy (`what="policy"`) or only the tuned profile as TOML."""
        what = what or self.save_what.value
        path = Path(path or self.save_path.value or f"{self.profile_name}-tuned.toml").expanduser()
        if what == "profile":
            text = dump_profile(self.tuned_profile())
        elif what == "policy":
            text = dump_policy(self.tuned_policy())
        else:
            raise ConfigError(f"save what must be 'policy' or 'profile', got {what!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def _save_clicked(self) -> None:
        try:
            path = self.save()
        except (OSError, RagdiagError) as exc:
            self.save_status.value = f"<span style='color:#b22222'>not saved: {html.escape(str(exc))}</span>"
            return
        self.save_status.value = (f"saved {html.escape(self.save_what.value)} to "
                                  f"<code>{html.escape(str(path.resolve()))}</code>")


__all__ = [
    "METRICS",
    "DrillRow",
    "ProfileTuner",
    "TunerResult",
    "TunerState",
    "drill_html",
    "drilldown",
    "evaluate_profile",
    "filter_clauses",
    "metrics_html",
    "pool_html",
    "pool_summary",
    "profile_cases",
    "profile_changes",
    "run_profile",
    "score_summary",
    "scores_html",
]
