"""The stage trace a search returns: ranked lists per leg, hits with every score.

`Trace` holds every stage of one executed request (keyword leg, vector legs,
fused pool, rerank window, final hits) so that probes and widgets can answer
what-ifs without searching again.

Stage lists and hits may be held compactly: a `RankedList` built with
`RankedList.of_ids` keeps integer ids into a `KeyTable` and a score array, and a
trace's `hits` may be a `HitList` that builds each `Hit` (and its `fields`) only
when it is read. Readers see the same attributes either way (`.keys`, `.scores`,
`.rank_of`, `hits[i].key`, `hits[i].fields`, ...); only what is read is turned
into Python strings and floats.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragdiag.model.request import SearchRequest, _to_dict

_NO_IDS = np.empty(0, dtype=np.int32)
_NO_SCORES = np.empty(0, dtype=np.float32)


class KeyTable:
    """Document keys by integer id (a local index's rows): compact lists hold ids, not strings."""

    __slots__ = ("_keys", "_array", "_index", "__weakref__")

    def __init__(self, keys: Sequence[str], index: Mapping[str, int] | None = None) -> None:
        self._keys = keys if isinstance(keys, list) else list(keys)
        self._array: np.ndarray | None = None
        self._index = index

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"KeyTable({len(self._keys)} keys)"

    @property
    def array(self) -> np.ndarray:
        if self._array is None:
            arr = np.empty(len(self._keys), dtype=object)
            arr[:] = self._keys
            self._array = arr
        return self._array

    @property
    def index(self) -> Mapping[str, int]:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self._keys)}
        return self._index

    def key(self, i: int) -> str:
        return self._keys[int(i)]

    def take(self, ids: np.ndarray) -> tuple[str, ...]:
        if len(ids) == 0:
            return ()
        return tuple(self.array[ids].tolist())

    def id_of(self, key: str) -> int | None:
        return self.index.get(key)


class RankedList:
    """One ranked candidate list: the keyword leg, one vector field, or the fused pool.

    Built from keys and scores (`RankedList(name, keys, scores, weight)`) or compactly
    from ids into a `KeyTable` (`RankedList.of_ids`); `keys` and `scores` read the same.
    """

    __slots__ = ("name", "weight", "_keys", "_scores", "_ids", "_sc", "_table")

    def __init__(self, name: str, keys: Sequence[str] = (), scores: Sequence[float] = (),
                 weight: float = 1.0) -> None:
        self.name = name
        self.weight = weight
        self._keys: tuple[str, ...] | None = tuple(keys)
        self._scores: tuple[float, ...] | None = tuple(scores)
        self._ids: np.ndarray | None = None
        self._sc: np.ndarray | None = None
        self._table: KeyTable | None = None

    @classmethod
    def of_ids(cls, name: str, ids: np.ndarray, scores: np.ndarray, table: KeyTable,
               weight: float = 1.0) -> RankedList:
        """A list held as ids into `table` and a score array (nothing converted until read)."""
        self = cls.__new__(cls)
        self.name = name
        self.weight = weight
        self._keys = None
        self._scores = None
        self._ids = ids
        self._sc = scores
        self._table = table
        return self

    # ---- compact views (None for key-built lists) ------------------------------------
    @property
    def table(self) -> KeyTable | None:
        return self._table

    @property
    def ids(self) -> np.ndarray | None:
        return self._ids

    @property
    def score_array(self) -> np.ndarray:
        if self._sc is not None:
            return self._sc
        return np.asarray(self._scores, dtype=np.float64)

    # ---- the public reading API ------------------------------------------------------
    @property
    def keys(self) -> tuple[str, ...]:
        if self._keys is not None:
            return self._keys
        return self._table.take(self._ids)  # type: ignore[union-attr]

    @property
    def scores(self) -> tuple[float, ...]:
        if self._scores is not None:
            return self._scores
        return tuple(self._sc.tolist())  # type: ignore[union-attr]

    def __len__(self) -> int:
        return len(self._keys) if self._keys is not None else int(self._ids.shape[0])  # type: ignore[union-attr]

    def rank_of(self, key: str) -> int | None:
        """1-based rank of `key`, or None when absent."""
        if self._keys is not None:
            try:
                return self._keys.index(key) + 1
            except ValueError:
                return None
        i = self._table.id_of(key)  # type: ignore[union-attr]
        if i is None:
            return None
        pos = np.flatnonzero(self._ids == i)  # type: ignore[operator]
        return int(pos[0]) + 1 if pos.size else None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight,
                "keys": list(self.keys), "scores": [round(s, 6) for s in self.scores]}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RankedList):
            return NotImplemented
        return (self.name == other.name and self.weight == other.weight and self.keys == other.keys
                and self.scores == other.scores)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RankedList({self.name!r}, {len(self)} keys, weight={self.weight})"

    def __reduce__(self) -> Any:  # pickles as plain keys and scores, never the key table
        return (RankedList, (self.name, self.keys, self.scores, self.weight))


class KeySeq(Sequence[str]):
    """A read-only sequence of keys held as ids into a `KeyTable` (e.g. the rerank window)."""

    __slots__ = ("_ids", "_table")

    def __init__(self, ids: np.ndarray, table: KeyTable) -> None:
        self._ids = ids
        self._table = table

    @property
    def ids(self) -> np.ndarray:
        return self._ids

    @property
    def table(self) -> KeyTable:
        return self._table

    def __len__(self) -> int:
        return int(self._ids.shape[0])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return self._table.take(self._ids[i])
        return self._table.key(self._ids[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.take(self._ids))

    def __contains__(self, key: object) -> bool:
        i = self._table.id_of(key) if isinstance(key, str) else None
        return i is not None and bool((self._ids == i).any())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> Any:
        return (tuple, (tuple(self),))


@dataclass(frozen=True)
class Hit:
    """One result with every score the target can report."""

    key: str
    score: float  # @search.score: fused (RRF) score times the document boost
    fields: Mapping[str, Any] = field(default_factory=dict)
    reranker_score: float | None = None
    reranker_boosted_score: float | None = None
    text_score: float | None = None
    text_rank: int | None = None
    vector_similarities: Mapping[str, float] = field(default_factory=dict)
    vector_ranks: Mapping[str, int] = field(default_factory=dict)
    fused_score: float | None = None
    fused_rank: int | None = None
    document_boost: float = 1.0
    captions: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return _to_dict(self)


class LazyFields(Mapping[str, Any]):
    """A hit's selected fields, read from the index's record only when asked for."""

    __slots__ = ("_record", "_select")

    def __init__(self, record: Callable[[], Mapping[str, Any]], select: tuple[str, ...]) -> None:
        self._record = record
        self._select = select

    def __getitem__(self, name: str) -> Any:
        if name not in self._select:
            raise KeyError(name)
        return self._record().get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._select)

    def __len__(self) -> int:
        return len(self._select)

    def __contains__(self, name: object) -> bool:
        return name in self._select

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self) -> Any:
        return (dict, (dict(self),))


class HitView(Hit):
    """One hit of a `HitList`, read from the list's columns attribute by attribute.

    It is a `Hit` (isinstance, `to_dict`, equality with other views, `dataclasses.replace`,
    which returns a plain `Hit`), costs two references until an attribute is read, and
    computes only the attributes a reader asks for.
    """

    __slots__ = ("_hl", "_i")

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # `dataclasses.replace(view, ...)` calls the class with every field: give a plain Hit
        return Hit(*args, **kwargs)

    @classmethod
    def _at(cls, hl: HitList, i: int) -> HitView:
        v = object.__new__(cls)
        object.__setattr__(v, "_hl", hl)
        object.__setattr__(v, "_i", i)
        return v

    def _pos(self) -> int:
        return int(self._hl.positions[self._i])

    @property  # type: ignore[override]
    def key(self) -> str:
        hl = self._hl
        return hl.table.key(hl.pool.ids[hl.positions[self._i]])  # type: ignore[index]

    @property  # type: ignore[override]
    def score(self) -> float:
        return float(self._hl.pool.score_array[self._pos()])

    fused_score = score  # type: ignore[assignment]

    @property  # type: ignore[override]
    def fused_rank(self) -> int:
        return self._pos() + 1

    @property  # type: ignore[override]
    def fields(self) -> Mapping[str, Any]:
        hl = self._hl
        if hl.records is None:
            return {}
        return LazyFields(_record_of(hl.records, int(hl.pool.ids[self._pos()])), hl.select)  # type: ignore[index]

    @property  # type: ignore[override]
    def reranker_score(self) -> float | None:
        p = self._pos()
        rr = self._hl.window_rr
        return float(rr[p]) if p < rr.shape[0] else None

    @property  # type: ignore[override]
    def reranker_boosted_score(self) -> float | None:
        p = self._pos()
        rrb = self._hl.window_rrb
        return float(rrb[p]) if rrb is not None and p < rrb.shape[0] else None

    @property  # type: ignore[override]
    def text_rank(self) -> int | None:
        tp = self._hl._columns()[0]
        return int(tp[self._i]) + 1 if tp is not None and tp[self._i] >= 0 else None

    @property  # type: ignore[override]
    def text_score(self) -> float | None:
        r = self.text_rank
        return None if r is None else float(self._hl.text.score_array[r - 1])  # type: ignore[union-attr]

    @property  # type: ignore[override]
    def vector_ranks(self) -> Mapping[str, int]:
        return {f: int(p[self._i]) + 1 for f, _lst, p in self._hl._columns()[1] if p[self._i] >= 0}

    @property  # type: ignore[override]
    def vector_similarities(self) -> Mapping[str, float]:
        return {f: float(lst.score_array[p[self._i]]) for f, lst, p in self._hl._columns()[1] if p[self._i] >= 0}

    @property  # type: ignore[override]
    def document_boost(self) -> float:
        return float(self._hl.boosts[self._i])

    @property  # type: ignore[override]
    def captions(self) -> tuple[str, ...]:
        c = self._hl.captions
        return c[self._i] if c is not None else ()

    def __reduce__(self) -> Any:  # pickles as a plain Hit with plain fields
        return (_plain_hit, (self.to_dict(),))


def _plain_hit(values: dict[str, Any]) -> Hit:
    values = dict(values)
    values["captions"] = tuple(values.get("captions") or ())
    return Hit(**values)


class HitList(Sequence[Hit]):
    """The hits of a trace from a target with stage lists, held as pool positions, built on access.

    Every score but the document boost is read from the trace's stage lists, so a hit costs
    8 bytes until it is read: `score`/`fused_score`/`fused_rank` from the pool (a hit is its
    pool entry at `positions[i]`), `text_score`/`text_rank` from the keyword leg,
    `vector_similarities`/`vector_ranks` from the first vector list of each field holding
    it, the reranker scores from the rerank window (the pool's first `len(window_rr)`
    entries). `fields` is a `LazyFields` view of the record (through `records(row)`).
    """

    __slots__ = ("positions", "boosts", "select", "captions", "text", "vectors", "pool",
                 "window_rr", "window_rrb", "records", "_cols")

    def __init__(self, positions: np.ndarray, boosts: np.ndarray, *, pool: RankedList,
                 text: RankedList | None = None, vectors: Sequence[RankedList] = (),
                 window_rr: np.ndarray = _NO_SCORES, window_rrb: np.ndarray | None = None,
                 select: tuple[str, ...] = (), captions: Sequence[tuple[str, ...]] | None = None,
                 records: Callable[[int], Mapping[str, Any]] | None = None) -> None:
        if pool.table is None:
            raise ValueError("HitList needs a compact (id-based) pool")
        self.positions = positions
        self.boosts = boosts
        self.select = select
        self.captions = tuple(captions) if captions is not None else None
        self.text = text
        self.vectors = tuple(vectors)
        self.pool = pool
        self.window_rr = window_rr
        self.window_rrb = window_rrb
        self.records = records
        self._cols: tuple[Any, ...] | None = None

    @property
    def table(self) -> KeyTable:
        return self.pool.table  # type: ignore[return-value]

    @property
    def ids(self) -> np.ndarray:
        return self.pool.ids[self.positions]  # type: ignore[index]

    @property
    def window_ids(self) -> np.ndarray:
        return self.pool.ids[:self.window_rr.shape[0]]  # type: ignore[index]

    def __len__(self) -> int:
        return int(self.positions.shape[0])

    def keys(self) -> tuple[str, ...]:
        return self.table.take(self.ids)

    @staticmethod
    def _positions(list_ids: np.ndarray | None, ids: np.ndarray) -> np.ndarray:
        """Index of each of `ids` in `list_ids` (-1 when absent)."""
        out = np.full(ids.shape[0], -1, dtype=np.int64)
        if list_ids is None or list_ids.shape[0] == 0 or ids.shape[0] == 0:
            return out
        order = np.argsort(list_ids, kind="stable")
        srt = list_ids[order]
        at_c = np.minimum(np.searchsorted(srt, ids), srt.shape[0] - 1)
        found = srt[at_c] == ids
        out[found] = order[at_c[found]]
        return out

    def _columns(self) -> tuple[Any, ...]:
        """Per hit: position in the keyword leg and in each field's first vector list (cached)."""
        if self._cols is None:
            ids = self.ids
            text_pos = self._positions(self.text.ids, ids) if self.text is not None else None
            vec = []
            seen: set[str] = set()
            for lst in self.vectors:
                fname = lst.name.split(":", 1)[1] if ":" in lst.name else lst.name
                if fname not in seen:  # the first list of a field answers for it
                    seen.add(fname)
                    vec.append((fname, lst, self._positions(lst.ids, ids)))
            self._cols = (text_pos, vec)
        return self._cols

    def _hits(self, which: range) -> list[Hit]:
        return [HitView._at(self, i) for i in which]

    def __getitem__(self, i: Any) -> Any:
        n = len(self)
        if isinstance(i, slice):
            return tuple(self._hits(range(*i.indices(n))))
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("hit index out of range")
        return self._hits(range(i, i + 1))[0]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self._hits(range(len(self))))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HitList({len(self)} hits: {list(self.keys()[:3])}...)"

    def __reduce__(self) -> Any:  # pickles as plain hits with plain fields
        return (tuple, (tuple(self),))


def _record_of(records: Callable[[int], Mapping[str, Any]], row: int) -> Callable[[], Mapping[str, Any]]:
    return lambda: records(row)


@dataclass(frozen=True, slots=True, weakref_slot=True)  # weakly referenced by the runner's memory
class Trace:
    """All stages of one executed request.

    `pool` is the fused candidate list after every filter: what reaches the
    reranker's window is its first `RERANK_WINDOW` entries.
    """

    request: SearchRequest
    hits: Sequence[Hit]
    text: RankedList | None = None
    vectors: tuple[RankedList, ...] = ()
    pool: RankedList | None = None
    rerank_window: Sequence[str] = ()
    reranked: bool = False
    count: int | None = None
    filter_matches: int | None = None
    partial_reason: str | None = None  # semantic ranking asked for but did not run
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    target: str = ""

    @property
    def pool_size(self) -> int:
        return len(self.pool) if self.pool is not None else len(self.hits)

    @property
    def keys(self) -> tuple[str, ...]:
        if isinstance(self.hits, HitList):
            return self.hits.keys()
        return tuple(h.key for h in self.hits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "request": self.request.to_dict(),
            "count": self.count,
            "filter_matches": self.filter_matches,
            "pool_size": self.pool_size,
            "reranked": self.reranked,
            "partial_reason": self.partial_reason,
            "rerank_window": list(self.rerank_window),
            "text": self.text.to_dict() if self.text else None,
            "vectors": [v.to_dict() for v in self.vectors],
            "pool": self.pool.to_dict() if self.pool else None,
            "hits": [h.to_dict() for h in self.hits],
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }

    def __repr__(self) -> str:
        q = self.request.search or (self.request.vector_queries[0].text if self.request.vector_queries else "")
        return (f"Trace(query={q!r}, hits={len(self.hits)}, pool={self.pool_size}, "
                f"reranked={self.reranked}, top={list(self.keys[:3])})")

    def _repr_html_(self) -> str:
        rows = []
        for i, h in enumerate(self.hits, 1):
            rr = "" if h.reranker_score is None else f"{h.reranker_score:.2f}"
            vs = ", ".join(f"{k}: {v:.3f} (#{h.vector_ranks.get(k)})" for k, v in h.vector_similarities.items())
            tr = "" if h.text_rank is None else f"{h.text_score:.2f} (#{h.text_rank})"
            rows.append(f"<tr><td>{i}</td><td>{html.escape(h.key)}</td><td>{h.score:.5f}</td>"
                        f"<td>{rr}</td><td>{tr}</td><td>{html.escape(vs)}</td></tr>")
        return ("<table><thead><tr><th>#</th><th>key</th><th>@search.score</th><th>reranker</th>"
                "<th>BM25 (rank)</th><th>vector (rank)</th></tr></thead><tbody>"
                + "".join(rows) + f"</tbody></table><p>pool {self.pool_size}, reranked {self.reranked}</p>")
