"""Observed, not inferred: public RAG applications run through `ragdiag record`, scored against a truth.

For each application of `realtraffic_truth.yaml` (written by reading the code before any run),
its own retrieval code runs unchanged: its module is imported from the snapshot with its
environment pointing at `ragdiag record` in front of `ragdiag serve` (an index with the
application's field names), and its entry point is called with three questions. Only what is
not retrieval is faked: `openai.AzureOpenAI` (a deterministic 8-dimension embedding and a fixed
chat answer) and `langchain_openai.ChatOpenAI` (LangChain's fake chat model). Then two audits
read the same application: code only (`[inputs] client_code`), and code with the recorded
traffic (`[inputs] traffic`); each truth fact is read from the findings as a consultant reads
them (status, headline, evidence rows): found, partly, missed or wrong.

    python benchmarks/realtraffic.py --root ../real [--out benchmarks/results/realtraffic.json]

The snapshots are not part of the repository (fetched public code is never committed).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KEY = "realtraffic-key-5f1e"
DIM = 8
QUESTIONS = ("What is the notice period?", "How do I reset my password?", "Which temples are in Kyoto?")

# the index each application expects (field names read from its index code)
SCHEMAS = {
    "kimtth/rag-minimum-azure-ai-search": ("faq", "id", ("question", "answer"), "vector"),
    "sensyn-robotics/microsoft-ai-challenge-day": ("heritage", "id", ("title", "content"), "contentVector"),
    "alwindenz/document-rag": ("docs", "id", ("content",), None),
}
ENV = {
    "kimtth/rag-minimum-azure-ai-search": lambda url, index: {
        "AZURE_SEARCH_ENDPOINT": url, "AZURE_SEARCH_KEY": KEY, "AZURE_SEARCH_INDEX_NAME": index,
        "AZURE_OPENAI_ENDPOINT": "http://unused", "AZURE_OPENAI_API_KEY": "x", "AZURE_OPENAI_EMBEDDING_NAME": "emb",
        "AZURE_OPENAI_DEPLOYMENT_NAME": "chat"},
    "sensyn-robotics/microsoft-ai-challenge-day": lambda url, index: {
        "AI_SEARCH_ENDPOINT": url, "AI_SEARCH_QUERY_KEY": KEY, "INDEX_NAME": index, "OPENAI_API_KEY": "x",
        "OPENAI_ENDPOINT": "http://unused", "OPENAI_CHATGPT_DEPLOYMENT": "chat", "OPENAI_EMB_DEPLOYMENT": "emb"},
    # AzureAISearchRetriever builds https://<service>.search.windows.net unless the suffix is overridden
    "alwindenz/document-rag": lambda url, index: {
        "COGNITIVE_SEARCH_SERVICE_NAME": url, "AZURE_AI_SEARCH_URL_SUFFIX": url.split("//", 1)[1],
        "COGNITIVE_SEARCH_INDEX_NAME": index, "COGNITIVE_SEARCH_API_KEY": KEY, "COGNITIVE_SEARCH_ENDPOINT": url,
        "OPENAI_API_KEY": "x"},
}


def _embedding(text: str) -> list[float]:
    import hashlib

    h = hashlib.sha256(text.encode()).digest()
    return [b / 255 for b in h[:DIM]]


def _fake_openai() -> types.ModuleType:
    mod = types.ModuleType("openai")

    class _Obj(types.SimpleNamespace):
        pass

    class AzureOpenAI:
        def __init__(self, **kw: Any) -> None:
            self.embeddings = _Obj(create=lambda input, model, **k: _Obj(data=[_Obj(embedding=_embedding(
                input[0] if isinstance(input, list) else input))]))
            self.chat = _Obj(completions=_Obj(create=lambda **k: _Obj(choices=[_Obj(message=_Obj(
                content="notice period contract"))])))

    mod.AzureOpenAI = AzureOpenAI
    types_mod = types.ModuleType("openai.types")
    chat_mod = types.ModuleType("openai.types.chat")
    chat_mod.ChatCompletion = chat_mod.ChatCompletionChunk = object
    return mod, types_mod, chat_mod


def _fake_langchain_openai() -> types.ModuleType:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    mod = types.ModuleType("langchain_openai")

    def chat_openai(**kw: Any) -> Any:
        return FakeListChatModel(responses=["notice period"] * 20)

    mod.ChatOpenAI = chat_openai
    return mod


def _index(repo: str, folder: Path) -> Any:
    import numpy as np

    from ragdiag.model.schema import STRING, VECTOR, Field, IndexSchema, VectorSearchProfile
    from ragdiag.targets.local import LocalIndexSpec, LocalTarget
    from tests.fakes import FakeEmbedder, KeyReranker

    name, key, texts, vector = SCHEMAS[repo]
    fields = [Field(key, STRING, key=True, filterable=True)] + [Field(t, STRING, searchable=True) for t in texts]
    if vector:
        fields.append(Field(vector, VECTOR, dimensions=DIM, vector_profile="hnsw"))
    schema = IndexSchema(name=name, fields=tuple(fields),
                         vector_profiles=(VectorSearchProfile("hnsw", "hnsw-1", m=8),) if vector else ())
    words = ["notice period", "password reset", "Kyoto temples", "contract renewal", "holiday policy"]
    records = [{key: f"d{i}", **{t: f"{words[i % 5]} {t} {i}" for t in texts}} for i in range(20)]
    vectors = {vector: np.asarray([_embedding(r[texts[0]]) for r in records], dtype=np.float32)} if vector else {}
    return name, LocalTarget.build(records, LocalIndexSpec(name=name, schema=schema, vector_sources={},
                                                           now="2026-06-30T00:00:00Z"), index_dir=folder,
                                   reranker=KeyReranker({}), embedder=FakeEmbedder({}, dim=DIM), vectors=vectors,
                                   progress=False)


def run_app(root: Path, app: dict[str, Any], work: Path) -> dict[str, Any]:
    """Run the application's entry point through the proxy; returns what happened and the traffic file."""
    from ragdiag.observe.proxy import RecordingProxy
    from ragdiag.observe.tls import generate_certificate
    from ragdiag.targets.emulator import Emulator

    repo = app["repo"]
    snap = root / repo.replace("/", "+")
    name, target = _index(repo, work / "idx")
    traffic = work / "traffic.jsonl"
    https = repo == "alwindenz/document-rag"  # its retriever only builds https URLs
    tls = generate_certificate(work / "cert") if https else None
    errors: list[str] = []
    with Emulator({name: target}, api_key=KEY) as emu, RecordingProxy(emu.url, out=traffic, tls=tls) as proxy:
        saved_env, saved_path, saved_mods = dict(os.environ), list(sys.path), dict(sys.modules)
        try:
            os.environ.update(ENV[repo](proxy.url, name))
            if tls:
                os.environ["REQUESTS_CA_BUNDLE"] = str(tls[0])
            oa, oat, oatc = _fake_openai()
            sys.modules.update({"openai": oa, "openai.types": oat, "openai.types.chat": oatc,
                                "langchain_openai": _fake_langchain_openai()})
            sys.path.insert(0, str(snap))
            file, _, func = app["entry"].partition(":")
            modname = "app_" + file.replace("/", "_").removesuffix(".py")
            if file.startswith("genai/"):  # a package: import it by its dotted name
                modname = file.removesuffix(".py").replace("/", ".")
                module = importlib.import_module(modname)
            else:
                spec = importlib.util.spec_from_file_location(modname, snap / file)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
            obj: Any = module
            for part in func.split("."):
                obj = getattr(obj, part)
            printed = io.StringIO()
            for q in QUESTIONS:
                try:
                    with contextlib.redirect_stdout(printed):
                        if func == "ChatBot.respond":
                            module.ChatBot().respond(q)
                        elif func == "get_response":
                            obj(q, [])
                        else:
                            obj(q)
                except Exception as exc:  # the application's own failure is a result
                    errors.append(f"{type(exc).__name__}: {str(exc)[:120]}")
            errors += [line[:160] for line in printed.getvalue().splitlines() if "failed" in line.lower()]
        finally:
            os.environ.clear()
            os.environ.update(saved_env)
            sys.path[:] = saved_path
            # forget the application's own modules and the fakes; libraries it imported stay loaded
            # (re-importing requests & co. under a live interpreter mixes their classes)
            for k in set(sys.modules) - set(saved_mods):
                path = getattr(sys.modules[k], "__file__", None) or ""
                if path.startswith(str(snap)) or k.startswith(("app_", "genai", "settings", "backend")):
                    del sys.modules[k]
            for k in ("openai", "openai.types", "openai.types.chat", "langchain_openai"):
                if k in saved_mods:
                    sys.modules[k] = saved_mods[k]
                else:
                    sys.modules.pop(k, None)
        proxy.flush()
    return {"traffic": traffic, "errors": errors, "snapshot": snap}


def audit(snapshot: Path, traffic: Path | None) -> dict[str, Any]:
    from ragdiag.checks import resolve, run_check
    from ragdiag.engine.context import AuditContext
    from ragdiag.engine.runner import Runner
    from ragdiag.inputs.checklist import load_checklist
    from ragdiag.observe import load_observed

    specs = load_checklist()
    obs = load_observed(traffic=[traffic]) if traffic is not None else None
    ctx = AuditContext(config=None, target=None, runner=Runner(None), client_code=snapshot, observed=obs)
    out = {cid: run_check(resolve(spec), ctx, spec) for cid, spec in specs.items()}
    out["_observed"] = obs
    return out


def _rows(finding: Any, key: str, *cols: str) -> list[tuple[Any, ...]]:
    ev = finding.evidence_table(key) if finding is not None else None
    if ev is None:
        return []
    idx = [ev.column_keys.index(c) for c in cols]
    return [tuple(r[i] for i in idx) for r in ev.rows]


def score(fact: dict[str, Any], f: dict[str, Any], observed: bool) -> str:
    """found | partly | missed | wrong, read from the findings as a consultant reads them."""
    t, want = fact["type"], fact.get("value")
    file = fact["where"].split(":")[0]
    pool, acl, pre = f["pool_size"], f["acl_trimming"], f["prerank_filters"]
    obs_pools = _rows(pool, "observed_pools", "obs_vector_k", "obs_text_recall", "top") if observed else []
    code = [r for r in _rows(pool, "code_pools", "site", "keyword_leg", "vector_k", "top") if str(r[0]).startswith(Path(file).name) or str(r[0]).startswith(file)]
    if t == "no_search_sent":
        if observed:
            return "found" if f["_observed"].searches == [] else "wrong"
        sites = _rows(f["call_sites"], "call_sites", "site")
        return "wrong" if f["call_sites"].status == "pass" or sites else "missed"
    if t in ("keyword_leg", "vector_k", "top", "no_vector"):
        if observed and obs_pools:
            vals = {"keyword_leg": [r[1] > 0 for r in obs_pools], "top": [r[2] for r in obs_pools],
                    "vector_k": [r[0] for r in obs_pools], "no_vector": [r[0] == "-" for r in obs_pools]}[t]
            if t == "vector_k":
                return "found" if all(str(v).split(" ")[0].endswith(f"={want}") for v in vals) else "wrong"
            target = True if t == "no_vector" else want
            return "found" if all(v == target for v in vals) else "wrong"
        if not code:
            return "missed"
        got = {"keyword_leg": code[0][1], "vector_k": code[0][2], "top": code[0][3],
               "no_vector": code[0][2] in (None, 0)}[t]
        if got is None:
            return "missed"
        return "found" if got == (True if t == "no_vector" else want) else "wrong"
    if t == "exhaustive":  # traffic: the pools table's vector cell; code: the pool check's exhaustive note
        if observed:
            cells = [str(r[0]) for r in obs_pools]
            return "found" if cells and all("exhaustive" in c for c in cells) else "missed"
        return "found" if "exhaustive" in pool.headline and file in pool.headline else "missed"
    if t == "no_filter":
        if pre.status == "pass" and "no filter clause was sent" in pre.headline:
            return "found"
        return "wrong" if pre.status == "pass" else "missed"
    if t == "no_trimming":
        if acl.status == "pass":
            return "wrong"
        if "none of" in acl.headline and "recorded requests" in acl.headline:
            return "found"
        return "found" if "no permission trimming on the request path" in acl.headline else "missed"
    if t == "not_semantic":
        if "none uses the semantic ranker" in pool.headline or "asked for semantic ranking" in \
                f["reranker_scores"].headline or "no request-path search call site uses semantic ranking" in pool.headline:
            return "found"
        return "missed"
    if t == "keyword_text_is_rewritten":
        rows = _rows(f["shared_query_text"], "observed_channels", "keyword") if observed else []
        return "partly" if rows and all(r[0] not in QUESTIONS for r in rows) else "missed"
    return "missed"


def main() -> None:
    import yaml

    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="folder with the cloned snapshots (owner+name)")
    ap.add_argument("--out", default=str(HERE / "results" / "realtraffic.json"))
    args = ap.parse_args()
    sys.path.insert(0, str(HERE.parent))
    truth = yaml.safe_load((HERE / "realtraffic_truth.yaml").read_text(encoding="utf-8"))
    results = []
    for app in truth["apps"]:
        with tempfile.TemporaryDirectory() as tmp:
            ran = run_app(Path(args.root), app, Path(tmp))
            static = audit(ran["snapshot"], None)
            observed = audit(ran["snapshot"], ran["traffic"])
            n = len(observed["_observed"].searches)
            rows = [{"id": fact["id"], "type": fact["type"], "code_only": score(fact, static, False),
                     "with_traffic": score(fact, observed, True)} for fact in app["facts"]]
            results.append({"repo": app["repo"], "entry": app["entry"], "searches_recorded": n,
                            "app_errors": sorted(set(ran["errors"])), "facts": rows,
                            "headlines": {c: observed[c].headline[:300] for c in
                                          ("pool_size", "acl_trimming", "prerank_filters", "call_sites")}})
            print(json.dumps(results[-1], indent=1, ensure_ascii=False))
    total = {k: {s: sum(r[k] == s for a in results for r in a["facts"]) for s in ("found", "partly", "missed", "wrong")}
             for k in ("code_only", "with_traffic")}
    print(json.dumps(total, indent=1))
    Path(args.out).write_text(json.dumps({"apps": results, "total": total}, indent=1, ensure_ascii=False) + "\n",
                              encoding="utf-8")


if __name__ == "__main__":
    main()
