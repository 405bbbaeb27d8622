"""The trace store: every executed trace, compact and columnar, in one append-only file per target.

A trace is stored as a small JSON header (scalars, list names and weights, timings) plus
its columns as content-addressed blobs: the ids of each stage list (keyword leg, vector
legs, pool, rerank window, hits) as int32 and their scores as float32. Blobs are shared:
the keyword leg that ten probes of one question reuse is stored, and held in memory, once.

- **Ids, not keys.** For a target with a `key_table` (the local index: row ids are stable
  for one target fingerprint, and the store is per fingerprint) ids are its rows and a
  hit's fields are read from the target's records when asked for (`LazyFields`); nothing
  but ids and scores is stored. For other targets keys are stored as text and hits as JSON.
- **Fixed precision.** Scores are stored, and handed back, as float32: a trace the runner
  returns after executing a request is the one a resumed run loads, value for value.
- **Lazy.** Opening reads only the record headers' positions; a trace is decoded when asked
  for, and its blobs are shared with every other live trace that uses them.
- **Crash-safe and shared.** Records are appended under an exclusive file lock, after
  reading what other processes appended; a torn record at the end (a killed run) is
  ignored and overwritten by the next append.

File layout: the line ``RDTS2 <target fingerprint>\\n``, then records, each
``kind (1 byte) | length (u32 LE) | payload``; kind ``B``: 12-byte digest + blob, a blob
being ``KEY\\0`` + keys joined by NUL, or ``NUM\\0`` + equal-length 4-byte columns (a list:
int32 ids then float32 scores; hits: int32 pool positions then float32 boosts; the rerank
window: float32 reranker scores [then boosted ones]); kind ``T``: 24-byte request
fingerprint + JSON header naming its blobs by digest.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.model import Hit, RankedList, SearchRequest, Trace
from ragdiag.model.trace import HitList, KeySeq, KeyTable

STORE_VERSION = 2
MAGIC = f"RDTS{STORE_VERSION} ".encode()
_REC = struct.Struct("<cI")
_DIGEST = 12
_FP = 24
_SEP = "\x00"
_KEYS, _NUMS = b"KEY\x00", b"NUM\x00"  # a blob's first 4 bytes: keys as text, or 4-byte columns
FLUSH_EVERY = 256  # pending traces written in one append
#: the array-identity memo of `_pack` keeps at most this many entries: past it, the live entries
#: of the most recent half are kept
SEEN_PRUNE_AT = 20_000

# what the store hands back for scores: a fixed precision, so fresh and resumed agree
SCORE_DTYPE = np.float32
ID_DTYPE = np.int32


def store_path(cache_dir: str | Path, target_fingerprint: str) -> Path:
    """The store file of one target fingerprint under a cache folder."""
    digest = hashlib.sha256(target_fingerprint.encode()).hexdigest()[:24]
    return Path(cache_dir) / "traces" / f"{digest}.v{STORE_VERSION}.rdts"


def _digest(tag: bytes, raw: bytes) -> bytes:
    return hashlib.blake2b(tag + raw, digest_size=_DIGEST).digest()


def _f32(x: float | None) -> float | None:
    return None if x is None else float(np.float32(x))


class TraceStore:
    """Compact traces of one target, in memory and (with `path`) in an append-only file."""

    def __init__(self, path: str | Path | None, *, target_fingerprint: str = "",
                 key_table: KeyTable | None = None,
                 records: Callable[[int], Mapping[str, Any]] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.target_fingerprint = target_fingerprint
        self.table = key_table
        self.records = records
        self._lock = threading.RLock()
        self._blob_at: dict[bytes, tuple[int, int]] = {}  # digest -> (offset, length) in the file
        self._trace_at: dict[str, tuple[int, int]] = {}  # request fingerprint -> (offset, length)
        self._live: weakref.WeakValueDictionary[bytes, np.ndarray] = weakref.WeakValueDictionary()
        self._pending: dict[str, Trace] = {}  # traces as handed back, encoded when flushed
        # canonical (int32 / float32, read-only) arrays by the identity of their source array
        self._canon: dict[tuple[int, Any], tuple[Any, np.ndarray]] = {}
        self._fd: int | None = None
        # arrays already encoded, by identity (the target's stage caches hand the same keyword
        # and vector legs to many traces): id -> (weak reference, digest)
        self._seen: dict[tuple[int, Any], tuple[Any, str]] = {}
        self._seen_limit = SEEN_PRUNE_AT
        self._end = 0
        self._disabled = False
        if self.path is not None:
            self._open()

    # ---- the file ------------------------------------------------------------------------
    def _header_line(self) -> bytes:
        return MAGIC + self.target_fingerprint.replace("\n", " ").encode() + b"\n"

    def _open(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        head = self._header_line()
        with open(self.path, "a+b") as fh:
            _lock_file(fh)
            try:
                fh.seek(0, os.SEEK_END)
                if fh.tell() == 0:
                    fh.write(head)
                    fh.flush()
                fh.seek(0)
                if fh.read(len(head)) != head:
                    self._disabled = True  # another target's file under this name: memory only
                    return
                self._end = len(head)
                self._scan(fh)
            finally:
                _unlock_file(fh)

    def _scan(self, fh: Any) -> None:
        """Index the records after `self._end` (stops at a torn record)."""
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        pos = self._end
        fh.seek(pos)
        while pos + _REC.size <= size:
            kind, length = _REC.unpack(fh.read(_REC.size))
            body = pos + _REC.size
            if body + length > size or kind not in (b"B", b"T"):
                break
            if kind == b"B":
                self._blob_at[fh.read(_DIGEST)] = (body + _DIGEST, length - _DIGEST)
            else:
                fp = fh.read(_FP).decode("ascii")
                self._trace_at[fp] = (body + _FP, length - _FP)
            pos = body + length
            fh.seek(pos)
        self._end = pos

    def _read(self, offset: int, length: int) -> bytes:
        assert self.path is not None
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        return os.pread(self._fd, length, offset)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def flush(self) -> None:
        """Encode the pending traces and append them (and the blobs they need) to the file."""
        with self._lock:
            if not self._pending or self.path is None or self._disabled:
                return  # a memory-only store keeps its traces pending
            blobs: dict[bytes, bytes] = {}
            headers = [(fp, json.dumps(self._encode(t, blobs), separators=(",", ":"),
                                       ensure_ascii=False).encode())
                       for fp, t in self._pending.items()]
            chunks: list[bytes] = []
            with open(self.path, "r+b") as fh:
                _lock_file(fh)
                try:
                    self._scan(fh)  # learn what other processes appended
                    fh.truncate(self._end)  # a torn record of a killed run is overwritten
                    pos = self._end
                    new_blobs: dict[bytes, tuple[int, int]] = {}
                    new_traces: dict[str, tuple[int, int]] = {}
                    for d, raw in blobs.items():
                        if d in self._blob_at:
                            continue
                        chunks.append(_REC.pack(b"B", _DIGEST + len(raw)) + d + raw)
                        new_blobs[d] = (pos + _REC.size + _DIGEST, len(raw))
                        pos += _REC.size + _DIGEST + len(raw)
                    for fp, hdr in headers:
                        if fp in self._trace_at:
                            continue
                        chunks.append(_REC.pack(b"T", _FP + len(hdr)) + fp.encode("ascii") + hdr)
                        new_traces[fp] = (pos + _REC.size + _FP, len(hdr))
                        pos += _REC.size + _FP + len(hdr)
                    fh.seek(self._end)
                    fh.write(b"".join(chunks))
                    fh.flush()
                    self._end = pos
                    self._blob_at.update(new_blobs)
                    self._trace_at.update(new_traces)
                finally:
                    _unlock_file(fh)
            self._pending.clear()

    # ---- reading -------------------------------------------------------------------------
    def __contains__(self, fp: str) -> bool:
        return fp in self._pending or fp in self._trace_at

    def __len__(self) -> int:
        return len(self._trace_at) + sum(1 for fp in self._pending if fp not in self._trace_at)

    def get(self, fp: str, request: SearchRequest) -> Trace | None:
        """The stored trace of `request` (fingerprint `fp`), decoded; None when absent."""
        with self._lock:
            pend = self._pending.get(fp)
            if pend is not None:
                return pend
            at = self._trace_at.get(fp)
        if at is None:
            return None
        try:
            header = json.loads(self._read(*at))
            return self._decode(header, request)
        except (OSError, ValueError, KeyError, TypeError):  # an unreadable entry is a miss, never an error
            return None

    def _blob(self, hexdigest: str) -> np.ndarray:
        """A blob's bytes as a uint8 array (keys: an object array), shared while any trace uses it."""
        d = bytes.fromhex(hexdigest)
        arr = self._live.get(d)
        if arr is not None:
            return arr
        with self._lock:
            at = self._blob_at[d]
        raw = self._read(*at)
        arr = _keys_array(raw[4:]) if raw[:4] == _KEYS else np.frombuffer(raw, dtype=np.uint8, offset=4)
        self._live[d] = arr
        return arr

    @staticmethod
    def _split(base: np.ndarray, parts: int) -> list[np.ndarray]:
        """`parts` equal-length 4-byte columns of a blob: [int32 ids,] float32 scores..."""
        n = base.shape[0] // (4 * parts)
        return [base[4 * n * j:4 * n * (j + 1)].view(ID_DTYPE if j == 0 and parts != 1 else SCORE_DTYPE)
                for j in range(parts)]

    def _list(self, spec: Mapping[str, Any] | None) -> RankedList | None:
        if spec is None:
            return None
        if "L" in spec:
            if self.table is None:
                raise KeyError("ids without a key table")
            ids, scores = self._split(self._blob(spec["L"]), 2)
            return RankedList.of_ids(spec["name"], ids, scores, self.table, weight=spec["w"])
        keys = self._blob(spec["K"])
        scores = self._blob(spec["S"]).view(SCORE_DTYPE)
        return RankedList(spec["name"], tuple(keys.tolist()), tuple(scores.tolist()), weight=spec["w"])

    def _decode(self, h: Mapping[str, Any], request: SearchRequest) -> Trace:
        text = self._list(h.get("text"))
        vectors = tuple(self._list(v) for v in h.get("vectors", ()))
        pool = self._list(h.get("pool"))
        hs = h["hits"]
        w = h.get("window")
        window: Sequence[str] = ()
        if w is not None and "n" in w and pool is not None and pool.ids is not None:
            window = KeySeq(pool.ids[:w["n"]], self.table) if w["n"] else ()  # type: ignore[arg-type]
        elif w is not None and "K" in w:
            window = tuple(self._blob(w["K"]).tolist())
        hits: Sequence[Hit]
        if hs["kind"] == "pos":
            positions, boosts = self._split(self._blob(hs["H"]), 2)
            rr = rrb = None
            if hs.get("W"):
                cols = self._split(self._blob(hs["W"]), 2 if hs.get("rrb") else 1)
                rr = cols[0].view(SCORE_DTYPE)
                rrb = cols[1] if hs.get("rrb") else None
            hits = HitList(positions, boosts.view(SCORE_DTYPE), pool=pool, text=text,  # type: ignore[arg-type]
                           vectors=vectors, window_rr=rr if rr is not None else np.empty(0, SCORE_DTYPE),
                           window_rrb=rrb, select=tuple(hs["select"]),
                           captions=[tuple(c) for c in hs["captions"]] if hs.get("captions") is not None else None,
                           records=self.records)
        else:
            hits = tuple(_hit_from(x) for x in hs["items"])
        return Trace(request=request, hits=hits, text=text, vectors=vectors, pool=pool, rerank_window=window,
                     reranked=bool(h.get("reranked")), count=h.get("count"), filter_matches=h.get("fm"),
                     partial_reason=h.get("partial"), timings_ms=h.get("timings") or {},
                     target=h.get("target", ""))

    # ---- writing -------------------------------------------------------------------------
    def put(self, fp: str, trace: Trace) -> Trace:
        """Store `trace` and return it as the store hands it back: ids int32, scores float32
        (read-only arrays, shared with every trace using the same source array). It is
        encoded and written by the next `flush`."""
        with self._lock:
            canonical = self._canonical(trace)
            self._pending[fp] = canonical
            if self.path is not None and not self._disabled and len(self._pending) >= FLUSH_EVERY:
                self.flush()
            return canonical

    # ---- the canonical form ----------------------------------------------------------
    def _fixed(self, arr: Any, dtype: Any) -> np.ndarray:
        """`arr` at the stored precision, read-only; one copy per source array."""
        if not isinstance(arr, np.ndarray):
            out = np.asarray(arr, dtype=dtype)
            out.flags.writeable = False
            return out
        key = (id(arr), dtype)
        hit = self._canon.get(key)
        if hit is not None and hit[0]() is arr:
            return hit[1]
        out = arr if arr.dtype == dtype and not arr.flags.writeable else np.array(arr, dtype=dtype)
        out.flags.writeable = False
        if out is not arr:
            # the copy is remembered only while its source lives: the entry goes with the source
            # (a fused pool's float64 scores die with the target's trace, right after this), so
            # the memo never keeps a canonical array alive on its own (before, it held up to
            # 50,000 of them: a 2,000-question audit's pools)
            canon = self._canon
            self._canon[key] = (weakref.ref(arr, lambda _r, k=key: canon.pop(k, None)), out)
        return out

    def _canon_list(self, lst: RankedList | None) -> RankedList | None:
        if lst is None:
            return None
        if self.table is not None and lst.table is self.table:
            return RankedList.of_ids(lst.name, self._fixed(lst.ids, ID_DTYPE), self._fixed(lst.score_array, SCORE_DTYPE),
                                     self.table, weight=lst.weight)
        return RankedList(lst.name, lst.keys, tuple(float(np.float32(x)) for x in lst.scores), weight=lst.weight)

    def _canonical(self, t: Trace) -> Trace:
        text = self._canon_list(t.text)
        vectors = tuple(self._canon_list(v) for v in t.vectors)
        pool = self._canon_list(t.pool)
        hits, w = t.hits, t.rerank_window
        window: Sequence[str]
        if (isinstance(hits, HitList) and self.table is not None and t.pool is not None
                and t.pool.table is self.table and hits.pool is t.pool):
            new_hits: Sequence[Hit] = HitList(
                self._fixed(hits.positions, ID_DTYPE), self._fixed(hits.boosts, SCORE_DTYPE), pool=pool,  # type: ignore[arg-type]
                text=text, vectors=vectors, window_rr=self._fixed(hits.window_rr, SCORE_DTYPE),
                window_rrb=self._fixed(hits.window_rrb, SCORE_DTYPE) if hits.window_rrb is not None else None,
                select=hits.select, captions=hits.captions, records=self.records)
            window = KeySeq(pool.ids[:len(w)], self.table) if len(w) else ()  # type: ignore[union-attr, index]
        else:
            new_hits = tuple(_hit_from(json.loads(json.dumps(_hit_to(h)))) for h in hits)
            window = tuple(w)
        return Trace(request=t.request, hits=new_hits, text=text, vectors=vectors, pool=pool, rerank_window=window,
                     reranked=bool(t.reranked), count=t.count, filter_matches=t.filter_matches,
                     partial_reason=t.partial_reason,
                     timings_ms={k: round(float(v), 3) for k, v in t.timings_ms.items()}, target=t.target)

    # ---- encoding (at flush) ---------------------------------------------------------
    def _pack(self, parts: Sequence[Any], dtypes: Sequence[Any], blobs: dict[bytes, bytes]) -> str:
        """Digest of a blob of columns (ids int32 / scores float32 / keys as text); its bytes
        go to `blobs` unless the file has them. Digests are remembered by array identity."""
        ident = None
        if all(isinstance(p, np.ndarray) for p in parts):
            ident = (tuple(id(p) for p in parts), tuple(dtypes))
            seen = self._seen.get(ident)
            if seen is not None and all(ref() is p for ref, p in zip(seen[0], parts, strict=True)) \
                    and (seen[1] in self._blob_at or seen[1] in blobs):
                return seen[1].hex()
        if dtypes[0] is object:
            raw = _KEYS + _SEP.join(parts[0]).encode("utf-8")
        else:
            raw = _NUMS + b"".join(np.ascontiguousarray(p, dtype=t).tobytes() for p, t in zip(parts, dtypes, strict=True))
        d = _digest(b"", raw)
        if d not in self._blob_at:
            blobs.setdefault(d, raw)
        if ident is not None:
            if len(self._seen) > self._seen_limit:
                # keep the live entries of the most recent half: the memo is bounded (a
                # 2,000-question audit kept 200,000 entries, ~70 MB, though arrays are shared
                # mostly between traces of one batch) and pruned at most every limit / 2 calls
                # (pruning on every call once the live entries exceeded the limit made a
                # 2,000-question audit quadratic); a forgotten array is hashed again, same digest
                recent = list(self._seen.items())[-max(1, self._seen_limit // 2):]
                self._seen = {k: v for k, v in recent if all(r() is not None for r in v[0])}
            self._seen[ident] = (tuple(weakref.ref(p) for p in parts), d)
        return d.hex()

    def _list_spec(self, lst: RankedList | None, blobs: dict[bytes, Any]) -> Any:
        if lst is None:
            return None
        spec: dict[str, Any] = {"name": lst.name, "w": lst.weight}
        if self.table is not None and lst.table is self.table:
            spec["L"] = self._pack((lst.ids, lst.score_array), (ID_DTYPE, SCORE_DTYPE), blobs)
        else:
            spec["K"] = self._pack((lst.keys,), (object,), blobs)
            spec["S"] = self._pack((lst.score_array,), (SCORE_DTYPE,), blobs)
        return spec

    def _encode(self, t: Trace, blobs: dict[bytes, Any]) -> dict[str, Any]:
        h: dict[str, Any] = {"target": t.target, "count": t.count, "fm": t.filter_matches,
                             "partial": t.partial_reason, "reranked": bool(t.reranked),
                             "timings": {k: round(float(v), 3) for k, v in t.timings_ms.items()},
                             "text": self._list_spec(t.text, blobs),
                             "vectors": [self._list_spec(v, blobs) for v in t.vectors],
                             "pool": self._list_spec(t.pool, blobs)}
        hits, w, pool = t.hits, t.rerank_window, t.pool
        compact = (isinstance(hits, HitList) and self.table is not None and pool is not None
                   and pool.table is self.table and hits.pool is pool)
        if compact:
            h["window"] = {"n": len(w)}  # the pool's first n entries
            rrb = hits.window_rrb  # type: ignore[union-attr]
            nwin = hits.window_rr.shape[0]  # type: ignore[union-attr]
            h["hits"] = {"kind": "pos",
                         "H": self._pack((hits.positions, hits.boosts), (ID_DTYPE, SCORE_DTYPE), blobs),  # type: ignore[union-attr]
                         "W": self._pack((hits.window_rr, rrb) if rrb is not None else (hits.window_rr,),  # type: ignore[union-attr]
                                         (SCORE_DTYPE, SCORE_DTYPE) if rrb is not None else (SCORE_DTYPE,), blobs)
                         if nwin else None,
                         "rrb": rrb is not None,
                         "select": list(hits.select),  # type: ignore[union-attr]
                         "captions": [list(c) for c in hits.captions] if hits.captions is not None else None}  # type: ignore[union-attr]
        else:
            h["window"] = {"K": self._pack((tuple(w),), (object,), blobs)} if len(w) else None
            h["hits"] = {"kind": "json", "items": [_hit_to(x) for x in hits]}
        return h


def _keys_array(raw: bytes) -> np.ndarray:
    keys = raw.decode("utf-8").split(_SEP) if raw else []
    arr = np.empty(len(keys), dtype=object)
    arr[:] = keys
    return arr


def _hit_to(h: Hit) -> dict[str, Any]:
    return {"key": h.key, "score": _f32(h.score), "fields": _jsonable(dict(h.fields)),
            "rr": _f32(h.reranker_score), "rrb": _f32(h.reranker_boosted_score),
            "ts": _f32(h.text_score), "tr": h.text_rank,
            "vs": {k: _f32(v) for k, v in h.vector_similarities.items()},
            "vr": dict(h.vector_ranks), "fs": _f32(h.fused_score), "fr": h.fused_rank,
            "boost": _f32(h.document_boost), "captions": list(h.captions)}


def _hit_from(x: Mapping[str, Any]) -> Hit:
    return Hit(key=x["key"], score=x["score"], fields=x["fields"], reranker_score=x["rr"],
               reranker_boosted_score=x["rrb"], text_score=x["ts"], text_rank=x["tr"],
               vector_similarities=x["vs"], vector_ranks=x["vr"], fused_score=x["fs"], fused_rank=x["fr"],
               document_boost=x["boost"], captions=tuple(x["captions"]))


def _jsonable(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, str | bool | int | float):
        return v
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def _lock_file(fh: Any) -> None:
    try:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
    except (ImportError, OSError):  # pragma: no cover - no advisory locks here: single writer
        pass


def _unlock_file(fh: Any) -> None:
    try:
        import fcntl

        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    except (ImportError, OSError):  # pragma: no cover
        pass
