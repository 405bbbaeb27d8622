"""Small helpers the check modules share (not a check)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ragdiag.model.findings import Evidence, Finding


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


def needs_policy(ctx: Any, check_id: str) -> Finding | None:
    if ctx.policy is None:
        return Finding.skipped(check_id, "no query profiles were supplied",
                               what_to_supply="set [inputs] profiles = \"profiles.toml\" in the audit config")
    return None


def needs_questions(ctx: Any, check_id: str) -> Finding | None:
    if not ctx.question_cases():
        return Finding.skipped(check_id, "no questions to run: neither a goldset nor a query log was supplied",
                               what_to_supply="set [inputs] goldset or query_log in the audit config")
    return None


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
