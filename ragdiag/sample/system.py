"""The embedded sample system: where its files live and how to open its local targets.

The sample ("Muster AG") ships two chunkings of one corpus: `structured`
(structure-aware with overlap, the sound case) and `naive` (fixed-size without
overlap, the faulty case for the chunk check).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragdiag.cache import cache_dir
from ragdiag.errors import InputDataError

VARIANTS = ("structured", "naive")
SAMPLE_NOW = "2026-06-30T00:00:00Z"  # the sample's reference date (freshness functions)


def sample_dir() -> Path:
    """The sample system's files (package data ``ragdiag/sample/data``), or $RAGDIAG_SAMPLE_DATA."""
    env = os.environ.get("RAGDIAG_SAMPLE_DATA")
    if env:
        return Path(env)
    from importlib.resources import files

    return Path(str(files("ragdiag.sample") / "data"))


SAMPLE_CONFIGS = {"misconfigured": "audit.toml", "tuned": "audit-tuned.toml", "naive": "audit-naive.toml"}


def sample_config(name: str = "misconfigured") -> Path:
    """The path of one of the sample's audit configs: misconfigured (default), tuned, naive."""
    if name not in SAMPLE_CONFIGS:
        raise InputDataError(f"no sample config {name!r}; choose one of {', '.join(SAMPLE_CONFIGS)}")
    return sample_dir() / SAMPLE_CONFIGS[name]


_targets: dict[str, Any] = {}


def sample_embedder() -> Any:
    """The bundled MiniLM embedder with the on-disk cache, loaded once per process
    (`ragdiag.encoders.shared.shared_embedder`; the sample's name for it)."""
    from ragdiag.encoders.shared import shared_embedder

    return shared_embedder()


def open_sample_target(variant: str = "structured", *, progress: bool = True,
                       log: Callable[[str], None] | None = None) -> Any:
    """The local target over one sample index, built on first use and cached per process."""
    if variant not in VARIANTS:
        raise InputDataError(f"unknown sample variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if variant in _targets:
        return _targets[variant]
    from ragdiag.encoders import BiEncoderReranker
    from ragdiag.sample.schema import SAMPLE_VECTOR_SOURCES, sample_schema
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget, default_index_dir

    records = sample_dir() / "index" / f"{variant}.jsonl"
    spec = LocalIndexSpec(name=f"muster-{variant}", schema=sample_schema(f"muster-{variant}"),
                          vector_sources=SAMPLE_VECTOR_SOURCES, now=SAMPLE_NOW)
    emb = sample_embedder()
    target = LocalTarget.from_jsonl(records, spec, index_dir=default_index_dir(cache_dir(), spec.name),
                                    embedder=emb, reranker=BiEncoderReranker(emb),
                                    progress=progress, log=log)
    _targets[variant] = target
    return target
