"""Check 1: are the reranker scores of the top hits healthy, and does reranking help?

Per semantic profile (each judged on its own median, never one pooled across profiles)
and per intent: the distribution of the top-1 and top-k `@search.rerankerScore`, the
share of questions whose best hit is below the "somewhat relevant" band, whether the
semantic configuration's fields exist and are populated, partial responses (semantic
asked for, no reranker score), and with a goldset: the separation of relevant from
other hits (ROC AUC), a suggested minimum-score gate with its precision and recall, and
nDCG@10 with and without reranking (probe `no_rerank`).

Client code (code-only audits too): every score or distance cut the app applies to the hits
(`ClientThreshold`), with its measure and direction. A request-path cut that keeps the worse
side (a distance kept above a bound, a relevance score kept below one, a distance passed as
LangChain's `score_threshold`) fails; a cut applied after `top`/`k` capped the search warns
(the pool shrinks silently: fewer than `top` hits reach the model); a reranker-score cut
outside the 0-4 scale warns. Cuts in tests, scripts or notebooks are listed, not judged.

Evidence a pass needs: at least one semantic profile whose reranker scores were measured
on questions, or a request-path client-side threshold judged sound. Without either:
skipped. Semantic asked for but no score came back: the partial responses warn (or the
failed requests make it an error), never a pass.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import islice
from typing import Any

from ragdiag.checks import _observed
from ragdiag.checks._ablation import judge_owned
from ragdiag.checks._code_evidence import (
    at,
    locate,
    request_only,
    short,
    site_class,
)
from ragdiag.checks._common import quantile, semantic_profiles, share
from ragdiag.checks._reranker_bands import Bands, judge
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.model.messages import Message

ID = "reranker_scores"
SAMPLE_DOCS = 500
MIN_CONTENT_WORDS = 15
MAX_EMPTY_SHARE = 0.2


def semantic_field_health(v: Verdict, target: Any, used: set[str | None], sample: bool
                          ) -> list[tuple[str, str, Message]]:
    """(config, field, problem) for the used semantic configurations' missing or thin fields.

    Missing fields come from the schema; empty and short fields from up to SAMPLE_DOCS
    documents, read only when the target can list documents (`sample`)."""
    schema = target.schema()
    rows: list[tuple[str, str, Message]] = []
    for cfg in schema.semantic_configurations:
        if cfg.name not in used and not (None in used and cfg.name == schema.default_semantic_configuration):
            continue
        names = ([cfg.title_field] if cfg.title_field else []) + list(cfg.content_fields) + list(cfg.keywords_fields)
        present = [n for n in names if schema.has_field(n)]
        rows += [(cfg.name, n, v.msg("problem_missing")) for n in names if n not in present]
        if not cfg.content_fields:
            rows.append((cfg.name, "-", v.msg("problem_no_content")))
        docs = list(islice(target.iter_documents(select=present), SAMPLE_DOCS)) if present and sample else []
        for n in present:
            empty = sum(1 for d in docs if not d.get(n))
            if docs and empty / len(docs) > MAX_EMPTY_SHARE:
                rows.append((cfg.name, n, v.msg("problem_empty", share=empty / len(docs), documents=len(docs))))
        # the ranker reads the content fields together: judge their combined length
        content = [n for n in cfg.content_fields if n in present]
        words = [sum(len(str(d.get(n) or "").split()) for n in content) for d in docs]
        if content and words and quantile(words, 0.5) < MIN_CONTENT_WORDS:
            rows.append((cfg.name, "+".join(content), v.msg("problem_short", words=quantile(words, 0.5))))
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
class RerankerScores(Check):
    id = ID
    needs = ("target|client_code|traffic", "profiles|client_code|traffic", "questions|client_code|traffic")
    uses = ("goldset",)
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        scan = ctx.code_scan() if ctx.has("client_code") else None
        sound = self._code(v, scan) if scan is not None else []
        missing = [n for n in ("target", "profiles", "questions") if not ctx.has(n)]
        if missing:
            v.note("runtime_not_run", why=v.msg(f"why_no_{missing[0]}"))
            if sound:
                v.passed("pass_code", n=len(sound), where=short(v, sound))
            else:
                v.nothing_observed("no_threshold", files=scan.files_scanned if scan is not None else 0)
            return
        policy = ctx.policy
        semantic = semantic_profiles(policy)
        if not semantic:
            if sound:
                v.note("no_semantic_profile_note", profiles=len(policy.profiles))
                v.passed("pass_code", n=len(sound), where=short(v, sound))
                return
            v.skip("no_semantic_profile", profiles=len(policy.profiles))
        bands = Bands.from_spec(spec)
        warn_median, warn_share, share_t = bands.warn_median, bands.warn_share, bands.share_threshold
        warn_lower = bool(spec.threshold("warn_if_rerank_lowers_ndcg"))
        band = bands.band
        sem = {p.name for p in semantic}
        v.nothing_observed("no_semantic_question", profiles=len(sem), source=ctx.question_source)

        run = ctx.run_gold(policy, label="baseline")
        v.requests(run)
        top1: dict[str, list[float]] = defaultdict(list)
        topk: dict[str, list[float]] = defaultdict(list)
        by_intent: dict[str, list[float]] = defaultdict(list)
        partial, per_query = [], []
        qrels = ctx.goldset.qrels() if ctx.has("goldset") else {}
        pos, neg = [], []
        for q, t in run.traces():
            if q.profile not in sem:
                continue
            if t.partial_reason or (t.hits and all(h.reranker_score is None for h in t.hits)):
                partial.append((q.case.id, q.profile, t.partial_reason or v.msg("no_score_in_response")))
                continue
            scores = [h.reranker_score for h in t.hits if h.reranker_score is not None]
            per_query.append((q.case.id, q.intent, q.profile, scores[0] if scores else None))
            if not scores:
                continue
            top1[q.profile].append(scores[0])
            topk[q.profile].extend(scores)
            by_intent[q.intent].append(scores[0])
            rel = qrels.get(q.case.id)
            if rel:
                for h in t.hits:
                    if h.reranker_score is not None:
                        (pos if rel.get(h.key, 0) >= 1 else neg).append(h.reranker_score)

        all_top1 = [s for vals in top1.values() for s in vals]
        v.observed("semantic_profiles_scored", len(top1))
        v.observed("top1_scores", len(all_top1))
        v.metric("queries", len(all_top1))
        v.metric("semantic_profiles_scored", len(top1))
        v.metric("median_top1", quantile(all_top1, 0.5))
        v.metric("share_top1_below_somewhat_relevant", share(s < band for s in all_top1))
        v.metric(f"share_top1_below_{share_t}", share(s < share_t for s in all_top1))
        v.metric("somewhat_relevant", band)
        v.metric("partial_responses", len(partial))
        v.metric("reranker", getattr(ctx.target.reranker, "name", None) if ctx.supports("reranker") else None)

        # each profile is judged on its own scores: a healthy profile must not hide a starved one
        rows, low = [], []
        for name, vals in sorted(top1.items()):
            j = judge(vals, bands)
            v.metric(f"median_top1[{name}]", j.median)
            if j.median_level is not None:
                getattr(v, j.median_level)("median_below", profile=name, median=j.median, min=j.median_min,
                                           questions=len(vals))
            if j.share_warns:
                v.warn("share_below", profile=name, share=j.share_below_threshold, threshold=share_t,
                       max=warn_share, questions=len(vals))
            if j.median < warn_median:
                low.append(name)
            rows.append((name, len(vals), quantile(vals, 0.1), j.median, quantile(vals, 0.9),
                         quantile(topk[name], 0.5), j.share_below_band, j.share_below_threshold,
                         v.msg(f"verdict_{j.verdict}")))
        v.table("scores_per_profile", "t_per_profile",
                ("profile", "queries", "top1_p10", "top1_median", "top1_p90", "topk_median", "share_below_band",
                 "share_below_threshold", "verdict"), rows, band=band, threshold=share_t)
        v.table("scores_per_intent", "t_per_intent", ("intent", "queries", "median", "share_below_band"),
                [(i, len(vals), quantile(vals, 0.5), share(s < band for s in vals))
                 for i, vals in sorted(by_intent.items())], band=band)
        v.table("top1_per_question", "t_per_question", ("case", "intent", "profile", "top1_score"), per_query,
                note="n_per_question")

        used = {p.semantic_configuration for p in semantic}
        health = semantic_field_health(v, ctx.target, used, ctx.supports("documents"))
        if not ctx.supports("documents"):
            v.note("fields_not_sampled")
        if health:
            v.table("semantic_fields", "t_semantic_fields", ("configuration", "field", "problem"),
                    [(c, f, p) for c, f, p in health])
            v.warn("semantic_fields", problems=tuple(v.msg("field_problem", config=c, field=f, problem=p)
                                                     for c, f, p in health[:3]))
            v.recommend("rec_fix_semantic_config")
        elif low:
            v.recommend("rec_low_scores", profiles=tuple(low))
        if partial:
            v.table("partial_responses", "t_partial", ("case", "profile", "reason"), partial)
            v.warn("partial", n=len(partial), requests=len(partial) + len(per_query))
            v.recommend("rec_partial")

        if pos and neg:
            from ragdiag.metrics import roc_auc

            auc = roc_auc(pos, neg)
            gate = best_gate(pos, neg)
            v.metric("roc_auc_relevant_vs_other", auc)
            if gate:
                v.metric("suggested_min_score", gate[0])
                v.table("separation", "t_separation", ("relevant_hits", "other_hits", "roc_auc", "suggested_gate",
                                                       "precision", "recall"),
                        [(len(pos), len(neg), auc, gate[0], gate[1], gate[2])], note="n_separation")
        if ctx.has("goldset"):  # also without scores: the plan counts these requests up front
            self._benefit(ctx, policy, run, sem, warn_lower, v)
        # scoring profiles, their parameters, semantic configurations and the ranker itself, per
        # profile: each neutralised on the goldset (a pooled benefit can hide a profile it harms)
        judge_owned(ctx, spec, v, ID)
        self._boost_losses(ctx, spec, v)
        if all_top1:
            worst = min(top1, key=lambda n: (quantile(top1[n], 0.5), n))
            v.passed("pass_scored", profiles=len(top1), questions=len(all_top1), profile=worst,
                     median=quantile(top1[worst], 0.5), share=share(s < band for s in all_top1), band=band)

    @staticmethod
    def _boost_losses(ctx: Any, spec: Any, v: Verdict) -> None:
        """What each scoring profile does to the top, counted by the loss funnel against the same
        requests without it: the expected sources it pushes out (the ``boost`` stage) and those it
        pulls in. Evidence and a note; the verdict on a scoring profile is its ablation's."""
        from ragdiag.checks._funnel import boost_balance

        rows = [(p, ctx.policy.profiles[p].scoring_profile if p in ctx.policy.profiles else None, out, into, reach)
                for p, out, into, reach in boost_balance(ctx)]
        if not rows:
            return
        v.table("boost_losses", "t_boost_losses", ("profile", "scoring_profile", "sources_pushed_out",
                                                    "sources_pulled_in", "sources_reachable"), rows,
                note="n_boost_losses")
        worse = [(p, sp, out, into) for p, sp, out, into, _r in rows if out > into]
        if worse:
            p, sp, out, into = max(worse, key=lambda r: r[2] - r[3])
            v.note("boost_pushes_out", profile=p, scoring_profile=sp or "-", out=out, into=into, n=len(worse))

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.reranker_scores(ctx, spec, v)

    # ---- client code: score cuts the app applies to the hits --------------------------------------------
    @staticmethod
    def _code(v: Verdict, scan: Any) -> list[str]:
        """List every client-side threshold; judge the request path's. Returns the sound ones' places."""
        if not scan.thresholds:
            return []
        v.table("code_thresholds", "t_code_thresholds",
                ("site", "site_class", "function", "field", "op", "value", "measure", "keeps", "reversed",
                 "after_top", "evidence"),
                [(at(t), site_class(v, t), t.function, t.field, t.op, t.value.value, v.msg(f"measure_{t.measure}"),
                  v.msg(f"keeps_{t.keeps}") if t.keeps in ("above", "below") else t.keeps, t.reversed, t.after_top,
                  t.evidence) for t in scan.thresholds], note="n_code_thresholds")
        sound = []
        for t in request_only(scan.thresholds):
            v.observed("client_thresholds")
            cut = v.msg("cut", field=t.field, op=t.op, value=t.value.value)
            if t.reversed:
                v.fail("threshold_reversed", where=at(t), cut=cut, measure=v.msg(f"measure_{t.measure}"))
                locate(v, t, "loc_threshold_reversed", level="error", cut=cut)
                v.recommend("rec_threshold_direction", where=at(t), cut=cut, measure=v.msg(f"measure_{t.measure}"))
            if t.after_top:
                v.warn("threshold_after_top", where=at(t), cut=cut)
                locate(v, t, "loc_threshold_after_top", cut=cut)
                v.recommend("rec_threshold_before_top", where=at(t), cut=cut)
            value = t.value.value if t.value.resolved else None
            if t.measure == "reranker_score" and isinstance(value, int | float) and not 0 <= value <= 4:
                v.warn("threshold_scale", where=at(t), cut=cut)
            if not t.reversed and not t.after_top:
                sound.append(at(t))
        v.metric("client_thresholds", len(request_only(scan.thresholds)))
        v.metric("client_thresholds_reversed", sum(t.reversed for t in request_only(scan.thresholds)))
        v.metric("client_thresholds_after_top", sum(t.after_top for t in request_only(scan.thresholds)))
        return sound

    def _benefit(self, ctx: Any, policy: Any, run: Any, sem: set[str], warn_lower: bool, v: Verdict) -> None:
        """nDCG@10 of the semantic profiles' questions with and without reranking."""
        plain = ctx.run_gold(policy, probe=probes.no_rerank(), label="no rerank")
        v.requests(plain)
        cases = [q.case.id for q, _ in run.traces() if q.profile in sem]
        e_with = run.evaluation(ctx.goldset).subset(cases).aggregate
        e_without = plain.evaluation(ctx.goldset).subset(cases).aggregate
        with_n, without_n = e_with.get("ndcg@10"), e_without.get("ndcg@10")
        v.metric("ndcg@10_reranked", with_n)
        v.metric("ndcg@10_fused_order", without_n)
        v.table("rerank_benefit", "t_benefit", ("order", "ndcg10", "recall10", "mrr"),
                [(v.msg("order_fused"), without_n, e_without.get("recall@10"), e_without.get("mrr")),
                 (v.msg("order_reranked"), with_n, e_with.get("recall@10"), e_with.get("mrr"))])
        from ragdiag.metrics import compare

        ev_with = run.evaluation(ctx.goldset).subset(cases)
        ev_without = plain.evaluation(ctx.goldset).subset(cases)
        significant = False
        if with_n is not None and without_n is not None and len(ev_with) and "ndcg@10" in ev_with.measures:
            lowers = with_n < without_n
            c = compare(ev_with, ev_without, "ndcg@10") if lowers else compare(ev_without, ev_with, "ndcg@10")
            if c.n:
                v.effect("ndcg@10", c.a_mean, c.b_mean, p=c.p_ttest, n=c.n,
                         action="eff_rerank_off" if lowers else "eff_rerank_on", scope="eff_scope_semantic")
                significant = c.significant(float(v.spec.threshold("ablation_alpha")) if v.spec is not None
                                            else 0.05)
        # "the reranker makes ranking worse" only on a significant difference: a smaller one is in
        # the effects table with its p, never a claim the same page's numbers contradict
        if warn_lower and significant and with_n is not None and without_n is not None and with_n < without_n:
            v.warn("rerank_lowers", fused=without_n, reranked=with_n)
            v.recommend("rec_reranker_worse")

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "top1_per_question", "profile", "top1_score")
        if not rows:
            return None
        by_profile: dict[str, list[float]] = defaultdict(list)
        for profile, score in rows:
            if isinstance(score, int | float) and not isinstance(score, bool):
                by_profile[profile].append(float(score))
        if not by_profile:
            return None
        band = finding.metrics.get("somewhat_relevant")
        band = float(band) if isinstance(band, int | float) else 2.0
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(7, 3.2))
        names = sorted(by_profile)
        ax.hist([by_profile[n] for n in names], bins=[i / 4 for i in range(17)], label=names, stacked=True)
        ax.axvline(band, color="black", linestyle="--", linewidth=1, label=text(ID, "fig_band", lang, band=band))
        ax.set_xlabel(text(ID, "fig_xlabel", lang))
        ax.set_ylabel(text(ID, "fig_ylabel", lang))
        ax.set_title(text(ID, "fig_title", lang))
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        return fig
