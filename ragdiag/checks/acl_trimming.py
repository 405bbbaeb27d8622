"""Check 9: does the search service trim permissions with the user's rights?

Four parts, each run when its inputs are there (the headline says which ran):

- Schema: the security fields (filterable collections of group or user ids,
  native permission-filter fields); a retrievable security field warns.
- Profiles: every profile must build the identity clause (``security_trimming``)
  with ``search.in`` over escaped values (the profile layer's
  `odata.search_in_any`), and no vector query's ``filter_override`` may drop it
  (``override_security = false``); either fault fails.
- Client code: security filters interpolated without escaping (an f-string or
  template literal from request data) fail; an escaped filter taken from the
  request instead of the caller's token, and call sites without any security
  clause, warn as queries without an identity.
- Probes. Leak probes: for every identity, questions aimed at documents it
  must not see, (a) the goldset's refused cases asked as that identity and (b)
  the titles of a few documents carrying a group the identity lacks and none
  it has, asked through every profile with the identity; every returned result
  whose security values do not intersect the identity's groups is a leak, and
  the only acceptable count is ``max_leaks`` (0). Injection probes: hostile
  group values (a quote break-out with ``or true``, commas, spaces, ``|``, a
  quote, ``*``, an empty string, an empty list) go through each profile's
  filter builder; the resulting filter is parsed and evaluated on records
  holding only groups the hostile identity does not have (``hr`` and the
  fragments the value would split into) and must reject them all; one probe
  search per value must return nothing outside the hostile identity's groups.

Security values of returned documents are read from the local index's records,
else from the field when it is retrievable, else by filtering on the key and
the negated identity clause (needs the key and the field filterable).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from itertools import islice
from pathlib import Path
from typing import Any

from ragdiag import odata
from ragdiag.checks._common import evidence
from ragdiag.checks.registry import register
from ragdiag.errors import RagdiagError
from ragdiag.model import SearchRequest, Trace
from ragdiag.model.findings import Finding
from ragdiag.policy.profile import Identity

ID = "acl_trimming"
PROBE_DOCS_PER_GROUP = 3   # probe questions per (identity, group it lacks)
PROBE_SCAN_LIMIT = 500     # documents read to find those questions
VALUE_SCAN_LIMIT = 20000   # documents read to discover security values when the index is remote


def hostile_values(field: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(label, groups) of the injection probes; the first break-outs name the security field so
    that an unescaped builder yields a filter that parses and widens."""
    return (
        ("quote break-out with or", (f"x') or {field}/any(g: g ne 'x",)),
        ("or true inside the lambda", ("x' or true or g eq 'x",)),
        ("quote break-out with or true", ("x') or true or ('",)),
        ("comma and space", ("sales, hr",)),
        ("comma", ("sales,hr",)),
        ("space", ("all staff",)),
        ("pipe delimiter", ("a|b",)),
        ("quote", ("o'hr",)),
        ("wildcard", ("*",)),
        ("empty string", ("",)),
        ("empty list", ()),
    )


FORBIDDEN_GROUP = "hr"  # a group no hostile identity holds; the records tested carry it
_SPLIT = re.compile(r"[\s,|;']+")


# ---- reading security values back ------------------------------------------------------------
class AclReader:
    """The security values of documents by key, however the target allows reading them."""

    def __init__(self, target: Any, key: str, field: str) -> None:
        self.target, self.key, self.field = target, key, field
        schema = target.schema()
        f = schema.field(field) if schema.has_field(field) else None
        key_filterable = schema.key_field.filterable
        self.records = getattr(target, "records", None)
        self.row_of = getattr(target, "row_of", None)
        if self.records is not None and self.row_of is not None:
            self.method = "index records (local target)"
        elif f is not None and f.retrievable:
            self.method = "retrievable field"
        elif f is not None and f.filterable and key_filterable:
            self.method = "filter on key and negated identity clause (field not retrievable)"
        else:
            self.method = ""
        self.key_filterable = key_filterable

    @property
    def can_read_values(self) -> bool:
        return self.method.startswith(("index records", "retrievable"))

    def values(self, keys: list[str]) -> dict[str, tuple[str, ...] | None]:
        """key -> security values (None: unknown)."""
        keys = list(dict.fromkeys(keys))
        if self.method.startswith("index records"):
            out: dict[str, tuple[str, ...] | None] = {}
            for k in keys:
                row = self.row_of.get(k)
                out[k] = None if row is None else tuple(self.records[row].get(self.field) or ())
            return out
        if self.method.startswith("retrievable"):
            out = dict.fromkeys(keys)
            if self.key_filterable:
                for chunk in _chunks(keys, 100):
                    flt = _key_in(self.key, chunk)
                    for d in self.target.iter_documents(select=[self.key, self.field], filter=flt):
                        out[d.get(self.key)] = tuple(d.get(self.field) or ())
            else:
                getter = getattr(self.target, "get_document", None)
                for k in keys:
                    try:
                        d = getter(k, select=[self.key, self.field]) if getter else None
                    except Exception:
                        d = None
                    out[k] = tuple(d.get(self.field) or ()) if d else None
            return out
        return dict.fromkeys(keys)

    def outside(self, keys: list[str], groups: tuple[str, ...]) -> tuple[set[str], set[str]]:
        """(keys outside the rights of `groups`, keys that could not be verified)."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return set(), set()
        if self.can_read_values:
            vals = self.values(keys)
            mine = set(groups)
            unknown = {k for k, v in vals.items() if v is None}
            return {k for k, v in vals.items() if v is not None and not set(v) & mine}, unknown
        if self.method:
            out: set[str] = set()
            clause = odata.search_in_any(self.field, [g for g in groups if g])
            for chunk in _chunks(keys, 100):
                flt = f"{_key_in(self.key, chunk)} and not ({clause})"
                out |= {d.get(self.key) for d in self.target.iter_documents(select=[self.key], filter=flt)}
            return out, set()
        return set(), set(keys)

    def universe(self) -> tuple[set[str], str]:
        """Security values present in the index (as far as they can be read) and how they were found."""
        if self.method.startswith("index records"):
            vals = {v for r in self.records for v in (r.get(self.field) or ())}
            return vals, "all index records"
        if self.method.startswith("retrievable"):
            docs = islice(self.target.iter_documents(select=[self.key, self.field]), VALUE_SCAN_LIMIT)
            return {v for d in docs for v in (d.get(self.field) or ())}, f"first {VALUE_SCAN_LIMIT} documents"
        return set(), "not readable"


def _key_in(key: str, keys: list[str]) -> str:
    delim = odata.pick_delimiter(keys)
    return f"search.in({key}, {odata.quote(delim.join(keys))}, {odata.quote(delim)})"


def _chunks(items: list[str], n: int) -> list[list[str]]:
    return [items[i:i + n] for i in range(0, len(items), n)]


# ---- injection probes ---------------------------------------------------------------------------
def forbidden_records(groups: tuple[str, ...]) -> list[list[str]]:
    """Security values a hostile identity with `groups` must not match: `hr`, the pieces its
    values split into on delimiters, and no groups at all."""
    own = set(groups)
    # the pieces a delimiter-splitting builder would make of a plain value (break-outs are judged whole)
    pieces = {p for g in groups if not set(g) & set("'()") for p in _SPLIT.split(g) if p} - own
    out = [[FORBIDDEN_GROUP]] if FORBIDDEN_GROUP not in own else []
    out += [[p] for p in sorted(pieces) if p != FORBIDDEN_GROUP]
    out.append([])
    return out


def _identity_part(with_id: str | None, without_id: str | None) -> str | None:
    """The clauses of `with_id` that the filter without identity does not have, and-ed."""
    if with_id is None:
        return None
    base = {c.text for c in odata.clauses(odata.parse(without_id))} if without_id else set()
    extra = [c.text for c in odata.clauses(odata.parse(with_id)) if c.text not in base]
    if not extra:
        return None
    return " and ".join(f"({t})" for t in extra) if len(extra) > 1 else extra[0]


def probe_filter(with_id: str | None, without_id: str | None, field: str, groups: tuple[str, ...],
                 base: dict[str, Any] | None = None) -> dict[str, Any]:
    """Evaluate one filter built for a hostile identity: does it admit any forbidden record?

    Returns {"parse_error", "no_identity_clause", "admitted" (forbidden values it admits),
    "control" (True/False/None: whether a record holding the identity's own value still matches)}.
    `base` is a document satisfying the filter without the identity clause; with it the whole
    filter is evaluated, else only the identity part.
    """
    res: dict[str, Any] = {"parse_error": "", "no_identity_clause": False, "admitted": [], "control": None}
    try:
        part = _identity_part(with_id, without_id)
    except RagdiagError as exc:
        res["parse_error"] = str(exc)
        return res
    if part is None:
        res["no_identity_clause"] = True
        return res

    def admits(values: list[str]) -> bool:
        ok = odata.evaluate(part, {**(base or {}), field: values})
        if base is not None and with_id is not None:
            ok = ok or odata.evaluate(with_id, {**base, field: values})
        return ok

    try:
        res["admitted"] = [v for v in forbidden_records(groups) if admits(v)]
        own = [g for g in groups if g]
        res["control"] = admits(own[:1]) if own else None
    except RagdiagError as exc:
        res["parse_error"] = str(exc)
    return res


def _base_record(target: Any, flt: str | None, field: str, cache: dict[str | None, Any]) -> dict[str, Any] | None:
    """A document that passes `flt` (only the fields it reads), or {} without a filter."""
    if flt is None:
        return {}
    if flt in cache:
        return cache[flt]
    rec = None
    try:
        fields = sorted(odata.fields_of(odata.parse(flt)) - {field})
        if fields:
            rec = next(iter(target.iter_documents(select=fields, filter=flt)), None)
        else:
            rec = {}
    except Exception:
        rec = None
    cache[flt] = rec
    return rec


def _show(value: tuple[str, ...]) -> str:
    return "[]" if not value else ", ".join(repr(v) for v in value)


@register
class AclTrimming:
    id = ID
    needs = ()
    uses = ("target", "profiles", "identities", "goldset", "query_log", "client_code")

    def run(self, ctx: Any, spec: Any) -> Finding:
        max_leaks = int(spec.threshold("max_leaks"))
        warn_retrievable = bool(spec.threshold("warn_retrievable_security_fields"))
        warn_missing = bool(spec.threshold("warn_missing_identity"))
        policy = ctx.policy
        schema = ctx.target.schema() if ctx.target is not None else None
        scan = ctx.code_scan()
        if schema is None and policy is None and scan is None:
            return Finding.skipped(ID, "no target, profiles or client code to examine",
                                   what_to_supply="a target, [inputs] profiles and [identities] in the audit config")
        fails: list[str] = []
        warns: list[str] = []
        recs: list[str] = []
        ran: list[str] = []
        not_ran: list[str] = []
        ev = []
        metrics: dict[str, Any] = {}
        inc: dict[str, int] = {}
        sf = policy.security_field if policy is not None else None

        # -- schema -------------------------------------------------------------------------------------
        if schema is not None:
            ran.append("schema")
            sec = list(schema.security_fields)
            if sf and schema.has_field(sf.split("/")[0]) and all(f.name != sf.split("/")[0] for f in sec):
                sec.append(schema.field(sf.split("/")[0]))
            if sf is None and sec:
                sf = sec[0].name
            rows = [(f.name, f.type, f.filterable, f.retrievable, f.permission_filter or "",
                     "yes" if policy is not None and f.name == policy.security_field.split("/")[0] else "no")
                    for f in sec]
            ev.append(evidence("Security fields in the schema", ("field", "type", "filterable", "retrievable",
                                                                 "native permission filter", "used by the policy"),
                               rows, note=("native permission filtering is enabled: Azure trims with the "
                                           "user's token; the probes here test the filter-based clause")
                               if schema.permission_filter_option == "enabled" else ""))
            metrics["security_fields"] = len(sec)
            retrievable = [f for f in sec if f.retrievable]
            metrics["retrievable_security_fields"] = len(retrievable)
            if not sec:
                warns.append(f"index '{schema.name}' has no security field (no filterable collection of group "
                             f"or user ids, no native permission filter): nothing can be trimmed")
                recs.append(f"add a filterable, non-retrievable Collection(Edm.String) field such as group_ids to "
                            f"index '{schema.name}' holding the ids of the groups allowed to see each chunk")
            if retrievable and warn_retrievable:
                warns.append("security field(s) " + ", ".join(f"'{f.name}'" for f in retrievable)
                             + " are retrievable")
            for f in retrievable:
                recs.append(f"make '{f.name}' non-retrievable in index '{schema.name}' (retrievable: false): filter "
                            f"on it on every request, never return it")
            if policy is not None and not schema.has_field(policy.security_field.split("/")[0]):
                warns.append(f"the policy builds the identity clause on '{policy.security_field}', which index "
                             f"'{schema.name}' does not have")
                recs.append(f"set [policy] security_field to the index's security field "
                            f"({', '.join(f.name for f in sec) or 'none exists'})")

        # -- profiles -----------------------------------------------------------------------------------
        open_profiles: dict[str, str] = {}
        if policy is not None:
            ran.append("profiles")
            example = next(iter(ctx.identities.values()), None) or Identity("example", ("group-a", "group-b"))
            rows = []
            for p in policy.profiles.values():
                req = p.build("example question", example, security_field=policy.security_field)
                dropped = [i for i, vq in enumerate(p.vector_queries, 1)
                           if vq.filter_override is not None and not vq.override_security]
                clause = odata.search_in_any(policy.security_field, example.groups) if p.security_trimming else ""
                verdict = "ok"
                if not p.security_trimming:
                    verdict = "no identity clause (security_trimming = false)"
                    open_profiles[p.name] = verdict
                    recs.append(f"profile '{p.name}': set security_trimming = true (or remove it): every request "
                                f"must carry {policy.security_field}/any(g: search.in(g, '<caller groups>', '|'))")
                elif dropped:
                    verdict = ("filter_override of vector quer" + ("y " if len(dropped) == 1 else "ies ")
                               + ", ".join(map(str, dropped)) + " drops the identity clause (override_security = false)")
                    open_profiles[p.name] = verdict
                    recs.append(f"profile '{p.name}': repeat the security clause in the filter_override of vector "
                                f"quer{'y' if len(dropped) == 1 else 'ies'} {', '.join(map(str, dropped))} (set "
                                f"override_security = true); an override replaces the top-level filter")
                where = f"{Path(p.source[0]).name}:{p.source[1]}" if p.source[0] and p.source[1] else (
                    Path(p.source[0]).name if p.source[0] else "")
                rows.append((p.name, where, p.security_trimming,
                             "yes" if p.security_trimming and clause.startswith(f"{policy.security_field}/any") else
                             ("-" if not p.security_trimming else "no (empty identity: false)"),
                             req.filter or "", len([vq for vq in p.vector_queries if vq.filter_override]),
                             ", ".join(map(str, dropped)) or "-", verdict))
            ev.append(evidence("Identity clause per profile",
                               ("profile", "defined at", "security_trimming", "search.in, escaped",
                                f"filter for identity '{example.name}'", "filter_overrides",
                                "overrides dropping the clause", "verdict"), rows,
                               note="the profile layer builds the clause with odata.search_in_any: quotes doubled, "
                                    "a delimiter no value contains, an empty group list becomes 'false'"))
            for name, why in open_profiles.items():
                fails.append(f"profile '{name}': {why}")
        else:
            not_ran.append("profiles and probes (no policy)")

        # -- client code --------------------------------------------------------------------------------
        missing_identity: list[tuple[str, int, str]] = []
        if scan is not None:
            ran.append("client code")
            rows = []
            for s in scan.security_filters:
                if s.injection_risk:
                    verdict = "injection risk: interpolated without escaping"
                elif s.from_request:
                    verdict = "identity taken from request data, not the caller's token"
                elif not s.uses_search_in:
                    verdict = "no search.in (eq/or chain)"
                else:
                    verdict = "ok"
                rows.append((s.location, s.function, s.expression, s.uses_search_in, s.escaped,
                             s.from_identity, s.from_request, s.fstring, verdict))
            if rows:
                ev.append(evidence("Security filters in the client code",
                                   ("site", "function", "expression", "search.in", "escaped", "from identity",
                                    "from request", "interpolated", "verdict"), rows))
            risks = scan.injection_risks()
            metrics["code_injection_risks"] = len(risks)
            for s in risks:
                src = "request data" if s.from_request else "an interpolated value"
                fails.append(f"security filter built from {src} without escaping at {s.location}")
                recs.append(f"at {s.location} ({s.function}): build the security filter from the validated "
                            f"token's group ids with search.in and escaped values (quotes doubled, a delimiter no "
                            f"value contains), e.g. {sf or 'group_ids'}/any(g: search.in(g, '<g1>|<g2>', '|')); "
                            f"never interpolate {s.expression[:60]!s} into the filter")
            from_request = [s for s in scan.security_filters if s.from_request and not s.injection_risk]
            for s in from_request:
                missing_identity.append(("code: identity from request data", 1, s.location))
                recs.append(f"at {s.location} ({s.function}): take the groups from the caller's validated token, "
                            f"not from the request")
            absent = next((d.values.get("absent", ()) for d in scan.drift()
                           if d.kind == "security_clause" and d.param == "security filter"), ())
            if absent:
                missing_identity.append(("code: search call sites without a security clause", len(absent),
                                         ", ".join(absent)))
                recs.append("add the security clause at " + ", ".join(absent) + " (better: route these calls "
                            "through the one request builder that always adds it; see check call_sites)")
        else:
            not_ran.append("client code (none supplied)")

        # -- queries without an identity -----------------------------------------------------------------
        if ctx.goldset is not None:
            anon = [c for c in ctx.goldset if not c.as_user]
            if anon:
                missing_identity.append(("goldset cases without as_user", len(anon),
                                         ", ".join(c.id for c in anon[:10])))
                recs.append(f"ask every goldset question as a named identity (as_user); {len(anon)} case(s) run "
                            f"without one, so their results are not trimmed like production")
            unknown = sorted({c.as_user for c in ctx.goldset if c.as_user and c.as_user not in ctx.identities})
            if unknown:
                missing_identity.append(("goldset users missing from [identities]", len(unknown), ", ".join(unknown)))
        if ctx.query_log is not None and sf:
            field = sf.split("/")[0]
            no_user = [e for e in ctx.query_log.entries if not e.user]
            no_clause = [e for e in ctx.query_log.entries if e.filter is not None and field not in e.filter]
            if no_user:
                missing_identity.append(("query-log requests without a user", len(no_user),
                                         ", ".join(f"line {e.line}" for e in no_user[:10])))
            if no_clause:
                missing_identity.append((f"query-log requests whose filter lacks {field}", len(no_clause),
                                         ", ".join(f"line {e.line}" for e in no_clause[:10])))

        # -- leak probes -------------------------------------------------------------------------------
        leak_rows: list[tuple] = []
        summary_rows: list[tuple] = []
        injection_rows: list[tuple] = []
        injection_detail: list[tuple] = []
        leaks = 0
        if policy is not None and schema is not None and sf:
            field = sf.split("/")[0]
            reader = AclReader(ctx.target, schema.key_field.name, field)
            if not reader.method:
                not_ran.append(f"leak verification ('{field}' can be neither read back nor filtered by key)")
            if not ctx.identities:
                not_ran.append("leak probes (no [identities])")
                missing_identity.append(("no [identities] configured: leak probes not run", 0, ""))
            else:
                ran.append("leak probes")
                leaks, leak_rows, summary_rows, linc = self._leak_probes(ctx, policy, schema, reader, field)
                inc = {**inc, **linc}
                metrics["leaked_results"] = leaks
                metrics["leaked_documents"] = len({r[4] for r in leak_rows})
                metrics["leak_probe_requests"] = sum(r[3] for r in summary_rows)
                metrics["identities_probed"] = len(summary_rows)
                ev.append(evidence("Leak probes per identity",
                                   ("identity", "groups", "probe questions", "requests", "results",
                                    "results outside rights", "leaked documents", "unverified results"),
                                   summary_rows,
                                   note=f"each question asked through every profile as the identity; security values "
                                        f"read via {reader.method or 'nothing (not readable)'}; input of the ACL figure"))
                if leak_rows:
                    ev.append(evidence("Leaked results", ("identity", "profile", "question", "probe", "leaked key",
                                                          "its groups", "rank"), leak_rows[:200],
                                       note=f"{len(leak_rows)} leaked result(s)" if len(leak_rows) > 200 else ""))
                if leaks > max_leaks:
                    by_profile = Counter(r[1] for r in leak_rows)
                    fails.insert(0, f"leak probes returned {leaks} result(s) outside the identity's rights ("
                                 + ", ".join(f"{n} via profile '{p}'" for p, n in by_profile.most_common())
                                 + f"; {len({r[0] for r in leak_rows})} identities affected)")
                    for p in by_profile:
                        if p not in open_profiles:
                            recs.append(f"profile '{p}': returned documents outside the caller's groups although "
                                        f"it builds the identity clause; check the clause's field and values "
                                        f"against the index ('{field}')")
            # -- injection probes --------------------------------------------------------------------------
            ran.append("injection probes")
            bad_values, ijn = self._injection_probes(ctx, policy, reader, field, injection_rows, injection_detail)
            inc = {**inc, **ijn}
            metrics["injection_probes"] = len(injection_rows)
            metrics["injection_failures"] = len(bad_values)
            ev.append(evidence("Injection probes (hostile group values)",
                               ("probe", "groups", "filters evaluated", "admit a forbidden record",
                                "parse errors", "own value still matches", "probe search results",
                                "results outside the groups", "verdict"), injection_rows,
                               note=f"filters from each trimming profile's builder, evaluated on records holding "
                                    f"'{FORBIDDEN_GROUP}', the value's fragments, or no group; one probe search "
                                    f"per value; input of the ACL figure"))
            if injection_detail:
                ev.append(evidence("Injection probe failures", ("probe", "profile", "filter", "problem"),
                                   injection_detail[:200]))
            for label in bad_values:
                fails.append(f"hostile group value ({label}) widened the security filter")
            if bad_values:
                recs.append("build the identity clause only with an escaping builder (odata.search_in_any: quotes "
                            "doubled, a delimiter no value contains) and reject empty identity lists")

        if missing_identity:
            ev.append(evidence("Queries without an identity", ("where", "count", "examples"), missing_identity))
            metrics["queries_without_identity"] = sum(n for _, n, _ in missing_identity)
            if warn_missing:
                warns.append("queries run without an identity: " + "; ".join(
                    f"{w} ({n})" if n else w for w, n, _ in missing_identity))

        status = "fail" if fails else "warn" if warns else "pass"
        scope = f" [ran: {', '.join(ran)}" + (f"; not run: {', '.join(not_ran)}]" if not_ran else "]")
        if fails:
            headline = "; ".join(fails[:3]) + (f" (+{len(fails) - 3} more)" if len(fails) > 3 else "")
        elif warns:
            headline = "; ".join(warns[:3]) + (f" (+{len(warns) - 3} more)" if len(warns) > 3 else "")
        else:
            probes = metrics.get("leak_probe_requests")
            headline = ("every request carries an escaped identity clause"
                        + (f"; {probes} leak probe requests returned 0 results outside the identity's rights"
                           if probes is not None else "")
                        + (f"; {metrics.get('injection_probes', 0)} hostile values stayed restrictive"
                           if "injection_probes" in metrics else ""))
        return Finding(check_id=ID, status=status, headline=headline + scope, metrics=metrics,
                       evidence=tuple(ev), recommendations=tuple(dict.fromkeys(recs)), incomplete=inc,
                       figures=(ID,))

    # ---- leak probes ---------------------------------------------------------------------------------
    def _leak_probes(self, ctx: Any, policy: Any, schema: Any, reader: AclReader,
                     field: str) -> tuple[int, list[tuple], list[tuple], dict[str, int]]:
        key = schema.key_field.name
        title = _title_field(schema)
        text = "content" if schema.has_field("content") else None
        universe, _how = reader.universe()
        for ident in ctx.identities.values():
            universe |= set(ident.groups)
        universe.discard("")
        questions: dict[str, list[tuple[str, str]]] = {}  # identity -> [(question, probe label)]
        for name, ident in ctx.identities.items():
            qs: dict[str, str] = {}
            if ctx.goldset is not None:
                for c in ctx.goldset:
                    if c.as_user == name and c.expect_refused:
                        qs.setdefault(c.question, f"goldset {c.id} (refused)")
            mine = [g for g in ident.groups if g]
            for g in sorted(universe - set(mine)):
                flt = f"{field}/any(x: x eq {odata.quote(g)})"
                if mine:
                    flt += f" and not {odata.search_in_any(field, mine, var='y')}"
                select = [key] + [f for f in (title, text) if f]
                found = 0
                try:
                    docs = islice(ctx.target.iter_documents(select=select, filter=flt), PROBE_SCAN_LIMIT)
                    for d in docs:
                        q = _question_of(d, title, text)
                        if not q or q in qs:
                            continue
                        qs[q] = f"document {d.get(key)} (group {g})"
                        found += 1
                        if found >= PROBE_DOCS_PER_GROUP:
                            break
                except Exception as exc:  # a target that cannot filter this way: say so, go on
                    ctx.log(f"acl_trimming: cannot list documents of group {g!r}: {exc}")
            questions[name] = list(qs.items())

        plan: list[tuple[str, str, str, str]] = []  # identity, profile, question, probe
        reqs: list[SearchRequest] = []
        # Profiles that handle the identity the same way (trimming on/off, each vector query's
        # filter_override and whether it keeps the clause) trim the same way: probe one of each
        # such kind, plus the profile the question is routed to, instead of every profile.
        kinds: dict[tuple[Any, ...], Any] = {}
        for p in policy.profiles.values():
            sig = (p.security_trimming, tuple((vq.filter_override is not None, vq.override_security)
                                              for vq in p.vector_queries))
            kinds.setdefault(sig, p)
        for name, qs in questions.items():
            ident = ctx.identities[name]
            for q, label in qs:
                routed = policy.route(q).profile
                probe_profiles = {routed.name: routed, **{k.name: k for k in kinds.values()}}
                for p in probe_profiles.values():
                    reqs.append(p.build(q, ident, security_field=policy.security_field, entities=ctx.entities(q)))
                    plan.append((name, p.name, q, label))
        results = ctx.runner.run(reqs, label="acl leak probes") if reqs else []
        failed = sum(not isinstance(r, Trace) for r in results)
        by_ident: dict[str, list[tuple[tuple[str, str, str, str], Trace]]] = defaultdict(list)
        for item, res in zip(plan, results, strict=True):
            if isinstance(res, Trace):
                by_ident[item[0]].append((item, res))
        leak_rows: list[tuple] = []
        summary: list[tuple] = []
        for name, ident in ctx.identities.items():
            pairs = by_ident.get(name, [])
            keys = [h.key for _, tr in pairs for h in tr.hits]
            outside, unknown = reader.outside(keys, ident.groups)
            vals = reader.values(sorted(outside)) if outside and reader.can_read_values else {}
            n_out = 0
            for (nm, prof, q, label), tr in pairs:
                for rank, h in enumerate(tr.hits, 1):
                    if h.key in outside:
                        n_out += 1
                        groups = vals.get(h.key)
                        leak_rows.append((nm, prof, q, label, h.key,
                                          list(groups) if groups is not None else "(not retrievable)", rank))
            summary.append((name, list(ident.groups), len(questions.get(name, ())), len(pairs), len(keys),
                            n_out, len(outside), sum(k in unknown for k in keys)))
        inc = {"failed_requests": failed, "requests": len(reqs)} if failed else {}
        return len(leak_rows), leak_rows, summary, inc

    # ---- injection probes -----------------------------------------------------------------------------
    def _injection_probes(self, ctx: Any, policy: Any, reader: AclReader, field: str,
                          rows: list[tuple], detail: list[tuple]) -> tuple[list[str], dict[str, int]]:
        trimming = [p for p in policy.profiles.values() if p.security_trimming]
        base_cache: dict[str | None, Any] = {}
        bad: list[str] = []
        probe_reqs: list[SearchRequest] = []
        probe_of: list[int] = []
        question = _probe_question(ctx)
        default = policy.profiles.get(policy.default_route) if policy.default_route else None
        probe_profile = default if default in trimming else (trimming[0] if trimming else None)
        per_value: list[dict[str, Any]] = []
        hostile = hostile_values(field)
        for i, (_label, groups) in enumerate(hostile):
            ident = Identity("hostile", groups)
            stats = {"filters": 0, "admitted": 0, "parse": 0, "control": [], "problems": []}
            for p in trimming:
                with_id = p.build(question, ident, security_field=policy.security_field)
                without = p.build(question, None, security_field=policy.security_field)
                pairs = [(with_id.filter, without.filter)]
                pairs += [(a.filter_override, b.filter_override)
                          for a, b, vq in zip(with_id.vector_queries, without.vector_queries, p.vector_queries,
                                              strict=True)
                          if vq.filter_override is not None and vq.override_security]
                for w, wo in pairs:
                    base = _base_record(ctx.target, wo, field, base_cache)
                    res = probe_filter(w, wo, field, groups, base)
                    stats["filters"] += 1
                    if res["parse_error"]:
                        stats["parse"] += 1
                        stats["problems"].append((p.name, w, f"does not parse: {res['parse_error'][:120]}"))
                    elif res["no_identity_clause"]:
                        stats["admitted"] += 1
                        stats["problems"].append((p.name, w, "no identity clause: the filter admits every group"))
                    elif res["admitted"]:
                        stats["admitted"] += 1
                        stats["problems"].append((p.name, w, "admits records holding "
                                                  + "; ".join(_show(tuple(v)) for v in res["admitted"])))
                    if res["control"] is not None:
                        stats["control"].append(res["control"])
            if probe_profile is not None:
                probe_reqs.append(probe_profile.build(question, ident, security_field=policy.security_field))
                probe_of.append(i)
            per_value.append(stats)
        results = ctx.runner.run(probe_reqs, label="acl injection probes") if probe_reqs else []
        failed = sum(not isinstance(r, Trace) for r in results)
        searched: dict[int, tuple[int, int]] = {}
        for i, res in zip(probe_of, results, strict=True):
            if isinstance(res, Trace):
                keys = [h.key for h in res.hits]
                outside, _unknown = reader.outside(keys, hostile[i][1]) if reader.method else (set(), set())
                searched[i] = (len(keys), sum(k in outside for k in keys))
        for i, ((label, groups), stats) in enumerate(zip(hostile, per_value, strict=True)):
            n_hits, n_out = searched.get(i, (None, None))
            problem = bool(stats["admitted"] or stats["parse"] or n_out)
            control = stats["control"]
            own = ("-" if not control else "yes" if all(control) else
                   f"no ({control.count(False)} of {len(control)} filters)")
            verdict = "restrictive" if not problem else "NOT restrictive"
            if control and not all(control) and not problem:
                verdict = "restrictive (the value itself no longer matches)"
            rows.append((label, _show(groups), stats["filters"], stats["admitted"], stats["parse"], own,
                         n_hits, n_out, verdict))
            for prof, flt, why in stats["problems"]:
                detail.append((label, prof, flt or "", why))
            if n_out:
                detail.append((label, probe_profile.name if probe_profile else "", "",
                               f"probe search returned {n_out} result(s) outside the hostile groups"))
            if problem:
                bad.append(label)
        inc = {"failed_requests": failed, "requests": len(probe_reqs)} if failed else {}
        return bad, inc


def _title_field(schema: Any) -> str | None:
    try:
        t = schema.semantic_configuration().title_field
    except Exception:
        t = None
    if t and schema.has_field(t):
        return t
    return "title" if schema.has_field("title") else None


def _question_of(doc: dict[str, Any], title: str | None, text: str | None) -> str:
    q = str(doc.get(title) or "").strip() if title else ""
    if not q and text:
        q = " ".join(str(doc.get(text) or "").split()[:12])
    return q


def _probe_question(ctx: Any) -> str:
    cases = ctx.question_cases() if (ctx.goldset is not None or ctx.query_log is not None) else []
    restricted = [c for c in cases if getattr(c, "expect_refused", False)]
    for c in restricted + cases:
        if c.question:
            return c.question
    return "document"
