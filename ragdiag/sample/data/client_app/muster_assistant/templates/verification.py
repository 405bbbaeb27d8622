"""Verification template: evidence for and against a claim ("Is it true that ...?")."""

from __future__ import annotations

from ..knowledge_base import KnowledgeBase


def run_verification_template(kb: KnowledgeBase, claim: str, acl_filter: str) -> dict:
    evidence_filter = f"{acl_filter} and level eq 'evidence' and confidence_score ge 0.85"
    supporting = kb.client.search(
        search_text=claim,
        semantic_query=claim,
        filter=evidence_filter,
        top=10,
        query_type="semantic",
        semantic_configuration_name="default",
    )
    contradicting = kb.client.search(
        search_text=f"nicht {claim}",
        filter=evidence_filter,
        top=10,
        query_type="semantic",
        semantic_configuration_name="default",
    )
    return {"supporting": list(supporting), "contradicting": list(contradicting)}
