"""Goldsets in the wild: which data files are measuring sticks for retrieval, and which only look like one.

Real applications keep ground truth as JSONL with the sources cited inline in
the expected answer (``[file.pdf#page=7]``), golden datasets with questions
and answers but no source ids, question lists for a load test, and, next to
them, evaluation *results* with the same names. Each candidate is read (the
first records only) and given a kind (`GoldsetFile.kind`):

* ``goldset``: records name the expected sources (``source_ids``,
  ``doc_id``, ``relevant_docs``, ``context_ids``...);
* ``inline_sources``: the expected answer cites its sources inline;
* ``no_source_ids``: questions and expected answers, no sources (it can
  score answers, not retrieval);
* ``questions_only``: questions without expected answers.

Files whose records carry scores or metrics (``gpt_groundedness``,
``relevance``, ``*_score``, ``passed``) are evaluation results, not
goldsets; so are files under ``results/`` or named ``*results*``. CI
workflow files (``.github/``) are never goldsets.

Where they are. Users keep goldsets anywhere (`docs/qa.yaml`, `data/pairs.csv`,
`app/fixtures/questions.json`), so besides the files named or placed like one, every JSON,
JSONL, YAML and CSV file of the tree up to `MAX_DATA_BYTES` is read and kept when its records
have a question field and an expected-sources or expected-answer field (at least two records
with a question): the content decides, not the folder.

Validation (`GoldsetFile.questions`, `with_expected`, `duplicates`, `problems`): over up to
`MAX_RECORDS` records, how many hold a question, how many name what they expect, how many
questions repeat; the problems are said in words (records without a question, questions
without expected sources, duplicates, expected ids of more than one shape).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from ragdiag.codescan.model import GoldsetFile

_DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".yaml", ".yml")
#: Data files larger than this are not read when only their content could make them a goldset.
MAX_DATA_BYTES = 5_000_000
#: Records read per file for the kind and the validation.
MAX_RECORDS = 5000
#: Question fields that make a data file found by its content alone a goldset candidate (strict).
_CONTENT_QUESTION = re.compile(r"^(question|questions|query|queries|q|user_question|user_query|user_input|ask|"
                               r"question_text|query_text)$", re.I)
#: A question field as JSON, YAML or a CSV header writes it (bytes: tested before anything is parsed).
_QUESTION_FIELD = re.compile(rb"(?im)(?:[\"'](?:question|questions|query|queries|q|user_question|user_query|"
                             rb"user_input|ask|question_text|query_text)[\"']\s*:|^[ \t-]*(?:question|questions|query|"
                             rb"queries|q|user_question|user_query|user_input|ask|question_text|query_text)\s*:|"
                             rb"^[^\n]{0,200}\b(?:question|query|q)\b[^\n]{0,200}[,\t])")
#: File names that are configuration, never data (read neither by name nor by content).
_CONFIG_NAMES = re.compile(r"^(package(-lock)?|tsconfig[\w.-]*|jsconfig|composer|renovate|vercel|app|manifest|launch|"
                           r"settings|extensions|tasks|\.?eslintrc[\w.]*|\.?prettierrc[\w.]*|pnpm-lock|yarn|"
                           r"docker-compose[\w.-]*|compose|mkdocs|environment|azure|openapi[\w.-]*|swagger[\w.-]*|"
                           r"\.pre-commit-config|codecov|dependabot|pyproject|cspell|turbo|nx|lerna|angular|"
                           r"netlify|firebase|staticwebapp\.config|host|local\.settings|function|proxies|"
                           r"components|\.devcontainer|devcontainer|\.markdownlint[\w.]*)\.(json|ya?ml)$", re.I)
_EXTRA_NAME = re.compile(r"ground[-_]?truth|golden|gold|qa[-_]?pairs|test[-_]?set|eval[-_]?set|questions|"
                         r"qrels|benchmark", re.I)
_EVAL_DIR = re.compile(r"(^|/)(evals?|evaluations?|evaluators?|benchmarks?|tests?/data|ground[-_]?truth)(/|$)", re.I)
_RESULT_PATH = re.compile(r"(^|/)(results?|outputs?|runs?|reports?)(/|$)|result|output|scores|metrics|summary", re.I)
_SOURCE_KEYS = re.compile(r"^(source|sources|source_?ids?|doc_?ids?|document_?ids?|documents|relevant(_docs|_ids)?|"
                          r"context_?ids?|chunk_?ids?|citations?|expect(ed)?_?(ids|sources|docs)|qrels|ids|"
                          r"gold_?(ids|docs)|positive_?ids|reference_?ids|ground_?truth_?ids)$", re.I)
_ANSWER_KEYS = re.compile(r"truth|answer|expected|reference|ideal|gold|response", re.I)
_QUESTION_KEYS = re.compile(r"question|query|prompt|input|q$", re.I)
#: Judgements and scores make a file evaluation results; run statistics (latency, lengths) do not: a
#: generated dataset records how long its reference answer took.
_METRIC_KEYS = re.compile(r"^gpt_|groundedness|coherence|fluency|relevance|similarity|_score$|^score$|passed|"
                          r"f1|precision|recall|rating|^metric", re.I)
_INLINE_CITE = re.compile(r"\[[^\[\]\n]{1,120}\.(pdf|docx?|html?|md|txt|pptx?|xlsx?|json|csv)(#[^\]]*)?\]|"
                          r"(\[\w[\w\-]{0,40}\]){1,}\s*$", re.I)


def _records(path: Path, limit: int = MAX_RECORDS) -> list[dict[str, Any]] | None:
    """The first `limit` records (dicts) of a JSON, JSONL, YAML, CSV or TSV file; None when unreadable."""
    try:
        size = path.stat().st_size
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = f.read(2_000_000 if size <= MAX_DATA_BYTES else 200_000)
    except OSError:
        return None
    suffix = path.suffix.lower()
    out: list[dict[str, Any]] = []
    if suffix == ".jsonl":
        for line in head.splitlines():
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict):
                out.append(rec)
            if len(out) >= limit:
                break
        return out
    if suffix in (".json", ".yaml", ".yml"):
        try:
            if suffix == ".json":
                data = json.loads(head)
            else:
                import yaml

                data = yaml.load(head, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 - safe loader
        except Exception:  # noqa: BLE001 - a client's malformed file is no goldset, never a crash
            return None
        if isinstance(data, dict):
            for v in data.values():
                if isinstance(v, list) and v and isinstance(v[0], dict):
                    data = v
                    break
            else:
                data = [data]
        return [r for r in data[:limit] if isinstance(r, dict)] if isinstance(data, list) else None
    if suffix in (".csv", ".tsv"):
        reader = csv.DictReader(io.StringIO(head), delimiter="\t" if suffix == ".tsv" else ",")
        try:
            return [dict(r) for _, r in zip(range(limit), reader, strict=False)]
        except csv.Error:
            return None
    return None


def _question_of(rec: dict[str, Any], keys: list[str]) -> str | None:
    for k in keys:
        v = rec.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


def validate(records: list[dict[str, Any]], kind: str) -> tuple[int, int, int, tuple[str, ...]]:
    """(questions, records naming what they expect, duplicate questions, problems in words)."""
    keys: list[str] = []
    for r in records:
        for k in r:
            if str(k) not in keys:
                keys.append(str(k))
    qkeys = [k for k in keys if _QUESTION_KEYS.search(k)]
    expected_keys = [k for k in keys if _SOURCE_KEYS.match(k)] if kind == "goldset" else \
        [k for k in keys if _ANSWER_KEYS.search(k) and k not in qkeys]
    questions = [_question_of(r, qkeys) for r in records]
    asked = [q for q in questions if q]
    with_expected = sum(1 for r in records if any(r.get(k) not in (None, "", [], {}) for k in expected_keys))
    seen: dict[str, int] = {}
    for q in asked:
        norm = " ".join(q.lower().split())
        seen[norm] = seen.get(norm, 0) + 1
    duplicates = sum(n - 1 for n in seen.values() if n > 1)
    problems: list[str] = []
    if len(asked) < len(records):
        problems.append(f"{len(records) - len(asked)} of {len(records)} records without a question")
    if expected_keys and with_expected < len(records):
        what = "expected sources" if kind == "goldset" else "expected answers"
        problems.append(f"{len(records) - with_expected} of {len(records)} records without {what}")
    if duplicates:
        problems.append(f"{duplicates} duplicate question(s)")
    if kind == "goldset":
        shapes = {type(r.get(k)).__name__ for r in records for k in expected_keys if r.get(k) is not None}
        if len(shapes) > 1:
            problems.append(f"expected sources given as {' and '.join(sorted(shapes))}")
    return len(asked), with_expected, duplicates, tuple(problems)


def _by_content(records: list[dict[str, Any]] | None) -> bool:
    """Do the records of a file found only by its content look like a goldset (questions and expectations)?"""
    if not records:
        return False
    keys = {str(k) for r in records for k in r}
    if not any(_CONTENT_QUESTION.match(k) for k in keys):
        return False
    if not any(_SOURCE_KEYS.match(k) or (_ANSWER_KEYS.search(k) and not _CONTENT_QUESTION.match(k)) for k in keys):
        return False
    qkeys = [k for k in keys if _CONTENT_QUESTION.match(k)]
    return sum(1 for r in records if _question_of(r, qkeys)) >= 2


def _kind(rel: str, records: list[dict[str, Any]] | None) -> tuple[str, tuple[str, ...], str]:
    """(kind, fields, evidence); kind ``eval_results`` or ``not_data`` for files that are not goldsets."""
    if rel.startswith(".github/") or "/.github/" in rel:
        return "not_data", (), "CI workflow"
    if records is None:
        return ("eval_results", (), "results path") if _RESULT_PATH.search(rel.rsplit("/", 1)[-1]) \
            else ("goldset", (), "not read")
    keys: list[str] = []
    for r in records:
        for k in r:
            if k not in keys:
                keys.append(str(k))
    fields = tuple(keys)
    metrics = [k for k in keys if _METRIC_KEYS.search(k)]
    if metrics or _RESULT_PATH.search(rel):
        return "eval_results", fields, f"metric fields {metrics[:4]}" if metrics else "results path"
    sources = [k for k in keys if _SOURCE_KEYS.match(k)]
    if sources:
        return "goldset", fields, f"source fields {sources[:3]}"
    answers = [k for k in keys if _ANSWER_KEYS.search(k)]
    for r in records:
        for k in answers:
            v = r.get(k)
            if isinstance(v, str) and _INLINE_CITE.search(v):
                return "inline_sources", fields, f"{k} cites {_INLINE_CITE.search(v).group(0)[:60]}"
    if answers:
        return "no_source_ids", fields, f"answer fields {answers[:3]}, no source ids"
    if any(_QUESTION_KEYS.search(k) for k in keys):
        return "questions_only", fields, "questions, no expected answers or sources"
    return "goldset", fields, "unrecognised fields"


def classify_goldsets(base: Path, project: Any) -> tuple[list[GoldsetFile], list[GoldsetFile]]:
    """(goldsets, evaluation result files) of the scanned tree (its file list: no second walk)."""
    import fnmatch

    from ragdiag.inputs.goldset import DATA_SUFFIXES, GOLDSET_NAME_PATTERNS

    by_name: set[str] = set()
    by_content: list[str] = []
    for rel in project.files:
        name = rel.rsplit("/", 1)[-1]
        lower = name.lower()
        suffix = "." + lower.rsplit(".", 1)[-1] if "." in lower else ""
        if _CONFIG_NAMES.match(name):
            continue
        if (suffix in DATA_SUFFIXES and any(fnmatch.fnmatchcase(lower, pat) for pat in GOLDSET_NAME_PATTERNS)) or (
                lower.endswith(_DATA_SUFFIXES) and (_EXTRA_NAME.search(name) or
                                                    (_EVAL_DIR.search(rel) and lower.endswith(".jsonl")))):
            by_name.add(rel)
        elif lower.endswith(_DATA_SUFFIXES) and not rel.startswith(".github/") and "/.github/" not in rel:
            by_content.append(rel)
    goldsets: list[GoldsetFile] = []
    results: list[GoldsetFile] = []
    candidates = [(rel, True) for rel in sorted(by_name)] + [(rel, False) for rel in by_content]
    for rel, named in sorted(candidates):
        if rel not in project.fileset:
            continue
        path = base / rel
        if not named:
            try:
                if path.stat().st_size > MAX_DATA_BYTES:
                    continue
                with path.open("rb") as f:
                    head = f.read(65536)
            except OSError:
                continue
            if not _QUESTION_FIELD.search(head):
                continue  # no question field where records would start: not parsed at all (most data files)
        records = _records(path)
        if not named and not _by_content(records):
            continue
        kind, fields, why = _kind(rel, records)
        if kind == "not_data":
            continue
        if kind != "goldset" and rel.lower().endswith((".yaml", ".yml")) and not records:
            continue
        questions = with_expected = duplicates = 0
        problems: tuple[str, ...] = ()
        if records and kind != "eval_results":
            questions, with_expected, duplicates, problems = validate(records, kind)
        rec = GoldsetFile(rel, kind if kind != "eval_results" else "eval_results", fields,
                          len(records) if records is not None else None,
                          why if named else f"{why} (found by its content)", questions=questions,
                          with_expected=with_expected, duplicates=duplicates, problems=problems)
        (results if kind == "eval_results" else goldsets).append(rec)
    return goldsets, results


__all__ = ["classify_goldsets"]
