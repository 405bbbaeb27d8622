"""Is a drafted goldset like the questions the system really gets? Validity without judgements.

Two drafts that agree with each other (`drafting.agreement`) show the draft is consistent, not
that it ranks profiles as real judgements would: on a library-science collection two seeds
agreed at tau 0.93 while the drafts ranked six profiles against the real judgements (tau
-0.57, benchmarks/draft.md). The drafts there were known-item lookups (one abstract per
question, found by its rarest words) and the real questions long topical requests with dozens
of relevant abstracts. Known-item questions rank profiles by how well they find one record;
that says nothing about a workload of topical questions.

What can be measured without judgements is whether the real questions (a query log, or the
questions of the user's own question list) behave like the drafted ones on the profiles
being compared. `compare_workloads` runs every profile on both question sets and measures,
per set:

- `words`: the median number of content words (a request of 40 words is not a lookup of 9);
- `first_hit`: the share of questions on which more than half of the profiles return the same
  record first: the signature of a known-item question, whose one answer every way of searching
  finds; on topical questions with many relevant records the profiles' first hits differ;
- `overlap@10`: the mean Jaccard overlap of two profiles' top 10, over every pair;
- `pooled`: each profile's nDCG@10 against pooled pseudo-judgements (the records in the top 10
  of more than half of the profiles), and `pooled_tau`, Kendall's tau between the profile
  orders this gives on the drafted and on the real questions: whether the profiles relate to
  each other on the real questions as they do on the drafted ones.

The real questions resemble the drafted ones when their lengths differ by at most
`LENGTH_RATIO`, their first-hit agreement is at most `FIRST_HIT_GAP` below the draft's, and the
pooled orders agree (`pooled_tau` >= `POOLED_TAU`). Only then may the draft be trusted to rank
policies; when they do not, the draft's ranking is for a workload the system does not get and
the verdict is "cannot say". Without real questions nothing about validity is measured.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["FIRST_HIT_GAP", "LENGTH_RATIO", "MIN_REAL_QUESTIONS", "POOLED_TAU", "compare_workloads",
           "real_questions_of", "shape_of"]

LENGTH_RATIO = 1.5  # real vs drafted median content words, either way
FIRST_HIT_GAP = 0.2  # how far below the draft's first-hit agreement the real questions may be
POOLED_TAU = 0.8
MIN_REAL_QUESTIONS = 10  # fewer real questions measure nothing
MAX_QUESTIONS = 200  # per set: enough for shares to +-0.07, bounded in requests
DEPTH = 10


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Kendall's tau-b of two score lists (scipy); None when it is undefined (constant lists)."""
    from scipy.stats import kendalltau

    if len(a) < 2:
        return None
    res = kendalltau(list(a), list(b))
    v = float(res.statistic)
    return None if math.isnan(v) else round(v, 3)

def _rankings(target: Any, profiles: Mapping[str, Any], questions: Sequence[str], security_field: str,
              who: Any = None) -> dict[str, list[list[str]]]:
    return {n: [list(target.search(p.build(q, who, security_field=security_field)).keys)[:DEPTH]
                for q in questions] for n, p in profiles.items()}


def _pooled(runs: Mapping[str, list[list[str]]]) -> dict[str, float]:
    """nDCG@10 of each profile against the records more than half of the profiles rank in their top 10."""
    from ragdiag.metrics import NDCG_10, evaluate

    names = list(runs)
    n_q = len(runs[names[0]]) if names else 0
    qrels: dict[str, dict[str, int]] = {}
    for i in range(n_q):
        count: dict[str, int] = {}
        for n in names:
            for k in runs[n][i]:
                count[k] = count.get(k, 0) + 1
        pool = {k: 1 for k, v in count.items() if v * 2 > len(names)}
        if pool:
            qrels[str(i)] = pool
    if not qrels:
        return {n: 0.0 for n in names}
    return {n: float(evaluate({q: runs[n][int(q)] for q in qrels}, qrels).aggregate[NDCG_10]) for n in names}


def shape_of(runs: Mapping[str, list[list[str]]], questions: Sequence[str]) -> dict[str, Any]:
    """The measures of one question set (see the module docstring) from each profile's top 10."""
    from ragdiag.drafting.text import content_words

    names = list(runs)
    first, jaccard = [], []
    for i in range(len(questions)):
        firsts = [runs[n][i][0] for n in names if runs[n][i]]
        first.append(bool(firsts) and max(firsts.count(f) for f in set(firsts)) * 2 > len(names))
        pairs = [(set(runs[a][i]), set(runs[b][i])) for a, b in itertools.combinations(names, 2)]
        jaccard.extend(len(x & y) / len(x | y) for x, y in pairs if x | y)
    return {"questions": len(questions),
            "words": float(statistics.median(len(content_words(q)) for q in questions)) if questions else 0.0,
            "first_hit": round(sum(first) / len(first), 3) if first else 0.0,
            "overlap@10": round(statistics.fmean(jaccard), 3) if jaccard else 0.0,
            "pooled": {n: round(v, 4) for n, v in _pooled(runs).items()}}


def _spread(questions: Sequence[str], limit: int) -> list[str]:
    """At most `limit` distinct questions, spread evenly over the list (deterministic)."""
    uniq = list(dict.fromkeys(q for q in questions if q and q.strip()))
    if len(uniq) <= limit:
        return uniq
    step = len(uniq) / limit
    return [uniq[int(i * step)] for i in range(limit)]


def compare_workloads(target: Any, profiles: Mapping[str, Any], drafted: Sequence[str], real: Sequence[str],
                      *, security_field: str, source: str = "real questions") -> dict[str, Any]:
    """Do the `real` questions behave like the `drafted` ones on `profiles` (name -> Profile)?

    Returns both shapes, `pooled_tau`, `resembles` (True / False; None when too few real
    questions to say) and `reasons` (why not, one sentence each)."""

    drafted_q, real_q = _spread(drafted, MAX_QUESTIONS), _spread(real, MAX_QUESTIONS)
    out: dict[str, Any] = {"source": source, "thresholds": {"length_ratio": LENGTH_RATIO,
                                                             "first_hit_gap": FIRST_HIT_GAP,
                                                             "pooled_tau": POOLED_TAU}}
    if len(real_q) < MIN_REAL_QUESTIONS or len(profiles) < 3:
        out.update(resembles=None, reasons=[f"{len(real_q)} {source} (at least {MIN_REAL_QUESTIONS} needed) "
                                            f"and {len(profiles)} profiles (at least 3)"])
        return out
    d = shape_of(_rankings(target, profiles, drafted_q, security_field), drafted_q)
    r = shape_of(_rankings(target, profiles, real_q, security_field), real_q)
    names = sorted(profiles)
    tau = kendall_tau([d["pooled"][n] for n in names], [r["pooled"][n] for n in names])
    reasons = []
    lo, hi = sorted((max(d["words"], 1.0), max(r["words"], 1.0)))
    if hi / lo > LENGTH_RATIO:
        reasons.append(f"the {source} have {r['words']:g} content words (median), the drafted questions "
                       f"{d['words']:g}: more than {LENGTH_RATIO}x apart")
    if r["first_hit"] < d["first_hit"] - FIRST_HIT_GAP:
        reasons.append(f"the profiles agree on the first hit for {r['first_hit']:.0%} of the {source} but "
                       f"{d['first_hit']:.0%} of the drafted questions: the drafted questions are lookups of one "
                       "record, the real ones are not")
    if tau is None or tau < POOLED_TAU:
        reasons.append(f"the profiles relate to each other differently on the {source} than on the drafted "
                       f"ones (pooled agreement order, tau {'undefined' if tau is None else format(tau, '.2f')} "
                       f"< {POOLED_TAU})")
    out.update(drafted=d, real=r, pooled_tau=tau, resembles=not reasons, reasons=reasons)
    return out


def real_questions_of(config: Any) -> tuple[list[str], str]:
    """The questions the system really gets, as the config names them: the query log's, else the
    goldset's (its questions only, never its judgements); ([], reason) when there are none."""
    if getattr(config, "query_log", None):
        from ragdiag.inputs.querylog import load_query_log

        return [e.question for e in load_query_log(config.query_log)], "questions of the query log"
    if getattr(config, "goldset", None):
        from ragdiag.inputs.goldset import is_trec_qrels, load_goldset, load_trec_qrels

        if is_trec_qrels(config.goldset):
            if config.goldset_topics is None:
                return [], "no query log, and the goldset is TREC qrels without topics"
            gs = load_trec_qrels(config.goldset, config.goldset_topics)
        else:
            gs = load_goldset(config.goldset)
        return [c.question for c in gs], "questions of the goldset"
    return [], "no [inputs] query_log or goldset names the questions the system gets"
