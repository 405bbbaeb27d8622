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
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ragdiag.checks._common import evidence
from ragdiag.checks.registry import register
from ragdiag.model.findings import Finding

ID = "call_sites"
SHOW_SITES = 3  # sites named per value in headlines and recommendations


def _short(sites: tuple[str, ...] | list[str], n: int = SHOW_SITES) -> str:
    sites = list(sites)
    head = ", ".join(sites[:n])
    return head + (f" and {len(sites) - n} more" if len(sites) > n else "")


def _param_cell(site: Any, name: str) -> Any:
    p = site.params.get(name)
    if p is None:
        return None
    if p.resolved:
        v = p.value
        return v if isinstance(v, (str, int, float, bool)) or v is None else str(v)
    return f"{p.value}?" if p.value is not None else f"? ({p.source})"


def _blocking(drift: Any) -> bool:
    """Drift that the spec fails on: a security clause, or a non-scope filter clause."""
    if drift.kind == "security_clause":
        return True
    return drift.kind == "filter_clause" and drift.role != "scope"


@register
class CallSites:
    id = ID
    needs = ("client_code",)

    def run(self, ctx: Any, spec: Any) -> Finding:
        max_modules = int(spec.threshold("max_builder_modules"))
        fail_on_drift = bool(spec.threshold("fail_on_filter_drift"))
        scan = ctx.code_scan()
        if scan is None:
            return Finding.skipped(ID, "no client code was supplied",
                                   what_to_supply='the folder holding the application\'s code as [inputs] '
                                                  'client_code = "path/to/app" in the audit config')
        sites = scan.all_call_sites()
        if not scan.search_calls and not scan.vector_queries:
            reason = (f"the scanner found no search call site in {scan.files_scanned} file(s) under "
                      f"{scan.root}")
            if scan.skipped:
                reason += f" ({len(scan.skipped)} file(s) skipped: {_short([s.file for s in scan.skipped])})"
            return Finding.skipped(ID, reason, what_to_supply="the folder that holds the code calling "
                                   "Azure AI Search (SearchClient.search, REST /docs/search, vector queries)")

        # -- call sites per kind ----------------------------------------------------------------
        by_kind: dict[str, list[str]] = {}
        for s in sites:
            by_kind.setdefault(s.kind, []).append(s.location)
        kind_rows = [(k, len(v), tuple(v)) for k, v in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
        site_rows = [(s.location, s.kind, s.module, s.function, s.builder or "", s.language,
                      "yes" if s.is_async else "no", _param_cell(s, "top"), _param_cell(s, "k"),
                      _param_cell(s, "exhaustive"), _param_cell(s, "query_type"), _param_cell(s, "filter"),
                      _param_cell(s, "vector_fields"))
                     for s in sites]

        # -- centralisation -----------------------------------------------------------------------
        builders = scan.builders()
        modules = [b.module for b in builders]
        builder_rows = [(b.module, ", ".join(b.files), len(b.functions), ", ".join(b.functions), len(b.sites),
                         tuple(b.sites)) for b in builders]
        functions = sorted({f"{b.module}:{f}" for b in builders for f in b.functions})

        # -- drift ----------------------------------------------------------------------------------
        drifts = scan.drift()
        drift_rows = []
        for d in drifts:
            for value, where in d.values.items():
                drift_rows.append((d.param, d.kind, d.role or "", value, len(where), tuple(where)))
        # the security clause first, then the clauses set at the most sites
        blocking = sorted((d for d in drifts if _blocking(d)),
                          key=lambda d: (d.kind != "security_clause", -len(d.values.get("present", ()))))
        scope = [d for d in drifts if d.kind == "filter_clause" and d.role == "scope"]
        params = [d for d in drifts if d.kind == "param"]

        fails: list[str] = []
        warns: list[str] = []
        recs: list[str] = []
        for d in blocking:
            present, absent = d.values.get("present", ()), d.values.get("absent", ())
            if d.param == "security filter":
                text = (f"the security filter is missing at {len(absent)} of {len(present) + len(absent)} "
                        f"Azure call sites ({_short(absent)})")
            else:
                clause = d.param.removeprefix("filter: ")
                text = (f"'{clause}' ({d.role}) is set at {len(present)} call site(s) ({_short(present)}) "
                        f"and absent at {len(absent)} ({_short(absent)})")
            (fails if fail_on_drift else warns).append(text)
        for d in scope:
            clause = d.param.removeprefix("filter: ")
            present = d.values.get("present", ())
            warns.append(f"scope clause '{clause}' is hard-coded at {_short(present)} only")
        if len(modules) > max_modules:
            warns.append(f"{len(modules)} modules build search requests (more than {max_modules})")

        # -- recommendations --------------------------------------------------------------------------
        if len(modules) > max_modules:
            recs.append(f"route every search through one request builder (a profile function that turns a "
                        f"named profile and the caller's identity into the complete request); today "
                        f"{len(modules)} modules build requests ({', '.join(modules)}): move their "
                        f"{len(sites)} call sites into it and delete the parameters they set on their own")
        for d in blocking:
            present, absent = d.values.get("present", ()), d.values.get("absent", ())
            if d.param == "security filter":
                recs.append(f"build the security clause inside the request builder from the caller's token "
                            f"(search.in over the group ids, escaped), never at the call site; it is missing "
                            f"at {', '.join(absent)}")
                continue
            clause = d.param.removeprefix("filter: ")
            how = {"quality": "an extraction-quality clause belongs in a scoring-profile magnitude boost, "
                              "not in a filter (see check prerank_filters)",
                   "recency": "a recency clause belongs in a freshness function, not in a filter",
                   "source": "a source clause belongs in a tag boost or an explicit scope of the profile"}
            recs.append(f"decide '{clause}' once per profile in the request builder: it is set at "
                        f"{', '.join(present)} and missing at {', '.join(absent)}"
                        + (f"; {how[d.role]}" if d.role in how else ""))
        for d in scope:
            clause = d.param.removeprefix("filter: ")
            recs.append(f"make '{clause}' a property of a named profile (e.g. level per profile) instead of "
                        f"hard-coding it at {', '.join(d.values.get('present', ()))}")
        for d in params:
            parts = "; ".join(f"{v} at {_short(w)}" for v, w in d.values.items())
            if d.param == "exhaustive" and "true" in d.values:
                recs.append(f"exhaustive = true at {', '.join(d.values['true'])}: set exhaustive per profile in "
                            f"the builder (false in production, true only for ground-truth runs)")
            else:
                recs.append(f"'{d.param}' takes {len(d.values)} values across call sites ({parts}): set it "
                            f"once per profile in the builder")
        if blocking or scope or params or len(modules) > max_modules:
            recs.append("cover the request builder with tests: one test per profile asserting the complete "
                        "request (filter with the security clause, top, k, exhaustive, query type)")

        metrics: dict[str, Any] = {
            "search_call_sites": len(scan.search_calls),
            "vector_query_sites": len(scan.vector_queries),
            "builder_modules": len(modules),
            "builder_functions": len(functions),
            "drifting_parameters": len(drifts),
            "filter_drift": len(blocking),
            "security_clause_drift": sum(d.kind == "security_clause" for d in drifts),
            "files_scanned": scan.files_scanned,
            "files_skipped": len(scan.skipped),
        }
        kinds = Counter(s.kind for s in sites)
        for k, n in sorted(kinds.items()):
            metrics[f"sites[{k}]"] = n

        ev = [
            evidence("Search call sites per kind", ("kind", "sites", "where"), kind_rows),
            evidence("Request builders per module", ("module", "files", "functions", "function names",
                                                     "call sites", "where"), builder_rows,
                     note="input of the call-sites figure; a module counts when it holds a call site or a "
                          "helper that feeds one"),
            evidence("Search call sites and their parameters",
                     ("site", "kind", "module", "function", "builder", "language", "async", "top", "k",
                      "exhaustive", "query_type", "filter", "vector_fields"), site_rows,
                     note="'?' marks a value the scanner could not resolve statically"),
        ]
        if drift_rows:
            ev.append(evidence("Drift between call sites", ("parameter", "kind", "role", "value", "sites", "where"),
                               drift_rows,
                               note="'present'/'absent' for filter clauses, '<unset>' for a parameter not passed"))
        if scan.skipped:
            ev.append(evidence("Files the scanner skipped", ("file", "reason"),
                               [(s.file, s.reason) for s in scan.skipped]))

        status = "fail" if fails else "warn" if warns else "pass"
        where = (f"{len(scan.search_calls)} search call site(s) and {len(scan.vector_queries)} vector "
                 f"quer{'y' if len(scan.vector_queries) == 1 else 'ies'} in {len(modules)} module(s)")
        if fails:
            more = f" (+{len(fails) - 2} more drifting clause(s))" if len(fails) > 2 else ""
            headline = "filter drift between call sites: " + "; ".join(fails[:2]) + more + f"; {where}"
        elif warns:
            more = f" (+{len(warns) - 3} more)" if len(warns) > 3 else ""
            headline = "; ".join(warns[:3]) + more + f"; {where}"
        else:
            headline = (f"{where} ({', '.join(modules)}); no filter or security clause drifts "
                        f"between paths")
        return Finding(check_id=ID, status=status, headline=headline, metrics=metrics, evidence=tuple(ev),
                       recommendations=tuple(dict.fromkeys(recs)), figures=(ID,))
