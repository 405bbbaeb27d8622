"""Checkpoint inspection: which weights a transformers checkpoint folder really holds.

transformers fills parameters a checkpoint lacks with random values (its load report calls
them MISSING). A cross-encoder whose classification head is missing therefore scores
noise, different on every load; `params_missing_from` finds such parameters by comparing
the instantiated model with the tensors stored on disk (`Checkpoint`: safetensors headers
read without loading, PyTorch ``.bin`` files memory-mapped), so that
`CrossEncoderReranker` can refuse the folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragdiag.encoders import offline
from ragdiag.errors import ModelError


class Checkpoint:
    """Names and shapes of the tensors stored in a transformers checkpoint folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.shapes: dict[str, tuple[int, ...]] = {}
        self._file_of: dict[str, Path] = {}
        self._bin_cache: dict[Path, dict[str, Any]] = {}
        self._st_handles: dict[Path, Any] = {}
        st_index = folder / "model.safetensors.index.json"
        bin_index = folder / "pytorch_model.bin.index.json"
        if (folder / "model.safetensors").is_file():
            self._add_safetensors(folder / "model.safetensors")
        elif st_index.is_file():
            for fname in sorted(set((offline.read_json(st_index) or {}).get("weight_map", {}).values())):
                self._add_safetensors(folder / fname)
        elif (folder / "pytorch_model.bin").is_file():
            self._add_bin(folder / "pytorch_model.bin")
        elif bin_index.is_file():
            for fname in sorted(set((offline.read_json(bin_index) or {}).get("weight_map", {}).values())):
                self._add_bin(folder / fname)
        else:
            raise ModelError(
                f"{folder} has no PyTorch checkpoint (model.safetensors, pytorch_model.bin or "
                "their sharded .index.json); ragdiag runs cross-encoders with torch only."
            )

    def _add_safetensors(self, path: Path) -> None:
        # The header is little-endian u64 length + JSON {name: {dtype, shape, offsets}}.
        try:
            with path.open("rb") as fh:
                n = int.from_bytes(fh.read(8), "little")
                header = json.loads(fh.read(n))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{path}: unreadable safetensors file: {exc}") from exc
        for name, meta in header.items():
            if name != "__metadata__":
                self.shapes[name] = tuple(meta.get("shape", ()))
                self._file_of[name] = path

    def _add_bin(self, path: Path) -> None:
        import torch

        try:
            state = torch.load(str(path), map_location="cpu", weights_only=True, mmap=True)
        except Exception as exc:
            raise ModelError(f"{path}: unreadable PyTorch checkpoint: {exc}") from exc
        self._bin_cache[path] = state
        for name, tensor in state.items():
            self.shapes[name] = tuple(getattr(tensor, "shape", ()))
            self._file_of[name] = path

    @property
    def names(self) -> set[str]:
        return set(self.shapes)

    def tensor(self, name: str) -> Any:
        path = self._file_of[name]
        if path.suffix == ".safetensors":
            handle = self._st_handles.get(path)
            if handle is None:
                from safetensors import safe_open

                handle = self._st_handles[path] = safe_open(str(path), framework="pt")
            return handle.get_tensor(name)
        return self._bin_cache[path][name]

    def holds_values_of(self, param: Any) -> bool:
        """True if some stored tensor equals ``param`` (a weight loaded under another name)."""
        import torch

        shape = tuple(param.shape)
        value = param.detach().to("cpu", torch.float32)
        for name, stored_shape in self.shapes.items():
            if stored_shape == shape:
                stored = self.tensor(name).to(param.dtype).to(torch.float32)
                if torch.equal(stored, value):
                    return True
        return False


def transformer_folder(path: Path) -> tuple[Path, list[dict[str, Any]] | None]:
    """The folder holding the transformers config and weights (modules.json may move it)."""
    modules = offline.modules(path)
    for m in modules or []:
        if str(m.get("type", "")).endswith("Transformer"):
            return path / str(m.get("path", "")), modules
    return path, modules


def params_missing_from(hf_model: Any, ckpt: Checkpoint) -> list[str]:
    """Parameters of the instantiated model that the checkpoint does not provide.

    transformers fills such parameters with random values (its load report calls them
    MISSING). Matching is by name (with or without the base-model prefix, e.g. ``bert.``),
    then by value, so legacy names that transformers renames on load are not false alarms.
    """
    prefix = str(getattr(hf_model, "base_model_prefix", "") or "")
    names = ckpt.names
    missing = []
    for name, param in hf_model.named_parameters():
        candidates = {name}
        if prefix and name.startswith(prefix + "."):
            candidates.add(name[len(prefix) + 1:])
        elif prefix:
            candidates.add(f"{prefix}.{name}")
        if candidates & names:
            continue
        if ckpt.holds_values_of(param):
            continue
        missing.append(name)
    return missing

