"""Check 10: is there a measuring stick, and what does it say?

Presence (in the config or as files in the client code), size per intent,
refusal and restricted-identity cases; validity (expected sources exist,
duplicate questions); metrics per profile and intent through ir-measures
(hit rate, recall, MRR, nDCG@10, judged@10); the refusal gate (a minimum
reranker score); and, when a second policy is configured, a paired comparison.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ragdiag.checks._common import evidence, incomplete, num, pct
from ragdiag.checks.registry import register
from ragdiag.model.findings import Finding

ID = "goldset"
METRICS = ("hit_rate@10", "recall@10", "recall@50", "mrr", "ndcg@10", "judged@10")


def _existing_keys(target: Any, keys: list[str]) -> set[str]:
    """Which keys exist in the index (local: a lookup; live: batched key filters)."""
    row_of = getattr(target, "row_of", None)
    if row_of is not None:
        return {k for k in keys if k in row_of}
    from ragdiag.odata import pick_delimiter, quote

    found: set[str] = set()
    key_field = target.schema().key_field.name
    for i in range(0, len(keys), 100):
        chunk = keys[i:i + 100]
        delim = pick_delimiter(chunk)
        flt = f"search.in({key_field}, {quote(delim.join(chunk))}, {quote(delim)})"
        for d in target.iter_documents(select=[key_field], filter=flt):
            found.add(d[key_field])
    return found


@register
class Goldset:
    id = ID
    needs = ()
    uses = ("goldset", "profiles", "target")

    def run(self, ctx: Any, spec: Any) -> Finding:
        min_cases = spec.threshold("min_cases_per_intent")
        target_cases = spec.threshold("target_cases_per_intent")
        need_refusals = bool(spec.threshold("require_refusals"))
        need_restricted = bool(spec.threshold("require_restricted"))
        gate = spec.threshold("gate_min_reranker_score")
        gs = ctx.goldset
        found_files = []
        scan = ctx.code_scan()
        if scan is not None:
            found_files = [str(g) for g in scan.goldset_files]
        if gs is None:
            ev = ()
            if found_files:
                ev = (evidence("Goldset-like files in the client code", ("path",), [(f,) for f in found_files]),)
            return Finding(check_id=ID, status="fail",
                           headline="no goldset: every change to retrieval is invisible without one"
                           + (f" ({len(found_files)} candidate file(s) found in the code, not configured)"
                              if found_files else ""),
                           metrics={"cases": 0}, evidence=ev,
                           recommendations=(f"write {target_cases} real questions per question type with their "
                                            "expected sources (id, question, intent, as_user, expect_sources, "
                                            "expect: refused) and set [inputs] goldset in the audit config",),
                           figures=())
        by_intent = gs.by_intent()
        refusals = gs.refusals()
        restricted = [c for c in gs if c.as_user and c.expect_refused]
        metrics: dict[str, Any] = {"cases": len(gs), "answerable": len(gs.answerable()),
                                   "refusal_cases": len(refusals), "restricted_identity_cases": len(restricted)}
        warns, recs = [], []
        size_rows = [(i, len(cs), "ok" if len(cs) >= min_cases else f"below {min_cases}")
                     for i, cs in sorted(by_intent.items())]
        small = [r[0] for r in size_rows if len(by_intent[r[0]]) < min_cases]
        if small:
            warns.append(f"fewer than {min_cases} cases for intent(s) {', '.join(small)}")
            recs.append(f"grow the goldset to {min_cases}-{target_cases} cases for {', '.join(small)}")
        if need_refusals and not refusals:
            warns.append("no refusal cases (questions the corpus cannot answer)")
            recs.append("add cases with `expect: refused` to measure whether the system refuses without a source")
        if need_restricted and not restricted:
            warns.append("no restricted-identity cases")
            recs.append("add cases asked as a user who may not see the answer (as_user + expect: refused)")
        ev = [evidence("Cases per intent", ("intent", "cases", "size"), size_rows)]
        keys = sorted({k for c in gs for k, _ in c.expect_sources})
        existing = _existing_keys(ctx.target, keys) if keys else set()
        missing = [k for k in keys if k not in existing]
        metrics["expected_sources_missing"] = len(missing)
        if missing:
            warns.append(f"{len(missing)} expected source(s) do not exist in the index")
            ev.append(evidence("Expected sources missing from the index", ("key",), [(k,) for k in missing[:100]]))
        dupes = gs.duplicate_questions()
        if dupes:
            ev.append(evidence("Duplicate questions", ("question", "cases"), [(q, ", ".join(ids)) for q, ids in dupes]))
            warns.append(f"{len(dupes)} duplicate question(s)")
        if found_files:
            ev.append(evidence("Goldset-like files in the client code", ("path",), [(f,) for f in found_files]))
        inc: dict[str, int] = {}
        if ctx.policy is not None:
            run = ctx.run_gold(ctx.policy, label="baseline")
            inc = incomplete(run)
            e = run.evaluation(ctx.goldset)
            for m in METRICS:
                metrics[m] = e.aggregate.get(m)
            rows = [("all", len(e.per_query), *[num(e.aggregate.get(m), 3) for m in METRICS])]
            intents: dict[str, list[str]] = defaultdict(list)
            profiles: dict[str, list[str]] = defaultdict(list)
            for q in run.queries:
                if q.case.id in e.per_query:
                    intents[q.intent].append(q.case.id)
                    profiles[q.profile].append(q.case.id)
            for name, ids in sorted(intents.items()):
                s = e.subset(ids)
                rows.append((f"intent {name}", len(ids), *[num(s.aggregate.get(m), 3) for m in METRICS]))
            for name, ids in sorted(profiles.items()):
                s = e.subset(ids)
                rows.append((f"profile {name}", len(ids), *[num(s.aggregate.get(m), 3) for m in METRICS]))
            ev.append(evidence(f"Retrieval metrics of policy '{ctx.policy.name}'", ("slice", "queries", *METRICS),
                               rows, note="judged@10 shows how much of the top 10 carries a judgment"))
            ev.append(self._refusal(ctx, run, gate, metrics))
            if ctx.compare_policy is not None:
                ev.append(self._comparison(ctx, e, metrics, inc))
        status = "warn" if warns else "pass"
        headline = "; ".join(warns) if warns else \
            f"{len(gs)} cases, {len(by_intent)} intents, refusal and restricted-identity cases present"
        if ctx.policy is not None and metrics.get("ndcg@10") is not None:
            headline += f" (nDCG@10 {metrics['ndcg@10']:.3f}, recall@50 {metrics.get('recall@50') or 0:.3f})"
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), incomplete=inc, figures=("goldset",))

    @staticmethod
    def _refusal(ctx: Any, run: Any, gate: float, metrics: dict[str, Any]) -> Any:
        should, answerable = [], []
        for q, t in run.traces():
            scores = [h.reranker_score for h in t.hits if h.reranker_score is not None]
            top = scores[0] if scores else None
            refused = not t.hits or (top is not None and top < gate)
            (should if q.case.expect_refused else answerable).append(refused)
        refused_ok = sum(should) / len(should) if should else None
        wrongly = sum(answerable) / len(answerable) if answerable else None
        metrics["refusal_gate"] = gate
        metrics["should_refuse_refused"] = refused_ok
        metrics["answerable_wrongly_refused"] = wrongly
        return evidence(f"Refusal with a retrieval gate (top reranker score < {gate} or no hits)",
                        ("cases", "refused"),
                        [(f"should refuse ({len(should)})", pct(refused_ok)),
                         (f"answerable ({len(answerable)})", pct(wrongly))],
                        note="permission leaks are measured by acl_trimming")

    @staticmethod
    def _comparison(ctx: Any, e: Any, metrics: dict[str, Any], inc: dict[str, int]) -> Any:
        from ragdiag.metrics import compare

        other = ctx.run_gold(ctx.compare_policy, label=f"compare {ctx.compare_policy.name}")
        inc.update(incomplete(other))
        e2 = other.evaluation(ctx.goldset)
        rows = []
        for m in ("ndcg@10", "recall@10", "recall@50", "mrr"):
            c = compare(e, e2, m)
            rows.append((m, num(c.a_mean, 3), num(c.b_mean, 3), f"{c.mean_delta:+.3f}",
                         f"{c.wins}/{c.ties}/{c.losses}", num(c.p_ttest, 4), num(c.p_wilcoxon, 4)))
            metrics[f"compare_{m}_delta"] = c.mean_delta
        return evidence(f"Policy '{ctx.policy.name}' against '{ctx.compare_policy.name}' (delta = second - first)",
                        ("metric", ctx.policy.name, ctx.compare_policy.name, "delta", "wins/ties/losses",
                         "p (paired t)", "p (Wilcoxon)"), rows)
