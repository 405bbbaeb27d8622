"""Chunk export files: read JSONL, JSON, CSV or Parquet chunk records and infer which field plays
which role.

Roles: ``key``, ``content``, ``document``, ``page``, ``section``, ``position`` and ``level`` (an
index that holds documents, sections and chunks side by side: neighbours pair within a level). Nested metadata
is flattened to dotted names (LangChain's ``metadata.source``, unstructured's
``metadata.filename``), and each role is inferred from the names the common producers use
(Azure's RAG samples: ``id``/``content``/``sourcepage``/``sourcefile``; LangChain:
``page_content`` + ``metadata.source``/``metadata.page``; LlamaIndex: ``text`` +
``ref_doc_id``/``metadata.file_name``; unstructured: ``text`` + ``metadata.filename``/
``metadata.page_number``), unless ``--map role=field`` (or ``[target] fields``) names it.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragdiag.errors import ConfigError

ROLES = ("key", "content", "document", "page", "section", "position", "level")

#: names per role, most specific first (compared case-insensitively, dotted for nested fields)
ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "content": ("content", "page_content", "text", "chunk", "chunk_text", "body",
                "metadata.text", "node.text"),
    "key": ("id", "key", "chunk_id", "id_", "node_id", "element_id", "uuid", "metadata.id"),
    "document": ("sourcefile", "source_file", "doc_id", "document_id", "ref_doc_id", "docid",
                 "metadata.source", "source", "metadata.filename", "filename", "metadata.file_name",
                 "file_name", "metadata.file_path", "file_path", "filepath", "metadata.doc_id",
                 "metadata.document_id", "metadata.ref_doc_id", "parent_id", "metadata.url", "url",
                 "source_url", "metadata_storage_path", "metadata.parent_id"),
    "page": ("sourcepage", "page", "page_number", "page_no", "pagenumber", "page_label",
             "metadata.page", "metadata.page_number", "metadata.page_label", "metadata.page_no"),
    "section": ("section", "section_title", "heading", "headings", "header", "title",
                "metadata.section", "metadata.section_title", "metadata.header", "metadata.headings",
                "metadata.title", "metadata.category"),
    "position": ("position", "chunk_index", "chunk_no", "chunk_number", "chunk_position", "seq",
                 "sequence", "ordinal", "start_index", "metadata.start_index", "metadata.chunk_index",
                 "metadata.position", "start_char_idx", "metadata.start_char_idx", "offset", "index"),
    "level": ("level", "chunk_level", "granularity", "metadata.level", "metadata.chunk_level"),
}


@dataclass(frozen=True)
class ChunkRoles:
    """Which (flattened) field holds each role; None where the export has none."""

    key: str | None = None
    content: str | None = None
    document: str | None = None
    page: str | None = None
    section: str | None = None
    position: str | None = None
    level: str | None = None
    inferred: tuple[str, ...] = ()  # the roles guessed from names (the rest were mapped)

    def describe(self) -> dict[str, str | None]:
        return {r: getattr(self, r) for r in ROLES}


def flatten(record: Mapping[str, Any], prefix: str = "", depth: int = 2) -> dict[str, Any]:
    """Nested objects as dotted keys (``{"metadata": {"source": x}}`` -> ``metadata.source``)."""
    out: dict[str, Any] = {}
    for k, v in record.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping) and depth > 0:
            out.update(flatten(v, name + ".", depth - 1))
        else:
            out[name] = v
    return out


def parse_maps(items: Iterable[str]) -> dict[str, str]:
    """``role=field`` pairs (``--map``) as a dict, each role checked."""
    out: dict[str, str] = {}
    for item in items:
        role, sep, field = item.partition("=")
        role, field = role.strip(), field.strip()
        if not sep or not field:
            raise ConfigError(f"--map {item!r}: expected role=field, e.g. --map document=sourcefile")
        if role not in ROLES:
            raise ConfigError(f"--map {item!r}: unknown role {role!r}; roles are {', '.join(ROLES)}")
        out[role] = field
    return out


def infer_roles(names: Iterable[str], mapped: Mapping[str, str] | None = None) -> ChunkRoles:
    """The role of each field, from `mapped` (role -> field) first, then from common names."""
    names = list(dict.fromkeys(names))
    by_lower = {n.lower(): n for n in names}
    mapped = dict(mapped or {})
    for role, field in mapped.items():
        if role not in ROLES:
            raise ConfigError(f"unknown chunk role {role!r}; roles are {', '.join(ROLES)}")
        if field not in names and field.lower() not in by_lower:
            raise ConfigError(f"the chunk file has no field {field!r} for role {role}; its fields are "
                              f"{', '.join(names[:30]) or '(none)'}")
    used = {mapped[r] for r in mapped}
    roles: dict[str, str | None] = {}
    inferred = []
    for role in ("content", "key", "document", "page", "section", "position", "level"):
        if role in mapped:
            f = mapped[role]
            roles[role] = f if f in names else by_lower[f.lower()]
            continue
        pick = next((by_lower[n] for n in ROLE_NAMES[role] if n in by_lower and by_lower[n] not in used), None)
        roles[role] = pick
        if pick:
            used.add(pick)
            inferred.append(role)
    return ChunkRoles(**roles, inferred=tuple(inferred))


def read_chunk_file(path: str | Path) -> list[dict[str, Any]]:
    """The records of a chunk export (flattened), by suffix: .jsonl/.ndjson, .json, .csv/.tsv,
    .parquet. A JSON object of lists (``{doc: [chunks]}``) gives each chunk its document
    under ``document``; plain string chunks become ``{"content": ...}``. The file is read
    through `ragdiag.inputs.limits` (a FIFO, a device, another encoding, deep nesting: a
    `ConfigError` with the file and line)."""
    from ragdiag.inputs import limits

    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise ConfigError(f"chunk file {p} does not exist")
    suffix = p.suffix.lower()
    what = "chunk file"
    if suffix in (".jsonl", ".ndjson"):
        rows = []
        for n, line in enumerate(limits.read_text(p, what=what, error=ConfigError).splitlines(), 1):
            if not line.strip():
                continue
            r = limits.loads_json(line, path=str(p), line=n, what="a JSONL chunk line (one object per line)",
                                  error=ConfigError)
            rows.append(_record(r, p, n))
        return rows
    if suffix == ".json":
        data = limits.loads_json(limits.read_text(p, what=what, error=ConfigError), path=str(p), what=what,
                                 error=ConfigError)
        if isinstance(data, Mapping) and all(isinstance(v, list) for v in data.values()):
            rows = []
            for doc, chunks in data.items():
                for i, c in enumerate(chunks):
                    r = _record(c, p, None)
                    r.setdefault("document", doc)
                    r.setdefault("position", i)
                    rows.append(r)
            return rows
        if isinstance(data, list):
            return [_record(r, p, None) for r in data]
        raise ConfigError(f"{p}: expected a list of chunks or an object {{document: [chunks]}}, "
                          f"found {type(data).__name__}")
    if suffix in (".csv", ".tsv"):
        import io

        text = limits.read_text(p, what=what, error=ConfigError)
        csv.field_size_limit(max(csv.field_size_limit(), limits.MAX_LINE_CHARS))  # long chunks are normal
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if suffix == ".tsv" else ",")
        rows = []
        try:
            for r in reader:
                if None in r:  # more values than the header names
                    raise ConfigError(f"{p}:{reader.line_num}: {len(r[None]) + len(reader.fieldnames or ())} "
                                      f"values for the header's {len(reader.fieldnames or ())} columns")
                rows.append(dict(r))
        except csv.Error as exc:
            raise ConfigError(f"{p}:{reader.line_num}: not CSV ({exc})") from None
        return rows
    if suffix == ".parquet":
        import os

        import pyarrow.parquet as pq  # lazy, ragdiag[parquet]: a missing one names the extra

        os.close(limits.open_regular(p, what=what, error=ConfigError))  # a regular, readable file first
        try:
            table = pq.read_table(p)
        except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
            raise ConfigError(f"{p}: not a readable Parquet file ({limits.excerpt(str(exc), 200)})") from None
        return [flatten(r) for r in table.to_pylist()]
    raise ConfigError(f"chunk file {p}: unknown format {suffix or '(no suffix)'}; use .jsonl, .json, "
                      ".csv or .parquet")


def _record(r: Any, p: Path, line: int | None) -> dict[str, Any]:
    if isinstance(r, str):
        return {"content": r}
    if not isinstance(r, Mapping):
        where = f"{p}:{line}" if line else str(p)
        raise ConfigError(f"{where}: a chunk must be an object or a string, found {type(r).__name__}")
    return flatten(r)
