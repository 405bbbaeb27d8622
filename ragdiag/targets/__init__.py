"""Search targets: the local FAISS + BM25 hybrid and (later) live Azure AI Search."""

from ragdiag.targets.base import Target

__all__ = ["Target"]
