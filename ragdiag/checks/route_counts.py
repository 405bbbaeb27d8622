"""Check 6: are question types routed, and does each branch earn its upkeep?

Routes and profiles defined; traffic share per route from the query log; routes
below the traffic floor; profiles that build identical requests; with a goldset,
each route's profile against the best single profile on that route's questions
(nDCG@10 delta, paired t-test); classification latency per route from the log.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ragdiag.checks._common import evidence, incomplete, needs_policy, num, pct, profile_used_by
from ragdiag.checks.registry import register
from ragdiag.model.findings import Finding

ID = "route_counts"
PROBE_QUESTION = "What notice period applies to the framework agreement with the supplier?"


def _effective(profile: Any, policy: Any) -> Any:
    """The request a profile builds for a fixed question, without names: to spot duplicates."""
    req = profile.build(PROBE_QUESTION, None, security_field=policy.security_field)
    return req.fingerprint()


@register
class RouteCounts:
    id = ID
    needs = ()
    uses = ("profiles", "query_log", "goldset")

    def run(self, ctx: Any, spec: Any) -> Finding:
        skipped = needs_policy(ctx, ID)
        if skipped:
            return skipped
        policy = ctx.policy
        min_share = spec.threshold("min_traffic_share")
        min_gain = spec.threshold("min_gain")
        alpha = spec.threshold("alpha")
        used_by = profile_used_by(policy)
        metrics: dict[str, Any] = {"routes": len(policy.routes), "profiles": len(policy.profiles)}
        ev, warns, recs = [], [], []
        inc: dict[str, int] = {}
        routes_rows = [(intent, name) for intent, name in sorted(policy.routes.items())]
        if policy.default_route:
            routes_rows.append(("(default)", policy.default_route))
        traffic: dict[str, float] = {}
        if ctx.query_log is not None:
            traffic = ctx.query_log.share_by_route()
            lat = ctx.query_log.latency_by_route("classification_ms")
            ev.append(evidence("Traffic per route (query log)", ("route", "requests", "share", "classification p50 ms"),
                               [(r, n, pct(traffic.get(r)), num((lat.get(r) or {}).get("p50"), 0))
                                for r, n in ctx.query_log.routes().most_common()]))
            for intent in policy.routes:
                share = traffic.get(intent, 0.0)
                if share < min_share:
                    warns.append(f"route '{intent}' receives {pct(share)} of traffic (< {pct(min_share)})")
                    recs.append(f"merge route '{intent}' into the default profile unless it earns a measurable gain")
            metrics["routes_below_traffic_floor"] = sum(traffic.get(i, 0.0) < min_share for i in policy.routes)
        ev.insert(0, evidence("Routes", ("intent", "profile"), routes_rows))
        groups: dict[str, list[str]] = defaultdict(list)
        for p in policy.profiles.values():
            groups[_effective(p, policy)].append(p.name)
        dupes = [names for names in groups.values() if len(names) > 1]
        if dupes:
            ev.append(evidence("Profiles that build identical requests", ("profiles",),
                               [(", ".join(d),) for d in dupes]))
            warns.append(f"{len(dupes)} group(s) of profiles differ in nothing that matters")
            recs.extend(f"merge profiles {', '.join(d)}: they send identical requests" for d in dupes)
        if ctx.goldset is not None and len(policy.profiles) > 1:
            from ragdiag.metrics import compare

            routed = ctx.run_gold(policy, label="routed")
            inc.update(incomplete(routed))
            e_routed = routed.evaluation(ctx.goldset)
            singles = {}
            for name in policy.profiles:
                run = ctx.run_gold(policy, profile=name, label=f"all through {name}")
                inc.update(incomplete(run))
                singles[name] = run.evaluation(ctx.goldset)
            best = max(singles, key=lambda n: singles[n].aggregate.get("ndcg@10") or 0.0)
            metrics["best_single_profile"] = best
            metrics["ndcg@10_routed"] = e_routed.aggregate.get("ndcg@10")
            metrics["ndcg@10_best_single"] = singles[best].aggregate.get("ndcg@10")
            by_intent: dict[str, list[str]] = defaultdict(list)
            for q in routed.queries:
                if q.case.id in e_routed.per_query:
                    by_intent[q.intent].append(q.case.id)
            rows = []
            for intent, ids in sorted(by_intent.items()):
                prof = policy.route_intent(intent).profile_name
                mine = singles[prof].subset(ids)
                other = singles[best].subset(ids)
                cmp = compare(other, mine, "ndcg@10")
                gain = cmp.mean_delta
                earned = prof == best or (gain >= min_gain and cmp.significant(alpha))
                rows.append((intent, prof, len(ids), num(mine.aggregate.get("ndcg@10"), 3),
                             num(other.aggregate.get("ndcg@10"), 3), f"{gain * 100:+.1f}",
                             num(cmp.p_ttest, 3), f"{cmp.wins}/{cmp.ties}/{cmp.losses}",
                             "yes" if earned else "no"))
                if not earned:
                    warns.append(f"route '{intent}' ({prof}) is not measurably better than '{best}' "
                                 f"({gain * 100:+.1f} nDCG points, p={num(cmp.p_ttest, 3)})")
            ev.append(evidence(f"Each route's profile against the best single profile ('{best}')",
                               ("intent", "route profile", "questions", "nDCG@10 route", f"nDCG@10 {best}",
                                "delta (points)", "p (paired t)", "wins/ties/losses", "earns upkeep"), rows,
                               note="input of the route figure"))
            metrics["routes_without_gain"] = sum(r[-1] == "no" for r in rows)
            if metrics["routes_without_gain"]:
                recs.append(f"routes without a measurable gain over '{best}' are candidates to merge into it; "
                            "each branch costs classification latency, code paths and tests")
        status = "warn" if warns else "pass"
        headline = "; ".join(warns[:3]) + (f" (+{len(warns) - 3} more)" if len(warns) > 3 else "") if warns else \
            f"{len(policy.routes)} routes, each with traffic and a measurable gain"
        unused = [n for n, intents in used_by.items() if not intents]
        if unused:
            ev.append(evidence("Profiles no route uses", ("profile",), [(n,) for n in unused]))
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), incomplete=inc, figures=("route_counts",))
