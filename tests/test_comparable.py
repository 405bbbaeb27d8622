"""Whether two audits can be compared (`ragdiag.ci.comparable`) and what `ragdiag diff` says about it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from ragdiag.ci.comparable import compare_fingerprints
from ragdiag.cli import main
from ragdiag.model.findings import AuditResult, Finding

FP = {"digest": "sha256:" + "0" * 32,
      "instrument": {"python": "3.11", "ragdiag_code": "sha256:aa", "packages": {"torch": "2.13.0", "numpy": "2.4.6"},
                     "models": {"embedder": "all-MiniLM-L6-v2@gt-0.1.0#float64-grid11"}},
      "yardstick": {"goldset": "sha256:g1", "checklist": "sha256:c1"},
      "system": {"target": "muster:1", "profiles": "sha256:p1"}}


def _with(**changes: str) -> dict:
    """FP with dotted-path leaves replaced: _with(**{"instrument.packages.torch": "2.14.0"})."""
    fp = copy.deepcopy(FP)
    for path, value in changes.items():
        node = fp
        *parents, last = path.split(".")
        for p in parents:
            node = node[p]
        node[last] = value
    fp["digest"] = "sha256:" + "1" * 32
    return fp


def test_same_instrument_and_yardstick_is_comparable_whatever_the_system():
    c = compare_fingerprints({"fingerprint": FP}, {"fingerprint": copy.deepcopy(FP)})
    assert c.comparable is True and not c.reasons and not c.system_changes
    assert c.sentence().startswith("comparable")
    changed = _with(**{"system.target": "muster:2", "system.profiles": "sha256:p2"})
    c = compare_fingerprints({"fingerprint": FP}, {"fingerprint": changed})
    assert c.comparable is True and not c.reasons  # what a diff is for
    assert c.system_changes == ("system.profiles: sha256:p1 -> sha256:p2", "system.target: muster:1 -> muster:2")


def test_another_package_model_goldset_or_checklist_is_not_comparable():
    for path, value in (("instrument.packages.torch", "2.14.0"), ("instrument.ragdiag_code", "sha256:bb"),
                        ("instrument.models.embedder", "all-MiniLM-L6-v2@gt-0.1.0#float32-grid11"),
                        ("yardstick.goldset", "sha256:g2"), ("yardstick.checklist", "sha256:c2")):
        c = compare_fingerprints({"fingerprint": FP}, {"fingerprint": _with(**{path: value})})
        assert c.comparable is False, path
        assert len(c.reasons) == 1 and c.reasons[0].startswith(path + ": "), c.reasons
        assert "NOT comparable" in c.sentence() and path in c.sentence()
    removed = copy.deepcopy(FP)
    del removed["instrument"]["packages"]["numpy"]
    c = compare_fingerprints({"fingerprint": FP}, {"fingerprint": removed})
    assert c.reasons == ("instrument.packages.numpy: 2.4.6 -> (none)",)


def test_an_audit_without_a_fingerprint_cannot_be_judged():
    c = compare_fingerprints({}, {"fingerprint": FP})
    assert c.comparable is None and c.missing == ("old",)
    assert "old audit has no fingerprint" in c.sentence()
    assert compare_fingerprints({"fingerprint": FP}, {"fingerprint": "x"}).missing == ("new",)


def test_markdown_warns_only_when_not_comparable():
    assert "Warning" not in compare_fingerprints({"fingerprint": FP}, {"fingerprint": FP}).markdown()
    many = _with(**{f"instrument.packages.p{i}": "1" for i in range(8)})
    md = compare_fingerprints({"fingerprint": FP}, {"fingerprint": many}).markdown()
    assert md.count("> - instrument.packages.p") == 8 and "**Warning:**" in md


def _write(tmp_path: Path, name: str, fp: dict | None) -> str:
    meta = {"fingerprint": fp} if fp is not None else {}
    path = tmp_path / name
    AuditResult(findings=(Finding("goldset", "pass", "fine", metrics={"ndcg@10": 0.5}),), meta=meta).to_json(path)
    return str(path)


def test_cli_diff_says_whether_the_audits_are_comparable(tmp_path, capsys):
    old = _write(tmp_path, "old.json", FP)
    same = _write(tmp_path, "same.json", copy.deepcopy(FP))
    other = _write(tmp_path, "torch.json", _with(**{"instrument.packages.torch": "2.14.0"}))
    legacy = _write(tmp_path, "legacy.json", None)

    assert main(["diff", old, same, "--require-comparable"]) == 0
    assert "comparable: same instrument" in capsys.readouterr().out
    assert main(["diff", old, other]) == 0  # reported, not gated, without the flag
    out = capsys.readouterr().out
    assert "NOT comparable" in out and "instrument.packages.torch: 2.13.0 -> 2.14.0" in " ".join(out.split())
    assert main(["diff", old, other, "--require-comparable"]) == 1
    capsys.readouterr()
    assert main(["diff", legacy, old, "--require-comparable"]) == 1  # cannot tell: not required-comparable
    assert "has no fingerprint" in capsys.readouterr().out

    summary = tmp_path / "summary.md"
    assert main(["diff", old, other, "--json", "--summary", str(summary)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["comparability"]["comparable"] is False
    assert data["comparability"]["reasons"] == ["instrument.packages.torch: 2.13.0 -> 2.14.0"]
    assert "**Warning:** NOT comparable" in summary.read_text(encoding="utf-8")
