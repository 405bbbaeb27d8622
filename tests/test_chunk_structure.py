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


# ---- a hard-wrapped documentation page (issue 27, round 2): the line a cut falls in, list items
# continued over a line break, field lines, bare markers, definition lists, a fence repeated by an
# overlap too short to align
WRAPPED = (
    "## Options\n\n"
    "The plugin reads its settings from the configuration file and applies them\n"
    "to every page it builds.\n\n"
    "* `--readme`: Specify the readme file extension. If you intend to publish\n"
    "  keep the recommendations in mind.\n"
    "* `--name`: Set the package name.\n\n"
    "**Default**: `false`\n\n"
    "*Introduced in 2.0.0*\n\n"
    "Set the maximum number of retries in an unstable network.\n\n"
    "| Option | Default |\n|---|---|\n| Indexing time | 2,700 ms |\n\n"
    "- Fixed #2970: Search results show escaped characters (7.2.2 regression)\n"
    "- Added support for hiding footer navigation\n\n"
    ":   The definition of a term, indented below it.\n\n"
    "Read the announcement on the blog.\n\n"
    "  [Read the full announcement]: ../blog/posts/announcement.md\n"
)
WRAPPED_CLEAN = [_at(WRAPPED, m) for m in (
    "The plugin", "* `--name`", "**Default**", "*Introduced", "Set the maximum", "| Option", "- Fixed",
    "Added support", ":   The definition", "  [Read the full")]
WRAPPED_INSIDE = {  # cut point -> the flag it must raise at that cut
    _at(WRAPPED, "keep the recommendations"): "mid_sentence",   # a list item continued in lower case
    _at(WRAPPED, "to every page"): "mid_sentence",              # a hard-wrapped paragraph
    _at(WRAPPED, "ms |"): "split_table",                        # inside a table row: its cell text too
    _at(WRAPPED, "full announcement]"): "split_code",           # inside a link reference definition
}


def _wrapped(points: list[int], with_source: bool):
    chunks = _cut(WRAPPED, sorted(points))  # stripped at every cut, as LangChain's splitters do
    return chunks, judge_document(chunks, [f"c{i}" for i in range(len(chunks))], lang="en",
                                  source=WRAPPED if with_source else None)


@pytest.mark.parametrize("with_source", [True, False])
def test_a_hard_wrapped_page_cut_at_its_units_passes(with_source):
    chunks, flags = _wrapped(WRAPPED_CLEAN, with_source)
    assert len(chunks) == len(WRAPPED_CLEAN) + 1
    bad = [(f.key, f.end_mid_sentence, f.start_mid_sentence, f.split_code, f.split_table) for f in flags
           if f.end_mid_sentence or f.start_mid_sentence or f.split_code or f.split_table]
    assert bad == []


@pytest.mark.parametrize("with_source", [True, False])
@pytest.mark.parametrize("point", sorted(WRAPPED_INSIDE))
def test_the_hard_wrapped_page_cut_inside_its_lines_is_flagged(with_source, point):
    chunks, flags = _wrapped([point], with_source)
    want = WRAPPED_INSIDE[point]
    a, b = flags
    if want == "mid_sentence":
        assert a.end_mid_sentence and b.start_mid_sentence and not a.split_code, chunks
    elif want == "split_table":
        assert a.split_table and b.split_table and a.end_mid_sentence and not a.split_code, chunks
    else:
        assert a.end_split_code and b.start_split_code and not a.end_mid_sentence, chunks


def test_cuts_of_a_fixed_size_window_inside_tokens_and_lines():
    # slices that keep their whitespace (a fixed-size window): the gap at each cut is known
    page = ("Use the tab below.\n\n=== \"Add further languages\"\n\n    Read the list.\n\n"
            "- Fixed a regression (7.2.2 regression) in search.\n\n"
            "  [issue tracker]: https://github.com/example/project/issues\n\nThe end.\n")
    for marker, flag in (("rther languages", "split_code"), ("2 regression", "mid_sentence"),
                         ("ject/issues", "split_code"), ("in search", "mid_sentence")):
        p = _at(page, marker)
        for source in (page, None):
            a, b = judge_document([page[:p], page[p:]], ["a", "b"], source=source, keeps_whitespace=True)
            if flag == "split_code":
                assert a.end_split_code and not a.end_mid_sentence, (marker, source is None)
            else:
                assert a.end_mid_sentence and not a.end_split_code, (marker, source is None)
    p = _at(page, "- Fixed", after=False) + 2     # right after the bare list marker: a unit starts
    for source in (page, None):
        a, _ = judge_document([page[:p], page[p:]], ["a", "b"], source=source, keeps_whitespace=True)
        assert a.end_mid_sentence is False and not a.end_split_code


def test_an_overlap_ending_inside_the_next_chunks_first_word_is_found():
    a = "  [Back]: ../setup/navigation.md#back-to-top\n  [Boosting]: ../../setup/site-search.md#search-boos"
    b = " ../../setup/site-search.md#search-boosting\n  [Brand new search plugin]: search.md\n"
    f = judge_document([a, b], ["a", "b"], keeps_whitespace=True)
    assert f[1].overlap_words == 1 and f[0].end_split_code and not f[0].end_mid_sentence


def test_a_fence_line_repeated_by_a_short_overlap_does_not_reopen_the_block():
    chunks = ["Install it:\n\n```bash\npip install poetry\n````", "````\nIf you want other versions, use pipx.",
              "The installer offers a streamlined and", "simplified installation of the tool."]
    f = judge_document(chunks, list("abcd"))
    assert f[2].end_mid_sentence and not f[2].end_split_code      # prose after the block: a cut sentence
    # a fence really opened at the end of a chunk still makes the next cut one inside code
    g = judge_document(["Install it:\n\n```bash\npip install poetry", "poetry --version\n```\nDone."], ["a", "b"])
    assert g[0].end_split_code and not g[0].end_mid_sentence


def test_a_heading_tail_repeated_by_the_next_chunk_is_no_overlap():
    f = judge_document(["Use `develop`.\n\n## `url` dependencies", "`url` dependencies are archives."], ["a", "b"])
    assert f[1].overlap_words == 0 and f[0].end_mid_sentence is False and f[1].start_mid_sentence is False


def test_a_link_line_of_its_own_paragraph_is_a_unit_and_a_link_inside_a_sentence_is_not():
    from ragdiag.chunks.sentences import is_boundary

    links = "### Hishel\n\n[GitHub](https://github.com/x/hishel) - [Documentation](https://hishel.com/)"
    assert is_boundary(links, "An elegant HTTP cache for the client.", "en", gap_known=False)
    assert not is_boundary(links, "and more links for the client.", "en", gap_known=False)
    # a sentence that ends on a link is read as its text: longer than a title, it was cut
    prose = "### Hishel\n\nThe cache and its storage backends are documented in the release notes of the [project](https://hishel.com/)"
    assert not is_boundary(prose, "An elegant HTTP cache for the client.", "en", gap_known=False)


def test_a_list_item_is_continued_in_lower_case_only_where_the_corpus_hard_wraps_its_lines():
    from ragdiag.chunks.cuts import Decisions, wraps_lines

    item = ["Steps to follow:\n- first item\n- second item continues", "with more words after the cut."]
    wrapped_prose = ["The plugin reads its settings from the file and\napplies them to every page it builds."] * 25
    unwrapped_prose = ["The plugin reads its settings from the file and applies them to every page it builds.\n"
                       "- A list item.\n\n## A heading\n\nAnother paragraph."] * 25
    assert wraps_lines(wrapped_prose) and not wraps_lines(unwrapped_prose)
    for corpus, continued in ((wrapped_prose, True), (unwrapped_prose, False)):
        d = Decisions.of(corpus + item, "en")
        f = judge_document(item, ["a", "b"], lang="en", vocab=d.vocab, keeps_whitespace=d.keeps_whitespace,
                           wrapped=d.wrapped)
        assert f[0].end_mid_sentence is continued, continued
        # with the source the line break is seen: a lower-case line after an item continues it
        src = "Steps to follow:\n- first item\n- second item continues\nwith more words after the cut."
        g = judge_document(item, ["a", "b"], lang="en", source=src, wrapped=d.wrapped)
        assert g[0].end_mid_sentence is True
