"""Azure analyzer names -> local analysis, per field, and what the keyword leg then matches."""

from __future__ import annotations

import json

import numpy as np

from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from ragdiag.targets.local.analyzers import Analyzer, analysis_for, analysis_of_schema
from ragdiag.targets.local.keyword import KeywordField
from tests.fakes import FakeEmbedder


def test_german_analysis_stems_plural_and_singular_together_and_drops_articles():
    de = Analyzer(analysis_for("de.lucene"))
    assert de.terms("Die Mannschaften") == de.terms("der Mannschaft") == ["mannschaft"]
    assert de.terms("die der das") == []


def test_english_analysis_keeps_german_articles_and_inflections_apart():
    en = Analyzer(analysis_for("en.lucene"))
    assert en.terms("Die Mannschaften") == ["die", "mannschaften"]
    assert en.terms("the contracts") == ["contract"]


def test_standard_lucene_is_the_default_and_neither_stems_nor_drops_stop_words():
    a = analysis_for(None)
    assert a.analyzer == "standard.lucene" and not a.configured
    assert Analyzer(a).terms("The Contracts") == ["the", "contracts"]
    assert Analyzer(analysis_for("standard")).terms("The Contracts") == ["the", "contracts"]


def test_predefined_language_neutral_analyzers():
    assert Analyzer(analysis_for("keyword")).terms("ENT-42 Nordlicht") == ["ENT-42 Nordlicht"]
    assert Analyzer(analysis_for("whitespace")).terms("ENT-42 Nordlicht") == ["ENT-42", "Nordlicht"]
    assert Analyzer(analysis_for("simple")).terms("ENT-42 Nordlicht") == ["ent", "nordlicht"]
    assert Analyzer(analysis_for("stop")).terms("the Nordlicht") == ["nordlicht"]
    assert Analyzer(analysis_for("standardasciifolding.lucene")).terms("Kündigung") == ["kundigung"]


def test_microsoft_german_is_a_named_approximation_without_decompounding():
    a = analysis_for("de.microsoft")
    assert a.language == "de" and a.stemmer == "german" and a.known
    assert "decompound" in a.approximation and "Snowball" in a.approximation
    assert "not split" in analysis_for("de.lucene").approximation  # Lucene does not decompound either


def test_unknown_analyzer_is_named_never_silent():
    a = analysis_for("my_custom_analyzer")
    assert not a.known
    assert "unknown analyzer 'my_custom_analyzer'" in a.approximation
    assert "standard.lucene" in a.label
    assert Analyzer(a).terms("The Contracts") == ["the", "contracts"]


def _schema(title_analyzer: str | None, content_analyzer: str | None) -> IndexSchema:
    return IndexSchema(name="lang", fields=(
        Field("key", STRING, key=True, filterable=True),
        Field("title", STRING, searchable=True, analyzer=title_analyzer),
        Field("content", STRING, searchable=True, analyzer=content_analyzer),
        Field("v", VECTOR, searchable=True, retrievable=False, dimensions=3, vector_profile="p"),
    ), vector_profiles=(VectorSearchProfile("p", "a"),))


def test_analysis_is_chosen_per_field():
    got = analysis_of_schema(_schema("en.lucene", "de.lucene"))
    assert set(got) == {"title", "content"}  # the vector field is not text-analysed
    assert (got["title"].stemmer, got["content"].stemmer) == ("english", "german")
    assert (got["title"].stopwords, got["content"].stopwords) == ("en", "de")


_GERMAN = [
    {"key": "a", "title": "Spielbericht", "content": "Die Mannschaften trafen sich im Stadion."},
    {"key": "b", "title": "Kantine", "content": "Der Speiseplan der Woche hängt aus."},
    {"key": "c", "title": "Turnier", "content": "Die Mannschaft gewann das Finale."},
]


def _target(tmp_path, analyzer: str | None) -> LocalTarget:
    spec = LocalIndexSpec(name=f"de-{analyzer}", schema=_schema(analyzer, analyzer),
                          vector_sources={"v": ("content",)})
    return LocalTarget.build(_GERMAN, spec, index_dir=tmp_path / str(analyzer), embedder=FakeEmbedder(),
                             progress=False, semantic=False)


def test_local_target_matches_german_inflections_only_with_german_analysis(tmp_path):
    de = _target(tmp_path, "de.lucene")
    en = _target(tmp_path, "en.lucene")
    de_rows = set(np.flatnonzero(de.keyword["content"].scores("Mannschaft") > 0))
    en_rows = set(np.flatnonzero(en.keyword["content"].scores("Mannschaft") > 0))
    assert de_rows == {0, 2} and en_rows == {2}
    # "der" is a German stop word: with German analysis it matches nothing, with English every "der"
    assert de.keyword["content"].scores("der") is None
    assert en.keyword["content"].scores("der") is not None


def test_persisted_index_records_and_reopens_its_analysis(tmp_path):
    t = _target(tmp_path, "de.lucene")
    manifest = json.loads((t.path / "manifest.json").read_text())
    assert manifest["analysis"]["content"]["analyzer"] == "de.lucene"
    again = LocalTarget.open(t.path, embedder=FakeEmbedder())
    assert again.keyword["content"].analysis == t.keyword["content"].analysis
    assert again.text_analysis()["title"]["stemmer"] == "german"


def test_input_hash_differs_by_analyzer_so_an_english_index_is_not_reused_for_german():
    blob = b'{"key": "a"}\n'
    h_en = LocalTarget.input_hash(blob, LocalIndexSpec("x", _schema("en.lucene", "en.lucene"), {}), "m")
    h_de = LocalTarget.input_hash(blob, LocalIndexSpec("x", _schema("de.lucene", "de.lucene"), {}), "m")
    assert h_en != h_de


def test_a_field_without_terms_builds_an_empty_leg():
    kf = KeywordField.build(["", ""], analysis_for("de.lucene"))
    assert kf.n == 2 and kf.scores("Mannschaft") is None
