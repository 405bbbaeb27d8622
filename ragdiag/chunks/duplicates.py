"""Exact and near-duplicate detection: word-sequence hashes, one-permutation MinHash and LSH.

`batch_numeric` is the vectorised per-batch pass (word hashes, MinHash
signatures, and the byte-class features of the token estimate, in one pass
over the bytes); `find_duplicates` groups the exact copies and finds near
duplicates among the signatures.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragdiag.chunks.tokens import N_FEATURES

NEAR_DUPLICATE_JACCARD = 0.8
NUM_PERM = 16
LSH_BANDS = 4
LSH_ROWS = 4
SHINGLE_WORDS = 3

_MASK64 = (1 << 64) - 1
_R = 0x100000001B3  # odd: invertible mod 2**64
_R_INV = pow(_R, -1, 1 << 64)
_Q = 0x9E3779B97F4A7C15
_rng = np.random.default_rng(20240607)
_BIN_BITS = NUM_PERM.bit_length() - 1  # NUM_PERM is a power of two
_SHINGLE_MULT = tuple(np.uint64(int(x) | 1) for x in _rng.integers(1, 2**62, size=SHINGLE_WORDS))
_BAND_MULT = tuple(np.uint64(int(x) | 1) for x in _rng.integers(1, 2**62, size=LSH_ROWS + 1))
_POW_CACHE: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
_EMPTY_SIG = np.uint32(0xFFFFFFFF)


def _byte_class(i: int) -> int:
    """0 whitespace or control, 1 ASCII letter, 2 ASCII punctuation, 3 digit, 4 non-ASCII byte."""
    c = chr(i)
    if i >= 128:
        return 4
    if c.isalpha():
        return 1
    if c.isdigit():
        return 3
    if 33 <= i < 127:
        return 2
    return 0


_WS = np.array([i in b" \t\n\r\x0b\x0c\x00" for i in range(256)])
_CLASS = np.array([_byte_class(i) for i in range(256)], dtype=np.int64)
_LOWER = np.array([i + 32 if 65 <= i <= 90 else i for i in range(256)], dtype=np.uint8)


def _powers(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Powers of _R, _R^-1 and _Q (mod 2**64) up to at least `n`, cached (thread-safe)."""
    cached = _POW_CACHE.get("all")
    if cached is None or len(cached[0]) < n:
        size = max(n, 1 << 16, 2 * (0 if cached is None else len(cached[0])))
        with np.errstate(over="ignore"):
            p = np.cumprod(np.full(size, _R, dtype=np.uint64)) * np.uint64(_R_INV)
            pinv = np.cumprod(np.full(size, _R_INV, dtype=np.uint64)) * np.uint64(_R)
            q = np.cumprod(np.full(size, _Q, dtype=np.uint64)) * np.uint64(pow(_Q, -1, 1 << 64))
        cached = (p, pinv, q)
        _POW_CACHE["all"] = cached  # one assignment: readers see old or new, never half
    return cached


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, element-wise (wrapping uint64 arithmetic)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xBF58476D1CE4E5B9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _segments(owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owners, start indices) of the runs of a sorted owner array."""
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    return owner[starts], starts


def batch_numeric(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: MinHash signature, exact hash, token-estimate features; vectorised over a batch.

    Texts are split at whitespace; ASCII letters are case-folded. Returns (signatures n x
    NUM_PERM uint32 -- all ones for texts under three words --, hashes n
    uint64 of the word sequence -- 0 for an empty text --, features n x
    N_FEATURES float64: 1, words, ASCII letters, ASCII punctuation, digits,
    non-ASCII bytes). Deterministic across processes (no Python string hashing).
    """
    n = len(texts)
    sig = np.full((n, NUM_PERM), _EMPTY_SIG, dtype=np.uint32)
    hashes = np.zeros(n, dtype=np.uint64)
    feats = np.zeros((n, N_FEATURES))
    feats[:, 0] = 1.0
    if not n:
        return sig, hashes, feats
    b = np.frombuffer("\x00".join(texts).encode("utf-8", "replace"), dtype=np.uint8)
    if not len(b):
        return sig, hashes, feats
    owner_b = np.cumsum(b == 0)
    if owner_b[-1] != n - 1:  # a text contains NUL itself
        b = np.frombuffer("\x00".join(t.replace("\x00", " ") for t in texts).encode("utf-8", "replace"),
                          dtype=np.uint8)
        owner_b = np.cumsum(b == 0)
    b = _LOWER[b]  # ASCII case folding
    counts = np.bincount(owner_b * 5 + _CLASS[b], minlength=5 * n).reshape(n, 5)
    feats[:, 2:] = counts[:, 1:]
    ws = _WS[b]
    prev_ws = np.r_[True, ws[:-1]]
    next_ws = np.r_[ws[1:], True]
    starts = np.flatnonzero(~ws & prev_ws)
    if not len(starts):
        return sig, hashes, feats
    ends = np.flatnonzero(~ws & next_ws) + 1
    word_owner = owner_b[starts]
    feats[:, 1] = np.bincount(word_owner, minlength=n)
    p, pinv, q = _powers(len(b) + 1)
    with np.errstate(over="ignore"):
        h = np.zeros(len(b) + 1, dtype=np.uint64)
        np.cumsum(b.astype(np.uint64) * p[: len(b)], out=h[1:])
        words = _mix((h[ends] - h[starts]) * pinv[starts])
        # exact hash: polynomial over the word sequence of each text
        owners, first = _segments(word_owner)
        rank = np.arange(len(words)) - np.repeat(first, np.diff(np.r_[first, len(words)]))
        contrib = words * q[rank]
        hashes[owners] = _mix(np.add.reduceat(contrib, first)) | np.uint64(1)
        # one-permutation MinHash over word 3-shingles that stay inside one text: the top
        # bits of a shingle's hash pick one of NUM_PERM bins, each bin keeps its minimum
        k = SHINGLE_WORDS
        m = len(words) - k + 1
        if m > 0:
            sh = words[:m] * _SHINGLE_MULT[0]
            for j in range(1, k):
                sh = sh + words[j: j + m] * _SHINGLE_MULT[j]
            valid = word_owner[:m] == word_owner[k - 1:]
            sh = _mix(sh[valid])
            if len(sh):
                slot = word_owner[:m][valid] * NUM_PERM + (sh >> np.uint64(64 - _BIN_BITS)).astype(np.int64)
                flat = sig.reshape(-1)
                np.minimum.at(flat, slot, (sh & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    return sig, hashes, feats


def find_duplicates(h: np.ndarray, signatures: Sequence[np.ndarray], keys: Sequence[str],
                    n_examples: int) -> tuple[int, int, int, list[tuple[str, str]],
                                              list[tuple[str, str]]]:
    """Exact and near duplicates among the chunks, from their hashes `h` and MinHash signatures
    (per batch, as `batch_numeric` returns them): (exact duplicates beyond the first copy,
    groups of exact copies, near duplicates, up to `n_examples` examples of each kind as
    (key, text)). Near: LSH over `LSH_BANDS` bands of `LSH_ROWS` signature values, pairs
    confirmed when at least `NEAR_DUPLICATE_JACCARD` of the values agree."""
    n = len(keys)
    if not n:
        return 0, 0, 0, [], []
    nz = h != 0
    uniq, first, inverse, counts = np.unique(h, return_index=True, return_inverse=True,
                                             return_counts=True)
    dup_mask = nz & (counts[inverse] > 1)
    is_first = np.zeros(n, dtype=bool)
    is_first[first] = True
    exact = int((dup_mask & ~is_first).sum())
    dup_groups = np.flatnonzero((counts > 1) & (uniq != 0))
    exact_examples: list[tuple[str, str]] = []
    for gi in dup_groups[: n_examples]:
        members = np.flatnonzero(inverse == gi)
        exact_examples.append((keys[members[1]],
                               f"same text as {keys[members[0]]} ({int(counts[gi])} copies)"))
    sig = np.concatenate(signatures)
    idx_all = np.flatnonzero(~(sig == _EMPTY_SIG).all(axis=1) & nz)
    near_mask = np.zeros(n, dtype=bool)
    near_examples: list[tuple[str, str]] = []
    if len(idx_all) > 1:
        s64 = sig[idx_all].astype(np.uint64)
        need = int(np.ceil(NEAR_DUPLICATE_JACCARD * NUM_PERM))
        with np.errstate(over="ignore"):
            for band in range(LSH_BANDS):
                bh = np.full(len(idx_all), np.uint64(band + 1) * _BAND_MULT[-1], dtype=np.uint64)
                for j in range(LSH_ROWS):
                    bh = bh + s64[:, band * LSH_ROWS + j] * _BAND_MULT[j]
                order = np.argsort(bh, kind="stable")
                sb = bh[order]
                run_start = np.r_[True, sb[1:] != sb[:-1]]
                heads = np.maximum.accumulate(np.where(run_start, np.arange(len(sb)), 0))
                cand = np.flatnonzero(~run_start)
                if not len(cand):
                    continue
                a = idx_all[order[heads[cand]]]
                b = idx_all[order[cand]]
                hit = ((sig[a] == sig[b]).sum(axis=1) >= need) & (h[a] != h[b])
                near_mask[a[hit]] = True
                near_mask[b[hit]] = True
                for x, y in zip(a[hit], b[hit], strict=True):
                    if len(near_examples) >= n_examples:
                        break
                    est = float((sig[x] == sig[y]).mean())
                    near_examples.append((keys[y], f"near {keys[x]} "
                                          f"(estimated Jaccard {est:.2f})"))
    return exact, len(dup_groups), int(near_mask.sum()), exact_examples, near_examples

