"""The vector legs: exact (`exhaustive`) or HNSW k-nearest neighbours by cosine, per field.

One copy of each field's vectors: for an HNSW field the graph file `vectors/<field>.hnsw`
holds the (L2-normalised) vectors as its flat storage; it is memory-mapped on open and the
numpy array used for exact search and pre-filtered candidate sets is a view of that
storage. A field without an HNSW profile keeps `vectors/<field>.npy`, memory-mapped.
The graph is built when the index is built (with a progress bar), never on a query.

Every vector (the index's, the semantic configurations', each query's) is a unit vector
rounded onto the grid of `ragdiag.encoders.numerics`, on which every dot product is exact in
float32: a similarity is the same whichever library, instruction set, batch or thread count
computes it (numpy here, FAISS in the graph), and equal similarities are real ties, broken
by document key. Graphs are built with one thread: FAISS inserts in parallel otherwise, and
which of two concurrent insertions links to the other depends on timing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.encoders.numerics import on_grid, to_grid
from ragdiag.targets.local.ranking import order_by_score, top_rows

BUILD_CHUNK = 5000


def normalise(arr: np.ndarray) -> np.ndarray:
    """Rows as unit vectors on the grid (float32); rows already on the grid (an embedder's)
    are kept as they are."""
    arr = np.asarray(arr)
    if arr.dtype == np.float32 and arr.ndim == 2 and on_grid(arr):
        return np.ascontiguousarray(arr)
    return to_grid(arr)


def similarities(arr: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cosine of every row of `arr` with the unit query `q` (float32; exact on grid vectors)."""
    return np.einsum("ij,j->i", arr, q)


def build_hnsw(arr: np.ndarray, m: int, ef_construction: int, path: Path, *, progress: bool,
               label: str) -> str:
    """Build an HNSW graph over `arr` (inner product) into `path`; returns its sha256."""
    import faiss

    idx = faiss.IndexHNSWFlat(arr.shape[1], max(4, m), faiss.METRIC_INNER_PRODUCT)
    idx.hnsw.efConstruction = ef_construction
    bar = None
    if progress and arr.shape[0] > BUILD_CHUNK:
        from tqdm.auto import tqdm

        bar = tqdm(total=arr.shape[0], desc=f"HNSW graph {label}", unit="vec")
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # one insertion after the other: the same graph on every run
    try:
        for start in range(0, arr.shape[0], BUILD_CHUNK):
            part = normalise(arr[start:start + BUILD_CHUNK])
            idx.add(part)
            if bar is not None:
                bar.update(part.shape[0])
    finally:
        faiss.omp_set_num_threads(threads)
        if bar is not None:
            bar.close()
    tmp = path.with_suffix(".hnsw.tmp")
    faiss.write_index(idx, str(tmp))
    tmp.replace(path)
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


class VectorField:
    """One vector field: its vectors, and its HNSW graph when the field's profile asks for one."""

    def __init__(self, name: str, vectors: np.ndarray, hnsw: Any = None, ef_search: int = 128) -> None:
        self.name = name
        self.vectors = vectors
        self.hnsw = hnsw
        self.ef_search = ef_search
        self._params: dict[int, Any] = {}  # efSearch -> unfiltered search parameters

    @classmethod
    def load(cls, folder: Path, name: str, ef_search: int) -> VectorField:
        graph = folder / f"{name}.hnsw"
        if graph.exists():
            import faiss

            idx = faiss.read_index(str(graph), faiss.IO_FLAG_MMAP_IFC)
            storage = faiss.downcast_index(idx.storage)
            view = faiss.rev_swig_ptr(storage.get_xb(), idx.ntotal * idx.d).reshape(idx.ntotal, idx.d)
            view.flags.writeable = False
            idx.hnsw.efSearch = ef_search
            return cls(name, view, idx, ef_search)
        return cls(name, np.load(folder / f"{name}.npy", mmap_mode="r").view(np.ndarray), None, ef_search)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def knn(self, q: np.ndarray, k: int, exhaustive: bool, allowed: np.ndarray | None,
            key_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows and cosine similarities (restricted to `allowed` rows), ties by key."""
        n = len(self)
        k = min(k, n)
        if k <= 0:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
        if allowed is not None:
            rows = np.flatnonzero(allowed).astype(np.int32)
            if rows.size == 0:
                return rows, np.empty(0, dtype=np.float32)
            if exhaustive or not self.uses_hnsw(allowed, k, rows.size):
                # small candidate set: exact search over it is both correct and fast
                return top_rows(similarities(self.vectors[rows], q), rows, key_rank, k)
            return self.hnsw_many(q[None, :], k, key_rank, allowed=allowed)[0]
        if exhaustive or self.hnsw is None:
            rows = np.arange(n, dtype=np.int32)
            return top_rows(similarities(self.vectors, q), rows, key_rank, k)
        return self.hnsw_many(q[None, :], k, key_rank)[0]

    def uses_hnsw(self, allowed: np.ndarray, k: int, count: int | None = None) -> bool:
        """Whether a pre-filtered search over `allowed` goes through the graph (else exact)."""
        n = len(self)
        count = int(allowed.sum()) if count is None else count
        return self.hnsw is not None and count > max(4 * min(k, n), n // 20)

    def hnsw_many(self, queries: np.ndarray, k: int, key_rank: np.ndarray,
                  allowed: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """HNSW top-k for several queries in one call, optionally restricted to `allowed` rows
        (each query is searched on its own: the results equal one call per query)."""
        import faiss

        n = len(self)
        k = min(k, n)
        ef = max(k, self.ef_search)
        if allowed is not None:
            bits = np.packbits(allowed, bitorder="little")
            sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
            params = faiss.SearchParametersHNSW(sel=sel, efSearch=ef)
        else:
            params = self._params.get(ef)
            if params is None:
                params = self._params[ef] = faiss.SearchParametersHNSW(efSearch=ef)
        d, i = self.hnsw.search(np.ascontiguousarray(queries, dtype=np.float32), k, params=params)
        return [self._sorted(i[j], d[j], key_rank) for j in range(queries.shape[0])]

    @staticmethod
    def _sorted(ids: np.ndarray, sims: np.ndarray, key_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's result (best first) with equal similarities put in document-key order."""
        keep = ids >= 0
        rows = ids[keep].astype(np.int32)
        sims = sims[keep]
        if rows.shape[0] > 1 and (sims[1:] == sims[:-1]).any():
            order = order_by_score(sims, rows, key_rank)
            rows, sims = rows[order], sims[order]
        return rows, sims


def query_vector(v: Sequence[float] | np.ndarray, dim: int) -> np.ndarray:
    """The unit query vector on the grid (float32) of a raw vector, checked against the index's
    dimension (an all-zero vector stays zero)."""
    from ragdiag.errors import InputDataError

    v = np.asarray(v)
    if v.dtype != np.float32:
        v = v.astype(np.float64)
    if v.shape != (dim,):
        raise InputDataError(f"query vector has {v.shape[0] if v.ndim else 0} dimensions, the index has {dim}")
    return normalise(v[None, :])[0]
