"""Chunk cut judgement (`ragdiag chunks`): hand-made chunk sets with known cut points, English
and German, judged with and without the source; the file reader's role inference; the CLI's
JSON keys."""

from __future__ import annotations

import csv
import json

import pytest

from ragdiag.chunks.cuts import Vocabulary, judge_document, overlap
from ragdiag.chunks.export import analyse_export, check_chunk_file
from ragdiag.chunks.files import infer_roles, read_chunk_file
from ragdiag.chunks.histogram import uniform_histogram
from ragdiag.chunks.sentences import ends_sentence, is_boundary
from ragdiag.chunks.source import locate
from ragdiag.cli import main

FLAG_KEYS = {"key", "end_mid_sentence", "start_mid_sentence", "end_mid_word", "start_mid_word",
             "heading_only", "split_table", "end_split_code", "start_split_code", "tiny", "oversized",
             "overlap_words"}


def _cut(text: str, *cuts: int) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b].strip() for a, b in zip(bounds, bounds[1:], strict=False)]


def _at(text: str, marker: str, after: bool = True) -> int:
    i = text.index(marker)
    return i + len(marker) if after else i


# ---- the sentence model: each case from the issue, both ways ---------------------------------
@pytest.mark.parametrize("before, after, lang, boundary", [
    ("We met Mr.", " Smith at noon.", "en", False),
    ("He lives on St.", " James Street.", "en", False),
    ("“Leave me,”", " he said.", "en", False),
    ("The offer stands;", " the price does not.", "en", False),
    ("The offer stands.", " The price does not.", "en", True),
    ("He said so.”", " Then he left.", "en", True),
    ("Bitte z. B.", " die Akte prüfen.", "de", False),
    ("Siehe Nr.", " 5 der Liste.", "de", False),
    ("Nach Abs.", " 3 gilt das.", "de", False),
    ("Es kostet ca.", " 20 Euro.", "de", False),
    ("Das heisst d. h.", " wir warten.", "de", False),
    ("Wir treffen uns am 1.", " Januar in Bonn.", "de", False),
    ("Die Frist läuft bis zum 15.", " März.", "de", False),
    ("Er sagte: „Wir gehen.“", " Dann ging er.", "de", True),
    ("Die Frist läuft ab.", " Danach gilt Satz 2.", "de", True),
    ("- erster Punkt", "\n- zweiter Punkt", "de", True),
    ("Die Pflichten sind:", "\n1. Meldung", "de", True),
    ("## Zahlung", "\n\nRechnungen sind zahlbar.", "de", True),
    ("Der Vertrag regelt die", " Lieferung.", "de", False),
])
def test_sentence_boundary_rules(before: str, after: str, lang: str, boundary: bool) -> None:
    assert is_boundary(before, after, lang) is boundary


def test_sentence_end_without_the_next_chunk() -> None:
    assert ends_sentence("Das gilt ab sofort.", "de")
    assert not ends_sentence("Siehe z. B.", "de")
    assert not ends_sentence("Es gilt bis zum 15.", "de")
    assert not ends_sentence("He met Mr.", "en")
    assert ends_sentence("“I know,” said I.", "en")


# ---- overlap: whitespace runs, short and character-offset overlaps -----------------------------
def test_overlap_collapses_whitespace_and_finds_short_and_offset_overlaps() -> None:
    a = "The contract \n includes a clause on liability"
    b = "contract includes a clause on liability and on payment."
    start, end, words = overlap(a, b)
    assert words == 6 and a[start:].startswith("contract") and b[end:].startswith(" and")
    # two words, and an overlap that starts inside a word (character offset)
    assert overlap("We agreed on the price list", "price list is final.")[2] == 2
    assert overlap("payments are due quarterly in", "arterly in advance.")[2] == 2
    assert overlap("Nothing in common here.", "Something else entirely.")[2] == 0


# ---- whole documents, judged against the source and without it ---------------------------------
EN_SOURCE = ("# Employee Guide\n\n## Holidays\n\nEmployees receive 30 days of paid leave. Mr. Smith in HR "
             "approves requests, e.g. through the form. Requests are filed early.\n\n## Expenses\n\n"
             "Travel costs are reimbursed within 30 days. Receipts are required for every item.\n")
DE_SOURCE = ("# Reiserichtlinie\n\n## Fristen\n\nAnträge sind z. B. bis zum 15. März einzureichen. Die "
             "Erstattung erfolgt ca. 30 Tage nach Eingang der Belege. Nr. 4 regelt die Ausnahmen.\n\n"
             "## Zuständigkeit\n\nDie Personalabteilung prüft jeden Antrag. Sie entscheidet binnen einer "
             "Woche.\n")


def _en_chunks() -> tuple[list[str], dict[int, dict[str, bool]]]:
    s = EN_SOURCE
    cuts = [_at(s, "Mr. Smith"),            # 0 ends mid-sentence (after "Smith")
            _at(s, "requests, e.g."),       # 1 ends mid-sentence after an abbreviation
            _at(s, "Requests are filed early.\n\n"),  # 2 clean, next chunk is the heading
            _at(s, "## Expenses"),          # 3 heading only, separated from its body
            _at(s, "reimb")]                # 4 ends mid-word
    want = {0: {"end_mid_sentence": True, "end_mid_word": False},
            1: {"end_mid_sentence": True, "start_mid_sentence": True},
            2: {"end_mid_sentence": False, "start_mid_sentence": True},
            3: {"end_mid_sentence": False, "heading_only": True},
            4: {"end_mid_sentence": True, "end_mid_word": True, "start_mid_sentence": False},
            5: {"start_mid_word": True, "start_mid_sentence": True}}
    return _cut(s, *cuts), want


def _de_chunks() -> tuple[list[str], dict[int, dict[str, bool]]]:
    s = DE_SOURCE
    cuts = [_at(s, "sind z. B."),             # 0 cut after "z. B.": mid-sentence
            _at(s, "bis zum 15."),            # 1 cut after the ordinal: mid-sentence
            _at(s, "einzureichen."),          # 2 clean
            _at(s, "Eingang der"),            # 3 mid-sentence before a capitalised noun
            _at(s, "Ausnahmen.\n\n")]          # 4 clean
    want = {0: {"end_mid_sentence": True}, 1: {"end_mid_sentence": True, "start_mid_sentence": True},
            2: {"end_mid_sentence": False, "start_mid_sentence": True},
            3: {"end_mid_sentence": True, "start_mid_sentence": False},
            4: {"end_mid_sentence": False, "start_mid_sentence": True},
            5: {"start_mid_sentence": False}}
    return _cut(s, *cuts), want


@pytest.mark.parametrize("make, lang", [(_en_chunks, "en"), (_de_chunks, "de")])
@pytest.mark.parametrize("with_source", [True, False])
def test_known_cut_points_are_found(make, lang: str, with_source: bool) -> None:
    chunks, want = make()
    source = (EN_SOURCE if lang == "en" else DE_SOURCE) if with_source else None
    vocab = Vocabulary()
    vocab.add(["Travel costs are often reimbursed quickly, reimbursed in full, and reimbursed twice."])
    flags = judge_document(chunks, [str(i) for i in range(len(chunks))], lang=lang, source=source,
                           vocab=vocab)
    assert all(f.located for f in flags) is with_source
    for i, expected in want.items():
        for name, value in expected.items():
            assert getattr(flags[i], name) is value, (i, name, chunks[i][-30:], with_source)


def test_a_sound_chunking_passes_both_ways() -> None:
    paras = [p for p in EN_SOURCE.split("\n\n") if p.strip()]
    chunks = ["\n\n".join(paras[i:i + 3]) for i in range(0, len(paras), 3)]
    records = [{"id": f"c{i}", "content": c, "sourcefile": "guide.md"} for i, c in enumerate(chunks)]
    roles = infer_roles(records[0])
    for sources in ({"guide.md": EN_SOURCE}, None):
        v = analyse_export(records, roles, lang="en", sources=sources)
        for m in ("end_mid_sentence", "start_mid_sentence", "end_mid_word", "start_mid_word", "split_table"):
            assert v.counts[m] == 0, (m, sources is not None)


def test_split_tables_markdown_and_html() -> None:
    md = ["Prices:\n\n| Item | Price |\n|---|---|\n| A | 1 |", "| B | 2 |\n| C | 3 |\n\nEnd of list."]
    html = ["Prices: <table><tr><td>A</td></tr>", "<tr><td>B</td></tr></table> Done."]
    whole = ["Prices:\n\n| Item | Price |\n|---|---|\n| A | 1 |\n| B | 2 |", "The end of the text."]
    for chunks, split in ((md, True), (html, True), (whole, False)):
        flags = judge_document(chunks, ["a", "b"])
        assert [f.split_table for f in flags] == [split, split], chunks


def test_locate_is_robust_to_whitespace_and_overlap() -> None:
    src = "Alpha beta gamma.\n\nDelta   epsilon zeta. Eta theta."
    spans = locate(src, ["Alpha beta gamma. Delta", "Delta epsilon\nzeta.", "zeta. Eta theta."])
    assert [src[a:b] for a, b in spans] == ["Alpha beta gamma.\n\nDelta", "Delta   epsilon zeta.",
                                           "zeta. Eta theta."]
    assert locate(src, ["not in the source at all"]) == [None]


def test_eight_percent_cut_ends_warns_and_clean_passes() -> None:
    sentences = [f"Sentence number {i} says something complete about item {i}, long enough to carry a meaning "
                 "of its own in an embedding." for i in range(100)]
    clean = [{"content": s, "document": "d"} for s in sentences]
    roles = infer_roles(["content", "document"])
    assert analyse_export(clean, roles, lang="en").status == "pass"
    cut = [dict(r) for r in clean]
    for i in range(0, 100, 12):  # about 8 % of the chunks end mid-sentence
        cut[i]["content"] = cut[i]["content"].rsplit(" ", 5)[0]
    v = analyse_export(cut, roles, lang="en")
    assert 0.07 <= v.counts["end_mid_sentence_share"] <= 0.1
    assert v.status == "warn"


def test_an_export_with_levels_is_judged_per_level_and_the_worst_level_heads() -> None:
    # an index with whole documents next to their cut chunks: the documents must not dilute
    # the chunks' cut ends (4 of 8 chunks cut, 50 %, but only 4 of 16 records overall)
    sentences = [f"Sentence number {i} says something complete about item {i}, long enough to carry a meaning "
                 "of its own in an embedding." for i in range(8)]
    docs = [{"content": s, "doc_id": f"d{i}", "level": "document"} for i, s in enumerate(sentences)]
    chunks = [{"content": s if i % 2 else s.rsplit(" ", 5)[0], "doc_id": "d", "level": "chunk"}
              for i, s in enumerate(sentences)]
    roles = infer_roles(["content", "doc_id", "level"])
    assert roles.level == "level"
    v = analyse_export(docs + chunks, roles, lang="en")
    assert v.counts["by_level"]["chunk"]["end_mid_sentence"] == 4
    assert v.counts["by_level"]["chunk"]["status"] == "fail"  # 50 % > 30 %
    assert v.counts["by_level"]["document"]["status"] == "pass"
    assert v.status == "fail" and v.headline.startswith("level chunk: 50.0% of 8 chunks")
    assert v.counts["documents"] == 9
    without_level = analyse_export(docs + chunks, infer_roles(["content", "doc_id"]), lang="en")
    assert without_level.status != "fail"  # the dilution the level role prevents


def test_uniform_histogram_bins() -> None:
    hist = uniform_histogram([1, 40, 90, 260, 700], 512)
    widths = {h["to"] - h["from"] for h in hist if h["to"] is not None}
    assert len(widths) == 1 and hist[-1]["to"] is None
    assert sum(h["chunks"] for h in hist) == 5


# ---- files and roles -----------------------------------------------------------------------------
def test_roles_inferred_from_common_exports(tmp_path) -> None:
    assert infer_roles(["id", "content", "sourcepage", "sourcefile"]).describe() == {
        "key": "id", "content": "content", "document": "sourcefile", "page": "sourcepage",
        "section": None, "position": None, "level": None}
    lc = tmp_path / "lc.jsonl"
    lc.write_text(json.dumps({"page_content": "A.", "metadata": {"source": "a.pdf", "page": 2}}) + "\n")
    r = infer_roles(read_chunk_file(lc)[0])
    assert (r.content, r.document, r.page) == ("page_content", "metadata.source", "metadata.page")
    un = infer_roles(["text", "element_id", "metadata.filename", "metadata.page_number"])
    assert (un.content, un.key, un.document, un.page) == ("text", "element_id", "metadata.filename",
                                                          "metadata.page_number")
    li = infer_roles(["id_", "text", "ref_doc_id", "metadata.file_name"])
    assert (li.key, li.document) == ("id_", "ref_doc_id")
    mapped = infer_roles(["body", "src", "pg"], {"content": "body", "document": "src", "page": "pg"})
    assert (mapped.content, mapped.document, mapped.page) == ("body", "src", "pg")


def test_json_by_document_and_csv(tmp_path) -> None:
    j = tmp_path / "c.json"
    j.write_text(json.dumps({"doc1": ["One sentence.", "Two sentences."], "doc2": [{"text": "Three."}]}))
    rows = read_chunk_file(j)
    assert [(r["document"], r["position"]) for r in rows] == [("doc1", 0), ("doc1", 1), ("doc2", 0)]
    c = tmp_path / "c.csv"
    with c.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "content", "sourcefile", "sourcepage"])
        w.writerow(["1", "A whole sentence here.", "f.pdf", "f.pdf#page=1"])
    assert read_chunk_file(c)[0]["sourcepage"] == "f.pdf#page=1"


def test_cli_json_keys_with_sourcepage_sourcefile_and_no_metadata_failure(tmp_path, capsys) -> None:
    chunks, _ = _en_chunks()
    f = tmp_path / "chunks.jsonl"
    f.write_text("".join(json.dumps({"id": f"c{i}", "content": c, "sourcefile": "guide.md",
                                     "sourcepage": "guide.md#page=1"}) + "\n" for i, c in enumerate(chunks)))
    src = tmp_path / "src"
    src.mkdir()
    (src / "guide.md").write_text(EN_SOURCE)
    out = tmp_path / "v.json"
    assert main(["chunks", str(f), "--source", str(src), "--lang", "de", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mitten im Satz" in text and "⟂" in text and "citation" not in text
    d = json.loads(out.read_text())
    assert list(d) == ["status", "headline", "counts", "flags", "examples", "by_document"]
    assert set(d["flags"][0]) == FLAG_KEYS
    assert d["status"] in ("warn", "fail") and d["counts"]["chunks_located_in_source"] == len(chunks)
    assert d["examples"][0]["end_of_previous"] and d["examples"][0]["start_of_next"]


def test_check_chunk_file_errors_name_the_problem(tmp_path) -> None:
    from ragdiag.errors import ConfigError

    f = tmp_path / "c.jsonl"
    f.write_text('{"content": "x"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"c.jsonl:2"):
        check_chunk_file(f)
    f.write_text('{"body": "x"}\n')
    with pytest.raises(ConfigError, match="no field 'nope'"):
        check_chunk_file(f, maps=["content=nope"])


# ---- the chunk_boundaries check on an Azure-sample index (sourcepage / sourcefile) -------------
def _azure_sample_target(tmp_path, drop_page_every: int = 0):
    from ragdiag.model.schema import IndexSchema
    from tests.test_check_chunk_boundaries import JsonlTarget

    schema = IndexSchema.from_azure({"name": "gptkbindex", "fields": [
        {"name": "id", "type": "Edm.String", "key": True},
        {"name": "content", "type": "Edm.String", "searchable": True},
        {"name": "sourcepage", "type": "Edm.String", "filterable": True},
        {"name": "sourcefile", "type": "Edm.String", "filterable": True}]})
    paras = [EN_SOURCE.strip()] * 50  # whole guides (chunks of 20+ tokens: none tiny)
    path = tmp_path / "records.jsonl"
    with path.open("w") as fh:
        for i, p in enumerate(paras):
            page = "" if drop_page_every and i % drop_page_every == 0 else f"guide.pdf#page={1 + i // 4}"
            fh.write(json.dumps({"id": f"guide-{i}", "content": p, "sourcepage": page,
                                 "sourcefile": "guide.pdf"}) + "\n")
    return JsonlTarget(path, schema=schema)


def _run_boundaries(target, fields=None):
    from ragdiag.checks.registry import get, run_check
    from ragdiag.engine.context import AuditContext
    from ragdiag.inputs.checklist import load_checklist

    config = None
    if fields is not None:
        from types import SimpleNamespace

        config = SimpleNamespace(target=SimpleNamespace(fields=fields))
    ctx = AuditContext(config=config, target=target, runner=None)
    return run_check(get("chunk_boundaries"), ctx, load_checklist()["chunk_boundaries"])


@pytest.mark.parametrize("fields", [None, {"document": "sourcefile", "page": "sourcepage"}])
def test_check_reads_sourcepage_and_sourcefile_without_a_metadata_failure(tmp_path, fields) -> None:
    finding = _run_boundaries(_azure_sample_target(tmp_path), fields)
    assert "citation" not in finding.headline, finding.headline
    assert finding.status != "fail", finding.headline
    planted = _run_boundaries(_azure_sample_target(tmp_path, drop_page_every=5), fields)
    assert planted.status == "fail" and "lack citation metadata" in planted.headline, planted.headline


def _export_target(tmp_path, chunks):
    from ragdiag.model.schema import IndexSchema
    from tests.test_check_chunk_boundaries import JsonlTarget

    schema = IndexSchema.from_azure({"name": "export", "fields": [
        {"name": "id", "type": "Edm.String", "key": True},
        {"name": "content", "type": "Edm.String", "searchable": True},
        {"name": "sourcepage", "type": "Edm.String", "filterable": True},
        {"name": "sourcefile", "type": "Edm.String", "filterable": True}]})
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps({"id": f"c-{i}", "content": c, "sourcepage": f"g.pdf#page={i // 3 + 1}",
                                        "sourcefile": "g.pdf"}) + "\n" for i, c in enumerate(chunks)))
    return JsonlTarget(path, schema=schema)


def test_check_fails_a_fixed_size_export_on_mid_word_cuts_and_passes_whole_words(tmp_path) -> None:
    from tests.test_chunks import TEXT, _between_words, _fixed

    cut = _run_boundaries(_export_target(tmp_path / "a", _fixed(TEXT, 97)))
    assert cut.status == "fail" and "end mid-word (fail above 15%)" in cut.headline, cut.headline
    shares = {r["measure"]: r for r in cut.evidence_table("boundary_shares").records()}
    assert shares["mid_word"]["verdict"] == "fail"
    whole = _run_boundaries(_export_target(tmp_path / "b", _between_words(TEXT, 97)))
    rows = {r["measure"]: r for r in whole.evidence_table("boundary_shares").records()}
    assert rows["mid_word"]["verdict"] == "ok" and rows["mid_word"]["chunks"] == 0


def test_target_fields_option_is_checked() -> None:
    from ragdiag.chunks.fields import ChunkFields, read_field_roles
    from ragdiag.errors import ConfigError
    from ragdiag.sample.schema import sample_schema
    from ragdiag.targets.registry import OptionReader

    assert read_field_roles(OptionReader({"fields": {"document": "sourcefile"}})) == {"document": "sourcefile"}
    with pytest.raises(ConfigError, match="unknown role"):
        read_field_roles(OptionReader({"fields": {"doc": "sourcefile"}}))
    with pytest.raises(ConfigError, match="must map chunk roles"):
        read_field_roles(OptionReader({"fields": ["sourcefile"]}))
    with pytest.raises(ConfigError, match="no field 'nope'"):
        ChunkFields.from_schema(sample_schema(), roles={"page": "nope"})
    assert ChunkFields.from_schema(sample_schema(), roles={"page": "doc_id"}).page == "doc_id"


def test_unpunctuated_text_judges_words_not_sentences() -> None:
    text = "compact memories have flexible capacities a digital data storage system with capacity"
    chunks = [text[:40], text[40:]]
    for source in (text, None):
        flags = judge_document(chunks, ["a", "b"], source=source, punctuated=False, keeps_whitespace=True)
        assert [f.end_mid_sentence for f in flags] == [None, None]
        assert flags[0].end_mid_word is (text[39].isalnum() and text[40].isalnum())


def test_ebook_number_is_no_heading_and_chapter_titles_alone_are_heading_only() -> None:
    chunks = ["The Project Gutenberg eBook of News from Nowhere [eBook #", "3261] Release date: 2003.",
              "CHAPTER I", "DISCUSSION AND BED", "Up at a friend's house, he said, there had been a talk."]
    flags = judge_document(chunks, list("abcde"), lang="en")
    assert not flags[0].heading_only and flags[0].end_mid_sentence is True
    assert flags[2].heading_only and flags[3].heading_only and not flags[4].heading_only


def test_parquet_chunk_file(tmp_path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    f = tmp_path / "c.parquet"
    pq.write_table(pa.table({"text": ["One sentence here.", "Another one"],
                             "metadata": [{"filename": "a.md", "page_number": 1},
                                          {"filename": "a.md", "page_number": 2}]}), f)
    v = check_chunk_file(f, lang="en")
    assert v.roles["document"] == "metadata.filename" and v.roles["page"] == "metadata.page_number"
    assert v.counts["chunks"] == 2 and v.counts["documents"] == 1


def test_check_analyser_uses_the_sentence_model_and_collapses_whitespace() -> None:
    """chunk_boundaries' streaming analyser: 'Mr.' / 'z. B.' / ';' ends are cuts, a full stop is
    not; an overlap across a whitespace run is an overlap (not a false mid-sentence start)."""
    from ragdiag.chunks import ChunkFields, analyse_chunks

    def rec(key: str, doc: str, pos: int, content: str) -> dict:
        return {"key": key, "doc_id": doc, "position": pos, "page": 1, "content": content}

    fields = ChunkFields(parent_id=None, section_title=None, level=None)
    cut = analyse_chunks([rec("a1", "A", 0, "The contract was signed by Mr."),
                          rec("a2", "A", 1, "Smith and the buyer on Monday."),
                          rec("b1", "B", 0, "Der Antrag umfasst z. B."),
                          rec("b2", "B", 1, "die Belege der Reise."),
                          rec("c1", "C", 0, "The offer stands;"),
                          rec("c2", "C", 1, "the price does not.")],
                         fields=fields, tokenizer="estimate", threads=False)
    assert cut.mid_sentence_end == 3
    sound = analyse_chunks([rec("d1", "D", 0, "The parties agree. The contract \n  includes a clause."),
                            rec("d2", "D", 1, "The contract includes a clause. It is final.")],
                           fields=fields, tokenizer="estimate", threads=False)
    assert sound.mid_sentence_end == 0 and sound.pairs_with_overlap == 1


def test_punctuated_export_whose_chunks_are_all_empty_states_no_sentence_share(tmp_path) -> None:
    # found by the fuzz tier: a row that is only an empty string, so no cut edge is judged
    path = tmp_path / "chunks.jsonl"
    path.write_text('""', encoding="utf-8")
    got = check_chunk_file(path, lang="en")
    assert "None" not in got.headline
    assert got.status == "fail"  # an empty chunk is a tiny chunk: the export is broken
