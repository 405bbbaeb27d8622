"""A judged IR collection (documents, questions, graded judgments) as a drafted audit folder.

Shared by the BEIR and TREC routes: each document becomes one record (``key``, ``title`` when
the collection has titles, ``content``; ``original_id`` when an id had to be rewritten into a
valid Azure key), each question with at least one positive judgment a goldset case whose
expected sources carry the grades. Judgments of documents the corpus lacks are dropped and
counted in the README, never silently. An empty document (no text, no title) and a second
document with an id already used are skipped and counted, never a reason to refuse the
collection; judgments of skipped documents are dropped and counted too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ragdiag.init.draft import VECTOR_FIELD, Draft, local_schema, text_field
from ragdiag.init.keys import KeyMaker
from ragdiag.init.lang import choose_language
from ragdiag.init.profiles import local_policy
from ragdiag.model.schema import STRING, Field

LANGUAGE_SAMPLE_DOCS = 2000


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str


def collection_draft(*, route: str, source: str, name: str, documents: list[Document],
                     questions: Mapping[str, str], judgments: Mapping[str, Mapping[str, int]],
                     language: str, warn: Callable[[str], None]) -> Draft:
    """The draft of a judged collection (documents in file order, questions by id)."""
    from ragdiag.errors import InputDataError

    if not documents:
        raise InputDataError(f"{source}: no documents found")
    skipped: dict[str, int] = {}
    empty_ids: set[str] = set()
    kept, seen = [], set()
    for d in documents:
        if d.id in seen:
            skipped["duplicate_documents"] = skipped.get("duplicate_documents", 0) + 1
            continue
        seen.add(d.id)
        if not d.text.strip() and not d.title.strip():
            skipped["empty_documents"] = skipped.get("empty_documents", 0) + 1
            empty_ids.add(d.id)
            continue
        kept.append(d)
    if not kept:
        raise InputDataError(f"{source}: all {len(documents):,} documents are empty (no text, no title)")
    documents = kept
    keys = KeyMaker()
    has_title = any(d.title for d in documents)
    records = []
    for d in documents:
        rec = {"key": keys.key(d.id)}
        if has_title:
            rec["title"] = d.title
        rec["content"] = d.text
        records.append(rec)
    if keys.rewritten:
        for d, rec in zip(documents, records, strict=True):
            rec["original_id"] = d.id
    code, note = choose_language(language, _sample_texts(documents), warn)
    cases, dropped, unjudged = [], 0, 0
    for qid, docs in judgments.items():
        sources = []
        for doc_id, grade in sorted(docs.items(), key=lambda kv: (-kv[1], kv[0])):
            if grade <= 0:
                continue
            if doc_id in empty_ids:
                skipped["judgments_of_empty_documents"] = skipped.get("judgments_of_empty_documents", 0) + 1
                continue
            if doc_id not in keys.by_raw:
                dropped += 1
                continue
            sources.append({"key": keys.by_raw[doc_id], "grade": int(grade)})
        if sources:
            cases.append({"id": qid, "question": questions[qid], "expect_sources": sources})
        else:
            unjudged += 1
    if not cases:
        raise InputDataError(f"{source}: no question has a positive judgment of a document in the corpus; "
                             "check that the qrels and the corpus use the same document ids")
    fields = [Field("key", STRING, key=True, filterable=True)]
    if has_title:
        fields.append(text_field("title", code))
    fields.append(text_field("content", code))
    if keys.rewritten:
        fields.append(Field("original_id", STRING, filterable=True))
    search = ["title", "content"] if has_title else ["content"]
    schema = local_schema(name, fields, title="title" if has_title else None, content="content")
    notes = []
    if keys.rewritten:
        notes.append(f"{keys.rewritten:,} document ids are not valid Azure keys (letters, digits, _ - =); "
                     "they are cited by a rewritten `key`, the original id is in `original_id`")
    if dropped:
        notes.append(f"{dropped:,} positive judgments name documents the corpus lacks; they were dropped")
    if unjudged:
        notes.append(f"{unjudged:,} questions have no positive judgment of a corpus document and are not "
                     "in the goldset")
    if skipped:
        notes.append("skipped, not refused: " + ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in skipped.items())
                     + " (counted in the README and in audit.toml's [init])")
    if dropped:
        skipped["judgments_of_missing_documents"] = dropped
    if unjudged:
        skipped["questions_without_judged_documents"] = unjudged
    notes.append("records are whole documents, cited by their key: the chunk analysis has no page or "
                 "position field to read (expected for an IR collection)")
    notes.append("the collection has no permission model: [identities] is empty and the ACL check has "
                 "nothing to trim")
    return Draft(route=route, source=source, schema=schema, language=code, language_note=note,
                 policy=local_policy(schema, search, VECTOR_FIELD, "default"), records=records,
                 vector_sources={VECTOR_FIELD: search}, cases=cases, notes=notes, skipped=skipped,
                 counts={"documents": len(records), "questions": len(questions),
                         "goldset cases": len(cases),
                         "judgments": sum(len(c["expect_sources"]) for c in cases)})


def _sample_texts(documents: list[Document]) -> Iterable[str]:
    step = max(1, len(documents) // LANGUAGE_SAMPLE_DOCS)
    for d in documents[::step]:
        yield f"{d.title} {d.text}"
