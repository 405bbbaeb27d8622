"""Route ``--documents FOLDER``: Markdown, text, HTML and PDF files chunked into index records.

Every supported file under the folder (`ragdiag.init.parse.SUFFIXES`) is read into one text
(`ragdiag.chunks.chunker.extract_file`), the corpus language is chosen, and ragdiag's document
chunker (`ragdiag.chunks.chunker.chunk_text`: exact slices of that text, cut at block boundaries
and sentence ends, never inside code blocks, include lines, tables or list items, headings and
admonition titles kept with their body, sections never crossed) cuts the citable chunks. Each
chunk keeps its document (``doc_id``, ``source_file``), section (``section_title``), ``position``
and, where the file has pages (PDF), its ``page``. A file that cannot be read, has no text (a
scanned PDF), or holds the same text as a file read before, is skipped with a warning, listed in
the README and counted (audit.toml's [init]).
There are no questions in a folder of documents: the goldset is a template to fill in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ragdiag.errors import InputDataError, MissingDependencyError
from ragdiag.init.draft import VECTOR_FIELD, Draft, index_name, local_schema, text_field
from ragdiag.init.keys import KeyMaker
from ragdiag.init.lang import choose_language
from ragdiag.init.parse import SUFFIXES
from ragdiag.init.profiles import local_policy
from ragdiag.model.schema import BOOLEAN, INT32, STRING, Field

CHUNK_WORDS = 90
TEMPLATE_CASES = 3
KEEP = ("key", "doc_id", "parent_id", "title", "section_title", "page", "position", "content", "is_table",
        "language")
ROLES = {"document": "doc_id", "page": "page", "position": "position", "section": "section_title",
         "title": "title", "content": "content"}


def find_files(root: Path) -> tuple[list[Path], int]:
    """Supported files under `root` (sorted, hidden folders skipped) and how many others there were."""
    found, other = [], 0
    real_root = root.resolve()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        if path.is_symlink() and not path.resolve().is_relative_to(real_root):
            other += 1  # a symlink out of the folder is not the client's document: never read
            continue
        if path.suffix.lower() in SUFFIXES:
            found.append(path)
        else:
            other += 1
    return found, other


def document_records(doc: dict[str, Any], *, target_words: int = CHUNK_WORDS) -> list[dict[str, Any]]:
    """The chunk records of one read document (``doc_id``, ``title``, ``language``, ``extracted``):
    exact slices of its extracted text, keyed ``{doc_id}-s{section}-c{chunk}``."""
    from ragdiag.chunks.chunker import chunk_text, page_of

    ex = doc["extracted"]
    out: list[dict[str, Any]] = []
    sections: dict[str, int] = {}
    per_section: dict[int, int] = {}
    for position, piece in enumerate(chunk_text(ex.text, target_words=target_words, lang=doc["language"])):
        section = piece.section or next((t for at, t in reversed(ex.sections) if at <= piece.start), "")
        n = sections.setdefault(section, len(sections) + 1)
        m = per_section[n] = per_section.get(n, 0) + 1
        out.append({"key": f"{doc['doc_id']}-s{n}-c{m}", "doc_id": doc["doc_id"], "parent_id": f"{doc['doc_id']}-s{n}",
                    "title": doc["title"], "section_title": section,
                    "page": page_of(ex.pages, piece.start), "position": position,
                    "content": ex.text[piece.start:piece.end], "is_table": piece.is_table,
                    "language": doc["language"]})
    return out


def documents_draft(root: str | Path, *, language: str, log: Callable[[str], None],
                    warn: Callable[[str], None]) -> Draft:
    from ragdiag.chunks.chunker import extract_file

    root = Path(root)
    if not root.is_dir():
        raise InputDataError("--documents needs a folder of Markdown, text, HTML or PDF files", path=str(root))
    files, other = find_files(root)
    if not files:
        raise InputDataError(f"no {', '.join(sorted(SUFFIXES))} files in the folder", path=str(root))
    log(f"reading {len(files):,} files from {root}")
    keys, docs, skipped = KeyMaker(), [], []
    counts: dict[str, int] = {}
    texts: dict[str, str] = {}  # the text of every file read -> the first file holding it
    for i, path in enumerate(files, 1):
        rel = path.relative_to(root).as_posix()
        try:
            extracted = extract_file(path)
        except MissingDependencyError:
            raise
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not lose the folder
            skipped.append(f"{rel}: cannot be read ({type(exc).__name__}: {str(exc)[:120]})")
            warn(f"warning: skipped {rel}: {type(exc).__name__}: {str(exc)[:120]}")
            counts["unreadable_files"] = counts.get("unreadable_files", 0) + 1
            continue
        if not extracted.text.strip():
            why = "no text layer (a scanned PDF needs OCR first)" if path.suffix.lower() == ".pdf" else "no text"
            skipped.append(f"{rel}: {why}")
            warn(f"warning: skipped {rel}: {why}")
            counts["empty_documents"] = counts.get("empty_documents", 0) + 1
            continue
        text = " ".join(extracted.text.split())
        if text in texts:
            skipped.append(f"{rel}: the same text as {texts[text]}")
            warn(f"warning: skipped {rel}: the same text as {texts[text]}")
            counts["duplicate_documents"] = counts.get("duplicate_documents", 0) + 1
            continue
        texts[text] = rel
        docs.append({"doc_id": keys.key(rel), "title": extracted.title or path.stem, "source_file": rel,
                     "extracted": extracted})
        if i % 50 == 0:
            log(f"  {i:,} of {len(files):,} files read")
    if not docs:
        raise InputDataError("none of the files holds readable text: " + "; ".join(skipped[:5]), path=str(root))
    code, note = choose_language(language, (d["extracted"].text for d in docs), warn)
    records: list[dict[str, Any]] = []
    for d in docs:
        d["language"] = code
        for chunk in document_records(d):
            rec = {k: chunk[k] for k in KEEP}
            rec["source_file"] = d["source_file"]
            records.append(rec)
    log(f"cut {len(records):,} chunks from {len(docs):,} documents")
    fields = [Field("key", STRING, key=True, filterable=True),
              Field("doc_id", STRING, filterable=True, facetable=True),
              Field("parent_id", STRING, filterable=True),
              text_field("title", code), text_field("section_title", code),
              Field("page", INT32, filterable=True, sortable=True),
              Field("position", INT32, filterable=True, sortable=True),
              text_field("content", code),
              Field("is_table", BOOLEAN, filterable=True),
              Field("language", STRING, filterable=True, facetable=True),
              Field("source_file", STRING, filterable=True, facetable=True)]
    schema = local_schema(index_name(root.name), fields, title="title", content="content")
    notes = [f"chunks are cut by ragdiag's document chunker (about {CHUNK_WORDS} words, exact slices of the "
             "extracted text, whole sentences, code blocks, include lines, tables and list items kept whole, "
             "headings and admonition titles with their body): an imitation of your pipeline's chunking only if yours "
             "does the same; for an index you already have, export it and use `ragdiag init --records`",
             "there are no questions yet: fill in goldset.template.yaml (questions your users ask and the "
             "chunk keys that answer them), rename it to goldset.yaml and uncomment it in audit.toml"]
    if skipped:
        notes.append(f"{len(skipped)} files were skipped: " + "; ".join(skipped))
    if other:
        notes.append(f"{other} files of other kinds were not read (supported: {', '.join(sorted(SUFFIXES))})")
    template = [_template_case(n, r) for n, r in enumerate(_spread(records, TEMPLATE_CASES), 1)]
    search = ["title", "section_title", "content"]
    return Draft(route="documents", source=f"documents folder {root}", schema=schema, language=code,
                 language_note=note, policy=local_policy(schema, search, VECTOR_FIELD, "default"), records=records,
                 vector_sources={VECTOR_FIELD: ["title", "content"]}, template=template, roles=ROLES, notes=notes,
                 skipped=counts,
                 counts={"files read": len(docs), "files skipped": len(skipped), "chunks": len(records)})


def _template_case(n: int, r: dict[str, Any]) -> dict[str, Any]:
    """A case to fill in: the first names a section as people judge it, the others a chunk key."""
    from ragdiag.inputs.judgements import slug

    case: dict[str, Any] = {"id": f"case-{n:03d}",
                            "question": f"TODO: a question answered by {r['title']!r}, section "
                                        f"{r['section_title']!r}"
                                        + (f", page {r['page']}" if r["page"] is not None else "")}
    if n == 1:
        anchor = slug(r["section_title"]) if r["section_title"] else ""
        case["expect_source"] = f"{r['source_file']}#{anchor}" if anchor else r["source_file"]
    else:
        case["expect_sources"] = [{"key": r["key"], "grade": 2}]
    return case


def _spread(records: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """Up to `n` records from different documents, for the template."""
    out, seen = [], set()
    for r in records:
        if r["doc_id"] not in seen and not r["is_table"]:
            out.append(r)
            seen.add(r["doc_id"])
        if len(out) == n:
            break
    return out or records[:n]
