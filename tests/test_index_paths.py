"""No client input chooses where a local index is written or what is loaded from it.

A client's schema.json names the index; that name used to become the cache folder as it
stood (``../`` or an absolute path wrote anywhere) and a later run unpickled
``records.pkl`` from there. Now the folder is a slug of Azure's name alphabet plus a hash
of the name, always directly under ``<cache>/indexes``, and records are plain JSON.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from ragdiag.errors import ConfigError
from ragdiag.targets.local import LocalIndexSpec, LocalTarget, default_index_dir
from ragdiag.targets.local.index import index_folder_name, open_index
from tests.fakes import FakeEmbedder, tiny_schema

RECORDS = [
    {"key": "a", "title": "alpha", "content": "alpha text", "category": "x", "confidence_score": 0.5,
     "page": 1, "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": ["e1"],
     "group_ids": ["g1"]},
    {"key": "b", "title": "beta", "content": "beta text", "category": "y", "confidence_score": 0.9,
     "page": 2, "last_updated": "2026-02-01T00:00:00Z", "is_table": True, "entity_keys": [],
     "group_ids": ["g2"]},
]


@pytest.mark.parametrize("name", ["../../escape", "/tmp/absolute-index", "..", "a/../../b", "C:\\win",
                                  "x\x00y", "", "Muster_KB"])
def test_any_name_stays_a_direct_child_of_the_cache(tmp_path, name):
    path = default_index_dir(tmp_path, name)
    assert path.parent == (tmp_path / "indexes").resolve()
    assert set(path.name.split("@")[0]) <= set("abcdefghijklmnopqrstuvwxyz0123456789-")


def test_names_with_the_same_slug_get_different_folders():
    assert index_folder_name("muster-kb") != index_folder_name("Muster_KB")
    assert index_folder_name("muster-kb") == index_folder_name("muster-kb")  # stable across runs


def test_a_traversal_schema_name_builds_inside_the_cache(tmp_path):
    cache = tmp_path / "cache"
    outside = tmp_path / "outside"
    schema = tiny_schema(f"../../{outside.name}")
    spec = LocalIndexSpec(name=schema.name, schema=schema, vector_sources={"vec": ["content"]})
    target = LocalTarget.build(RECORDS, spec, index_dir=default_index_dir(cache, spec.name),
                               embedder=FakeEmbedder(), progress=False)
    assert Path(target.path).resolve().is_relative_to((cache / "indexes").resolve())
    assert not outside.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]  # nothing written beside the cache
    assert target.get_document("a")["title"] == "alpha"


def test_records_are_json_and_a_planted_pickle_is_never_loaded(tmp_path, monkeypatch):
    index_dir = tmp_path / "idx"
    spec = LocalIndexSpec(name="tiny", schema=tiny_schema(), vector_sources={"vec": ["content"]})
    LocalTarget.build(RECORDS, spec, index_dir=index_dir, embedder=FakeEmbedder(), progress=False)
    assert json.loads((index_dir / "records.json").read_text())[1]["key"] == "b"
    assert not (index_dir / "records.pkl").exists()

    marker = tmp_path / "pwned"

    class Planted:
        def __reduce__(self):
            return (Path.touch, (marker,))

    (index_dir / "records.pkl").write_bytes(pickle.dumps(Planted()))

    def no_unpickling(*a, **k):
        raise AssertionError("an index file was unpickled")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    data = open_index(index_dir)
    assert [r["key"] for r in data.records] == ["a", "b"]
    assert not marker.exists()


def test_a_replaced_records_file_is_a_target_error_not_code(tmp_path):
    from ragdiag.errors import TargetError

    index_dir = tmp_path / "idx"
    spec = LocalIndexSpec(name="tiny", schema=tiny_schema(), vector_sources={"vec": ["content"]})
    LocalTarget.build(RECORDS, spec, index_dir=index_dir, embedder=FakeEmbedder(), progress=False)
    (index_dir / "records.json").write_bytes(pickle.dumps({"not": "json"}))
    with pytest.raises(TargetError, match="records.json"):
        open_index(index_dir)


def test_a_config_index_name_outside_azures_alphabet_is_refused(tmp_path):
    from ragdiag.inputs.config import load_config

    (tmp_path / "records.jsonl").write_text("")
    (tmp_path / "schema.json").write_text(json.dumps(tiny_schema().to_azure()))
    cfg = tmp_path / "audit.toml"
    cfg.write_text('[target]\nkind = "local"\nrecords = "records.jsonl"\nschema = "schema.json"\n'
                   'name = "../../etc"\n')
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert "lowercase letters, digits and dashes" in str(info.value)
    assert "audit.toml" in str(info.value) or info.value.path
    cfg.write_text(cfg.read_text().replace("../../etc", "my-index-2"))
    assert load_config(cfg).target.options["name"] == "my-index-2"
