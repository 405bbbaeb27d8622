"""The JSON Schema of the findings file ships in the package and matches real output of
`AuditResult.to_dict()`: synthetic findings with every field, a code-only audit of the
sample's client app, and (slow) the full sample audit."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from ragdiag.inputs.checklist import load_checklist
from ragdiag.model.findings import AuditResult, Evidence, Finding, Location, RequestFailure
from ragdiag.model.messages import Message

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def validator():
    import jsonschema

    schema = json.loads((files("ragdiag.model") / "findings.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _valid(validator, data):
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message[:200]}" for e in errors[:5])


def test_every_field_of_a_synthetic_result(validator):
    r = AuditResult(findings=(
        Finding("pool_size", "fail", "pool 20 < 50", metrics={"pool": 20, "share": 0.5, "ok": False,
                                                              "label": "x", "none": None},
                evidence=(Evidence("Pools", ("profile", "pool", "extra"),
                                   (("definition", 20, ("a", 1)), ("fact", None, {"k": [1, 2]})),
                                   note="n", title_msg=Message("pool_size.t_configured")),),
                recommendations=("set k = 50",), figures=("pool_size_histogram",),
                locations=(Location("api.py", 23, "f-string filter", "error",
                                    Message("acl_trimming.x", {"n": 1})),),
                observed={"profiles": 7}, headline_msgs=(Message("pool_size.configured_below",
                                                                 {"profile": "d", "pool": 20}),)),
        Finding("goldset", "skipped", "Skipped: no goldset", skipped_reason="no goldset",
                skipped_msg=Message("common.input_missing_goldset")),
        Finding("acl_trimming", "error", "Error: 5 of 5 failed",
                incomplete={"failed_requests": 5, "requests": 5, "above_threshold": 1},
                failures=(RequestFailure("HTTP 503", None, 5),)),
    ), meta={"date": "2026-01-01T00:00:00+00:00", "runner": {"sent": 3}, "target": "t", "policy": None})
    data = json.loads(r.to_json())
    _valid(validator, data)
    assert AuditResult.from_dict(data) == r


@pytest.mark.parametrize(("path", "value"), [
    (("worst",), "bad"), (("findings", 0, "status"), "ok"), (("summary", "pass"), -1),
    (("findings", 0, "locations"), [{"file": "a.py", "line": 0}]),
    (("findings", 1, "skipped_reason"), ""),
])
def test_the_schema_rejects_what_ragdiag_never_writes(validator, path, value):
    data = AuditResult(findings=(Finding("call_sites", "fail", "h"),
                                 Finding("goldset", "skipped", "s", skipped_reason="r"))).to_dict()
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert list(validator.iter_errors(data))


def test_nondeterministic_fields_are_marked_and_listed(validator):
    schema = validator.schema
    pointers = schema["x-nondeterministic-fields"]
    assert {"/meta/date", "/meta/runner", "/meta/target_stats"} <= set(pointers)
    for pointer in pointers:  # each pointer names a property that carries the mark
        node = schema
        for part in pointer.strip("/").split("/"):
            node = node["properties"][part]
        assert node.get("x-nondeterministic") is True, pointer
    marked = [f"/meta/{k}" for k, v in schema["properties"]["meta"]["properties"].items()
              if v.get("x-nondeterministic")]
    assert sorted(marked) == sorted(pointers)


def test_a_code_only_audit_validates(validator, tmp_path):
    from ragdiag.audit import run_audit

    cfg = tmp_path / "audit.toml"
    code = ROOT / "ragdiag" / "sample" / "data" / "client_app"
    cfg.write_text(f'[audit]\nname = "code"\n\n[inputs]\nclient_code = {json.dumps(str(code))}\n', encoding="utf-8")
    result = run_audit(cfg)
    assert {f.status for f in result.findings} >= {"fail", "skipped"}
    _valid(validator, json.loads(result.to_json()))


@pytest.mark.slow
def test_the_full_sample_audit_validates(validator, misconfigured_ctx):
    from ragdiag.audit import run_checks

    data = json.loads(run_checks(misconfigured_ctx).to_json())
    assert len(data["findings"]) == len(load_checklist())
    _valid(validator, data)


def test_the_loss_funnel_and_the_ablation_of_an_audit_validate(validator, tmp_path):
    from ragdiag.audit import run_checks
    from tests import worlds

    target = worlds.topic_world(tmp_path)
    ctx = worlds.context(target, worlds.policy_text(filter='"zq_tier eq 1"', scoring_profile='"pageboost"'))
    result = run_checks(ctx, checks=["prerank_filters", "reranker_scores"], stop_on_signals=False)
    data = json.loads(result.to_json())
    assert data["loss_funnel"]["status"] == "measured" and data["ablation"]["status"] == "measured"
    _valid(validator, data)
    # the owner's verdict is what the JSON reports per element
    clause = next(e for e in data["ablation"]["elements"] if e["id"] == "fact:filter_clause[1]")
    assert clause["verdict"] == "hurts" and clause["judged_by"] == "prerank_filters"
    assert {f["check_id"]: f["priority"] for f in data["findings"]}["prerank_filters"] == "measured"
    again = AuditResult.from_dict(data)
    assert again.loss_funnel == result.loss_funnel and again.ablation == result.ablation
    # a bad stage is refused by the schema
    bad = json.loads(json.dumps(data))
    bad["loss_funnel"]["sources"][0]["stage"] = "somewhere"
    assert list(validator.iter_errors(bad))


def test_a_run_of_a_check_that_reads_no_measurement_measures_nothing(tmp_path):
    from ragdiag.audit import run_checks
    from tests import worlds

    ctx = worlds.context(worlds.topic_world(tmp_path), worlds.policy_text())
    result = run_checks(ctx, checks=["goldset"], stop_on_signals=False)
    assert result.loss_funnel is None and result.ablation is None
    assert "loss_funnel" not in result.to_dict()
