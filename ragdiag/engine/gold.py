"""Goldset execution results: a case as requests (`GoldQuery`) and a policy's executed run (`GoldRun`).

Below the context and the measurements that use them (ablation, funnel), so neither imports
the other for these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragdiag.engine.runner import Failure
from ragdiag.model import SearchRequest, Trace

__all__ = ["GoldQuery", "GoldRun"]


@dataclass(frozen=True)
class GoldQuery:
    """One goldset case as the policy turns it into request(s)."""

    case: Any  # GoldCase
    intent: str
    profile: str
    requests: tuple[SearchRequest, ...]


@dataclass
class GoldRun:
    """Executed goldset queries of one policy (and probe): traces and their evaluation."""

    label: str
    queries: list[GoldQuery]
    results: list[Trace | Failure]
    _evaluation: Any = field(default=None, repr=False)

    def ranked(self) -> dict[str, list[str]]:
        return {q.case.id: list(r.keys) for q, r in zip(self.queries, self.results, strict=True)
                if isinstance(r, Trace)}

    @property
    def failures(self) -> list[Failure]:
        return [r for r in self.results if isinstance(r, Failure)]

    def traces(self) -> list[tuple[GoldQuery, Trace]]:
        return [(q, r) for q, r in zip(self.queries, self.results, strict=True) if isinstance(r, Trace)]

    def evaluation(self, goldset: Any, *, k: int = 10, recall_k: int = 50) -> Any:
        from ragdiag.metrics import evaluate

        if self._evaluation is None:
            ids = {q.case.id for q in self.queries}
            qrels = {cid: rel for cid, rel in goldset.qrels().items() if cid in ids}
            self._evaluation = evaluate(self.ranked(), qrels, k=k, recall_k=recall_k)
        return self._evaluation
