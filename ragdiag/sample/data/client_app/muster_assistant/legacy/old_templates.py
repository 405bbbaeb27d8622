"""Templates of the 2023 prototype. /v1/definition and /v1/overview still call these."""

from __future__ import annotations

import requests
from azure.search.documents.models import VectorizedQuery

from ..embeddings import embed
from ..settings import INDEX_NAME, SEARCH_API_VERSION, SEARCH_ENDPOINT

LEGACY_TOP = 10


def legacy_definition_search(client, term: str) -> list[dict]:
    vq = VectorizedQuery(vector=embed(term), k_nearest_neighbors=100, fields="content_vector", exhaustive=True)
    results = client.search(search_text=term, vector_queries=[vq], filter="confidence_score ge 0.85",
                            top=LEGACY_TOP)
    return list(results)


def legacy_overview_search(term: str, api_key: str) -> list[dict]:
    url = f"{SEARCH_ENDPOINT}/indexes/{INDEX_NAME}/docs/search?api-version={SEARCH_API_VERSION}"
    body = {
        "search": term,
        "top": 50,
        "vectorQueries": [
            {"kind": "text", "text": term, "fields": "summary_vector", "k": 100, "exhaustive": True},
        ],
    }
    response = requests.post(url, json=body, headers={"api-key": api_key}, timeout=30)
    response.raise_for_status()
    return response.json()["value"]
