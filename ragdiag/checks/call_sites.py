"""Check 7: is retrieval policy built in one place, or scattered over call sites that drift apart?

Reads the client-code scan (never runs the code): every search call site and
vector query with file:line, its site class (request, ingestion, admin,
evaluation, test, script) and the parameters it passes with their source and
what can replace them at run time, the modules that build search requests
(`CodeScan.builders`), the parameters or filter clauses that differ between
call sites (`CodeScan.drift`), retrieval delegated to a service or framework
(`CodeScan.delegated`) with its settings and the library defaults that apply,
UI state sent with every request, and agent loops that search.

Only the request path is judged: builders, drift and the module count are
computed over request-path sites, so a test, an admin script or a notebook
never makes retrieval "scattered" or a clause "missing"; the other sites are
listed with their class.

Status (spec `call_sites`): a filter or security clause present on one path
and absent on another fails (a warning when ``fail_on_filter_drift`` is
false); a *scope* clause (level, parent, entity, tenant) that differs between
paths is only a warning, because different paths legitimately search different
levels; more than ``max_builder_modules`` modules building requests warns.
Retrieval delegated on the request path warns with its settings (the service
builds the search; "no call site" never reads as fine). An agent loop without
an effective loop limit, or whose rewrite nodes rebuild the filter state,
warns. Differences in `top`, `k`, `query_type` or `exhaustive` are evidence and
recommendations; within one builder they are what profiles are for.

Evidence a pass needs: at least one request-path search call site found and its
parameters compared. No request-path site is ``skipped`` with what was found
elsewhere (or the file count).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ragdiag.checks import _observed
from ragdiag.checks._code_evidence import (
    at,
    file_line,
    gap_parts,
    locate,
    on_request_path,
    outcome,
    report_gaps,
    request_only,
    short,
    site_class,
    value_fields,
)
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.codescan.result import RETRIEVAL_GAPS
from ragdiag.model.messages import Message

ID = "call_sites"
#: unresolved parameters whose value this check's verdict rests on (filter drift; a REST body holds them all)
DECISIVE = ("filter", "body")
ROLES = ("security", "quality", "recency", "source", "scope", "other")
PARAMS = ("top", "k", "exhaustive", "query_type", "filter", "vector_fields")
#: parameters listed one per row with their source, what can replace them and where they are defined
PARAM_ROWS = ("top", "k", "text_k", "exhaustive", "query_type", "filter", "semantic_configuration", "vector_fields",
              "scoring_profile", "vector_filter_mode", "fetch_k", "score_threshold", "strictness", "in_scope",
              "query_source_authorization", "body")


def _param_cell(site: Any, name: str) -> Any:
    p = site.params.get(name)
    if p is None:
        return None
    if p.resolved:
        val = p.value
        return val if isinstance(val, str | int | float | bool) or val is None else str(val)
    return f"{p.value}?" if p.value is not None else f"? ({p.source})"


def _blocking(drift: Any) -> bool:
    """Drift that the spec fails on: a security clause, or a non-scope filter clause."""
    if drift.kind == "security_clause":
        return True
    return drift.kind == "filter_clause" and drift.role != "scope"


def _clause(drift: Any) -> str:
    return drift.param.removeprefix("filter: ")


@register
class CallSites(Check):
    id = ID
    needs = ("client_code|traffic|traces",)
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        max_modules = int(spec.threshold("max_builder_modules"))
        fail_on_drift = bool(spec.threshold("fail_on_filter_drift"))
        scan = ctx.code_scan()
        if scan is None:
            return  # recorded traffic or traces only: judged in observe()
        every = scan.all_call_sites("all")
        sites = scan.all_call_sites("request")
        delegated = [d for d in scan.delegated if on_request_path(d)]
        v.metric("files_scanned", scan.files_scanned)
        v.metric("files_skipped", len(scan.skipped))
        if scan.skipped:
            v.table("skipped_files", "t_skipped", ("file", "reason"), [(s.file, s.reason) for s in scan.skipped])
        self._inventory(v, scan, every)
        self._delegated(v, scan, delegated)
        self._agents(v, scan)
        others = [s for s in scan.search_calls if not on_request_path(s)]
        v.metric("search_call_sites", len(scan.request_sites()))
        v.metric("search_call_sites_all", len(scan.search_calls))
        v.metric("delegated_retrievals", len(delegated))
        if others:
            v.note("not_judged", n=len(others), classes=self._classes(v, others))
        gaps = report_gaps(v, scan, RETRIEVAL_GAPS, params=DECISIVE)
        if not sites:
            if gaps:
                v.nothing_observed("no_request_site_gaps", files=scan.files_scanned, parts=gap_parts(v, gaps))
                return
            if every or scan.delegated:
                v.nothing_observed("no_request_site", n=len(every) + len(scan.delegated), files=scan.files_scanned,
                                   classes=self._classes(v, [*every, *scan.delegated]))
            elif scan.skipped:
                v.nothing_observed("no_call_site_some_skipped", files=scan.files_scanned,
                                   skipped=len(scan.skipped))
            else:
                v.nothing_observed("no_call_site", files=scan.files_scanned)
            if not every and not scan.delegated:
                v.recommend("rec_supply_search_code")
            return

        def role(r: str | None) -> Message:
            return v.msg(f"role_{r if r in ROLES else 'other'}")

        v.observed("call_sites_compared", len(sites))
        builders = scan.builders()
        modules = [b.module for b in builders]
        drifts = scan.drift()
        blocking = sorted((d for d in drifts if _blocking(d)),
                          key=lambda d: (d.kind != "security_clause", -len(d.values.get("present", ()))))
        scope = [d for d in drifts if d.kind == "filter_clause" and d.role == "scope"]
        params = [d for d in drifts if d.kind == "param"]

        # -- evidence ---------------------------------------------------------------------------
        v.table("builders", "t_builders", ("module", "files", "functions", "function_names", "call_sites", "where"),
                [(b.module, ", ".join(b.files), len(b.functions), ", ".join(b.functions), len(b.sites),
                  tuple(b.sites)) for b in builders], note="n_builders")
        if drifts:
            v.table("drift", "t_drift", ("parameter", "kind", "role", "value", "sites", "where"),
                    [(d.param, d.kind, d.role or "", value, len(where), tuple(where))
                     for d in drifts for value, where in d.values.items()], note="n_drift")

        # -- faults -----------------------------------------------------------------------------
        judge = v.fail if fail_on_drift else v.warn
        for d in blocking:
            present, absent = d.values.get("present", ()), d.values.get("absent", ())
            if d.param == "security filter":
                judge("security_missing", absent=len(absent), total=len(present) + len(absent),
                      where=short(v, absent))
                v.recommend("rec_security_in_builder", where=tuple(absent))
                for loc in absent:
                    v.location(*file_line(loc), "loc_security_missing", level="error")
                continue
            judge("clause_drift", clause=_clause(d), role=role(d.role), present=len(present),
                  present_at=short(v, present), absent=len(absent), absent_at=short(v, absent))
            if d.role in ("quality", "recency", "source"):
                v.recommend("rec_decide_clause_how", clause=_clause(d), present=tuple(present),
                            absent=tuple(absent), how=v.msg(f"how_{d.role}"))
            else:
                v.recommend("rec_decide_clause", clause=_clause(d), present=tuple(present), absent=tuple(absent))
            for loc in absent:
                v.location(*file_line(loc), "loc_clause_absent", clause=_clause(d),
                           level="error" if fail_on_drift else "warning")
        for d in scope:
            present = d.values.get("present", ())
            v.warn("scope_hard_coded", clause=_clause(d), where=short(v, present))
            v.recommend("rec_scope_profile", clause=_clause(d), where=tuple(present))
        if len(modules) > max_modules:
            v.warn("too_many_modules", modules=len(modules), max=max_modules)
            v.recommend("rec_one_builder", modules=len(modules), names=tuple(modules), sites=len(sites))
        for d in params:
            if d.param == "exhaustive" and "true" in d.values:
                v.recommend("rec_exhaustive_profile", where=tuple(d.values["true"]))
            else:
                v.recommend("rec_param_once", param=d.param, n=len(d.values),
                            parts=tuple(v.msg("value_at", value=val, where=short(v, w)) for val, w in d.values.items()))
        if blocking or scope or params or len(modules) > max_modules:
            v.recommend("rec_builder_tests")

        # -- metrics and headline -----------------------------------------------------------------
        v.metric("vector_query_sites", len(scan.in_scope(scan.vector_queries)))
        v.metric("builder_modules", len(modules))
        v.metric("builder_functions", len({f"{b.module}:{f}" for b in builders for f in b.functions}))
        v.metric("drifting_parameters", len(drifts))
        v.metric("filter_drift", len(blocking))
        v.metric("security_clause_drift", sum(d.kind == "security_clause" for d in drifts))
        for k, n in sorted(Counter(s.kind for s in sites).items()):
            v.metric(f"sites[{k}]", n)
        where = dict(searches=len(scan.request_sites()), vectors=len(scan.in_scope(scan.vector_queries)),
                     modules=len(modules), files=scan.files_scanned)
        if gaps:  # a filter it could not read hides drift, a wrapper it could not read hides a site
            v.warn("code_gaps", parts=gap_parts(v, gaps))
        if v.fails or v.warns:
            v.note("where", **where)
        v.passed("pass_one_place", names=tuple(modules), **where)

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.call_sites(ctx, spec, v)

    # ---- every site, with its class and parameters ------------------------------------------------------
    @staticmethod
    def _classes(v: Verdict, items: list[Any]) -> tuple[Message, ...]:
        counts = Counter(getattr(i, "site_class", "request") for i in items)
        return tuple(v.msg("class_count", n=n, cls=v.msg(f"common.class_{c}")) for c, n in sorted(counts.items()))

    def _inventory(self, v: Verdict, scan: Any, every: tuple[Any, ...]) -> None:
        if not every:
            return
        by_kind: dict[str, list[str]] = {}
        for s in every:
            by_kind.setdefault(s.kind, []).append(at(s))
        v.table("sites_per_kind", "t_kinds", ("kind", "sites", "where"),
                [(k, len(w), tuple(w)) for k, w in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0]))])
        by_class: dict[str, list[str]] = {}
        for s in every:
            by_class.setdefault(s.site_class, []).append(at(s))
        v.table("sites_per_class", "t_classes", ("site_class", "sites", "where"),
                [(v.msg(f"common.class_{c}"), len(w), tuple(w)) for c, w in sorted(by_class.items())],
                note="n_classes")
        v.table("call_sites", "t_sites", ("site", "site_class", "kind", "module", "function", "builder", "language",
                                          "async", *PARAMS, "class_reason"),
                [(at(s), site_class(v, s), s.kind, s.module, s.function, s.builder or "", s.language, s.is_async,
                  *(_param_cell(s, p) for p in PARAMS), s.class_reason) for s in every], note="n_sites")
        rows = []
        for s in every:
            for name in PARAM_ROWS:
                p = s.params.get(name)
                if p is not None:
                    rows.append((at(s), site_class(v, s), s.kind, name, *value_fields(p), outcome(p),
                                 p.expression if not p.resolved else ""))
        if rows:
            v.table("site_params", "t_site_params", ("site", "site_class", "kind", "parameter", "value", "resolved",
                                                     "source", "override", "provenance", "outcome", "expression"),
                    rows, note="n_site_params")
        fronts = [f for f in scan.frontend_defaults if f.sent_as]
        if fronts:
            v.table("frontend_defaults", "t_frontend", ("site", "name", "value", "sent_as", "source"),
                    [(f.location, f.name, *value_fields(f.value)[:1], f.sent_as, f.value.source) for f in fronts],
                    note="n_frontend")

    # ---- retrieval a service or a framework performs ---------------------------------------------------------
    def _delegated(self, v: Verdict, scan: Any, delegated: list[Any]) -> None:
        if not scan.delegated:
            return
        rows = []
        for d in scan.delegated:
            for name, p in d.settings.items():
                rows.append((at(d), site_class(v, d), d.kind, d.framework, d.store, name, *value_fields(p)))
            for name, value in d.defaults.items():
                if name not in d.settings:
                    rows.append((at(d), site_class(v, d), d.kind, d.framework, d.store, name, value, True,
                                 f"library_default:{d.framework}", "", ""))
            if not d.settings and not d.defaults:
                rows.append((at(d), site_class(v, d), d.kind, d.framework, d.store, "", None, None, "", "", ""))
        v.table("delegated", "t_delegated", ("site", "site_class", "kind", "framework", "store", "setting", "value",
                                             "resolved", "source", "override", "provenance"), rows, note="n_delegated")
        if not delegated:
            return
        v.observed("delegated_retrievals", len(delegated))
        groups: dict[tuple[str, str], list[Any]] = {}
        for d in delegated:
            groups.setdefault((d.kind, d.framework), []).append(d)
        parts = []
        for (kind, framework), items in groups.items():
            best = max(items, key=lambda d: sum(1 for p in d.settings.values() if p.resolved))
            searches = [s for s in scan.request_sites() if s.file == best.file and s.kind in ("langchain", "llamaindex")]
            parts.append(v.msg("delegated_part", kind=v.msg(f"kind_{kind}") if f"{ID}.kind_{kind}" in v.catalogue
                               else kind, framework=framework, where=short(v, [at(d) for d in items]),
                               settings=_settings(v, best, searches) or v.msg("no_settings")))
            for d in items:
                locate(v, d, "loc_delegated", level="note", kind=kind, framework=framework)
        v.warn("delegated", parts=tuple(parts))
        v.recommend("rec_delegated")

    # ---- agent loops ----------------------------------------------------------------------------------------
    def _agents(self, v: Verdict, scan: Any) -> None:
        graphs = list(scan.agent_graphs)
        if not graphs:
            return
        v.table("agent_graphs", "t_agents", ("site", "site_class", "framework", "nodes", "search_nodes",
                                             "unsecured_search_nodes", "rewrite_nodes", "rewrite_nodes_touching_filters",
                                             "loop", "loop_limit", "loop_limit_effective", "filter_logged"),
                [(at(g), site_class(v, g), g.framework, tuple(g.nodes), g.search_nodes, g.unsecured_search_nodes,
                  g.rewrite_nodes, g.rewrite_nodes_touching_filters, g.has_cycle, g.loop_limit,
                  g.loop_limit_effective, g.filter_logged) for g in graphs], note="n_agents")
        for g in request_only(graphs):
            if not g.search_nodes:
                continue
            v.observed("agent_graphs_examined")
            if g.has_cycle and not g.loop_limit:
                v.warn("agent_no_limit", where=at(g))
                locate(v, g, "loc_agent_no_limit")
                v.recommend("rec_agent_limit", where=at(g))
            elif g.has_cycle and g.loop_limit_effective is False:
                v.warn("agent_limit_ineffective", where=at(g), limit=g.loop_limit)
                locate(v, g, "loc_agent_limit_ineffective")
                v.recommend("rec_agent_limit", where=at(g))
            if g.rewrite_nodes_touching_filters:
                v.warn("agent_rewrite_filters", where=at(g), nodes=g.rewrite_nodes_touching_filters)
                locate(v, g, "loc_agent_rewrite", nodes=g.rewrite_nodes_touching_filters)
                v.recommend("rec_agent_filters", nodes=g.rewrite_nodes_touching_filters)
            if not g.filter_logged:
                v.recommend("rec_agent_log_filter", where=at(g), nodes=g.search_nodes)


    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "builders", "module", "call_sites", "where")
        if not rows:
            return None
        drift = column_values(finding, "drift", "parameter", "role", "value", "where") or []
        no_security: set[str] = set()
        no_filter: set[str] = set()
        for param, role, value, where in drift:
            if value != "absent":
                continue
            if param == "security filter":
                no_security.update(where or ())
            elif str(param).startswith("filter:") and role != "scope":
                no_filter.update(where or ())
        names = [str(m) for m, _, _ in rows]
        counts = [int(n) for _, n, _ in rows]
        colors = ["tab:red" if no_security & set(w or ()) else "tab:orange" if no_filter & set(w or ())
                  else "tab:blue" for _, _, w in rows]
        pyplot = plt()
        fig, ax = pyplot.subplots(figsize=(8, 1.2 + 0.35 * len(names)))
        y = list(range(len(names)))
        ax.barh(y, counts, color=colors)
        for i, c in enumerate(counts):
            ax.text(c + 0.05, i, str(c), va="center", fontsize=8)
        ax.set_yticks(y, names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, max(counts) * 1.15 + 0.5)
        ax.set_xlabel(text(ID, "fig_xlabel", lang), fontsize=8)
        ax.set_title(text(ID, "fig_title", lang, modules=len(names)))
        fig.tight_layout()
        return fig


KEY_SETTINGS = ("top_n_documents", "strictness", "in_scope", "query_type", "search_type", "k", "fetch_k",
                "similarity_top_k", "score_threshold", "top", "filter", "reranker_threshold")


def _settings(v: Verdict, d: Any, searches: list[Any] = ()) -> tuple[Message, ...]:
    """The retrieval settings of a delegated retrieval for a headline: passed ones, then defaults that apply.

    A store's default `k` gives way to the `k` its retriever calls in the same file pass (`asRetriever(3)`)."""
    out = []
    for name in KEY_SETTINGS:
        passed = [s for s in searches if s.params.get(name) is not None and s.params[name].resolved
                  and not s.params[name].source.startswith("library_default")]
        if name not in d.settings and passed:
            out.append(v.msg("setting_at", name=name, value=passed[0].params[name].value, where=at(passed[0])))
            continue
        p = d.settings.get(name)
        if p is not None:
            if not p.resolved:
                out.append(v.msg("setting_unknown", name=name, source=p.source))
            elif p.override:
                out.append(v.msg("setting_override", name=name, value=p.value, override=p.override))
            else:
                out.append(v.msg("setting", name=name, value=p.value))
        elif name in d.defaults:
            out.append(v.msg("setting_default", name=name, value=d.defaults[name]))
    return tuple(out)
