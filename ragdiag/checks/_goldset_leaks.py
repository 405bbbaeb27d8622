"""Permission leaks the goldset itself judges: a restricted identity retrieving what it must not.

A leak probe of `_acl_probes` asks whether a result lies outside the identity's groups *as the
index records them*; a document whose security field wrongly lets a group read it passes that
test. The goldset says what people know: a case asked as an identity names the sources that
identity must never retrieve (`forbidden_sources`), and a refusal (`expect: refused`) whose
question is answered for another identity forbids that answer's sources
(`Goldset.forbidden`; seed 002's authorised and unauthorised twins). A case leaks when its
identity retrieves, among the chunks the model gets (the profile's ``top``), any of them, or
cites one in the client's answer.

Not a check: `goldset` (the four numbers) and `acl_trimming` (the leak verdict) both count these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["JudgedLeak", "judged_leaks", "retrieved_keys"]


@dataclass(frozen=True)
class JudgedLeak:
    """One case whose identity retrieved sources the goldset forbids it."""

    case_id: str
    as_user: str
    keys: tuple[str, ...]  # the forbidden keys retrieved or cited
    ranks: tuple[int, ...]  # their ranks among the retrieved (0: only cited)
    by: tuple[str, ...]  # why they are forbidden: the twin case ids, or "forbidden_sources"
    profile: str


def retrieved_keys(ctx: Any, query: Any, trace: Any) -> list[str]:
    """The keys the model gets for one goldset query: the first ``top`` hits of its profile."""
    profiles = ctx.policy.profiles if ctx.policy is not None else {}
    prof = profiles.get(query.profile)
    top = prof.top if prof is not None and prof.top else len(trace.hits)
    return list(trace.keys[:top])


def judged_leaks(ctx: Any, run: Any, *, cited: dict[str, tuple[str, ...]] | None = None
                 ) -> tuple[list[JudgedLeak], set[str]]:
    """(leaking cases, ids of the cases the goldset judges) of a `GoldRun`: every case asked as an
    identity with forbidden sources, searched and judged (a failed search judges nothing)."""
    gs = ctx.goldset
    if gs is None:
        return [], set()
    forbidden = gs.forbidden()
    leaks: list[JudgedLeak] = []
    judged: set[str] = set()
    for q, trace in run.traces():
        rules = forbidden.get(q.case.id)
        if not rules or ctx.identities.get(q.case.as_user) is None:
            continue
        judged.add(q.case.id)
        got = retrieved_keys(ctx, q, trace)
        rank = {k: i + 1 for i, k in enumerate(got)}
        extra = [k for k in (cited or {}).get(q.case.id, ()) if k not in rank]
        hit = [k for k in [*got, *extra] if k in rules]
        if hit:
            leaks.append(JudgedLeak(q.case.id, q.case.as_user, tuple(hit), tuple(rank.get(k, 0) for k in hit),
                                    tuple(dict.fromkeys(w for k in hit for w in rules[k])), q.profile))
    return leaks, judged
