"""Answers across chunk boundaries: does each expected answer string of the goldset lie inside one
chunk, only across the boundary of two consecutive chunks, or nowhere in the expected documents?
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragdiag.chunks.fields import ChunkFields, _order_key

_DOC_FROM_KEY = re.compile(r"-(?:s|n)\d")


def doc_id_of_key(key: str) -> str:
    """The document id a chunk key belongs to: the prefix up to the first "-s<n>"/"-n<n>"."""
    m = _DOC_FROM_KEY.search(key)
    return key[: m.start()] if m else key


@dataclass(frozen=True)
class StraddleRow:
    """Where one expected answer string lies among the chunks of the expected documents.

    `result`: ``in one chunk`` | ``straddles a boundary`` | ``not found`` |
    ``document not in index``.
    """

    case_id: str
    answer: str
    documents: tuple[str, ...]
    result: str
    keys: tuple[str, ...]


def _norm(text: str) -> str:
    return " ".join(str(text).casefold().split())


def straddling_answers(records: Iterable[Mapping[str, Any]], goldset: Any, *,
                       fields: ChunkFields | None = None) -> list[StraddleRow]:
    """For each answerable case's ``expect_answer_contains`` strings: in one chunk, only across
    two consecutive chunks, or nowhere in the expected documents?

    The expected documents are the expected sources' document ids: the key
    prefix up to the first "-s"/"-n", or the doc id of the record with that key
    (goldset keys may come from another chunking). Only chunk-level records are
    searched. `records` is read once, twice when it is a sequence and some
    source keys are only known by their record's doc id.
    """
    fields = fields or ChunkFields()
    cases = [c for c in goldset if getattr(c, "expect_sources", None) and c.expect_answer_contains]
    if not cases or not fields.content:
        return []
    gold_keys = {k for c in cases for k, _ in c.expect_sources}
    wanted = {doc_id_of_key(k) for k in gold_keys}
    key_doc: dict[str, str] = {}
    by_doc: dict[str, list[tuple[tuple, int, str, str]]] = {}

    def doc_of(rec: Mapping[str, Any]) -> str | None:
        d = rec.get(fields.doc_id) if fields.doc_id else None
        if d is None and fields.parent_id:
            d = rec.get(fields.parent_id)
        return None if d is None else str(d)

    def scan(recs: Iterable[Mapping[str, Any]], want: set[str]) -> None:
        levels = set(fields.chunk_levels)
        for i, rec in enumerate(recs):
            key = str(rec.get(fields.key, ""))
            d = doc_of(rec)
            if key in gold_keys and d is not None:
                key_doc[key] = d
            if fields.level and rec.get(fields.level) is not None and \
                    str(rec.get(fields.level)) not in levels:
                continue
            if d is None:
                d = doc_id_of_key(key)
            if d in want:
                content = rec.get(fields.content)
                by_doc.setdefault(d, []).append((_order_key(rec.get(fields.position)
                                                            if fields.position else None), i, key,
                                                 _norm(content or "")))

    scan(records, wanted)
    extra = {d for d in key_doc.values() if d not in wanted}
    if extra and isinstance(records, Sequence):
        scan(records, extra)
    for chunks in by_doc.values():
        chunks.sort()
    rows: list[StraddleRow] = []
    for c in cases:
        docs = tuple(dict.fromkeys(key_doc.get(k) or doc_id_of_key(k) for k, _ in c.expect_sources))
        present = [d for d in docs if d in by_doc]
        for answer in c.expect_answer_contains:
            a = _norm(answer)
            if not present:
                rows.append(StraddleRow(c.id, answer, docs, "document not in index", ()))
                continue
            single = [k for d in present for _o, _i, k, t in by_doc[d] if a in t]
            if single:
                rows.append(StraddleRow(c.id, answer, docs, "in one chunk", tuple(single[:3])))
                continue
            across: list[str] = []
            for d in present:
                ch = by_doc[d]
                for x, y in zip(ch, ch[1:], strict=False):
                    if a in f"{x[3]} {y[3]}":
                        across = [x[2], y[2]]
                        break
                if across:
                    break
            if across:
                rows.append(StraddleRow(c.id, answer, docs, "straddles a boundary", tuple(across)))
            else:
                rows.append(StraddleRow(c.id, answer, docs, "not found", ()))
    return rows


def iter_with_copy(records: Iterable[Mapping[str, Any]], keep: Callable[[Mapping[str, Any]], bool],
                   into: list[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Yield `records`, appending those for which `keep` is true to `into` (one pass, two uses)."""
    for rec in records:
        if keep(rec):
            into.append(rec)
        yield rec
