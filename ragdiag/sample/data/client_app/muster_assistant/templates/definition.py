"""Definition template: what a term means in Muster AG's documents."""

from __future__ import annotations

from ..knowledge_base import KnowledgeBase, template_params


def run_definition_template(kb: KnowledgeBase, term: str, acl_filter: str) -> list[dict]:
    query = f"Definition {term}"
    results = kb.client.search(**template_params(query, acl_filter, top=3))
    return [dict(r) for r in results]
