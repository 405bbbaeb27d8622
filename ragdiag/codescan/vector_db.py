"""Native vector-database clients' query calls (Qdrant, Weaviate, Chroma, Pinecone): search call sites of kind
``vector_db``.

Without them an application that queries its vector database through the database's own client, not a
framework, showed no search call site at all, and every code check then said "no call site" or passed on
nothing. A call is taken for a query only by a shape no other library has: a method name of the client's
query API on a receiver the client's API names (`client.query_points(...)`, `collection.query.near_text(...)`,
`collection.query(query_texts=..., n_results=...)`, `index.query(vector=..., top_k=...)`). The result count is
read from the call; absent, it is the client's documented default where there is one (Qdrant and Chroma: 10)
and unresolved otherwise (Weaviate's server-side `QUERY_DEFAULTS_LIMIT`, Pinecone's required `top_k`).
"""

from __future__ import annotations

__all__ = ["COUNT_KEYS", "DEFAULTS", "FILTER_KEYS", "TEXT_KEYS", "VECTOR_DB_WORDS", "VECTOR_KEYS", "query_api"]

#: Lower-case words marking a line (and a file) that may hold such a call (added to the scanners' triggers): the
#: query APIs' own method and keyword names, not the vendors' names (which integration code mentions everywhere).
VECTOR_DB_WORDS = ("query_points", "search_batch", "near_text", "near_vector", "fetch_objects", "n_results",
                   "query.hybrid(", "query.bm25(", "top_k=")

#: Keyword (Python) or option (JS) names of the result count, the filter, the query text and the vector.
COUNT_KEYS = ("limit", "top_k", "topK", "n_results", "nResults")
FILTER_KEYS = ("query_filter", "filter", "filters", "where", "where_document", "whereDocument")
TEXT_KEYS = ("query_texts", "queryTexts", "query")
VECTOR_KEYS = ("query_vector", "vector", "query_embeddings", "queryEmbeddings")
#: The client's own default result count when the call passes none (None: no default the code can state).
DEFAULTS = {"qdrant": 10, "chroma": 10, "weaviate": None, "pinecone": None}

_QDRANT = frozenset({"query_points", "search_batch", "query_batch_points", "query_points_groups", "search_groups"})
_WEAVIATE = frozenset({"near_text", "near_vector", "hybrid", "bm25", "fetch_objects", "nearText", "nearVector",
                       "fetchObjects", "near_object", "nearObject"})


def query_api(method: str, receiver: str, keys: set[str], receiver_type: str | None = None) -> str | None:
    """Which client's query API `receiver.method(...)` with these keyword / option names is, or None.

    `receiver_type` is what the scanner knows the receiver was built as (``qdrant`` for `QdrantClient(...)`)."""
    tail = receiver.rsplit(".", 1)[-1].lower()
    if method in _QDRANT or (method == "search" and receiver_type == "qdrant"):
        return "qdrant"
    if method in _WEAVIATE and tail == "query":  # collection.query.near_text(...), collections.get(x).query.hybrid
        return "weaviate"
    if method == "query" and keys & {"n_results", "nResults", "query_texts", "queryTexts", "query_embeddings",
                                     "queryEmbeddings"}:
        return "chroma"
    if method == "query" and keys & {"top_k", "topK"} and keys & {"vector", "id", "sparse_vector", "sparseVector"}:
        return "pinecone"
    if method in ("search", "query") and receiver_type == "qdrant":
        return "qdrant"
    return None
