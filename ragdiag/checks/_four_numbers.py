"""Seed 002's four goldset numbers, tracked apart: retrieval, answer, refusal, permissions.

Per case, "retrieved" is what the model got: the first ``top`` hits of the case's profile (not
the deeper ranking ragdiag evaluates recall on). With the client's answers
(`ragdiag.inputs.answers`) an answer stands only if seed 002's `check` holds: it cites
something, and only chunks this identity retrieved; otherwise it counts as refused ("no valid
source"), and its citations as invalid.

- ``retrieval_hit_rate``: answerable cases with an expected source among the retrieved;
- ``answer_accuracy``: answerable cases answered, with every expected text contained
  (case-insensitive) and at least one expected source cited, citations valid;
- ``refusal_accuracy``: all answered-or-refused cases, refused exactly where the goldset expects
  a refusal (both directions);
- ``permission_leaks``: cases whose retrieved or cited chunks include one outside the
  identity's groups as the index records them, or one the goldset forbids that identity
  (`_goldset_leaks`: its `forbidden_sources`, or the sources of the same question answered for
  another identity) (goal 0), counted over the cases with an identity whose chunks' groups
  could be read or whose forbidden sources the goldset names. The second kind finds what the
  first cannot: a restricted document whose security field wrongly admits a group.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragdiag.checks._goldset_leaks import judged_leaks
from ragdiag.inputs.answers import checked_citations

__all__ = ["FourNumbers", "four_numbers", "NUMBERS"]

NUMBERS = ("retrieval_hit_rate", "answer_accuracy", "refusal_accuracy", "permission_leaks")


@dataclass
class FourNumbers:
    values: dict[str, float | int | None] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    invalid_citations: int = 0
    unanswered: int = 0
    unverified: int = 0
    unknown_ids: tuple[str, ...] = ()  # answers to no goldset case (a stale or mismatched answers file)
    leak_rows: list[tuple[Any, ...]] = field(default_factory=list)
    answers_given: bool = False


def _rate(hits: list[bool]) -> float | None:
    return sum(hits) / len(hits) if hits else None


def four_numbers(ctx: Any, run: Any, reader: Any = None) -> FourNumbers:
    """The four numbers of `run` (a `GoldRun`) with the context's answers and identities."""
    answers = getattr(ctx, "answers", None)
    out = FourNumbers(answers_given=answers is not None)
    retrieval, answer, refusal = [], [], []
    leaks = verified = 0
    profiles = ctx.policy.profiles if ctx.policy is not None else {}
    cited_by = {cid: tuple(a.citations) for cid, a in ((c.id, answers.get(c.id)) for c in ctx.goldset)
                if a is not None and not a.refused} if answers is not None and ctx.goldset is not None else {}
    judged, judged_ids = judged_leaks(ctx, run, cited=cited_by)
    by_case = {j.case_id: j for j in judged}
    for q, trace in run.traces():
        case = q.case
        prof = profiles.get(q.profile)
        top = prof.top if prof is not None and prof.top else len(trace.hits)
        got = list(trace.keys[:top])
        retrieved = set(got)
        expected = set(case.source_keys)
        if case.answerable:
            retrieval.append(bool(expected & retrieved))
        a = answers.get(case.id) if answers is not None else None
        if answers is not None and a is None:
            out.unanswered += 1
        if a is not None:
            valid = checked_citations(a, retrieved)
            if not a.refused and a.citations and not valid:
                out.invalid_citations += 1
            refused = a.refused or not valid
            refusal.append(refused == case.expect_refused)
            if case.answerable:
                text = a.answer.casefold()
                answer.append(not refused and all(t.casefold() in text for t in case.expect_answer_contains)
                              and bool(set(a.citations) & expected))
        ident = ctx.identities.get(case.as_user) if case.as_user else None
        if ident is not None and (reader is not None or case.id in judged_ids):
            cited = [c for c in (a.citations if a is not None and not a.refused else ())]
            keys = list(dict.fromkeys(got + cited))
            outside, unknown = reader.outside(keys, ident.groups) if reader is not None else (set(), set())
            judged_leak = by_case.get(case.id)
            if unknown and not outside and case.id not in judged_ids:
                out.unverified += 1
                continue
            verified += 1
            if outside or judged_leak is not None:
                leaks += 1
                forbidden = judged_leak.keys if judged_leak is not None else ()
                out.leak_rows.append((case.id, case.as_user, tuple(sorted(outside)),
                                      tuple(k for k in cited if k in outside or k in forbidden),
                                      forbidden, judged_leak.by if judged_leak is not None else ()))
    if answers is not None:
        known = {c.id for c in ctx.goldset} if ctx.goldset is not None else set()
        out.unknown_ids = tuple(sorted(a.id for a in answers if a.id not in known))
    out.values = {"retrieval_hit_rate": _rate(retrieval),
                  "answer_accuracy": _rate(answer) if answers is not None else None,
                  "refusal_accuracy": _rate(refusal) if answers is not None else None,
                  "permission_leaks": leaks if verified else None}
    out.n = {"retrieval_hit_rate": len(retrieval), "answer_accuracy": len(answer),
             "refusal_accuracy": len(refusal), "permission_leaks": verified}
    return out
