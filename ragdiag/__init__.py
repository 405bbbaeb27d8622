"""ragdiag: a diagnostic and audit workbench for the retrieval half of RAG systems."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
