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
wrong (the scanner asserts something else), scored twice: on the scanner's raw
records (`check`) and on the findings of a code-only audit of the snapshot
(`check_findings`: status, headline, evidence rows by key, locations), with
wrong passes of acl_trimming and context_budgets counted apart (`wrong_pass`).
Repositories with `held_out: phase2` are totalled apart from the development set, and so are those
with `held_out: wave4` (applications new to the project in wave 4, issue 25), `held_out: wave5` (a
second set new to the project, issue 25's second first pass) and `held_out: wave6` (the third first pass).
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

from ragdiag.codescan import CodeScan  # noqa: E402

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
        hits = [d for d in _g(scan, "delegated", ()) if d.file == c["file"] and c["kind"] in ("any", d.kind)]
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
    if t == "code_pool":
        from ragdiag.checks.pool_size import _semantic, _text_recall

        site = find_site(scan, c["at"])
        if site is None:
            return "missed", "no site"
        leg, text_ = _text_recall(site)
        k = site.params.get("k")
        low = (text_ or 0) + (k.value if k is not None and k.resolved and isinstance(k.value, int) else 0)
        return ("found" if (low >= 50) == c["fills_window"] and _semantic(site) != "no" else "partly"), \
            f"semantic {_semantic(site)}, text recall {text_}, k {k.value if k is not None else None}"
    if t == "budget_verdict":
        calls = [x for x in _g(scan, "llm_calls", ()) if x.file == c["file"]]
        units = [b for b in _g(scan, "budget_units", ()) if b.file == c["file"]]
        deleg = [d for d in _g(scan, "delegated", ()) if d.file == c["file"]]
        unb = [x for x in calls if x.retrieved_context and not x.context_bounded]
        counted = [x for x in unb if _g(x, "count_bound", None) is not None]  # bounded by count, not by a budget
        unb = [x for x in unb if x not in counted]
        said = (f"{len(calls)} LLM calls ({len(unb)} unbounded, {len(counted)} by count only), {len(units)} unit "
                f"issues, {len(deleg)} delegated")
        if c["unbounded"]:
            return ("found" if unb or units else "partly" if counted else "missed"), said
        return ("wrong" if unb else "found" if deleg or counted or any(x.context_bounded for x in calls)
                else "missed"), said
    if t == "filter_drift":
        for d in scan.drift():
            if any(near(parse_at(w), parse_at(c["absent_at"])) for w in d.values.get("absent", ())):
                return "found", d.param
        return "missed", str([d.param for d in scan.drift()])
    raise ValueError(f"unknown check type {t!r}")


# ---- facts, by the checks' findings --------------------------------------------------------------------------
#
# The same facts, read the way a consultant reads the report of a code-only audit (no [target]): the
# finding's status, headline, evidence rows (by their stable column keys; a computed cell is a catalogue
# message whose id says what it means) and locations. Nothing is read from the scanner here except the
# site list for `find_site`-like matching, which uses the evidence rows' places too.

#: facts whose truth says trimming is absent or fails open / the context is unbounded: a pass of the check is
#: a wrong pass (the worst bug), counted apart
ACL_TYPES = ("acl_mechanisms", "fail_open", "unescaped_filter")
BUDGET_TYPES = ("budget_unit", "budget_verdict")


def code_only_audit(folder: Path) -> tuple[Any, dict[str, Any]]:
    """The scan and the findings (check id -> Finding) of a code-only audit of `folder`."""
    import tempfile

    from ragdiag.audit import build_context, run_checks
    from ragdiag.inputs.config import load_config

    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "audit.toml"
        cfg.write_text(f"[audit]\nname = \"realapps\"\n\n[inputs]\nclient_code = {json.dumps(str(folder))}\n",
                       encoding="utf-8")
        ctx = build_context(load_config(cfg), progress=False)
        result = run_checks(ctx, stop_on_signals=False)
    return ctx.code_scan(), {f.check_id: f for f in result.findings}


def rows(f: Any, key: str) -> list[dict[str, Any]]:
    """The evidence table `key` as records; a message cell is replaced by its message name (``class_request``)."""
    ev = f.evidence_table(key) if f is not None else None
    if ev is None:
        return []
    grid = [list(r) for r in ev.rows]
    for r, c, m in ev.cell_msgs:
        grid[r][c] = m.id.split(".", 1)[1] if "." in m.id else m.id
    return [dict(zip(ev.column_keys, r, strict=True)) for r in grid]


def place(text: Any) -> tuple[str, int | None, int] | None:
    if not isinstance(text, str) or ":" not in text:
        return None
    try:
        return parse_at(text)
    except ValueError:
        return None


def at_place(text: Any, at: str, slack: int = 3) -> bool:
    got = place(text)
    return got is not None and near(got, parse_at(at), slack)


def in_file(text: Any, file: str) -> bool:
    got = place(text)
    return got is not None and got[0] == file


def msg_ids(f: Any) -> list[str]:
    return [m.id.split(".", 1)[1] for m in (f.headline_msgs if f is not None else ())] + \
        ([f.skipped_msg.id.split(".", 1)[1]] if f is not None and f.skipped_msg is not None else [])


def _said(f: Any, extra: str = "") -> str:
    if f is None:
        return "no finding"
    head = (f.skipped_reason or f.headline).replace("\n", " ")
    return f"{f.check_id} {f.status}: {extra + ' | ' if extra else ''}{head[:90]}"


def check_findings(found: dict[str, Any], c: dict[str, Any]) -> tuple[str, str]:
    """(status, what the finding says) for one fact, from the code-only audit's findings."""
    t = c["type"]
    cs, acl, cb = found.get("call_sites"), found.get("acl_trimming"), found.get("context_budgets")
    pool, rr, gold = found.get("pool_size"), found.get("reranker_scores"), found.get("goldset")
    if t in ("param", "param_override"):
        hits = [r for r in rows(cs, "site_params") if at_place(r["site"], c["at"]) and r["parameter"] == c["param"]]
        if not hits:
            col = {"k": "vector_k", "top": "top", "text_k": "text_recall"}.get(c["param"])
            prow = [r for r in rows(pool, "code_pools") if at_place(r["site"], c["at"])]
            if col and prow and prow[0][col] is not None:
                r = prow[0]
                ok = t == "param" and _eq(r[col], c.get("value"))
                return ("found" if ok and not c.get("override") else "partly" if ok else "wrong"), \
                    _said(pool, f"code_pools {col}={r[col]!r}")
            return "missed", _said(cs, f"no {c['param']} row at {c['at']}")
        r = min(hits, key=lambda r: abs(place(r["site"])[2] - parse_at(c["at"])[2]))
        said = _said(cs, f"site_params {c['param']}={r['value']!r} ({r['source']}; {r['override'] or '-'})")
        if t == "param_override":
            ok = str(r["override"]).startswith(c["override"]) or str(r["source"]).startswith(c["override"])
            return ("found" if ok else "partly"), said
        if not r["resolved"]:
            return "partly", said
        if not _eq(r["value"], c["value"]):
            return "wrong", said
        if c.get("override") and not str(r["override"]).startswith(c["override"]):
            return "partly", said
        return "found", said
    if t in ("site_kind", "site_class"):
        hits = [r for r in rows(cs, "call_sites") if at_place(r["site"], c["at"])]
        if not hits:
            return "missed", _said(cs, f"no row at {c['at']}")
        r = min(hits, key=lambda r: abs(place(r["site"])[2] - parse_at(c["at"])[2]))
        if t == "site_kind":
            return ("found" if r["kind"] == c["kind"] else "wrong"), _said(cs, f"call_sites kind {r['kind']}")
        got = str(r["site_class"]).removeprefix("class_")
        return ("found" if got == c["class"] else "wrong"), _said(cs, f"call_sites class {got}")
    if t == "class_share":
        hits = [r for r in rows(cs, "call_sites") if place(r["site"]) and place(r["site"])[0].endswith(c["suffix"])]
        if not hits:
            return "missed", _said(cs, "no rows")
        share = sum(str(r["site_class"]).removeprefix("class_") in (c["class"], "admin") for r in hits) / len(hits)
        judged = cs.status != "pass" or any(str(r["site_class"]) == "class_request" for r in hits)
        return ("found" if share >= c["min_share"] and judged else "partly"), \
            _said(cs, f"{share:.0%} of {len(hits)} {c['class']}")
    if t == "acl_mechanisms":
        mech = sorted({str(r["mechanism"]).removeprefix("mech_") for r in rows(acl, "acl_mechanisms")
                       if r["site_class"] == "class_request"})
        said = _said(acl, f"mechanisms {mech}")
        if c["equals"] == [] and acl is not None and acl.status == "pass":
            return "wrong", said
        return ("found" if mech == c["equals"] else "wrong"), said
    if t == "acl_site":
        hits = [r for r in rows(acl, "acl_mechanisms") if in_file(r["site"], c["file"])
                and r["mechanism"] == f"mech_{c['mechanism']}"]
        return ("found" if hits else "missed"), _said(acl, f"{len(hits)} mechanism rows in {c['file']}")
    if t == "fail_open":
        here = [r for r in rows(acl, "fail_open") if in_file(r["site"], c["file"])]
        hits = [r for r in here if r["kind"] == f"fo_{c['kind']}"]
        said = _said(acl, f"fail_open {[r['kind'] for r in here]}")
        if hits and acl.status == "pass":
            return "wrong", said
        return ("found" if hits else "partly" if here else "missed"), said
    if t == "no_fail_open_kind":
        hits = [r for r in rows(acl, "fail_open") if r["kind"] == f"fo_{c['kind']}" and r["site_class"] == "class_request"]
        return ("found" if not hits else "wrong"), _said(acl, f"{len(hits)} {c['kind']} rows")
    if t == "security_filter":
        hits = [r for r in rows(acl, "code_filters") if in_file(r["site"], c["file"])]
        if not hits:
            return "missed", _said(acl, "no code filter row")
        if c.get("field_var"):
            return ("found" if any("{" in str(r["expression"]) for r in hits) else "partly"), \
                _said(acl, f"code_filters {hits[0]['expression'][:50]}")
        return "found", _said(acl, "code_filters row")
    if t == "centralisation":
        mods = rows(cs, "builders")
        deleg = [r for r in rows(cs, "delegated") if r["site_class"] == "class_request"]
        got = "scattered" if len(mods) > 1 else "central" if mods else "delegated" if deleg else "none"
        if got == "scattered" and "too_many_modules" not in msg_ids(cs) and cs.status != "fail":
            got = "scattered, not said"
        return ("found" if got == c["verdict"] else "wrong"), _said(cs, f"{len(mods)} builder modules")
    if t == "drift":
        got = sorted({r["parameter"] for r in rows(cs, "drift")})
        return ("found" if got == sorted(c["equals"]) else "wrong"), _said(cs, f"drift {got}")
    if t == "filter_drift":
        hits = [r for r in rows(cs, "drift") if r["value"] == "absent" and str(r["parameter"]).startswith(
            ("filter", "security")) and any(at_place(w, c["absent_at"]) for w in r["where"])]
        return ("found" if hits else "missed"), _said(cs, f"{len(hits)} drift rows absent at the site")
    if t == "budget_unit":
        hits = [r for r in rows(cb, "budget_units") if in_file(r["site"], c["file"]) and r["kind"] == f"unit_{c['kind']}"]
        if cb is not None and cb.status == "pass":
            return "wrong", _said(cb)
        return ("found" if hits and cb.status in ("warn", "fail") else "partly" if hits else "missed"), \
            _said(cb, f"{len(hits)} budget-unit rows")
    if t == "budget_verdict":
        calls = [r for r in rows(cb, "llm_calls") if in_file(r["site"], c["file"])]
        locs = [loc for loc in (cb.locations if cb is not None else ()) if loc.file == c["file"]]
        # what a location claims: "no bound" (loc_unbounded; older findings carry no message id), or
        # "bounded by count only" (loc_count_only: the whole chunks of a fixed number of results)
        counted = [loc for loc in locs if loc.message_msg is not None and loc.message_msg.id.endswith("loc_count_only")]
        unbounded = [loc for loc in locs if loc not in counted]
        deleg = [r for r in rows(cb, "delegated_context") if in_file(r["site"], c["file"])]
        said = _said(cb, f"{len(calls)} LLM-call rows, {len(unbounded)} unbounded and {len(counted)} count-only "
                         f"locations, {len(deleg)} delegated rows in the file")
        if c["unbounded"]:
            if cb is not None and cb.status == "pass":
                return "wrong", said
            if cb is not None and cb.status in ("warn", "fail"):
                if unbounded:
                    return "found", said
                return ("partly" if counted else "found" if any(not r["bounded"] for r in calls) else "partly"), said
            return "missed", said
        if cb is not None and cb.status in ("warn", "fail") and unbounded:
            return "wrong", said
        if (cb is not None and cb.status == "pass") or deleg or counted or any(r["bounded"] for r in calls):
            return "found", said
        return "missed", said
    if t == "threshold":
        hits = [r for r in rows(rr, "code_thresholds") if in_file(r["site"], c["file"])]
        if not hits:
            return "missed", _said(rr, "no threshold row")
        r = hits[0]
        ok = r["measure"] == f"measure_{c['measure']}" and r["reversed"] == c["reversed"] \
            and r["after_top"] == c["after_top"]
        judged = (c["reversed"] and rr.status == "fail") or (c["after_top"] and rr.status in ("warn", "fail")) or \
            (not c["reversed"] and not c["after_top"])
        return ("found" if ok and judged else "partly"), _said(rr, f"{r['measure']} reversed={r['reversed']} "
                                                               f"after_top={r['after_top']}")
    if t in ("delegated", "delegated_override"):
        here = [r for r in rows(cs, "delegated") if in_file(r["site"], c["file"])
                and (c.get("kind", "any") == "any" or r["kind"] == c.get("kind"))]
        if not here:
            return "missed", _said(cs, f"no delegated row in {c['file']}")
        if t == "delegated_override":
            got = [str(r["override"]) for r in here if r["setting"] == c["setting"]]
            return ("found" if any(g.upper() == c["override"].upper() for g in got) else "partly"), \
                _said(cs, f"{c['setting']} override {got[:1]}")
        if cs.status == "skipped" and "no_call_site" in msg_ids(cs):
            return "wrong", _said(cs)
        by_site: dict[str, dict[str, Any]] = {}
        for r in here:
            by_site.setdefault(r["site"], {})[r["setting"]] = r["value"]
        want = c.get("settings", {})
        for site, settings in by_site.items():
            if all(k in settings and _eq(settings[k], v) for k, v in want.items()):
                return "found", _said(cs, f"{site} {dict((k, settings.get(k)) for k in want)}")
        site, settings = next(iter(by_site.items()))
        return "partly", _said(cs, f"{site} {dict((k, settings.get(k)) for k in want)}")
    if t == "frontend_default":
        hits = [r for r in rows(cs, "frontend_defaults") if in_file(r["site"], c["file"]) and r["name"] == c["name"]]
        if not hits:
            return "missed", _said(cs, "no frontend row")
        r = hits[0]
        if not _eq(r["value"], c["value"]):
            return "wrong", _said(cs, f"{r['name']}={r['value']!r}")
        return ("found" if r["sent_as"] == c.get("sent_as", r["sent_as"]) else "partly"), \
            _said(cs, f"{r['name']}={r['value']!r} sent as {r['sent_as']}")
    if t == "goldset":
        hits = [r for r in rows(gold, "goldset_files") if r["file"] == c["path"]]
        if not hits:
            res = [r for r in rows(gold, "eval_result_files") if r["file"] == c["path"]]
            return ("wrong" if res else "missed"), _said(gold)
        kind = str(hits[0]["kind"]).removeprefix("kind_")
        return ("found" if kind == c["kind"] and gold.status in ("warn", "fail") else "partly"), \
            _said(gold, f"{c['path']}: {kind}")
    if t == "eval_results":
        if any(r["file"] == c["path"] for r in rows(gold, "eval_result_files")):
            return "found", _said(gold, "eval_result_files row")
        return ("wrong" if any(r["file"] == c["path"] for r in rows(gold, "goldset_files")) else "missed"), _said(gold)
    if t == "not_goldset":
        return ("wrong" if any(r["file"] == c["path"] for r in rows(gold, "goldset_files")) else "found"), _said(gold)
    if t == "goldset_count":
        n = len(rows(gold, "goldset_files"))
        ok = n == c["equals"] and (c["equals"] > 0 or (gold is not None and gold.status == "fail"))
        return ("found" if ok else "wrong"), _said(gold, f"{n} files")
    if t == "no_site_in":
        hits = [r["site"] for r in rows(cs, "call_sites") if str(r["site"]).startswith(c["prefix"])]
        return ("found" if not hits else "wrong"), _said(cs, ", ".join(hits)[:60])
    if t == "no_site_at":
        hits = [r["site"] for r in rows(cs, "call_sites") if at_place(r["site"], c["at"])]
        return ("found" if not hits else "wrong"), _said(cs, ", ".join(hits))
    if t == "no_request_site_in":
        hits = [r["site"] for r in rows(cs, "call_sites") if r["site_class"] == "class_request"
                and place(r["site"]) and place(r["site"])[0].endswith(c["suffix"])]
        return ("found" if not hits else "wrong"), _said(cs, ", ".join(hits)[:60])
    if t == "agent_graph":
        hits = [r for r in rows(cs, "agent_graphs") if in_file(r["site"], c["file"])]
        return ("found" if hits else "missed"), _said(cs, f"{len(hits)} agent rows" + (
            f", search nodes {list(hits[0]['search_nodes'])[:3]}" if hits else ""))
    if t == "unescaped_filter":
        hits = [r for r in rows(acl, "interpolated_filters") if in_file(r["site"], c["file"])]
        hits += [r for r in rows(acl, "code_filters") if in_file(r["site"], c["file"])
                 and r["verdict"] == "verdict_injection"]
        return ("found" if hits else "missed"), _said(acl, f"{len(hits)} interpolated-filter rows")
    if t == "sql_text_pool":
        hits = [r for r in rows(pool, "code_pools") if in_file(r["site"], c["file"]) and r["text_recall"] is not None]
        return ("found" if hits and _eq(hits[0]["text_recall"], c["value"]) else "missed"), \
            _said(pool, f"text recall {hits[0]['text_recall'] if hits else None}")
    if t == "code_pool":
        hits = [r for r in rows(pool, "code_pools") if at_place(r["site"], c["at"])]
        if not hits:
            return "missed", _said(pool, "no pool row")
        v = hits[0]["verdict"]
        fills = v == "pv_fills"
        if v in ("pv_unresolved", "pv_not_semantic", "pv_not_judged", "pv_no_ranker"):
            return "partly", _said(pool, f"{v} pool={hits[0]['pool']}")
        return ("found" if fills == c["fills_window"] else "wrong"), _said(pool, f"{v} pool={hits[0]['pool']}")
    raise ValueError(f"unknown check type {t!r}")


def wrong_pass(found: dict[str, Any], c: dict[str, Any]) -> bool:
    """The truth says trimming is absent / fails open, or the context is unbounded, and the check passes."""
    t = c["type"]
    if t in ACL_TYPES or (t == "acl_site" and c.get("mechanism")):
        f = found.get("acl_trimming")
        return f is not None and f.status == "pass" and (t != "acl_mechanisms" or c["equals"] == [])
    if t == "budget_unit" or (t == "budget_verdict" and c["unbounded"]):
        f = found.get("context_budgets")
        return f is not None and f.status == "pass"
    return False


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
        scan, found = code_only_audit(folder)
        entry["held_out"] = repo.get("held_out")
        entry["files_scanned"] = scan.files_scanned
        entry["sites"] = score_sites(scan, repo["sites"])
        entry["checks"] = {cid: f.status for cid, f in found.items()}
        facts = []
        for f in repo["facts"]:
            status, said = check(scan, f["check"])
            by_checks, read = check_findings(found, f["check"])
            facts.append({"id": f["id"], "text": f["text"], "status": status, "scanner": said,
                          "by_checks": by_checks, "finding": read, "wrong_pass": wrong_pass(found, f["check"])})
        entry["facts"] = facts
        out.append(entry)
    return out


def totals(results: list[dict[str, Any]]) -> dict[str, Any]:
    t = {"truth_sites": 0, "matched": 0, "class_ok": 0, "reported": 0, "facts": 0,
         **{s: 0 for s in STATUSES}, **{f"checks_{s}": 0 for s in STATUSES}, "wrong_passes": 0}
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
            t[f"checks_{f['by_checks']}"] += 1
            t["wrong_passes"] += bool(f["wrong_pass"])
    t["recall"] = t["matched"] / t["truth_sites"] if t["truth_sites"] else 0.0
    t["precision"] = t["matched"] / t["reported"] if t["reported"] else 0.0
    t["fact_share"] = t["found"] / t["facts"] if t["facts"] else 0.0
    t["checks_share"] = t["checks_found"] / t["facts"] if t["facts"] else 0.0
    return t


def _groups(results: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    dev = [r for r in results if r.get("held_out") not in ("phase2", "wave4", "wave5", "wave6")]
    held = [r for r in results if r.get("held_out") == "phase2"]
    new = [r for r in results if r.get("held_out") == "wave4"]
    new5 = [r for r in results if r.get("held_out") == "wave5"]
    new6 = [r for r in results if r.get("held_out") == "wave6"]
    return [(name, rs) for name, rs in (("development set", dev), ("held out (phase 2)", held),
                                        ("new to the project (wave 4)", new),
                                        ("new to the project (wave 5)", new5),
                                        ("new to the project (wave 6)", new6)) if rs]


def markdown(results: list[dict[str, Any]]) -> str:
    out = ["### Sites and the scanner's facts", ""]
    lines = ["| repository | commit | files | sites (truth) | recall | precision | class right | facts | found | "
             "partly | missed | wrong |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, group in _groups(results):
        for r in group:
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
        tot = totals(group)
        lines.append(f"| **total, {name}** | | | {tot['truth_sites']} | **{tot['recall']:.0%}** | "
                     f"**{tot['precision']:.0%}** | {tot['class_ok']}/{tot['truth_sites']} | {tot['facts']} | "
                     f"**{tot['found']}** | {tot['partly']} | {tot['missed']} | {tot['wrong']} |")
    out += ["\n".join(lines), ""]
    out += ["### The consultant facts by the checks' findings (code-only audit)", ""]
    lines = ["| repository | facts | found | partly | missed | wrong | found share | wrong passes (ACL, budgets) | "
             "checks: call_sites / acl_trimming / context_budgets / pool_size / reranker_scores / goldset |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    keys = ("call_sites", "acl_trimming", "context_budgets", "pool_size", "reranker_scores", "goldset")
    for name, group in _groups(results):
        for r in group:
            if "facts" not in r:
                lines.append(f"| {r['repo']} | - | - | - | - | - | - | - | {r.get('error', '')} |")
                continue
            counts = {k: sum(f["by_checks"] == k for f in r["facts"]) for k in STATUSES}
            wp = sum(f["wrong_pass"] for f in r["facts"])
            st = " / ".join(r["checks"].get(k, "-") for k in keys)
            lines.append(f"| {r['repo']} | {len(r['facts'])} | {counts['found']} | {counts['partly']} | "
                         f"{counts['missed']} | {counts['wrong']} | {counts['found'] / len(r['facts']):.0%} | {wp} | "
                         f"{st} |")
        tot = totals(group)
        lines.append(f"| **total, {name}** | {tot['facts']} | **{tot['checks_found']}** | {tot['checks_partly']} | "
                     f"{tot['checks_missed']} | {tot['checks_wrong']} | **{tot['checks_share']:.0%}** | "
                     f"**{tot['wrong_passes']}** | |")
    out += ["\n".join(lines), ""]
    for r in results:
        if "facts" not in r:
            out.append(f"#### {r['repo']}\n\n{r.get('error', '')}\n")
            continue
        tag = {"phase2": " (held out)", "wave4": " (new, wave 4)", "wave5": " (new, wave 5)",
               "wave6": " (new, wave 6)"}.get(r.get("held_out") or "", "")
        out.append(f"#### {r['repo']} (`{r['commit'][:10]}`){tag}\n")
        out.append("| fact | scanner | checks | what the finding says |")
        out.append("|---|---|---|---|")
        for f in r["facts"]:
            said = f["finding"].replace("|", "\\|").replace("\n", " ")[:160]
            mark = " (wrong pass)" if f["wrong_pass"] else ""
            out.append(f"| {f['text'].replace('|', '/')} | {f['status']} | {f['by_checks']}{mark} | {said} |")
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
    for name, group in _groups(results):
        tot = totals(group)
        print(f"\n{name}: sites recall {tot['recall']:.1%}, precision {tot['precision']:.1%}; scanner facts "
              f"{tot['found']}/{tot['facts']} found ({tot['fact_share']:.0%}); by the checks' findings "
              f"{tot['checks_found']}/{tot['facts']} found ({tot['checks_share']:.0%}), {tot['checks_partly']} partly, "
              f"{tot['checks_missed']} missed, {tot['checks_wrong']} wrong; wrong passes (ACL, budgets) "
              f"{tot['wrong_passes']}")
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
