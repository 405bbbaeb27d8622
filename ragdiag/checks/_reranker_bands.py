"""Check 1's judgement of top-1 reranker scores, in one place for measured and observed scores.

`reranker_scores` judges the top-1 scores of the goldset's questions per semantic profile, the
observed-traffic part (`_observed.reranker_scores`) those of the recorded requests per route:
both by the same bands of the check's spec, so an observed route and a measured profile with
the same scores get the same verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from ragdiag.checks._common import quantile, share


@dataclass(frozen=True)
class Bands:
    """The spec's thresholds for a list of top-1 scores (`reranker_scores.toml`)."""

    warn_median: float     # warn_median_top1: a median below this warns
    fail_median: float     # fail_median_top1: a median below this fails
    warn_share: float      # warn_share_below: more than this share below `share_threshold` warns
    share_threshold: float  # warn_share_threshold
    band: float            # somewhat_relevant: the share below it is shown, never judged

    @classmethod
    def from_spec(cls, spec: Any) -> Bands:
        return cls(warn_median=spec.threshold("warn_median_top1"), fail_median=spec.threshold("fail_median_top1"),
                   warn_share=spec.threshold("warn_share_below"), share_threshold=spec.threshold("warn_share_threshold"),
                   band=spec.threshold("somewhat_relevant"))


@dataclass(frozen=True)
class Judgement:
    """What the bands say of one profile's (or route's) top-1 scores."""

    median: float
    share_below_threshold: float
    share_below_band: float
    median_level: str | None  # "fail" / "warn": the median is below that band; None: it is not
    median_min: float | None  # the band edge the median fell below
    share_warns: bool         # too many scores below the share threshold

    @property
    def verdict(self) -> str:
        """``fail``, ``warn`` or ``ok``: the worst of the two judgements."""
        if self.median_level == "fail":
            return "fail"
        return "warn" if self.median_level == "warn" or self.share_warns else "ok"


def judge(scores: Sequence[float], bands: Bands) -> Judgement:
    """Judge a non-empty list of top-1 scores: the median against both bands, the share below the threshold.

    A median exactly on a band edge is in the band (``<`` fails or warns, the edge does not);
    a share exactly at `warn_share` does not warn (``>``).
    """
    if not scores:
        raise ValueError("judge() needs at least one top-1 score")
    med = cast(float, quantile(scores, 0.5))  # never None: the list is not empty
    below_t = cast(float, share(s < bands.share_threshold for s in scores))
    level, edge = (("fail", bands.fail_median) if med < bands.fail_median
                   else ("warn", bands.warn_median) if med < bands.warn_median else (None, None))
    return Judgement(median=med, share_below_threshold=below_t,
                     share_below_band=cast(float, share(s < bands.band for s in scores)),
                     median_level=level, median_min=edge, share_warns=below_t > bands.warn_share)


__all__ = ["Bands", "Judgement", "judge"]
