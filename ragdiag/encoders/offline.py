"""Loading models offline: the hub switched off, and reading a local model folder's files.

Nothing is ever downloaded: the HF offline switches are forced on before
sentence-transformers is imported (`import_sentence_transformers`, the only place it is
imported) and every load passes ``local_files_only=True``. The folder readers here
(`read_json`, `modules`, `module_kinds`, `weight_files`) let the embedder and the
cross-encoder check a folder before loading it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ragdiag.errors import MissingDependencyError, ModelError


def force_offline() -> None:
    """Forbid every model-hub download for this process (read by huggingface_hub at import)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def import_sentence_transformers() -> Any:
    """Import sentence_transformers with the hub switched off (the only place it is imported)."""
    force_offline()
    try:
        import sentence_transformers
    except ImportError as exc:  # pragma: no cover - the venv always has it
        raise MissingDependencyError(
            "sentence-transformers (and torch) are needed to run embedding or reranking "
            f"models but could not be imported ({exc}). Fix: pip install "
            "sentence-transformers==6.2.0 and the torch build for your machine."
        ) from exc
    return sentence_transformers


def read_json(path: Path) -> Any:
    """A model folder's JSON file (None if absent); unreadable files raise `ModelError`."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot read this model file: {exc}") from exc


def modules(folder: Path) -> list[dict[str, Any]] | None:
    """The sentence-transformers module list (``modules.json``), if the folder has one."""
    data = read_json(folder / "modules.json")
    return data if isinstance(data, list) else None


def module_kinds(mods: list[dict[str, Any]] | None) -> list[str]:
    """Module class names, e.g. ``["Transformer", "Pooling", "Normalize"]``."""
    return [str(m.get("type", "")).rsplit(".", 1)[-1] for m in mods or []]


def weight_files(folder: Path) -> list[Path]:
    """Every weight file under the folder (safetensors, PyTorch, ONNX)."""
    return sorted(
        p for p in folder.rglob("*")
        if p.is_file() and p.suffix in {".safetensors", ".bin", ".pt", ".onnx"}
    )

