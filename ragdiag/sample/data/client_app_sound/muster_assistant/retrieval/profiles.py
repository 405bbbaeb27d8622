"""The one place that turns a named profile into a search request; every search goes through here.

Keywords feed the keyword leg, the user's full question feeds the vector leg and
the semantic reranker. Extraction confidence is a scoring-profile boost
("quality_boost"), never a filter. The security clause is always present and
built from the authenticated identity.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from azure.core.credentials import AzureKeyCredential
from azure.search.documents import SearchClient
from azure.search.documents.aio import SearchClient as AsyncSearchClient
from azure.search.documents.models import VectorizableTextQuery

from ..identity import Identity
from ..settings import INDEX_NAME, SCORING_PROFILE, SEARCH_ENDPOINT, SEMANTIC_CONFIGURATION

SELECT_FIELDS = ["id", "title", "section_title", "content", "level"]


@dataclass(frozen=True)
class Profile:
    """Everything that differs between question types."""

    name: str
    level: str
    vector_fields: str
    top: int = 5
    k: int = 50


PROFILES = {
    "fact": Profile("fact", level="evidence", vector_fields="content_vector"),
    "definition": Profile("definition", level="section", vector_fields="summary_vector"),
    "verification": Profile("verification", level="evidence", vector_fields="content_vector", top=10),
    "documents": Profile("documents", level="document", vector_fields="title_vector", top=10),
    "sections": Profile("sections", level="section", vector_fields="summary_vector", top=10),
}

_credential = AzureKeyCredential(os.environ.get("MUSTER_SEARCH_KEY", ""))
_client = SearchClient(SEARCH_ENDPOINT, INDEX_NAME, _credential)
_aclient = AsyncSearchClient(SEARCH_ENDPOINT, INDEX_NAME, _credential)


def _odata_quote(value: str) -> str:
    """The body of an OData string literal: single quotes doubled."""
    return value.replace("'", "''")


def security_filter(identity: Identity) -> str:
    """The caller's groups from the validated token, escaped, as one `search.in` clause."""
    groups = "|".join(_odata_quote(g) for g in identity.group_ids if "|" not in g)
    return f"group_ids/any(g: search.in(g, '{groups}', '|'))"


def build_request(profile_name: str, question: str, keywords: str, identity: Identity) -> dict:
    """The complete request for one profile: one text per channel, security clause always on."""
    profile = PROFILES[profile_name]
    return {
        "search_text": keywords,
        "semantic_query": question,
        "query_type": "semantic",
        "semantic_configuration_name": SEMANTIC_CONFIGURATION,
        "scoring_profile": SCORING_PROFILE,
        "vector_queries": [
            VectorizableTextQuery(text=question, k_nearest_neighbors=profile.k, fields=profile.vector_fields,
                                  exhaustive=False),
        ],
        "filter": f"{security_filter(identity)} and level eq '{profile.level}'",
        "top": profile.top,
        "select": SELECT_FIELDS,
    }


def search(profile_name: str, question: str, keywords: str, identity: Identity) -> list[dict]:
    request = build_request(profile_name, question, keywords, identity)
    return [dict(r) for r in _client.search(**request)]


async def asearch(profile_name: str, question: str, keywords: str, identity: Identity) -> list[dict]:
    request = build_request(profile_name, question, keywords, identity)
    results = await _aclient.search(**request)
    return [dict(r) async for r in results]
