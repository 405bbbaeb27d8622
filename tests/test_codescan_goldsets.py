"""Goldsets where users keep them (`ragdiag.codescan.goldsets`): found by their content in any folder,
read and validated; configuration and fixtures that merely look like data are not goldsets.
"""

from __future__ import annotations

import json

from ragdiag.codescan import scan_path
from tests.codescan_trees import run_on_code, tree

PAIRS = """
- question: How many vacation days do new employees get?
  expected_sources: [handbook.pdf#p12]
- question: Who approves travel over 5000 EUR?
  expected_sources: [travel-policy.pdf#p3]
- question: how many vacation days do new employees get?
  expected_sources: [handbook.pdf#p12]
- question: What is the notice period?
"""


def test_a_goldset_in_an_unusual_folder_is_found_by_its_content_and_validated(specs, tmp_path):
    root = tree(tmp_path, {"app.py": "print('hello')\n", "docs/review/pairs.yaml": PAIRS,
                           "app/fixtures/qa.csv": "query,answer\nWhat is RAG?,Retrieval-augmented generation\n"
                                                  "What is BM25?,A ranking function\n",
                           "package.json": json.dumps({"name": "x", "scripts": {"query": "node q.js"}}),
                           "config/settings.yaml": "query: default\nanswer_style: short\n"})
    scan = scan_path(root)
    found = {g.path: g for g in scan.goldset_files}
    assert set(found) == {"docs/review/pairs.yaml", "app/fixtures/qa.csv"}
    pairs = found["docs/review/pairs.yaml"]
    assert (pairs.kind, pairs.records, pairs.questions, pairs.with_expected, pairs.duplicates) == (
        "goldset", 4, 4, 3, 1)
    assert "1 of 4 records without expected sources" in pairs.problems and "1 duplicate question(s)" in pairs.problems
    assert "found by its content" in pairs.evidence
    assert found["app/fixtures/qa.csv"].kind == "no_source_ids"
    f = run_on_code(specs, "goldset", root)
    assert f.status == "warn" and "docs/review/pairs.yaml" in f.headline and "duplicate" in f.headline
    rows = {r["file"]: r for r in f.evidence_table("goldset_files").records()}
    assert rows["docs/review/pairs.yaml"]["duplicates"] == 1


def test_data_that_only_looks_like_a_goldset_is_not_one(tmp_path):
    root = tree(tmp_path, {
        "tests/golden/audit_event.json": json.dumps({"event_type": "request.completed", "status": "ok",
                                                     "query": "x"}),
        "data/one.json": json.dumps([{"question": "only one record", "answer": "a"}]),
        "data/runs.jsonl": "\n".join(json.dumps({"question": f"q{i}", "answer": "a", "groundedness": 4})
                                     for i in range(3)),
        "sample_docs.json": json.dumps([{"page_content": "text", "metadata": {"source": "a.pdf"}}] * 3)})
    scan = scan_path(root)
    assert not scan.goldset_files
    assert [g.path for g in scan.eval_result_files] == ["data/runs.jsonl"]
