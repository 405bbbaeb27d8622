"""Metamorphic rewrites of small applications of our own: a semantics-preserving rewrite must never flip a verdict.

    .venv/bin/python benchmarks/metamorphic.py            # the table of flips per rewrite
    .venv/bin/python benchmarks/metamorphic.py --verbose  # every pair that is not kept

Each base application (a few files written here, never fetched code) states the facts it holds: the
result count of its search, whether it asks for semantic ranking, whether the request path reaches the
search, what `acl_trimming` and `context_budgets` say on its code alone. Each rewrite is a small text
function producing a variant that does the same thing another way (the search in a method of the app's
own class, the count read through a dict another class builds, `**opts`, a settings object,
`os.environ.get` with a default, the identity filter built in another module, the prompt assembled in
one module and sent from another, the model client wrapped in the app's own class, the entry point in
another module, an async variant, a conditional whose other arm is a placeholder). A rewrite that does
not apply to a base returns None.

The rule (issue 25): on a variant each fact keeps the base's value or becomes unresolved / skipped (a
check's `warn` where the base failed is counted as weakened, not as a flip); any other value is a flip,
and so is a `pass` the base did not earn.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ragdiag.checks import resolve, run_check  # noqa: E402
from ragdiag.codescan import scan_path  # noqa: E402
from ragdiag.engine.context import AuditContext  # noqa: E402

Files = dict[str, str]
#: The fact values that never count as a flip: the scanner says it could not follow the flow.
NEUTRAL = frozenset({"unresolved", "skipped"})
COUNT_PARAMS = ("top", "k", "similarity_top_k", "limit", "top_k", "topK", "match_count")
SEARCH_MARK = "mm:search"


# ---- the base applications ---------------------------------------------------------------------------------

ROUTE = '''
    from fastapi import FastAPI
    from openai import OpenAI

    from .retrieval import find

    app = FastAPI()
    llm = OpenAI()


    @app.get("/ask")
    def ask(question: str, user: str):
        hits = find(question, user)
        prompt = "\\n".join(h["content"] for h in hits) + "\\n" + question  # mm:prompt
        resp = llm.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])  # mm:llm
        return resp.choices[0].message.content
    '''


def _azure(filtered: bool, semantic: bool) -> str:
    flt = ('    flt = "group_ids/any(g: search.in(g, \'" + ",".join(groups_of(user)) + "\'))"  # mm:filter\n'
           if filtered else "")
    extra = (", filter=flt" if filtered else "") + (', query_type="semantic", semantic_configuration_name="sem"'
                                                  if semantic else "")
    return ('from azure.identity import DefaultAzureCredential\n'
            'from azure.search.documents import SearchClient\n\n'
            'client = SearchClient("https://x.search.windows.net", "kb", DefaultAzureCredential())\n\n\n'
            'def groups_of(user: str) -> list[str]:\n'
            '    return [user, "everyone"]\n\n\n'
            'def find(question: str, user: str):\n'
            f'{flt}'
            f'    return list(client.search(search_text=question, top=5{extra}))  # mm:search\n')


BASES: dict[str, Files] = {
    "azure_sdk_trimmed_semantic": {"app/__init__.py": "", "app/retrieval.py": _azure(True, True),
                                   "app/main.py": ROUTE},
    "azure_sdk_untrimmed": {"app/__init__.py": "", "app/retrieval.py": _azure(False, False), "app/main.py": ROUTE},
    "azure_rest": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": '''
        import requests

        URL = "https://x.search.windows.net/indexes/kb/docs/search?api-version=2024-07-01"


        def find(question: str, user: str):
            body = {"search": question, "top": 5, "queryType": "semantic", "semanticConfiguration": "sem"}
            return requests.post(URL, json=body, headers={"api-key": "k"}).json()["value"]  # mm:search
        '''},
    "langchain_vectorstore": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": '''
        from langchain_community.vectorstores import FAISS
        from langchain_openai import OpenAIEmbeddings

        store = FAISS.load_local("index", OpenAIEmbeddings(), allow_dangerous_deserialization=True)


        def find(question: str, user: str):
            docs = store.similarity_search(question, k=5)  # mm:search
            return [{"content": d.page_content} for d in docs]
        '''},
    "langchain_retriever": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": '''
        from langchain_community.vectorstores import FAISS
        from langchain_openai import OpenAIEmbeddings

        store = FAISS.load_local("index", OpenAIEmbeddings(), allow_dangerous_deserialization=True)


        def find(question: str, user: str):
            retriever = store.as_retriever(search_kwargs={"k": 5})
            docs = retriever.invoke(question)  # mm:search
            return [{"content": d.page_content} for d in docs]
        '''},
    "llamaindex": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": '''
        from llama_index.core import StorageContext, load_index_from_storage

        index = load_index_from_storage(StorageContext.from_defaults(persist_dir="storage"))


        def find(question: str, user: str):
            nodes = index.as_retriever(similarity_top_k=5).retrieve(question)  # mm:search
            return [{"content": n.get_content()} for n in nodes]
        '''},
    "pgvector_trimmed": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": '''
        import psycopg

        conn = psycopg.connect("postgresql://localhost/rag")


        def embed(text: str) -> list[float]:
            return [0.0] * 3


        def find(question: str, user: str):
            sql = "SELECT id, content FROM chunks WHERE owner_id = %s ORDER BY embedding <=> %s::vector LIMIT 5"
            rows = conn.execute(sql, (user, str(embed(question)))).fetchall()  # mm:search
            return [{"content": r[1]} for r in rows]
        '''},
    "qdrant_native": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": '''
        from qdrant_client import QdrantClient

        qdrant = QdrantClient(url="http://localhost:6333")


        def embed(text: str) -> list[float]:
            return [0.0] * 3


        def find(question: str, user: str):
            points = qdrant.query_points(collection_name="kb", query=embed(question), limit=5).points  # mm:search
            return [{"content": p.payload["content"]} for p in points]
        '''},
    "azure_dead_site": {"app/__init__.py": "", "app/main.py": ROUTE, "app/retrieval.py": _azure(False, False),
                        "app/old.py": '''
        from azure.identity import DefaultAzureCredential
        from azure.search.documents import SearchClient

        legacy = SearchClient("https://x.search.windows.net", "kb-old", DefaultAzureCredential())


        def old_find(question: str):
            return list(legacy.search(search_text=question, top=50))
        '''},
    "langgraph_nodes": {"app/__init__.py": "", "app/retrieval.py": _azure(False, False), "app/graph.py": '''
        from typing import TypedDict

        from langchain_openai import AzureChatOpenAI
        from langgraph.graph import END, StateGraph

        from .retrieval import find

        llm = AzureChatOpenAI(azure_deployment="gpt-4o")


        class State(TypedDict):
            question: str
            user: str
            documents: list
            answer: str


        def retrieve(state: State):
            return {"documents": find(state["question"], state["user"])}


        def generate(state: State):
            context = "\\n".join(d["content"] for d in state["documents"])
            return {"answer": llm.invoke(context + "\\n" + state["question"]).content}


        builder = StateGraph(State)
        builder.add_node("retrieve", retrieve)
        builder.add_node("generate", generate)
        builder.set_entry_point("retrieve")
        builder.add_edge("retrieve", "generate")
        builder.add_edge("generate", END)
        graph = builder.compile()
        ''', "app/main.py": '''
        from fastapi import FastAPI

        from .graph import graph

        app = FastAPI()


        @app.get("/ask")
        def ask(question: str, user: str):
            return graph.invoke({"question": question, "user": user})["answer"]
        '''},
    "ts_azure_express": {"package.json": '{"name": "mm", "dependencies": {"@azure/search-documents": "12"}}',
                         "src/retrieval.ts": '''
        import { SearchClient, AzureKeyCredential } from "@azure/search-documents";

        const client = new SearchClient("https://x.search.windows.net", "kb", new AzureKeyCredential("k"));

        export async function find(question: string, user: string) {
          const results = await client.search(question, { top: 5, queryType: "semantic", semanticSearchOptions: { configurationName: "sem" } });  // mm:search
          const out: any[] = [];
          for await (const r of results.results) out.push(r.document);
          return out;
        }
        ''', "src/server.ts": '''
        import express from "express";
        import { find } from "./retrieval";

        const app = express();
        app.get("/ask", async (req, res) => {
          const hits = await find(String(req.query.q), String(req.query.user));
          res.json(hits);
        });
        app.listen(3000);
        '''},
    "ts_langchain": {"package.json": '{"name": "mm", "dependencies": {"@langchain/community": "0.3"}}',
                     "src/retrieval.ts": '''
        import { MemoryVectorStore } from "langchain/vectorstores/memory";
        import { OpenAIEmbeddings } from "@langchain/openai";

        const store = new MemoryVectorStore(new OpenAIEmbeddings());

        export async function find(question: string, user: string) {
          return await store.similaritySearch(question, 5);  // mm:search
        }
        ''', "src/server.ts": '''
        import express from "express";
        import { find } from "./retrieval";

        const app = express();
        app.get("/ask", async (req, res) => {
          res.json(await find(String(req.query.q), String(req.query.user)));
        });
        app.listen(3000);
        '''},
}


#: Every file dedented once, so that a rewrite can add lines at column 0.
BASES = {b: {n: textwrap.dedent(t).lstrip("\n") for n, t in fs.items()} for b, fs in BASES.items()}


# ---- the rewrites -------------------------------------------------------------------------------------------

COUNT_RE = re.compile(r"\b(top|k|similarity_top_k|limit)=(\d+)")


def _py(files: Files) -> bool:
    return any(n.endswith(".py") for n in files)


def _mark_file(files: Files, mark: str) -> str | None:
    for name, text in files.items():
        if name.endswith(".py") and mark in text:
            return name
    return None


def _edit_line(text: str, mark: str, edit: Callable[[str], str | None], before: str = "") -> str | None:
    """`text` with the line holding `mark` replaced by `edit(line)` (and `before` inserted above it, indented
    like it); None when no line holds it or `edit` declines."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if mark in line:
            new = edit(line)
            if new is None:
                return None
            indent = line[: len(line) - len(line.lstrip())]
            lines[i:i + 1] = ([indent + b for b in before.split("\n")] if before else []) + [new]
            return "\n".join(lines)
    return None


def _add_import(text: str, line: str) -> str:
    return line + "\n" + text


def _count_via(files: Files, wrap: Callable[[str, str], tuple[str, str, str, dict[str, str]]]) -> Files | None:
    """Replace the literal result count on the search line by an expression; `wrap(name, value)` gives
    (the expression, a line to insert before, an import line, new files)."""
    name = _mark_file(files, SEARCH_MARK)
    if name is None:
        return None
    m = COUNT_RE.search(next(ln for ln in files[name].split("\n") if SEARCH_MARK in ln))
    if m is None:
        return None
    expr, before, imp, extra = wrap(m.group(1), m.group(2))
    text = _edit_line(files[name], SEARCH_MARK, lambda ln: ln.replace(m.group(0), expr.format(key=m.group(1)), 1),
                      before)
    if text is None:
        return None
    out = dict(files)
    out[name] = _add_import(text, imp) if imp else text
    out.update({f"{name.rsplit('/', 1)[0]}/{k}": textwrap.dedent(v) for k, v in extra.items()})
    return out


def count_via_builder_method(files: Files) -> Files | None:
    """The count read from a dict another class's method (in another module) builds: `payload["top"]`."""
    return _count_via(files, lambda key, v: (
        f'{key}=payload["{key}"]', "payload = QueryBuilder().build()", "from .query import QueryBuilder",
        {"query.py": f'''
            class QueryBuilder:
                def __init__(self) -> None:
                    self.count = {v}

                def build(self) -> dict:
                    return {{"{key}": self.count}}
            '''}))


def count_via_kwargs(files: Files) -> Files | None:
    """The count handed over as `**opts` from a function of another module."""
    return _count_via(files, lambda key, v: (
        "**opts", "opts = search_options()", "from .options import search_options",
        {"options.py": f'''
            def search_options() -> dict:
                return {{"{key}": {v}}}
            '''}))


def count_via_env(files: Files) -> Files | None:
    """The count read from the environment with the same default."""
    return _count_via(files, lambda key, v: (f'{key}=int(os.environ.get("RAG_COUNT", "{v}"))', "", "import os", {}))


def count_via_settings(files: Files) -> Files | None:
    """The count a settings object of another module holds."""
    return _count_via(files, lambda key, v: (
        f"{key}=settings.count", "", "from .config import settings",
        {"config.py": f'''
            from dataclasses import dataclass


            @dataclass
            class Settings:
                count: int = {v}


            settings = Settings()
            '''}))


def count_via_partial(files: Files) -> Files | None:
    """The count bound by `functools.partial` on the search method."""
    name = _mark_file(files, SEARCH_MARK)
    if name is None:
        return None
    line = next(ln for ln in files[name].split("\n") if SEARCH_MARK in ln)
    m = re.search(r"(\w+)\.(search|similarity_search)\(", line)
    c = COUNT_RE.search(line)
    if m is None or c is None:
        return None
    bound = f"bound_call = functools.partial({m.group(1)}.{m.group(2)}, {c.group(0)})"

    def edit(ln: str) -> str:
        ln = ln.replace(f"{m.group(1)}.{m.group(2)}(", "bound_call(", 1)
        return re.sub(r",\s*" + re.escape(c.group(0)), "", ln, count=1)
    text = _edit_line(files[name], SEARCH_MARK, edit, bound)
    if text is None:
        return None
    return {**files, name: _add_import(text, "import functools")}


def search_in_own_class(files: Files) -> Files | None:
    """`find` becomes a method of the app's own `Retriever` class; the caller builds one and calls it."""
    name = "app/retrieval.py"
    if name not in files or "\ndef find(" not in files[name]:
        return None
    head, body = files[name].split("\ndef find(", 1)
    body = "def find(self, " + body
    method = "\n".join(("    " + ln) if ln.strip() else ln for ln in body.split("\n"))
    out = dict(files)
    out[name] = head + "\nclass Retriever:\n" + method
    for other, text in files.items():
        if other.endswith(".py") and "from .retrieval import find" in text:
            text = text.replace("from .retrieval import find", "from .retrieval import Retriever")
            out[other] = re.sub(r"(?<![\w.])find\(", "Retriever().find(", text)
    return out


def filter_in_helper_module(files: Files) -> Files | None:
    """The identity filter built by a helper in another module."""
    name = _mark_file(files, "mm:filter")
    if name is None:
        return None
    line = next(ln for ln in files[name].split("\n") if "mm:filter" in ln)
    expr = line.split("=", 1)[1].split("# mm:filter")[0].strip()
    text = _edit_line(files[name], "mm:filter", lambda ln: ln.split("=", 1)[0] + "= security_filter(user)  # mm:filter")
    assert text is not None
    pkg = name.rsplit("/", 1)[0]
    return {**files, name: _add_import(text, "from .security import security_filter"),
            f"{pkg}/security.py": f"from .retrieval import groups_of\n\n\ndef security_filter(user: str) -> str:\n"
                                  f"    return {expr}\n"}


def prompt_in_other_module(files: Files) -> Files | None:
    """The prompt assembled by a function of another module, sent from the route."""
    name = _mark_file(files, "mm:prompt")
    if name is None:
        return None
    line = next(ln for ln in files[name].split("\n") if "mm:prompt" in ln)
    expr = line.split("=", 1)[1].split("# mm:prompt")[0].strip()
    text = _edit_line(files[name], "mm:prompt", lambda ln: ln.split("=", 1)[0] + "= build_prompt(hits, question)")
    assert text is not None
    pkg = name.rsplit("/", 1)[0]
    return {**files, name: _add_import(text, "from .prompting import build_prompt"),
            f"{pkg}/prompting.py": f"def build_prompt(hits: list, question: str) -> str:\n    return {expr}\n"}


def llm_in_own_class(files: Files) -> Files | None:
    """The model client wrapped in the app's own class in another module."""
    name = _mark_file(files, "mm:llm")
    if name is None:
        return None
    text = _edit_line(files[name], "mm:llm", lambda ln: ln.split("=", 1)[0] + "= Chat().complete(prompt)")
    assert text is not None
    pkg = name.rsplit("/", 1)[0]
    return {**files, name: _add_import(text, "from .chat import Chat"), f"{pkg}/chat.py": textwrap.dedent('''
        from openai import OpenAI


        class Chat:
            def __init__(self) -> None:
                self.client = OpenAI()

            def complete(self, prompt: str):
                return self.client.chat.completions.create(
                    model="gpt-4o", messages=[{"role": "user", "content": prompt}])
        ''')}


def entry_in_other_module(files: Files) -> Files | None:
    """The FastAPI app and route declared in another module, calling the handler of the first."""
    name = "app/main.py"
    if name not in files or '@app.get("/ask")' not in files[name]:
        return None
    text = files[name]
    for drop in ("from fastapi import FastAPI\n", "app = FastAPI()\n", '@app.get("/ask")\n'):
        text = text.replace(textwrap.dedent(drop), "", 1) if drop in text else text
    text = "\n".join(ln for ln in text.split("\n")
                     if ln.strip() not in ("from fastapi import FastAPI", "app = FastAPI()", '@app.get("/ask")'))
    return {**files, name: text, "app/api.py": textwrap.dedent('''
        from fastapi import FastAPI

        from .main import ask

        api = FastAPI()
        api.add_api_route("/ask", ask, methods=["GET"])
        ''')}


def async_variant(files: Files) -> Files | None:
    """`find` and its callers made async (the sync client call kept inside)."""
    name = "app/retrieval.py"
    if name not in files or "\ndef find(" not in files[name]:
        return None
    out = {**files, name: files[name].replace("\ndef find(", "\nasync def find(")}
    for other, text in files.items():
        if other != name and other.endswith(".py") and "from .retrieval import find" in text:
            text = re.sub(r"(?<![\w.])find\(", "await find(", text)
            for fn in ("ask", "retrieve"):
                text = text.replace(f"\ndef {fn}(", f"\nasync def {fn}(")
            out[other] = text
    return out


def placeholder_branch(files: Files) -> Files | None:
    """The query read through a conditional whose other arm is a placeholder (`""` for an empty question)."""
    name = _mark_file(files, SEARCH_MARK)
    if name is None:
        return None
    line = next(ln for ln in files[name].split("\n") if SEARCH_MARK in ln)
    if not re.search(r"\bquestion\b", line):
        return None
    text = _edit_line(files[name], SEARCH_MARK, lambda ln: re.sub(r"\bquestion\b", "q", ln, count=1),
                      'q = question if question else ""')
    return {**files, name: text} if text else None


REWRITES: dict[str, Callable[[Files], Files | None]] = {
    "count_via_builder_method": count_via_builder_method,
    "count_via_kwargs": count_via_kwargs,
    "count_via_env": count_via_env,
    "count_via_settings": count_via_settings,
    "count_via_partial": count_via_partial,
    "search_in_own_class": search_in_own_class,
    "filter_in_helper_module": filter_in_helper_module,
    "prompt_in_other_module": prompt_in_other_module,
    "llm_in_own_class": llm_in_own_class,
    "entry_in_other_module": entry_in_other_module,
    "async_variant": async_variant,
    "placeholder_branch": placeholder_branch,
}


# ---- the facts ----------------------------------------------------------------------------------------------

def _write(root: Path, files: Files) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def _marked_site(scan, root: Path):
    """The search site on (or within two lines of) the line marked `mm:search`."""
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".py", ".ts") or not path.is_file():
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if SEARCH_MARK in line:
                rel = path.relative_to(root).as_posix()
                near = [s for s in scan.search_calls if s.file == rel and abs(s.line - i) <= 2]
                return near[0] if near else None
    return None


def _count(site) -> str:
    if site is None:
        return "no site"
    for key in COUNT_PARAMS:
        p = site.param(key)
        if p is not None:
            if p.outcome == "unresolved":
                return "unresolved"
            return ("default:" if p.outcome == "library_default" else "") + str(p.value)
    return "absent"


def _semantic(site) -> str:
    if site is None:
        return "no site"
    for key in ("query_type", "queryType"):
        p = site.param(key)
        if p is not None:
            return "unresolved" if p.outcome == "unresolved" else str(p.value).lower()
    return "absent"


def facts(files: Files, specs) -> dict[str, str]:
    """The facts ragdiag states about `files` (written to a temporary tree and scanned)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = _write(Path(tmp), files)
        scan = scan_path(root)
        site = _marked_site(scan, root)
        out = {"count": _count(site), "semantic": _semantic(site),
               "reach": site.site_class if site is not None else "no site",
               "dead_sites": str(sorted(s.site_class for s in scan.search_calls if s.function == "old_find"))}
        ctx = AuditContext(config=None, target=None, runner=None, client_code=root)
        for check in ("acl_trimming", "context_budgets"):
            out[check] = str(run_check(resolve(specs[check]), ctx, specs[check]).status)
        return out


def judge(base: str, variant: str, fact: str) -> str:
    """`kept`, `neutral` (unresolved / skipped), `weakened` (a check's fail became warn) or `flip`."""
    if variant == base:
        return "kept"
    if variant in NEUTRAL:
        return "neutral"
    if fact in ("acl_trimming", "context_budgets") and base == "fail" and variant == "warn":
        return "weakened"
    if fact in ("acl_trimming", "context_budgets") and variant == "warn" and base == "pass":
        return "weakened"
    return "flip"


@dataclass(frozen=True)
class Pair:
    base: str
    rewrite: str
    fact: str
    before: str
    after: str
    verdict: str


def run(specs, bases: dict[str, Files] | None = None, rewrites: dict[str, Callable] | None = None) -> list[Pair]:
    """Every (base, rewrite, fact) pair where the rewrite applies."""
    pairs: list[Pair] = []
    for bname, files in (bases or BASES).items():
        base = facts(files, specs)
        for rname, rewrite in (rewrites or REWRITES).items():
            variant_files = rewrite(files)
            if variant_files is None:
                continue
            variant = facts(variant_files, specs)
            for fact, value in base.items():
                pairs.append(Pair(bname, rname, fact, value, variant[fact], judge(value, variant[fact], fact)))
    return pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    from ragdiag.inputs.checklist import load_checklist

    pairs = run(load_checklist())
    flips = [p for p in pairs if p.verdict == "flip"]
    print(f"{len(BASES)} bases, {len(REWRITES)} rewrites, {len({(p.base, p.rewrite) for p in pairs})} variants, "
          f"{len(pairs)} fact pairs: {len(flips)} flips, "
          f"{sum(p.verdict == 'neutral' for p in pairs)} unresolved/skipped, "
          f"{sum(p.verdict == 'weakened' for p in pairs)} weakened")
    for rname in REWRITES:
        mine = [p for p in pairs if p.rewrite == rname]
        print(f"  {rname:26s} pairs {len(mine):3d}  flips {sum(p.verdict == 'flip' for p in mine):2d}")
    for p in pairs:
        if p.verdict == "flip" or (args.verbose and p.verdict != "kept"):
            print(f"  {p.verdict:8s} {p.base} / {p.rewrite} / {p.fact}: {p.before!r} -> {p.after!r}")


if __name__ == "__main__":
    main()
