"""Retrieval metrics through ir-measures (pytrec_eval), paired comparisons, ROC AUC.

`evaluate` hands qrels and a run to pytrec_eval (trec_eval's own code) for hit rate,
recall, MRR and nDCG. judged@k, which trec_eval lacks, is counted here (the share of the
top min(k, returned) results that carry a judgment, as ir-measures' `Judged@k` defines
it; a test keeps the two equal): a second pass through ir-measures cost three times
the whole pytrec_eval evaluation, on every what-if. pytrec_eval and scipy are imported
lazily, scipy only by the paired tests (ROC AUC is counted from ranks).
"""

from __future__ import annotations

import html
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragdiag.errors import RagdiagError

Run = Mapping[str, Sequence[str]]
"""case id -> ranked keys, best first."""
Qrels = Mapping[str, Mapping[str, int]]
"""case id -> key -> grade (grade >= 1 is relevant)."""

QUERY_MEMO_SIZE = 20000  # per-query metric values kept for re-evaluations
_QUERY_MEMO: dict[Any, dict[str, float]] = {}

DEFAULT_K = 10
DEFAULT_RECALL_K = 50
TIE_EPS = 1e-9

HIT_RATE = "hit_rate"
RECALL = "recall"
MRR = "mrr"
NDCG = "ndcg"
JUDGED = "judged"
NDCG_CUTOFF = 10
NDCG_10 = "ndcg@10"


def hit_rate_at(k: int) -> str:
    return f"{HIT_RATE}@{k}"


def recall_at(k: int) -> str:
    return f"{RECALL}@{k}"


def judged_at(k: int) -> str:
    return f"{JUDGED}@{k}"


HIT_RATE_10 = hit_rate_at(DEFAULT_K)
RECALL_10 = recall_at(DEFAULT_K)
RECALL_50 = recall_at(DEFAULT_RECALL_K)
JUDGED_10 = judged_at(DEFAULT_K)


def measure_names(k: int = DEFAULT_K, recall_k: int = DEFAULT_RECALL_K) -> tuple[str, ...]:
    """The metric names `evaluate(k=k, recall_k=recall_k)` reports, in column order."""
    names = [hit_rate_at(k), recall_at(k)]
    if recall_k != k:
        names.append(recall_at(recall_k))
    names += [MRR, NDCG_10, judged_at(k)]
    return tuple(names)


def _ir_measures_for(k: int, recall_k: int) -> dict[str, Any]:
    """ragdiag metric name -> ir_measures measure object."""
    from ir_measures import RR, Judged, R, Success, nDCG

    table = {hit_rate_at(k): Success @ k, recall_at(k): R @ k}
    table[recall_at(recall_k)] = R @ recall_k
    table[MRR] = RR
    table[NDCG_10] = nDCG @ NDCG_CUTOFF
    table[judged_at(k)] = Judged @ k
    return {name: table[name] for name in measure_names(k, recall_k)}


def run_to_scores(ranked: Sequence[str]) -> dict[str, float]:
    """Ranked keys -> strictly descending scores (n - rank); repeated keys keep their first rank."""
    scores: dict[str, float] = {}
    n = len(ranked)
    for rank, key in enumerate(ranked):
        key = str(key)
        if key not in scores:
            scores[key] = float(n - rank)
    return scores


@dataclass
class Evaluation:
    """Per-query and aggregate metrics of one run (e.g. one profile) against one goldset.

    `aggregate` is the mean over all queries in `per_query`, which are the
    qrels queries with at least one relevant judgment; `missing` lists those
    the run had no results for (scored zero).
    """

    per_query: dict[str, dict[str, float]]
    aggregate: dict[str, float]
    k: int = DEFAULT_K
    recall_k: int = DEFAULT_RECALL_K
    name: str = ""
    missing: tuple[str, ...] = ()
    measures: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.measures:
            self.measures = measure_names(self.k, self.recall_k)

    def __len__(self) -> int:
        return len(self.per_query)

    def subset(self, query_ids: Iterable[str], name: str | None = None) -> Evaluation:
        """The same evaluation restricted to some queries (e.g. one intent), re-aggregated."""
        wanted = set(query_ids)
        per_query = {q: dict(v) for q, v in self.per_query.items() if q in wanted}
        return Evaluation(per_query=per_query, aggregate=_mean(per_query, self.measures),
                          k=self.k, recall_k=self.recall_k,
                          name=self.name if name is None else name,
                          missing=tuple(q for q in self.missing if q in wanted),
                          measures=self.measures)

    def to_dataframe(self):
        """One row per query (index: query id), one column per metric."""
        import pandas as pd

        df = pd.DataFrame.from_dict(self.per_query, orient="index", columns=list(self.measures))
        df.index.name = "query"
        return df

    def __repr__(self) -> str:
        label = f"{self.name}: " if self.name else ""
        values = ", ".join(f"{m} {self.aggregate.get(m, math.nan):.3f}" for m in self.measures)
        missing = f", {len(self.missing)} without results" if self.missing else ""
        return f"Evaluation({label}{len(self.per_query)} queries{missing}; {values})"

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(m)}</th>" for m in self.measures)
        cells = "".join(f"<td>{self.aggregate.get(m, math.nan):.3f}</td>" for m in self.measures)
        label = html.escape(self.name or "evaluation")
        missing = (f", {len(self.missing)} without results (scored 0)" if self.missing else "")
        return (f"<div><b>{label}</b>: {len(self.per_query)} queries{missing}"
                f"<table><tr>{head}</tr><tr>{cells}</tr></table></div>")


def _mean(per_query: Mapping[str, Mapping[str, float]], measures: Sequence[str]) -> dict[str, float]:
    n = len(per_query)
    return {m: (sum(v[m] for v in per_query.values()) / n if n else math.nan) for m in measures}


def evaluate(run: Run, qrels: Qrels, *, k: int = DEFAULT_K, recall_k: int = DEFAULT_RECALL_K,
             name: str = "") -> Evaluation:
    """Score a run against qrels with ir-measures: hit_rate@k (`Success@k`), recall@k and
    recall@recall_k (`R@k`), mrr (`RR`), ndcg@10 (`nDCG@10`, graded gains) and judged@k
    (`Judged@k`: share of the top min(k, returned) results that carry a judgment).

    The ranked lists become strictly descending scores, so ties cannot reorder them.
    Queries are those of `qrels` with at least one grade >= 1 (the metrics are
    undefined otherwise). A query missing from the run, or with an empty list,
    counts as zero for every metric (listed in `Evaluation.missing`). Run
    entries for queries without qrels are ignored.
    """
    if k < 1 or recall_k < 1:
        raise RagdiagError(f"cutoffs must be >= 1, got k={k}, recall_k={recall_k}")
    names = measure_names(k, recall_k)
    qrels_clean: dict[str, dict[str, int]] = {}
    for qid, judgments in qrels.items():
        judged = {str(doc): int(g) for doc, g in judgments.items()}
        if any(g >= 1 for g in judged.values()):
            qrels_clean[str(qid)] = judged
    ranked_of: dict[str, Sequence[str]] = {}
    for qid, ranked in run.items():
        qid = str(qid)
        if qid in qrels_clean and ranked:
            if isinstance(ranked, str):
                raise RagdiagError(f"run for {qid!r} must be a list of keys, got a string")
            ranked_of[qid] = ranked
    per_query: dict[str, dict[str, float]] = {qid: dict.fromkeys(names, 0.0) for qid in qrels_clean}
    # per-query results are memoised by (ranking, judgments, cutoffs): a what-if changes a few
    # dozen of the goldset's rankings, and only those reach pytrec_eval again
    todo: dict[str, dict[str, float]] = {}
    keys: dict[str, Any] = {}
    for qid, ranked in ranked_of.items():
        key = (k, recall_k, tuple(ranked), tuple(sorted(qrels_clean[qid].items())))
        hit = _QUERY_MEMO.get(key)
        if hit is not None:
            per_query[qid].update(hit)
        else:
            todo[qid] = run_to_scores(ranked)
            keys[qid] = key
    if todo:
        import pytrec_eval

        # trec_eval's own measures straight from pytrec_eval (the engine ir-measures uses for
        # them, without its per-value Python overhead: what-ifs re-evaluate constantly)
        native = {hit_rate_at(k): f"success_{k}", recall_at(k): f"recall_{k}",
                  recall_at(recall_k): f"recall_{recall_k}", MRR: "recip_rank",
                  NDCG_10: f"ndcg_cut_{NDCG_CUTOFF}"}
        spec = {f"success.{k}", f"recall.{k},{recall_k}", "recip_rank", f"ndcg_cut.{NDCG_CUTOFF}"}
        scored = pytrec_eval.RelevanceEvaluator({q: qrels_clean[q] for q in todo}, spec).evaluate(todo)
        for qid, values in scored.items():
            if qid in per_query:
                for metric_name, key in native.items():
                    if metric_name in per_query[qid]:
                        per_query[qid][metric_name] = float(values[key])
        jk = judged_at(k)
        for qid, scores in todo.items():
            if jk in names:
                judged = qrels_clean[qid]
                top = list(scores)[:k]  # run_to_scores keeps rank order
                per_query[qid][jk] = sum(doc in judged for doc in top) / len(top)
            if len(_QUERY_MEMO) >= QUERY_MEMO_SIZE:
                _QUERY_MEMO.clear()
            _QUERY_MEMO[keys[qid]] = dict(per_query[qid])
    missing = tuple(q for q in qrels_clean if q not in ranked_of)
    return Evaluation(per_query=per_query, aggregate=_mean(per_query, names), k=k,
                      recall_k=recall_k, name=name, missing=missing, measures=names)


# --------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of one metric between evaluations `a` and `b` (delta = b - a)."""

    metric: str
    deltas: dict[str, float]
    a_mean: float
    b_mean: float
    mean_delta: float
    wins: int
    ties: int
    losses: int
    p_ttest: float
    p_wilcoxon: float
    a_name: str = ""
    b_name: str = ""
    only_in_a: tuple[str, ...] = ()
    only_in_b: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.deltas)

    def significant(self, alpha: float = 0.05) -> bool:
        """True when the paired t-test p-value is below `alpha` (False when undefined)."""
        return not math.isnan(self.p_ttest) and self.p_ttest < alpha

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "a": self.a_name, "b": self.b_name, "n": self.n,
                "a_mean": self.a_mean, "b_mean": self.b_mean, "mean_delta": self.mean_delta,
                "wins": self.wins, "ties": self.ties, "losses": self.losses,
                "p_ttest": self.p_ttest, "p_wilcoxon": self.p_wilcoxon,
                "significant": self.significant(), "deltas": dict(self.deltas),
                "only_in_a": list(self.only_in_a), "only_in_b": list(self.only_in_b)}

    def __repr__(self) -> str:
        names = f"{self.b_name or 'b'} vs {self.a_name or 'a'}"
        return (f"Comparison({self.metric}, {names}: n={self.n}, mean delta {self.mean_delta:+.4f}, "
                f"{self.wins} wins / {self.ties} ties / {self.losses} losses, "
                f"p(t)={self.p_ttest:.4g}, p(wilcoxon)={self.p_wilcoxon:.4g})")


def compare(a: Evaluation, b: Evaluation, metric: str = NDCG_10) -> Comparison:
    """Per-query deltas (b - a) of `metric` over the queries both evaluated.

    A win is delta > 1e-9, a loss delta < -1e-9, the rest ties. p-values: paired
    t-test (`scipy.stats.ttest_rel`) and Wilcoxon signed-rank (`scipy.stats.wilcoxon`,
    zero differences dropped). When every delta is zero both p-values are 1.0;
    with fewer than two shared queries, or non-zero deltas that are all equal
    (zero variance, within 1e-9), the t-test p-value is NaN and nothing is significant.
    """
    for ev, label in ((a, "a"), (b, "b")):
        if metric not in ev.measures:
            raise RagdiagError(f"evaluation {ev.name or label!r} has no metric {metric!r}; "
                               f"it has {', '.join(ev.measures)}")
    shared = [q for q in a.per_query if q in b.per_query]
    deltas = {q: b.per_query[q][metric] - a.per_query[q][metric] for q in shared}
    values = list(deltas.values())
    wins = sum(d > TIE_EPS for d in values)
    losses = sum(d < -TIE_EPS for d in values)
    n = len(values)
    p_t, p_w = _paired_pvalues([a.per_query[q][metric] for q in shared],
                               [b.per_query[q][metric] for q in shared])
    return Comparison(
        metric=metric, deltas=deltas,
        a_mean=sum(a.per_query[q][metric] for q in shared) / n if n else math.nan,
        b_mean=sum(b.per_query[q][metric] for q in shared) / n if n else math.nan,
        mean_delta=sum(values) / n if n else math.nan,
        wins=wins, ties=n - wins - losses, losses=losses, p_ttest=p_t, p_wilcoxon=p_w,
        a_name=a.name, b_name=b.name,
        only_in_a=tuple(q for q in a.per_query if q not in b.per_query),
        only_in_b=tuple(q for q in b.per_query if q not in a.per_query))


def _paired_pvalues(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    from scipy.stats import ttest_rel, wilcoxon

    diffs = [y - x for x, y in zip(xs, ys, strict=True)]
    if diffs and all(abs(d) < TIE_EPS for d in diffs):
        return 1.0, 1.0
    if len(diffs) < 2:
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if max(diffs) - min(diffs) < TIE_EPS:
            # zero variance (up to float noise): the t statistic is undefined
            p_t = math.nan
        else:
            p_t = float(ttest_rel(ys, xs).pvalue)
        try:
            # float noise below the tie threshold is a tie (a zero difference), as in the counts
            p_w = float(wilcoxon([0.0 if abs(d) < TIE_EPS else d for d in diffs]).pvalue)
        except ValueError:
            p_w = math.nan
    return p_t, p_w


def roc_auc(scores_pos: Sequence[float], scores_neg: Sequence[float]) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties count half.

    The Mann-Whitney U statistic of the positives over (n_pos * n_neg), from average ranks
    (numpy; what `scipy.stats.mannwhitneyu` computes, without importing scipy for it).
    NaN when a side is empty.
    """
    if len(scores_pos) == 0 or len(scores_neg) == 0:
        return math.nan
    import numpy as np

    x = np.concatenate([np.asarray(scores_pos, dtype=np.float64), np.asarray(scores_neg, dtype=np.float64)])
    order = np.argsort(x, kind="mergesort")
    _uniq, inverse, counts = np.unique(x[order], return_inverse=True, return_counts=True)
    average = np.cumsum(counts) - (counts - 1) / 2.0  # 1-based average rank of each distinct value
    ranks = np.empty(x.shape[0])
    ranks[order] = average[inverse]
    n_pos, n_neg = len(scores_pos), len(scores_neg)
    u = float(ranks[:n_pos].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def holm(pvalues: Mapping[Any, float | None]) -> dict[Any, float | None]:
    """Holm-Bonferroni adjusted p-values of a family of tests (None / NaN stay None).

    Sorted ascending, the i-th of m p-values (0-based) becomes ``min(1, (m - i) * p)``, kept
    monotone; "adjusted p < alpha" then controls the family-wise error rate at alpha.
    """
    valid = sorted(((float(p), i, k) for i, (k, p) in enumerate(pvalues.items())
                    if p is not None and not math.isnan(float(p))), key=lambda t: (t[0], t[1]))
    out: dict[Any, float | None] = dict.fromkeys(pvalues)
    running, m = 0.0, len(valid)
    for i, (p, _order, k) in enumerate(valid):
        running = max(running, min(1.0, (m - i) * p))
        out[k] = running
    return out
