"""Small helpers the check modules share (not a check)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ragdiag.model.findings import Evidence


def quantile(values: Sequence[float], q: float) -> float | None:
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return float(np.quantile(np.asarray(vals, dtype=float), q))


def share(flags: Iterable[bool]) -> float | None:
    flags = list(flags)
    return (sum(flags) / len(flags)) if flags else None


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0%}"


def num(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def evidence(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], note: str = "") -> Evidence:
    return Evidence(title=title, columns=tuple(columns), rows=tuple(tuple(r) for r in rows), note=note)


def incomplete(run: Any) -> dict[str, int]:
    """Counts for a finding's `incomplete` field when some requests failed."""
    failed = len(run.failures)
    return {"failed_requests": failed, "requests": len(run.results)} if failed else {}


def semantic_profiles(policy: Any) -> list[Any]:
    return [p for p in policy.profiles.values() if p.query_type == "semantic"]


def profile_used_by(policy: Any) -> dict[str, list[str]]:
    """profile name -> intents routed to it (the default route marked '*')."""
    out: dict[str, list[str]] = {name: [] for name in policy.profiles}
    for intent, name in policy.routes.items():
        out.setdefault(name, []).append(intent)
    if policy.default_route:
        out.setdefault(policy.default_route, []).append("*")
    return out


def paired(a: Any, b: Any) -> Iterable[tuple[Any, Any, Any]]:
    """(query, trace in a, trace in b) for the questions both runs answered."""
    from ragdiag.model import Trace

    for q, ra, rb in zip(a.queries, a.results, b.results, strict=True):
        if isinstance(ra, Trace) and isinstance(rb, Trace):
            yield q, ra, rb


def leg_filters(requests: Iterable[Any]) -> frozenset[str | None]:
    """The filter each leg of the requests searches under: the top-level filter for the keyword
    leg and for vector queries without an override, a vector query's `filter_override` for it
    (it replaces the top-level filter, as on Azure). None means unfiltered."""
    out: set[str | None] = set()
    for r in requests:
        if r.has_text_leg or not r.vector_queries:
            out.add(r.filter)
        out.update(vq.filter_override if vq.filter_override is not None else r.filter for vq in r.vector_queries)
    return frozenset(out)


class Reach:
    """Which of a set of documents a filter admits, asked of the target: one document listing
    (capability ``documents``) or one count per key otherwise. `error` says why it could not ask."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        key = ctx.target.schema().key_field
        self.key: str | None = key.name if key.filterable else None
        self.error: str | None = None if self.key else f"the key field '{key.name}' is not filterable"

    def matching(self, keys: Iterable[str], flt: str | None) -> set[str] | None:
        """The keys whose documents satisfy `flt` (None: that exist); None when it cannot be asked."""
        from ragdiag import odata
        from ragdiag.errors import RagdiagError

        wanted = sorted(set(keys))
        if self.key is None:
            return None
        if not wanted:
            return set()
        delim = odata.pick_delimiter(wanted)
        cond = f"search.in({self.key}, {odata.quote(delim.join(wanted))}, {odata.quote(delim)})"
        try:
            if self.ctx.supports("documents"):
                docs = self.ctx.target.iter_documents(select=[self.key], filter=f"{cond} and ({flt})" if flt else cond)
                return {str(d.get(self.key)) for d in docs} & set(wanted)
            return {k for k in wanted if self.ctx.target.count(
                filter=f"{self.key} eq {odata.quote(k)}" + (f" and ({flt})" if flt else "")) > 0}
        except RagdiagError as exc:
            self.error = str(exc)
            return None

    def admitted(self, items: Sequence[tuple[set[str], frozenset[str | None]]]) -> list[set[str]]:
        """Per (keys, leg filters): the keys at least one leg admits (all of them when unknown)."""
        need: dict[str | None, set[str]] = {}
        for keys, legs in items:
            for f in legs:
                need.setdefault(f, set()).update(keys)
        got = {f: self.matching(keys, f) for f, keys in need.items()}
        return [set(keys) if any(got[f] is None for f in legs)
                else keys & set().union(*(got[f] or set() for f in legs)) for keys, legs in items]

    def excluded(self, items: Sequence[tuple[set[str], frozenset[str | None]]]) -> list[dict[str, list[Any]]]:
        """Per (keys, leg filters): each key's top-level clauses that reject it, over all legs
        (an empty list: no clause does, the document is not in the index)."""
        from ragdiag import odata

        need: dict[str, set[str]] = {}
        for keys, legs in items:
            for f in legs:
                if f and keys:
                    need.setdefault(f, set()).update(keys)
        sat = {(f, c.text): (c, self.matching(keys, c.text))
               for f, keys in need.items() for c in odata.clauses(odata.parse(f))}
        out = []
        for keys, legs in items:
            tests = [sat[(f, c.text)] for f in legs if f and keys for c in odata.clauses(odata.parse(f))]
            out.append({k: list({c.text: c for c, ok in tests if ok is not None and k not in ok}.values())
                        for k in keys})
        return out
