"""Accuracy and speed of the chunk cut judgement (`ragdiag chunks`) on labelled sets.

Reads the sets `chunk_sets.py` writes (chunks.jsonl, labels.jsonl, sources.jsonl per set),
runs `ragdiag.chunks.export.analyse_export` on each twice -- with the sources (``--source``)
and without -- and reports, per set and measure (``end_mid_sentence``, ``start_mid_sentence``,
``end_mid_word``, ``start_mid_word``), precision and recall of the per-chunk flags against the
labels. A document's last chunk end and first chunk start are not cuts and are left out.

``--speed N`` also times one `analyse_export` over N chunks (the sets' chunks repeated under
new document ids), without and with the source, single process.

    python benchmarks/bench_chunk_cuts.py /tmp/chunksets [--speed 200000] [--out benchmarks/results/chunk_cuts.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ragdiag.chunks.export import analyse_export  # noqa: E402
from ragdiag.chunks.files import infer_roles  # noqa: E402

MEASURES = ("end_mid_sentence", "start_mid_sentence", "end_mid_word", "start_mid_word")


def _load(set_dir: Path) -> tuple[list[dict], dict[str, dict], dict[str, str]]:
    chunks = [json.loads(x) for x in (set_dir / "chunks.jsonl").open(encoding="utf-8")]
    labels = {r["key"]: r for r in map(json.loads, (set_dir / "labels.jsonl").open(encoding="utf-8"))}
    sources = {r["id"]: r["text"] for r in map(json.loads, (set_dir / "sources.jsonl").open(encoding="utf-8"))}
    return chunks, labels, sources


def score(chunks: list[dict], labels: dict[str, dict], sources: dict[str, str] | None, lang: str) -> dict:
    roles = infer_roles(chunks[0].keys())
    v = analyse_export(chunks, roles, lang=lang, sources=sources)
    first = {}
    last = {}
    for c in chunks:
        first.setdefault(c["sourcefile"], c["id"])
        last[c["sourcefile"]] = c["id"]
    edge_ok = {"start": set(first.values()), "end": set(last.values())}
    out = {}
    for m in MEASURES:
        skip = edge_ok["start" if m.startswith("start") else "end"]
        tp = fp = fn = 0
        judged = 0
        for f in v.flags:
            if f.key in skip:
                continue
            got = getattr(f, m)
            if got is None:
                continue
            judged += 1
            want = labels[f.key][m]
            tp += bool(got) and want
            fp += bool(got) and not want
            fn += (not got) and want
        out[m] = {"positives": tp + fn, "judged": judged, "tp": tp, "fp": fp, "fn": fn,
                  "precision": tp / (tp + fp) if tp + fp else None,
                  "recall": tp / (tp + fn) if tp + fn else None}
    # sets of doc_chunk_sets.py label each cut's class: how the flags fall on each class
    if any("end_class" in x for x in labels.values()):
        by_class: dict[str, dict[str, int]] = {}
        for f in v.flags:
            lab = labels[f.key]
            cls = lab.get("end_class")
            if cls is None:
                continue
            row = by_class.setdefault(cls, {"cuts": 0, "end_mid_sentence": 0, "any_cut_flag": 0})
            row["cuts"] += 1
            row["end_mid_sentence"] += bool(f.end_mid_sentence)
            row["any_cut_flag"] += bool(f.end_mid_sentence or f.end_mid_word or getattr(f, "end_split_code", False))
        out["_by_end_class"] = by_class
        cb = by_class.get("clean_block", {"cuts": 0})
        out["_false_alarm_clean_block"] = cb["any_cut_flag"] / cb["cuts"] if cb["cuts"] else None
        if hasattr(v.flags[0], "end_split_code") if v.flags else False:
            tp = sum(1 for f in v.flags if labels[f.key].get("end_class") == "in_code" and f.end_split_code)
            fp = sum(1 for f in v.flags if labels[f.key].get("end_class") not in (None, "in_code")
                     and f.end_split_code)
            fn = sum(1 for f in v.flags if labels[f.key].get("end_class") == "in_code" and not f.end_split_code)
            out["end_split_code"] = {"positives": tp + fn, "judged": tp + fp + fn, "tp": tp, "fp": fp, "fn": fn,
                                     "precision": tp / (tp + fp) if tp + fp else None,
                                     "recall": tp / (tp + fn) if tp + fn else None}
    out["_share_end_mid_sentence"] = v.counts.get("end_mid_sentence_share")
    out["_status"] = v.status
    out["_located"] = v.counts["chunks_located_in_source"]
    out["_sentences_judged"] = v.counts["sentences_judged"]
    return out


def audit_share(chunks: list[dict]) -> float | None:
    """The share the audit's `chunk_boundaries` analyser (`analyse_chunks`) gives the same records."""
    from ragdiag.chunks import ChunkFields, analyse_chunks

    fields = ChunkFields(key="id", content="content", doc_id="sourcefile", parent_id=None, page=None,
                         position="chunk_index", section_title=None, level=None, chunk_levels=())
    return analyse_chunks(chunks, fields=fields).mid_sentence_end_share


def _fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def speed(set_dirs: list[Path], n: int) -> dict:
    pool: list[dict] = []
    srcs: dict[str, str] = {}
    rep = 0
    while len(pool) < n:
        for d in set_dirs:
            chunks, _, sources = _load(d)
            for c in chunks:
                pool.append({**c, "sourcefile": f"r{rep}/{d.name}/{c['sourcefile']}"})
            for k, t in sources.items():
                srcs[f"r{rep}/{d.name}/{k}"] = t
            if len(pool) >= n:
                break
        rep += 1
    pool = pool[:n]
    roles = infer_roles(pool[0].keys())
    res = {"chunks": n, "load_1min_before": os.getloadavg()[0]}
    for label, s in (("without_source", None), ("with_source", srcs)):
        t0, c0 = time.perf_counter(), time.process_time()
        analyse_export(pool, roles, lang="en", sources=s)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        res[label] = {"seconds": round(wall, 2), "chunks_per_s": round(n / wall), "cpu_s": round(cpu, 2),
                      "chunks_per_cpu_s": round(n / cpu)}
    return res


def pysbd_baseline(set_dirs: list[Path], limit: int = 1500) -> dict:
    """pysbd as the no-source model: a chunk ends mid-sentence unless pysbd, run over its last
    300 characters joined to the next chunk's first 300, puts a sentence boundary at the join.
    Precision, recall and chunks per CPU second of that, per set (first `limit` chunks)."""
    import pysbd

    out = {}
    for d in set_dirs:
        chunks, labels, _ = _load(d)
        lang = d.name.split(".")[0].rsplit("-", 1)[-1]
        seg = pysbd.Segmenter(language=lang, clean=False, char_span=True)
        tp = fp = fn = n = 0
        t0 = time.process_time()
        for a, b in zip(chunks[:limit], chunks[1:limit + 1], strict=False):
            if a["sourcefile"] != b["sourcefile"]:
                continue
            left, right = a["content"][-300:].rstrip(), b["content"][:300].lstrip()
            join = len(left)
            spans = seg.segment(left + " " + right)
            boundary = any(abs(s.start - join) <= 1 for s in spans[1:])
            got, want = not boundary, labels[a["id"]]["end_mid_sentence"]
            tp += got and want
            fp += got and not want
            fn += (not got) and want
            n += 1
        cpu = time.process_time() - t0
        out[d.name] = {"pairs": n, "precision": tp / (tp + fp) if tp + fp else None,
                       "recall": tp / (tp + fn) if tp + fn else None, "pairs_per_cpu_s": round(n / cpu)}
    return out


def summary(results: dict) -> str:
    """One Markdown row per set and mode: positives / precision / recall of the three measures."""
    head = ("| set | source | end_mid_sentence n · P · R | start_mid_sentence n · P · R | "
            "end_mid_word n · P · R |\n|---|---|---|---|---|")
    rows = [head]
    for name, modes in results.items():
        if name.startswith("_"):
            continue
        for mode in ("with", "without"):
            r = modes[mode]
            cells = []
            for m in ("end_mid_sentence", "start_mid_sentence", "end_mid_word"):
                x = r[m]
                if not x["judged"]:
                    cells.append("not judged")
                else:
                    cells.append(f"{x['positives']} · {_fmt(x['precision'])} · {_fmt(x['recall'])}")
            rows.append(f"| {name} | {mode} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1%}"


def doc_summary(results: dict) -> str:
    """Per set of `doc_chunk_sets.py`: the true share of cut ends, the audit's and `ragdiag chunks`'
    shares with and without the source, precision · recall of the sentence flags both ways and the
    false alarms on clean block boundaries."""
    rows = ["| set | true cut ends | audit | chunks --source | chunks | end_mid_sentence with · without "
            "(n · P · R) | start_mid_sentence with · without | false alarms on clean block ends with · without |",
            "|---|---:|---:|---:|---:|---|---|---|"]
    for name, r in results.items():
        if name.startswith("_") or "_truth_end_mid_sentence_share" not in r:
            continue
        w, wo = r["with"], r["without"]

        def pr(m: str, w: dict = w, wo: dict = wo) -> str:
            a, b = w[m], wo[m]
            return (f"{a['positives']} · {_fmt(a['precision'])} · {_fmt(a['recall'])} / "
                    f"{_fmt(b['precision'])} · {_fmt(b['recall'])}")
        rows.append(f"| {name} | {_pct(r['_truth_end_mid_sentence_share'])} | "
                    f"{_pct(r['_audit_mid_sentence_end_share'])} | {_pct(w['_share_end_mid_sentence'])} | "
                    f"{_pct(wo['_share_end_mid_sentence'])} | {pr('end_mid_sentence')} | {pr('start_mid_sentence')} | "
                    f"{_pct(w.get('_false_alarm_clean_block'))} · {_pct(wo.get('_false_alarm_clean_block'))} |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sets", type=Path, nargs="?")
    ap.add_argument("--speed", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--summary", type=Path, metavar="JSON", help="print the Markdown table of a results file")
    ap.add_argument("--pysbd", nargs="*", metavar="SET", help="also score pysbd as the no-source model on these sets")
    args = ap.parse_args()
    if args.summary:
        res = json.loads(args.summary.read_text(encoding="utf-8"))
        print(doc_summary(res) if any("_truth_end_mid_sentence_share" in v for v in res.values()) else summary(res))
        return
    dirs = sorted(p for p in args.sets.iterdir() if (p / "chunks.jsonl").is_file())
    results = {}
    print("| set | source | measure | positives | precision | recall |")
    print("|---|---|---|---:|---:|---:|")
    for d in dirs:
        chunks, labels, sources = _load(d)
        lang = d.name.split(".")[0].rsplit("-", 1)[-1]
        results[d.name] = {"_truth_end_mid_sentence_share": sum(bool(x["end_mid_sentence"]) for x in labels.values())
                           / max(1, len(labels)),
                           "_audit_mid_sentence_end_share": audit_share(chunks)}
        for mode, s in (("with", sources), ("without", None)):
            r = score(chunks, labels, s, lang)
            results[d.name][mode] = r
            for m in MEASURES:
                x = r[m]
                print(f"| {d.name} | {mode} | {m} | {x['positives']} | {_fmt(x['precision'])} | {_fmt(x['recall'])} |")
    if args.pysbd:
        results["_pysbd"] = pysbd_baseline([args.sets / n for n in args.pysbd])
        print(json.dumps(results["_pysbd"], indent=1))
        if not args.speed and args.out:
            args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        if args.pysbd and not dirs:
            return
    if args.speed:
        results["_speed"] = speed(dirs, args.speed)
        print(json.dumps(results["_speed"], indent=1))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
