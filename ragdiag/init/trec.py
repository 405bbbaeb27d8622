"""Route ``--trec-docs FILE --trec-topics FILE --qrels FILE``: a TREC collection.

Documents are ``<DOC>`` blocks with a ``<DOCNO>``; the text is the ``<TEXT>`` parts when the
block has them, otherwise everything but the DOCNO, tags removed; a ``<TITLE>``, ``<HEAD>``
or ``<HEADLINE>`` becomes the title. Topics and qrels are read by the goldset loader the
audit uses (`ragdiag.inputs.goldset.load_trec_qrels`), so init accepts what the audit accepts.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from ragdiag.errors import InputDataError
from ragdiag.init.collection import Document, collection_draft
from ragdiag.init.draft import Draft, index_name
from ragdiag.inputs import limits

_DOC = re.compile(r"<DOC>(.*?)</DOC>", re.S | re.I)
_DOCNO = re.compile(r"<DOCNO>\s*(.*?)\s*</DOCNO>", re.S | re.I)
_TEXT = re.compile(r"<TEXT>(.*?)</TEXT>", re.S | re.I)
_TITLE = re.compile(r"<(TITLE|HEAD|HEADLINE)>(.*?)</\1>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def read_trec_docs(path: Path, log: Callable[[str], None]) -> list[Document]:
    text = limits.read_text(path, what="TREC documents file")
    docs: list[Document] = []  # an empty or repeated document is skipped and counted by collection_draft
    for m in _DOC.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        block = m.group(1)
        no = _DOCNO.search(block)
        if no is None or not no.group(1).strip():
            raise InputDataError("a <DOC> block has no <DOCNO>", path=str(path), line=line)
        doc_id = no.group(1).strip()
        title_m = _TITLE.search(block)
        parts = _TEXT.findall(block)
        body = " ".join(parts) if parts else _DOCNO.sub(" ", _TITLE.sub(" ", block) if title_m else block)
        docs.append(Document(doc_id, _plain(title_m.group(2)) if title_m else "", _plain(body)))
        if len(docs) % 100_000 == 0:
            log(f"  {len(docs):,} documents read")
    if not docs:
        raise InputDataError("no <DOC> ... </DOC> blocks found (expected TREC documents: "
                             "<DOC><DOCNO>id</DOCNO> text </DOC>)", path=str(path))
    return docs


def trec_draft(docs_path: str | Path, topics_path: str | Path, qrels_path: str | Path, *, language: str,
               log: Callable[[str], None], warn: Callable[[str], None]) -> Draft:
    from ragdiag.inputs.goldset import load_trec_qrels

    docs_path, topics_path, qrels_path = Path(docs_path), Path(topics_path), Path(qrels_path)
    for p, opt in ((docs_path, "--trec-docs"), (topics_path, "--trec-topics"), (qrels_path, "--qrels")):
        if not p.is_file():
            raise InputDataError(f"{opt} names a file that does not exist", path=str(p))
    documents = read_trec_docs(docs_path, log)
    log(f"read {len(documents):,} documents from {docs_path}")
    goldset = load_trec_qrels(qrels_path, topics_path)
    questions = {c.id: c.question for c in goldset}
    judgments = {c.id: dict(c.expect_sources) for c in goldset}
    log(f"read {len(goldset):,} judged questions from {qrels_path} and {topics_path}")
    return collection_draft(route="trec", source=f"TREC files {docs_path.name}, {topics_path.name}, "
                            f"{qrels_path.name}", name=index_name(docs_path.stem), documents=documents,
                            questions=questions, judgments=judgments, language=language, warn=warn)
