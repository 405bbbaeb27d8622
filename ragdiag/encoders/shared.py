"""The default embedder shared by a process: the bundled model with the on-disk cache, loaded once.

Targets that embed questions (local, pgvector) and the sample use the same instance, so a
process loads the model and opens the embedding cache once.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["shared_embedder"]

_embedder: Any = None
_lock = threading.Lock()


def shared_embedder() -> Any:
    """The bundled embedder over `ragdiag.cache.cache_dir()`, loaded on first use."""
    global _embedder
    with _lock:
        if _embedder is None:
            from ragdiag.cache import cache_dir
            from ragdiag.encoders import default_embedder

            _embedder = default_embedder(cache_dir())
        return _embedder
