"""Route ``--beir DIR``: a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

corpus.jsonl lines are ``{"_id", "title", "text"}``, queries.jsonl lines ``{"_id", "text"}``,
a qrels file is tab-separated ``query-id corpus-id score`` with a header line. The split is
``test`` when the folder has it, the only qrels file otherwise, or the one `split` names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ragdiag.errors import InputDataError
from ragdiag.init.collection import Document, collection_draft
from ragdiag.init.draft import Draft, index_name
from ragdiag.inputs import limits

PROGRESS_EVERY = 100_000


def _jsonl(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise InputDataError(f"a BEIR folder needs {path.name} ({what}); not found", path=str(path))
    text = limits.read_text(path, what=f"BEIR {what}")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        obj = limits.loads_json(raw, path=str(path), line=lineno, what=what)
        if not isinstance(obj, dict):
            raise InputDataError(f"each line must be a JSON object, got {limits.excerpt(raw)}",
                                 path=str(path), line=lineno)
        yield lineno, obj


def _string(obj: dict[str, Any], key: str, path: Path, line: int, required: bool) -> str:
    v = obj.get(key)
    if v is None and not required:
        return ""
    if isinstance(v, int) and not isinstance(v, bool):
        v = str(v)
    if not isinstance(v, str) or (required and not v.strip()):
        raise InputDataError(f"'{key}' must be a non-empty string, got {limits.excerpt(v)}; "
                             f"keys found: {', '.join(obj) or 'none'}", path=str(path), line=line)
    return v


def qrels_file(root: Path, split: str | None) -> Path:
    folder = root / "qrels"
    files = sorted(folder.glob("*.tsv")) if folder.is_dir() else []
    names = ", ".join(f.stem for f in files) or "none"
    if split:
        path = folder / f"{split}.tsv"
        if not path.is_file():
            raise InputDataError(f"no qrels/{split}.tsv; splits found: {names}", path=str(root))
        return path
    if (folder / "test.tsv").is_file():
        return folder / "test.tsv"
    if len(files) == 1:
        return files[0]
    raise InputDataError(f"a BEIR folder needs qrels/<split>.tsv; found {names}: choose one with --split"
                         if files else "a BEIR folder needs qrels/test.tsv (or another split); none found",
                         path=str(root))


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    text = limits.read_text(path, what="BEIR qrels")
    out: dict[str, dict[str, int]] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        parts = raw.split("\t") if "\t" in raw else raw.split()
        if lineno == 1 and parts[-1].strip().lower() in ("score", "relevance", "rel"):
            continue  # the header
        if len(parts) != 3:
            raise InputDataError(f"a BEIR qrels line needs 3 tab-separated fields 'query-id corpus-id score', "
                                 f"got {len(parts)}: {limits.excerpt(raw)}", path=str(path), line=lineno)
        qid, doc_id, score = (p.strip() for p in parts)
        try:
            grade = int(score)
        except ValueError:
            raise InputDataError(f"the score must be an integer, got {limits.excerpt(score)}",
                                 path=str(path), line=lineno) from None
        docs = out.setdefault(qid, {})
        docs[doc_id] = max(grade, docs.get(doc_id, grade))
    return out


def beir_draft(root: str | Path, *, language: str, split: str | None = None,
               log: Callable[[str], None], warn: Callable[[str], None]) -> Draft:
    root = Path(root)
    if not root.is_dir():
        raise InputDataError("--beir needs a folder holding corpus.jsonl, queries.jsonl and qrels/", path=str(root))
    qpath = qrels_file(root, split)
    documents = []  # an empty or repeated document is skipped and counted by collection_draft
    for line, obj in _jsonl(root / "corpus.jsonl", "corpus"):
        doc_id = _string(obj, "_id", root / "corpus.jsonl", line, True)
        text = _string(obj, "text", root / "corpus.jsonl", line, False)
        title = _string(obj, "title", root / "corpus.jsonl", line, False)
        documents.append(Document(doc_id, " ".join(title.split()), text.strip()))
        if len(documents) % PROGRESS_EVERY == 0:
            log(f"  {len(documents):,} documents read")
    log(f"read {len(documents):,} documents from {root / 'corpus.jsonl'}")
    questions = {}
    for line, obj in _jsonl(root / "queries.jsonl", "queries"):
        qid = _string(obj, "_id", root / "queries.jsonl", line, True)
        questions[qid] = " ".join(_string(obj, "text", root / "queries.jsonl", line, True).split())
    judgments = read_qrels(qpath)
    missing = [q for q in judgments if q not in questions]
    if missing:
        raise InputDataError(f"{len(missing):,} judged query ids have no line in queries.jsonl, e.g. "
                             f"{limits.excerpt(missing[0])}", path=str(qpath))
    log(f"read {len(questions):,} questions and the judgments of {len(judgments):,} from {qpath}")
    return collection_draft(route="beir", source=f"BEIR folder {root} (split {qpath.stem})",
                            name=index_name(root.name), documents=documents, questions=questions,
                            judgments=judgments, language=language, warn=warn)

