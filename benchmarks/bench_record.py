"""ragdiag record: the latency the proxy adds, and the rate it records without loss.

1. **Added latency, paired.** A `ragdiag serve` emulator over a 64-record local index on
   loopback; the same search body is sent alternately straight to the emulator and through the
   proxy (one kept-alive connection each, from a separate client process so the client does not
   share the proxy's interpreter), in a fresh random order per pair. The added latency is the
   median of the per-pair differences (proxied - direct), with the p95.
2. **Recording rate.** The load generator (a separate process, 8 threads, each on its own
   kept-alive connection) offers a fixed rate (default 500 requests/s for 10 s) of searches to
   the proxy, paced open-loop; the upstream is a minimal HTTP server returning a fixed 5-hit
   search response (so the figure is the proxy's, not the emulator's search cost). Counted: sent,
   answered 200, lines in the traffic file, achieved rate, and the lag between the last answer
   and the last line written.

    python benchmarks/bench_record.py [--pairs 2000] [--rate 500] [--seconds 10] [--out benchmarks/results/record.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import multiprocessing as mp
import os
import random
import socket
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

BODY = json.dumps({"search": "alpha", "top": 5, "queryType": "semantic", "semanticConfiguration": "default",
                   "vectorQueries": [{"kind": "vector", "vector": [1, 0, 0], "k": 50, "fields": "vec"}],
                   "filter": "group_ids/any(g: search.in(g, 'all'))"}).encode()
PATH = "/indexes('tiny')/docs/search.post.search?api-version=2024-07-01"
KEY = "bench-key-0123456789"


def _tiny_target(folder: Path):
    import numpy as np

    from ragdiag.model.schema import (
        BOOLEAN,
        DOUBLE,
        STRING,
        STRING_COLLECTION,
        VECTOR,
        Field,
        IndexSchema,
        SemanticConfiguration,
        VectorSearchProfile,
    )
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget

    schema = IndexSchema(name="tiny", fields=(
        Field("key", STRING, key=True, filterable=True), Field("content", STRING, searchable=True),
        Field("confidence_score", DOUBLE, filterable=True), Field("is_table", BOOLEAN, filterable=True),
        Field("group_ids", STRING_COLLECTION, filterable=True, retrievable=False),
        Field("vec", VECTOR, dimensions=3, vector_profile="hnsw")),
        semantic_configurations=(SemanticConfiguration("default", None, ("content",)),),
        default_semantic_configuration="default", vector_profiles=(VectorSearchProfile("hnsw", "hnsw-1", m=8),))
    records, vectors = [], []
    for i in range(64):
        theta = (i + 1) * (math.pi / 2) / 65
        records.append({"key": f"r{i:02d}", "content": f"alpha filler text {i}", "confidence_score": i / 64,
                        "is_table": False, "group_ids": ["all"]})
        vectors.append([math.cos(theta), math.sin(theta), 0.0])

    class Rerank:
        name = "bench"

        def score(self, query, passages):
            return np.linspace(3.5, 0.5, num=len(passages))

    class Embed:
        dim = 3
        name = "bench"

        def embed(self, texts, **kw):
            return np.tile(np.asarray([1, 0, 0], dtype=np.float32), (len(texts), 1))

        def embed_one(self, text):
            return np.asarray([1, 0, 0], dtype=np.float32)

    return LocalTarget.build(records, LocalIndexSpec(name="tiny", schema=schema, vector_sources={},
                                                     now="2026-06-30T00:00:00Z"), index_dir=folder,
                             reranker=Rerank(), embedder=Embed(), progress=False,
                             vectors={"vec": np.asarray(vectors, dtype=np.float32)})


# ---- 1. paired latency --------------------------------------------------------------------------------
def _pairs_client(direct: str, proxied: str, n: int, seed: int, q: mp.Queue, body: bytes = BODY) -> None:
    def conn(url: str) -> http.client.HTTPConnection:
        host, port = url.removeprefix("http://").split(":")
        return http.client.HTTPConnection(host, int(port))

    conns = {"direct": conn(direct), "proxy": conn(proxied)}
    headers = {"api-key": KEY, "Content-Type": "application/json"}

    def once(which: str) -> float:
        c = conns[which]
        t = time.perf_counter()
        c.request("POST", PATH, body=body, headers=headers)
        r = c.getresponse()
        r.read()
        assert r.status == 200, r.status
        return (time.perf_counter() - t) * 1000

    rnd = random.Random(seed)
    for _ in range(50):  # warm-up, untimed
        once("direct")
        once("proxy")
    out = []
    for _ in range(n):
        order = ["direct", "proxy"]
        rnd.shuffle(order)
        got = {w: once(w) for w in order}
        out.append((got["direct"], got["proxy"]))
    q.put(out)


def paired_latency(pairs: int, seed: int, top: int = 5) -> dict:
    from ragdiag.observe.proxy import RecordingProxy
    from ragdiag.targets.emulator import Emulator

    with tempfile.TemporaryDirectory() as tmp:
        target = _tiny_target(Path(tmp) / "idx")
        with Emulator({"tiny": target}, api_key=KEY) as emu, \
                RecordingProxy(emu.url, out=Path(tmp) / "traffic.jsonl") as proxy:
            q: mp.Queue = mp.get_context("spawn").Queue()
            body = json.dumps({**json.loads(BODY), "top": top}).encode()
            p = mp.get_context("spawn").Process(target=_pairs_client, args=(emu.url, proxy.url, pairs, seed, q, body))
            p.start()
            rows = q.get(timeout=1800)
            p.join()
            proxy.flush()
            recorded = proxy.stats()["recorded"]
    direct = [d for d, _ in rows]
    prox = [x for _, x in rows]
    diff = sorted(x - d for d, x in rows)
    return {"top": top, "pairs": len(rows), "direct_median_ms": statistics.median(direct),
            "proxied_median_ms": statistics.median(prox), "added_median_ms": statistics.median(diff),
            "added_p95_ms": diff[int(0.95 * (len(diff) - 1))], "added_p5_ms": diff[int(0.05 * (len(diff) - 1))],
            "ratio_median": statistics.median(x / d for d, x in rows), "recorded": recorded}


# ---- 2. recording rate --------------------------------------------------------------------------------
def _stub_upstream() -> ThreadingHTTPServer:
    payload = json.dumps({"value": [{"@search.score": 0.03, "@search.rerankerScore": 3.0 - i / 10,
                                     "key": f"r{i:02d}", "content": "alpha filler text"} for i in range(5)]}).encode()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self):  # headers and body go out in two writes: without NODELAY, delayed ACKs add ~40 ms
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *a):
            pass

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self):  # noqa: N802 - the index definition the proxy asks for once (its key field)
            data = json.dumps({"name": "tiny", "fields": [{"name": "key", "type": "Edm.String", "key": True}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    class S(ThreadingHTTPServer):
        daemon_threads = True

    srv = S(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def _load_client(url: str, rate: float, seconds: float, threads: int, q: mp.Queue) -> None:
    host, port = url.removeprefix("http://").split(":")
    per_thread = rate / threads
    total = int(rate * seconds)
    results = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        c = http.client.HTTPConnection(host, int(port))
        n = total // threads + (1 if i < total % threads else 0)
        start = time.perf_counter() + i / rate
        ok = late = 0
        lat = []
        for j in range(n):
            due = start + j / per_thread
            now = time.perf_counter()
            if due > now:
                time.sleep(due - now)
            elif now - due > 0.05:
                late += 1
            t = time.perf_counter()
            c.request("POST", PATH, body=BODY, headers={"api-key": KEY, "Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            lat.append((time.perf_counter() - t) * 1000)
            ok += r.status == 200
        with lock:
            results.append((n, ok, late, lat))

    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.perf_counter() - t0
    lat = sorted(x for r in results for x in r[3])
    q.put({"sent": sum(r[0] for r in results), "ok": sum(r[1] for r in results), "late": sum(r[2] for r in results),
           "elapsed_s": elapsed, "latency_median_ms": statistics.median(lat), "latency_p95_ms": lat[int(0.95 * (len(lat) - 1))]})


def recording_rate(rate: float, seconds: float, threads: int = 8) -> dict:
    from ragdiag.observe.proxy import RecordingProxy

    srv = _stub_upstream()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "traffic.jsonl"
        with RecordingProxy(f"http://127.0.0.1:{srv.server_address[1]}", out=out) as proxy:
            q: mp.Queue = mp.get_context("spawn").Queue()
            p = mp.get_context("spawn").Process(target=_load_client, args=(proxy.url, rate, seconds, threads, q))
            p.start()
            res = q.get(timeout=600)
            p.join()
            t = time.perf_counter()
            proxy.flush(timeout_s=60)
            res["write_lag_s"] = time.perf_counter() - t
            res["stats"] = proxy.stats()
        lines = out.read_text(encoding="utf-8").splitlines()
        seqs = {json.loads(x)["seq"] for x in lines}
    srv.shutdown()
    res.update({"offered_rate": rate, "seconds": seconds, "threads": threads, "lines": len(lines),
                "distinct_seq": len(seqs), "achieved_rate": res["sent"] / res["elapsed_s"],
                "lost": res["sent"] - len(lines)})
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--rates", default="500,1000", help="offered rates, comma-separated")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "record.json"))
    args = ap.parse_args()
    load = os.getloadavg()[0]
    lat = [paired_latency(args.pairs, args.seed, top) for top in (5, 50)]
    print(json.dumps(lat, indent=1))
    rates = []
    for rate in (float(x) for x in args.rates.split(",")):
        rates.append(recording_rate(rate, args.seconds))
        print(json.dumps(rates[-1], indent=1))
    result = {"load_before": load, "load_after": os.getloadavg()[0], "latency": lat, "rate": rates,
              "cpus": os.cpu_count()}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
