"""Check 9: does the search service trim permissions with the user's rights?

Parts, each run when its inputs are there (the headline says which ran):

- Schema (target): the security fields; a retrievable security field warns.
- Profiles: every profile must build the identity clause (``security_trimming``) and no
  vector query's ``filter_override`` may replace the filter without it (judged on the built
  request); each fault fails, naming the profile, the vector query, its fields and the
  override text.
- Client code (request path only; admin, test and script records are listed with their class):
  the permission mechanisms (an OData security filter, the user's token in
  ``x-ms-query-source-authorization``, a framework filter, an SQL WHERE) with what switches
  them on, and every path on which they fail open. Fails: a security filter interpolated
  without escaping, a retry that drops the header or the filter, a swallowed error getting the
  user's token, trimming or the whole filter controlled by the request, security ids from the
  model's tool-call arguments or from the request, a request-path site without the security
  clause while others have it, an agent loop whose search node lacks the clause (or whose
  rewrite node rebuilds the filter state) while the app trims elsewhere. Warns: trimming off
  by default or switched by a setting. An escaped identity clause is evidence; filters that
  interpolate values without visible escaping are listed.
- Probes (target, profiles, identities): leak probes count results outside each identity's
  rights, attributed to the clause or override that dropped the identity; injection probes
  send hostile group values through each trimming profile's builder (see `_acl_probes`).
- The goldset's own judgements (target, profiles, goldset): a case asked as an identity that
  retrieves a source the goldset forbids it (its `forbidden_sources`, or the expected sources of
  the same question answered for another identity when it expects a refusal) is a leak, even
  where the index's security field admits the group (`_goldset_leaks`): fail.

Evidence a pass needs: a security mechanism found AND verified: trimming profiles verified by
leak probes (0 leaks over N requests) and injection probes, escaped identity clauses in the
code, or a permission header sent to an index with native permission filtering. Nothing
found is ``skipped`` (ragdiag cannot tell whether results are trimmed), unless the index has
security fields: then the absence is the finding.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragdiag.checks import _observed
from ragdiag.checks._acl_probes import (
    EXAMPLE_IDENTITY,
    FORBIDDEN_GROUP,
    AclReader,
    forbidden_records,
    hostile_values,
    identity_drops,
    injection_probes,
    leak_probes,
    probe_filter,
)
from ragdiag.checks._code_evidence import (
    at,
    gap_parts,
    locate,
    on_request_path,
    report_gaps,
    request_only,
    short,
    site_class,
)
from ragdiag.checks.base import Check, Verdict
from ragdiag.checks.figures import column_values, plt, text
from ragdiag.checks.registry import register
from ragdiag.codescan.headers import permission_header_sites
from ragdiag.codescan.patterns import SECURITY_NAME_RE
from ragdiag.codescan.result import ACL_PARAMS, RETRIEVAL_GAPS
from ragdiag.model import Trace

__all__ = ["AclTrimming", "AclReader", "forbidden_records", "hostile_values", "probe_filter"]

ID = "acl_trimming"
_ESCAPED = re.compile(r"escape|quote|sanitiz|search_in", re.I)


def _slug(label: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in label).strip("_")


@dataclass
class _Run:
    """What one run of the check collects across its parts."""

    ran: list[Any] = field(default_factory=list)
    not_ran: list[Any] = field(default_factory=list)
    missing: list[tuple[Any, int, str]] = field(default_factory=list)  # queries without identity: what, n, examples
    causes: dict[str, Any] = field(default_factory=dict)               # profile -> why it can leak
    static_fails: list[Any] = field(default_factory=list)
    inj: Any = None
    unreadable: str | None = None   # the security field when returned documents cannot be verified


def _where(source: tuple[str, int]) -> str:
    file, line = source
    return f"{Path(file).name}:{line}" if file and line else (Path(file).name if file else "")


@register
class AclTrimming(Check):
    id = ID
    needs = ("client_code|profiles|traffic",)
    uses = ("target", "identities", "goldset", "query_log")
    figure_id = ID

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        policy = ctx.policy if ctx.has("profiles") else None
        scan = ctx.code_scan() if ctx.has("client_code") else None
        schema = ctx.target.schema() if ctx.has("target") else None
        st = _Run()
        sec = self._schema(v, spec, schema, policy, st)
        sf = policy.security_field if policy is not None else (sec[0].name if sec else None)
        headers = permission_header_sites(ctx.client_code) if scan is not None else ()
        trimming = [p for p in policy.profiles.values() if p.security_trimming] if policy is not None else []
        code_filters = request_only(scan.security_filters) if scan is not None else []
        code_acl = [a for a in request_only(scan.acl_sites) if a.mechanism != "odata_filter"] if scan is not None else []
        matters = bool(sec) or ctx.has("identities") or bool(trimming) or bool(code_filters) or bool(headers) \
            or bool(code_acl)
        self._profiles(v, policy, matters, st)
        escaped = self._code(v, scan, sf, headers, schema, st)
        self._identity_sources(v, ctx, sf, st)
        verified = self._probes(v, ctx, spec, policy, schema, sf, st) if policy is not None and schema else None
        judged = self._judged(v, ctx, spec, policy, schema, sf, st) if policy is not None and schema else None
        if verified and judged is not None and judged["leaks"]:
            verified = None  # a judged leak refutes what the probes showed
        for m in st.static_fails:  # after the leak verdict: the headline leads with what was measured
            v.fail(m.id.split(".", 1)[1], **m.params)
        if st.inj is not None:
            for label in st.inj.bad:
                v.fail("injection_widened", probe=v.msg(f"probe_{_slug(label)}"))
            if st.inj.bad:
                v.recommend("rec_escaping_builder")
        if st.missing:
            v.table("without_identity", "t_without_identity", ("where", "count", "examples"),
                    [(w, n, ex) for w, n, ex in st.missing])
            v.metric("queries_without_identity", sum(n for _, n, _ in st.missing))
            # a question asked without an identity matters only where someone could be trimmed
            if bool(spec.threshold("warn_missing_identity")) and matters:
                v.warn("without_identity", parts=tuple(v.msg("mi_count", what=w, n=n) if n else w
                                                       for w, n, _ in st.missing))

        # -- what was found, what was verified ---------------------------------------------------
        mechanisms = bool(trimming or code_filters or headers or code_acl)
        if schema is not None and mechanisms and not sec:
            v.warn("no_security_field", index=schema.name)
            v.recommend("rec_add_security_field", index=schema.name)
        if schema is not None and sec and not mechanisms and not st.static_fails:
            v.warn("security_fields_unused", index=schema.name, fields=tuple(f.name for f in sec),
                   files=scan.files_scanned if scan is not None else 0)
            v.recommend("rec_trim_every_request", field=sec[0].name)
        parts = []
        if verified:
            v.observed("verified_trimming_profiles", verified["profiles"])
            v.observed("leak_probe_requests", verified["requests"])
            parts.append(v.msg("part_profiles_verified", **verified))
            if judged is not None and judged["cases"]:
                v.observed("judged_leak_cases", judged["cases"])
                parts.append(v.msg("part_judged_verified", cases=judged["cases"]))
        gaps = report_gaps(v, scan, RETRIEVAL_GAPS, params=ACL_PARAMS + ("body",)) if scan is not None else []
        if escaped and gaps and not verified:
            v.warn("code_gaps", parts=gap_parts(v, gaps))  # a site it could not read may search untrimmed
        elif escaped:
            v.observed("escaped_code_filters", len(escaped))
            parts.append(v.msg("part_code_escaped", n=len(escaped), where=tuple(s.location for s in escaped)))
        if headers and schema is not None and schema.permission_filter_option == "enabled":
            v.observed("permission_headers_verified", len(headers))
            parts.append(v.msg("part_header_verified", where=tuple(h.location for h in headers[:3])))
        if parts:
            what = parts[0]
            for part in parts[1:]:
                what = v.msg("joined", a=what, b=part)
            v.passed("pass_verified", what=what)
        self._nothing_reason(v, ctx, st, scan, policy, trimming, code_filters, headers, schema, code_acl)
        if st.not_ran:
            v.note("scope_not_ran", ran=tuple(st.ran), not_ran=tuple(st.not_ran))
        else:
            v.note("scope", ran=tuple(st.ran))

    def observe(self, ctx: Any, spec: Any, v: Verdict) -> None:  # recorded traffic and traces
        _observed.acl_trimming(ctx, spec, v)

    # ---- schema ------------------------------------------------------------------------------------
    def _schema(self, v: Verdict, spec: Any, schema: Any, policy: Any, st: _Run) -> list[Any]:
        if schema is None:
            st.not_ran.append(v.msg("not_ran_target"))
            return []
        st.ran.append(v.msg("part_schema"))
        sec = list(schema.security_fields)
        root = policy.security_field.split("/")[0] if policy is not None else None
        if root and schema.has_field(root) and all(f.name != root for f in sec):
            sec.append(schema.field(root))
        v.table("security_fields", "t_security_fields", ("field", "type", "filterable", "retrievable",
                                                         "permission_filter", "used_by_policy"),
                [(f.name, f.type, f.filterable, f.retrievable, f.permission_filter or "", f.name == root)
                 for f in sec], note="n_native" if schema.permission_filter_option == "enabled" else None)
        retrievable = [f for f in sec if f.retrievable]
        v.metric("security_fields", len(sec))
        v.metric("retrievable_security_fields", len(retrievable))
        if retrievable and bool(spec.threshold("warn_retrievable_security_fields")):
            v.warn("retrievable", fields=tuple(f.name for f in retrievable))
        for f in retrievable:
            v.recommend("rec_not_retrievable", field=f.name, index=schema.name)
        # a policy in which no profile trims never builds its identity clause: its (default)
        # security_field is then no claim about the index (init's policy of an index without one)
        trims = policy is not None and any(p.security_trimming for p in policy.profiles.values())
        if root and trims and not schema.has_field(root):
            v.warn("policy_field_missing", field=policy.security_field, index=schema.name)
            if sec:
                v.recommend("rec_set_security_field", fields=tuple(f.name for f in sec))
            else:  # nothing to point the policy at: trim in the index, or say nothing needs trimming
                v.recommend("rec_add_security_field", index=schema.name)
                v.recommend("rec_trimming_off_if_public", path=Path(policy.path).name if policy.path else "the policy")
        return sec

    # ---- profiles ------------------------------------------------------------------------------------
    def _profiles(self, v: Verdict, policy: Any, matters: bool, st: _Run) -> None:
        """Why each profile can leak (`st.causes`) and the fails that says (`st.static_fails`)."""
        if policy is None:
            st.not_ran.append(v.msg("not_ran_profiles"))
            return
        st.ran.append(v.msg("part_profiles"))
        sf, causes, fails, rows = policy.security_field, st.causes, st.static_fails, []
        for p in policy.profiles.values():
            drops = identity_drops(p, sf)
            req = p.build("example question", EXAMPLE_IDENTITY, security_field=sf)
            if not p.security_trimming:
                verdict = v.msg("verdict_no_trimming")
                causes[p.name] = v.msg("cause_no_trimming")
                if matters:
                    fails.append(v.msg("profile_no_trimming", profile=p.name))
                    v.recommend("rec_trimming_on", profile=p.name, field=sf)
                    if p.source[0]:
                        v.location(p.source[0], p.source[1], "loc_no_trimming", level="error", profile=p.name)
            elif drops:
                verdict = v.msg("verdict_drops", queries=tuple(d.index for d in drops))
                causes[p.name] = tuple(v.msg("cause_override", n=d.index, fields=d.fields, override=d.override)
                                       for d in drops)
                for d in drops:
                    fails.append(v.msg("override_drops", profile=p.name, n=d.index, fields=d.fields,
                                       override=d.override))
                    if d.source[0] or p.source[0]:
                        file, line = d.source if d.source[0] else p.source
                        v.location(file, line, "loc_override", level="error", override=d.override)
                v.recommend("rec_repeat_in_override", profile=p.name, queries=tuple(d.index for d in drops))
            else:
                verdict = v.msg("verdict_ok")
            rows.append((p.name, _where(p.source), p.security_trimming, p.security_trimming, req.filter or "",
                         sum(1 for vq in p.vector_queries if vq.filter_override), tuple(d.index for d in drops),
                         verdict))
        v.table("identity_clause", "t_identity_clause", ("profile", "defined_at", "security_trimming",
                                                         "escaped_search_in", "example_filter", "filter_overrides",
                                                         "dropping_overrides", "verdict"), rows,
                note="n_identity_clause", example=EXAMPLE_IDENTITY.name)
        v.metric("override_drops", sum(len(c) for c in causes.values() if isinstance(c, tuple)))

    # ---- client code ------------------------------------------------------------------------------------
    def _code(self, v: Verdict, scan: Any, sf: str | None, headers: tuple[Any, ...], schema: Any,
              st: _Run) -> list[Any]:
        """Judge the request path's trimming in the code; returns the escaped identity clauses.

        Security filters, permission mechanisms and fail-open paths of every class are listed;
        only request-path ones pass or fail (an admin script's filter protects nobody's answer).
        """
        if scan is None:
            st.not_ran.append(v.msg("not_ran_code"))
            return []
        st.ran.append(v.msg("part_code"))
        rows, escaped = [], []
        for s in scan.security_filters:
            if s.injection_risk:
                verdict = "verdict_injection"
            elif s.from_request:
                verdict = "verdict_from_request"
            elif s.from_llm:
                verdict = "verdict_from_llm"
            elif not s.uses_search_in:
                verdict = "verdict_no_search_in"
            else:
                verdict = "verdict_ok"
            if on_request_path(s) and s.escaped and not s.from_request and not s.injection_risk and not s.from_llm:
                escaped.append(s)
            rows.append((at(s), site_class(v, s), s.function, s.expression, s.uses_search_in, s.escaped,
                         s.from_identity, s.from_request, s.fstring, v.msg(verdict)))
        if rows:
            v.table("code_filters", "t_code_filters", ("site", "site_class", "function", "expression", "search_in",
                                                       "escaped", "from_identity", "from_request", "interpolated",
                                                       "verdict"), rows)
        if headers:
            v.table("permission_headers", "t_headers", ("site", "code"), [(h.location, h.text) for h in headers])
            if schema is not None and schema.permission_filter_option != "enabled":
                v.warn("header_without_native_acl", where=headers[0].location, index=schema.name)
        v.metric("permission_header_sites", len(headers))
        v.metric("escaped_code_filters", len(escaped))
        risks = scan.injection_risks("request")
        v.metric("code_injection_risks", len(risks))
        for s in risks:
            st.static_fails.append(v.msg("code_injection", where=at(s),
                                         source=v.msg("src_request" if s.from_request else "src_interpolated")))
            locate(v, s, "loc_injection", level="error")
            v.recommend("rec_escape_code", where=at(s), function=s.function, field=sf or "group_ids",
                        expression=s.expression[:60])
        fail_open = self._mechanisms_and_fail_open(v, scan, st, {at(s) for s in risks})
        for s in request_only(scan.security_filters):
            if s.from_request and not s.injection_risk and (at(s), "ids_from_request") not in fail_open:
                st.missing.append((v.msg("mi_code_request"), 1, at(s)))
                v.recommend("rec_identity_from_token", where=at(s), function=s.function)
        absent = next((d.values.get("absent", ()) for d in scan.drift()
                       if d.kind == "security_clause" and d.param == "security filter"), ())
        if absent:
            present = next(d.values.get("present", ()) for d in scan.drift()
                           if d.kind == "security_clause" and d.param == "security filter")
            st.missing.append((v.msg("mi_code_no_clause"), len(absent), ", ".join(absent)))
            st.static_fails.append(v.msg("code_no_clause", absent=len(absent), total=len(absent) + len(present),
                                         where=short(v, absent)))
            v.recommend("rec_clause_at_sites", where=tuple(absent))
        self._agents(v, scan, st)
        self._interpolated(v, scan)
        mechanisms = request_only(scan.acl_sites) or request_only(scan.security_filters) or headers
        if not mechanisms and scan.request_sites():
            v.note("no_trimming_note", sites=len(scan.request_sites()))
        return escaped

    def _mechanisms_and_fail_open(self, v: Verdict, scan: Any, st: _Run, risky: set[str]) -> set[tuple[str, str]]:
        """The permission mechanisms and the paths on which they fail open; returns (where, kind) judged."""
        if scan.acl_sites:
            v.table("acl_mechanisms", "t_mechanisms", ("site", "site_class", "function", "mechanism", "detail",
                                                       "enabled_by", "search_site"),
                    [(at(a), site_class(v, a), a.function, v.msg(f"mech_{a.mechanism}"), a.detail, a.enabled_by,
                      a.site) for a in scan.acl_sites], note="n_mechanisms")
        if scan.fail_open:
            v.table("fail_open", "t_fail_open", ("site", "site_class", "function", "kind", "evidence", "search_site"),
                    [(at(f), site_class(v, f), f.function, v.msg(f"fo_{f.kind}"), f.evidence, f.site)
                     for f in scan.fail_open], note="n_fail_open")
        v.metric("acl_mechanisms", ", ".join(sorted({a.mechanism for a in request_only(scan.acl_sites)})) or None)
        judged: set[tuple[str, str]] = set()
        off: set[str] = set()
        for f in request_only(scan.fail_open):
            where = at(f)
            judged.add((where, f.kind))
            if f.kind == "unescaped_interpolation" and where in risky:
                continue  # already failed as an injection risk of the security filter
            if f.kind == "off_by_default":
                off.add(where)
                v.warn("fail_open_off_by_default", where=where, evidence=f.evidence)
                locate(v, f, "loc_fo_off_by_default")
                v.recommend("rec_fo_off_by_default", where=where)
                continue
            st.static_fails.append(v.msg(f"fail_open_{f.kind}", where=where, evidence=f.evidence))
            locate(v, f, f"loc_fo_{f.kind}", level="error")
            v.recommend(f"rec_fo_{f.kind}", where=where, function=f.function)
        for a in request_only(scan.acl_sites):
            if a.enabled_by and at(a) not in off and not any(f.kind == "off_by_default" and f.site == a.site
                                                             for f in scan.fail_open if a.site):
                v.warn("trimming_conditional", where=at(a), condition=a.enabled_by, mechanism=v.msg(f"mech_{a.mechanism}"))
                locate(v, a, "loc_conditional", condition=a.enabled_by)
        v.metric("fail_open_paths", len([f for f in request_only(scan.fail_open)]))
        return judged

    def _agents(self, v: Verdict, scan: Any, st: _Run) -> None:
        """Agent loops: a search node without the identity's clause, while another path trims, fails open."""
        trims = bool(request_only(scan.acl_sites) or request_only(scan.security_filters))
        for g in request_only(scan.agent_graphs):
            secured = [n for n in g.search_nodes if n not in g.unsecured_search_nodes]
            if g.unsecured_search_nodes and (secured or trims):
                st.static_fails.append(v.msg("agent_unsecured", where=at(g), nodes=g.unsecured_search_nodes))
                locate(v, g, "loc_agent_unsecured", level="error", nodes=g.unsecured_search_nodes)
                v.recommend("rec_agent_secure", nodes=g.unsecured_search_nodes, where=at(g))
            if g.rewrite_nodes_touching_filters and (secured or trims):
                st.static_fails.append(v.msg("agent_rewrite_drops", where=at(g),
                                             nodes=g.rewrite_nodes_touching_filters))
                locate(v, g, "loc_agent_rewrite_drops", level="error", nodes=g.rewrite_nodes_touching_filters)
                v.recommend("rec_agent_keep_clause", nodes=g.rewrite_nodes_touching_filters)

    @staticmethod
    def _interpolated(v: Verdict, scan: Any) -> None:
        """Request-path filters that interpolate values without a visible escaping call (evidence, not a verdict)."""
        covered = {x for s in scan.security_filters if s.escaped for x in re.findall(r"[A-Za-z_][\w.]*", s.expression)}
        rows = []
        for s in scan.request_sites():
            p = s.params.get("filter")
            if p is None or not (p.from_fstring or p.fstring_vars):
                continue
            raw = [x for x in p.fstring_vars if not _ESCAPED.search(x) and not SECURITY_NAME_RE.search(x)
                   and not x.isupper() and x not in covered]
            if raw:
                rows.append((at(s), s.function, p.expression or p.source, tuple(raw)))
        if rows:
            v.table("interpolated_filters", "t_interpolated", ("site", "function", "expression", "values"), rows,
                    note="n_interpolated")


    # ---- questions asked without an identity ------------------------------------------------------
    def _identity_sources(self, v: Verdict, ctx: Any, sf: str | None, st: _Run) -> None:
        if ctx.goldset is not None:
            anon = [c for c in ctx.goldset if not c.as_user]
            if anon:
                st.missing.append((v.msg("mi_goldset_anon"), len(anon), ", ".join(c.id for c in anon[:10])))
                v.recommend("rec_goldset_as_user", n=len(anon))
            unknown = sorted({c.as_user for c in ctx.goldset if c.as_user and c.as_user not in ctx.identities})
            if unknown:
                st.missing.append((v.msg("mi_goldset_unknown"), len(unknown), ", ".join(unknown)))
        if ctx.query_log is not None and sf:
            field = sf.split("/")[0]
            no_user = [e for e in ctx.query_log.entries if not e.user]
            no_clause = [e for e in ctx.query_log.entries if e.filter is not None and field not in e.filter]
            if no_user:
                st.missing.append((v.msg("mi_log_no_user"), len(no_user),
                                     ", ".join(f"line {e.line}" for e in no_user[:10])))
            if no_clause:
                st.missing.append((v.msg("mi_log_no_clause", field=field), len(no_clause),
                                     ", ".join(f"line {e.line}" for e in no_clause[:10])))

    # ---- probes ------------------------------------------------------------------------------------------
    def _probes(self, v: Verdict, ctx: Any, spec: Any, policy: Any, schema: Any, sf: str | None,
                st: _Run) -> dict[str, Any] | None:
        """Leak and injection probes; the verification when every trimming profile held."""
        if not sf:
            return None
        field = sf.split("/")[0]
        if not schema.has_field(field):
            # every probe would be refused by the index: that is the policy's fault (warned in
            # `_schema`), not a failed measurement; a policy that trims nowhere has nothing to probe
            if any(p.security_trimming for p in policy.profiles.values()):
                st.not_ran.append(v.msg("not_ran_field_missing", field=field, index=schema.name))
            return None
        reader = AclReader(ctx, schema.key_field.name, field)
        v.metric("security_values_read_via", reader.method or None)
        if not reader.method:
            st.unreadable = field
            st.not_ran.append(v.msg("not_ran_verification", field=field))
        leak = None
        if not ctx.has("identities"):
            st.not_ran.append(v.msg("not_ran_identities"))
            st.missing.append((v.msg("mi_no_identities"), 0, ""))
        else:
            st.ran.append(v.msg("part_leak"))
            leak = leak_probes(ctx, policy, schema, reader, field)
            v.requests(leak.results, profiles=leak.profiles)
            self._leak_verdict(v, spec, leak, st.causes, field, reader)
        trimming = [p for p in policy.profiles.values() if p.security_trimming]
        if trimming:
            st.ran.append(v.msg("part_injection"))
            st.inj = injection_probes(ctx, policy, reader, field)
            v.requests(st.inj.results, profiles=[st.inj.searched_through] * len(st.inj.results))
            self._injection_tables(v, st.inj)
        ok = [r for r in (leak.results if leak else ()) if isinstance(r, Trace)]
        full = [p for p in trimming if p.name not in st.causes]
        if leak is None or not ok or not reader.method or not full or st.inj is None or st.inj.bad \
                or len(leak.leak_rows) > int(spec.threshold("max_leaks")) \
                or any(row[7] for row in leak.summary):
            return None
        return {"profiles": len(full), "requests": len(ok), "hostile": len(st.inj.rows)}

    def _judged(self, v: Verdict, ctx: Any, spec: Any, policy: Any, schema: Any, sf: str | None,
                st: _Run) -> dict[str, int] | None:
        """Leaks the goldset judges: its restricted cases run through the routed policy, each
        retrieved source it forbids their identity counted, whatever the index's groups say."""
        from ragdiag.checks._goldset_leaks import judged_leaks

        gs = ctx.goldset
        if gs is None or not gs.forbidden():
            return None
        st.ran.append(v.msg("part_judged"))
        run = ctx.run_gold(policy, label="baseline")
        v.requests(run)
        leaks, judged = judged_leaks(ctx, run)
        v.metric("judged_leak_cases", len(judged))
        v.metric("judged_leaks", len(leaks))
        if not leaks:
            return {"cases": len(judged), "leaks": 0}
        field = (sf or "").split("/")[0]
        reader = AclReader(ctx, schema.key_field.name, field) if field and schema.has_field(field) else None
        groups = reader.values([k for j in leaks for k in j.keys]) if reader is not None and reader.can_read_values \
            else {}
        rows = []
        for j in leaks:
            for key, rank in zip(j.keys, j.ranks, strict=True):
                held = groups.get(key)
                rows.append((j.as_user, j.case_id, j.profile, key, tuple(held) if held is not None else None,
                             rank, j.by))
        v.table("judged_leaks", "t_judged_leaks", ("identity", "case", "profile", "leaked_key", "its_groups",
                                                    "rank", "forbidden_by"), rows[:200], note="n_judged_leaks")
        if len(leaks) > int(spec.threshold("max_leaks")):
            admitted = sum(1 for r in rows if r[4] is not None and sf)
            v.fail("judged_leaks", n=len(leaks), cases=len(judged), keys=len({r[3] for r in rows}),
                   identities=len({j.as_user for j in leaks}))
            if admitted:
                v.recommend("rec_judged_groups", field=field)
            else:
                v.recommend("rec_judged_trim", field=field or "group_ids")
        return {"cases": len(judged), "leaks": len(leaks)}

    def _leak_verdict(self, v: Verdict, spec: Any, leak: Any, causes: dict[str, Any], field: str,
                      reader: AclReader) -> None:
        rows = leak.leak_rows
        v.metric("leaked_results", len(rows))
        v.metric("leaked_documents", len({r[4] for r in rows}))
        v.metric("leak_probe_requests", sum(r[3] for r in leak.summary))
        v.metric("identities_probed", len(leak.summary))
        v.table("leak_probes", "t_leak_probes", ("identity", "groups", "probe_questions", "requests", "results",
                                                 "outside", "leaked_documents", "unverified"), leak.summary,
                note="n_leak_probes", via=v.msg(f"read_{reader.method or 'none'}"))

        def cause(profile: str) -> Any:
            return causes.get(profile) or v.msg("cause_unknown", field=field)

        if rows:
            v.table("leaked_results", "t_leaked", ("identity", "profile", "question", "probe", "leaked_key",
                                                   "its_groups", "rank", "cause"),
                    [(*r, v.msg("joined_list", items=cause(r[1]))) for r in rows[:200]],
                    note="n_leaked" if len(rows) > 200 else None, n=len(rows))
        if len(rows) > int(spec.threshold("max_leaks")):
            by_profile = Counter(r[1] for r in rows)
            v.fail("leaks", leaks=len(rows), requests=sum(r[3] for r in leak.summary),
                   via=tuple(v.msg("via_profile", n=n, profile=p, cause=cause(p)) for p, n in by_profile.most_common()),
                   identities=len({r[0] for r in rows}))
            for p in by_profile:
                if p not in causes:
                    v.recommend("rec_check_clause", profile=p, field=field)

    def _injection_tables(self, v: Verdict, inj: Any) -> None:
        v.metric("injection_probes", len(inj.rows))
        v.metric("injection_failures", len(inj.bad))
        rows = []
        for s in inj.rows:
            control = s["control"]
            own = None if not control else all(control)
            problem = bool(s["admitted"] or s["parse"] or s["outside"])
            verdict = "verdict_widened" if problem else (
                "verdict_restrictive_own_lost" if control and not all(control) else "verdict_restrictive")
            rows.append((v.msg(f"probe_{_slug(s['label'])}"), s["groups"], s["filters"], s["admitted"],
                         s["parse"], own, s["hits"], s["outside"], v.msg(verdict)))
        v.table("injection_probes", "t_injection", ("probe", "groups", "filters", "admitted", "parse_errors",
                                                    "own_value_matches", "search_results", "outside_groups",
                                                    "verdict"), rows,
                note="n_injection" if inj.searched_through else "n_injection_no_search",
                forbidden=FORBIDDEN_GROUP, profile=inj.searched_through or "")
        if inj.detail:
            v.table("injection_failures", "t_injection_failures", ("probe", "profile", "filter", "problem"),
                    [(v.msg(f"probe_{_slug(label)}"), prof, flt, v.msg(f"problem_{code}", detail=d))
                     for label, prof, flt, code, d in inj.detail[:200]])

    # ---- why nothing could be judged ----------------------------------------------------------------
    def _nothing_reason(self, v: Verdict, ctx: Any, st: _Run, scan: Any, policy: Any, trimming: list[Any],
                        code_filters: list[Any], headers: tuple[Any, ...], schema: Any, code_acl: list[Any]) -> None:
        what = []
        if trimming:
            what.append(v.msg("what_profiles", n=len(trimming)))
        if code_filters:
            what.append(v.msg("what_code", n=len(code_filters)))
        if headers:
            what.append(v.msg("what_header", where=headers[0].location))
        elif code_acl:
            what.append(v.msg("what_mechanism", mechanism=v.msg(f"mech_{code_acl[0].mechanism}"), where=at(code_acl[0])))
        if not what:
            gaps = scan.gaps_in(RETRIEVAL_GAPS, params=ACL_PARAMS + ("body",)) if scan is not None else ()
            if scan is not None and scan.request_sites() and gaps:
                # "no trimming" only when every request-path site was read: a filter, a body or a wrapper it
                # could not resolve may hold the clause
                v.nothing_observed("no_mechanism_incomplete", sites=len(scan.request_sites()),
                                   parts=gap_parts(v, list(gaps)))
            elif scan is not None and scan.request_sites():
                v.nothing_observed("no_mechanism_request", sites=len(scan.request_sites()), files=scan.files_scanned)
            elif scan is not None and gaps:
                v.nothing_observed("no_mechanism_gaps_only", files=scan.files_scanned, parts=gap_parts(v, list(gaps)))
            elif scan is not None:
                v.nothing_observed("no_mechanism", files=scan.files_scanned)
            else:
                v.nothing_observed("no_mechanism_profiles", profiles=len(policy.profiles) if policy is not None else 0)
            return
        if schema is None:
            why = v.msg("why_no_target")
        elif trimming and not ctx.has("identities"):
            why = v.msg("why_no_identities")
        elif st.unreadable:
            why = v.msg("why_unreadable", field=st.unreadable)
        else:
            why = v.msg("why_not_verified")
        v.nothing_observed("not_verified", what=tuple(what), why=why)

    def draw(self, finding: Any, lang: str = "en") -> Any:
        leaks = column_values(finding, "leak_probes", "identity", "requests", "outside")
        inj = column_values(finding, "injection_probes", "probe", "filters", "admitted", "parse_errors",
                            "outside_groups")
        if not leaks and not inj:
            return None
        pyplot = plt()
        fig, axes = pyplot.subplots(1, 2, figsize=(11, 3.6))
        if leaks:
            names = [str(r[0]) for r in leaks]
            x = list(range(len(names)))
            axes[0].bar([i - 0.2 for i in x], [int(r[1]) for r in leaks], width=0.4, color="tab:blue",
                        label=text(ID, "fig_requests", lang))
            axes[0].bar([i + 0.2 for i in x], [int(r[2]) for r in leaks], width=0.4, color="tab:red",
                        label=text(ID, "fig_outside", lang))
            for i, r in enumerate(leaks):
                axes[0].text(i + 0.2, int(r[2]), str(r[2]), ha="center", va="bottom", fontsize=7)
            axes[0].set_xticks(x, names, rotation=30, fontsize=8)
            axes[0].set_title(text(ID, "fig_leaks_title", lang))
            axes[0].legend(fontsize=8)
        else:
            axes[0].set_axis_off()
        if inj:
            names = [str(r[0]) for r in inj]
            evaluated = [int(r[1]) for r in inj]
            bad = [int(r[2]) + int(r[3]) + int(r[4] or 0) for r in inj]
            y = list(range(len(names)))
            axes[1].barh([i - 0.2 for i in y], evaluated, height=0.4, color="tab:blue",
                         label=text(ID, "fig_evaluated", lang))
            axes[1].barh([i + 0.2 for i in y], bad, height=0.4, color="tab:red",
                         label=text(ID, "fig_not_restrictive", lang))
            axes[1].set_yticks(y, names, fontsize=8)
            axes[1].invert_yaxis()
            axes[1].set_xlim(0, max(evaluated + bad + [1]) * 1.6)
            axes[1].set_title(text(ID, "fig_injection_title", lang))
            axes[1].legend(fontsize=8, loc="lower right")
        else:
            axes[1].set_axis_off()
        fig.tight_layout()
        return fig

