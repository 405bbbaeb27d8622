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
_EXTRA_NAME = re.compile(r"ground[-_]?truth|golden|gold|qa[-_]?pairs|test[-_]?set|eval[-_]?set|questions|"
                         r"qrels|benchmark", re.I)
_EVAL_DIR = re.compile(r"(^|/)(evals?|evaluations?|evaluators?|benchmarks?|tests?/data|ground[-_]?truth)(/|$)", re.I)
_RESULT_PATH = re.compile(r"(^|/)(results?|outputs?|runs?|reports?)(/|$)|result|output|scores|metrics|summary", re.I)
_SOURCE_KEYS = re.compile(r"^(source|sources|source_?ids?|doc_?ids?|document_?ids?|documents|relevant(_docs|_ids)?|"
                          r"context_?ids?|chunk_?ids?|citations?|expect(ed)?_?(ids|sources|docs)|qrels|ids|"
                          r"gold_?(ids|docs)|positive_?ids|reference_?ids|ground_?truth_?ids)$", re.I)
_ANSWER_KEYS = re.compile(r"truth|answer|expected|reference|ideal|gold|response", re.I)
_QUESTION_KEYS = re.compile(r"question|query|prompt|input|q$", re.I)
_METRIC_KEYS = re.compile(r"^gpt_|groundedness|coherence|fluency|relevance|similarity|_score$|^score$|passed|"
                          r"latency|f1|precision|recall|rating|^metric", re.I)
_INLINE_CITE = re.compile(r"\[[^\[\]\n]{1,120}\.(pdf|docx?|html?|md|txt|pptx?|xlsx?|json|csv)(#[^\]]*)?\]|"
                          r"(\[\w[\w\-]{0,40}\]){1,}\s*$", re.I)


def _records(path: Path, limit: int = 25) -> list[dict[str, Any]] | None:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            head = f.read(200_000)
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
    if suffix == ".json":
        try:
            data = json.loads(head)
        except json.JSONDecodeError:
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
    """(goldsets, evaluation result files) of the scanned tree."""
    from ragdiag.inputs.goldset import find_goldset_files

    candidates = {p.relative_to(base).as_posix() for p in find_goldset_files(base)}
    for rel in project.files:
        name = rel.rsplit("/", 1)[-1]
        if rel.lower().endswith(_DATA_SUFFIXES) and (_EXTRA_NAME.search(name) or
                                                     (_EVAL_DIR.search(rel) and rel.lower().endswith(".jsonl"))):
            candidates.add(rel)
    goldsets: list[GoldsetFile] = []
    results: list[GoldsetFile] = []
    for rel in sorted(candidates):
        if rel not in project.fileset:
            continue
        records = _records(base / rel)
        kind, fields, why = _kind(rel, records)
        if kind == "not_data":
            continue
        if kind != "goldset" and rel.lower().endswith((".yaml", ".yml")) and not records:
            continue
        rec = GoldsetFile(rel, kind if kind != "eval_results" else "eval_results", fields,
                          len(records) if records is not None else None, why)
        (results if kind == "eval_results" else goldsets).append(rec)
    return goldsets, results


__all__ = ["classify_goldsets"]
