"""Tests of the generated sample (ragdiag.sample): determinism, counts, goldset, access rights."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ragdiag.inputs.goldset import load_goldset
from ragdiag.sample.build import build_sample
from ragdiag.sample.chunking import RECORD_FIELDS
from ragdiag.sample.schema import SAMPLE_IDENTITIES
from ragdiag.sample.vocab import UNKNOWN_PARTNERS

REPO_SAMPLE = Path(__file__).resolve().parents[1] / "ragdiag" / "sample" / "data"
BUILT_FILES = ("corpus/documents.jsonl", "index/structured.jsonl", "index/naive.jsonl",
               "index/schema.json", "entities.json", "goldset.yaml", "README.md")
LOW, HIGH = 0.6, 0.85


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    summary = build_sample(out)
    return out, summary


@pytest.fixture(scope="session")
def docs(built):
    return [json.loads(line) for line in (built[0] / "corpus/documents.jsonl").open(encoding="utf-8")]


@pytest.fixture(scope="session")
def records(built):
    out = {}
    for variant in ("structured", "naive"):
        path = built[0] / "index" / f"{variant}.jsonl"
        out[variant] = [json.loads(line) for line in path.open(encoding="utf-8")]
    return out


@pytest.fixture(scope="session")
def by_key(records):
    return {r["key"]: r for r in records["structured"]}


@pytest.fixture(scope="session")
def cases(built):
    return yaml.safe_load((built[0] / "goldset.yaml").read_text(encoding="utf-8"))


def _norm(text):
    return " ".join(text.casefold().split())


def test_building_twice_gives_identical_bytes(built, tmp_path):
    build_sample(tmp_path)
    for name in BUILT_FILES:
        assert (tmp_path / name).read_bytes() == (built[0] / name).read_bytes(), name


def test_committed_sample_data_equals_a_fresh_build(built):
    stale = [name for name in BUILT_FILES
             if not (REPO_SAMPLE / name).is_file()
             or (REPO_SAMPLE / name).read_bytes() != (built[0] / name).read_bytes()]
    assert not stale, (f"sample_data/ is out of date ({', '.join(stale)} differ from a fresh "
                       "build); run `ragdiag sample build`")


def test_counts(built, docs, records, cases):
    summary = built[1]
    assert len(docs) >= 220 and summary["documents"] == len(docs)
    assert [d["doc_id"] for d in docs] == sorted(d["doc_id"] for d in docs)
    assert set(Counter(d["doc_type"] for d in docs)) == {
        "contract", "policy", "handbook", "ticket", "hr_record", "product_sheet"}
    assert 0.07 <= sum(d["language"] == "de" for d in docs) / len(docs) <= 0.13
    evidence = [r for r in records["structured"] if r["level"] == "evidence"]
    assert len(evidence) >= 1500
    assert summary["structured_evidence"] == len(evidence)
    assert len(cases) >= 180
    for d in docs:
        pages = {b["page"] for s in d["sections"] for b in s["blocks"]}
        assert min(pages) == 1 and 2 <= max(pages) <= 8, d["doc_id"]


def test_records_have_all_fields_and_sorted_keys(records):
    for recs in records.values():
        assert [r["key"] for r in recs] == sorted(r["key"] for r in recs)
        assert len({r["key"] for r in recs}) == len(recs)
        for r in recs:
            assert tuple(sorted(r)) == tuple(sorted(RECORD_FIELDS)), r["key"]


def test_documents_and_sections_identical_in_both_variants(records):
    def upper(recs):
        return [r for r in recs if r["level"] != "evidence"]
    assert upper(records["structured"]) == upper(records["naive"])


def test_confidence_share_below_085(records):
    for recs in records.values():
        ev = [r["confidence_score"] for r in recs if r["level"] == "evidence"]
        share = sum(c < HIGH for c in ev) / len(ev)
        assert 0.25 <= share <= 0.35, share


def test_many_fact_answers_have_low_extraction_confidence(cases, by_key):
    grades = [by_key[s["key"]]["confidence_score"] for c in cases if c["intent"] == "fact"
              for s in c.get("expect_sources", ()) if s["grade"] == 3]
    assert sum(LOW <= g < HIGH for g in grades) / len(grades) >= 0.25


def test_goldset_loads_and_keys_exist(built, cases, by_key):
    gs = load_goldset(built[0] / "goldset.yaml")
    assert len(gs) == len(cases)
    assert len({c["id"] for c in cases}) == len(cases)
    assert not gs.duplicate_questions()
    missing = [s["key"] for c in cases for s in c.get("expect_sources", ()) if s["key"] not in by_key]
    assert not missing


def test_as_user_may_see_every_expected_source(cases, by_key):
    for c in cases:
        groups = set(SAMPLE_IDENTITIES[c["as_user"]])
        for s in c.get("expect_sources", ()):
            assert groups & set(by_key[s["key"]]["group_ids"]), (c["id"], s["key"])


def test_intent_counts(cases):
    answerable = Counter(c["intent"] for c in cases if "expect_sources" in c)
    for intent in ("fact", "definition", "verification", "overview", "table"):
        assert answerable[intent] >= 30, intent
    for intent in ("comparison", "exact_id"):
        assert answerable[intent] >= 15, intent
    refused = [c for c in cases if c.get("expect") == "refused"]
    denied = [c for c in refused if c["id"].startswith("restricted-")]
    assert len(refused) - len(denied) >= 10
    twins = {c["id"].removesuffix("-hr"): c for c in cases
             if c["id"].startswith("restricted-") and c["id"].endswith("-hr")}
    assert len(denied) + len(twins) >= 8
    for c in denied:  # a sales user asks about a salary; HR asks the same and gets sources
        twin = twins[c["id"]]
        assert c["as_user"] == "anna.sales" and twin["as_user"] == "hanna.hr"
        assert "salary" in c["question"] and "salary" in twin["question"]
        assert twin["expect_sources"]


def test_answers_sit_in_the_grade3_chunks(cases, by_key):
    for c in cases:
        if "expect_sources" not in c or c["intent"] == "overview":
            continue
        text = _norm(" ".join(by_key[s["key"]]["content"] for s in c["expect_sources"]
                              if s["grade"] == 3))
        for answer in c.get("expect_answer_contains", ()):
            assert _norm(answer) in text, (c["id"], answer)
        if c["intent"] == "table":
            assert all(by_key[s["key"]]["is_table"] for s in c["expect_sources"] if s["grade"] == 3)
        if c["intent"] == "definition":
            assert f"*{_norm(c['expect_answer_contains'][0])}*" in text, c["id"]
        if c["intent"] == "comparison":
            assert len({by_key[s["key"]]["doc_id"] for s in c["expect_sources"]}) == 2


def test_overview_cases_expect_several_documents(cases, by_key):
    overviews = [c for c in cases if c["intent"] == "overview" and "expect_sources" in c]
    for c in overviews:
        srcs = c["expect_sources"]
        assert 3 <= len(srcs) <= 6
        docs = [s for s in srcs if by_key[s["key"]]["level"] == "document"]
        assert len(docs) >= 2 and all(s["grade"] >= 2 for s in docs)


def test_hr_records_only_visible_to_hr(docs, records, cases, by_key):
    assert {tuple(d["group_ids"]) for d in docs if d["doc_type"] == "hr_record"} == {("hr",)}
    assert all(r["group_ids"] == ["hr"] for r in records["structured"]
               if r["doc_type"] == "hr_record")
    assert all("hr" not in d["group_ids"] for d in docs if d["doc_type"] != "hr_record")
    for c in cases:
        if any(by_key[s["key"]]["doc_type"] == "hr_record" for s in c.get("expect_sources", ())):
            assert "hr" in SAMPLE_IDENTITIES[c["as_user"]]


def test_entities_cover_every_document_entity(built, docs):
    entities = json.loads((built[0] / "entities.json").read_text(encoding="utf-8"))
    assert len(entities) >= 41 and list(entities) == sorted(entities)
    assert entities["ENT-MUSTER"][0] == "Muster AG"
    assert {k for d in docs for k in d["entity_keys"]} <= set(entities)


def test_refusal_subjects_do_not_exist(built):
    text = (built[0] / "corpus/documents.jsonl").read_text(encoding="utf-8")
    for name in UNKNOWN_PARTNERS:
        assert name.split()[0] not in text, name
