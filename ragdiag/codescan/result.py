"""`CodeScan`: everything the scanner found in a client's tree, and the views the checks read.

Every view that a consultant's conclusion rests on (centralisation, drift,
unbounded LLM calls, injection risks, ACL, budgets) is computed over the
request path by default (`scope="request"`) and over all sites with
`scope="all"`: a test or an admin script does not make retrieval
"scattered" or a security clause "missing".
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from ragdiag.codescan import _common as C
from ragdiag.codescan.model import (
    AclSite,
    AgentGraph,
    BudgetConstant,
    BudgetUnitIssue,
    Builder,
    CitationCheck,
    ClientThreshold,
    DelegatedRetrieval,
    Drift,
    FailOpen,
    FrontendDefault,
    Gap,
    GoldsetFile,
    LLMCallSite,
    PromptRule,
    SearchCallSite,
    SecurityFilterSite,
    Skipped,
    jsonable,
)
from ragdiag.codescan.prompts import contradictions

#: Call-site kinds that send Azure AI Search requests (compared by `drift`).
AZURE_KINDS = ("azure_search", "rest_search")
#: Site kinds whose search the service builds from a retrieval configuration the app sends.
DELEGATING_KINDS = ("on_your_data", "agentic_retrieval")
#: Gaps that leave the retrieval side (sites, their parameters, trimming) incompletely read.
RETRIEVAL_GAPS = ("unresolved_param", "http_wrapper", "unsupported_language", "unreadable_file",
                  "sql_function_missing")
#: Gaps that leave the answer side (model calls and what their prompts hold) incompletely read.
LLM_GAPS = ("llm_wrapper", "unresolved_context", "unsupported_language", "unreadable_file")
#: Parameters whose being unresolved leaves the permission trimming of a site unknown.
ACL_PARAMS = ("filter", "query_source_authorization")
#: Sources of a value that is application configuration, the same for every request (not a caller's argument).
CONFIG_SOURCES = ("attribute:", "settings:", "env:", "import:", "constant:")


# ---- the result -------------------------------------------------------------------------------


def _render(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        return str(value)
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(jsonable(value), sort_keys=True)


@dataclass(frozen=True)
class _FilterState:
    clauses: list[C.FilterClause] | None   # None: unknown
    complete: bool
    security: str | None                   # "present", "absent" or None (unknown)


def _opaque_body(site: SearchCallSite) -> bool:
    """A REST site whose body the scanner could not read: a parameter it does not pass is unknown, not absent."""
    b = site.params.get("body")
    return b is not None and not b.resolved


def _filter_state(site: SearchCallSite) -> _FilterState:
    p = site.params.get("filter")
    if p is None and _opaque_body(site):
        return _FilterState(None, False, None)
    if p is None:
        return _FilterState([], True, "absent")
    if isinstance(p.value, str):
        clauses, _ = C.filter_clauses(p.value)
        # an opaque part named like a security filter (`{acl_filter}`) is taken to be just that
        complete = all(not c.opaque or C.SECURITY_NAME_RE.search(c.text) for c in clauses)
        if not p.resolved and ("(conditional)" in p.source or "(reassigned)" in p.source):
            complete = False  # one branch's text: the filter may also be something else (or nothing)
        sec = any(C.clause_role(c.fields, c.text) == "security"
                  or (c.opaque and C.SECURITY_NAME_RE.search(c.text)) for c in clauses)
        return _FilterState(clauses, complete, "present" if sec else ("absent" if complete else None))
    if C.SECURITY_NAME_RE.search(p.expression or "") or C.SECURITY_NAME_RE.search(p.source or ""):
        return _FilterState(None, False, "present")
    return _FilterState(None, False, None)


@dataclass(frozen=True)
class CodeScan:
    """Everything found in a client's code tree (see the module docstring)."""

    root: str
    files_scanned: int
    search_calls: tuple[SearchCallSite, ...] = ()
    vector_queries: tuple[SearchCallSite, ...] = ()
    llm_calls: tuple[LLMCallSite, ...] = ()
    budget_constants: tuple[BudgetConstant, ...] = ()
    citation_checks: tuple[CitationCheck, ...] = ()
    prompt_rules: tuple[PromptRule, ...] = ()
    security_filters: tuple[SecurityFilterSite, ...] = ()
    goldset_files: tuple[GoldsetFile, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    acl_sites: tuple[AclSite, ...] = ()
    fail_open: tuple[FailOpen, ...] = ()
    delegated: tuple[DelegatedRetrieval, ...] = ()
    thresholds: tuple[ClientThreshold, ...] = ()
    budget_units: tuple[BudgetUnitIssue, ...] = ()
    agent_graphs: tuple[AgentGraph, ...] = ()
    frontend_defaults: tuple[FrontendDefault, ...] = ()
    eval_result_files: tuple[GoldsetFile, ...] = ()
    gaps: tuple[Gap, ...] = ()
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -- views ----------------------------------------------------------------------------
    @staticmethod
    def in_scope(items: Any, scope: str = "request") -> tuple[Any, ...]:
        """`items` on the request path (``scope="request"``), of one class (``"admin"``...), or all (``"all"``)."""
        if scope == "all":
            return tuple(items)
        return tuple(i for i in items if getattr(i, "site_class", "request") == scope)

    def gaps_in(self, kinds: tuple[str, ...] = RETRIEVAL_GAPS, scope: str = "request",
                params: tuple[str, ...] | None = None) -> tuple[Gap, ...]:
        """What the scan could not read, of `kinds`, on the request path (`scope="all"`: anywhere).

        A file the scanner could not read has no site class of its own: it counts on every scope.
        `params` keeps only the ``unresolved_param`` gaps of those parameters (``ACL_PARAMS``:
        the ones that decide trimming)."""
        out = []
        for g in self.gaps:
            if g.kind not in kinds:
                continue
            if params is not None and g.kind == "unresolved_param" and g.param not in params:
                continue
            if scope != "all" and g.kind not in ("unsupported_language", "unreadable_file") \
                    and getattr(g, "site_class", "request") != scope:
                continue
            out.append(g)
        return tuple(out)

    def request_sites(self) -> tuple[SearchCallSite, ...]:
        """Search calls on the request path."""
        return self.in_scope(self.search_calls)

    def sites_by_class(self) -> dict[str, int]:
        """How many search calls each site class holds."""
        out: dict[str, int] = {}
        for s in self.search_calls:
            out[s.site_class] = out.get(s.site_class, 0) + 1
        return dict(sorted(out.items()))

    def all_call_sites(self, scope: str = "all") -> tuple[SearchCallSite, ...]:
        """Search calls and vector-query constructions, in file/line order."""
        return tuple(sorted(self.in_scope((*self.search_calls, *self.vector_queries), scope),
                            key=lambda s: (s.file, s.line)))

    def retrieval_delegated(self, scope: str = "request") -> bool:
        """Does the app hand retrieval to a service or framework (On your data, a knowledge agent, a vector store)?"""
        return bool(self.in_scope(self.delegated, scope))

    def centralisation(self, scope: str = "request") -> dict[str, Any]:
        """Where requests are built: ``central`` (one module), ``scattered``, ``delegated`` or ``none``."""
        mods = self.builder_modules(scope)
        delegated = self.in_scope(self.delegated, scope)
        if len(mods) > 1:
            verdict = "scattered"
        elif mods:
            verdict = "central"
        elif delegated:
            verdict = "delegated"
        else:
            verdict = "none"
        return {"scope": scope, "verdict": verdict, "builder_modules": list(mods),
                "sites": len(self.in_scope(self.search_calls, scope)), "delegated": len(delegated)}

    def acl(self, scope: str = "request") -> dict[str, Any]:
        """The permission trimming seen on the request path: mechanisms, what switches them on, fail-open paths."""
        sites = self.in_scope(self.acl_sites, scope)
        return {"scope": scope, "mechanisms": sorted({a.mechanism for a in sites}),
                "conditional": [f"{a.location} {a.enabled_by}" for a in sites if a.enabled_by],
                "fail_open": [f"{f.location} {f.kind}" for f in self.in_scope(self.fail_open, scope)],
                "sites": [a.location for a in sites]}

    def builders(self, scope: str = "request") -> tuple[Builder, ...]:
        """Modules that build search requests: those holding a call site or a helper feeding one.

        A site whose search the service builds (On your data, a knowledge agent) makes no builder:
        the app sends a retrieval configuration, not a search request."""
        key = f"builders:{scope}"
        if key in self._cache:
            return self._cache[key]
        mods: dict[str, dict[str, set[str]]] = {}

        def add(module: str, file: str | None, function: str | None, site: str) -> None:
            m = mods.setdefault(module, {"files": set(), "functions": set(), "sites": set()})
            if file:
                m["files"].add(file)
            if function:
                m["functions"].add(function)
            m["sites"].add(site)

        for s in self.all_call_sites(scope):
            if s.kind in DELEGATING_KINDS:
                continue  # the service builds that search (On your data, a knowledge agent): no builder here
            add(s.module, s.file, s.function, s.location)
            if s.builder:
                module, _, qual = s.builder.partition(":")
                add(module, None, qual, s.location)
        files_by_module = {s.module: s.file for s in self.all_call_sites(scope) if s.kind not in DELEGATING_KINDS}
        out = []
        for module in sorted(mods):
            m = mods[module]
            files = m["files"] or ({files_by_module[module]} if module in files_by_module else set())
            out.append(Builder(module, tuple(sorted(files)), tuple(sorted(m["functions"])),
                               tuple(sorted(m["sites"], key=_site_key))))
        result = tuple(out)
        self._cache[key] = result
        return result

    def builder_modules(self, scope: str = "request") -> tuple[str, ...]:
        return tuple(b.module for b in self.builders(scope))

    def drift(self, scope: str = "request") -> list[Drift]:
        """Filter clauses, the security clause and parameters that differ between call sites.

        Compared over Azure request sites (SDK and REST). A literal filter
        clause present at some sites and absent at others drifts; so does a
        configured filter the scanner cannot read (a setting or attribute
        passed at some sites, no filter at others), and the security clause; `top` and `query_type` drift when two sites resolve
        to different values (``<unset>`` counts as a value); `k` and
        `exhaustive` over the vector queries (``exhaustive`` unset = false).
        Unresolvable values are left out rather than guessed. Over the request
        path by default (`scope="all"`: every site, tests and scripts too).
        """
        key = f"drift:{scope}"
        if key in self._cache:
            return list(self._cache[key])
        sites = [s for s in self.in_scope(self.search_calls, scope) if s.kind in AZURE_KINDS]
        states = {s.location: _filter_state(s) for s in sites}
        out: list[Drift] = []
        # literal filter clauses
        clause_fields: dict[str, tuple[str, ...]] = {}
        for st in states.values():
            for c in st.clauses or ():
                if c.literal:
                    clause_fields.setdefault(c.text, c.fields)
        for text in sorted(clause_fields):
            present, absent = [], []
            for loc, st in states.items():
                if st.clauses is None:
                    continue
                if any(c.text == text for c in st.clauses):
                    present.append(loc)
                elif st.complete:
                    absent.append(loc)
            if present and absent:
                role = C.clause_role(clause_fields[text], text)
                out.append(Drift(f"filter: {text}", {"present": tuple(present), "absent": tuple(absent)},
                                 "security_clause" if role == "security" else "filter_clause", role))
        # a configured filter the scanner cannot read (a setting, an attribute, a constant, the environment)
        # that some sites pass and others do not: the same configuration applies on one path only
        opaque: dict[str, list[str]] = {}
        unfiltered = [s.location for s in sites if s.params.get("filter") is None and not _opaque_body(s)]
        for s in sites:
            p = s.params.get("filter")
            if p is not None and p.expression and p.source.startswith(CONFIG_SOURCES) \
                    and ((p.value is None and not p.resolved) or p.override) \
                    and not C.SECURITY_NAME_RE.search(p.expression):
                opaque.setdefault(p.expression, []).append(s.location)
        for expr in sorted(opaque):
            if unfiltered:
                out.append(Drift(f"filter: {expr}", {"present": tuple(opaque[expr]), "absent": tuple(unfiltered)},
                                 "filter_clause", "other"))
        # the security clause as such
        sec: dict[str, list[str]] = {}
        for loc, st in states.items():
            if st.security is not None:
                sec.setdefault(st.security, []).append(loc)
        if len(sec) > 1:
            out.append(Drift("security filter", {k: tuple(v) for k, v in sorted(sec.items(), reverse=True)},
                             "security_clause", "security"))
        # plain parameters
        for name in ("top", "query_type"):
            values: dict[str, list[str]] = {}
            for s in sites:
                p = s.params.get(name)
                if p is None and _opaque_body(s):
                    continue
                if p is None:
                    values.setdefault("<unset>", []).append(s.location)
                elif p.resolved:
                    values.setdefault(_render(p.value), []).append(s.location)
            if len(values) > 1:
                out.append(Drift(name, {k: tuple(v) for k, v in sorted(values.items())}))
        vector_sites = list(self.in_scope(self.vector_queries, scope)) + [
            s for s in self.in_scope(self.search_calls, scope)
            if s.kind in AZURE_KINDS and any(
                (s.params.get(n) is not None and not s.params[n].source.startswith("vector_query@"))
                for n in ("k", "exhaustive"))]
        for name, default in (("k", "<unset>"), ("exhaustive", "false")):
            values = {}
            for s in vector_sites:
                p = s.params.get(name)
                if p is None:
                    values.setdefault(default, []).append(s.location)
                elif p.resolved:
                    values.setdefault(_render(p.value), []).append(s.location)
            if len(values) > 1:
                out.append(Drift(name, {k: tuple(v) for k, v in sorted(values.items())}))
        self._cache[key] = tuple(out)
        return out

    def contradictions(self) -> list[tuple[PromptRule, PromptRule]]:
        """Pairs of prompt length rules whose word ranges differ."""
        return contradictions(self.prompt_rules)

    def sole_input_rules(self) -> tuple[PromptRule, ...]:
        return tuple(r for r in self.prompt_rules if r.kind == "sole_input")

    def shared_text_sites(self) -> tuple[SearchCallSite, ...]:
        """Call sites where one variable feeds the keyword text and a vector text or the semantic query."""
        return tuple(s for s in self.search_calls if s.shared_text)

    def unbounded_llm_calls(self, scope: str = "all") -> tuple[LLMCallSite, ...]:
        """LLM calls that receive retrieved context with no visible budget, source cap or truncation at the
        prompt (those bounded only by a fixed result count included: `count_bounded_llm_calls`); calls
        whose context could not be traced (`context_unresolved`) are neither bounded nor unbounded."""
        return tuple(c for c in self.in_scope(self.llm_calls, scope)
                     if c.retrieved_context and not c.context_bounded and not c.context_unresolved)

    def count_bounded_llm_calls(self, scope: str = "all") -> tuple[LLMCallSite, ...]:
        """Unbounded calls whose prompt holds the whole chunks of a fixed number of results (bounded by count)."""
        return tuple(c for c in self.unbounded_llm_calls(scope) if c.count_bound is not None)

    def citations_validated(self) -> bool | None:
        """True if some citation handler validates ids, False if handlers exist but none does, None if none."""
        if not self.citation_checks:
            return None
        return any(c.validated for c in self.citation_checks)

    def injection_risks(self, scope: str = "all") -> tuple[SecurityFilterSite, ...]:
        """Security filters built by interpolation without escaping."""
        return tuple(s for s in self.in_scope(self.security_filters, scope) if s.injection_risk)

    # -- output ----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "files_scanned": self.files_scanned,
            "search_calls": [s.to_dict() for s in self.search_calls],
            "vector_queries": [s.to_dict() for s in self.vector_queries],
            "llm_calls": [c.to_dict() for c in self.llm_calls],
            "budget_constants": [b.to_dict() for b in self.budget_constants],
            "citation_checks": [c.to_dict() for c in self.citation_checks],
            "prompt_rules": [r.to_dict() for r in self.prompt_rules],
            "security_filters": [s.to_dict() for s in self.security_filters],
            "goldset_files": [g.path for g in self.goldset_files],
            "goldsets": [g.to_dict() for g in self.goldset_files],
            "eval_result_files": [g.to_dict() for g in self.eval_result_files],
            "skipped": [s.to_dict() for s in self.skipped],
            "acl_sites": [a.to_dict() for a in self.acl_sites],
            "fail_open": [f.to_dict() for f in self.fail_open],
            "delegated": [d.to_dict() for d in self.delegated],
            "thresholds": [t.to_dict() for t in self.thresholds],
            "budget_units": [b.to_dict() for b in self.budget_units],
            "agent_graphs": [g.to_dict() for g in self.agent_graphs],
            "frontend_defaults": [f.to_dict() for f in self.frontend_defaults],
            "gaps": [g.to_dict() for g in self.gaps],
            "builders": [b.to_dict() for b in self.builders()],
            "builders_all": [b.to_dict() for b in self.builders("all")],
            "drift": [d.to_dict() for d in self.drift()],
            "drift_all": [d.to_dict() for d in self.drift("all")],
            "centralisation": {"request": self.centralisation(), "all": self.centralisation("all")},
            "contradictions": [[a.location, b.location] for a, b in self.contradictions()],
        }

    def summary(self) -> dict[str, Any]:
        """Counts and headline facts (JSON-safe) for a report or a quick look."""
        by_kind: dict[str, int] = {}
        for s in self.search_calls:
            by_kind[s.kind] = by_kind.get(s.kind, 0) + 1
        return {
            "root": self.root,
            "files_scanned": self.files_scanned,
            "search_calls": len(self.search_calls),
            "search_calls_by_kind": dict(sorted(by_kind.items())),
            "search_calls_by_class": self.sites_by_class(),
            "request_path_sites": len(self.request_sites()),
            "centralisation": self.centralisation()["verdict"],
            "delegated": [f"{d.location} {d.kind}" for d in self.delegated],
            "acl_mechanisms": self.acl()["mechanisms"],
            "fail_open": self.acl()["fail_open"],
            "client_thresholds": [t.location for t in self.thresholds],
            "budget_unit_issues": [b.location for b in self.budget_units],
            "agent_graphs": [g.location for g in self.agent_graphs],
            "eval_result_files": [g.path for g in self.eval_result_files],
            "vector_queries": len(self.vector_queries),
            "builder_modules": list(self.builder_modules()),
            "drift": [d.param for d in self.drift()],
            "drift_all": [d.param for d in self.drift("all")],
            "shared_text_sites": [s.location for s in self.shared_text_sites()],
            "llm_calls": len(self.llm_calls),
            "unbounded_llm_calls": [c.location for c in self.unbounded_llm_calls()],
            "budget_constants": [b.name for b in self.budget_constants],
            "citations_validated": self.citations_validated(),
            "prompt_contradictions": len(self.contradictions()),
            "sole_input_rules": [r.location for r in self.sole_input_rules()],
            "security_filters": len(self.security_filters),
            "injection_risks": [s.location for s in self.injection_risks()],
            "goldset_files": [g.path for g in self.goldset_files],
            "skipped": len(self.skipped),
            "gaps": [f"{g.location} {g.kind}" for g in self.gaps_in(scope="request")],
        }

    def __repr__(self) -> str:
        s = self.summary()
        return (f"CodeScan({self.root!r}: {s['files_scanned']} files, {s['search_calls']} search calls, "
                f"{len(s['builder_modules'])} builder modules, {len(s['drift'])} drifting, "
                f"{s['llm_calls']} LLM calls, {s['skipped']} skipped)")

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                       f"<td style='text-align:left'>{html.escape(_render(v))}</td></tr>"
                       for k, v in self.summary().items())
        return f"<table><caption>Code scan</caption>{rows}</table>"


def _site_key(loc: str) -> tuple[str, int]:
    file, _, line = loc.rpartition(":")
    return (file, int(line) if line.isdigit() else 0)


__all__ = ["CodeScan"]
