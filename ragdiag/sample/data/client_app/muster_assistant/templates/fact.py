"""Fact template: one precise, citable passage ("Which notice period applies to ...?")."""

from __future__ import annotations

from azure.search.documents.models import VectorizedQuery

from ..embeddings import embed
from ..knowledge_base import KnowledgeBase

FACT_TOP = 5


def run_fact_template(kb: KnowledgeBase, query: str, acl_filter: str) -> list[dict]:
    vector = VectorizedQuery(vector=embed(query), k_nearest_neighbors=20, fields="content_vector")
    results = kb.client.search(
        search_text=query,
        vector_queries=[vector],
        filter=f"{acl_filter} and level eq 'evidence' and confidence_score ge 0.85",
        top=FACT_TOP,
        query_type="semantic",
        semantic_configuration_name="default",
    )
    hits = [dict(r) for r in results]
    if len(hits) < 2:
        return kb.search_with_fallback(query, "contract", acl_filter)
    return hits
