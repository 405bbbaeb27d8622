"""Building a local index safely: concurrent builders on one cold cache, interrupts, publishing.

`ragdiag.targets.local.index.build_index` writes into a process-unique staging folder under
an exclusive lock and publishes with a rename. Two processes building the same index on a
cold cache used to crash one of them (its ``vectors/<field>.hnsw.tmp`` renamed by the
other); an interrupted build left a folder without a manifest, and the CLI wrote no findings.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ragdiag.errors import TargetError
from ragdiag.inputs.checklist import load_checklist
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from ragdiag.targets.local import index as index_mod
from tests.fakes import FakeEmbedder, tiny_schema

ROOT = Path(__file__).resolve().parents[1]
RECORDS = [{"key": f"k{i}", "title": f"title {i}", "content": f"content number {i} about topic {i % 7}",
            "category": "x", "confidence_score": 0.5, "page": i, "last_updated": "2026-01-01T00:00:00Z",
            "is_table": False, "entity_keys": [], "group_ids": ["g1"]} for i in range(300)]


def _spec() -> LocalIndexSpec:
    return LocalIndexSpec(name="tiny", schema=tiny_schema(), vector_sources={"vec": ["content"]})


BUILDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget
    from tests.fakes import FakeEmbedder, tiny_schema
    records, index_dir, go = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    while not go.exists():   # both processes start building at the same moment
        time.sleep(0.005)
    spec = LocalIndexSpec(name="tiny", schema=tiny_schema(), vector_sources={"vec": ["content"]})
    built = []
    t = LocalTarget.from_jsonl(records, spec, index_dir=index_dir, embedder=FakeEmbedder(), progress=False,
                               log=built.append)
    print(len(t.records), len(built), t.fingerprint())
""")


def test_two_processes_building_one_index_on_a_cold_cache_both_succeed(tmp_path):
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    index_dir = tmp_path / "cache" / "indexes" / "tiny"
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", BUILDER, str(records), str(index_dir), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))
             for _ in range(3)]
    time.sleep(1.5)  # let them import and wait at the gate
    go.touch()
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        outs.append(out.split())
    assert {o[0] for o in outs} == {"300"} and len({o[2] for o in outs}) == 1  # one index, the same for all
    assert sum(int(o[1]) for o in outs) == 1  # built once; the others waited and found it built
    leftovers = [p.name for p in index_dir.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no staging folder left behind


def test_an_interrupted_build_keeps_the_published_index_and_leaves_no_staging(tmp_path, monkeypatch):
    index_dir = tmp_path / "idx"
    first = LocalTarget.build(RECORDS[:10], _spec(), index_dir=index_dir, embedder=FakeEmbedder(), progress=False)
    assert len(first.records) == 10

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(index_mod, "build_hnsw", interrupted)
    with pytest.raises(KeyboardInterrupt):
        LocalTarget.build(RECORDS, _spec(), index_dir=index_dir, embedder=FakeEmbedder(), progress=False)
    again = LocalTarget.open(index_dir, embedder=FakeEmbedder())
    assert len(again.records) == 10  # the index that was there is still there, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx", "idx.lock"]
    monkeypatch.undo()
    rebuilt = LocalTarget.build(RECORDS, _spec(), index_dir=index_dir, embedder=FakeEmbedder(), progress=False)
    assert len(rebuilt.records) == 300


def test_a_folder_that_is_not_an_index_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("the user's own file")
    with pytest.raises(TargetError, match="is not a local index folder .*notes.txt"):
        LocalTarget.build(RECORDS[:3], _spec(), index_dir=tmp_path, embedder=FakeEmbedder(), progress=False)
    assert (tmp_path / "notes.txt").read_text() == "the user's own file"


@pytest.mark.slow
def test_sigint_during_the_index_build_of_an_audit_writes_partial_findings(tmp_path):
    """The real CLI on a cold cache: SIGINT while the local index is built (embedding)."""
    sample = ROOT / "ragdiag" / "sample" / "data"
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[target]\nkind = "local"\nrecords = "{sample / "index" / "structured.jsonl"}"\n'
                   f'schema = "{sample / "index" / "schema.json"}"\nname = "interrupted"\n'
                   'vector_sources = {content_vector = ["content"], summary_vector = ["summary"], '
                   'title_vector = ["title", "section_title"]}\n')
    out = tmp_path / "findings.json"
    env = {**os.environ, "RAGDIAG_CACHE": str(tmp_path / "cold-cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "ragdiag", "audit", str(cfg), "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            # a suite run in the background ignores SIGINT, and so would the child
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    seen = ""
    while "building local index" not in seen and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            break
        seen += line
    assert "building local index" in seen, seen
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 130, stdout + stderr
    data = json.loads(out.read_text())
    assert data["meta"]["interrupted"]["during"] == "opening the target"
    assert len(data["findings"]) == len(load_checklist())
    indexes = tmp_path / "cold-cache" / "indexes"
    assert not [p for p in indexes.iterdir() if p.name.startswith(".")]  # the staging folder was removed


@pytest.mark.slow
def test_two_cold_audits_on_one_cache_both_succeed_with_the_same_findings(tmp_path):
    """Index build, embedding cache and trace store shared by two `ragdiag audit` processes."""
    sample = ROOT / "ragdiag" / "sample" / "data"
    records = tmp_path / "records.jsonl"
    records.write_text("".join((sample / "index" / "structured.jsonl").read_text().splitlines(True)[:80]))
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[target]\nkind = "local"\nrecords = "{records}"\nschema = "{sample / "index" / "schema.json"}"\n'
                   'vector_sources = {content_vector = ["content"], summary_vector = ["summary"], '
                   'title_vector = ["title", "section_title"]}\n'
                   f'[inputs]\nprofiles = "{sample / "profiles" / "tuned.toml"}"\n')
    env = {**os.environ, "RAGDIAG_CACHE": str(tmp_path / "cold-cache"), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "ragdiag", "audit", str(cfg), "--json",
                               str(tmp_path / f"f{i}.json"), "--quiet", "--fail-on", "never"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for i in (1, 2)]
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, err[-3000:]
    a, b = (json.loads((tmp_path / f"f{i}.json").read_text()) for i in (1, 2))
    assert [(f["check_id"], f["status"], f["headline"]) for f in a["findings"]] == \
        [(f["check_id"], f["status"], f["headline"]) for f in b["findings"]]


def _counting_embedder(model_id: str, cache, sent: list[str], dim: int = 8):
    """An `Embedder` over a hash-seeded toy model that records every text the model receives."""
    import hashlib

    import numpy as np

    from ragdiag.encoders import Embedder

    def encode(texts, batch_size):
        sent.extend(texts)
        rows = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(f"{model_id}|{t}".encode()).digest()[:8], "little")
            rows.append(np.random.default_rng(seed).normal(size=dim))
        return np.asarray(rows)

    return Embedder(model_id, encode_fn=encode, dim=dim, cache=cache)


def test_switching_embedders_and_back_never_re_embeds_and_a_rebuild_embeds_only_new_text(tmp_path):
    """Embeddings are reused by content hash across embedder switches and index rebuilds: model A,
    then B, then A again on one index folder and one embedding cache; the third build sends no text
    to A's model, and a rebuild after one record changed sends only that record's text."""
    from ragdiag.encoders.cache import EmbeddingCache

    cache = EmbeddingCache(tmp_path / "embeddings.sqlite3")
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS[:60]), encoding="utf-8")
    index_dir = tmp_path / "index"
    sent_a: list[str] = []
    sent_b: list[str] = []

    def build(model: str, sent: list[str]) -> LocalTarget:
        # a new Embedder object each time (a new process would have an empty LRU as well)
        return LocalTarget.from_jsonl(records, _spec(), index_dir=index_dir,
                                      embedder=_counting_embedder(model, cache, sent), progress=False)

    first = build("model-a", sent_a)
    n = len(sent_a)  # the vector field's texts and the semantic configuration's passages
    assert n >= 60 and len(set(sent_a)) == n  # each distinct text once
    assert first.embedding_model == "model-a"
    build("model-b", sent_b)
    assert sorted(sent_b) == sorted(sent_a)  # another vector space: rebuilt with B's vectors
    back = build("model-a", sent_a)
    assert len(sent_a) == n, "switching back to model A embedded again"
    assert back.fingerprint() == first.fingerprint()  # the same index as the first build
    changed = [dict(r) for r in RECORDS[:60]]
    changed[7]["content"] = "a content no record had before"
    records.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
    build("model-a", sent_a)
    assert sent_a[n:] and all("a content no record had before" in t for t in sent_a[n:])
    assert len(sent_a[n:]) <= n // 60  # only the changed record's texts
