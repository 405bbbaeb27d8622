"""The chunk_boundaries check on the sample's two indexes, without embeddings.

A stand-in target streams `sample_data/index/*.jsonl` (with the real OData
evaluator for the level filter); the check must flag the naive fixed-size
chunks, pass the structure-aware ones, and fail a planted missing-page case.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragdiag.checks.registry import get, run_check
from ragdiag.engine.context import AuditContext
from ragdiag.inputs.checklist import load_checklist
from ragdiag.inputs.goldset import load_goldset
from ragdiag.odata import compile_filter
from ragdiag.sample.schema import sample_schema

REPO = Path(__file__).resolve().parents[1]
INDEX = REPO / "ragdiag" / "sample" / "data" / "index"
GOLDSET = REPO / "ragdiag" / "sample" / "data" / "goldset.yaml"

pytestmark = pytest.mark.skipif(not (INDEX / "naive.jsonl").exists() or not (INDEX / "structured.jsonl").exists(),
                                reason="sample index files not built")


class JsonlTarget:
    """The read-only part of a target the check uses, over one JSONL file."""

    def __init__(self, path: Path, mutate: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 schema: Any = None) -> None:
        self.path = path
        self.mutate = mutate
        self._schema = schema or sample_schema()
        self.requests: list[tuple[tuple[str, ...] | None, str | None]] = []

    def schema(self) -> Any:
        return self._schema

    def _records(self, filter: str | None) -> Iterator[dict[str, Any]]:
        pred = compile_filter(filter) if filter else None
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                if self.mutate is not None:
                    rec = self.mutate(rec)
                if pred is None or pred(rec):
                    yield rec

    def iter_documents(self, select: Sequence[str] | None = None,
                       filter: str | None = None) -> Iterator[dict[str, Any]]:
        self.requests.append((tuple(select) if select else None, filter))
        for rec in self._records(filter):
            yield {k: rec.get(k) for k in select} if select else rec

    def count(self, filter: str | None = None) -> int:
        return sum(1 for _ in self._records(filter))


def _ctx(target: Any, goldset: Any = None) -> AuditContext:
    return AuditContext(config=None, target=target, runner=None, goldset=goldset)


@pytest.fixture(scope="module")
def spec():
    return load_checklist()["chunk_boundaries"]


@pytest.fixture(scope="module")
def check():
    return get("chunk_boundaries")


@pytest.fixture(scope="module")
def goldset():
    return load_goldset(GOLDSET)


@pytest.fixture(scope="module")
def naive(check, spec):
    target = JsonlTarget(INDEX / "naive.jsonl")
    return run_check(check, _ctx(target), spec), target


@pytest.fixture(scope="module")
def structured(check, spec, goldset):
    return run_check(check, _ctx(JsonlTarget(INDEX / "structured.jsonl"), goldset), spec)


def _table(finding, title):
    for ev in finding.evidence:
        if ev.title == title:
            return {row[0]: dict(zip(ev.columns, row, strict=True)) for row in ev.rows}
    raise AssertionError(f"no evidence {title!r} in {[e.title for e in finding.evidence]}")


def test_naive_index_is_flagged(naive, spec):
    finding, target = naive
    assert finding.status == "warn", finding.headline
    assert finding.metrics["mid_sentence_end_share"] > spec.threshold("warn_mid_sentence_end_share")
    assert finding.metrics["split_table_share"] > spec.threshold("warn_split_table_share")
    assert "end mid-sentence" in finding.headline and "split a table" in finding.headline
    shares = _table(finding, "Boundary and structure shares")
    assert shares["ends mid-sentence"]["verdict"] == "warn"
    assert shares["splits a table"]["verdict"] == "warn"
    assert shares["lacks citation metadata"]["verdict"] == "ok"
    assert finding.metrics["overlap_share"] == 0
    examples = [ev for ev in finding.evidence if ev.title == "Examples"][0]
    measures = {row[0] for row in examples.rows}
    assert {"ends mid-sentence", "splits a table"} <= measures
    assert all("-n" in row[1] for row in examples.rows if row[0] == "ends mid-sentence")
    assert any("re-chunk structure-aware" in r.lower() for r in finding.recommendations)
    assert finding.figures == ("chunk_boundaries",)
    # only the needed fields, only chunk records
    select, flt = target.requests[-1]
    assert set(select) == {"key", "content", "doc_id", "parent_id", "page", "position",
                           "section_title", "level"}
    assert flt == "level eq 'evidence'"
    assert finding.metrics["chunks"] == target.count("level eq 'evidence'")


def test_structured_index_passes_with_goldset(structured):
    finding = structured
    assert finding.status == "pass", finding.headline
    m = finding.metrics
    assert m["mid_sentence_end_share"] == 0
    assert m["split_table_share"] == 0
    assert m["missing_citation_share"] == 0
    assert m["overlap_share"] > 0.05
    assert m["answers_checked"] > 100
    assert m["answers_straddling"] == 0
    summary = _table(finding, "Expected answers and chunk boundaries")
    assert summary["in one chunk"]["answers"] == m["answers_checked"]
    assert finding.to_dict()["figures"] == ["chunk_boundaries"]


def test_naive_with_goldset_reports_straddling_answers(check, spec, goldset):
    finding = run_check(check, _ctx(JsonlTarget(INDEX / "naive.jsonl"), goldset), spec)
    assert finding.metrics["answers_straddling"] >= 1
    detail = _table(finding, "Answers not inside one chunk")
    row = next(r for r in detail.values() if r["result"] == "straddles a boundary")
    assert len(row["chunks"]) == 2 and all("-n" in k for k in row["chunks"])


def test_planted_missing_page_fails(check, spec):
    def drop_page(rec: dict[str, Any]) -> dict[str, Any]:
        # every 20th evidence chunk loses its page: 5 % > the 1 % threshold
        if rec.get("level") == "evidence" and rec["position"] % 20 == 0:
            return {**rec, "page": None}
        return rec

    finding = run_check(check, _ctx(JsonlTarget(INDEX / "structured.jsonl", mutate=drop_page)), spec)
    assert finding.status == "fail", finding.headline
    assert "citation metadata" in finding.headline and "page" in finding.headline
    meta = _table(finding, "Citation metadata per chunk")
    assert meta["page"]["missing chunks"] > 0
    assert meta["document id"]["missing chunks"] == 0
    assert any("page" in r and "every chunk" in r for r in finding.recommendations)


def test_no_content_field_is_skipped(check, spec):
    from dataclasses import replace

    schema = sample_schema()
    schema = replace(schema, fields=tuple(f for f in schema.fields
                                          if f.name not in ("content", "summary")))
    schema = replace(schema, fields=tuple(replace(f, searchable=False) if f.name in ("title", "section_title")
                                          else f for f in schema.fields))
    finding = run_check(check, _ctx(JsonlTarget(INDEX / "structured.jsonl", schema=schema)), spec)
    assert finding.status == "skipped"
    assert "content, text or chunk" in finding.skipped_reason


def test_figure_draws_from_the_finding(naive):
    from ragdiag.model.findings import Finding
    from ragdiag.plots import figure

    finding, _ = naive
    fig = figure(Finding.from_dict(json.loads(json.dumps(finding.to_dict()))))
    assert fig is not None
    assert len(fig.axes) == 2


def test_large_index_is_sampled_and_says_so(check, spec, monkeypatch):
    import ragdiag.checks.chunk_boundaries as mod

    monkeypatch.setattr(mod, "MAX_CHUNKS", 400)
    target = JsonlTarget(INDEX / "naive.jsonl")
    finding = run_check(check, _ctx(target), spec)
    assert finding.metrics["sampled"] is True
    assert finding.metrics["chunks"] <= 400
    assert finding.metrics["chunk_records"] == target.count("level eq 'evidence'")
    assert "sample" in finding.headline and "whole documents" in finding.headline
    assert finding.status == "warn"
