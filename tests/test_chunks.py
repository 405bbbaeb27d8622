"""Chunk boundary analysis on hand-made records whose numbers can be checked by hand."""

from __future__ import annotations

import json

import pytest

from ragdiag.chunks import (
    ChunkFields,
    analyse_chunks,
    batch_numeric,
    classify_end,
    classify_start,
    doc_id_of_key,
    is_heading,
    straddling_answers,
)
from ragdiag.chunks import analyser as chunks_mod
from ragdiag.inputs.goldset import GoldCase, Goldset


def words(text: str) -> int:
    return len(text.split())


def rec(key: str, content: str, *, doc: str | None = "A", pos: int | None = 0, page: int | None = 1,
        level: str = "evidence", parent: str | None = "P", section: str | None = "S") -> dict:
    return {"key": key, "content": content, "doc_id": doc, "position": pos, "page": page,
            "level": level, "parent_id": parent, "section_title": section}


def analyse(records, **kw):
    kw.setdefault("tokenizer", words)
    kw.setdefault("min_tokens", 3)
    kw.setdefault("max_tokens", 40)
    return analyse_chunks(records, **kw)


# ---- the line classifiers ------------------------------------------------------------------

@pytest.mark.parametrize("line, expected", [
    ("The contract ends on 31 March.", "sentence"),
    ("and the supplier pays the freight.", "mid"),
    ("And the supplier pays.", "mid"),
    (", which is binding.", "mid"),
    ("## Payment terms", "heading"),
    ("4. Prices and Payment Terms", "heading"),
    ("§ 5 Laufzeit und Kündigung", "heading"),
    ("| Metric | Target |", "table"),
    ("- Replaced the fitting", "list"),
    ("1) Check the seals", "list"),
    ("a) the buyer", "list"),
    ("90 days after delivery the invoice is due.", "sentence"),
])
def test_classify_start(line, expected):
    assert classify_start(line) == expected


@pytest.mark.parametrize("line, expected", [
    ("The contract ends on 31 March.", "sentence"),
    ("Is that right?", "sentence"),
    ('He said "yes"', "sentence"),
    ("(see annex 2)", "sentence"),
    ("The notice period is", "mid"),
    ("The notice period is 90", "mid"),
    ("| On-time delivery | 95% |", "table"),
    ("- Measured the air consumption again", "list"),
    ("6. Warranty and Liability", "heading"),
    ("## Payment terms", "heading"),
    ("Analysis and Resolution", "heading"),
])
def test_classify_end(line, expected):
    assert classify_end(line) == expected


def test_is_heading_rejects_prose():
    assert not is_heading("The parties agree on the following terms")
    assert not is_heading("Prices are fixed.")
    assert is_heading("TERMINATION")
    assert is_heading("**Service levels**")


# ---- boundaries --------------------------------------------------------------------------------

def test_four_chunks_one_ends_mid_sentence():
    records = [
        rec("A-1", "The first sentence is here. Another one follows.", pos=0),
        rec("A-2", "Second chunk ends properly!", pos=1),
        rec("A-3", "Third chunk ends without punctuation and goes on", pos=2),
        rec("A-4", "But the fourth is fine.", pos=3),
    ]
    r = analyse(records)
    assert r.chunks == 4 and r.documents == 1 and r.pairs == 3
    assert r.mid_sentence_end == 1
    assert r.mid_sentence_end_share == pytest.approx(0.25)
    # the chunk after a cut starts mid-sentence even with a capital letter (no overlap)
    assert r.mid_sentence_start == 1
    # examples in context: the end of the cut chunk next to the start of the next one
    assert r.examples["mid_sentence_end"] == (
        ("A-3", "Third chunk ends without punctuation and goes on ⟂ But the fourth is fine."),)
    assert r.examples["mid_sentence_start"][0][0] == "A-4"
    assert r.end_classes == {"sentence": 3, "mid": 1}


def test_position_orders_chunks_not_stream_order():
    records = [
        rec("A-2", "continues the sentence here.", pos=1),
        rec("A-1", "A sentence that is cut", pos=0),
    ]
    r = analyse(records)
    assert r.mid_sentence_end == 1 and r.mid_sentence_start == 1
    assert r.examples["mid_sentence_end"][0][0] == "A-1"


def test_split_table_and_header_without_body():
    records = [
        rec("B-1", "Prices\n| Item | Price |\n|---|---|\n| A | 1 |", doc="B", pos=0),
        rec("B-2", "| B | 2 |\n| C | 3 |\nThe table ends here.", doc="B", pos=1),
        rec("B-3", "Some text before a table.\nRates\n| Item | Rate |\n|---|---|", doc="B", pos=2),
        rec("C-1", "Fees\n| Item | Fee |\n|---|---|\n| X | 9 |", doc="C", pos=0),  # a whole table
    ]
    r = analyse(records)
    assert r.table_chunks == 4
    # B-1 and B-2 share a cut table; B-3 has a header without body; C-1 is whole
    assert r.split_table == 3
    assert r.split_table_share == pytest.approx(0.75)
    keys = {k for k, _ in r.examples["split_table"]}
    assert keys == {"B-1", "B-2", "B-3"}
    assert any(text.startswith("header without body") for _, text in r.examples["split_table"])


def test_table_cut_inside_a_row():
    records = [
        rec("B-1", "| Metric | Target |\n|---|---|\n| On-time | 95", doc="B", pos=0),
        rec("B-2", "% |\n| Report | monthly |", doc="B", pos=1),
    ]
    assert analyse(records).split_table == 2


def test_headings_separated_and_lists_cut():
    records = [
        rec("D-1", "Intro text is complete.\n## Payment terms", doc="D", pos=0),
        rec("D-2", "Invoices are due in 30 days.\nSteps:\n- first item\n- second item continues",
            doc="D", pos=1),
        rec("D-3", "with more words after the cut.", doc="D", pos=2),
        rec("E-1", "## Lonely heading", doc="E", pos=0),
    ]
    r = analyse(records)
    assert r.heading_separated == 2  # D-1 ends with a heading; E-1 is only a heading
    assert r.list_cut == 2  # D-2 ends in a list item that D-3 continues
    # heading and list ends are not counted as mid-sentence: these records never hard-wrap a line
    # (`wraps_lines`), so a line ends its list item; tests/test_chunk_structure.py has the other way
    assert r.mid_sentence_end == 0
    assert r.mid_sentence_start == 1


def test_numbered_list_continuation_is_a_cut():
    records = [
        rec("F-1", "Do this:\n1. Open the valve.\n2. Check the pressure.", doc="F", pos=0),
        rec("F-2", "3. Close the valve.\n4. Sign the form.", doc="F", pos=1),
    ]
    assert analyse(records).list_cut == 2


def test_overlap_between_consecutive_chunks():
    records = [
        rec("G-1", "Alpha beta gamma delta.\nThe notice period is 90 days.", doc="G", pos=0),
        rec("G-2", "The notice period is 90 days. Further text follows here.", doc="G", pos=1),
        rec("G-3", "Completely different start of text.", doc="G", pos=2),
        rec("H-1", "Only a single chunk.", doc="H", pos=0),
    ]
    r = analyse(records)
    assert r.pairs == 2
    assert r.pairs_with_overlap == 1
    assert r.overlap_share == pytest.approx(0.5)
    assert r.overlap_words_median == 6 and r.overlap_words_max == 6
    assert r.examples["overlap"][0][0] == "G-2"


def test_two_word_coincidence_is_not_overlap():
    records = [rec("G-1", "It ends with the end.", doc="G", pos=0),
               rec("G-2", "the end. is not an overlap here.", doc="G", pos=1)]
    assert analyse(records).pairs_with_overlap == 0


# ---- metadata, sizes, duplicates -------------------------------------------------------------------

def test_missing_page_and_empty_values():
    """Citable: a document id and a page (Azure's samples store no position)."""
    records = [
        rec("A-1", "One sentence.", pos=0),
        rec("A-2", "Two sentence.", pos=1, page=None),
        rec("A-3", "Three sentence.", pos=2, page=""),
        rec("A-4", "Four sentence.", pos=None, parent=None, section="  "),
    ]
    r = analyse(records)
    assert r.missing_citation == 2
    assert r.missing_citation_share == pytest.approx(0.5)
    assert r.metadata_present["page"] == pytest.approx(0.5)
    assert r.metadata_present["position"] == pytest.approx(0.75)
    assert r.metadata_present["document id"] == 1.0
    assert r.metadata_present["parent id"] == pytest.approx(0.75)
    assert r.metadata_present["section title"] == pytest.approx(0.75)
    assert {k for k, _ in r.examples["missing_citation"]} == {"A-2", "A-3"}
    assert dict(r.examples["missing_citation"])["A-2"] == "missing page"


def test_citation_needs_a_page_only_where_the_documents_have_pages():
    """A page cites a chunk of a paged document (a PDF by its name, or a document whose other chunks
    carry pages); a Markdown or web chunk is cited by its document and section, or a URL anchor."""
    fields = ChunkFields(page=None)
    md = analyse([rec("A-1", "One sentence.", doc="guide.md"), rec("A-2", "Two.", doc="guide.md", pos=1)],
                 fields=fields)
    assert md.missing_citation == 0 and md.metadata_present["page"] == 0.0
    no_section = analyse([rec("A-1", "One sentence.", doc="guide.md", section=None),
                          rec("A-2", "Two.", doc="guide.md", pos=1, section=None),
                          rec("B-1", "One sentence.", doc="https://x.org/guide#install", section=None),
                          rec("B-2", "Two.", doc="https://x.org/guide#install", pos=1, section=None)], fields=fields)
    assert no_section.missing_citation == 2 and no_section.citation_lacking == {"section or anchor": 2}
    assert {k for k, _ in no_section.examples["missing_citation"]} == {"A-1", "A-2"}
    # a document held in one chunk is cited by its id: there is no place inside it to name
    whole = analyse([rec("W-1", "A whole document.", doc="guide.md", section=None),
                     rec("V-1", "Another whole one.", doc="notes.md", section=None)], fields=fields)
    assert whole.missing_citation == 0
    pdf = analyse([rec("A-1", "One sentence.", doc="guide.pdf"), rec("A-2", "Two.", doc="guide.pdf", pos=1)],
                  fields=fields)
    assert pdf.missing_citation == 2 and pdf.citation_lacking == {"page": 2}
    # an opaque document name: pages on its other chunks say the document has pages
    paged = analyse([rec("A-1", "One sentence.", doc="d7"), rec("A-2", "Two.", doc="d7", pos=1, page=None)])
    assert paged.missing_citation == 1 and dict(paged.examples["missing_citation"])["A-2"] == "missing page"


def test_token_sizes_tiny_and_oversized():
    records = [rec(f"S-{i}", " ".join(["word"] * n) + ".", doc=f"S{i}")
               for i, n in enumerate([1, 2, 10, 20, 30, 50])]
    r = analyse(records)  # tokens = words; tiny < 3, oversized > 40
    assert r.tokens["min"] == 1 and r.tokens["max"] == 50 and r.tokens["p50"] == 15
    assert r.tiny == 2 and r.oversized == 1
    assert r.tiny_share == pytest.approx(2 / 6)
    assert r.examples["tiny"][0] == ("S-0", "1 tokens: word.")
    assert r.examples["oversized"][0][0] == "S-5"
    assert sum(c for _, _, c in r.token_histogram) == 6
    assert r.tokens_exact == 6


def test_default_tokenizer_is_tiktoken_cl100k():
    r = analyse_chunks([rec("A-1", "hello world")])
    assert r.tokenizer.startswith("tiktoken cl100k")
    assert r.tokens["min"] == 2


def test_exact_and_near_duplicates():
    base = " ".join(f"w{i}" for i in range(200))
    changed = base.replace("w100 ", "x100 ")
    records = [
        rec("A-1", "The same text.\nTwice here.", doc="A"),
        rec("B-1", "the   SAME text. twice here.", doc="B"),  # case and whitespace differ only
        rec("C-1", base, doc="C"),
        rec("D-1", changed, doc="D"),  # one word of 200 changed: Jaccard of 3-shingles ~0.97
        rec("E-1", " ".join(f"v{i}" for i in range(200)), doc="E"),
    ]
    r = analyse(records, max_tokens=1000)
    assert r.exact_duplicates == 1 and r.duplicate_groups == 1
    assert r.examples["exact_duplicate"] == (("B-1", "same text as A-1 (2 copies)"),)
    assert r.near_duplicates == 2
    assert {k for k, _ in r.examples["near_duplicate"]} <= {"C-1", "D-1"}


def test_batch_numeric_is_deterministic_and_matches_words():
    texts = ["Hello  World\nagain", "hello world again", "", "a b"]
    sig, hashes, feats = batch_numeric(texts)
    assert hashes[0] == hashes[1] != 0 and hashes[2] == 0
    assert (sig[0] == sig[1]).all()
    assert (sig[3] == 0xFFFFFFFF).all()  # fewer than 3 words: no shingles
    assert feats[:, 1].tolist() == [3, 3, 0, 2]
    assert batch_numeric(["x\x00y z w", "v"])[2][:, 1].tolist() == [4, 1]  # NUL is a space


# ---- levels, sampling, streaming -----------------------------------------------------------------------

def test_only_chunk_level_records():
    records = [rec("A", "Document summary.", level="document"),
               rec("A-s1", "Section text.", level="section"),
               rec("A-s1-c1", "Chunk text.")]
    r = analyse(records)
    assert r.chunks == 1 and r.records_seen == 3
    assert r.levels_seen == {"document": 1, "section": 1, "evidence": 1}
    r_all = analyse(records, fields=ChunkFields(level=None))
    assert r_all.chunks == 3


def test_max_chunks_samples_whole_documents():
    records = [rec(f"D{d}-n{i}", f"Doc {d} chunk {i} ends well.", doc=f"D{d}", pos=i)
               for d in range(200) for i in range(5)]
    r = analyse(records, max_chunks=300, total_hint=len(records), sample_seed=1)
    assert r.sampled and "whole documents" in r.sample_note
    assert 200 <= r.chunks <= 300 and r.documents >= 40
    assert r.pairs == r.chunks - r.documents  # whole documents: every chunk but the first pairs
    first = analyse(records, max_chunks=300)
    assert first.sampled and first.chunks == 300 and "first 300" in first.sample_note


def test_interleaved_documents_pair_correctly_and_memory_is_bounded(monkeypatch):
    records = [rec(f"D{d}-n{i}", f"Doc {d} part {i} is cut", doc=f"D{d}", pos=i)
               for i in range(3) for d in range(10)]  # all documents interleaved
    r = analyse(records)
    assert r.pairs == 20 and r.documents_reopened == 0
    monkeypatch.setattr(chunks_mod, "REOPEN_WINDOW", 2)
    r2 = analyse(records)
    assert r2.documents_reopened > 0 and r2.pairs < 20


def test_auto_mode_estimates_tokens_beyond_the_exact_budget(monkeypatch):
    monkeypatch.setattr(chunks_mod, "EXACT_ALL", 50)
    records = [rec(f"D{i}", " ".join(["token"] * (10 + i % 30)) + ".", doc=f"D{i}") for i in range(400)]
    r = analyse(records, batch_size=64)
    assert r.tokens_exact < r.chunks
    assert r.token_estimate_error is not None and r.token_estimate_error < 0.1
    assert "estimated" in r.tokenizer
    exact = analyse(records, exact_tokens=True)
    assert exact.tokens_exact == 400
    assert abs(r.tokens["p50"] - exact.tokens["p50"]) <= 2


def test_report_is_json_safe():
    r = analyse([rec("A-1", "A chunk.\n| a | b |\n|---|---|")])
    d = json.loads(json.dumps(r.to_dict()))
    assert d["chunks"] == 1 and d["fields"]["content"] == "content"


def test_no_threads_gives_the_same_report():
    records = [rec(f"A-{i}", f"Sentence number {i} is cut", pos=i) for i in range(30)]
    assert analyse(records, threads=False).to_dict() == analyse(records).to_dict()


# ---- fields ------------------------------------------------------------------------------------------

def test_fields_from_sample_schema():
    from ragdiag.sample.schema import sample_schema

    f = ChunkFields.from_schema(sample_schema())
    assert (f.key, f.content, f.doc_id, f.parent_id, f.page, f.position, f.section_title, f.level) == \
        ("key", "content", "doc_id", "parent_id", "page", "position", "section_title", "level")
    assert f.level_filter() == "level eq 'evidence'"


def test_fields_from_an_integrated_vectorization_schema():
    from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema

    schema = IndexSchema(name="iv", fields=(
        Field("chunk_id", STRING, key=True, searchable=True),
        Field("parent_id", STRING, filterable=True),
        Field("chunk", STRING, searchable=True),
        Field("title", STRING, searchable=True),
        Field("text_vector", VECTOR, searchable=True, dimensions=3),
        Field("page_number", "Edm.Int32", filterable=True, retrievable=False),
    ))
    f = ChunkFields.from_schema(schema)
    assert (f.key, f.content, f.doc_id, f.parent_id, f.page, f.position, f.level) == \
        ("chunk_id", "chunk", None, "parent_id", None, None, None)
    records = [{"chunk_id": "x1", "parent_id": "doc1", "chunk": "A whole sentence."},
               {"chunk_id": "x2", "parent_id": "doc1", "chunk": "Another whole sentence."}]
    r = analyse(records, fields=f)
    assert r.metadata_present["document id"] == 1.0  # the parent id stands in
    assert r.missing_citation == 2  # two chunks of one document: no page, no section names either


# ---- answers across boundaries ----------------------------------------------------------------------

def test_doc_id_of_key():
    assert doc_id_of_key("CON-0007-s3-c1") == "CON-0007"
    assert doc_id_of_key("CON-0007-n4") == "CON-0007"
    assert doc_id_of_key("CON-0007") == "CON-0007"


def test_straddling_answers():
    records = [
        rec("CON-1", "Summary mentions 90 days.", doc="CON-1", level="document"),
        rec("CON-1-n1", "The notice period is 90", doc="CON-1", pos=0),
        rec("CON-1-n2", "days to the end of a quarter. Payment within 30 days.", doc="CON-1", pos=1),
        rec("CON-2-n1", "Liability is limited to EUR 1 million.", doc="CON-2", pos=0),
        rec("OTHER-7", "A record whose doc id is not its key prefix.", doc="CON-3", pos=0),
        rec("OTHER-8", "The warranty lasts 24 months.", doc="CON-3", pos=1),
    ]
    gs = Goldset(cases=(
        GoldCase(id="q1", question="?", expect_sources=(("CON-1-s2-c1", 3),),
                 expect_answer_contains=("90 days", "30 days")),
        GoldCase(id="q2", question="?", expect_sources=(("CON-2-s4-c1", 1),),
                 expect_answer_contains=("EUR 2 million",)),
        GoldCase(id="q3", question="?", expect_sources=(("CON-9-s1-c1", 1),),
                 expect_answer_contains=("x",)),
        GoldCase(id="q4", question="?", expect_sources=(("OTHER-7", 1),),
                 expect_answer_contains=("24 MONTHS",)),
        GoldCase(id="refuse", question="?", expect_refused=True),
    ))
    rows = {(r.case_id, r.answer): r for r in straddling_answers(records, gs)}
    assert rows[("q1", "90 days")].result == "straddles a boundary"
    assert rows[("q1", "90 days")].keys == ("CON-1-n1", "CON-1-n2")
    assert rows[("q1", "30 days")].result == "in one chunk"
    assert rows[("q2", "EUR 2 million")].result == "not found"
    assert rows[("q3", "x")].result == "document not in index"
    assert rows[("q4", "24 MONTHS")].result == "in one chunk"  # found via the record's doc id
    assert len(rows) == 5


def test_text_without_sentence_punctuation_is_not_judged_and_short_punctuated_chunks_are():
    """Normalised text (IR collections such as Vaswani strip punctuation and case) has no
    sentence boundary to judge: the mid-sentence shares are None and `sentences_judged` False.
    Punctuation is decided over the text taken together, so short chunks of punctuated prose
    (a novel cut every 32 characters, most chunks without a full stop) are judged."""
    norm = ("compact memories have flexible capacities a digital data storage system with capacity "
            "up to bits and random and or sequential access is described")
    r = analyse([rec("A-1", norm, pos=0), rec("A-2", norm.replace("compact", "other"), pos=1)])
    assert (r.unpunctuated, r.unpunctuated_share) == (2, 1.0) and not r.sentences_judged
    assert r.mid_sentence_end == 0 and r.mid_sentence_end_share is None and r.mid_sentence_start_share is None
    novel = "It was a bright cold day in April, and the clocks were striking thirteen. " * 4
    cuts = [novel[i:i + 32] for i in range(0, len(novel), 32)]
    short = analyse([rec(f"N-{i}", c, pos=i) for i, c in enumerate(cuts)])
    assert short.sentences_judged and short.unpunctuated > len(cuts) // 2
    assert short.mid_sentence_end_share > 0.5  # most 32-character cuts fall inside a sentence


def test_in_normalised_text_short_unpunctuated_records_are_not_cut_sentences_either():
    """Normalised text: its short records (titles such as 'sporadic e propagation') are not
    judged either."""
    norm = ("compact memories have flexible capacities a digital data storage system with capacity "
            "up to bits and random and or sequential access is described")
    r = analyse([rec("A-1", norm, pos=0), rec("A-2", "sporadic e propagation", pos=1),
                 rec("A-3", norm.replace("compact", "other"), pos=2)])
    assert r.unpunctuated == 3 and r.mid_sentence_end == 0 and r.mid_sentence_end_share is None
    assert "mid_sentence_end" not in r.examples or r.examples["mid_sentence_end"] == ()


# ---- real chunker idioms (German sentence-case headings, code, a moved full stop) --------------

def test_a_sentence_case_heading_at_the_end_is_a_heading_and_a_cut_line_is_not():
    """German (and modern English) headings are sentence case, so title case cannot find them: a
    short line standing alone at a chunk's end is a heading (heading separated from its body),
    unless it stops on a function word or a number, or the next chunk continues it."""
    r = analyse([rec("A-1", "Der Pool ist zu klein.\n\nVerhungern Sie Ihren Reranker nicht: die 50er-Regel", pos=0),
                 rec("A-2", "Der Reranker bewertet nur die ersten 50 Kandidaten.", pos=1)])
    assert r.mid_sentence_end == 0 and r.end_classes.get("heading") == 1
    cut = analyse([rec("B-1", "Each party appoints a manager.\nFor Muster this is", pos=0),
                   rec("B-2", "Andreas Pfister, for the buyer Ms Lee.", pos=1)])
    assert cut.mid_sentence_end == 1  # stops on "is": cut, although the next chunk starts upper-case
    continued = analyse([rec("C-1", "The pool is small.\n\nThe reranker then", pos=0),
                         rec("C-2", "receives too few candidates.", pos=1)])
    assert continued.mid_sentence_end == 1  # the next chunk continues it in lower case


def test_a_chunk_ending_inside_code_is_not_a_cut_sentence():
    code = "Example:\n\ndef fit(chunks, budget):\n    out = []\n    for c in chunks:\n        out.append(c)\n    return {"
    r = analyse([rec("A-1", code, pos=0), rec("A-2", "'chunks': out}\n\nThe function returns them.", pos=1)])
    assert r.end_classes.get("code") == 1 and r.mid_sentence_end == 0


def test_a_full_stop_moved_to_the_next_chunk_is_named_not_counted_as_a_cut():
    """LangChain's RecursiveCharacterTextSplitter with ". " among its separators and the default
    keep_separator puts each full stop at the start of the next chunk."""
    r = analyse([rec("A-1", "Der erste Satz ist hier zu Ende", pos=0), rec("A-2", ". Der zweite folgt", pos=1),
                 rec("A-3", "und endet sauber.", pos=2)])
    assert r.punctuation_moved == 1
    assert r.mid_sentence_end == 1 and dict(r.examples["mid_sentence_end"]).keys() == {"A-2"}


# ---- mid-word cuts (the analyser of `ragdiag chunks`, inside the check's stream) -----------------
TEXT = ("The contract includes a warranty of two years for every device that was sold to a "
        "customer in the European Union. Repairs are free of charge within that period. The "
        "customer returns a faulty device to the nearest service centre with the receipt. ") * 4


def _fixed(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _between_words(text: str, size: int) -> list[str]:
    out, cur = [], ""
    for w in text.split(" "):
        if cur and len(cur) + 1 + len(w) > size:
            out.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return [*out, cur]


def test_a_fixed_size_cutter_cuts_words_and_a_word_cutter_does_not():
    cut = _fixed(TEXT, 97)  # keeps the whitespace where it falls: letters meeting are one word split
    r = analyse([rec(f"A-{i}", t, pos=i) for i, t in enumerate(cut)])
    # count by hand: cut points where a letter meets a letter in the source
    expected = sum(1 for a, b in zip(cut, cut[1:], strict=False) if a[-1:].isalnum() and b[:1].isalnum())
    assert expected > 5 and r.mid_word == expected
    assert r.examples["mid_word"] and " ⟂ " in r.examples["mid_word"][0][1]
    clean = analyse([rec(f"A-{i}", t, pos=i) for i, t in enumerate(_between_words(TEXT, 97))])
    assert clean.mid_word == 0 and clean.mid_word_share == 0


def test_an_overlapping_splitter_that_cuts_a_word_is_seen_through_the_overlap():
    # each chunk repeats the previous chunk's last 20 characters, cut mid-word, stripped
    chunks, i = [], 0
    while i < len(TEXT):
        chunks.append(TEXT[max(0, i - 20):i + 100].strip())
        i += 100
    r = analyse([rec(f"A-{i}", t, pos=i) for i, t in enumerate(chunks)])
    cut_words = sum(1 for j in range(100, len(TEXT), 100) if TEXT[j - 1].isalnum() and TEXT[j].isalnum())
    assert cut_words > 3 and r.mid_word == cut_words


def test_an_html_table_cut_across_chunks_is_a_split_table_and_a_whole_one_is_not():
    head = "<p>Prices per licence:</p>\n<table><tr><th>Plan</th><th>Price</th></tr>\n<tr><td>Basic</td><td>10 EUR</td></tr>"
    tail = "<tr><td>Pro</td><td>25 EUR</td></tr></table>\n<p>Prices include VAT.</p>"
    cut = analyse([rec("A-0", head, pos=0), rec("A-1", tail, pos=1)])
    assert cut.split_table == 2 and cut.examples["split_table"][0][1].startswith("HTML table cut")
    whole = analyse([rec("A-0", head + "\n" + tail, pos=0), rec("A-1", "<p>Support is included.</p>", pos=1)])
    assert whole.split_table == 0
