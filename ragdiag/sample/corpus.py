"""The whole sample corpus: every generator's documents in a fixed order, and their facts."""

from __future__ import annotations

from typing import Any

from ragdiag.sample import (
    Fact,
    docs_contracts,
    docs_handbooks,
    docs_hr,
    docs_policies,
    docs_products,
    docs_tickets,
)

GENERATORS = (docs_contracts, docs_policies, docs_handbooks, docs_tickets, docs_hr,
              docs_products)


def build_corpus() -> tuple[list[dict[str, Any]], list[Fact]]:
    """All source documents (sorted by doc_id) and all planted facts (in generator order).

    Raises ValueError if two generators produce the same doc_id.
    """
    docs: list[dict[str, Any]] = []
    facts: list[Fact] = []
    for gen in GENERATORS:
        d, f = gen.generate()
        docs += d
        facts += f
    ids = [d["doc_id"] for d in docs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"duplicate doc_ids in the sample corpus: {', '.join(dup)}")
    return sorted(docs, key=lambda d: d["doc_id"]), facts


__all__ = ["GENERATORS", "build_corpus"]
