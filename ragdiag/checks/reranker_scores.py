"""Check 1: are the reranker scores of the top hits healthy, and does reranking help?

Per semantic profile and intent: the distribution of the top-1 and top-k
`@search.rerankerScore`, the share of questions whose best hit is below the
"somewhat relevant" band, whether the semantic configuration's fields exist and
are populated, partial responses (semantic asked for, no reranker score), and
with a goldset: the separation of relevant from other hits (ROC AUC), a
suggested minimum-score gate with its precision and recall, and nDCG@10 with
and without reranking (probe `no_rerank`).
"""

from __future__ import annotations

from collections import defaultdict
from itertools import islice
from typing import Any

from ragdiag.checks._common import (
    evidence,
    incomplete,
    needs_policy,
    needs_questions,
    num,
    pct,
    quantile,
    semantic_profiles,
)
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.model.findings import Finding

ID = "reranker_scores"
SAMPLE_DOCS = 500


def semantic_field_health(target: Any, used: set[str | None]) -> list[tuple[str, str, str]]:
    """Rows (config, field, problem) for the used semantic configurations' missing or thin fields."""
    schema = target.schema()
    rows = []
    for cfg in schema.semantic_configurations:
        if cfg.name not in used and not (None in used and cfg.name == schema.default_semantic_configuration):
            continue
        names = ([cfg.title_field] if cfg.title_field else []) + list(cfg.content_fields) + list(cfg.keywords_fields)
        present = [n for n in names if schema.has_field(n)]
        for n in names:
            if n not in present:
                rows.append((cfg.name, n, "field does not exist in the index"))
        if not cfg.content_fields:
            rows.append((cfg.name, "-", "no content fields: the ranker sees titles only"))
        docs = list(islice(target.iter_documents(select=present), SAMPLE_DOCS)) if present else []
        for n in present:
            empty = sum(1 for d in docs if not d.get(n))
            if docs and empty / len(docs) > 0.2:
                rows.append((cfg.name, n, f"empty in {pct(empty / len(docs))} of {len(docs)} sampled documents"))
        # the ranker reads the content fields together: judge their combined length
        content = [n for n in cfg.content_fields if n in present]
        words = [sum(len(str(d.get(n) or "").split()) for n in content) for d in docs]
        if content and words and quantile(words, 0.5) < 15:
            rows.append((cfg.name, "+".join(content),
                         f"median {quantile(words, 0.5):.0f} words of content: too short to judge relevance"))
    return rows


def best_gate(pos: list[float], neg: list[float]) -> tuple[float, float, float] | None:
    """The score threshold with the best F1 over relevant (pos) vs other (neg) hits."""
    if not pos or not neg:
        return None
    best = None
    for t in sorted(set(round(x, 2) for x in pos + neg)):
        tp = sum(p >= t for p in pos)
        fp = sum(n >= t for n in neg)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / len(pos)
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        if best is None or f1 > best[0]:
            best = (f1, t, prec, rec)
    return (best[1], best[2], best[3]) if best else None


@register
class RerankerScores:
    id = ID
    needs = ()
    uses = ("target", "profiles", "questions", "goldset")

    def run(self, ctx: Any, spec: Any) -> Finding:
        skipped = needs_policy(ctx, ID) or needs_questions(ctx, ID)
        if skipped:
            return skipped
        policy = ctx.policy
        sem = {p.name for p in semantic_profiles(policy)}
        if not sem:
            return Finding.skipped(ID, "no profile uses semantic ranking, so there are no reranker scores",
                                   what_to_supply="a profile with query_type = \"semantic\"")
        warn_median = spec.threshold("warn_median_top1")
        warn_share = spec.threshold("warn_share_below")
        share_t = spec.threshold("warn_share_threshold")
        fail_median = spec.threshold("fail_median_top1")
        warn_lower = bool(spec.threshold("warn_if_rerank_lowers_ndcg"))
        band = spec.threshold("somewhat_relevant")

        run = ctx.run_gold(policy, label="baseline")
        inc = incomplete(run)
        top1: dict[str, list[float]] = defaultdict(list)
        topk: dict[str, list[float]] = defaultdict(list)
        by_intent: dict[str, list[float]] = defaultdict(list)
        partial, per_query = [], []
        qrels = ctx.goldset.qrels() if ctx.goldset is not None else {}
        pos, neg = [], []
        for q, t in run.traces():
            if q.profile not in sem:
                continue
            if t.partial_reason or (t.hits and all(h.reranker_score is None for h in t.hits)):
                partial.append((q.case.id, q.profile, t.partial_reason or "no reranker score in the response"))
                continue
            scores = [h.reranker_score for h in t.hits if h.reranker_score is not None]
            if not scores:
                per_query.append((q.case.id, q.intent, q.profile, None))
                continue
            top1[q.profile].append(scores[0])
            topk[q.profile].extend(scores)
            by_intent[q.intent].append(scores[0])
            per_query.append((q.case.id, q.intent, q.profile, scores[0]))
            rel = qrels.get(q.case.id)
            if rel:
                for h in t.hits:
                    if h.reranker_score is None:
                        continue
                    (pos if rel.get(h.key, 0) >= 1 else neg).append(h.reranker_score)
        all_top1 = [s for v in top1.values() for s in v]
        median = quantile(all_top1, 0.5)
        below_band = sum(s < band for s in all_top1) / len(all_top1) if all_top1 else None
        below_t = sum(s < share_t for s in all_top1) / len(all_top1) if all_top1 else None
        metrics: dict[str, Any] = {"queries": len(all_top1), "median_top1": median,
                                   "share_top1_below_somewhat_relevant": below_band,
                                   f"share_top1_below_{share_t}": below_t, "partial_responses": len(partial),
                                   "reranker": getattr(getattr(ctx.target, "reranker", None), "name", None)}
        ev = [evidence("Top-1 and top-k reranker scores per profile",
                       ("profile", "queries", "top-1 p10", "top-1 median", "top-1 p90", "top-k median",
                        f"top-1 < {band}"),
                       [(name, len(v), num(quantile(v, 0.1)), num(quantile(v, 0.5)), num(quantile(v, 0.9)),
                         num(quantile(topk[name], 0.5)), pct(sum(s < band for s in v) / len(v)))
                        for name, v in sorted(top1.items())]),
              evidence("Top-1 reranker score per intent", ("intent", "queries", "median", f"share < {band}"),
                       [(i, len(v), num(quantile(v, 0.5)), pct(sum(s < band for s in v) / len(v)))
                        for i, v in sorted(by_intent.items())]),
              evidence("Top-1 reranker score per question", ("case", "intent", "profile", "top-1 score"),
                       per_query, note="input of the score histogram")]
        recs, warns, fails = [], [], []
        used = {p.semantic_configuration for p in semantic_profiles(policy)}
        health = semantic_field_health(ctx.target, used)
        if health:
            ev.append(evidence("Semantic configuration fields", ("configuration", "field", "problem"), health))
            warns.append("the semantic configuration feeds the ranker " + "; ".join(
                f"{c}.{f}: {p}" for c, f, p in health[:3]))
            recs.append("fix the semantic configuration: its content fields must be the chunk text (e.g. content), "
                        "populated and long enough for the ranker to judge relevance")
        if partial:
            ev.append(evidence("Semantic ranking did not run (partial responses)", ("case", "profile", "reason"),
                               partial))
            warns.append(f"{len(partial)} semantic requests came back without reranker scores")
            recs.append("semantic ranking silently fell back to base results: check semantic capacity "
                        "(semanticMaxWaitInMilliseconds, replicas) and treat missing scores as unknown, not 0")
        if pos and neg:
            from ragdiag.metrics import roc_auc

            auc = roc_auc(pos, neg)
            gate = best_gate(pos, neg)
            metrics["roc_auc_relevant_vs_other"] = auc
            if gate:
                metrics["suggested_min_score"] = gate[0]
                ev.append(evidence("Separation of judged-relevant from other hits",
                                   ("relevant hits", "other hits", "ROC AUC", "suggested gate", "precision", "recall"),
                                   [(len(pos), len(neg), num(auc), num(gate[0]), num(gate[1]), num(gate[2]))],
                                   note="reranker scores drift across model updates: keep a gate coarse"))
        if ctx.goldset is not None:
            plain = ctx.run_gold(policy, probe=probes.no_rerank(), label="no rerank")
            inc = {**inc, **incomplete(plain)}
            semantic_cases = [q.case.id for q, _ in run.traces() if q.profile in sem]
            e_with = run.evaluation(ctx.goldset).subset(semantic_cases)
            e_without = plain.evaluation(ctx.goldset).subset(semantic_cases)
            with_n, without_n = e_with.aggregate.get("ndcg@10"), e_without.aggregate.get("ndcg@10")
            metrics.update({"ndcg@10_reranked": with_n, "ndcg@10_fused_order": without_n})
            ev.append(evidence("Reranker benefit (semantic profiles)", ("order", "nDCG@10", "recall@10", "MRR"),
                               [("fused order (no_rerank)", num(without_n), num(e_without.aggregate.get("recall@10")),
                                 num(e_without.aggregate.get("mrr"))),
                                ("reranked", num(with_n), num(e_with.aggregate.get("recall@10")),
                                 num(e_with.aggregate.get("mrr")))]))
            if warn_lower and with_n is not None and without_n is not None and with_n < without_n:
                warns.append(f"reranking lowers nDCG@10 from {without_n:.3f} to {with_n:.3f}")
                recs.append("the reranker makes ranking worse: check what the semantic configuration feeds it, "
                            "or measure turning it off for the affected routes")
        if median is not None and median < fail_median:
            fails.append(f"median top-1 reranker score {median:.2f} < {fail_median}")
        elif median is not None and median < warn_median:
            warns.append(f"median top-1 reranker score {median:.2f} < {warn_median}")
        if below_t is not None and below_t > warn_share:
            warns.append(f"{pct(below_t)} of questions have a top-1 score below {share_t}")
        if (fails or (median is not None and median < warn_median)) and not health:
            recs.append("constantly low scores point to content or configuration (what the semantic configuration "
                        "feeds the ranker, truncated chunks, the wrong text in semantic_query), not to a ranking bug")
        status = "fail" if fails else "warn" if warns else "pass"
        headline = ("; ".join(fails + warns) if fails or warns else
                    f"median top-1 reranker score {num(median)}, {pct(below_band)} of questions below {band}")
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), incomplete=inc, figures=("reranker_scores",))
