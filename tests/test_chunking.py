"""Tests of ragdiag.sample.chunking on tiny hand-made documents."""

from __future__ import annotations

import pytest

from ragdiag.errors import InputDataError
from ragdiag.sample.chunking import (
    RECORD_FIELDS,
    confidence_score,
    fixed_size,
    index_records,
    split_sentences,
    structure_aware,
)

# six sentences of five words each
S = ["Alpha pumps run every day.", "Bravo valves close very fast.", "Charlie sensors read the pressure.",
     "Delta drives move the belt.", "Echo cables carry the signal.", "Foxtrot fans cool the cabinet."]
TABLE = "| SKU | Price |\n|---|---|\n| MX-1 | EUR 10 |\n| MX-2 | EUR 20 |\n| MX-3 | EUR 30 |"


def doc(*sections, doc_id="D-1", scan_quality=0.95):
    return {"doc_id": doc_id, "title": "Test document", "doc_type": "handbook", "language": "en",
            "summary": "A tiny test document.", "entity_keys": ["ENT-X"], "group_ids": ["all-staff"],
            "valid_from": None, "valid_to": None, "last_updated": "2026-01-01T00:00:00Z",
            "scan_quality": scan_quality, "sections": list(sections)}


def section(title, *blocks):
    return {"title": title, "summary": f"About {title}.",
            "blocks": [{"kind": k, "text": t, "page": p} for k, t, p in blocks]}


def para(*sentences, page=1):
    return ("paragraph", " ".join(sentences), page)


def test_sentences_come_from_pysbd():
    assert split_sentences(" ".join(S[:3])) == tuple(S[:3])


def test_structure_aware_keeps_sentences_whole():
    chunks = structure_aware(doc(section("One", para(*S))), target_words=12)
    for c in chunks:
        assert c["content"].endswith(".")
        assert set(split_sentences(c["content"])) <= set(S)


def test_structure_aware_overlaps_by_one_sentence():
    # 5 words per sentence, target 12: two sentences per chunk, the second carried over
    chunks = structure_aware(doc(section("One", para(*S))), target_words=12)
    assert [c["content"] for c in chunks] == [
        f"{S[0]} {S[1]}", f"{S[1]} {S[2]}", f"{S[2]} {S[3]}", f"{S[3]} {S[4]}", f"{S[4]} {S[5]}"]
    no_overlap = structure_aware(doc(section("One", para(*S))), target_words=12,
                                 overlap_sentences=0)
    assert [c["content"] for c in no_overlap] == [
        f"{S[0]} {S[1]}", f"{S[2]} {S[3]}", f"{S[4]} {S[5]}"]


def test_structure_aware_keeps_table_whole_with_its_heading():
    d = doc(section("Prices", para(S[0]), ("heading", "Accessory prices", 1), ("table", TABLE, 2),
                    para(S[1], page=2)))
    chunks = structure_aware(d, target_words=3)
    tables = [c for c in chunks if c["is_table"]]
    assert len(tables) == 1
    assert tables[0]["content"] == "Accessory prices\n" + TABLE
    assert tables[0]["page"] == 2
    assert sum("| MX-" in c["content"] for c in chunks) == 1


def test_structure_aware_table_without_heading_uses_section_title():
    chunks = structure_aware(doc(section("Price list", ("table", TABLE, 1))))
    assert chunks[0]["content"] == "Price list\n" + TABLE


def test_structure_aware_never_splits_a_list():
    items = "\n".join(f"- item number {i} of the list" for i in range(6))
    chunks = structure_aware(doc(section("One", para(S[0]), ("list", items, 1))), target_words=5)
    assert sum(items in c["content"] for c in chunks) == 1


def test_structure_aware_never_crosses_sections():
    d = doc(section("One", para(S[0], S[1])), section("Two", para(S[2], S[3])))
    chunks = structure_aware(d, target_words=100)
    assert [c["content"] for c in chunks] == [f"{S[0]} {S[1]}", f"{S[2]} {S[3]}"]
    assert [c["parent_id"] for c in chunks] == ["D-1-s1", "D-1-s2"]
    assert [c["section_title"] for c in chunks] == ["One", "Two"]


def test_structure_aware_keys_parents_positions():
    d = doc(section("One", para(*S)), section("Two", para(S[0])))
    chunks = structure_aware(d, target_words=12)
    assert [c["key"] for c in chunks] == ["D-1-s1-c1", "D-1-s1-c2", "D-1-s1-c3", "D-1-s1-c4",
                                          "D-1-s1-c5", "D-1-s2-c1"]
    assert [c["position"] for c in chunks] == list(range(6))
    assert all(c["level"] == "evidence" and c["citable"] for c in chunks)


def test_fixed_size_cuts_mid_sentence_without_overlap():
    d = doc(section("One", para(*S)))
    chunks = fixed_size(d, size_words=7)
    words = " ".join(["Test document", "One", *S]).split()  # title, section title, body
    assert [len(c["content"].split()) for c in chunks] == [7, 7, 7, 7, 5]
    assert " ".join(c["content"] for c in chunks).split() == words  # no overlap, nothing lost
    assert not all(c["content"].endswith(".") for c in chunks)
    assert [c["key"] for c in chunks] == [f"D-1-n{m}" for m in range(1, 6)]
    assert {c["parent_id"] for c in chunks} == {"D-1"}
    assert [c["position"] for c in chunks] == list(range(5))


def test_fixed_size_splits_a_table():
    d = doc(section("Prices", para(S[0]), ("table", TABLE, 2)))
    chunks = fixed_size(d, size_words=12)
    with_rows = [c for c in chunks if "| MX-" in c["content"]]
    assert len(with_rows) >= 2
    assert all(c["is_table"] for c in with_rows)


def test_index_records_has_three_levels_and_all_fields():
    d = doc(section("One", para(*S)), section("Two", para(S[0], page=3)))
    for strategy in ("structure_aware", "fixed_size"):
        recs = index_records(d, strategy)
        assert recs[0]["level"] == "document" and recs[0]["key"] == "D-1"
        assert recs[0]["parent_id"] is None and recs[0]["content"].startswith("A tiny test")
        assert [r["key"] for r in recs[1:3]] == ["D-1-s1", "D-1-s2"]
        assert {r["parent_id"] for r in recs[1:3]} == {"D-1"} and recs[2]["page"] == 3
        for r in recs:
            assert tuple(r) == RECORD_FIELDS
            assert r["group_ids"] == ["all-staff"] and r["entity_keys"] == ["ENT-X"]
    assert [r["level"] for r in index_records(d, "structure_aware")].count("evidence") == 2  # 90 words


def test_confidence_score_follows_scan_quality_and_is_deterministic():
    digital, scanned = doc(scan_quality=0.95), doc(scan_quality=0.72)
    assert confidence_score(digital, 1) == confidence_score(digital, 1)
    for page in range(1, 9):
        assert 0.88 <= confidence_score(digital, page, "k") <= 0.99
        assert 0.5 <= confidence_score(scanned, page, "k") < 0.85


def test_errors_name_the_problem():
    with pytest.raises(InputDataError, match="no chunking strategy named 'magic'"):
        index_records(doc(section("One", para(S[0]))), "magic")
    with pytest.raises(InputDataError, match="kind must be one of"):
        structure_aware(doc(section("One", ("image", "x", 1))))
    with pytest.raises(InputDataError, match="lacks 'sections'"):
        fixed_size({"doc_id": "X", "title": "T"})
