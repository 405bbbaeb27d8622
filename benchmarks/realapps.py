"""Score the code scanner against real applications: call sites and the facts a consultant would report.

    .venv/bin/python benchmarks/realapps.py --root ../snapshots            # print the tables
    .venv/bin/python benchmarks/realapps.py --root ../snapshots --write     # rewrite benchmarks/realapps.md
    .venv/bin/python benchmarks/realapps.py --root ../snapshots --json out.json
    .venv/bin/python benchmarks/realapps.py --root ../snapshots --extract /path/to/mirrors

The ground truth is `benchmarks/realapps_truth.yaml` (written by reading each
application's code). `--root` holds one folder per application, named as the
truth's `dir`, with the snapshot's files (never commit them). `--extract DIR`
first writes those folders from bare git mirrors `DIR/<dir>/repo` (the commit
in the truth file; blobs the mirror lacks are skipped). A folder whose
`.snapshot_commit` differs from the truth's commit is reported, not scored.

Scores. Sites: a truth site is *found* when the scanner reports a search call
within 3 lines (same notebook cell) with the same class, *partly* with another
class, *missed* otherwise; scanner sites matching no truth site are false
positives (precision). Facts: each `check` returns found / partly / missed /
wrong (the scanner asserts something else). Phase 2 re-scores with the checks
by replacing `scan_facts` with the checks' findings.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragdiag.codescan import CodeScan, scan_path  # noqa: E402

TRUTH = Path(__file__).with_name("realapps_truth.yaml")
REPORT = Path(__file__).with_name("realapps.md")
STATUSES = ("found", "partly", "missed", "wrong")


# ---- snapshots --------------------------------------------------------------------------------------------

def extract(mirror: Path, out: Path, commit: str) -> None:
    """Write the tree of `commit` from the bare repository `mirror` into `out` (absent blobs skipped)."""
    listing = subprocess.run(["git", "--git-dir", str(mirror), "ls-tree", "-r", "-z", commit],
                             check=True, capture_output=True).stdout.decode("utf-8", "replace")
    entries = []
    for item in listing.split("\0"):
        if not item:
            continue
        meta, path = item.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000":
            entries.append((sha, path))
    proc = subprocess.Popen(["git", "--git-dir", str(mirror), "cat-file", "--batch"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for sha, path in entries:
        proc.stdin.write(f"{sha}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().decode().split()
        if len(header) < 3 or header[1] == "missing":
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    proc.stdin.close()
    proc.wait()
    (out / ".snapshot_commit").write_text(commit + "\n")


# ---- matching sites -----------------------------------------------------------------------------------------

def _g(obj: Any, name: str, default: Any) -> Any:
    """An attribute a scanner of another version may lack (so the same truth scores the old scanner too)."""
    return getattr(obj, name, default)


def _cls(site: Any) -> str:
    return getattr(site, "site_class", "request")


def parse_at(at: str) -> tuple[str, int | None, int]:
    """`file:line` -> (file, None, line); `file#cell3:12` -> (file, 3, 12)."""
    m = re.match(r"(.+?)#cell(\d+):(\d+)$", at)
    if m:
        return m.group(1), int(m.group(2)), int(m.group(3))
    file, _, line = at.rpartition(":")
    return file, None, int(line)


def site_pos(site: Any) -> tuple[str, int | None, int]:
    if getattr(site, "cell", ""):
        cell, _, line = site.cell.partition(":")
        return site.file, int(cell), int(line)
    return site.file, None, site.line


def near(a: tuple[str, int | None, int], b: tuple[str, int | None, int], slack: int = 3) -> bool:
    return a[0] == b[0] and a[1] == b[1] and abs(a[2] - b[2]) <= slack


def find_site(scan: CodeScan, at: str) -> Any:
    want = parse_at(at)
    hits = [s for s in scan.search_calls if near(site_pos(s), want)]
    return min(hits, key=lambda s: abs(site_pos(s)[2] - want[2])) if hits else None


def score_sites(scan: CodeScan, truth: list[dict[str, Any]]) -> dict[str, Any]:
    used: set[int] = set()
    rows = []
    for t in truth:
        want = parse_at(t["at"])
        cands = [s for s in scan.search_calls if id(s) not in used and near(site_pos(s), want)]
        hit = min(cands, key=lambda s: abs(site_pos(s)[2] - want[2])) if cands else None
        if hit is None:
            rows.append({"at": t["at"], "class": t["class"], "status": "missed", "scanner": ""})
            continue
        used.add(id(hit))
        status = "found" if _cls(hit) == t["class"] else "partly"
        rows.append({"at": t["at"], "class": t["class"], "status": status,
                     "scanner": f"{hit.kind} {_cls(hit)}"})
    extra = [f"{s.location}{' cell ' + _g(s, 'cell', '') if _g(s, 'cell', '') else ''} {s.kind} {_cls(s)}"
             for s in scan.search_calls if id(s) not in used]
    matched = sum(r["status"] != "missed" for r in rows)
    return {"rows": rows, "false_positives": extra, "truth": len(truth), "matched": matched,
            "class_ok": sum(r["status"] == "found" for r in rows), "reported": len(scan.search_calls)}


# ---- facts -----------------------------------------------------------------------------------------------------

def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return float(a) == float(b)
    return a == b


def check(scan: CodeScan, c: dict[str, Any]) -> tuple[str, str]:
    """(status, what the scanner said) for one fact's check."""
    t = c["type"]
    if t == "param":
        site = find_site(scan, c["at"])
        if site is None:
            return "missed", "no site"
        p = site.params.get(c["param"])
        if p is None:
            return "missed", f"{c['param']} not reported"
        ov = _g(p, "override", "")
        said = f"{c['param']}={p.value!r} ({p.source}{', override ' + ov if ov else ''})"
        if not p.resolved:
            return "partly", said
        if not _eq(p.value, c["value"]):
            return "wrong", said
        if c.get("override") and not _g(p, "override", "").startswith(c["override"]):
            return "partly", said
        return "found", said
    if t == "param_override":
        site = find_site(scan, c["at"])
        p = site.params.get(c["param"]) if site is not None else None
        if p is None:
            return "missed", "not reported"
        ov = _g(p, "override", "")
        said = f"{c['param']}: {p.source}, override {ov or '-'}"
        return ("found" if _g(p, "override", "").startswith(c["override"]) or p.source.startswith(c["override"])
                else "partly"), said
    if t == "site_kind":
        site = find_site(scan, c["at"])
        if site is None:
            return "missed", "no site"
        return ("found" if site.kind == c["kind"] else "wrong"), site.kind
    if t == "site_class":
        site = find_site(scan, c["at"])
        if site is None:
            return "missed", "no site"
        return ("found" if _cls(site) == c["class"] else "wrong"), f"{_cls(site)} ({_g(site, 'class_reason', '')})"
    if t == "class_share":
        sites = [s for s in scan.search_calls if s.file.endswith(c["suffix"])]
        if not sites:
            return "missed", "no sites"
        share = sum(_cls(s) in (c["class"], "admin") for s in sites) / len(sites)
        return ("found" if share >= c["min_share"] else "partly"), f"{share:.0%} of {len(sites)}"
    if t == "acl_mechanisms":
        got = scan.acl(c.get("scope", "request"))["mechanisms"] if hasattr(scan, "acl") else []
        return ("found" if got == c["equals"] else "wrong"), str(got)
    if t == "acl_site":
        hits = [a for a in _g(scan, "acl_sites", ()) if a.file == c["file"] and a.mechanism == c["mechanism"]]
        return ("found" if hits else "missed"), "; ".join(f"{a.location} {a.enabled_by}" for a in hits)[:120]
    if t == "fail_open":
        hits = [f for f in _g(scan, "fail_open", ()) if f.file == c["file"] and f.kind == c["kind"]]
        other = [f for f in _g(scan, "fail_open", ()) if f.file == c["file"]]
        if hits:
            return "found", hits[0].evidence[:120]
        return ("partly" if other else "missed"), "; ".join(f.kind for f in other)
    if t == "no_fail_open_kind":
        hits = [f for f in _g(scan, "fail_open", ()) if f.kind == c["kind"] and f.site_class == "request"]
        return ("found" if not hits else "wrong"), "; ".join(f.location for f in hits)
    if t == "security_filter":
        hits = [f for f in scan.security_filters if f.file == c["file"]]
        if not hits:
            return "missed", "no security filter"
        if c.get("field_var"):  # noqa: SIM102
            ok = any(any(x.startswith("{") for x in f.fields) for f in hits)
            return ("found" if ok else "partly"), str([f.fields for f in hits])
        return "found", str([f.fields for f in hits])
    if t == "centralisation":
        got = scan.centralisation()["verdict"] if hasattr(scan, "centralisation") else (
            "scattered" if len(scan.builder_modules()) > 1 else "central" if scan.builder_modules() else "none")
        return ("found" if got == c["verdict"] else "wrong"), f"{got} {scan.builder_modules()}"
    if t == "drift":
        try:
            got = [d.param for d in scan.drift(c.get("scope", "request"))]
        except TypeError:  # a scanner without scopes
            got = [d.param for d in scan.drift()]
        return ("found" if got == c["equals"] else "wrong"), str(got)
    if t == "budget_unit":
        hits = [b for b in _g(scan, "budget_units", ()) if b.file == c["file"] and b.kind == c["kind"]]
        return ("found" if hits else "missed"), "; ".join(b.expression for b in hits)[:120]
    if t == "threshold":
        hits = [x for x in _g(scan, "thresholds", ()) if x.file == c["file"]]
        if not hits:
            return "missed", "no threshold"
        h = hits[0]
        said = f"{h.field} {h.op} {h.value.value!r} measure={h.measure} reversed={h.reversed} after_top={h.after_top}"
        ok = h.measure == c["measure"] and h.reversed == c["reversed"] and h.after_top == c["after_top"]
        return ("found" if ok else "partly"), said
    if t == "delegated":
        hits = [d for d in _g(scan, "delegated", ()) if d.file == c["file"] and d.kind == c["kind"]]
        if not hits:
            return "missed", "not reported"
        want = c.get("settings", {})
        for d in hits:
            if all(_eq(d.value(k), v) for k, v in want.items()):
                return "found", f"{d.location} {d.framework} {dict((k, d.value(k)) for k in want)}"
        d = hits[0]
        return "partly", f"{d.location} {dict((k, d.value(k)) for k in want)}"
    if t == "delegated_override":
        hits = [d for d in _g(scan, "delegated", ()) if d.file == c["file"] and c["setting"] in d.settings]
        if not hits:
            return "missed", "not reported"
        got = _g(hits[0].settings[c["setting"]], "override", "")
        return ("found" if got.upper() == c["override"].upper() else "partly"), got
    if t == "frontend_default":
        hits = [f for f in _g(scan, "frontend_defaults", ()) if f.file == c["file"] and f.name == c["name"]]
        if not hits:
            return "missed", "not reported"
        f = hits[0]
        said = f"{f.name}={f.value.value!r} sent as {f.sent_as or '?'}"
        if not _eq(f.value.value, c["value"]):
            return "wrong", said
        return ("found" if f.sent_as == c.get("sent_as", f.sent_as) else "partly"), said
    if t == "goldset":
        hits = [g for g in scan.goldset_files if g.path == c["path"]]
        if not hits:
            res = [g for g in _g(scan, "eval_result_files", ()) if g.path == c["path"]]
            return ("wrong" if res else "missed"), "listed as eval results" if res else "not listed"
        kind = _g(hits[0], "kind", "goldset")
        return ("found" if kind == c["kind"] else "partly"), f"{kind}: {_g(hits[0], 'evidence', '')}"
    if t == "eval_results":
        if any(g.path == c["path"] for g in _g(scan, "eval_result_files", ())):
            return "found", "eval results"
        return ("wrong" if any(g.path == c["path"] for g in scan.goldset_files) else "missed"), ""
    if t == "not_goldset":
        return ("wrong" if any(g.path == c["path"] for g in scan.goldset_files) else "found"), ""
    if t == "goldset_count":
        n = len(scan.goldset_files)
        return ("found" if n == c["equals"] else "wrong"), f"{n}: {[g.path for g in scan.goldset_files]}"
    if t == "no_site_in":
        hits = [s.location for s in scan.search_calls if s.file.startswith(c["prefix"])]
        return ("found" if not hits else "wrong"), ", ".join(hits)
    if t == "no_site_at":
        return ("found" if find_site(scan, c["at"]) is None else "wrong"), ""
    if t == "no_request_site_in":
        hits = [s.location for s in scan.search_calls if _cls(s) == "request" and s.file.endswith(c["suffix"])]
        return ("found" if not hits else "wrong"), ", ".join(hits)
    if t == "agent_graph":
        hits = [g for g in _g(scan, "agent_graphs", ()) if g.file == c["file"]]
        if not hits:
            return "missed", "not reported"
        g = hits[0]
        return "found", f"nodes={list(g.nodes)[:5]} search={list(g.search_nodes)} unsecured={list(g.unsecured_search_nodes)}"
    if t == "unescaped_filter":
        hits = [s for s in scan.search_calls if s.file == c["file"] and s.params.get("filter") is not None
                and s.params["filter"].from_fstring and s.params["filter"].fstring_vars
                and not any(re.search(r"escape|quote|sanitiz", v, re.I) for v in s.params["filter"].fstring_vars)]
        hits += [f for f in scan.security_filters if f.file == c["file"] and f.injection_risk]
        return ("found" if hits else "missed"), ""
    if t == "sql_text_pool":
        hits = [s for s in scan.search_calls if s.file == c["file"] and s.params.get("text_k") is not None]
        return ("found" if hits and _eq(hits[0].params["text_k"].value, c["value"]) else "missed"), ""
    raise ValueError(f"unknown check type {t!r}")


# ---- the run ----------------------------------------------------------------------------------------------------

def run(root: Path, only: list[str] | None = None) -> list[dict[str, Any]]:
    truth = yaml.safe_load(TRUTH.read_text(encoding="utf-8"))["repos"]
    out = []
    for repo in truth:
        if only and repo["dir"] not in only and repo["repo"] not in only:
            continue
        folder = root / repo["dir"]
        entry: dict[str, Any] = {"repo": repo["repo"], "commit": repo["commit"], "languages": repo.get("languages", [])}
        if not folder.is_dir():
            entry["error"] = f"snapshot not found at {folder}"
            out.append(entry)
            continue
        stamp = folder / ".snapshot_commit"
        if stamp.exists() and stamp.read_text().strip() != repo["commit"]:
            entry["error"] = f"snapshot is at {stamp.read_text().strip()}, truth at {repo['commit']}"
            out.append(entry)
            continue
        scan = scan_path(folder)
        entry["files_scanned"] = scan.files_scanned
        entry["sites"] = score_sites(scan, repo["sites"])
        facts = []
        for f in repo["facts"]:
            status, said = check(scan, f["check"])
            facts.append({"id": f["id"], "text": f["text"], "status": status, "scanner": said})
        entry["facts"] = facts
        out.append(entry)
    return out


def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    t = {"truth_sites": 0, "matched": 0, "class_ok": 0, "reported": 0, "facts": 0,
         **{s: 0 for s in STATUSES}}
    for r in results:
        if "sites" not in r:
            continue
        s = r["sites"]
        t["truth_sites"] += s["truth"]
        t["matched"] += s["matched"]
        t["class_ok"] += s["class_ok"]
        t["reported"] += s["reported"]
        for f in r["facts"]:
            t["facts"] += 1
            t[f["status"]] += 1
    t["recall"] = t["matched"] / t["truth_sites"] if t["truth_sites"] else 0.0
    t["precision"] = t["matched"] / t["reported"] if t["reported"] else 0.0
    t["fact_share"] = t["found"] / t["facts"] if t["facts"] else 0.0
    return t


def markdown(results: list[dict[str, Any]]) -> str:
    tot = totals(results)
    lines = ["| repository | commit | files | sites (truth) | recall | precision | class right | facts | found | "
             "partly | missed | wrong |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        if "sites" not in r:
            lines.append(f"| {r['repo']} | `{r['commit'][:10]}` | - | - | - | - | - | - | - | - | - | - |")
            continue
        s = r["sites"]
        counts = {k: sum(f["status"] == k for f in r["facts"]) for k in STATUSES}
        rec = s["matched"] / s["truth"] if s["truth"] else 0
        prec = s["matched"] / s["reported"] if s["reported"] else 0
        lines.append(f"| {r['repo']} | `{r['commit'][:10]}` | {r['files_scanned']} | {s['truth']} | {rec:.0%} | "
                     f"{prec:.0%} | {s['class_ok']}/{s['truth']} | {len(r['facts'])} | {counts['found']} | "
                     f"{counts['partly']} | {counts['missed']} | {counts['wrong']} |")
    lines.append(f"| **total** | | | {tot['truth_sites']} | **{tot['recall']:.0%}** | **{tot['precision']:.0%}** | "
                 f"{tot['class_ok']}/{tot['truth_sites']} | {tot['facts']} | **{tot['found']}** | {tot['partly']} | "
                 f"{tot['missed']} | {tot['wrong']} |")
    out = ["\n".join(lines), ""]
    for r in results:
        if "facts" not in r:
            out.append(f"### {r['repo']}\n\n{r.get('error', '')}\n")
            continue
        out.append(f"### {r['repo']} (`{r['commit'][:10]}`)\n")
        out.append("| fact | status | the scanner's output |")
        out.append("|---|---|---|")
        for f in r["facts"]:
            said = f["scanner"].replace("|", "\\|").replace("\n", " ")[:140]
            out.append(f"| {f['text'].replace('|', '/')} | {f['status']} | {said} |")
        s = r["sites"]
        bad = [x for x in s["rows"] if x["status"] != "found"]
        if bad or s["false_positives"]:
            out.append("")
            out.append("Sites not found with their class: " + (", ".join(
                f"`{x['at']}` ({x['status']}: truth {x['class']}, scanner {x['scanner'] or '-'})" for x in bad)
                or "none") + ". False positives: " + (", ".join(f"`{x}`" for x in s["false_positives"])
                                                     or "none") + ".")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, required=True, help="folder holding one snapshot folder per application")
    ap.add_argument("--extract", type=Path, help="write missing snapshots from bare mirrors DIR/<dir>/repo first")
    ap.add_argument("--only", nargs="*", help="score only these repositories (owner/name or dir)")
    ap.add_argument("--write", action="store_true", help="rewrite the results section of benchmarks/realapps.md")
    ap.add_argument("--json", type=Path, help="write the detailed results as JSON")
    args = ap.parse_args(argv)
    if args.extract:
        for repo in yaml.safe_load(TRUTH.read_text(encoding="utf-8"))["repos"]:
            target = args.root / repo["dir"]
            mirror = args.extract / repo["dir"] / "repo"
            if not target.exists() and mirror.exists():
                extract(mirror, target, repo["commit"])
    results = run(args.root, args.only)
    text = markdown(results)
    print(text)
    tot = totals(results)
    print(f"\nsites: recall {tot['recall']:.1%}, precision {tot['precision']:.1%}; facts: {tot['found']}/{tot['facts']} "
          f"found ({tot['fact_share']:.0%}), {tot['partly']} partly, {tot['missed']} missed, {tot['wrong']} wrong")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "totals": tot}, indent=2), encoding="utf-8")
    if args.write:
        begin, end = "<!-- realapps:begin -->", "<!-- realapps:end -->"
        doc = REPORT.read_text(encoding="utf-8") if REPORT.exists() else f"{begin}\n{end}\n"
        head, _, rest = doc.partition(begin)
        _, _, tail = rest.partition(end)
        REPORT.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
