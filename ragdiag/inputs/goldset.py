"""Goldsets: the questions with known answers that retrieval is measured against.

A goldset is YAML (a list of mappings) or JSONL (one object per line):

    - id: fact-001
      question: "What notice period applies to the framework agreement with Nordlicht GmbH?"
      intent: fact
      as_user: lena.legal              # identity name of [identities], or inline: groups=[legal, all-staff]
      expect_sources:                  # keys, or {key, grade} mappings (grade int >= 1, default 1);
                                       # `expect_source: KEY` (singular) is the same for one key
        - {key: CON-0007-s3-c1, grade: 3}
        - CON-0007-s3
      expect_answer_contains: ["90 days"]
    - id: fact-002
      question: "Who approves a business trip abroad?"
      expect_source: travel-policy.pdf#approval   # a document, a section (#anchor or title) or a
                                                  # page (#page=7): resolved to chunk keys
      expect_answer_contains: ["head of department"]
    - id: salary-unauthorised
      as_user: groups=[sales]
      question: "How much does the warehouse manager earn?"
      expect: refused
      forbidden_sources: [hr/salaries.md]         # a leak when this identity retrieves them
    - id: refuse-004
      question: "..."
      intent: fact
      expect: refused                  # the system must refuse (no sources)

Expected sources may be chunk keys or names of what people judge (a document, a section, a
page); `ragdiag.inputs.judgements.resolve_goldset` resolves names to graded chunk keys once the
index is known. `forbidden_sources` (keys or names) are what the case's identity must never
retrieve; the same question asked as another identity with expected sources makes those
sources forbidden to a refused case too (`Goldset.forbidden`).

A case drafted by `ragdiag goldset draft` also carries review metadata (`DRAFT_KEYS`):
`draft: true`, the `rule` that made it, the `evidence` it was drawn from, and
`accepted: true` once a reviewer accepts it; an audit reads such a file like any other.

`load_goldset` validates every case and raises `InputDataError` with the file
and line of the offending case or key. `load_trec_qrels` reads TREC qrels (3 or 4
columns, with TREC topics for the questions) into the same `Goldset`. `find_goldset_files` finds
goldset-like files in a client code folder.
"""

from __future__ import annotations

import fnmatch
import html
import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragdiag.errors import InputDataError
from ragdiag.inputs import limits

#: review metadata of a drafted case (`ragdiag goldset draft`): `draft: true` until a reviewer
#: accepts it, the `rule` that produced it, `accepted: true` once reviewed, the `evidence`
#: sentence it was drawn from; an audit reads such a file as a goldset and ignores the metadata
DRAFT_KEYS = ("draft", "rule", "accepted", "evidence")

ALLOWED_KEYS = ("id", "question", "intent", "as_user", "expect_sources", "expect_source",
                "expect_answer_contains", "expect", "forbidden_sources", "query_vector", *DRAFT_KEYS)
SOURCE_KEYS = ("key", "grade")
DEFAULT_INTENT = "unknown"
GOLDSET_SUFFIXES = (".yaml", ".yml", ".jsonl")
_q = limits.excerpt


@dataclass(frozen=True)
class GoldCase:
    """One goldset question: what to ask, as whom, and what retrieval should find.

    `expect_sources` holds (key, grade) pairs in file order (grade >= 1; 1 when
    the file gives a bare key). `expect_refused` cases have no sources.
    """

    id: str
    question: str
    intent: str = DEFAULT_INTENT
    as_user: str | None = None
    expect_sources: tuple[tuple[str, int], ...] = ()
    expect_answer_contains: tuple[str, ...] = ()
    expect_refused: bool = False
    path: str | None = None
    line: int | None = None
    # an inline identity (`as_user: groups=[a, b]`): its groups; `as_user` is then its canonical
    # name "groups=[a, b]", which the audit adds to its identities
    as_groups: tuple[str, ...] | None = None
    key_lines: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)
    draft: bool = False
    rule: str | None = None
    #: the client's own embedding of the question (sent as a `kind: "vector"` query instead of text)
    query_vector: tuple[float, ...] | None = field(default=None, compare=False, repr=False)
    #: keys (or, before resolution, names) this case's identity must never retrieve
    forbidden_sources: tuple[str, ...] = ()
    #: the expected sources as the file gives them, when names were resolved to chunk keys
    judged_sources: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    def line_of(self, key: str) -> int | None:
        """Line of `key` in the case (YAML), else the case's own line."""
        return dict(self.key_lines).get(key, self.line)

    @property
    def source_keys(self) -> tuple[str, ...]:
        return tuple(key for key, _ in self.expect_sources)

    @property
    def answerable(self) -> bool:
        return bool(self.expect_sources)

    @property
    def where(self) -> str:
        """`path:line` of the case, for messages."""
        if self.path and self.line:
            return f"{self.path}:{self.line}"
        return self.path or ""


@dataclass(frozen=True)
class Goldset:
    cases: tuple[GoldCase, ...]
    path: str | None = None

    def __len__(self) -> int:
        return len(self.cases)

    def __iter__(self) -> Iterator[GoldCase]:
        return iter(self.cases)

    def __getitem__(self, case_id: str) -> GoldCase:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)

    def by_intent(self) -> dict[str, list[GoldCase]]:
        """Cases grouped by intent, intents in order of first appearance."""
        groups: dict[str, list[GoldCase]] = {}
        for case in self.cases:
            groups.setdefault(case.intent, []).append(case)
        return groups

    def answerable(self) -> list[GoldCase]:
        """Cases with expected sources."""
        return [c for c in self.cases if c.expect_sources]

    def refusals(self) -> list[GoldCase]:
        """Cases the system must refuse (`expect: refused`)."""
        return [c for c in self.cases if c.expect_refused]

    def restricted(self) -> list[GoldCase]:
        """Cases asked as a named identity (`as_user`)."""
        return [c for c in self.cases if c.as_user]

    def identities(self) -> Counter[str]:
        """How many cases each `as_user` identity asks."""
        return Counter(c.as_user for c in self.cases if c.as_user)

    def qrels(self) -> dict[str, dict[str, int]]:
        """case id -> source key -> grade, for answerable cases only."""
        return {c.id: dict(c.expect_sources) for c in self.cases if c.expect_sources}

    def duplicate_questions(self) -> list[tuple[str, list[str]]]:
        """Questions asked more than once by the same identity: (normalised text, case ids).

        The same question asked as different identities (an authorised and an unauthorised
        user, seed 002's design) is a pair, not a duplicate: see `paired_questions`.
        Normalisation: case-folded, whitespace collapsed, surrounding whitespace
        and trailing punctuation (`?.!`) stripped. Empty questions (TREC qrels
        without topics) are not compared. Groups are in order of first appearance.
        """
        groups: dict[tuple[str, Any], list[str]] = {}
        for case in self.cases:
            text = normalise_question(case.question)
            if text:
                groups.setdefault((text, _asker(case)), []).append(case.id)
        return [(text, ids) for (text, _), ids in groups.items() if len(ids) > 1]

    def paired_questions(self) -> list[tuple[str, list[str]]]:
        """Questions asked as more than one identity: (normalised text, case ids)."""
        groups: dict[str, dict[Any, str]] = {}
        for case in self.cases:
            text = normalise_question(case.question)
            if text:
                groups.setdefault(text, {}).setdefault(_asker(case), case.id)
        return [(text, list(by.values())) for text, by in groups.items() if len(by) > 1]

    def forbidden(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """case id -> forbidden key -> why (the case ids that expect it, or 'forbidden_sources').

        A case asked as an identity must not retrieve its own `forbidden_sources`, nor, when it
        is a refusal, the expected sources of the same question asked as another identity (the
        authorised twin of seed 002's unauthorised question)."""
        by_question: dict[str, list[GoldCase]] = {}
        for case in self.cases:
            text = normalise_question(case.question)
            if text:
                by_question.setdefault(text, []).append(case)
        out: dict[str, dict[str, tuple[str, ...]]] = {}
        for case in self.cases:
            if not case.as_user:
                continue
            why: dict[str, list[str]] = {k: ["forbidden_sources"] for k in case.forbidden_sources}
            if case.expect_refused:
                for twin in by_question.get(normalise_question(case.question), ()):
                    if twin is not case and twin.answerable and _asker(twin) != _asker(case):
                        for k in twin.source_keys:
                            why.setdefault(k, []).append(twin.id)
            if why:
                out[case.id] = {k: tuple(v) for k, v in why.items()}
        return out

    def summary(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "cases": len(self.cases),
            "per_intent": {intent: len(cases) for intent, cases in self.by_intent().items()},
            "answerable": len(self.answerable()),
            "refusals": len(self.refusals()),
            "restricted": len(self.restricted()),
            "identities": dict(self.identities()),
        }

    def to_dataframe(self):
        import pandas as pd

        rows = [{
            "id": c.id,
            "question": c.question,
            "intent": c.intent,
            "as_user": c.as_user,
            "expect_refused": c.expect_refused,
            "n_sources": len(c.expect_sources),
            "sources": list(c.source_keys),
            "grades": [g for _, g in c.expect_sources],
            "expect_answer_contains": list(c.expect_answer_contains),
            "path": c.path,
            "line": c.line,
        } for c in self.cases]
        columns = ["id", "question", "intent", "as_user", "expect_refused", "n_sources",
                   "sources", "grades", "expect_answer_contains", "path", "line"]
        return pd.DataFrame(rows, columns=columns)

    def __repr__(self) -> str:
        s = self.summary()
        intents = ", ".join(f"{k} {v}" for k, v in s["per_intent"].items()) or "none"
        idents = ", ".join(sorted(s["identities"]))
        restricted = f"{s['restricted']} restricted" + (f" ({idents})" if idents else "")
        where = f"{self.path}: " if self.path else ""
        return (f"Goldset({where}{s['cases']} cases; per intent: {intents}; "
                f"{s['refusals']} refusals; {restricted})")

    def _repr_html_(self) -> str:
        s = self.summary()
        rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{v}</td></tr>"
                       for k, v in s["per_intent"].items())
        idents = ", ".join(html.escape(i) for i in sorted(s["identities"])) or "none"
        title = html.escape(self.path or "goldset")
        return (f"<div><b>Goldset</b> <code>{title}</code>: {s['cases']} cases, "
                f"{s['refusals']} refusals, {s['restricted']} with a restricted identity "
                f"({idents})<table><tr><th>intent</th><th>cases</th></tr>{rows}</table></div>")


def _asker(case: GoldCase) -> Any:
    """Who asks a case: its inline groups, its identity name, or nobody."""
    return ("groups", tuple(sorted(case.as_groups))) if case.as_groups is not None else case.as_user


def normalise_question(text: str) -> str:
    text = " ".join(text.casefold().split())
    return text.rstrip("?.! ").strip()


# --------------------------------------------------------------------------- YAML with lines


class _LinedDict(dict):
    """A mapping that remembers its own line and each key's line (1-based)."""

    line: int | None = None
    key_lines: dict[Any, int]


class _LinedList(list):
    line: int | None = None
    item_lines: list[int]


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences carry their source lines, within the limits of
    `ragdiag.inputs.limits`: nesting depth, expanded size (aliases included) and 64-bit
    integers are checked while the document is composed and constructed, with the line."""

    _path: str | None = None

    def _error(self, message: str, mark: Any) -> InputDataError:
        return InputDataError(message, path=self._path, line=mark.line + 1 if mark else None)

    def compose_node(self, parent: Any, index: Any) -> Any:
        depth = getattr(self, "_depth", 0) + 1
        if depth > limits.MAX_DEPTH:
            raise self._error(f"lists and mappings nest deeper than {limits.MAX_DEPTH} levels "
                              "(ragdiag.inputs.limits.MAX_DEPTH)", self.peek_event().start_mark)
        self._depth = depth
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth = depth - 1
        sizes: dict[int, int] = self.__dict__.setdefault("_sizes", {})
        if id(node) not in sizes:  # an alias repeats its anchor's whole size
            if isinstance(node, yaml.ScalarNode):
                n = 1
            elif isinstance(node, yaml.SequenceNode):
                n = 1 + sum(sizes.get(id(c), 1) for c in node.value)
            else:
                n = 1 + sum(sizes.get(id(k), 1) + sizes.get(id(v), 1) for k, v in node.value)
            if n > limits.MAX_NODES:
                raise self._error(f"this part of the file expands to more than {limits.MAX_NODES:,} "
                                  "values (do YAML aliases repeat a large part of the file?)",
                                  node.start_mark)
            sizes[id(node)] = n
        return node

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as exc:  # a bad date, an over-long integer
            shown = f" {limits.excerpt(node.value)}" if isinstance(node, yaml.ScalarNode) else ""
            raise self._error(f"cannot read the value{shown}: {limits.excerpt(str(exc))}",
                              node.start_mark) from None
        if isinstance(value, int) and not isinstance(value, bool) and not (
                -limits.MAX_INT - 1 <= value <= limits.MAX_INT):
            raise self._error(f"the integer {limits.excerpt(value, 40)} does not fit in 64 bits",
                              node.start_mark)
        return value


def _construct_map(loader: _LineLoader, node: yaml.MappingNode):
    data = _LinedDict()
    data.line = node.start_mark.line + 1
    data.key_lines = {}
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            hash(key)
        except TypeError:
            raise InputDataError(f"a mapping key must be a plain value, got {limits.excerpt(key)}",
                                 path=getattr(loader, "_path", None), line=line) from None
        if key in data:
            raise InputDataError(
                f"key {limits.excerpt(key, 60)} is given twice in one mapping (first on line "
                f"{data.key_lines[key]})", path=getattr(loader, "_path", None), line=line)
        data[key] = loader.construct_object(value_node, deep=True)
        data.key_lines[key] = line


def _construct_seq(loader: _LineLoader, node: yaml.SequenceNode):
    data = _LinedList()
    data.line = node.start_mark.line + 1
    data.item_lines = [item.start_mark.line + 1 for item in node.value]
    yield data
    data.extend(loader.construct_object(item, deep=True) for item in node.value)


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def _yaml_load(text: str, path: str) -> Any:
    deep = limits.flow_depth_line(text)
    if deep is not None:
        raise InputDataError(f"lists and mappings nest deeper than {limits.MAX_DEPTH} levels "
                             "(ragdiag.inputs.limits.MAX_DEPTH)", path=path, line=deep)
    try:
        loader = _LineLoader(text)  # the reader refuses NUL and control characters right here
    except yaml.YAMLError as exc:
        raise InputDataError(f"invalid YAML: {_yaml_problem(exc)}", path=path,
                             line=_yaml_line(exc, text)) from None
    loader._path = path
    try:
        data = loader.get_single_data()
    except yaml.YAMLError as exc:
        raise InputDataError(f"invalid YAML: {_yaml_problem(exc)}", path=path,
                             line=_yaml_line(exc, text)) from None
    except RecursionError:
        raise InputDataError(f"lists and mappings nest too deeply to read (the limit is "
                             f"{limits.MAX_DEPTH} levels)", path=path) from None
    finally:
        loader.dispose()
    bad = limits.lone_surrogate(text, data)
    if bad is not None:
        raise InputDataError(f"the string {limits.excerpt(bad, 60)} holds an unpaired UTF-16 "
                             "surrogate escape (\\ud800-\\udfff), which is not text", path=path)
    return data


def _yaml_problem(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc)
    return limits.excerpt(str(problem), 200).strip("'\"")


def _yaml_line(exc: yaml.YAMLError, text: str) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return mark.line + 1
    position = getattr(exc, "position", None)  # a ReaderError: a character offset
    return limits.line_at(text, position) if isinstance(position, int) else None


# --------------------------------------------------------------------------- loading


def load_goldset(path: str | os.PathLike[str]) -> Goldset:
    """Load and validate a goldset from `.yaml`/`.yml` (a list of cases) or `.jsonl`.

    Raises `InputDataError` with the file and line of the first problem: a
    missing `id` or `question`, both or neither of `expect: refused` and
    `expect_sources`, a grade that is not an int >= 1, an unknown key (the
    message lists the allowed ones), or a duplicate id (naming both lines).
    Duplicate questions are allowed; see `Goldset.duplicate_questions`.
    """
    p = Path(path)
    spath = str(path)
    suffix = p.suffix.lower()
    if suffix not in GOLDSET_SUFFIXES:
        raise InputDataError(
            f"unsupported goldset file type {_q(p.suffix or '(none)')}; expected one of "
            f"{', '.join(GOLDSET_SUFFIXES)} (TREC qrels: use load_trec_qrels)", path=spath)
    text = limits.read_text(p, what="goldset")
    raws: list[tuple[Any, int | None]] = []
    if suffix == ".jsonl":
        for lineno, raw_line in _jsonl_lines(text, spath):
            raws.append((limits.loads_json(raw_line, path=spath, line=lineno), lineno))
    else:
        data = _yaml_load(text, spath)
        if data is None:
            raise InputDataError("the goldset is empty; expected a list of cases", path=spath)
        if not isinstance(data, list):
            raise InputDataError(
                f"a YAML goldset must be a list of cases (`- id: ...`), got {type(data).__name__}",
                path=spath, line=getattr(data, "line", 1))
        lines = getattr(data, "item_lines", [None] * len(data))
        raws = list(zip(data, lines, strict=True))
    if not raws:
        raise InputDataError("the goldset contains no cases", path=spath)

    cases: list[GoldCase] = []
    seen: dict[str, int | None] = {}
    for raw, line in raws:
        case = _parse_case(raw, spath, line)
        if case.id in seen:
            first = seen[case.id]
            raise InputDataError(
                f"duplicate case id {_q(case.id)}: first on line {first}, again on line {case.line}",
                path=spath, line=case.line)
        seen[case.id] = case.line
        cases.append(case)
    return Goldset(cases=tuple(cases), path=spath)


def _jsonl_lines(text: str, spath: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the non-blank lines, each at most `MAX_LINE_CHARS` long."""
    for lineno, raw_line in enumerate(text.splitlines(), start=1):
        if not raw_line.strip():
            continue
        if len(raw_line) > limits.MAX_LINE_CHARS:
            raise InputDataError(f"the line has {len(raw_line):,} characters; the limit is "
                                 f"{limits.MAX_LINE_CHARS:,} (ragdiag.inputs.limits.MAX_LINE_CHARS)",
                                 path=spath, line=lineno)
        yield lineno, raw_line


def _key_line(obj: Any, key: str, default: int | None) -> int | None:
    lines = getattr(obj, "key_lines", None)
    if lines and key in lines:
        return lines[key]
    return default


def _item_line(seq: Any, index: int, default: int | None) -> int | None:
    item_lines = getattr(seq, "item_lines", None)
    if item_lines and index < len(item_lines):
        return item_lines[index]
    return default


def _kind(value: Any) -> str:
    for t, name in ((bool, "a boolean"), (int, "an integer"), (float, "a number"), (str, "a string"),
                    (list, "a list"), (Mapping, "a mapping")):
        if isinstance(value, t):
            return name
    return type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_case(raw: Any, path: str, line: int | None) -> GoldCase:
    if not isinstance(raw, Mapping):
        raise InputDataError(f"a goldset case must be a mapping, got {_kind(raw)}: {_q(raw)}",
                             path=path, line=line)
    line = getattr(raw, "line", None) or line

    def err(message: str, key: str | None = None, at: int | None = None) -> InputDataError:
        where = at if at is not None else (_key_line(raw, key, line) if key else line)
        return InputDataError(message, path=path, line=where)

    unknown = [k for k in raw if k not in ALLOWED_KEYS]
    if unknown:
        k = unknown[0]
        raise err(f"unknown key {_q(k)} in a goldset case; allowed keys: {', '.join(ALLOWED_KEYS)}",
                  key=k if isinstance(k, str) else None)

    case_id = raw.get("id")
    if case_id is None:
        raise err("a goldset case needs an 'id'")
    if _is_int(case_id):
        case_id = str(case_id)
    if not isinstance(case_id, str) or not case_id.strip():
        raise err(f"'id' must be a non-empty string, got {_q(raw.get('id'))}", key="id")
    case_id = case_id.strip()

    question = raw.get("question")
    if question is None:
        raise err(f"case {_q(case_id)} needs a 'question'")
    if not isinstance(question, str) or not question.strip():
        raise err(f"case {_q(case_id)}: 'question' must be a non-empty string, got {_q(question)}",
                  key="question")

    intent = raw.get("intent", DEFAULT_INTENT)
    if intent is None:
        intent = DEFAULT_INTENT
    if not isinstance(intent, str) or not intent.strip():
        raise err(f"case {_q(case_id)}: 'intent' must be a non-empty string, got {_q(intent)}",
                  key="intent")

    as_user, as_groups = _as_user(raw.get("as_user"), case_id, err)

    refused = False
    if "expect" in raw:
        expect = raw["expect"]
        if expect != "refused":
            raise err(f"case {_q(case_id)}: 'expect' may only be 'refused', got {_q(expect)}",
                      key="expect")
        refused = True

    if "expect_sources" in raw and "expect_source" in raw:
        raise err(f"case {_q(case_id)} has both 'expect_source' and 'expect_sources'; write one "
                  "'expect_sources' list with every expected key", key="expect_source")
    source_key = "expect_source" if "expect_source" in raw else "expect_sources"
    has_sources = source_key in raw and raw[source_key] is not None
    if refused and has_sources:
        raise err(f"case {_q(case_id)} has both 'expect: refused' and '{source_key}'; "
                  "a refused question expects no sources: keep one of them", key=source_key)
    if not refused and not has_sources:
        raise err(f"case {_q(case_id)} needs 'expect_sources' (the keys retrieval should find) "
                  "or 'expect: refused'")

    sources: tuple[tuple[str, int], ...] = ()
    if has_sources:
        sources = _parse_sources(raw[source_key], case_id, path, _key_line(raw, source_key, line))

    forbidden: tuple[str, ...] = ()
    if raw.get("forbidden_sources") is not None:
        fvalue = raw["forbidden_sources"]
        forbidden = tuple(k for k, _ in _parse_sources(
            [fvalue] if isinstance(fvalue, str) else fvalue, case_id, path,
            _key_line(raw, "forbidden_sources", line), what="forbidden_sources", grades=False))
        if as_user is None:
            raise err(f"case {_q(case_id)}: 'forbidden_sources' are what the case's identity must never "
                      "retrieve; name that identity with as_user (e.g. as_user: groups=[sales])",
                      key="forbidden_sources")
        both = set(forbidden) & {k for k, _ in sources}
        if both:
            raise err(f"case {_q(case_id)}: {_q(sorted(both)[0])} is both expected and forbidden",
                      key="forbidden_sources")

    contains_raw = raw.get("expect_answer_contains")
    contains: tuple[str, ...] = ()
    if contains_raw is not None:
        if isinstance(contains_raw, str):
            contains_raw = [contains_raw]
        if not isinstance(contains_raw, list) or not all(isinstance(s, str) for s in contains_raw):
            raise err(f"case {_q(case_id)}: 'expect_answer_contains' must be a string or a list of "
                      f"strings, got {_q(contains_raw)}", key="expect_answer_contains")
        contains = tuple(contains_raw)

    for flag in ("draft", "accepted"):
        if flag in raw and not isinstance(raw[flag], bool):
            raise err(f"case {_q(case_id)}: '{flag}' must be true or false, got {_q(raw[flag])}", key=flag)
    for text_key in ("rule", "evidence"):
        if text_key in raw and not isinstance(raw[text_key], str):
            raise err(f"case {_q(case_id)}: '{text_key}' must be a string, got {_q(raw[text_key])}",
                      key=text_key)

    return GoldCase(id=case_id, question=question.strip(), intent=intent.strip(),
                    as_user=as_user, expect_sources=sources, as_groups=as_groups,
                    key_lines=tuple((k, n) for k, n in getattr(raw, "key_lines", {}).items()
                                    if isinstance(k, str)),
                    expect_answer_contains=contains, expect_refused=refused, path=path, line=line,
                    draft=bool(raw.get("draft", False)) and not raw.get("accepted", False),
                    rule=raw.get("rule"), forbidden_sources=forbidden,
                    query_vector=_parse_query_vector(raw.get("query_vector"), case_id, err))


def _parse_query_vector(value: Any, case_id: str, err: Any) -> tuple[float, ...] | None:
    """A case's `query_vector`: a non-empty list of finite numbers (None when absent)."""
    if value is None:
        return None
    import math

    if not isinstance(value, list) or not value or not all(
            isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in value):
        raise err(f"case {_q(case_id)}: 'query_vector' must be a non-empty list of finite numbers "
                  f"(the question's embedding), got {_q(value)}", key="query_vector")
    return tuple(float(x) for x in value)


_INLINE_GROUPS = re.compile(r"\s*groups\s*=\s*\[(?P<groups>[^\]]*)\]\s*", re.I)


def inline_identity_name(groups: tuple[str, ...]) -> str:
    """The canonical name of an inline identity: ``groups=[a, b]``."""
    return f"groups=[{', '.join(groups)}]"


def _as_user(value: Any, case_id: str, err: Any) -> tuple[str | None, tuple[str, ...] | None]:
    """`as_user`: an identity name, or an inline identity `groups=[a, b]` (also written as a
    mapping `{groups: [a, b]}`): (name, groups of an inline identity or None)."""
    if value is None:
        return None, None
    groups: Any = None
    if isinstance(value, Mapping):
        if set(value) != {"groups"}:
            raise err(f"case {_q(case_id)}: an inline 'as_user' mapping holds only 'groups', e.g. "
                      f"{{groups: [sales]}}, got {_q(value)}", key="as_user")
        groups = value["groups"]
        if isinstance(groups, str):
            groups = [groups]
    elif isinstance(value, str) and _INLINE_GROUPS.fullmatch(value):
        inner = _INLINE_GROUPS.fullmatch(value).group("groups")  # type: ignore[union-attr]
        groups = [g.strip().strip("'\"").strip() for g in inner.split(",")] if inner.strip() else []
    elif isinstance(value, str) and value.strip():
        if value.strip().lower().startswith("groups"):
            raise err(f"case {_q(case_id)}: 'as_user' {_q(value)} looks like an inline identity but is "
                      "not 'groups=[a, b]'; write e.g. as_user: groups=[sales, all-staff]", key="as_user")
        return value.strip(), None
    else:
        raise err(f"case {_q(case_id)}: 'as_user' must be an identity name (a string) or an inline "
                  f"identity 'groups=[a, b]', got {_q(value)}", key="as_user")
    if not isinstance(groups, list) or not groups or not all(isinstance(g, str) and g for g in groups):
        raise err(f"case {_q(case_id)}: an inline identity needs at least one group name, e.g. "
                  f"as_user: groups=[sales]; got {_q(value)}", key="as_user")
    clean = tuple(dict.fromkeys(groups))
    return inline_identity_name(clean), clean


def _parse_sources(value: Any, case_id: str, path: str, line: int | None, *, what: str = "expect_sources",
                   grades: bool = True) -> tuple[tuple[str, int], ...]:
    """Sources as keys or names (a document, `doc#section`, `doc#page=7`), with grades."""
    if isinstance(value, str | Mapping):  # one key, or one {key, grade}
        value = [value]
    if not isinstance(value, list):
        raise InputDataError(
            f"case {_q(case_id)}: '{what}' must be a list of keys or {{key, grade}} "
            f"mappings, got {type(value).__name__}", path=path, line=line)
    if not value:
        raise InputDataError(
            f"case {_q(case_id)}: '{what}' is empty; list the expected keys, or write "
            "'expect: refused' for a question the system must refuse" if grades else
            f"case {_q(case_id)}: '{what}' is empty; list the keys or documents this identity must "
            "never retrieve, or remove the key", path=path, line=line)
    out: list[tuple[str, int]] = []
    first_line: dict[str, int | None] = {}
    for i, item in enumerate(value):
        item_line = getattr(item, "line", None) or _item_line(value, i, line)
        grade: Any = 1
        if isinstance(item, Mapping) and not grades:
            raise InputDataError(f"case {_q(case_id)}: '{what}' lists keys or document names, not "
                                 f"mappings; got {_q(item)}", path=path, line=item_line)
        if isinstance(item, Mapping):
            bad = [k for k in item if k not in SOURCE_KEYS]
            if bad:
                raise InputDataError(
                    f"case {_q(case_id)}: unknown key {_q(bad[0])} in an expected source; allowed "
                    f"keys: {', '.join(SOURCE_KEYS)}", path=path,
                    line=_key_line(item, bad[0], item_line))
            if "key" not in item:
                raise InputDataError(f"case {_q(case_id)}: an expected source mapping needs a 'key'",
                                     path=path, line=item_line)
            key = item["key"]
            grade = item.get("grade", 1)
            grade_line = _key_line(item, "grade", item_line)
            if not _is_int(grade) or grade < 1:
                raise InputDataError(
                    f"case {_q(case_id)}: grade of source {_q(key)} must be an integer >= 1, "
                    f"got {_q(grade)}", path=path, line=grade_line)
        else:
            key = item
        if _is_int(key):
            key = str(key)
        if not isinstance(key, str) or not key.strip():
            raise InputDataError(
                f"case {_q(case_id)}: an expected source key must be a non-empty string, got {_q(key)}",
                path=path, line=item_line)
        key = key.strip()
        if key in first_line:
            raise InputDataError(
                f"case {_q(case_id)}: source {_q(key)} is listed twice (first on line "
                f"{first_line[key]})", path=path, line=item_line)
        first_line[key] = item_line
        out.append((key, int(grade)))
    return tuple(out)


# --------------------------------------------------------------------------- TREC


_TOP_RE = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM_RE = re.compile(r"<num>\s*(?:Number:)?\s*([^<\s]+)", re.I)
_TITLE_RE = re.compile(r"<title>\s*(?:Topic:)?(.*?)(?=<|\Z)", re.S | re.I)


#: suffixes of a goldset file read as TREC qrels ("" = no suffix, as TREC distributes them;
#: `.tsv` as BEIR writes them)
QRELS_SUFFIXES = ("", ".qrels", ".trec", ".tsv", ".txt")


def is_trec_qrels(path: str | os.PathLike[str]) -> bool:
    """Whether an audit reads `path` as TREC qrels (by suffix) rather than YAML/JSONL cases."""
    return Path(path).suffix.lower() in QRELS_SUFFIXES


def load_trec_qrels(qrels_path: str | os.PathLike[str],
                    topics_path: str | os.PathLike[str] | None = None) -> Goldset:
    """Load TREC qrels as a goldset, with questions from TREC topics.

    A line is `qid iter docno rel` (4 columns, TREC) or `qid docno rel` (3 columns, as
    BEIR's `qrels/*.tsv`), split on whitespace; one file uses one form. A first line whose
    relevance is not a number is a header (BEIR's `query-id corpus-id score`) and skipped.
    Judgments with rel <= 0 are skipped, so a query with no positive judgment
    has no case. A (qid, docno) judged twice keeps the higher grade. Topics are
    `<top><num>..</num><title>..</title></top>` blocks (question = title,
    whitespace collapsed), `qid<TAB>text` (or `qid text`) lines, or JSONL objects
    with `_id`/`id` and `text`/`question` (BEIR's queries.jsonl). Without topics the
    questions are empty strings.
    Every case has intent "unknown" and the path:line of its first judgment.
    """
    qpath = str(qrels_path)
    text = limits.read_text(qrels_path, what="TREC qrels file")
    judged: dict[str, dict[str, int]] = {}
    first_line: dict[str, int] = {}
    columns: tuple[int, int] | None = None  # (number of columns, line that set it)
    for n, (lineno, raw_line) in enumerate(_jsonl_lines(text, qpath)):
        parts = raw_line.split()
        if len(parts) not in (3, 4):
            raise InputDataError(
                f"a qrels line needs 4 fields 'qid iter docno rel' or 3 fields 'qid docno rel', got "
                f"{len(parts)}: {_q(raw_line.strip())}", path=qpath, line=lineno)
        if n == 0 and not re.fullmatch(r"[+-]?\d+", parts[-1]):
            continue  # a header line (BEIR: query-id corpus-id score)
        if columns is None:
            columns = (len(parts), lineno)
        elif len(parts) != columns[0]:
            raise InputDataError(
                f"this qrels line has {len(parts)} fields, line {columns[1]} has {columns[0]}; one "
                f"file uses either 'qid iter docno rel' or 'qid docno rel'", path=qpath, line=lineno)
        qid, docno, rel_text = (parts[0], parts[1], parts[2]) if len(parts) == 3 else (
            parts[0], parts[2], parts[3])
        try:
            rel = int(rel_text) if len(rel_text) <= 19 else None
        except ValueError:
            rel = None
        if rel is None or not -limits.MAX_INT - 1 <= rel <= limits.MAX_INT:
            raise InputDataError(f"relevance must be an integer (64 bits), got {_q(rel_text)}",
                                 path=qpath, line=lineno)
        if rel <= 0:
            continue
        docs = judged.setdefault(qid, {})
        first_line.setdefault(qid, lineno)
        docs[docno] = max(rel, docs.get(docno, 0))

    topics: dict[str, str] | None = None
    if topics_path is not None:
        topics = _load_topics(topics_path)
        for qid in judged:
            if qid not in topics:
                raise InputDataError(f"query {_q(qid)} has judgments but no topic in "
                                     f"{limits.short_path(topics_path)}",
                                     path=qpath, line=first_line[qid])
    if not judged:
        raise InputDataError("the qrels file has no positive judgments (rel >= 1)", path=qpath)

    cases = tuple(
        GoldCase(id=qid, question=topics[qid] if topics is not None else "",
                 intent=DEFAULT_INTENT, expect_sources=tuple(docs.items()),
                 path=qpath, line=first_line[qid])
        for qid, docs in judged.items())
    return Goldset(cases=cases, path=qpath)


def _load_topics(topics_path: str | os.PathLike[str]) -> dict[str, str]:
    tpath = str(topics_path)
    text = limits.read_text(topics_path, what="TREC topics file")
    topics: dict[str, str] = {}
    topic_line: dict[str, int] = {}
    if re.search(r"<top>", text, re.I):
        for match in _TOP_RE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            block = match.group(1)
            num = _NUM_RE.search(block)
            if num is None:
                raise InputDataError("a <top> block has no <num>", path=tpath, line=line)
            title = _TITLE_RE.search(block)
            qid = num.group(1).strip()
            if title is None or not " ".join(title.group(1).split()):
                raise InputDataError(f"topic {_q(qid)} has no <title>", path=tpath, line=line)
            if qid in topics:
                raise InputDataError(f"topic {_q(qid)} is defined twice (first on line "
                                     f"{topic_line[qid]})", path=tpath, line=line)
            topics[qid] = " ".join(title.group(1).split())
            topic_line[qid] = line
        return topics
    for lineno, raw_line in _jsonl_lines(text, tpath):
        if raw_line.lstrip().startswith("{"):  # BEIR queries.jsonl
            qid, query = _json_topic(limits.loads_json(raw_line, path=tpath, line=lineno), tpath, lineno)
        else:
            qid, sep, query = raw_line.partition("\t") if "\t" in raw_line else raw_line.strip().partition(" ")
            if not sep or not qid.strip() or not query.strip():
                raise InputDataError("expected TREC <top> topics, 'qid<TAB>text' lines or JSONL "
                                     "{\"_id\": ..., \"text\": ...} objects", path=tpath, line=lineno)
        qid = qid.strip()
        if qid in topic_line:
            raise InputDataError(f"topic {_q(qid)} is defined twice (first on line {topic_line[qid]})",
                                 path=tpath, line=lineno)
        topics[qid] = " ".join(query.split())
        topic_line[qid] = lineno
    return topics


def _json_topic(obj: Any, tpath: str, lineno: int) -> tuple[str, str]:
    """(qid, text) of a JSONL topic: `_id` or `id`, and `text` or `question`."""
    qid = obj.get("_id", obj.get("id")) if isinstance(obj, dict) else None
    query = obj.get("text", obj.get("question")) if isinstance(obj, dict) else None
    if _is_int(qid):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip() or not isinstance(query, str) or not query.strip():
        raise InputDataError("a JSONL topic needs \"_id\" (or \"id\") and \"text\" (or \"question\"), "
                             f"non-empty; got {_q(obj)}", path=tpath, line=lineno)
    return qid, query


# --------------------------------------------------------------------------- discovery


GOLDSET_NAME_PATTERNS = ("*ground_truth*", "*groundtruth*", "*ground-truth*", "*goldset*",
                         "*gold_set*", "*golden*", "eval*.yaml", "eval*.yml", "eval*.jsonl",
                         "qrels*", "*.qrels", "*test_questions*", "*test-questions*")
DATA_SUFFIXES = ("", ".jsonl", ".json", ".yaml", ".yml", ".csv", ".tsv", ".txt", ".qrels")
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache"})


def find_goldset_files(root: str | os.PathLike[str]) -> list[Path]:
    """Goldset-like files under `root` (sorted), e.g. `ground_truth.jsonl`, `eval_set.yaml`, `qrels.txt`.

    Only data files count (suffix in `DATA_SUFFIXES`, so `golden_test.py` does
    not); `.git`, `node_modules`, virtualenvs and caches are skipped.
    """
    base = Path(root)
    if not base.is_dir():
        raise InputDataError("not a directory", path=str(root))
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in filenames:
            lower = name.lower()
            if Path(lower).suffix not in DATA_SUFFIXES:
                continue
            if any(fnmatch.fnmatchcase(lower, pat) for pat in GOLDSET_NAME_PATTERNS):
                found.append(Path(dirpath) / name)
    return sorted(found)
