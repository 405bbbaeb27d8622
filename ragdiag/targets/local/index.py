"""Building, persisting and opening a local index: records, keyword fields, vector fields.

On disk (`index_dir`, format 2):

- `manifest.json`: format version, name, record count, input hash, model id, vector
  sources, reference time, and the sha256 of every HNSW graph (part of the target's
  fingerprint: a rebuilt graph is another index, whose traces are never mixed with these);
- `schema.json`, `records.json` (the records without their vectors, plain JSON: nothing on
  disk is ever unpickled, so a planted file cannot run code as the auditor);
- `keyword/<field>.{data,indices,indptr}.npy` + `<field>.vocab.json` per searchable field
  (the vocabulary records the field's analysis: which Azure analyzer it imitates, stemmer,
  stop words; the manifest repeats them under `analysis`);
- `vectors/<field>.hnsw` (HNSW graph and the vectors, one copy) for HNSW fields, else
  `vectors/<field>.npy`; `semantic/<i>.npy`: the passage vectors of each semantic
  configuration (what the bi-encoder reranker compares with; names in the manifest).

Everything but the records and vocabularies is memory-mapped on open. The manifest is
written last, so a half-written index never looks valid.

Building is safe against other processes and interrupts (`build_index`): the builder holds
an exclusive lock on ``<index_dir>.lock`` (`index_lock`), writes into a process-unique
staging folder beside the index and publishes it with a rename; a reader holds the same
lock shared while it opens the files. Two cold audits on one cache thus build the index once
(the second waits, then finds it built), no temporary file of one is renamed by the other,
and an interrupted build leaves the published index as it was (its staging folder is removed).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragdiag.errors import InputDataError, TargetError
from ragdiag.model.schema import IndexSchema
from ragdiag.targets.local.analyzers import analysis_of_schema
from ragdiag.targets.local.keyword import KeywordField
from ragdiag.targets.local.vector import VectorField, build_hnsw, normalise

# 2: keyword arrays as .npy, HNSW graphs built with the index and holding the only copy of the
#    vectors. Bumped so that an index of format 1 is left alone and a new one is built beside it.
# 3: passage vectors for every semantic configuration, not only the default one.
# 4: keyword fields analysed per the schema's analyzer (analyzers.py); the vocabulary holds
#    analysed terms and the analysis, so an index built with English analysis is never
#    reopened as a German one (and the input hash carries ANALYSIS_VERSION).
# 5: records as JSON (records.json), never a pickle; folders named by a slug + name hash.
# 6: every vector a unit vector on the 2^-11 grid (ragdiag.encoders.numerics), graphs built with
#    one thread: the same index, graphs and similarities on every machine.
FORMAT_VERSION = 6
#: Azure's rule for index names: lowercase letters, digits and dashes, not starting or ending
#: with a dash, at most 128 characters
INDEX_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,126}[a-z0-9])?$")


@dataclass(frozen=True)
class LocalIndexSpec:
    """What a local index is built from: records, schema, and how vectors are made."""

    name: str
    schema: IndexSchema
    vector_sources: Mapping[str, Sequence[str]]  # vector field -> text fields joined with " — "
    now: str | None = None  # reference time for freshness functions (ISO); None = wall clock


@dataclass
class IndexData:
    """An opened index: what the target searches."""

    path: Path
    spec: LocalIndexSpec
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    keyword: dict[str, KeywordField]
    vectors: dict[str, VectorField]
    semantic: dict[str, np.ndarray]  # semantic configuration -> passage vectors


def index_folder_name(name: str) -> str:
    """The cache folder name of an index called `name`: a slug of Azure's name alphabet
    (lowercase letters, digits, dashes) plus a hash of the exact name, so no name can leave
    the cache (``../x``, ``/tmp/x``) and two names with the same slug never share a folder."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(name).lower()).strip("-")[:48].strip("-") or "index"
    digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug}-{digest}@format{FORMAT_VERSION}"


def default_index_dir(root: Path, name: str) -> Path:
    """Where an index of this format lives under a cache root: always a direct child of
    ``<root>/indexes`` whatever the name (a client's schema names it)."""
    base = (Path(root) / "indexes").resolve()
    path = base / index_folder_name(name)
    if path.parent != base:  # cannot happen with the slug alphabet; kept as the invariant
        raise TargetError(f"index folder for name {name!r} would leave the cache folder {base}")
    return path


def _json_value(value: Any) -> Any:
    """JSON for record values that are not JSON types (numpy scalars and arrays, dates)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)  # a stable order: the index's bytes follow its inputs
    raise TypeError(f"record value of type {type(value).__name__} cannot be stored in a local index "
                    "(records hold JSON values: strings, numbers, booleans, lists, objects)")


def joined(record: Mapping[str, Any], fields: Sequence[str]) -> str:
    parts = []
    for f in fields:
        v = record.get(f)
        if v is None or v == "":
            continue
        parts.append(" ".join(map(str, v)) if isinstance(v, list | tuple) else str(v))
    return " — ".join(parts)


def text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(map(str, value))
    return str(value)


def semantic_text(schema: IndexSchema, record: Mapping[str, Any], config: str | None = None) -> str:
    """What the semantic ranker reads: title, content fields, keywords (in that priority)."""
    c = schema.semantic_configuration(config)
    fields = ([c.title_field] if c.title_field else []) + list(c.content_fields) + list(c.keywords_fields)
    return joined(record, fields)


def vector_space_of(embedder: Any) -> str | None:
    """The embedder's model id and numerics (`Embedder.cache_id`); a bare model id for an
    embedder without numerics (a test's fake); None without an embedder."""
    if embedder is None:
        return None
    return getattr(embedder, "cache_id", None) or getattr(embedder, "model_id", None)


def input_hash(records_blob: bytes, spec: LocalIndexSpec, model_id: str | None) -> str:
    """The inputs' digest; `model_id` is the embedder's vector space (`vector_space_of`)."""
    h = hashlib.sha256()
    h.update(f"format={FORMAT_VERSION}\nmodel={model_id}\n".encode())
    h.update(json.dumps(spec.schema.to_azure(), sort_keys=True).encode())
    h.update(json.dumps(analysis_manifest(spec.schema), sort_keys=True).encode())
    h.update(json.dumps({k: list(v) for k, v in spec.vector_sources.items()}, sort_keys=True).encode())
    h.update(records_blob)
    return h.hexdigest()


def analysis_manifest(schema: IndexSchema) -> dict[str, dict[str, Any]]:
    """Each searchable field's analysis as written to the manifest (and hashed into the inputs)."""
    return {name: a.describe() for name, a in analysis_of_schema(schema).items()}


def _hnsw_params(schema: IndexSchema, field: str) -> tuple[int, int, int]:
    """(m, efConstruction, efSearch) of a vector field's profile (every field gets a graph:
    a request chooses exact or HNSW search with `exhaustive`)."""
    f = schema.field(field)
    prof = schema.vector_profile(f.vector_profile)
    if prof is None:
        return 16, 200, 128
    return prof.m, prof.ef_construction, prof.ef_search


def build_index(records: Iterable[Mapping[str, Any]], spec: LocalIndexSpec, *, index_dir: str | Path,
                embedder: Any = None, vectors: Mapping[str, np.ndarray] | None = None,
                progress: bool = True, input_hash: str | None = None, semantic: bool = True,
                locked: bool = False) -> None:
    """Build and persist an index. Vectors come from `vectors`, the records, or the embedder.

    `locked`: the caller holds `index_lock(index_dir, exclusive=True)` already."""
    schema = spec.schema
    key = schema.key_field.name
    vector_names = [f.name for f in schema.vector_fields]
    recs: list[dict[str, Any]] = []
    seen: set[str] = set()
    given: dict[str, list[Any]] = {k: [] for k in vector_names}
    for i, r in enumerate(records):
        if key not in r or r[key] in (None, ""):
            raise InputDataError(f"record {i} has no key field '{key}'")
        if r[key] in seen:
            raise InputDataError(f"duplicate key {r[key]!r} (record {i})")
        seen.add(r[key])
        clean = {k: v for k, v in r.items() if k not in vector_names}
        for vn in vector_names:
            if r.get(vn) is not None:
                given[vn].append(r[vn])
        recs.append(clean)
    n = len(recs)
    vecs: dict[str, np.ndarray] = {}
    origin: dict[str, str] = {}
    for vn in vector_names:
        if vectors is not None and vn in vectors:
            arr = np.asarray(vectors[vn], dtype=np.float32)
            origin[vn] = "given"
        elif len(given[vn]) == n and n:
            arr = np.asarray(given[vn], dtype=np.float32)
            origin[vn] = "records"
        else:
            origin[vn] = "embedder"
            sources = spec.vector_sources.get(vn)
            if not sources:
                raise InputDataError(
                    f"vector field '{vn}' has no vectors in the records and no text source; "
                    f"set vector_sources['{vn}'] to the text fields to embed")
            if embedder is None:
                raise InputDataError(f"vector field '{vn}' needs an embedder to be built")
            arr = embedder.embed([joined(r, sources) for r in recs], progress=progress)
        if arr.ndim != 2 or arr.shape[0] != n:
            raise InputDataError(f"vector field '{vn}' has {arr.shape[0]} vectors for {n} records")
        vecs[vn] = normalise(arr)
    sem: dict[str, np.ndarray] = {}
    if semantic and embedder is not None:
        for c in schema.semantic_configurations:
            sem[c.name] = normalise(embedder.embed([semantic_text(schema, r, c.name) for r in recs],
                                                   progress=progress))
    analyses = analysis_of_schema(schema)
    keyword = {f: KeywordField.build([text_of(r.get(f)) for r in recs], analyses[f])
               for f in schema.searchable_fields}
    if input_hash is None:  # built from records in memory: the content itself identifies the index
        h = hashlib.sha256(f"format={FORMAT_VERSION}\nmodel={vector_space_of(embedder)}\n".encode())
        h.update(json.dumps(schema.to_azure(), sort_keys=True).encode())
        h.update(json.dumps(analysis_manifest(schema), sort_keys=True).encode())
        h.update(json.dumps(recs, sort_keys=True, default=str).encode())
        for vn in sorted(vecs):
            h.update(vecs[vn].tobytes())
        input_hash = "content:" + h.hexdigest()

    final = Path(index_dir)
    with contextlib.nullcontext() if locked else index_lock(final, exclusive=True):
        staging = final.parent / f".{final.name}.build-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            _write_index(staging, spec, recs, keyword, vecs, sem, origin, n, input_hash, embedder, progress)
            _publish(staging, final)
        finally:
            if staging.exists():  # an interrupted or failed build: nothing of it is kept
                shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def index_lock(index_dir: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold ``<index_dir>.lock``: exclusive to build and publish, shared to open (no-op where
    the platform has no `fcntl`)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS
        yield
        return
    index_dir.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(index_dir.parent / f"{index_dir.name}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0),
                 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock


#: what an index folder holds (format 4 and older also had records.pkl, never read)
_INDEX_ENTRIES = frozenset({"manifest.json", "schema.json", "records.json", "records.pkl", "keyword", "vectors",
                            "semantic"})


def _publish(staging: Path, final: Path) -> None:
    """Put the built `staging` folder in place of `final` (under the exclusive lock)."""
    old = None
    if final.exists():
        foreign = sorted(c.name for c in final.iterdir() if c.name not in _INDEX_ENTRIES)
        if foreign or not final.is_dir():
            raise TargetError(f"{final} is not a local index folder (it holds {', '.join(foreign[:5]) or 'a file'}); "
                              "refusing to replace it: give an empty or new folder for the index")
        old = final.parent / f".{final.name}.old-{os.getpid()}-{secrets.token_hex(4)}"
        os.replace(final, old)  # open readers keep their (unlinked) files
    os.replace(staging, final)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_index(index_dir: Path, spec: LocalIndexSpec, recs: list[dict[str, Any]],
                 keyword: Mapping[str, KeywordField], vecs: Mapping[str, np.ndarray],
                 sem: Mapping[str, np.ndarray], origin: Mapping[str, str], n: int, input_hash: str,
                 embedder: Any, progress: bool) -> None:
    """Every file of an index into the (new, process-private) folder `index_dir`, the manifest last."""
    schema = spec.schema
    index_dir.mkdir(parents=True)
    manifest = index_dir / "manifest.json"
    for sub in ("vectors", "keyword", "semantic"):
        (index_dir / sub).mkdir()
    (index_dir / "schema.json").write_text(json.dumps(schema.to_azure(), indent=2))
    (index_dir / "records.json").write_text(
        json.dumps(recs, ensure_ascii=False, separators=(",", ":"), default=_json_value), encoding="utf-8")
    for name, kf in keyword.items():
        kf.save(index_dir / "keyword", name)
    graphs: dict[str, str] = {}
    for vn, arr in vecs.items():
        m, efc, _efs = _hnsw_params(schema, vn)
        if n:
            graphs[vn] = build_hnsw(arr, m, efc, index_dir / "vectors" / f"{vn}.hnsw", progress=progress,
                                    label=f"{spec.name}.{vn}")
        else:
            np.save(index_dir / "vectors" / f"{vn}.npy", arr)
    sem_files = {}
    for i, (cname, arr) in enumerate(sem.items()):
        np.save(index_dir / "semantic" / f"{i}.npy", arr)
        sem_files[cname] = f"{i}.npy"
    manifest.write_text(json.dumps({
        "format_version": FORMAT_VERSION,
        "name": spec.name,
        "records": n,
        "input_hash": input_hash,
        "model_id": getattr(embedder, "model_id", None),
        "numerics": getattr(embedder, "numerics", None),
        "vector_sources": {k: list(v) for k, v in spec.vector_sources.items()},
        "now": spec.now,
        "graphs": graphs,
        "semantic": sem_files,
        "analysis": {name: kf.analysis.describe() for name, kf in keyword.items()},
        "vector_origin": origin,
    }, indent=2))


def read_manifest(index_dir: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((index_dir / "manifest.json").read_text())
    except FileNotFoundError as exc:
        raise TargetError(f"no local index at {index_dir}: build it first") from exc
    if manifest.get("format_version") != FORMAT_VERSION:
        raise TargetError(f"local index at {index_dir} has format "
                          f"{manifest.get('format_version')}, expected {FORMAT_VERSION}: rebuild it")
    return manifest


def open_index(index_dir: str | Path) -> IndexData:
    index_dir = Path(index_dir)
    with index_lock(index_dir, exclusive=False):  # never half an index that is being published
        return _open_index(index_dir)


def _open_index(index_dir: Path) -> IndexData:
    manifest = read_manifest(index_dir)
    schema = IndexSchema.load(index_dir / "schema.json")
    spec = LocalIndexSpec(name=manifest["name"], schema=schema,
                          vector_sources=manifest.get("vector_sources", {}), now=manifest.get("now"))
    try:
        recs = json.loads((index_dir / "records.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TargetError(f"local index at {index_dir} has no readable records.json ({exc}): rebuild it") from exc
    if not isinstance(recs, list) or not all(isinstance(r, dict) for r in recs):
        raise TargetError(f"local index at {index_dir}: records.json is not a list of records: rebuild it")
    keyword = {f: KeywordField.load(index_dir / "keyword", f) for f in schema.searchable_fields}
    vectors = {}
    for f in schema.vector_fields:
        _m, _efc, efs = _hnsw_params(schema, f.name)
        vectors[f.name] = VectorField.load(index_dir / "vectors", f.name, efs)
    sem = {name: np.load(index_dir / "semantic" / file, mmap_mode="r").view(np.ndarray)
           for name, file in (manifest.get("semantic") or {}).items()}
    return IndexData(index_dir, spec, manifest, recs, keyword, vectors, sem)
