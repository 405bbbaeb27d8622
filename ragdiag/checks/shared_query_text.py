"""Check 4: does one text feed the keyword leg, the vector leg and the reranker?

Compares the channel texts of the requests the profiles build and of the query
log, lists the vector fields each intent searches, reads the code scan for one
variable feeding several channels and for prompt rules (one query for all
stages, contradictory length rules), and runs the split-channel probe: keywords
for BM25, the full question for vectors and the reranker, the verbatim question
as its own channel, fused client-side with RRF — reporting the goldset delta.
"""

from __future__ import annotations

from typing import Any

from ragdiag.checks._common import evidence, incomplete, needs_policy, num, pct, profile_used_by
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.model.findings import Finding
from ragdiag.policy.text import keywords

ID = "shared_query_text"


def channel_texts(request: Any) -> tuple[str | None, tuple[str, ...], str | None]:
    vec = tuple(vq.text for vq in request.vector_queries if vq.text is not None)
    sem = request.effective_semantic_text if request.is_semantic else None
    return (request.search if request.has_text_leg else None), vec, sem


def identical(request: Any) -> bool | None:
    """True when every channel that is present gets the same text (None: fewer than two channels)."""
    kw, vec, sem = channel_texts(request)
    texts = [t for t in (kw, *vec, sem) if t]
    if len(texts) < 2:
        return None
    return len(set(texts)) == 1


def split_probe(question: str) -> probes.Probe:
    return probes.split_channels(keyword=keywords(question), vector=question, semantic=question,
                                 verbatim=question)


@register
class SharedQueryText:
    id = ID
    needs = ()
    uses = ("profiles", "questions", "query_log", "client_code", "goldset")

    def run(self, ctx: Any, spec: Any) -> Finding:
        skipped = needs_policy(ctx, ID)
        if skipped:
            return skipped
        policy = ctx.policy
        warn_share = spec.threshold("warn_identical_share")
        fail_gain = spec.threshold("fail_recall10_gain")
        cases = ctx.question_cases()
        metrics: dict[str, Any] = {}
        ev, recs, warns, fails = [], [], [], []
        inc: dict[str, int] = {}

        # the texts the profiles actually build
        queries = ctx.gold_queries(policy) if cases else []
        flags = [identical(r) for q in queries for r in q.requests]
        flags = [f for f in flags if f is not None]
        profile_share = sum(flags) / len(flags) if flags else None
        metrics["identical_share_profiles"] = profile_share
        mode_rows = []
        used_by = profile_used_by(policy)
        for p in policy.profiles.values():
            vt = ", ".join(sorted({vq.text for vq in p.vector_queries})) or "-"
            fields = "; ".join(f"{'+'.join(vq.fields)} (w {vq.weight:g})" for vq in p.vector_queries) or "-"
            mode_rows.append((p.name, ", ".join(used_by.get(p.name, [])) or "-", p.keyword_text, vt,
                              p.semantic_text if p.query_type == "semantic" else "-", fields))
        ev.append(evidence("Channel text modes and vector fields per profile",
                           ("profile", "routes", "keyword text", "vector text", "semantic text", "vector fields"),
                           mode_rows))
        examples = [(q.case.id, q.profile, *[_show(x) for x in channel_texts(q.requests[0])])
                    for q in queries[:8]]
        if examples:
            ev.append(evidence("Example requests: the text each channel receives",
                               ("case", "profile", "keyword", "vector", "semantic"), examples))
        field_sets = {tuple(sorted({f for vq in p.vector_queries for f in vq.fields}))
                      for p in policy.profiles.values() if p.vector_queries}
        if len(field_sets) == 1 and len(policy.profiles) > 1:
            only = ", ".join(next(iter(field_sets)))
            warns.append(f"every intent searches the same vector field ({only})")
            recs.append("give each question type the representation that suits it: e.g. overview questions on a "
                        "summary vector, exact citations on the content vector, with weights per field")
        log_share = None
        if ctx.query_log is not None:
            log_share = ctx.query_log.shared_text_share()
            metrics["identical_share_query_log"] = log_share
        shares = [s for s in (profile_share, log_share) if s is not None and s == s]
        worst_share = max(shares) if shares else None
        if worst_share is not None and worst_share > warn_share:
            where = []
            if profile_share is not None and profile_share > warn_share:
                where.append(f"{pct(profile_share)} of profile requests")
            if log_share is not None and log_share == log_share and log_share > warn_share:
                where.append(f"{pct(log_share)} of logged requests")
            warns.append("one text feeds keyword, vector and reranker channels in " + " and ".join(where))
            recs.append("derive the channel texts separately in the profile: keyword_text = \"keywords\", "
                        "vector text = \"verbatim\", semantic_text = \"verbatim\"")

        scan = ctx.code_scan()
        if scan is not None:
            shared_sites = [s for s in scan.search_calls if s.shared_text]
            if shared_sites:
                ev.append(evidence("Code: one variable feeds several channels", ("file:line", "function", "channels"),
                                   [(f"{s.file}:{s.line}", s.function,
                                     ", ".join(f"{k}={v}" for k, v in s.channel_vars.items() if v))
                                    for s in shared_sites]))
                warns.append(f"{len(shared_sites)} call site(s) pass the same variable to search_text and the "
                             "vector/semantic text")
            sole = [r for r in scan.prompt_rules if r.kind == "sole_input"]
            contra = scan.contradictions() if hasattr(scan, "contradictions") else []
            if sole:
                ev.append(evidence("Prompts that make one query the input of all stages", ("file:line", "text"),
                                   [(f"{r.file}:{r.line}", r.text) for r in sole]))
                warns.append("a prompt tells the model its query is the sole input to all three stages")
            if contra:
                ev.append(evidence("Contradictory query-length rules in prompts", ("rule A", "rule B"),
                                   [(f"{a.file}:{a.line} {a.text}", f"{b.file}:{b.line} {b.text}") for a, b in contra]))
                warns.append(f"{len(contra)} pair(s) of contradictory query-length rules in prompts")
                recs.append("keep one length rule per channel in one prompt; delete the contradicting one")

        if ctx.goldset is not None and cases:
            base = ctx.run_gold(policy, label="baseline")
            split_queries = []
            from ragdiag.engine.context import GoldQuery

            for q in base.queries:
                split_queries.append(GoldQuery(q.case, q.intent, q.profile,
                                               split_probe(q.case.question).apply(q.requests[0])))
            results = ctx.runner.run_fused([q.requests for q in split_queries], label="split channels")
            from ragdiag.engine.context import GoldRun

            split = GoldRun("split channels", split_queries, results)
            inc = {**incomplete(base), **incomplete(split)}
            e_base, e_split = base.evaluation(ctx.goldset), split.evaluation(ctx.goldset)
            gain = (e_split.aggregate.get("recall@10") or 0) - (e_base.aggregate.get("recall@10") or 0)
            metrics.update({"recall@10_as_configured": e_base.aggregate.get("recall@10"),
                            "recall@10_split_channels": e_split.aggregate.get("recall@10"),
                            "ndcg@10_as_configured": e_base.aggregate.get("ndcg@10"),
                            "ndcg@10_split_channels": e_split.aggregate.get("ndcg@10"),
                            "recall@10_gain": gain})
            from ragdiag.metrics import compare

            cmp = compare(e_base, e_split, "recall@10")
            ev.append(evidence("Split-channel probe (client-side RRF, verbatim question kept as a channel)",
                               ("requests", "recall@10", "nDCG@10", "MRR", "wins/ties/losses", "p (paired t)"),
                               [("as configured", num(e_base.aggregate.get("recall@10")),
                                 num(e_base.aggregate.get("ndcg@10")), num(e_base.aggregate.get("mrr")), "", ""),
                                ("split channels", num(e_split.aggregate.get("recall@10")),
                                 num(e_split.aggregate.get("ndcg@10")), num(e_split.aggregate.get("mrr")),
                                 f"{cmp.wins}/{cmp.ties}/{cmp.losses}", num(cmp.p_ttest, 3))]))
            if gain >= fail_gain:
                fails.append(f"separate channel texts raise recall@10 by {gain * 100:.1f} points")
                recs.append("split the channels: keywords for BM25, the full question for the vector query and "
                            "semantic_query, and keep the verbatim question as its own channel; with Azure's "
                            "query_rewrites the search and vector texts must be identical, so separate texts mean "
                            "separate requests fused client-side (RRF)")
        status = "fail" if fails else "warn" if warns else "pass"
        headline = "; ".join(fails + warns) if fails or warns else \
            "each channel gets its own text and the split-channel probe finds no recall to gain"
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), incomplete=inc, figures=("shared_query_text",))


def _show(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, tuple):
        return " | ".join(x) if x else "-"
    return str(x)
