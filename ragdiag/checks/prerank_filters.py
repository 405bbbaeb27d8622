"""Check 3: is anything filtered out before the reranker on an axis that is not relevance?

Every filter clause (profiles, client code, query log) is classified by field
role: access (the schema's security fields), scope, quality, recency, source.
Each quality/recency/source clause is ablated with `drop_filter_clause` on the
questions its profile serves: how many goldset-relevant documents it removes
from the candidate pool, and recall@k / nDCG@10 with and without it. Without a
goldset: how many of the unfiltered top 50 it removes. The query log is read
for fallback cascades (the same question re-issued with a relaxed filter).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ragdiag import odata
from ragdiag.checks._common import evidence, incomplete, needs_policy, num, paired, pct
from ragdiag.checks.registry import register
from ragdiag.engine import probes
from ragdiag.errors import RagdiagError
from ragdiag.model.findings import Finding

ID = "prerank_filters"
SUSPICIOUS = ("quality", "recency", "source")


def classify(fields: frozenset[str], security: set[str], roles: dict[str, tuple[str, ...]]) -> str:
    """The role of a clause from the fields it touches (access wins, then the name hints)."""
    if fields & security:
        return "access"
    for role in ("quality", "recency", "source", "scope"):
        hints = roles.get(role, ())
        if any(h.lower() in f.lower() for f in fields for h in hints):
            return role
    return "unclassified"


def _pool(trace: Any) -> set[str]:
    return set(trace.pool.keys if trace.pool is not None else trace.keys)


@register
class PrerankFilters:
    id = ID
    needs = ()
    uses = ("target", "profiles", "goldset", "query_log", "client_code")

    def run(self, ctx: Any, spec: Any) -> Finding:
        skipped = needs_policy(ctx, ID)
        if skipped:
            return skipped
        policy = ctx.policy
        fail_share = spec.threshold("fail_removed_relevant_share")
        warn_any = bool(spec.threshold("warn_any_nonrelevance_clause"))
        roles = {k: tuple(v) for k, v in spec.roles.items()}
        schema = ctx.target.schema()
        security = {f.name for f in schema.security_fields} | {policy.security_field.split("/")[0]}

        clause_rows, suspicious = [], []
        for p in policy.profiles.values():
            if not p.filter:
                continue
            for c in odata.clauses(odata.parse(p.filter)):
                role = classify(c.fields, security, roles)
                clause_rows.append(("profile", p.name, c.text, role, ", ".join(sorted(c.fields))))
                if role in SUSPICIOUS:
                    suspicious.append((p, c, role))
        scan = ctx.code_scan()
        code_rows = []
        if scan is not None:
            for site in scan.search_calls:
                f = site.params.get("filter")
                if f is None or not f.resolved or not isinstance(f.value, str):
                    continue
                try:
                    cls = odata.clauses(odata.parse(f.value))
                except RagdiagError:
                    continue
                for c in cls:
                    role = classify(c.fields, security, roles)
                    code_rows.append(("code", f"{site.file}:{site.line}", c.text, role,
                                      ", ".join(sorted(c.fields))))
        log_roles: Counter[tuple[str, str]] = Counter()
        if ctx.query_log is not None:
            for e in ctx.query_log.entries:
                if not e.filter:
                    continue
                try:
                    cls = odata.clauses(odata.parse(e.filter))
                except RagdiagError:
                    continue
                for c in cls:
                    role = classify(c.fields, security, roles)
                    if role != "access":
                        log_roles[(c.text, role)] += 1

        metrics: dict[str, Any] = {"profile_clauses": len(clause_rows),
                                   "suspicious_profile_clauses": len(suspicious),
                                   "code_clauses": len(code_rows)}
        ev = [evidence("Filter clauses by role", ("source", "where", "clause", "role", "fields"),
                       clause_rows + code_rows)]
        if log_roles:
            ev.append(evidence("Non-access filter clauses in the query log", ("clause", "role", "requests"),
                               [(t, r, n) for (t, r), n in log_roles.most_common()]))
        recs, fails, warns = [], [], []
        inc: dict[str, int] = {}
        cases = ctx.question_cases()
        ablation_rows = []
        removed_rows = []
        for p, c, role in suspicious:
            mine = [cs for cs in cases if _routes_to(policy, cs, p.name)]
            label = f"{p.name}: {c.text}"
            if not mine:
                warns.append(f"{label} ({role}) filters before reranking")
                continue
            base = ctx.run_gold(policy, cases=mine, label=f"{p.name} baseline")
            # the clause's index in the built request: the identity clause may come first
            dropped = ctx.run_gold(policy, cases=mine, probe=probes.Probe("without_clause", (("clause_text", c.text),)),
                                   label=f"{p.name} without {c.text}")
            inc = {**inc, **incomplete(base), **incomplete(dropped)}
            if ctx.goldset is not None:
                qrels = ctx.goldset.qrels()
                relevant_total = removed = 0
                for q, with_t, without_t in paired(base, dropped):
                    rel = {k for k, g in qrels.get(q.case.id, {}).items() if g >= 1}
                    if not rel:
                        continue
                    gone = (rel & _pool(without_t)) - _pool(with_t)
                    relevant_total += len(rel)
                    removed += len(gone)
                    for k in sorted(gone):
                        removed_rows.append((c.text, q.case.id, k, without_t.pool.rank_of(k)
                                             if without_t.pool is not None else None))
                share_removed = removed / relevant_total if relevant_total else 0.0
                e_with = base.evaluation(ctx.goldset)
                e_without = dropped.evaluation(ctx.goldset)
                ablation_rows.append((p.name, c.text, role, len(mine), removed, relevant_total, pct(share_removed),
                                      num(e_with.aggregate.get("recall@10")), num(e_without.aggregate.get("recall@10")),
                                      num(e_with.aggregate.get("recall@50")), num(e_without.aggregate.get("recall@50")),
                                      num(e_with.aggregate.get("ndcg@10")), num(e_without.aggregate.get("ndcg@10"))))
                metrics[f"removed_relevant_share[{label}]"] = share_removed
                if share_removed >= fail_share:
                    fails.append(f"'{c.text}' on profile {p.name} removes {removed} of {relevant_total} "
                                 f"relevant documents ({pct(share_removed)}) before reranking")
                elif warn_any:
                    warns.append(f"'{c.text}' ({role}) filters profile {p.name} before reranking")
            else:
                lost = []
                for _q, with_t, without_t in paired(base, dropped):
                    top = list(without_t.pool.keys[:50]) if without_t.pool is not None else list(without_t.keys[:50])
                    if top:
                        lost.append(len(set(top) - _pool(with_t)) / len(top))
                avg = sum(lost) / len(lost) if lost else 0.0
                ablation_rows.append((p.name, c.text, role, len(mine), "-", "-", f"{pct(avg)} of unfiltered top 50",
                                      "-", "-", "-", "-", "-", "-"))
                if warn_any:
                    warns.append(f"'{c.text}' ({role}) removes {pct(avg)} of the unfiltered top 50 on {p.name}")
            recs.append(_recommendation(c, role, schema, p.name))
        if ablation_rows:
            ev.append(evidence("Ablation per non-relevance clause (drop_filter_clause)",
                               ("profile", "clause", "role", "questions", "relevant removed", "relevant total",
                                "share removed", "recall@10 with", "recall@10 without", "recall@50 with",
                                "recall@50 without", "nDCG@10 with", "nDCG@10 without"), ablation_rows,
                               note="input of the recall-cost figure"))
        if removed_rows:
            ev.append(evidence("Relevant documents removed before reranking",
                               ("clause", "case", "document", "rank without the clause"), removed_rows))
        cascades = ctx.query_log.cascades() if ctx.query_log is not None else []
        if cascades:
            metrics["fallback_cascades"] = len(cascades)
            ev.append(evidence("Fallback cascades in the query log (same question re-issued with a relaxed filter)",
                               ("user", "question", "attempts", "filters"),
                               [(cz.user, cz.question, len(cz.entries), " -> ".join(f or "(none)" for f in cz.filters))
                                for cz in cascades[:50]]))
            warns.append(f"{len(cascades)} fallback cascades in the query log re-run searches with looser filters")
            recs.append("remove the fallback cascade: once the filter no longer hides relevant documents, one "
                        "search with a scoring boost replaces the retries")
        status = "fail" if fails else "warn" if warns else "pass"
        if fails:
            headline = "; ".join(fails)
        elif warns:
            headline = "; ".join(warns[:3]) + (f" (+{len(warns) - 3} more)" if len(warns) > 3 else "")
        else:
            headline = "only access and scope clauses filter before reranking"
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), incomplete=inc, figures=("prerank_filters",))


def _routes_to(policy: Any, case: Any, profile: str) -> bool:
    intent = case.intent if case.intent and case.intent != "unknown" else None
    route = policy.route(case.question) if intent is None else policy.route_intent(intent)
    return route.profile_name == profile


def _recommendation(clause: Any, role: str, schema: Any, profile: str) -> str:
    fields = sorted(clause.fields)
    field = fields[0] if fields else "the field"
    have = [sp.name for sp in schema.scoring_profiles
            for fn in sp.functions if fn.field_name in clause.fields]
    how = {"quality": "a magnitude function", "recency": "a freshness function",
           "source": "a tag function"}[role]
    where = f" (the index already has one in scoring profile '{have[0]}')" if have else ""
    return (f"profile '{profile}': remove '{clause.text}' from the filter and boost {field} with {how}"
            f"{where}; scoring-profile functions survive semantic reranking, text weights do not")
