"""Check 6: are question types routed, and does each branch earn its upkeep?

Routes and profiles defined; traffic share per route from the query log; routes below the
traffic floor; profiles that build identical requests; with a goldset, each route's profile
against the best single profile on that route's questions (nDCG@10 delta, paired t-test);
classification latency per route from the log.

Evidence a pass needs: at least one route measured, by its traffic in the query log or by
its goldset gain. A policy with a single routed profile has nothing to merge (skipped); so has
an audit without a query log and without a goldset (`needs`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ragdiag.checks import _observed
from ragdiag.checks._common import profile_used_by
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register

ID = "route_counts"
PROBE_QUESTION = "What notice period applies to the framework agreement with the supplier?"


def _effective(profile: Any, policy: Any) -> Any:
    """The request a profile builds for a fixed question, without names: to spot duplicates."""
    req = profile.build(PROBE_QUESTION, None, security_field=policy.security_field)
    return req.fingerprint()


def routed_profiles(policy: Any) -> list[str]:
    """The distinct profiles the routing table (and its default) sends questions to."""
    names = list(policy.routes.values()) + ([policy.default_route] if policy.default_route else [])
    return list(dict.fromkeys(names)) or list(policy.profiles)[:1]


@register
class RouteCounts(Check):
    id = ID
    needs = ("profiles|traffic", "query_log|goldset|traffic")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        policy = ctx.policy
        if policy is None:
            return  # recorded traffic only: judged in observe()
        routed = routed_profiles(policy)
        v.metric("routes", len(policy.routes))
        v.metric("profiles", len(policy.profiles))
        rows = [(intent, name) for intent, name in sorted(policy.routes.items())]
        if policy.default_route:
            rows.append(("*", policy.default_route))
        v.table("routes", "t_routes", ("intent", "profile"), rows)
        if len(routed) < 2:
            v.skip("one_route", routes=len(policy.routes), profile=routed[0] if routed else "-")
        v.nothing_observed("nothing_measured", routes=len(policy.routes))
        parts: list[Any] = []
        low: list[str] = []  # routes below the traffic floor
        earned: set[str] = set()  # routes whose profile measured a significant gain
        if ctx.has("query_log"):
            parts += self._traffic(ctx, spec, v, low)
        self._duplicates(policy, v)
        if ctx.has("goldset") and ctx.has("target"):
            parts += self._gain(ctx, spec, v, earned)
        for intent in low:  # never "merge it" beside its own measured, significant gain
            if intent not in earned:
                v.recommend("rec_merge_low_traffic", route=intent)
        unused = [n for n, intents in profile_used_by(policy).items() if not intents]
        if unused:
            v.table("unused_profiles", "t_unused", ("profile",), [(n,) for n in unused])
        v.passed("pass", routes=len(routed), what=tuple(parts))

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.route_counts(ctx, spec, v)

    @staticmethod
    def _traffic(ctx: Any, spec: Any, v: Verdict, low: list[str]) -> list[Any]:
        log, policy = ctx.query_log, ctx.policy
        min_share = spec.threshold("min_traffic_share")
        v.metric("min_traffic_share", min_share)
        traffic = log.share_by_route()
        lat = log.latency_by_route("classification_ms")
        v.table("traffic", "t_traffic", ("route", "requests", "share", "classification_p50_ms"),
                [(r, n, traffic.get(r), (lat.get(r) or {}).get("p50")) for r, n in log.routes().most_common()])
        if not any(i in traffic for i in policy.routes):
            v.note("log_routes_unmatched", log_routes=tuple(traffic)[:8], routes=tuple(policy.routes))
            return []
        below = 0
        for intent in policy.routes:
            share = traffic.get(intent, 0.0)
            v.observed("routes_by_traffic")
            if share < min_share:
                below += 1
                v.warn("low_traffic", route=intent, share=share, min=min_share)
                low.append(intent)
        v.metric("routes_below_traffic_floor", below)
        return [v.msg("part_traffic", routes=len(policy.routes) - below, min=min_share, requests=len(log))]

    @staticmethod
    def _duplicates(policy: Any, v: Verdict) -> None:
        groups: dict[str, list[str]] = defaultdict(list)
        for p in policy.profiles.values():
            groups[_effective(p, policy)].append(p.name)
        dupes = [names for names in groups.values() if len(names) > 1]
        if dupes:
            v.table("identical_profiles", "t_identical", ("profiles",), [(tuple(d),) for d in dupes])
            v.warn("identical_profiles", groups=len(dupes))
            for d in dupes:
                v.recommend("rec_merge_identical", profiles=tuple(d))

    @staticmethod
    def _gain(ctx: Any, spec: Any, v: Verdict, earned_routes: set[str]) -> list[Any]:
        from ragdiag.metrics import compare

        policy, goldset = ctx.policy, ctx.goldset
        min_gain, alpha = spec.threshold("min_gain"), spec.threshold("alpha")
        routed = ctx.run_gold(policy, label="routed")
        v.requests(routed)
        singles = {}
        for name in policy.profiles:
            run = ctx.run_gold(policy, profile=name, label=f"all through {name}")
            v.requests(run)
            singles[name] = (run, run.evaluation(goldset))
        answered = {name: {q.case.id for q, _ in run.traces()} for name, (run, _) in singles.items()}
        best = max(singles, key=lambda n: singles[n][1].aggregate.get("ndcg@10") or 0.0)
        v.metric("best_single_profile", best)
        v.metric("ndcg@10_routed", routed.evaluation(goldset).aggregate.get("ndcg@10"))
        v.metric("ndcg@10_best_single", singles[best][1].aggregate.get("ndcg@10"))
        by_intent: dict[str, list[str]] = defaultdict(list)
        judged = set(routed.evaluation(goldset).per_query)
        for q, _ in routed.traces():
            if q.case.id in judged:
                by_intent[q.intent].append(q.case.id)
        rows = []
        for intent, ids in sorted(by_intent.items()):
            prof = policy.route_intent(intent).profile_name
            ids = [i for i in ids if i in answered[prof] and i in answered[best]]
            if not ids:
                continue
            mine, other = singles[prof][1].subset(ids), singles[best][1].subset(ids)
            cmp = compare(other, mine, "ndcg@10")
            earned = prof == best or (cmp.mean_delta >= min_gain and cmp.significant(alpha))
            if earned:  # the table says "earns upkeep: yes"
                earned_routes.add(intent)
            v.observed("routes_by_gain")
            rows.append((intent, prof, len(ids), mine.aggregate.get("ndcg@10"), other.aggregate.get("ndcg@10"),
                         cmp.mean_delta * 100, cmp.p_ttest, f"{cmp.wins}/{cmp.ties}/{cmp.losses}", earned))
            if not earned:
                # significantly below the best single profile is worse than "no gain": say so
                worse = cmp.mean_delta < 0 and cmp.significant(alpha)
                v.warn("worse" if worse else "no_gain", route=intent, profile=prof, best=best,
                       points=cmp.mean_delta * 100, p=cmp.p_ttest)
                if cmp.n:  # what sending the route's questions through the best single profile does
                    v.effect("ndcg@10", cmp.b_mean, cmp.a_mean, delta=-cmp.mean_delta, p=cmp.p_ttest, n=cmp.n,
                             action="eff_merge_route", scope="eff_scope_route", route=intent, best=best,
                             scope_params={"n": cmp.n, "route": intent})
        if not rows:
            return []
        v.table("route_gain", "t_gain", ("intent", "route_profile", "questions", "ndcg_route", "ndcg_best",
                                         "delta_points", "p_ttest", "wins_ties_losses", "earns_upkeep"),
                rows, note="n_gain", best=best)
        without = sum(not r[-1] for r in rows)
        v.metric("routes_without_gain", without)
        if without:
            v.recommend("rec_merge_no_gain", best=best)
        return [v.msg("part_gain", routes=len(rows) - without, measured=len(rows), best=best)]

    def draw(self, finding: Any, lang: str = "en") -> Any:
        traffic = column_values(finding, "traffic", "route", "share")
        gain = column_values(finding, "route_gain", "intent", "delta_points", "earns_upkeep")
        if not traffic and not gain:
            return None
        pyplot = plt()
        fig, axes = pyplot.subplots(1, 2, figsize=(8, 3.2))
        if traffic:
            axes[0].bar([r for r, _ in traffic], [s or 0 for _, s in traffic])
            axes[0].axhline(finding.metrics.get("min_traffic_share") or 0.02, color="red", linestyle="--", linewidth=1)
            axes[0].set_title(text(ID, "fig_traffic", lang), fontsize=9)
            axes[0].tick_params(axis="x", rotation=45, labelsize=7)
        if gain:
            axes[1].bar([r for r, _, _ in gain], [d or 0 for _, d, _ in gain],
                        color=["tab:green" if e else "tab:gray" for _, _, e in gain])
            axes[1].axhline(0, color="black", linewidth=0.8)
            axes[1].set_title(text(ID, "fig_gain", lang), fontsize=9)
            axes[1].tick_params(axis="x", rotation=45, labelsize=7)
        fig.tight_layout()
        return fig
