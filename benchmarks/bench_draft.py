"""Validity of a drafted goldset: does it rank retrieval configurations the way a real one does?

For each collection, every profile is run on the real goldset and on a goldset drafted by
`ragdiag goldset draft` (rules, no LLM) from the same index, and the two orderings of the
profiles by nDCG@10 (and recall@50) are compared with Kendall's tau (scipy). Also written:
the drafted files and a sample of 50 drafted expected sources for the spot check in
benchmarks/draft.md.

- sample: the Muster AG sample, real goldset sample_data/goldset.yaml (230 cases); profiles
  keyword only, vector only, hybrid, hybrid + semantic (one profile for every intent) and the
  sample's misconfigured and tuned policies (routed by intent).
- Vaswani (NPL): 11,429 physics abstracts, 93 topics with TREC qrels (the real goldset),
  through the local target as benchmarks/realcorpus.py builds it; profiles keyword only,
  vector only, hybrid, and each of them with semantic ranking.

    python benchmarks/bench_draft.py [--seeds 0 1 2] [--per-intent 30] [--vaswani-per-intent 100]
    python benchmarks/bench_draft.py --collections cisi cacm xquad-de [--label first-pass]

`--collections`: three public collections new to the project (benchmarks/collections_data.py,
systems as bench_baseline.py builds them); six profiles (keyword, vector, hybrid, each with and
without semantic ranking); tau of each seed's draft against the real judgements, and between
the seeds' drafts (the draft's own agreement). Drafted files stay under the collection's work
folder (they quote the collection); figures in benchmarks/results/draft-collections-<label>.json.

Reads ../shared/data/vaswani (benchmarks only). Writes benchmarks/results/draft.json and the
drafted goldsets benchmarks/results/draft-*.yaml.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
WORK = HERE / ".work" / "vaswani-audit"
RESULTS = HERE / "results"
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

_ONE_PROFILE = """\
[policy]
name = "{name}"
security_field = "{security}"
[routes]
default = "main"
[defaults]
search_fields = {fields}
keyword_text = "{keyword}"
top = 10
{semantic}
[profiles.main]
description = "{name}"
{vectors}
"""
_VECTOR = """  [[profiles.main.vector_queries]]
  fields = ["content_vector"]
  k = 50
"""
_SEMANTIC = 'query_type = "semantic"\nsemantic_configuration = "default"\nsemantic_text = "verbatim"\n'


def one_profile(name: str, *, keyword: bool, vector: bool, semantic: bool, fields: list[str],
                security: str = "group_ids"):
    from ragdiag.policy.load import loads_policy

    text = _ONE_PROFILE.format(name=name, security=security, fields=json.dumps(fields),
                               keyword="verbatim" if keyword else "none",
                               semantic=_SEMANTIC if semantic else "", vectors=_VECTOR if vector else "")
    return loads_policy(text, path=f"<{name}>", default_name=name)


def basic_profiles(fields: list[str], security: str, with_semantic_variants: bool) -> dict:
    out = {
        "keyword only": one_profile("keyword", keyword=True, vector=False, semantic=False, fields=fields,
                                    security=security),
        "vector only": one_profile("vector", keyword=False, vector=True, semantic=False, fields=fields,
                                   security=security),
        "hybrid": one_profile("hybrid", keyword=True, vector=True, semantic=False, fields=fields, security=security),
        "hybrid + semantic": one_profile("hybrid-semantic", keyword=True, vector=True, semantic=True, fields=fields,
                                         security=security),
    }
    if with_semantic_variants:
        out["keyword + semantic"] = one_profile("keyword-semantic", keyword=True, vector=False, semantic=True,
                                                fields=fields, security=security)
        out["vector + semantic"] = one_profile("vector-semantic", keyword=False, vector=True, semantic=True,
                                               fields=fields, security=security)
    return out


def metrics_of(ctx, policy, goldset) -> dict:
    # run_gold caches by (policy, case ids); drafts of different seeds reuse the same ids
    # (draft-fact-007, ...), so each goldset must be run afresh, not answered from that cache
    ctx.forget_gold_runs()
    run = ctx.run_gold(policy, cases=list(goldset), label=f"{policy.name}:{goldset.path}")
    ev = run.evaluation(goldset)
    return {"ndcg@10": round(ev.aggregate["ndcg@10"], 4), "recall@50": round(ev.aggregate["recall@50"], 4),
            "questions": len(ev)}


def tau(a: list[float], b: list[float]) -> dict:
    from scipy.stats import kendalltau

    res = kendalltau(a, b)
    return {"tau": round(float(res.statistic), 3), "p": round(float(res.pvalue), 4)}


def compare_rankings(ctx, profiles: dict, real, drafted: dict) -> dict:
    rows = {name: {"real": metrics_of(ctx, pol, real)} for name, pol in profiles.items()}
    out: dict = {"profiles": rows, "tau": {}}
    for label, gs in drafted.items():
        for name, pol in profiles.items():
            rows[name][label] = metrics_of(ctx, pol, gs)
        out["tau"][label] = {m: tau([rows[n]["real"][m] for n in profiles], [rows[n][label][m] for n in profiles])
                             for m in ("ndcg@10", "recall@50")}
    return out


def draft_path(name: str, seed: int) -> Path:
    """Drafted files: the sample's in results/ (our own text); Vaswani's under .work/ (its
    evidence quotes the collection, which the repository does not redistribute)."""
    return (RESULTS if name == "sample" else WORK) / f"draft-{name}-seed{seed}.yaml"


def draft_file(target, name: str, *, per_intent: int, seed: int, identities, security_field):
    from ragdiag.drafting import draft_goldset, write_draft
    from ragdiag.inputs.goldset import load_goldset

    t = time.perf_counter()
    d = draft_goldset(target, per_intent=per_intent, seed=seed, identities=identities,
                      security_field=security_field)
    wall = time.perf_counter() - t
    path = write_draft(d, draft_path(name, seed), source=name)
    return load_goldset(path), {"wall_s": round(wall, 1), **d.summary()}


def sample(seeds: list[int], per_intent: int) -> dict:
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config
    from ragdiag.sample.system import sample_config, sample_dir

    config = load_config(sample_config())
    ctx = build_context(config, progress=False, cache_dir=Path(tempfile.mkdtemp(prefix="bench-draft-")))
    fields = ["content", "title", "section_title"]
    profiles = basic_profiles(fields, "group_ids", with_semantic_variants=False)
    profiles["misconfigured policy"] = ctx.policy
    profiles["tuned policy"] = ctx.compare_policy
    drafted, summaries = {}, {}
    for seed in seeds:
        gs, summary = draft_file(ctx.target, "sample", per_intent=per_intent, seed=seed,
                                 identities=config.identities, security_field="group_ids")
        drafted[f"draft seed {seed}"] = gs
        summaries[f"draft seed {seed}"] = summary
    out = compare_rankings(ctx, profiles, ctx.goldset, drafted)
    out["drafts"] = summaries
    out["real_goldset"] = str(sample_dir() / "goldset.yaml")
    return out


def vaswani(seeds: list[int], per_intent: int) -> dict:
    os.environ["RAGDIAG_CACHE"] = str(WORK / "cache")
    if not (WORK / "audit-plain.toml").exists():
        import realcorpus

        realcorpus.write_inputs()
    from ragdiag.audit import build_context
    from ragdiag.inputs.config import load_config

    config = load_config(WORK / "audit-plain.toml")
    ctx = build_context(config, progress=True, cache_dir=Path(tempfile.mkdtemp(prefix="bench-draft-v-")))
    profiles = basic_profiles(["content"], "group_ids", with_semantic_variants=True)
    drafted, summaries = {}, {}
    for seed in seeds:
        gs, summary = draft_file(ctx.target, "vaswani", per_intent=per_intent, seed=seed, identities={},
                                 security_field=None)
        drafted[f"draft seed {seed}"] = gs
        summaries[f"draft seed {seed}"] = summary
    out = compare_rankings(ctx, profiles, ctx.goldset, drafted)
    out["drafts"] = summaries
    return out


def spot_check_sample(n_sample: int, n_vaswani: int, seed: int = 0) -> list[dict]:
    """The drafted expected sources to read by hand: the first (grade 3) source of answerable
    drafted cases, drawn with a fixed seed across rules."""
    import yaml

    rng = random.Random(seed)
    picks = []
    for name, n in (("sample", n_sample), ("vaswani", n_vaswani)):
        path = draft_path(name, 0)
        if not path.exists() or n == 0:
            continue
        cases = [c for c in yaml.safe_load(path.read_text()) if c.get("expect_sources")]
        for c in rng.sample(cases, min(n, len(cases))):
            pick = {"collection": name, "id": c["id"], "rule": c["rule"], "question": c["question"],
                    "source": c["expect_sources"][0]["key"], "sources": len(c["expect_sources"]),
                    "answer": c.get("expect_answer_contains", [])}
            if name == "vaswani":  # ids only: the questions are made of the collection's words
                pick.pop("question")
            picks.append(pick)
    return picks


def collection(name: str, seeds: list[int], per_intent: int) -> dict:
    import dataclasses

    from bench_baseline import context, work_dir

    from ragdiag.drafting import draft_goldset, write_draft
    from ragdiag.drafting.agreement import expected_agreement
    from ragdiag.inputs.goldset import load_goldset

    ctx = context(name)
    profiles = basic_profiles(["title", "content"], "group_ids", with_semantic_variants=True)
    # the six profiles as one policy: what `ragdiag goldset draft` ranks for its expected agreement
    slug = {n: n.replace(" + ", "_").replace(" ", "_") for n in profiles}
    six = dataclasses.replace(ctx.policy, default_route=None, routes={},
                              profiles={slug[n]: dataclasses.replace(p.profiles["main"], name=slug[n])
                                        for n, p in profiles.items()})
    drafted, summaries, objs = {}, {}, {}
    for seed in seeds:
        t = time.perf_counter()
        d = draft_goldset(ctx.target, per_intent=per_intent, seed=seed, identities={}, security_field=None)
        objs[seed] = d
        wall = time.perf_counter() - t
        path = write_draft(d, work_dir() / name / f"draft-seed{seed}.yaml", source=name)
        drafted[f"draft seed {seed}"] = load_goldset(path)
        summaries[f"draft seed {seed}"] = {"wall_s": round(wall, 1), **d.summary()}
    out = compare_rankings(ctx, profiles, ctx.goldset, drafted)
    labels = list(drafted)
    out["seed_agreement"] = {f"{a} vs {b}": tau([out["profiles"][n][a]["ndcg@10"] for n in profiles],
                                                 [out["profiles"][n][b]["ndcg@10"] for n in profiles])
                             for i, a in enumerate(labels) for b in labels[i + 1:]}
    out["drafts"] = summaries
    # the draft's own expected agreement, as the command reports it: seed s against seed s + 1,
    # with the collection's questions (never its judgements) as the questions the system really
    # gets (what `goldset draft` reads from [inputs] query_log or goldset), and without them
    real = [c.question for c in ctx.goldset]
    out["expected_agreement"] = {
        f"seed {a} with {b}": expected_agreement(ctx.target, six, [objs[a], objs[b]], real_questions=real,
                                                 real_source="collection's questions")
        for a, b in zip(seeds, seeds[1:], strict=False)}
    out["expected_agreement_without_real_questions"] = {
        f"seed {a} with {b}": {k: v for k, v in expected_agreement(ctx.target, six, [objs[a], objs[b]]).items()
                               if k in ("tau", "trusted", "status", "verdict")}
        for a, b in zip(seeds, seeds[1:], strict=False)}
    return out


def main_collections(names: list[str], seeds: list[int], per_intent: int, label: str) -> None:
    result = {}
    for name in names:
        result[name] = collection(name, seeds, per_intent)
        r = result[name]
        print(f"\n{name}: nDCG@10 real | " + " | ".join(r["tau"]))
        for pname, row in r["profiles"].items():
            print(f"  {pname:22s} {row['real']['ndcg@10']:.3f} | "
                  + " | ".join(f"{row[lab]['ndcg@10']:.3f}" for lab in r["tau"]))
        for lab, v in r["tau"].items():
            print(f"  {lab}: tau nDCG@10 {v['ndcg@10']['tau']} (p {v['ndcg@10']['p']}), "
                  f"recall@50 {v['recall@50']['tau']}")
        for lab, v in r["seed_agreement"].items():
            print(f"  {lab}: tau {v['tau']}")
        for lab, v in r["expected_agreement"].items():
            print(f"  expected agreement {lab}: tau {v['tau']}, families {v['families']['tau']}, "
                  f"status {v['status']}: {v['verdict']}")
            w = v.get("workload") or {}
            for part in ("drafted", "real"):
                if part in w:
                    print(f"    {part}: " + ", ".join(f"{k} {w[part][k]}" for k in ("questions", "words", "first_hit",
                                                                                    "overlap@10")))
        for lab, v in r["expected_agreement_without_real_questions"].items():
            print(f"  without real questions {lab}: status {v['status']}")
        for lab, sm in r["drafts"].items():
            print(f"  {lab}: {sm['cases']} cases, overlap {sm['overlap']}, notes {sm['notes'][:3]}")
    out = RESULTS / f"draft-collections-{label}.json"
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(f"written {out}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collections", nargs="+", help="cisi cacm xquad-de (benchmarks/collections_data.py)")
    ap.add_argument("--label", default="after")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--per-intent", type=int, default=30)
    ap.add_argument("--vaswani-per-intent", type=int, default=100)
    ap.add_argument("--skip-vaswani", action="store_true")
    ap.add_argument("--skip-sample", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "draft.json"))
    args = ap.parse_args()
    RESULTS.mkdir(exist_ok=True)
    if args.collections:
        main_collections(args.collections, args.seeds, args.per_intent, args.label)
        return
    t = time.perf_counter()
    result = {} if args.skip_sample else {"sample": sample(args.seeds, args.per_intent)}
    if not args.skip_vaswani:
        result["vaswani"] = vaswani(args.seeds, args.vaswani_per_intent)
    result["spot_check"] = spot_check_sample(35, 15 if not args.skip_vaswani else 0)
    result["wall_s"] = round(time.perf_counter() - t, 1)
    Path(args.out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    for coll in ("sample", "vaswani"):
        if coll not in result:
            continue
        r = result[coll]
        labels = list(r["tau"])
        print(f"\n{coll}: nDCG@10 real | " + " | ".join(labels))
        for name, row in r["profiles"].items():
            print(f"  {name:22s} {row['real']['ndcg@10']:.3f} | "
                  + " | ".join(f"{row[lab]['ndcg@10']:.3f}" for lab in labels))
        for lab, v in r["tau"].items():
            print(f"  {lab}: tau nDCG@10 {v['ndcg@10']['tau']} (p {v['ndcg@10']['p']}), "
                  f"recall@50 {v['recall@50']['tau']}")
    print(f"\nwritten {args.out} ({result['wall_s']} s)")



def print_spot_check(path: str) -> None:
    """Print the spot-check cases with the text of every expected source (for reading by hand)."""
    import yaml

    data = json.loads(Path(path).read_text())
    texts: dict[str, dict[str, str]] = {}
    for name, records in (("sample", ROOT / "sample_data" / "index" / "structured.jsonl"),
                          ("vaswani", WORK / "records.jsonl")):
        if records.exists():
            texts[name] = {r["key"]: r.get("content", "") for r in map(json.loads, records.open())}
    for i, pick in enumerate(data["spot_check"], 1):
        draft = yaml.safe_load(draft_path(pick["collection"], 0).read_text())
        case = next(c for c in draft if c["id"] == pick["id"])
        print(f"=== {i} {pick['collection']} {pick['id']} [{pick['rule']}] Q: {case['question']}")
        print(f"    answer: {pick['answer']}  evidence: {case.get('evidence', '')[:200]}")
        for s in case["expect_sources"]:
            text = " ".join(texts.get(pick["collection"], {}).get(s["key"], "?").split())
            print(f"    - {s['key']} (grade {s['grade']}): {text[:260]}")


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "--print-spot-check":
    print_spot_check(sys.argv[2])
    sys.exit(0)


if __name__ == "__main__":
    main()
