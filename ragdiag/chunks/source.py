"""Source documents for chunk analysis: load them and locate each chunk in its source text.

`load_sources(path)` reads a folder of text files (``.txt .md .markdown .html .htm .rst .csv``;
keyed by relative path, file name and stem, so ``sourcefile = "report.md"`` or ``"docs/report"``
both find it) or one JSONL/JSON file of documents (a document id and a text field, names
inferred like the chunk roles). PDF sources are not read (text extraction would not match
the chunker's own); such documents are judged without the source.

`locate(source, chunks)` finds each chunk's character span in the source, whitespace-
insensitively (chunkers strip, collapse or re-join whitespace) and in document order with
overlaps allowed: each search starts at the previous chunk's start. A chunk not found whole
is anchored by its first and last `ANCHOR` non-space characters; a chunk the chunker
rewrote beyond that is None (judged without the source).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ragdiag.errors import ConfigError

ANCHOR = 40
TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".html", ".htm", ".rst", ".text", ".csv")
_SPACE_TABLE: np.ndarray | None = None  # str.isspace() for every code point up to U+3000


def _nonspace_index(text: str) -> np.ndarray:
    """Offsets of the characters `str.split()` keeps (the squeezed text's characters)."""
    global _SPACE_TABLE
    if _SPACE_TABLE is None:
        _SPACE_TABLE = np.array([chr(i).isspace() for i in range(0x3001)], dtype=bool)
    arr = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    space = np.zeros(len(arr), dtype=bool)
    small = arr <= 0x3000
    space[small] = _SPACE_TABLE[arr[small]]
    return np.flatnonzero(~space)


def _squeeze(s: str) -> str:
    return "".join(s.split())


def locate(source: str, chunks: Sequence[str]) -> list[tuple[int, int] | None]:
    """Each chunk's (start, end) character offsets in `source`, or None where it is not found."""
    squeezed = _squeeze(source)
    idx = _nonspace_index(source)
    if len(idx) != len(squeezed):  # cannot happen: both follow str.isspace
        raise AssertionError("whitespace index and squeezed source disagree")
    out: list[tuple[int, int] | None] = []
    hint = 0
    for text in chunks:
        c = _squeeze(text)
        if not c:
            out.append(None)
            continue
        pos = squeezed.find(c, hint)
        if pos < 0:
            pos = squeezed.find(c)
        end = pos + len(c) if pos >= 0 else -1
        if pos < 0 and len(c) > 2 * ANCHOR:
            p1 = squeezed.find(c[:ANCHOR], hint)
            if p1 < 0:
                p1 = squeezed.find(c[:ANCHOR])
            p2 = squeezed.find(c[-ANCHOR:], p1 + 1) if p1 >= 0 else -1
            if p1 >= 0 and p2 >= 0 and p2 + ANCHOR - p1 <= 1.5 * len(c):
                pos, end = p1, p2 + ANCHOR
        if pos < 0:
            out.append(None)
            continue
        out.append((int(idx[pos]), int(idx[end - 1]) + 1))
        hint = pos
    return out


_DOC_ID_NAMES = ("doc_id", "document_id", "id", "docid", "sourcefile", "source", "filename",
                 "file", "path", "name", "title", "_id")
_TEXT_NAMES = ("text", "content", "body", "page_content", "document")


def load_sources(path: str | Path) -> dict[str, str]:
    """Source texts by every name a chunk's document field may use for them.

    Files are read through `ragdiag.inputs.limits`; in a folder, what is not a regular file
    (a FIFO, a device, a symlink) is never opened, and one that cannot be read is skipped
    (its chunks are judged without the source)."""
    from ragdiag.errors import InputDataError
    from ragdiag.inputs import limits

    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise ConfigError(f"--source {p} does not exist; give a folder of text files or a "
                          "JSONL file of documents (id and text)")
    what = "source documents"
    out: dict[str, str] = {}
    if p.is_dir():
        for f in sorted(p.rglob("*")):
            if f.is_symlink() or not f.is_file() or f.suffix.lower() not in TEXT_SUFFIXES:
                continue
            try:  # as before, a byte that is not UTF-8 becomes U+FFFD (the chunk is then located fuzzily)
                text = limits.read_bytes(f, what="source document", follow_symlinks=False).decode(
                    "utf-8", errors="replace")
            except InputDataError:
                continue  # unreadable or not a regular file: this document is judged without its source
            rel = f.relative_to(p).as_posix()
            for name in (rel, f.name, f.stem, str(f.with_suffix("").relative_to(p).as_posix())):
                out.setdefault(name, text)
        if not out:
            raise ConfigError(f"--source {p} holds no readable text files ({', '.join(TEXT_SUFFIXES)})")
        return out
    if p.suffix.lower() in (".jsonl", ".json"):
        raw = limits.read_text(p, what=what, error=ConfigError)
        if p.suffix.lower() == ".jsonl":
            rows = [limits.loads_json(ln, path=str(p), line=n, what=what, error=ConfigError)
                    for n, ln in enumerate(raw.splitlines(), 1) if ln.strip()]
        else:
            rows = limits.loads_json(raw, path=str(p), what=what, error=ConfigError)
        if isinstance(rows, dict):
            rows = [{"id": k, "text": v} for k, v in rows.items()]
        if not isinstance(rows, list):
            raise ConfigError(f"{p}: expected documents (a JSON list or an object of id: text), "
                              f"found {type(rows).__name__}")
        for n, r in enumerate(rows, 1):
            if not isinstance(r, dict):
                raise ConfigError(f"{p}:{n}: a source document must be an object with an id and a text")
            lower = {k.lower(): k for k in r}
            idf = next((lower[x] for x in _DOC_ID_NAMES if x in lower), None)
            tf = next((lower[x] for x in _TEXT_NAMES if x in lower and isinstance(r[lower[x]], str)), None)
            if idf is None or tf is None:
                raise ConfigError(f"{p}:{n}: a source document needs an id field ({', '.join(_DOC_ID_NAMES)}) "
                                  f"and a text field ({', '.join(_TEXT_NAMES)}); found {', '.join(r)}")
            out[str(r[idf])] = r[tf]
        return out
    text = limits.read_bytes(p, what=what, error=ConfigError).decode("utf-8", errors="replace")
    for name in (p.name, p.stem, str(p)):
        out[name] = text
    out[""] = text  # a single source file: every chunk comes from it
    return out


def find_source(sources: dict[str, str], document: object) -> str | None:
    """The source text of one document id (exact, then by file name or stem), or None."""
    if document is None:
        return sources.get("")
    d = str(document)
    if d in sources:
        return sources[d]
    name = d.replace("\\", "/").rsplit("/", 1)[-1]
    if name in sources:
        return sources[name]
    stem = name.rsplit(".", 1)[0]
    return sources.get(stem, sources.get(""))
