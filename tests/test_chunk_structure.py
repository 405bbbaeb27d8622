"""Document structure before sentences (ragdiag/chunks/structure.py, cuts.py), one judgement for the
audit and `ragdiag chunks`, and ragdiag's own document chunker (ragdiag/chunks/chunker.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragdiag.chunks import ChunkFields, analyse_chunks
from ragdiag.chunks.chunker import blocks, chunk_text, extract_file
from ragdiag.chunks.cuts import judge_document
from ragdiag.chunks.export import analyse_export
from ragdiag.chunks.files import infer_roles
from ragdiag.chunks.structure import is_markup_line, is_opener, strip_closing

PDF = Path(__file__).parent / "fixtures" / "init" / "warranty.pdf"

# a mkdocs page: front matter, admonitions (/// and !!!), includes, emoji after full stops, code
BLOCKS = [
    "# Request body { #request-body }\n\nWhen you need to send data from a client to your API, you send it as "
    "a request body. Your API almost always has to send a response body. 😎",
    "/// note | Hinweis\n\nTo send data you should use one of POST, PUT, DELETE or PATCH. Sending a body "
    "with a GET request has an undefined behavior in the specifications.\n\n///",
    "## Import Pydantic's BaseModel\n\nFirst, you need to import BaseModel from pydantic, as the "
    "tutorial shows in its first lines:\n\n{* ../../docs_src/body/tutorial001_py310.py hl[2] *}",
    "!!! tip \"Use the editor\"\n\n    The editor completes every attribute of the model for you, "
    "with its type, so errors are found before the code ever runs. :tada:",
    "Declare it as a parameter of the path operation, the same way you declared path and query "
    "parameters before, with the model as its type:\n\n```Python\nfrom fastapi import FastAPI\n\n"
    "app = FastAPI()\n\n\n@app.post(\"/items/\")\nasync def create_item(item: Item):\n    return item\n```",
    "--8<-- \"docs/snippets/body-results.md\"\n\nWith just that Python type declaration, the framework reads "
    "the body of the request as JSON and converts the corresponding types. **It validates the data.**",
]
PAGE = "\n\n".join(BLOCKS) + "\n"


def _at(text: str, marker: str, after: bool = False) -> int:
    i = text.index(marker)
    return i + len(marker) if after else i


def _cut(text: str, points: list[int]) -> list[str]:
    edges = [0, *points, len(text)]
    return [text[a:b].strip() for a, b in zip(edges, edges[1:], strict=False) if text[a:b].strip()]


CLEAN = [_at(PAGE, b) for b in BLOCKS[1:]]                     # at every block boundary
INSIDE = sorted([_at(PAGE, "body/tutorial001"),                 # inside the include line
                 _at(PAGE, "app = FastAPI()")])                  # inside the code block


def _records(chunks: list[str]) -> list[dict]:
    return [{"id": f"c{i}", "content": c, "sourcefile": "body.md", "chunk_index": i} for i, c in enumerate(chunks)]


def _export(chunks: list[str], with_source: bool):
    recs = _records(chunks)
    return analyse_export(recs, infer_roles(recs[0].keys()), lang="en",
                          sources={"body.md": PAGE} if with_source else None)


def _audit(chunks: list[str]):
    fields = ChunkFields(key="id", content="content", doc_id="sourcefile", parent_id=None, page=None,
                         position="chunk_index", section_title=None, level=None, chunk_levels=())
    return analyse_chunks(_records(chunks), fields=fields, tokenizer=lambda ts: [len(t.split()) for t in ts],
                          min_tokens=3, lang="en")


def test_markup_lines_openers_and_closing_marks_are_classes_not_one_idiom():
    for line in ("///", "/// note | Hinweis", "!!! warning", "??? tip \"More\"", ":::note", "```python", "~~~",
                 "{* ../../docs_src/a.py hl[2] *}", "{! docs/x.md !}", "{{% note %}}", "{{< /tab >}}",
                 "--8<-- \"x.md\"", ".. literalinclude:: ../x.py", "include::chapter.adoc[]", "[source,python]",
                 "<!-- md:version 8.3 -->", "<div class=\"grid\">", "[link]: https://x.org/y", "😎 🎉"):
        assert is_markup_line(line), line
    for line in ("Note that the body is JSON.", "... da description optional ist", "[see this] for more"):
        assert not is_markup_line(line), line
    assert is_opener("/// tip | Title") and is_opener(".. note::") and is_opener("{{% warning %}}")
    assert not is_opener("///") and not is_opener("{{% /note %}}")
    for text in ("zu deklarieren. 😎", "**Done.**", "fertig. :tada:", "End.</p>", "end.[^1]", "Done. 🎉 "):
        assert strip_closing(text)[-1] == ".", text


@pytest.mark.parametrize("with_source", [True, False])
def test_a_page_cut_at_its_block_boundaries_passes(with_source):
    v = _export(_cut(PAGE, CLEAN), with_source)
    assert [f.key for f in v.flags if f.end_mid_sentence or f.start_mid_sentence or f.split_code] == []
    assert v.status == "pass", v.headline


@pytest.mark.parametrize("with_source", [True, False])
def test_the_same_page_cut_inside_code_include_and_admonitions_is_flagged(with_source):
    v = _export(_cut(PAGE, INSIDE), with_source)
    by = {f.key: f for f in v.flags}
    assert by["c0"].end_split_code and by["c1"].start_split_code        # inside the include line
    assert by["c1"].end_split_code and by["c2"].start_split_code        # inside the code block
    assert not any(f.end_mid_sentence or f.start_mid_sentence for f in v.flags)  # no sentence was cut
    assert v.counts["split_code"] == 3 and v.status in ("warn", "fail")
    assert "split_code" in {e["measure"] for e in v.examples}


def test_a_cut_sentence_in_the_page_is_a_cut_and_an_emoji_after_a_stop_is_not():
    mid = _at(PAGE, "send it as")
    f = judge_document(_cut(PAGE, [mid]), ["a", "b"], source=PAGE)
    assert f[0].end_mid_sentence and not f[0].end_split_code
    emoji = _at(PAGE, "body. 😎", after=True)
    g = judge_document([PAGE[:emoji].strip(), PAGE[emoji:].strip()], ["a", "b"])
    assert g[0].end_mid_sentence is False


@pytest.mark.parametrize("points", [CLEAN, INSIDE, [_at(PAGE, "send it as"), _at(PAGE, "app = FastAPI()")]])
def test_the_audit_and_ragdiag_chunks_give_one_figure_for_the_same_records(points):
    chunks = _cut(PAGE, points)
    audit, export = _audit(chunks), _export(chunks, with_source=False)
    assert audit.mid_sentence_end == export.counts["end_mid_sentence"]
    assert audit.mid_sentence_end_share == export.counts["end_mid_sentence_share"]
    assert audit.mid_sentence_start_share == export.counts["start_mid_sentence_share"]
    assert audit.mid_word == export.counts["end_mid_word"]
    assert audit.split_code == export.counts["split_code"]


def test_tiny_chunks_without_judged_sentences_never_pass():
    norm = "compact memories have flexible capacities a digital data storage system with capacity up to bits"
    tiny = [{"content": w, "document": "d"} for w in norm.split()]
    v = analyse_export(tiny, infer_roles(["content", "document"]), lang="en")
    assert not v.counts["sentences_judged"] and v.status == "fail"  # every chunk tiny: fails on its own
    whole = [{"content": (norm + " ") * 3, "document": f"d{i}"} for i in range(5)]
    w = analyse_export(whole, infer_roles(["content", "document"]), lang="en")
    assert w.status == "skipped" and "not judged" in w.headline  # not judged: skipped, never pass
    few_tiny = [{"content": (norm + " ") * 3, "document": f"d{i}"} for i in range(19)] + [{"content": "bits", "document": "x"}]
    assert analyse_export(few_tiny, infer_roles(["content", "document"]), lang="en").status == "skipped"


# ---- ragdiag's document chunker -------------------------------------------------------------------
def test_the_chunker_cuts_exact_slices_at_block_boundaries_only():
    text = PAGE
    pieces = chunk_text(text, target_words=25)
    assert len(pieces) >= 6
    for p in pieces:
        chunk = text[p.start:p.end]
        assert chunk and chunk in text and chunk == chunk.strip()
    cuts = [p.end for p in pieces[:-1]]
    structure = [b for b in blocks(text) if b.kind in ("code", "markup", "table")]
    for c in cuts:  # never inside a code block or an include line
        assert not any(b.start < c < b.end for b in structure), text[c - 40:c + 40]
    for p in pieces:  # an admonition title or a heading never ends a chunk
        last = text[p.start:p.end].rstrip().rsplit("\n", 1)[-1]
        assert not is_opener(last) and not last.startswith("#"), last
    flags = judge_document([text[p.start:p.end] for p in pieces], [str(i) for i in range(len(pieces))], source=text)
    assert not any(f.end_mid_sentence or f.split_code or f.end_mid_word for f in flags)


def test_init_documents_chunks_are_substrings_of_the_extracted_text_for_every_format(tmp_path):
    from ragdiag.init.documents import documents_draft

    (tmp_path / "body.md").write_text(PAGE * 2)
    (tmp_path / "notes.txt").write_text("The first paragraph of the notes. It has two sentences.\n\n" * 30)
    (tmp_path / "faq.html").write_text(
        "<html><head><title>FAQ</title></head><body><h2>Invoices</h2><p>Invoices are sent monthly. ../../docs_src "
        "and .env stay as they are.</p><pre>x = 1\ny = 2</pre><ul><li>one</li><li>two</li></ul></body></html>")
    shutil.copy(PDF, tmp_path / "warranty.pdf")
    draft = documents_draft(tmp_path, language="en", log=lambda m: None, warn=lambda m: None)
    texts = {p.name: extract_file(p).text for p in tmp_path.iterdir()}
    by_file: dict[str, list[dict]] = {}
    for r in draft.records:
        by_file.setdefault(r["source_file"], []).append(r)
    assert set(by_file) == set(texts)
    for name, recs in by_file.items():
        for r in recs:
            assert r["content"] in texts[name], (name, r["content"][:80])
        assert (all(r["page"] is not None for r in recs) if name.endswith(".pdf")
                else all(r["page"] is None for r in recs)), name
    assert any("../../docs_src and .env" in r["content"] for r in by_file["faq.html"])
    # the audit's analyser locates every chunk in its source and finds no cut
    recs = [{"id": r["key"], "content": r["content"], "sourcefile": r["source_file"], "chunk_index": r["position"]}
            for r in draft.records]
    v = analyse_export(recs, infer_roles(recs[0].keys()), lang="en", sources=texts)
    assert v.counts["chunks_located_in_source"] == len(recs)
    assert v.counts["end_mid_sentence"] == 0 and v.counts["split_code"] == 0
