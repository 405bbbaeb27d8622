"""The fingerprint of an audit's inputs, package versions and models (`ragdiag.inputs.fingerprint`)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

from ragdiag.inputs.fingerprint import (
    PACKAGES,
    code_hash,
    fingerprint,
    flatten,
    group_digest,
    hash_path,
)

ROOT = Path(__file__).resolve().parents[1]


def _inputs(folder: Path) -> SimpleNamespace:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "goldset.yaml").write_text("- id: q1\n  question: what?\n", encoding="utf-8")
    (folder / "profiles.toml").write_text("[policy]\nname = 'p'\n", encoding="utf-8")
    (folder / "audit.toml").write_text("[audit]\nname = 'a'\n", encoding="utf-8")
    code = folder / "app"
    (code / "pkg").mkdir(parents=True, exist_ok=True)
    (code / "pkg" / "search.py").write_text("def search(q):\n    return q\n", encoding="utf-8")
    return SimpleNamespace(path=folder / "audit.toml", goldset=folder / "goldset.yaml", goldset_topics=None,
                           profiles=folder / "profiles.toml", compare_profiles=None, client_code=code,
                           query_log=None, answers=None, entities=None,
                           identities={"anna": ("sales", "all-staff")})


class _Target:
    name = "t"
    capabilities = frozenset({"embedder", "reranker"})  # declared: a model the target runs is never guessed

    def __init__(self, digest: str = "abc") -> None:
        self.digest = digest
        self.embedder = SimpleNamespace(model_id="m@1", cache_id="m@1#float64-grid11")
        self.reranker = SimpleNamespace(name="bi-encoder reranker (m)", embedder=self.embedder)

    def fingerprint(self) -> str:
        return f"t:{self.digest}"


def test_hash_path_hashes_content_not_location(tmp_path):
    a = tmp_path / "a.txt"
    a.write_bytes(b"hello")
    assert hash_path(a) == "sha256:" + hashlib.sha256(b"hello").hexdigest()
    assert hash_path(tmp_path / "missing") is None
    one = _inputs(tmp_path / "one").client_code
    two = tmp_path / "elsewhere" / "app"
    shutil.copytree(one, two)
    assert hash_path(one) == hash_path(two)  # the same files elsewhere on disk
    for skipped in (".git", "node_modules", "__pycache__", ".venv"):  # not the application's code
        (two / skipped).mkdir()
        (two / skipped / "x.py").write_text("noise", encoding="utf-8")
    assert hash_path(one) == hash_path(two)
    (two / "pkg" / "search.py").write_text("def search(q):\n    return q[:10]\n", encoding="utf-8")
    assert hash_path(one) != hash_path(two)  # one changed line
    shutil.rmtree(two)
    shutil.copytree(one, two)
    (two / "pkg" / "search.py").rename(two / "pkg" / "find.py")
    assert hash_path(one) != hash_path(two)  # a renamed file


def test_fingerprint_groups_and_digest(tmp_path):
    cfg = _inputs(tmp_path / "one")
    fp = fingerprint(cfg, _Target(), checklist_dir=ROOT / "ragdiag" / "checks" / "specs")
    assert set(fp) == {"digest", "instrument", "yardstick", "system"}
    assert fp["digest"].startswith("sha256:") and len(fp["digest"]) == len("sha256:") + 32
    inst = fp["instrument"]
    assert inst["packages"]["torch"].startswith("2.13") and "faiss-cpu" in inst["packages"]
    assert inst["ragdiag_code"] == code_hash() and inst["platform"]["system"]
    assert inst["models"] == {"embedder": "m@1#float64-grid11",
                              "reranker": {"name": "bi-encoder reranker (m)", "embedder": "m@1#float64-grid11"}}
    assert set(fp["yardstick"]) == {"goldset", "identities", "checklist"}
    assert set(fp["system"]) == {"profiles", "client_code", "config", "target"}
    assert fp["system"]["target"] == "t:abc"
    # the digest is the hash of the three groups, as written
    body = {k: fp[k] for k in ("instrument", "yardstick", "system")}
    assert fp["digest"][7:] == hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False)
                                              .encode()).hexdigest()[:32]


def test_the_same_inputs_elsewhere_have_the_same_fingerprint_and_a_change_shows(tmp_path):
    one = _inputs(tmp_path / "one")
    two = _inputs(tmp_path / "other" / "place")
    assert fingerprint(one, _Target()) == fingerprint(two, _Target())
    (two.goldset).write_text("- id: q1\n  question: what now?\n", encoding="utf-8")
    changed = flatten(fingerprint(two, _Target()))
    same = flatten(fingerprint(one, _Target()))
    assert [k for k in same if same[k] != changed[k]] == ["digest", "yardstick.goldset"]
    assert flatten(fingerprint(one, _Target("xyz")))["system.target"] == "t:xyz"
    moved = SimpleNamespace(**{**vars(one), "identities": {"anna": ("sales",)}})
    assert flatten(fingerprint(moved, _Target()))["yardstick.identities"] != same["yardstick.identities"]


def test_every_fingerprinted_package_is_pinned():
    """A misspelt distribution name would silently drop out of the fingerprint."""
    def norm(name: str) -> str:  # PEP 503
        return re.sub(r"[-_.]+", "-", name).lower()

    pinned = {norm(line.split("==")[0].strip()) for line in
              (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines() if "==" in line}
    missing = [p for p in PACKAGES if p != "ragdiag" and norm(p) not in pinned]
    assert not missing


def test_flatten_names_leaves_by_dotted_path():
    assert flatten({"a": {"b": 1, "c": {"d": "x"}}, "e": None}) == {"a.b": 1, "a.c.d": "x", "e": None}


def test_the_findings_schema_describes_the_fingerprint(tmp_path):
    import jsonschema

    schema = json.loads((ROOT / "ragdiag" / "model" / "findings.schema.json").read_text(encoding="utf-8"))
    sub = schema["properties"]["meta"]["properties"]["fingerprint"]
    fp = fingerprint(_inputs(tmp_path), _Target())
    jsonschema.validate(fp, sub)
    broken = {**fp, "digest": "md5:1"}
    assert list(jsonschema.Draft202012Validator(sub).iter_errors(broken))


def test_group_digest_names_one_group_and_moves_with_it():
    fp = {"instrument": {"packages": {"torch": "2.13.0"}, "python": "3.11"}, "system": {"config": "sha256:ab"}}
    same = {"instrument": {"python": "3.11", "packages": {"torch": "2.13.0"}}, "system": {"config": "sha256:cd"}}
    other = {"instrument": {"packages": {"torch": "2.14.0"}, "python": "3.11"}}
    expected = "sha256:" + hashlib.sha256(json.dumps(fp["instrument"], sort_keys=True).encode()).hexdigest()[:32]
    assert group_digest(fp, "instrument") == expected == group_digest(same, "instrument")  # key order is no change
    assert group_digest(other, "instrument") != expected
    assert group_digest(fp, "yardstick") is None
