"""Simulate a production query log by running a policy over a realistic question mix.

The sample system ships a log of what "production" sent: every entry is a real
request the policy built and the local target answered (texts, filter, k, the
number of results), so the checks read the same thing from the log as from
the profiles. Two parts are modelled, not measured, and documented as such:
`latency_ms` (a cost model: base + candidates + exhaustive + semantic, with
seeded log-normal jitter, because wall-clock on a shared machine is noise) and
`classification_ms`. A fallback cascade can be configured per profile: when a
search returns too little, the same question is re-issued with looser filters,
as the checklist article's template path did.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ragdiag import odata


@dataclass(frozen=True)
class Cascade:
    """Re-issue a profile's search with these filters (security clause kept) when it returns
    fewer than `min_results` hits or a best reranker score below `min_score`."""

    profile: str
    filters: tuple[str | None, ...]
    min_results: int = 3
    min_score: float = 1.0


def _latency(rng: random.Random, trace: Any, exhaustive: bool) -> float:
    pool = trace.pool_size
    ms = 90.0 + 0.05 * pool + (180.0 if exhaustive else 0.0) + (60.0 if trace.reranked else 0.0)
    return round(ms * math.exp(rng.gauss(0.0, 0.25)), 1)


def _needs_retry(trace: Any, c: Cascade) -> bool:
    if len(trace.hits) < c.min_results:
        return True
    best = trace.hits[0].reranker_score if trace.hits else None
    return best is not None and best < c.min_score


def simulate(target: Any, policy: Any, questions: Sequence[Mapping[str, Any]], identities: Mapping[str, Any], *,
             n: int = 1200, seed: int = 20260501, start: str = "2026-05-04T08:00:00+00:00",
             intent_weights: Mapping[str, float] | None = None, cascades: Sequence[Cascade] = (),
             entities: Callable[[str], Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """Log entries for `n` user questions (cascade retries come on top)."""
    rng = random.Random(seed)
    by_intent: dict[str, list[Mapping[str, Any]]] = {}
    for q in questions:
        by_intent.setdefault(q["intent"], []).append(q)
    intents = sorted(by_intent)
    weights = [float((intent_weights or {}).get(i, 1.0)) for i in intents]
    cascade_of = {c.profile: c for c in cascades}
    now = datetime.fromisoformat(start)
    entries: list[dict[str, Any]] = []
    for i in range(n):
        intent = rng.choices(intents, weights=weights)[0]
        q = rng.choice(by_intent[intent])
        user = q.get("as_user")
        ident = identities.get(user) if user else None
        now += timedelta(seconds=rng.randint(20, 900))
        session = f"s-{i // 3 + 1:04d}"
        route, req = policy.request_for(q["question"], ident, entities=(entities or (lambda _q: ()))(q["question"]))
        prof = route.profile
        attempts = [req]
        c = cascade_of.get(prof.name)
        if c is not None:
            ident_clause = odata.search_in_any(policy.security_field, ident.groups) if ident else None
            attempts += [req.replace(filter=_and(ident_clause, f)) for f in c.filters]
        stamp = now
        for n_try, r in enumerate(attempts, 1):
            trace = target.search(r)
            exhaustive = any(vq.exhaustive for vq in r.vector_queries)
            entries.append({
                "timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "user": user,
                "session": session,
                "question": q["question"],
                "route": route.intent,
                "profile": prof.name,
                "keyword_text": r.search if r.has_text_leg else None,
                "vector_text": r.vector_queries[0].text if r.vector_queries else None,
                "semantic_text": r.effective_semantic_text if r.is_semantic else None,
                "vector_fields": ",".join(f for vq in r.vector_queries for f in vq.fields) or None,
                "filter": r.filter,
                "top": r.top,
                "k": max((vq.k for vq in r.vector_queries), default=None),
                "latency_ms": _latency(rng, trace, exhaustive),
                "classification_ms": round(rng.uniform(18.0, 65.0), 1),
                "results": len(trace.hits),
                "attempt": n_try,
            })
            if c is None or n_try == len(attempts) or not _needs_retry(trace, c):
                break
            stamp += timedelta(seconds=rng.randint(1, 4))
    return entries


def _and(a: str | None, b: str | None) -> str | None:
    parts = [p for p in (a, b) if p]
    return " and ".join(parts) if parts else None


def write_jsonl(entries: Sequence[Mapping[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in entries),
                    encoding="utf-8")


# The sample's production mix: comparison questions are rare (the route that
# almost nothing uses), fact questions dominate.
SAMPLE_INTENT_WEIGHTS = {"fact": 0.34, "definition": 0.14, "verification": 0.10, "overview": 0.12,
                         "table": 0.13, "exact_id": 0.16, "comparison": 0.01}

# The template path's cascade from the article: first the same search with a
# looser topic filter (still at 0.85), then unfiltered at 0.80.
SAMPLE_CASCADES = (Cascade("fact_template", ("confidence_score ge 0.85", "confidence_score ge 0.8")),)
