"""The probes of check 9 (acl_trimming): reading security values back, leak and injection probes.

Not a check: `ragdiag.checks.acl_trimming` judges what these functions measure.

- `AclReader` reads the security values of documents by key through the target's declared
  capabilities (``security_values``, else a retrievable field via ``documents`` or
  ``get_document``, else filtering on the key and the negated identity clause).
- `identity_drops` names the vector queries whose ``filter_override`` replaces the filter
  without the caller's identity clause (``override_security = false``).
- `leak_probes`: for every identity, questions aimed at documents it must not see (the
  goldset's refused cases and titles of documents carrying only groups it lacks), asked
  through one profile of each trimming kind plus the routed one.
- `injection_probes`: hostile group values through each trimming profile's filter builder,
  evaluated on records the hostile identity must not match, and one probe search per value
  through a profile that keeps the identity clause in every filter.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from ragdiag import odata
from ragdiag.errors import RagdiagError
from ragdiag.model import SearchRequest, Trace
from ragdiag.policy import Identity

PROBE_DOCS_PER_GROUP = 3   # probe questions per (identity, group it lacks)
PROBE_SCAN_LIMIT = 500     # documents read to find those questions
VALUE_SCAN_LIMIT = 20000   # documents read to discover the security values of the index
FORBIDDEN_GROUP = "hr"     # a group no hostile identity holds; the records tested carry it
EXAMPLE_IDENTITY = Identity("example", ("group-a", "group-b"))
_SPLIT = re.compile(r"[\s,|;']+")


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


# ---- reading security values back ------------------------------------------------------------
class AclReader:
    """The security values of documents by key, as far as the target's capabilities allow.

    `method`: ``security_values`` (the target reads them itself), ``retrievable`` (the field
    is returned), ``filter`` (keys filtered with the negated identity clause: membership only),
    or ``""`` (nothing can be verified).
    """

    def __init__(self, ctx: Any, key: str, field: str) -> None:
        self.target, self.key, self.field = ctx.target, key, field
        schema = self.target.schema()
        f = schema.field(field) if schema.has_field(field) else None
        self.key_filterable = schema.key_field.filterable
        self.documents = ctx.supports("documents")
        self.get_document = ctx.supports("get_document")
        if ctx.supports("security_values"):
            self.method = "security_values"
        elif f is not None and f.retrievable and ((self.documents and self.key_filterable) or self.get_document):
            self.method = "retrievable"
        elif f is not None and f.filterable and self.key_filterable and self.documents:
            self.method = "filter"
        else:
            self.method = ""

    @property
    def can_read_values(self) -> bool:
        return self.method in ("security_values", "retrievable")

    def values(self, keys: Sequence[str]) -> dict[str, tuple[str, ...] | None]:
        """key -> security values (None: unknown)."""
        keys = list(dict.fromkeys(keys))
        if self.method == "security_values":
            return dict(self.target.security_values(keys, self.field))
        out: dict[str, tuple[str, ...] | None] = dict.fromkeys(keys)
        if self.method != "retrievable":
            return out
        if self.documents and self.key_filterable:
            for chunk in _chunks(keys, 100):
                for d in self.target.iter_documents(select=[self.key, self.field], filter=_key_in(self.key, chunk)):
                    out[d.get(self.key)] = tuple(d.get(self.field) or ())
            return out
        for k in keys:
            try:
                d = self.target.get_document(k, select=[self.key, self.field])
            except Exception:  # an unreadable document stays unverified
                d = None
            out[k] = tuple(d.get(self.field) or ()) if d else None
        return out

    def outside(self, keys: Sequence[str], groups: tuple[str, ...]) -> tuple[set[str], set[str]]:
        """(keys outside the rights of `groups`, keys that could not be verified)."""
        keys = list(dict.fromkeys(keys))
        if not keys:
            return set(), set()
        if self.can_read_values:
            vals = self.values(keys)
            mine = set(groups)
            unknown = {k for k, v in vals.items() if v is None}
            return {k for k, v in vals.items() if v is not None and not set(v) & mine}, unknown
        if self.method == "filter":
            out: set[str] = set()
            clause = odata.search_in_any(self.field, [g for g in groups if g])
            for chunk in _chunks(keys, 100):
                flt = f"{_key_in(self.key, chunk)} and not ({clause})"
                out |= {d.get(self.key) for d in self.target.iter_documents(select=[self.key], filter=flt)}
            return out, set()
        return set(), set(keys)

    def universe(self) -> set[str]:
        """Security values present in the index, as far as they can be read."""
        if not self.can_read_values or not self.documents:
            return set()
        select = [self.key] if self.method == "security_values" else [self.key, self.field]
        docs = list(islice(self.target.iter_documents(select=select), VALUE_SCAN_LIMIT))
        if self.method == "security_values":
            return {v for vals in self.values([d.get(self.key) for d in docs]).values() for v in vals or ()}
        return {v for d in docs for v in (d.get(self.field) or ())}


def _key_in(key: str, keys: list[str]) -> str:
    delim = odata.pick_delimiter(keys)
    return f"search.in({key}, {odata.quote(delim.join(keys))}, {odata.quote(delim)})"


def _chunks(items: list[str], n: int) -> list[list[str]]:
    return [items[i:i + n] for i in range(0, len(items), n)]


# ---- the profiles' identity clause -------------------------------------------------------------
@dataclass(frozen=True)
class Drop:
    """A vector query whose filter_override replaces the filter without the identity clause."""

    index: int                      # 1-based position in the profile
    fields: tuple[str, ...]
    override: str
    source: tuple[str, int] = ("", 0)


def identity_drops(profile: Any, security_field: str, identity: Identity = EXAMPLE_IDENTITY) -> list[Drop]:
    """The vector queries of a trimming `profile` whose override, as built for `identity`, lacks
    the identity clause (judged on the built request, not on the flag alone)."""
    if not profile.security_trimming:
        return []
    clause = odata.search_in_any(security_field, identity.groups)
    req = profile.build("example question", identity, security_field=security_field)
    return [Drop(i, tuple(spec.fields), spec.filter_override or "", spec.source)
            for i, (spec, vq) in enumerate(zip(profile.vector_queries, req.vector_queries, strict=True), 1)
            if vq.filter_override is not None and clause not in vq.filter_override]


def fully_trimming(profile: Any, security_field: str) -> bool:
    """The profile puts the identity clause into every filter it sends."""
    return profile.security_trimming and not identity_drops(profile, security_field)


# ---- leak probes ---------------------------------------------------------------------------------
@dataclass
class LeakResult:
    requests: list[SearchRequest] = field(default_factory=list)
    profiles: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    leak_rows: list[tuple] = field(default_factory=list)    # identity, profile, question, probe, key, groups, rank
    summary: list[tuple] = field(default_factory=list)      # per identity


def leak_probes(ctx: Any, policy: Any, schema: Any, reader: AclReader, field: str) -> LeakResult:
    """Ask questions each identity must not get answers to; count results outside its rights."""
    key = schema.key_field.name
    title = _title_field(schema)
    text = "content" if schema.has_field("content") else None
    universe = reader.universe()
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
        for g in sorted(universe - set(mine)) if ctx.supports("documents") else ():
            flt = f"{field}/any(x: x eq {odata.quote(g)})"
            if mine:
                flt += f" and not {odata.search_in_any(field, mine, var='y')}"
            found = 0
            try:
                docs = islice(ctx.target.iter_documents(select=[key] + [f for f in (title, text) if f], filter=flt),
                              PROBE_SCAN_LIMIT)
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

    # Profiles that handle the identity the same way (trimming on/off, each vector query's
    # override and whether it keeps the clause) trim the same way: probe one of each kind,
    # plus the profile the question is routed to, instead of every profile.
    kinds: dict[tuple[Any, ...], Any] = {}
    for p in policy.profiles.values():
        sig = (p.security_trimming, tuple((vq.filter_override is not None, vq.override_security)
                                          for vq in p.vector_queries))
        kinds.setdefault(sig, p)
    out = LeakResult()
    plan: list[tuple[str, str, str, str]] = []  # identity, profile, question, probe
    for name, qs in questions.items():
        ident = ctx.identities[name]
        for q, label in qs:
            routed = policy.route(q).profile
            for p in {routed.name: routed, **{k.name: k for k in kinds.values()}}.values():
                out.requests.append(p.build(q, ident, security_field=policy.security_field, entities=ctx.entities(q)))
                out.profiles.append(p.name)
                plan.append((name, p.name, q, label))
    out.results = ctx.runner.run(out.requests, label="acl leak probes") if out.requests else []
    by_ident: dict[str, list[tuple[tuple[str, str, str, str], Trace]]] = defaultdict(list)
    for item, res in zip(plan, out.results, strict=True):
        if isinstance(res, Trace):
            by_ident[item[0]].append((item, res))
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
                    out.leak_rows.append((nm, prof, q, label, h.key, list(groups) if groups is not None else None,
                                          rank))
        out.summary.append((name, list(ident.groups), len(questions.get(name, ())), len(pairs), len(keys),
                            n_out, len(outside), sum(k in unknown for k in keys)))
    return out


# ---- injection probes -----------------------------------------------------------------------------
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


def _base_record(ctx: Any, flt: str | None, field: str, cache: dict[str | None, Any]) -> dict[str, Any] | None:
    """A document that passes `flt` (only the fields it reads), or {} without a filter."""
    if flt is None:
        return {}
    if flt in cache:
        return cache[flt]
    rec = None
    try:
        fields = sorted(odata.fields_of(odata.parse(flt)) - {field})
        if not fields:
            rec = {}
        elif ctx.supports("documents"):
            rec = next(iter(ctx.target.iter_documents(select=fields, filter=flt)), None)
    except Exception:  # a filter the target cannot evaluate: judge the identity part alone
        rec = None
    cache[flt] = rec
    return rec


@dataclass
class InjectionResult:
    rows: list[dict[str, Any]] = field(default_factory=list)    # per hostile value
    detail: list[tuple] = field(default_factory=list)           # label, profile, filter, problem code, text
    bad: list[str] = field(default_factory=list)                # labels of values that widened a filter
    searched_through: str | None = None                         # the profile of the probe searches
    requests: int = 0
    results: list[Any] = field(default_factory=list)


def injection_probes(ctx: Any, policy: Any, reader: AclReader, field: str) -> InjectionResult:
    """Hostile group values through every trimming profile's builder, and one search per value."""
    sf = policy.security_field
    trimming = [p for p in policy.profiles.values() if p.security_trimming]
    full = [p for p in trimming if fully_trimming(p, sf)]
    default = policy.profiles.get(policy.default_route) if policy.default_route else None
    # probe searches only through a profile that keeps the identity in every filter: a result
    # outside the hostile groups then is the builder's fault, not an override's (leak probes)
    probe_profile = default if default in full else (full[0] if full else None)
    out = InjectionResult(searched_through=probe_profile.name if probe_profile else None)
    base_cache: dict[str | None, Any] = {}
    question = _probe_question(ctx)
    hostile = hostile_values(field)
    reqs: list[SearchRequest] = []
    for label, groups in hostile:
        ident = Identity("hostile", groups)
        stats: dict[str, Any] = {"label": label, "groups": groups, "filters": 0, "admitted": 0, "parse": 0,
                                 "control": []}
        for p in trimming:
            with_id = p.build(question, ident, security_field=sf)
            without = p.build(question, None, security_field=sf)
            pairs = [(with_id.filter, without.filter)]
            pairs += [(a.filter_override, b.filter_override)
                      for a, b, vq in zip(with_id.vector_queries, without.vector_queries, p.vector_queries, strict=True)
                      if vq.filter_override is not None and vq.override_security]
            for w, wo in pairs:
                res = probe_filter(w, wo, field, groups, _base_record(ctx, wo, field, base_cache))
                stats["filters"] += 1
                if res["parse_error"]:
                    stats["parse"] += 1
                    out.detail.append((label, p.name, w or "", "parse_error", res["parse_error"][:120]))
                elif res["no_identity_clause"]:
                    stats["admitted"] += 1
                    out.detail.append((label, p.name, w or "", "no_identity_clause", ""))
                elif res["admitted"]:
                    stats["admitted"] += 1
                    out.detail.append((label, p.name, w or "", "admits",
                                       "; ".join(_show(tuple(v)) for v in res["admitted"])))
                if res["control"] is not None:
                    stats["control"].append(res["control"])
        if probe_profile is not None:
            reqs.append(probe_profile.build(question, ident, security_field=sf))
        out.rows.append(stats)
    out.requests = len(reqs)
    out.results = ctx.runner.run(reqs, label="acl injection probes") if reqs else []
    for stats, res in zip(out.rows, out.results, strict=False):
        stats["hits"] = stats["outside"] = None
        if isinstance(res, Trace):
            keys = [h.key for h in res.hits]
            outside, _unknown = reader.outside(keys, stats["groups"]) if reader.method else (set(), set())
            stats["hits"], stats["outside"] = len(keys), sum(k in outside for k in keys)
            if stats["outside"]:
                out.detail.append((stats["label"], probe_profile.name, "", "search_outside", str(stats["outside"])))
    for stats in out.rows:
        stats.setdefault("hits", None)
        stats.setdefault("outside", None)
        if stats["admitted"] or stats["parse"] or stats["outside"]:
            out.bad.append(stats["label"])
    return out


def _show(value: tuple[str, ...]) -> str:
    return "[]" if not value else ", ".join(repr(v) for v in value)


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
    cases = ctx.question_cases() if ctx.has("questions") else []
    restricted = [c for c in cases if getattr(c, "expect_refused", False)]
    for c in restricted + cases:
        if c.question:
            return c.question
    return "document"
