"""Determinism: an audit interrupted halfway and resumed from the trace store gives the same
findings JSON, byte for byte, as an uninterrupted one (apart from `NONDETERMINISTIC_META`).

The world is built to tie: every "section" has a "chunk" with the same text, so BM25, the
vectors and the bi-encoder reranker's scores tie exactly between the two, and their keys
sort in the opposite order to their rows (equal reranker scores keep the pool order, which
puts such twins in key order). Reranker scores are computed for whatever
documents a request's window lacks, so an interrupted run computes them in other batches
than an uninterrupted one: they must not depend on the batch.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ragdiag.audit import NONDETERMINISTIC_META, run_checks
from ragdiag.encoders import BiEncoderReranker
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.engine.store import store_path
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import tiny_schema

POLICY = """
[policy]
name = "resume"
[routes]
fact = "fact"
comparison = "compare"
definition = "define"
[defaults]
query_type = "semantic"
semantic_configuration = "default"
keyword_text = "keywords"
semantic_text = "verbatim"
[profiles.fact]
filter = "confidence_score ge 0.5"
scoring_profile = "conf"
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
  k = 6
[profiles.compare]
  [[profiles.compare.vector_queries]]
  fields = ["vec"]
  k = 12
  text = "keyword_text"
[profiles.define]
keyword_text = "verbatim"
  [[profiles.define.vector_queries]]
  fields = ["vec"]
  k = 4
  exhaustive = true
"""

TOPICS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]


class HashEmbedder:
    """Deterministic across processes: a text's vector is seeded by its sha256."""

    model_id = "hash-embedder"
    dim = 3

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).normal(size=self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed(self, texts, *, progress=False, batch_size=64):
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_one(self, text):
        return self._vec(text)


def _records() -> list[dict]:
    recs = []
    for i in range(40):
        topic = TOPICS[i % len(TOPICS)]
        text = f"{topic} policy number {i % 7} says {topic} applies with notice of {i % 5} days"
        for part in ("section", "chunk"):
            # keys sort opposite to rows: "s-" rows come first, "c-" keys sort first
            recs.append({"key": f"{'s' if part == 'section' else 'c'}-{i:02d}", "title": topic, "content": text,
                         "category": "common", "confidence_score": 0.4 + 0.1 * (i % 6), "page": 1,
                         "last_updated": "2026-01-01T00:00:00Z", "is_table": False, "entity_keys": [],
                         "group_ids": ["all"]})
    return recs


def _build(index_dir: Path) -> LocalTarget:
    emb = HashEmbedder()
    vectors = np.stack([emb.embed_one(r["content"]) for r in _records()])
    return LocalTarget.build(_records(), LocalIndexSpec("resume", tiny_schema("resume"), {},
                                                        now="2026-06-30T00:00:00Z"),
                             index_dir=index_dir, embedder=emb, reranker=BiEncoderReranker(emb),
                             vectors={"vec": vectors}, progress=False)


def _open(index_dir: Path) -> LocalTarget:
    emb = HashEmbedder()
    return LocalTarget.open(index_dir, embedder=emb, reranker=BiEncoderReranker(emb))


def _goldset() -> Goldset:
    cases = []
    for i in range(18):
        topic = TOPICS[i % len(TOPICS)]
        intent = ("fact", "comparison", "definition")[i % 3]
        cases.append(GoldCase(id=f"g{i:02d}", question=f"What does the {topic} policy say about notice {i % 4}?",
                              intent=intent, as_user="u",
                              expect_sources=((f"c-{(i * 6 + i % 6) % 40:02d}", 1),
                                              (f"s-{(i * 6 + i % 6) % 40:02d}", 1))))
    return Goldset(cases=tuple(cases), path=None)


def _audit(target: LocalTarget, cache_dir: Path, budget: int | None = None) -> tuple[str, Runner]:
    runner = Runner(target, cache_dir=cache_dir, budget=budget)
    ctx = AuditContext(config=None, target=target, runner=runner, policy=loads_policy(POLICY),
                       goldset=_goldset(), identities={"u": Identity("u", ("all",))})
    result = run_checks(ctx)
    runner.flush()
    return result.to_json(), runner


def _comparable(text: str) -> dict:
    data = json.loads(text)
    for name in NONDETERMINISTIC_META:
        data["meta"].pop(name, None)
    return data


def test_nondeterministic_fields_are_declared():
    assert set(NONDETERMINISTIC_META) == {"date", "runner", "target_stats"}


def test_resumed_audit_equals_uninterrupted(tmp_path):
    index_dir = tmp_path / "idx"
    _build(index_dir)
    whole, whole_runner = _audit(_open(index_dir), tmp_path / "whole")
    total = whole_runner.stats.sent
    assert total > 20

    half, first = _audit(_open(index_dir), tmp_path / "resumed", budget=total // 2)
    assert first.stats.over_budget > 0 and _comparable(half) != _comparable(whole)

    again, second = _audit(_open(index_dir), tmp_path / "resumed")  # a new process would do this
    assert second.stats.disk_hits >= total // 2 and 0 < second.stats.sent <= total - total // 2
    assert json.dumps(_comparable(again), sort_keys=True) == json.dumps(_comparable(whole), sort_keys=True)
    assert _comparable(again) == _comparable(whole)


def test_tied_documents_rank_by_key_in_every_stage(tmp_path):
    from ragdiag.model import SearchRequest, VectorQuery

    target = _build(tmp_path / "idx")
    req = SearchRequest(search="alpha policy notice", query_type="semantic", semantic_configuration="default",
                        vector_queries=(VectorQuery(fields=("vec",), text="alpha policy notice", k=10),), top=20)
    t = target.search(req)
    for lst in (t.text, *t.vectors, t.pool):
        keys, scores = lst.keys, lst.scores
        for a in range(len(keys) - 1):
            if scores[a] == scores[a + 1]:
                assert keys[a] < keys[a + 1], (lst.name, keys[a], keys[a + 1])
    # equal reranker scores keep the pool order (fused score, then key): twins stay in key order
    rr = [(h.reranker_score, h.fused_rank, h.key) for h in t.hits if h.reranker_score is not None]
    for (s1, f1, _k1), (s2, f2, _k2) in zip(rr, rr[1:], strict=False):
        assert s1 > s2 or (s1 == s2 and f1 < f2)
    assert any(s1 == s2 for (s1, _, _), (s2, _, _) in zip(rr, rr[1:], strict=False))  # the world does tie


_CHILD = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    import ragdiag.engine.store as store
    from tests.test_resume import _audit, _open

    # SIGKILL this process after {after} traces are in the file, halfway through writing
    # the next record: what a kill mid-write leaves behind
    store.FLUSH_EVERY = 1
    flush = store.TraceStore.flush
    def flush_then_die(self):
        flush(self)
        if self.path is not None and len(self._trace_at) >= {after}:
            with open(self.path, "ab") as fh:
                fh.write(b"T" + (300).to_bytes(4, "little") + b"0" * 40)
                fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
    store.TraceStore.flush = flush_then_die
    text, _ = _audit(_open(Path({index!r})), Path({cache!r}))
    Path({out!r}).write_text(text)
""")


@pytest.mark.slow
def test_killed_audit_resumes_from_the_store(tmp_path):
    """A run killed with SIGKILL halfway (a torn record at the end of the store) resumes to
    the same findings as an uninterrupted run."""
    index_dir = tmp_path / "idx"
    _build(index_dir)
    whole, runner = _audit(_open(index_dir), tmp_path / "whole")
    total = runner.stats.sent
    root = str(Path(__file__).resolve().parents[1])
    cache = tmp_path / "killed"
    script = _CHILD.format(root=root, index=str(index_dir), cache=str(cache), after=total // 2,
                           out=str(tmp_path / "never.json"))
    child = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": root},
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == -signal.SIGKILL, child.stderr[-2000:]
    assert not (tmp_path / "never.json").exists()
    path = store_path(cache, _open(index_dir).fingerprint())
    assert path.read_bytes().endswith(b"0" * 40)  # the torn record is there
    again, second = _audit(_open(index_dir), cache)
    assert second.stats.disk_hits >= total // 2 and 0 < second.stats.sent <= total - total // 2
    assert _comparable(again) == _comparable(whole)
