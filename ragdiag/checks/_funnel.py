"""Reading the audit's loss funnel from a check (not a check).

`stage_losses(ctx, stage)` counts, per profile (and detail: the clause, the scoring profile),
the expected sources the funnel lost at `stage`, out of those the profile can reach at all
(every source not lost at ``not_in_index``, ``rights`` or ``filter``). The counts are exact
(one source, one stage), so a check can judge them like prerank_filters judges the relevant
documents a clause removes.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

__all__ = ["stage_losses", "boost_balance", "UNREACHABLE"]

#: stages before which a profile cannot reach a source at all
UNREACHABLE = ("not_in_index", "rights", "filter")


def stage_losses(ctx: Any, stage: str) -> list[tuple[str, str | None, int, int, float]]:
    """(profile, detail, sources lost at `stage`, reachable sources, share) per profile with a loss there."""
    funnel = _funnel(ctx)
    if funnel is None:
        return []
    reach: dict[str, int] = defaultdict(int)
    lost: dict[tuple[str, str | None], int] = defaultdict(int)
    for f in funnel.fates:
        if f.stage not in UNREACHABLE:
            reach[f.profile] += 1
        if f.stage == stage:
            lost[(f.profile, f.detail)] += 1
    return [(p, d, n, reach[p], n / reach[p] if reach[p] else 0.0) for (p, d), n in sorted(lost.items(),
                                                                                          key=lambda kv: kv[0][0])]


def boost_balance(ctx: Any) -> list[tuple[str, int, int, int]]:
    """Per profile with a scoring profile: (profile, sources it pushes out of the top, sources it
    pulls into the top, reachable sources); both counted against the same request without it."""
    funnel = _funnel(ctx)
    if funnel is None:
        return []
    out: dict[str, list[int]] = {}
    for f in funnel.fates:
        if "final_without_boost" not in f.ranks or f.stage in UNREACHABLE:
            continue
        row = out.setdefault(f.profile, [0, 0, 0])
        row[2] += 1
        if f.stage == "boost":
            row[0] += 1
        elif f.stage in ("top", "threshold", "budget"):
            without = f.ranks.get("final_without_boost")
            if without is None or without > _top_of(funnel, f):
                row[1] += 1
    return [(p, *vals) for p, vals in sorted(out.items())]


def _top_of(funnel: Any, fate: Any) -> int:
    return int(funnel.post_top.get("tops", {}).get(fate.profile, 10))


def _funnel(ctx: Any) -> Any:
    get = getattr(ctx, "loss_funnel", None)
    if not callable(get):
        return None
    funnel = get()
    return funnel if funnel.measured else None
