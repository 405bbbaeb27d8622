"""The Muster AG knowledge base: search calls used by the chat and by the templates."""

from __future__ import annotations

import os

from azure.core.credentials import AzureKeyCredential
from azure.search.documents import SearchClient
from azure.search.documents.models import VectorizableTextQuery

from .settings import INDEX_NAME, MIN_CONFIDENCE, SEARCH_ENDPOINT, SEMANTIC_CONFIG, TOP_K, VECTOR_K


def template_params(query: str, acl_filter: str, top: int = 5) -> dict:
    """Request parameters shared by the retrieval templates."""
    return {
        "search_text": query,
        "filter": f"{acl_filter} and confidence_score ge 0.85",
        "top": top,
        "query_type": "semantic",
        "semantic_configuration_name": "default",
        "vector_queries": [
            VectorizableTextQuery(text=query, k_nearest_neighbors=50, fields="content_vector"),
        ],
    }


class KnowledgeBase:
    """Thin wrapper around the search client."""

    def __init__(self) -> None:
        self.client = SearchClient(
            endpoint=SEARCH_ENDPOINT,
            index_name=INDEX_NAME,
            credential=AzureKeyCredential(os.environ.get("MUSTER_SEARCH_KEY", "")),
        )

    def search_documents(self, query: str, acl_filter: str) -> list[dict]:
        """Hybrid search for the chat: keyword leg, vector leg and semantic reranker."""
        results = self.client.search(
            search_text=query,
            vector_queries=[
                VectorizableTextQuery(text=query, k_nearest_neighbors=VECTOR_K, fields="content_vector"),
            ],
            semantic_query=query,
            query_type="semantic",
            semantic_configuration_name=SEMANTIC_CONFIG,
            filter=f"{acl_filter} and confidence_score ge {MIN_CONFIDENCE}",
            top=TOP_K,
        )
        return list(results)

    def search_with_fallback(self, query: str, doc_type: str, acl_filter: str) -> list[dict]:
        """Narrow first, then relax: used when a template finds too little."""
        strict = f"{acl_filter} and doc_type eq '{doc_type}' and confidence_score ge {MIN_CONFIDENCE}"
        hits = list(self.client.search(search_text=query, filter=strict, top=TOP_K,
                                       query_type="semantic", semantic_configuration_name=SEMANTIC_CONFIG))
        if len(hits) >= 3:
            return hits
        relaxed = f"{acl_filter} and confidence_score ge {MIN_CONFIDENCE}"
        hits = list(self.client.search(search_text=query, filter=relaxed, top=TOP_K,
                                       query_type="semantic", semantic_configuration_name=SEMANTIC_CONFIG))
        if len(hits) >= 3:
            return hits
        # last resort: no document-type filter and a lower confidence floor
        return list(self.client.search(search_text=query, filter=f"{acl_filter} and confidence_score ge 0.80",
                                       top=TOP_K, query_type="semantic",
                                       semantic_configuration_name=SEMANTIC_CONFIG))
