"""Check 7: is retrieval policy built in one place, or scattered over call sites that drift apart?

Reads the client-code scan (never runs the code): every search call site and
vector query with file:line and the parameters it passes, the modules that
build search requests (`CodeScan.builders`), and the parameters or filter
clauses that differ between call sites (`CodeScan.drift`).

Status (spec `call_sites`): a filter or security clause present on one path
and absent on another fails (a warning when ``fail_on_filter_drift`` is
false); a *scope* clause (level, parent, entity, tenant) that differs between
paths is only a warning, because different paths legitimately search different
levels; more than ``max_builder_modules`` modules building requests warns.
Differences in `top`, `k`, `query_type` or `exhaustive` are evidence and
recommendations; within one builder they are what profiles are for.

Evidence a pass needs: at least one search call site found and its parameters
compared. No call site in the scanned files is ``skipped`` with the file count.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.model.messages import Message

ID = "call_sites"
SHOW_SITES = 3  # sites named per value in headlines
ROLES = ("security", "quality", "recency", "source", "scope", "other")
PARAMS = ("top", "k", "exhaustive", "query_type", "filter", "vector_fields")


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
    needs = ("client_code",)
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        max_modules = int(spec.threshold("max_builder_modules"))
        fail_on_drift = bool(spec.threshold("fail_on_filter_drift"))
        scan = ctx.code_scan()
        sites = scan.all_call_sites()
        v.metric("files_scanned", scan.files_scanned)
        v.metric("files_skipped", len(scan.skipped))
        if scan.skipped:
            v.table("skipped_files", "t_skipped", ("file", "reason"), [(s.file, s.reason) for s in scan.skipped])
        if not sites:
            if scan.skipped:
                v.nothing_observed("no_call_site_some_skipped", files=scan.files_scanned,
                                   skipped=len(scan.skipped))
            else:
                v.nothing_observed("no_call_site", files=scan.files_scanned)
            v.recommend("rec_supply_search_code")
            return

        def short(where: tuple[str, ...] | list[str]) -> Any:
            where = tuple(where)
            if len(where) <= SHOW_SITES:
                return where
            return v.msg("sites_more", sites=where[:SHOW_SITES], n=len(where) - SHOW_SITES)

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
        by_kind: dict[str, list[str]] = {}
        for s in sites:
            by_kind.setdefault(s.kind, []).append(s.location)
        v.table("sites_per_kind", "t_kinds", ("kind", "sites", "where"),
                [(k, len(w), tuple(w)) for k, w in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0]))])
        v.table("builders", "t_builders", ("module", "files", "functions", "function_names", "call_sites", "where"),
                [(b.module, ", ".join(b.files), len(b.functions), ", ".join(b.functions), len(b.sites),
                  tuple(b.sites)) for b in builders], note="n_builders")
        v.table("call_sites", "t_sites", ("site", "kind", "module", "function", "builder", "language", "async",
                                          *PARAMS),
                [(s.location, s.kind, s.module, s.function, s.builder or "", s.language, s.is_async,
                  *(_param_cell(s, p) for p in PARAMS)) for s in sites], note="n_sites")
        if drifts:
            v.table("drift", "t_drift", ("parameter", "kind", "role", "value", "sites", "where"),
                    [(d.param, d.kind, d.role or "", value, len(where), tuple(where))
                     for d in drifts for value, where in d.values.items()], note="n_drift")

        # -- faults -----------------------------------------------------------------------------
        judge = v.fail if fail_on_drift else v.warn
        for d in blocking:
            present, absent = d.values.get("present", ()), d.values.get("absent", ())
            if d.param == "security filter":
                judge("security_missing", absent=len(absent), total=len(present) + len(absent), where=short(absent))
                v.recommend("rec_security_in_builder", where=tuple(absent))
                for loc in absent:
                    v.location(*_file_line(loc), "loc_security_missing", level="error")
                continue
            judge("clause_drift", clause=_clause(d), role=role(d.role), present=len(present),
                  present_at=short(present), absent=len(absent), absent_at=short(absent))
            if d.role in ("quality", "recency", "source"):
                v.recommend("rec_decide_clause_how", clause=_clause(d), present=tuple(present),
                            absent=tuple(absent), how=v.msg(f"how_{d.role}"))
            else:
                v.recommend("rec_decide_clause", clause=_clause(d), present=tuple(present), absent=tuple(absent))
            for loc in absent:
                v.location(*_file_line(loc), "loc_clause_absent", clause=_clause(d),
                           level="error" if fail_on_drift else "warning")
        for d in scope:
            present = d.values.get("present", ())
            v.warn("scope_hard_coded", clause=_clause(d), where=short(present))
            v.recommend("rec_scope_profile", clause=_clause(d), where=tuple(present))
        if len(modules) > max_modules:
            v.warn("too_many_modules", modules=len(modules), max=max_modules)
            v.recommend("rec_one_builder", modules=len(modules), names=tuple(modules), sites=len(sites))
        for d in params:
            if d.param == "exhaustive" and "true" in d.values:
                v.recommend("rec_exhaustive_profile", where=tuple(d.values["true"]))
            else:
                v.recommend("rec_param_once", param=d.param, n=len(d.values),
                            parts=tuple(v.msg("value_at", value=val, where=short(w)) for val, w in d.values.items()))
        if blocking or scope or params or len(modules) > max_modules:
            v.recommend("rec_builder_tests")

        # -- metrics and headline -----------------------------------------------------------------
        v.metric("search_call_sites", len(scan.search_calls))
        v.metric("vector_query_sites", len(scan.vector_queries))
        v.metric("builder_modules", len(modules))
        v.metric("builder_functions", len({f"{b.module}:{f}" for b in builders for f in b.functions}))
        v.metric("drifting_parameters", len(drifts))
        v.metric("filter_drift", len(blocking))
        v.metric("security_clause_drift", sum(d.kind == "security_clause" for d in drifts))
        for k, n in sorted(Counter(s.kind for s in sites).items()):
            v.metric(f"sites[{k}]", n)
        where = dict(searches=len(scan.search_calls), vectors=len(scan.vector_queries), modules=len(modules),
                     files=scan.files_scanned)
        if v.fails or v.warns:
            v.note("where", **where)
        v.passed("pass_one_place", names=tuple(modules), **where)

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


def _file_line(location: str) -> tuple[str, int]:
    file, _, line = location.rpartition(":")
    return (file, int(line)) if line.isdigit() else (location, 1)
