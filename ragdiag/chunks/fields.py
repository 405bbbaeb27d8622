"""Which record fields the chunk analysis reads, detected from an index schema, and how their
values are read (present or missing, order of positions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_CONTENT_NAMES = ("content", "text", "chunk")
_DOC_NAMES = ("sourcefile", "source_file", "ref_doc_id", "doc_id", "document_id", "docid", "documentid", "source_id", "source_document_id",
              "source_doc_id", "file_id", "filepath", "file_path", "source_path",
              "metadata_storage_path", "url", "source_url")
_PARENT_NAMES = ("parent_id", "parentid", "parent_key", "parent")
_PAGE_NAMES = ("sourcepage", "source_page", "page_label", "page", "page_number", "page_no", "pagenumber", "page_num", "pagenum", "pages")
_POSITION_NAMES = ("position", "chunk_index", "chunk_no", "chunk_number", "chunk_position",
                   "chunk_seq", "ordinal", "seq", "sequence", "offset")
_SECTION_NAMES = ("section_title", "section", "heading", "headings", "header", "section_heading")
_LEVEL_NAMES = ("level", "chunk_level", "record_level")
_KEY_NAMES = ("key", "id", "chunk_id")


#: `[target] fields` roles -> `ChunkFields` attributes (the `ragdiag chunks` role names, plus the
#: index-only parent and level)
FIELD_ROLES = {"key": "key", "content": "content", "document": "doc_id", "parent": "parent_id",
               "page": "page", "position": "position", "section": "section_title", "level": "level"}


def read_field_roles(options: Any) -> dict[str, str]:
    """`[target] fields = { document = "sourcefile", page = "sourcepage", ... }` from a kind's
    `OptionReader`, each role checked (the fields themselves are checked against the schema
    when the index is open)."""
    if not options.has("fields"):
        return {}
    v = options.table["fields"]
    if not isinstance(v, Mapping) or not all(isinstance(x, str) and x.strip() for x in v.values()):
        raise options.error('\'fields\' must map chunk roles to field names, e.g. '
                            '{ document = "sourcefile", page = "sourcepage" }', "fields")
    unknown = [k for k in v if k not in FIELD_ROLES]
    if unknown:
        raise options.error(f"'fields' has unknown role(s) {', '.join(map(repr, unknown))}; roles are "
                            f"{', '.join(FIELD_ROLES)}", "fields")
    return {str(k): str(x) for k, x in v.items()}


def _pick(names: Sequence[str], by_lower: Mapping[str, str]) -> str | None:
    for n in names:
        if n in by_lower:
            return by_lower[n]
    return None


@dataclass(frozen=True)
class ChunkFields:
    """Which record fields hold what the analysis reads (None: the index has no such field).

    `doc_id` groups chunks into documents and orders them by `position`; when
    the index has no document-id field the parent id stands in for it.
    `level`/`chunk_levels` pick the chunk records out of a multi-level index.
    """

    key: str = "key"
    content: str | None = "content"
    doc_id: str | None = "doc_id"
    parent_id: str | None = "parent_id"
    page: str | None = "page"
    position: str | None = "position"
    section_title: str | None = "section_title"
    level: str | None = "level"
    chunk_levels: tuple[str, ...] = ("evidence",)

    @classmethod
    def from_schema(cls, schema: Any, *, chunk_levels: Sequence[str] = ("evidence",),
                    roles: Mapping[str, str] | None = None) -> ChunkFields:
        """Detect the fields from an `IndexSchema` by name (case-insensitive; retrievable only).

        Content: the first searchable string field named content/text/chunk,
        else the first searchable string field whose name contains one of those.
        `roles` (``[target] fields``, role -> field name) overrides the detection; a field
        the schema lacks is a ConfigError naming the schema's fields.
        """
        detected = cls._detect(schema, chunk_levels)
        if not roles:
            return detected
        from dataclasses import replace

        from ragdiag.errors import ConfigError

        names = {f.name for f in schema.fields}
        changes = {}
        for role, name in roles.items():
            if name not in names:
                raise ConfigError(f"[target] fields: {role} = {name!r}, but the index has no field {name!r}; "
                                  f"its fields are {', '.join(sorted(names))}")
            changes[FIELD_ROLES[role]] = name
        return replace(detected, **changes)

    @classmethod
    def _detect(cls, schema: Any, chunk_levels: Sequence[str]) -> ChunkFields:
        fields = [f for f in schema.fields
                  if not getattr(f, "is_vector", False) and getattr(f, "retrievable", True)]
        by_lower = {f.name.lower(): f.name for f in fields}
        strings = [f for f in fields if getattr(f, "element_type", f.type) == "Edm.String"
                   and not getattr(f, "is_collection", False)]
        searchable = [f for f in strings if f.searchable]
        content = None
        for name in _CONTENT_NAMES:
            content = next((f.name for f in searchable if f.name.lower() == name), None)
            if content:
                break
        if content is None:
            content = next((f.name for f in searchable
                            if any(n in f.name.lower() for n in _CONTENT_NAMES)), None)
        try:
            key = schema.key_field.name
        except Exception:
            key = _pick(_KEY_NAMES, by_lower) or "key"
        return cls(key=key, content=content, doc_id=_pick(_DOC_NAMES, by_lower),
                   parent_id=_pick(_PARENT_NAMES, by_lower), page=_pick(_PAGE_NAMES, by_lower),
                   position=_pick(_POSITION_NAMES, by_lower),
                   section_title=_pick(_SECTION_NAMES, by_lower),
                   level=_pick(_LEVEL_NAMES, by_lower), chunk_levels=tuple(chunk_levels))

    def select(self) -> tuple[str, ...]:
        """The field names to request from the index (no duplicates, None left out)."""
        names = (self.key, self.content, self.doc_id, self.parent_id, self.page, self.position,
                 self.section_title, self.level)
        return tuple(dict.fromkeys(n for n in names if n))

    def level_filter(self) -> str | None:
        """An OData filter that keeps only chunk records, or None without a level field."""
        if not self.level or not self.chunk_levels:
            return None
        parts = [f"{self.level} eq '{v.replace(chr(39), chr(39) * 2)}'" for v in self.chunk_levels]
        return " or ".join(parts)


def _order_key(value: Any) -> tuple[int, float, str]:
    if value is None or value == "":
        return (1, 0.0, "")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (0, 0.0, str(value))


def _present(value: Any) -> bool:
    if value is None:
        return False
    t = type(value)
    if t is int:
        return True
    if t is str:
        return bool(value) and not value.isspace()
    if isinstance(value, list | tuple | set | dict):
        return bool(value)
    if isinstance(value, float):
        return value == value  # NaN is missing
    return True

