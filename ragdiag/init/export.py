"""Route ``--records FILE.jsonl [--schema FILE.json]``: an export of an existing index.

With ``--schema`` (the index definition, Azure REST shape) every record is checked against it
by the records loader the audit uses. Without it the definition is inferred from the values:
types (string, integer, number, boolean, ISO date-time with a zone, string collections,
vectors as equal-length number lists), the key (a field named key/id/chunk_id, unique in every
record), the searchable text fields and the roles the chunk analysis reads (document, page,
position, section; `ragdiag.chunks.fields.ChunkFields`), all written out for editing.
Precomputed vectors come from an embedder ragdiag cannot run on the questions, so the local
imitation re-embeds the text fields with its own embedder (`ragdiag.init.embedder`) into the same
vector field names (the README says so); the exported vectors are not copied. A record whose key
an earlier record already holds, and a record without any text in its searchable fields, are
skipped and counted (audit.toml's [init]), never a reason to refuse the export.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.init.draft import (
    EMBED_DIMENSIONS,
    VECTOR_FIELD,
    VECTOR_PROFILE,
    Draft,
    hnsw_profile,
    index_name,
    text_field,
    vector_field,
)
from ragdiag.init.keys import is_valid_key
from ragdiag.init.lang import choose_language
from ragdiag.init.profiles import local_policy
from ragdiag.inputs import limits
from ragdiag.model.schema import (
    BOOLEAN,
    DATETIME,
    DOUBLE,
    INT32,
    INT64,
    STRING,
    STRING_COLLECTION,
    Field,
    IndexSchema,
    SemanticConfiguration,
)

KEY_NAMES = ("key", "id", "chunk_id", "_id", "doc_key")
TITLE_NAMES = ("title", "doc_title", "document_title", "name")
MIN_VECTOR_LEN = 8  # a shorter number list is a collection of numbers, not an embedding
SEARCHABLE_MIN_CHARS = 25  # average length from which a string field is text rather than an id


def _read(path: Path) -> list[tuple[int, dict[str, Any]]]:
    text = limits.read_text(path, what="records file")
    out = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        obj = limits.loads_json(raw, path=str(path), line=lineno, what="record")
        if not isinstance(obj, dict):
            raise InputDataError(f"each line must be a JSON object (one record), got {limits.excerpt(raw)}",
                                 path=str(path), line=lineno)
        out.append((lineno, obj))
    if not out:
        raise InputDataError("the records file holds no records", path=str(path))
    return out


def _is_datetime(v: str) -> bool:
    try:
        return len(v) >= 10 and datetime.fromisoformat(v.strip()).tzinfo is not None
    except ValueError:
        return False


def _type_of(name: str, values: list[Any], path: Path, lines: list[int]) -> str:
    """The Edm type all non-null `values` of one field share (an error names the first misfit)."""
    def misfit(expected: str) -> InputDataError:
        for v, line in zip(values, lines, strict=True):
            if not ok(v):
                return InputDataError(f"field '{name}' holds {expected} in earlier records but "
                                      f"{limits.excerpt(v)} here; give --schema to say its type", path=str(path),
                                      line=line)
        return InputDataError(f"field '{name}' has mixed values", path=str(path))

    first = values[0]
    if isinstance(first, dict):
        raise InputDataError(f"field '{name}' is a nested object (an Azure complex field), which the local "
                             "target does not support: flatten it in the export", path=str(path), line=lines[0])
    checks: list[tuple[str, Callable[[Any], bool]]] = [
        (BOOLEAN, lambda v: isinstance(v, bool)),
        (INT32, lambda v: isinstance(v, int) and not isinstance(v, bool) and -2**31 <= v < 2**31),
        (INT64, lambda v: isinstance(v, int) and not isinstance(v, bool)),
        (DOUBLE, lambda v: isinstance(v, int | float) and not isinstance(v, bool)),
        (DATETIME, lambda v: isinstance(v, str) and _is_datetime(v)),
        (STRING, lambda v: isinstance(v, str)),
        ("vector", lambda v: isinstance(v, list) and len(v) >= MIN_VECTOR_LEN and len(v) == len(first)
         and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)),
        (STRING_COLLECTION, lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)),
    ]
    for edm, ok in checks:
        if ok(first) and all(ok(v) for v in values):
            return edm
    for edm, ok in checks:
        if ok(first):
            raise misfit(f"{edm} values")
    raise InputDataError(f"field '{name}': cannot tell the type of {limits.excerpt(first)}; give --schema",
                         path=str(path), line=lines[0])


def infer_schema(rows: list[tuple[int, dict[str, Any]]], path: Path, language: str) -> tuple[IndexSchema, list[str]]:
    """An index definition for the records, and which fields held precomputed vectors."""
    names: list[str] = []
    for _, obj in rows:
        names += [k for k in obj if k not in names]
    types, avg = {}, {}
    for n in names:
        pairs = [(obj[n], line) for line, obj in rows if obj.get(n) is not None]
        if not pairs:
            types[n] = STRING
            avg[n] = 0.0
            continue
        values, lines = [v for v, _ in pairs], [ln for _, ln in pairs]
        types[n] = _type_of(n, values, path, lines)
        avg[n] = sum(len(v) for v in values if isinstance(v, str)) / len(values)
    key = _key_field(names, types, rows, path)
    strings = [n for n in names if types[n] == STRING and n != key]
    content = max(strings, key=lambda n: avg[n], default=None)
    if content is None:
        raise InputDataError("the records have no text field to search (no string field besides the key); "
                             "give --schema", path=str(path))
    fields, vectors = [], []
    for n in names:
        t = types[n]
        if n == key:
            fields.append(Field(n, STRING, key=True, filterable=True))
        elif t == "vector":
            vectors.append(n)
            fields.append(vector_field(n))
        elif t == STRING and (avg[n] >= SEARCHABLE_MIN_CHARS or n.lower() in TITLE_NAMES):
            fields.append(replace(text_field(n, language), filterable=False))
        elif t == STRING:
            fields.append(Field(n, STRING, filterable=True, facetable=True))
        elif t == STRING_COLLECTION:
            fields.append(Field(n, t, filterable=True, facetable=True))
        else:
            fields.append(Field(n, t, filterable=True, sortable=True))
    if not vectors:
        fields.append(vector_field(VECTOR_FIELD))
    title = next((n for n in names if n.lower() in TITLE_NAMES and types[n] == STRING and n != content), None)
    schema = IndexSchema(name=index_name(path.stem), fields=tuple(fields),
                         semantic_configurations=(SemanticConfiguration("default", title, (content,)),),
                         default_semantic_configuration="default", vector_profiles=(hnsw_profile(),))
    return schema, vectors


def _key_field(names: list[str], types: dict[str, str], rows: list[tuple[int, dict[str, Any]]], path: Path) -> str:
    def unique(n: str) -> bool:
        vals = [obj.get(n) for _, obj in rows]
        return all(isinstance(v, str) and v for v in vals) and len(set(vals)) == len(vals)

    lower = {n.lower(): n for n in names}
    for cand in KEY_NAMES:
        if cand in lower and types[lower[cand]] == STRING and unique(lower[cand]):
            return lower[cand]
    for n in names:
        if types[n] == STRING and unique(n):
            return n
    raise InputDataError(f"no field can be the key: none of {', '.join(names)} holds a unique non-empty string "
                         "in every record; give --schema with the key field", path=str(path))


def _local_vectors(schema: IndexSchema) -> IndexSchema:
    """The schema with every vector field re-dimensioned for the bundled embedder (MiniLM, 384)."""
    fields = tuple(replace(f, dimensions=EMBED_DIMENSIONS, vector_profile=VECTOR_PROFILE) if f.is_vector else f
                   for f in schema.fields)
    profiles = tuple(p for p in schema.vector_profiles if p.name != VECTOR_PROFILE) + (hnsw_profile(),)
    return replace(schema, fields=fields, vector_profiles=profiles)


def _key_name(rows: list[tuple[int, dict[str, Any]]]) -> str | None:
    """The key field by name (key, id, ...) when every record holds a non-empty string there,
    repeated values allowed: a repeated key is a duplicate record, skipped, not a reason to look
    for another key."""
    names: list[str] = []
    for _, obj in rows:
        names += [k for k in obj if k not in names]
    lower = {n.lower(): n for n in names}
    for cand in KEY_NAMES:
        n = lower.get(cand)
        if n is not None and all(isinstance(obj.get(n), str) and obj.get(n) for _, obj in rows):
            return n
    return None


def _skip_duplicates(rows: list[tuple[int, dict[str, Any]]], key: str | None
                     ) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The rows without those whose key an earlier row holds, and how many were dropped."""
    if key is None:
        return rows, 0
    seen: set[Any] = set()
    out = []
    for line, obj in rows:
        k = obj.get(key)
        if k is not None and k in seen:
            continue
        seen.add(k)
        out.append((line, obj))
    return out, len(rows) - len(out)


def _skip_empty(rows: list[tuple[int, dict[str, Any]]], schema: IndexSchema
                ) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """The rows with text in at least one searchable string field, and how many had none."""
    texts = [f.name for f in schema.fields if f.searchable and not f.is_vector and f.element_type == STRING]
    out = [(line, obj) for line, obj in rows
           if any(isinstance(obj.get(t), str) and obj.get(t).strip() for t in texts)]
    return out, len(rows) - len(out)


def records_draft(records_path: str | Path, schema_path: str | Path | None, *, language: str,
                  log: Callable[[str], None], warn: Callable[[str], None]) -> Draft:
    from ragdiag.chunks.fields import ChunkFields
    from ragdiag.inputs.records import check_record

    path = Path(records_path)
    if not path.is_file():
        raise InputDataError("--records names a file that does not exist", path=str(path))
    rows = _read(path)
    log(f"read {len(rows):,} records from {path}")
    notes: list[str] = []
    skipped: dict[str, int] = {}
    strings = (v for _, obj in rows for v in obj.values() if isinstance(v, str) and len(v) > SEARCHABLE_MIN_CHARS)
    code, note = choose_language(language, strings, warn)
    if schema_path is not None:
        given = IndexSchema.load(schema_path)
        rows, dups = _skip_duplicates(rows, given.key_field.name)
        for line, obj in rows:  # every record against the definition, errors with file:line
            check_record(obj, given, path=str(path), line=line)
        schema, source = given, f"index export {path.name} with the definition {Path(schema_path).name}"
        exported = [f.name for f in schema.vector_fields if any(obj.get(f.name) is not None for _, obj in rows)]
        if not schema.vector_fields:
            schema = replace(schema, fields=(*schema.fields, vector_field(VECTOR_FIELD)),
                             vector_profiles=(*schema.vector_profiles, hnsw_profile()))
            notes.append(f"the definition has no vector field: `{VECTOR_FIELD}` was added so the audit can "
                         "measure vector and hybrid search")
    else:
        rows, dups = _skip_duplicates(rows, _key_name(rows))
        schema, exported = infer_schema(rows, path, code)
        source = f"index export {path.name} (definition inferred)"
        notes.append("the index definition was inferred from the values: check the types, the key and which "
                     "fields are searchable in schema.json (or give your index's definition with --schema)")
    if dups:
        skipped["duplicate_records"] = dups
    rows, empty = _skip_empty(rows, schema)
    if empty:
        skipped["empty_records"] = empty
    if not rows:
        raise InputDataError("no record holds text in a searchable field", path=str(path))
    if skipped:
        notes.append("skipped, not refused: " + ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in skipped.items())
                     + " (a repeated key keeps its first record; counted in the README and audit.toml's [init])")
    key = schema.key_field.name
    for line, obj in rows:
        k = obj.get(key)
        if isinstance(k, str) and not is_valid_key(k):
            raise InputDataError(f"key {limits.excerpt(k)} is not a valid Azure document key (letters, digits, "
                                 "_ - = only, not starting with _, at most 1,024 characters)",
                                 path=str(path), line=line)
    roles = ChunkFields.from_schema(schema)
    content = roles.content or next(iter(schema.searchable_fields), None)
    if content is None:
        raise InputDataError("the index definition has no searchable text field", path=str(schema_path or path))
    title = next((f.name for f in schema.fields if f.name.lower() in TITLE_NAMES and f.searchable), None)
    text_sources = [title, content] if title else [content]
    vector_names = [f.name for f in schema.vector_fields]
    schema = _local_vectors(schema)
    if exported:
        notes.append(f"the export holds precomputed vectors in {', '.join(exported)} from an embedder ragdiag "
                     "cannot run on the questions: the local imitation embeds "
                     f"{' + '.join(text_sources)} with its own embedder (see the README's index fields) into the "
                     "same fields instead (the exported vectors are not copied), so vector scores are that "
                     "model's, not yours")
    records = [{k: v for k, v in obj.items() if k not in vector_names} for _, obj in rows]
    role_map, unread = _roles(schema, roles, title)
    if unread:
        notes.append("the chunk analysis's name detection does not read "
                     + ", ".join(f"`{f}` as {r}" for r, f in unread.items())
                     + ": they are named in audit.toml's [target] fields (check them)")
    missing = [r for r in ("document", "page", "position") if r not in role_map]
    if missing:
        notes.append(f"no field was recognised as {', '.join(missing)}: the chunk analysis cannot read "
                     "those from the records")
    search = [n for n in schema.searchable_fields]
    sem = schema.semantic_configurations[0].name if schema.semantic_configurations else None
    template = [{"id": f"case-{n:03d}", "question": f"TODO: a question answered by record {obj[key]!r}",
                 "expect_sources": [{"key": obj[key], "grade": 2}]} for n, (_, obj) in enumerate(rows[:3], 1)]
    notes.append("there are no questions yet: fill in goldset.template.yaml, rename it to goldset.yaml and "
                 "uncomment it in audit.toml")
    security = schema.security_fields
    identities = _identities(security[0].name, records) if security else {}
    if security:
        notes.append(f"`{security[0].name}` looks like a security field: [identities] in audit.toml drafts one "
                     f"user per group seen ({len(identities)}); replace them with your real users and their "
                     "groups, and set as_user in the goldset")
    return Draft(route="records", source=source, schema=schema, language=code, language_note=note,
                 policy=local_policy(schema, search, vector_names[0] if vector_names else VECTOR_FIELD, sem),
                 records=records, vector_sources={v: text_sources for v in vector_names or [VECTOR_FIELD]},
                 template=template, identities=identities, roles=role_map, field_roles=unread, notes=notes,
                 skipped=skipped,
                 counts={"records": len(records), "fields": len(schema.fields)})


_EXTRA_ROLE_NAMES = {"document": ("sourcefile", "source_file", "source", "filename", "file_name", "file",
                                  "document", "document_name", "doc_name", "path"),
                     "page": ("sourcepage", "source_page", "page_label", "pageno"),
                     "position": ("chunk", "chunk_id_in_doc", "index"),
                     "section": ("section_name", "heading_title", "subtitle")}
MAX_DRAFT_IDENTITIES = 5


def _roles(schema: IndexSchema, roles: Any, title: str | None) -> tuple[dict[str, str], dict[str, str]]:
    """(role -> field) as inferred, and the roles the chunk analysis's name detection misses."""
    read = {r: getattr(roles, a) for r, a in (("document", "doc_id"), ("parent", "parent_id"), ("page", "page"),
                                              ("position", "position"), ("section", "section_title"),
                                              ("content", "content")) if getattr(roles, a)}
    out, unread = dict(read), {}
    names = {f.name.lower(): f.name for f in schema.fields if not f.is_vector and not f.key}
    for role, cands in _EXTRA_ROLE_NAMES.items():
        if role in out:
            continue
        hit = next((names[c] for c in cands if c in names), None)
        if hit:
            out[role] = unread[role] = hit
    if title:
        out["title"] = title
    return out, unread


def _identities(field: str, records: list[dict[str, Any]]) -> dict[str, list[str]]:
    """One drafted user per group value seen (at most `MAX_DRAFT_IDENTITIES`), so the ACL probes can run."""
    groups: list[str] = []
    for r in records:
        v = r.get(field)
        for g in v if isinstance(v, list) else [v] if isinstance(v, str) else []:
            if isinstance(g, str) and g.strip() and g not in groups:
                groups.append(g)
    return {f"member-of-{g}": [g] for g in groups[:MAX_DRAFT_IDENTITIES]}
