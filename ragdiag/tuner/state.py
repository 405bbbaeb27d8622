"""The tuner's knobs: `TunerState` holds a profile's knob values and applies them to the baseline.

`TunerState.from_profile(p).with_k(50).profile()` is the tuned `Profile`
(fields left at the baseline's value stay untouched); `profile_changes` says
in words what differs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ragdiag import odata
from ragdiag.model import DEFAULT_MAX_TEXT_RECALL_SIZE
from ragdiag.policy import Profile


@dataclass(frozen=True)
class TunerState:
    """Knob values of one profile; `profile()` applies them to the baseline.

    Per vector query: `ks`, `weights`, `exhaustive`, `vector_texts`. `clauses`
    says which top-level clauses of the baseline's filter are kept.
    `max_text_recall_size` None means the target's default (1000).
    """

    baseline: Profile
    ks: tuple[int, ...]
    weights: tuple[float, ...]
    exhaustive: tuple[bool, ...]
    vector_texts: tuple[str, ...]
    vector_filter_mode: str
    max_text_recall_size: int | None
    top: int
    reranker: bool
    keyword_text: str
    semantic_text: str
    clauses: tuple[bool, ...]

    @classmethod
    def from_profile(cls, baseline: Profile, current: Profile | None = None) -> TunerState:
        """Knobs at `current`'s values (default: the baseline's), relative to `baseline`."""
        p = current or baseline
        vqs = p.vector_queries if len(p.vector_queries) == len(baseline.vector_queries) \
            else baseline.vector_queries
        kept = tuple(True for _ in filter_clauses(baseline.filter))
        if current is not None and current.filter != baseline.filter:
            texts = {c.text for c in filter_clauses(current.filter)}
            kept = tuple(c.text in texts for c in filter_clauses(baseline.filter))
        return cls(baseline=baseline, ks=tuple(v.k for v in vqs), weights=tuple(v.weight for v in vqs),
                   exhaustive=tuple(v.exhaustive for v in vqs), vector_texts=tuple(v.text for v in vqs),
                   vector_filter_mode=p.vector_filter_mode, max_text_recall_size=p.max_text_recall_size,
                   top=p.top, reranker=p.query_type == "semantic", keyword_text=p.keyword_text,
                   semantic_text=p.semantic_text, clauses=kept)

    def with_k(self, k: int) -> TunerState:
        """Every vector query with `k` neighbours."""
        return replace(self, ks=tuple(int(k) for _ in self.ks))

    def with_(self, **changes: Any) -> TunerState:
        return replace(self, **changes)

    def filter(self) -> str | None:
        """The baseline's filter with the unchecked clauses dropped."""
        cl = filter_clauses(self.baseline.filter)
        if all(self.clauses) or len(self.clauses) != len(cl):
            return self.baseline.filter
        kept = odata.conjoin(c.expr for c, on in zip(cl, self.clauses, strict=True) if on)
        return odata.render(kept) if kept is not None else None

    def profile(self) -> Profile:
        """The tuned profile: the baseline with every changed knob applied (raises ConfigError
        for combinations that cannot work, e.g. no keyword leg and no semantic text)."""
        b = self.baseline
        changes: dict[str, Any] = {}
        vqs = []
        for i, vq in enumerate(b.vector_queries):
            new = {}
            for key, values in (("k", self.ks), ("weight", self.weights), ("exhaustive", self.exhaustive),
                                ("text", self.vector_texts)):
                if i < len(values) and values[i] != getattr(vq, key):
                    new[key] = values[i]
            vqs.append(replace(vq, **new) if new else vq)
        if tuple(vqs) != b.vector_queries:
            changes["vector_queries"] = tuple(vqs)
        recall = self.max_text_recall_size
        if recall != b.max_text_recall_size and not (
                b.max_text_recall_size is None and recall == DEFAULT_MAX_TEXT_RECALL_SIZE):
            changes["max_text_recall_size"] = recall
        for key in ("vector_filter_mode", "top", "keyword_text", "semantic_text"):
            if getattr(self, key) != getattr(b, key):
                changes[key] = getattr(self, key)
        if self.reranker != (b.query_type == "semantic"):
            if self.reranker:
                changes["query_type"] = "semantic"
            else:
                changes.update(query_type="simple", captions=None, answers=None, query_rewrites=None)
        flt = self.filter()
        if flt != b.filter:
            changes["filter"] = flt
        return b.replace(**changes) if changes else b


def filter_clauses(text: str | None) -> tuple[odata.Clause, ...]:
    """Top-level clauses of a filter text (none for no filter)."""
    return odata.clauses(odata.parse(text)) if text else ()


def profile_changes(baseline: Profile, tuned: Profile) -> list[str]:
    """Human-readable differences, e.g. ["vector query 1: k 20 → 50"]."""
    out = []
    for key in ("query_type", "keyword_text", "semantic_text", "vector_filter_mode",
                "max_text_recall_size", "top", "filter", "captions", "answers", "query_rewrites"):
        a, b = getattr(baseline, key), getattr(tuned, key)
        if a != b:
            out.append(f"{key}: {a!r} → {b!r}" if key == "filter" else f"{key} {a} → {b}")
    for i, (va, vb) in enumerate(zip(baseline.vector_queries, tuned.vector_queries, strict=False), 1):
        for key in ("k", "weight", "exhaustive", "text", "fields", "filter_override"):
            a, b = getattr(va, key), getattr(vb, key)
            if a != b:
                out.append(f"vector query {i}: {key} {a} → {b}")
    return out

