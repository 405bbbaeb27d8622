"""The cache folder every part of ragdiag shares (built indexes, embeddings, traces).

Infrastructure, not the sample's: targets, the orchestrator and the sample all take the folder
from here, so no target depends on the sample package.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ENV_VAR", "cache_dir"]

ENV_VAR = "RAGDIAG_CACHE"


def cache_dir() -> Path:
    """Where built indexes and embeddings live: $RAGDIAG_CACHE or ~/.cache/ragdiag (created)."""
    env = os.environ.get(ENV_VAR)
    path = Path(env) if env else Path.home() / ".cache" / "ragdiag"
    path.mkdir(parents=True, exist_ok=True)
    return path
