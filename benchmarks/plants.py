"""Validation on changes no rule names: thirteen planted changes on top of the tuned sample.

The world is the tuned sample (profiles/tuned.toml, audit-tuned.toml, client_app_sound) on a
local copy of the structured index with one field and one scoring profile no rule of ragdiag
names: ``rtx_band`` (``position % 3``, meaningless) and ``fresh_pick`` (a magnitude boost on
the page number). Each plant changes one thing (`PLANTS`); the truth was written before the
first run (benchmarks/funnel.md, "Planted changes"). Per plant the script audits it, reads the
owner check's status and whether it names the changed element, and measures the plant's own
harm independently of the checks: the planted profile against the control profile on the
changed route's questions (the tuner's `evaluate_profile`, paired t-test, raw p).

    python benchmarks/plants.py --out /tmp/plants [--tag after]   # -> <out>/score-<tag>.json
    python benchmarks/plants.py --out /tmp/plants --python /path/to/other/ragdiag  # another checkout

Every file it writes goes to --out (records, schema, policies, configs, findings).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"

# plant: (what changes, owner check, the text the owner must name, neutral?, route)
TRUTH = {
    "P1": ("fact: filter level eq 'evidence' and rtx_band eq 0", "prerank_filters", "rtx_band eq 0", False, "fact"),
    "P2": ("definition: scoring_profile fresh_pick (page boost x5)", "reranker_scores", "fresh_pick", False,
           "definition"),
    "P3": ("overview: both vector queries k = 3", "pool_size", "k = 3", False, "overview"),
    "P4": ("exact_id: max_text_recall_size = 5", "pool_size", "max_text_recall_size 5", False, "exact_id"),
    "P5": ("fact: vector query on title_vector", "shared_query_text", "title_vector' in profile fact", False, "fact"),
    "P6": ("table: vector weight 8.0", "pool_size", "weight 8", False, "table"),
    "P7": ("comparison: search_fields = [section_title]", "shared_query_text", "section_title' in profile comparison",
           False, "comparison"),
    "P8": ("definition: semantic_text = keywords", "shared_query_text", "semantic_text = keywords", False,
           "definition"),
    "P9": ("verification: filter level eq 'evidence' and rtx_band ge 0 (removes nothing)", "prerank_filters",
           "rtx_band ge 0", True, "verification"),
    "P10": ("table: vector_filter_mode = postFilter", "pool_size", "postFilter", False, "table"),
    "P11": ("fact: exhaustive = true (3,290 records)", "pool_size", "exhaustive", True, "fact"),
    "P12": ("fact: search_mode = all", "shared_query_text", "search_mode = all", False, "fact"),
    "P13": ("[budgets] context_tokens = 900 (code: MAX_CONTEXT_TOKENS = 6000)", "context_budgets", "900", False, None),
}
MUST_FAIL = ("P1", "P13")  # the written truth said fail, not only warn


def _edit(name: str, fn: Callable[[str], str]) -> Callable[[str], str]:
    def apply(text: str) -> str:
        m = re.search(rf"\[profiles\.{name}\]\n(.*?)(?=\n\[profiles\.|\Z)", text, re.S)
        assert m, name
        return text[:m.start()] + fn(m.group(0)) + text[m.end():]
    return apply


def _add(name: str, line: str) -> Callable[[str], str]:
    return _edit(name, lambda b: b.replace(f"[profiles.{name}]\n", f"[profiles.{name}]\n{line}\n", 1))


PLANTS: dict[str, Callable[[str], str]] = {
    "control": lambda t: t,
    "P1": _add("fact", "filter = \"level eq 'evidence' and rtx_band eq 0\""),
    "P2": _add("definition", 'scoring_profile = "fresh_pick"\nscoring_parameters = []'),
    "P3": _edit("overview", lambda b: b.replace("k = 50", "k = 3")),
    "P4": _edit("exact_id", lambda b: b.replace("max_text_recall_size = 250", "max_text_recall_size = 5")),
    "P5": _edit("fact", lambda b: b.replace('fields = ["content_vector"]', 'fields = ["title_vector"]')),
    "P6": _edit("table", lambda b: b.replace("weight = 0.7", "weight = 8.0")),
    "P7": _add("comparison", 'search_fields = ["section_title"]'),
    "P8": _add("definition", 'semantic_text = "keywords"'),
    "P9": _add("verification", "filter = \"level eq 'evidence' and rtx_band ge 0\""),
    "P10": _add("table", 'vector_filter_mode = "postFilter"'),
    "P11": _edit("fact", lambda b: b.replace("k = 50", "k = 50\n  exhaustive = true")),
    "P12": _add("fact", 'search_mode = "all"'),
    "P13": lambda t: t,
}


def build(out: Path) -> None:
    from ragdiag.model.schema import INT32, Field, ScoringFunction, ScoringProfile
    from ragdiag.sample.schema import sample_schema

    out.mkdir(parents=True, exist_ok=True)
    lines = (SAMPLE / "index" / "structured.jsonl").read_text(encoding="utf-8").splitlines()
    with (out / "records.jsonl").open("w", encoding="utf-8") as f:
        for line in lines:
            if line.strip():
                r = json.loads(line)
                r["rtx_band"] = int(r.get("position") or 0) % 3
                f.write(json.dumps(r, sort_keys=True) + "\n")
    s = sample_schema("muster-plants")
    fields = s.fields[:-3] + (Field("rtx_band", INT32, filterable=True),) + s.fields[-3:]
    boost = ScoringProfile(name="fresh_pick", functions=(ScoringFunction(
        type="magnitude", field_name="page", boost=5.0, interpolation="linear", boosting_range_start=1,
        boosting_range_end=30),))
    s = dataclasses.replace(s, fields=fields, scoring_profiles=s.scoring_profiles + (boost,))
    (out / "schema.json").write_text(json.dumps(s.to_azure(), indent=1), encoding="utf-8")
    tuned = (SAMPLE / "profiles" / "tuned.toml").read_text(encoding="utf-8")
    audit = (SAMPLE / "audit-tuned.toml").read_text(encoding="utf-8")
    audit = audit.replace('[target]\nkind = "sample"\nvariant = "structured"\n', '''[target]
kind = "local"
name = "muster-plants"
records = "records.jsonl"
schema = "schema.json"
vector_sources = { content_vector = ["content"], summary_vector = ["summary"], title_vector = ["title", "section_title"] }
now = "2026-06-30T00:00:00Z"
''')
    for key in ("goldset", "query_log", "entities", "client_code", "compare_profiles"):
        audit = re.sub(rf'^{key} = "([^"]+)"', lambda m, k=key: f'{k} = "{SAMPLE / m.group(1)}"', audit, flags=re.M)
    for pid, fn in PLANTS.items():
        (out / f"profiles-{pid}.toml").write_text(fn(tuned), encoding="utf-8")
        a = audit.replace('profiles = "profiles/tuned.toml"', f'profiles = "profiles-{pid}.toml"')
        if pid == "P13":
            a = a.replace("context_tokens = 6000", "context_tokens = 900")
        (out / f"audit-{pid}.toml").write_text(a, encoding="utf-8")


def run(out: Path, tag: str, python_path: str | None) -> None:
    env = dict(os.environ)
    if python_path:
        env["PYTHONPATH"] = python_path
    for pid in PLANTS:
        subprocess.run([sys.executable, "-m", "ragdiag", "audit", str(out / f"audit-{pid}.toml"),
                        "--json", str(out / f"out-{tag}-{pid}.json"), "--quiet"], env=env, cwd=out,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def harm(out: Path) -> dict[str, dict[str, list[float]]]:
    """Each plant against the control on its route's questions: (control, planted, delta, p) per metric."""
    from ragdiag.audit import open_audit
    from ragdiag.policy import load_policy
    from ragdiag.tuner.evaluate import evaluate_profile

    ctx = open_audit(out / "audit-control.toml", progress=False)
    result = {}
    for pid, (_what, _owner, _marker, _neutral, route) in TRUTH.items():
        if route is None:
            continue
        planted = load_policy(out / f"profiles-{pid}.toml").profiles[route]
        r = evaluate_profile(ctx, planted, ctx.policy.profiles[route])
        result[pid] = {m: [c.a_mean, c.b_mean, c.mean_delta, c.p_ttest] for m, c in r.comparisons.items()
                       if m in ("ndcg@10", "recall@50")}
    return result


def score(out: Path, tag: str, harms: dict[str, dict[str, list[float]]]) -> dict[str, object]:
    rows = []
    caught_written = caught_measured = 0
    for pid, (what, owner, marker, neutral, _route) in TRUTH.items():
        d = json.loads((out / f"out-{tag}-{pid}.json").read_text(encoding="utf-8"))
        f = next(x for x in d["findings"] if x["check_id"] == owner)
        named = marker in " ".join([f["headline"], *f["recommendations"]])
        flagged = f["status"] in ("warn", "fail") and named
        ok_written = (not named) if neutral else (f["status"] == "fail" if pid in MUST_FAIL else flagged) and named
        h = harms.get(pid)
        # the measured truth: does the plant lower a metric of its route (raw paired p < 0.05)?
        harmful = True if h is None else any(v[2] < 0 and v[3] is not None and v[3] < 0.05 for v in h.values())
        ok_measured = flagged if harmful else not named
        caught_written += ok_written
        caught_measured += ok_measured
        rows.append({"plant": pid, "change": what, "owner": owner, "status": f["status"], "names_it": named,
                     "harm": h, "harmful": harmful, "caught_written": ok_written, "caught_measured": ok_measured})
    return {"tag": tag, "caught_written_truth": caught_written, "caught_measured_truth": caught_measured,
            "plants": len(TRUTH), "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="run")
    ap.add_argument("--python", dest="python_path", default=None, help="PYTHONPATH of another ragdiag checkout")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    build(out)
    run(out, args.tag, args.python_path)
    harms = harm(out)
    s = score(out, args.tag, harms)
    (out / f"score-{args.tag}.json").write_text(json.dumps(s, indent=1), encoding="utf-8")
    for r in s["rows"]:
        print(f"{r['plant']:4s} {r['owner']:18s} {r['status']:5s} names={r['names_it']!s:5s} "
              f"harmful={r['harmful']!s:5s} written={r['caught_written']!s:5s} measured={r['caught_measured']}")
    print(f"{args.tag}: {s['caught_written_truth']} of {s['plants']} against the written truth, "
          f"{s['caught_measured_truth']} of {s['plants']} against the measured harm")


if __name__ == "__main__":
    main()
