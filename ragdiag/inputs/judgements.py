"""Judgements as people give them: a document, a section or a page, resolved to chunk keys.

People who judge a goldset name what answers a question the way they find it: a document
(``tutorial/path-params.md``), a section of it (``tutorial/path-params.md#order-matters``, by
its anchor or its title), a page (``manual.pdf#page=7``), a URL with an anchor, or the value a
page field holds (``Benefit_Options.pdf#page=2`` in Azure's RAG samples). An index holds chunks.
`resolve_goldset` turns every expected source (and every ``forbidden_sources`` entry) that is
not a chunk key of the index into the chunk keys it names, with grades:

- every chunk of the named unit gets the grade the case gives the name (1 for a bare name);
- the chunk(s) holding the most of the case's ``expect_answer_contains`` snippets (at least
  one) get that grade + 1, so the chunk with the answer ranks highest in nDCG;
- an explicit chunk key keeps its grade; a chunk named twice keeps its highest grade.

How a name is matched (field roles as the chunk analysis reads them, `ChunkFields`, with
``[target] fields`` overriding the detection):

1. a source Azure would accept as a document key (letters, digits, ``_ - =``) is read as a chunk
   key, as before; a name holds a character no key can (``/ . # `` or a space), so telling the
   two apart needs no request to the index (and ``--plan`` sends none);
2. the whole name equal to a document field value, or to a string value of the page field
   (``file.pdf#page=2``);
3. ``DOC`` or ``DOC#FRAGMENT``: DOC is a document field value, equal, or as a path suffix
   (``path-params.md`` names ``tutorial/path-params.md``), or by file stem, when exactly one
   document matches; FRAGMENT ``page=N`` is that page; any other FRAGMENT is a section whose
   title or anchor (GitHub/mkdocs slug, with or without umlauts folded) equals it, else a
   heading line inside a chunk: that chunk and the following chunks of the same section up to
   the next chunk that opens with a heading-like line (a few words, no sentence end, no code).

A name that resolves to nothing, or to more than one document, is a problem with its file
and line and the nearest names the index has: `ragdiag.audit.build_context` raises them with
the other input problems before any search is sent.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["MemoryRecords", "Resolution", "TargetRecords", "needs_resolution", "resolve_goldset",
           "slug"]

Problem = tuple[str | None, int | None, str]
_PAGE_FRAGMENT = re.compile(r"page[=\-_ ]?(\d+)", re.I)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.\-]*://", re.I)
_LIST_SHOWN = 8


@dataclass(frozen=True)
class Resolution:
    """What one name of a goldset case became: the chunk keys with their grades, and how."""

    case_id: str
    name: str
    grade: int
    how: str  # key | value | document | section | heading | page
    keys: tuple[tuple[str, int], ...]
    answer_keys: tuple[str, ...] = ()  # chunks graded up for holding the expected answer
    forbidden: bool = False  # a forbidden_sources entry (keys carry no grade)
    note: str = ""  # e.g. the answer snippet was found in no chunk of the unit

    def to_dict(self) -> dict[str, Any]:
        return {"case": self.case_id, "name": self.name, "grade": self.grade, "how": self.how,
                "keys": [list(k) for k in self.keys], "answer_keys": list(self.answer_keys),
                "forbidden": self.forbidden, "note": self.note}


class RecordView(Protocol):
    """The records a resolution reads: the role fields of every record, and the text of some."""

    def rows(self, fields: Sequence[str]) -> Iterable[Mapping[str, Any]]: ...

    def contents(self, keys: Sequence[str], field: str) -> dict[str, str]: ...


class MemoryRecords:
    """Records already in memory (a local target's records file, read before the index is built)."""

    def __init__(self, records: Iterable[Mapping[str, Any]], key: str) -> None:
        self.key = key
        self._by_key = {str(r.get(key)): r for r in records if r.get(key) is not None}

    def rows(self, fields: Sequence[str]) -> Iterator[Mapping[str, Any]]:
        for r in self._by_key.values():
            yield {f: r.get(f) for f in (self.key, *fields)}

    def contents(self, keys: Sequence[str], field: str) -> dict[str, str]:
        return {k: str(self._by_key[k].get(field) or "") for k in keys if k in self._by_key}


class TargetRecords:
    """Records read from an opened target through its ``documents`` capability, only when the
    goldset holds a name: one stream of the role fields (no text), then the text of the chunks of
    the named units, 100 keys per filtered read."""

    def __init__(self, target: Any, key: str) -> None:
        self.target, self.key = target, key

    def _where(self, keys: Sequence[str]) -> Iterator[str]:
        from ragdiag.odata import pick_delimiter, quote

        for i in range(0, len(keys), 100):
            part = list(keys[i:i + 100])
            delim = pick_delimiter(part)
            yield f"search.in({self.key}, {quote(delim.join(part))}, {quote(delim)})"

    def rows(self, fields: Sequence[str]) -> Iterable[Mapping[str, Any]]:
        return self.target.iter_documents(select=list(dict.fromkeys((self.key, *fields))))

    def contents(self, keys: Sequence[str], field: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for flt in self._where(list(keys)):
            for d in self.target.iter_documents(select=[self.key, field], filter=flt):
                out[str(d.get(self.key))] = str(d.get(field) or "")
        return out


# ---- names --------------------------------------------------------------------------------
def slug(text: str, *, fold: bool = False) -> str:
    """The anchor GitHub, mdBook and mkdocs make of a heading: lower case, punctuation dropped,
    spaces as dashes; `fold` also folds accents away (python-markdown's default, ``ü`` -> ``u``)."""
    s = text.strip().casefold()
    if fold:
        s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^\w\- ]", "", s)
    return re.sub(r"[\s]+", "-", s).strip("-")


def _slugs(text: str) -> set[str]:
    return {slug(text), slug(text, fold=True), " ".join(text.casefold().split())} - {""}


def _norm_doc(value: str) -> str:
    v = _SCHEME.sub("", value.strip()).replace("\\", "/")
    while v.startswith("./"):
        v = v[2:]
    return v.rstrip("/").casefold()


def _stem(value: str) -> str:
    last = _norm_doc(value).rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[0] if "." in last else last


def needs_resolution(goldset: Any) -> bool:
    """Whether any expected or forbidden source of `goldset` is a name (not key-shaped)."""
    return any(not _is_key_shaped(s) for c in goldset or ()
               for s in (*c.source_keys, *getattr(c, "forbidden_sources", ())))


def _is_key_shaped(name: str) -> bool:
    from ragdiag.inputs.validate import azure_key_problem

    return azure_key_problem(name) is None


# ---- the index of names ---------------------------------------------------------------------
class _Names:
    """Documents, sections and pages of the records, built once from their role fields."""

    def __init__(self, view: RecordView, fields: Any) -> None:
        self.view, self.fields = view, fields
        self.doc_fields = [f for f in dict.fromkeys((fields.doc_id, fields.parent_id)) if f]
        wanted = [f for f in dict.fromkeys((*self.doc_fields, fields.section_title, fields.page, fields.position))
                  if f]
        self.by_doc: dict[str, list[dict[str, Any]]] = defaultdict(list)  # normalised document -> rows
        self.doc_name: dict[str, str] = {}  # normalised -> as the index writes it
        self.by_value: dict[str, list[str]] = defaultdict(list)  # a string page value -> keys
        key = fields.key
        for i, r in enumerate(view.rows(wanted)):
            row = {"key": str(r.get(key)), "section": r.get(fields.section_title) if fields.section_title else None,
                   "page": r.get(fields.page) if fields.page else None,
                   "position": r.get(fields.position) if fields.position else None, "order": i}
            doc = next((r.get(f) for f in self.doc_fields if r.get(f) not in (None, "")), None)
            if doc is not None:
                n = _norm_doc(str(doc))
                self.by_doc[n].append(row)
                self.doc_name.setdefault(n, str(doc))
            v = r.get(fields.page) if fields.page else None
            if isinstance(v, str) and v.strip():  # a page field holding "file.pdf#page=2"
                self.by_value[v.strip().casefold()].append(row["key"])
        for rows in self.by_doc.values():
            rows.sort(key=lambda x: (_num(x["position"]), x["order"]))

    def documents(self, name: str) -> list[str]:
        """Normalised documents `name` names: equal, then path suffix, then file stem."""
        n = _norm_doc(name)
        if n in self.by_doc:
            return [n]
        suffix = [d for d in self.by_doc if d.endswith("/" + n) or n.endswith("/" + d)]
        if suffix:
            return suffix
        stem = _stem(name)
        return [d for d in self.by_doc if _stem(d) == stem] if stem else []

    def nearest_documents(self, name: str) -> list[str]:
        names = list(self.doc_name.values())
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        return close or difflib.get_close_matches(_stem(name), [_stem(x) for x in names], n=3, cutoff=0.5)


def _num(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("inf")


# ---- resolving ------------------------------------------------------------------------------
def resolve_goldset(goldset: Any, view: RecordView, fields: Any) -> tuple[Any, list[Problem], list[Resolution]]:
    """The goldset with every name replaced by the chunk keys it names (graded), the problems
    (names that resolve to nothing or ambiguously) and what each name resolved to.

    Cases whose sources are all keys of the index are returned unchanged."""
    from ragdiag.inputs.goldset import Goldset

    sources = sorted({s for c in goldset for s in (*c.source_keys, *getattr(c, "forbidden_sources", ()))})
    keys = {s for s in sources if _is_key_shaped(s)}  # read as keys: the goldset check reports missing ones
    names: _Names | None = None
    problems: list[Problem] = []
    resolutions: list[Resolution] = []
    cases = []
    for case in goldset:
        todo = [s for s in (*case.source_keys, *case.forbidden_sources) if s not in keys]
        if not todo:
            cases.append(case)
            continue
        if names is None:
            names = _Names(view, fields)
        new_case, found, probs = _resolve_case(case, keys, names, view, fields)
        cases.append(new_case)
        resolutions.extend(found)
        problems.extend(probs)
    return Goldset(cases=tuple(cases), path=goldset.path), problems, resolutions


def _resolve_case(case: Any, keys: set[str], names: _Names, view: RecordView, fields: Any
                  ) -> tuple[Any, list[Resolution], list[Problem]]:
    where = "expect_source" if "expect_source" in dict(case.key_lines) else "expect_sources"
    graded: dict[str, int] = {}
    found: list[Resolution] = []
    problems: list[Problem] = []
    for name, grade in case.expect_sources:
        if name in keys:
            graded[name] = max(grade, graded.get(name, 0))
            continue
        unit, how, problem = _unit(name, names, view, fields)
        if problem:
            problems.append((case.path, case.line_of(where), f"case '{case.id}': expected source {problem}"))
            continue
        answer, note = _answer_chunks(unit, case.expect_answer_contains, view, fields)
        res = tuple((k, grade + 1 if k in answer else grade) for k in unit)
        for k, g in res:
            graded[k] = max(g, graded.get(k, 0))
        found.append(Resolution(case.id, name, grade, how, res, tuple(k for k in unit if k in answer), note=note))
    forbidden: list[str] = []
    for name in case.forbidden_sources:
        if name in keys:
            forbidden.append(name)
            continue
        unit, how, problem = _unit(name, names, view, fields)
        if problem:
            problems.append((case.path, case.line_of("forbidden_sources"),
                             f"case '{case.id}': forbidden source {problem}"))
            continue
        forbidden.extend(unit)
        found.append(Resolution(case.id, name, 0, how, tuple((k, 0) for k in unit), forbidden=True))
    new = dataclasses.replace(
        case, expect_sources=tuple(graded.items()), forbidden_sources=tuple(dict.fromkeys(forbidden)),
        judged_sources=case.expect_sources if case.expect_sources != tuple(graded.items()) else case.judged_sources)
    return new, found, problems


def _unit(name: str, names: _Names, view: RecordView, fields: Any) -> tuple[list[str], str, str | None]:
    """(chunk keys, how, None) or ([], "", the problem) for one name."""
    q = repr(name)
    if not names.by_doc and not names.by_value:
        roles = ", ".join(r for r, f in (("document", fields.doc_id), ("section", fields.section_title),
                                         ("page", fields.page)) if f) or "none"
        return [], "", (f"{q} is not a key of the index, and the index has no document field to read "
                        f"names from (field roles found: {roles}); give chunk keys, or name the document "
                        "field in [target] fields = { document = \"...\" }")
    if "#" in name and _norm_doc(name) in names.by_doc:  # a document value that holds a '#'
        return [r["key"] for r in names.by_doc[_norm_doc(name)]], "document", None
    whole = names.by_value.get(name.strip().casefold())
    if whole:
        return list(dict.fromkeys(whole)), "value", None
    doc_part, sep, frag = name.rpartition("#") if "#" in name else (name, "", "")
    docs = names.documents(doc_part)
    if not docs:
        near = names.nearest_documents(doc_part)
        return [], "", (f"{q} names no document of the index: no document field value is "
                        f"{doc_part!r} or ends with it" + (f" (did you mean {', '.join(map(repr, near))}?)"
                                                           if near else "")
                        + f"; documents: {_some(names.doc_name.values())}")
    if len(docs) > 1:
        return [], "", (f"{q} is ambiguous: {doc_part!r} matches {len(docs)} documents "
                        f"({_some(names.doc_name[d] for d in docs)}); write the path that tells them apart")
    doc = docs[0]
    rows = names.by_doc[doc]
    shown = names.doc_name[doc]
    if not sep or not frag.strip():
        return [r["key"] for r in rows], "document", None
    page = _PAGE_FRAGMENT.fullmatch(frag.strip())
    if page:
        n = int(page.group(1))
        hit = [r["key"] for r in rows if _num(r["page"]) == n]
        if hit:
            return hit, "page", None
        pages = sorted({int(_num(r["page"])) for r in rows if _num(r["page"]) != float("inf")})
        return [], "", (f"{q}: document {shown!r} has no page {n}"
                        + (f" (pages {pages[0]}-{pages[-1]})" if pages else " (the index has no page field)"))
    want = _slugs(frag) | {slug(frag.replace("-", " "))}
    sections = [r for r in rows if r["section"] and _section_match(str(r["section"]), want)]
    if sections:
        return [r["key"] for r in sections], "section", None
    heading = _heading_unit(rows, want, view, fields)
    if heading:
        return heading, "heading", None
    titles = list(dict.fromkeys(str(r["section"]) for r in rows if r["section"]))
    anchors = [slug(t) for t in titles]
    near = difflib.get_close_matches(slug(frag), anchors, n=3, cutoff=0.5)
    return [], "", (f"{q}: document {shown!r} has no section or heading {frag!r}"
                    + (f" (did you mean {', '.join('#' + a for a in near)}?)" if near else "")
                    + (f"; its sections: {_some('#' + a for a in anchors)}" if anchors else
                       "; the index has no section field for it"))


def _section_match(title: str, want: set[str]) -> bool:
    """A section title (or one part of a heading path 'A > B') whose slug is one of `want`."""
    parts = [title, *re.split(r"\s+[>›/|]\s+", title)]
    return any(_slugs(p) & want for p in parts)


_CODE_LIKE = re.compile(r"[(){}\[\]=;<>]|^\s*(?:[-*+]|\d+[.)])\s")


def _looks_like_heading(line: str) -> bool:
    """A chunk's first line that reads as a heading: a few words, no sentence end but '?', no code."""
    line = line.strip().lstrip("#").strip()
    words = line.split()
    return (0 < len(words) <= 12 and not _CODE_LIKE.search(line) and line[-1] not in ".,;:!"
            and (line[0].isupper() or line[0] in "`\"'“„«"))


def _heading_unit(rows: list[dict[str, Any]], want: set[str], view: RecordView, fields: Any) -> list[str]:
    """A heading inside a chunk's text (a sub-heading the section field does not name): that chunk
    and the following chunks of its section, up to the next chunk that opens with a heading."""
    if not fields.content:
        return []
    text = view.contents([r["key"] for r in rows], fields.content)
    for i, r in enumerate(rows):
        lines = (ln.strip().lstrip("#").strip() for ln in text.get(r["key"], "").splitlines())
        if any(ln and len(ln) <= 120 and _slugs(ln) & want for ln in lines):
            out = [r["key"]]
            for nxt in rows[i + 1:]:
                first = next((ln for ln in text.get(nxt["key"], "").splitlines() if ln.strip()), "")
                if nxt["section"] != r["section"] or _looks_like_heading(first):
                    break
                out.append(nxt["key"])
            return out
    return []


def _answer_chunks(unit: list[str], snippets: Sequence[str], view: RecordView, fields: Any
                   ) -> tuple[set[str], str]:
    """The chunks of `unit` holding the most answer snippets (at least one), and a note when none does."""
    wanted = [" ".join(s.casefold().split()) for s in snippets if s.strip()]
    if not wanted or not fields.content or not unit:
        return set(), ""
    text = view.contents(unit, fields.content)
    counts = {k: sum(w in " ".join(text.get(k, "").casefold().split()) for w in wanted) for k in unit}
    best = max(counts.values())
    if best == 0:
        return set(), "no chunk of the unit holds an expect_answer_contains snippet: all graded alike"
    return {k for k, n in counts.items() if n == best}, ""


def _some(items: Iterable[str]) -> str:
    items = list(dict.fromkeys(items))
    shown = ", ".join(items[:_LIST_SHOWN])
    return shown + (f" and {len(items) - _LIST_SHOWN} more" if len(items) > _LIST_SHOWN else "") if items else "none"
