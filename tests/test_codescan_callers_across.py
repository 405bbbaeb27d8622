"""Values a site's function is handed by callers in other modules (`ragdiag.codescan.callers_across`).

Both ways for each mechanism: a wrapper's `k` default that its only caller overrides is the
caller's value, a same-named method of another class is no caller; callers that disagree leave
the value unresolved with each caller's value shown; a caller passing an expression not known
here keeps the default; a filter the caller passes that compares a field with the caller's own
identity is trimming; a function whose every caller sends no query text lists the index (admin).
"""

from __future__ import annotations

from pathlib import Path

from ragdiag.codescan import scan_path
from tests.codescan_trees import tree as _tree

STORE = '''import faiss
import numpy as np


class VectorStore:
    def __init__(self, dim=8):
        self.index = faiss.IndexFlatL2(dim)
        self.chunks = []

    def search(self, query_embeddings, k=3):
        q = np.array(query_embeddings, dtype="float32").reshape(1, -1)
        distances, indices = self.index.search(q, k)
        return [self.chunks[i] for i in indices[0] if i < len(self.chunks)]


vector_db = VectorStore()
'''
OTHER = '''class KeywordStore:
    def search(self, query, k=5):
        return []


keyword_store = KeywordStore()
'''
ROUTE = '''from fastapi import FastAPI

from core.rag import answer

app = FastAPI()


@app.post("/chat")
def chat(q: str):
    return answer(q)
'''


def _site(root: Path, file: str):
    scan = scan_path(root)
    hits = [s for s in scan.search_calls if s.file == file]
    assert len(hits) == 1, scan.search_calls
    return hits[0], scan


def test_a_wrappers_default_k_is_replaced_by_what_its_only_caller_in_another_module_passes(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "app.py": ROUTE, "core/vector_store.py": STORE, "core/keyword_store.py": OTHER,
        "core/rag.py": "from core.vector_store import vector_db\nfrom core.keyword_store import keyword_store\n\n\n"
                       "def answer(q):\n    emb = [0.0] * 8\n    hits = vector_db.search(emb, k=15)\n"
                       "    words = keyword_store.search(q, k=7)\n    return hits + words\n",
    })
    site, _ = _site(root, "core/vector_store.py")
    k = site.params["k"]
    # the KeywordStore's `search(q, k=7)` is another class's method: not a caller of VectorStore.search
    assert (k.value, k.resolved, k.source) == (15, True, "callers")
    assert "answer (core/rag.py:7)" in k.provenance and k.override == ""


def test_without_a_caller_passing_k_the_default_stays_with_its_override(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "app.py": ROUTE, "core/vector_store.py": STORE,
        "core/rag.py": "from core.vector_store import vector_db\n\n\ndef answer(q):\n"
                       "    return vector_db.search([0.0] * 8)\n",
    })
    k = _site(root, "core/vector_store.py")[0].params["k"]
    assert (k.value, k.resolved) == (3, True) and k.source in ("callers", "default:k")


def test_callers_that_disagree_leave_k_unresolved_with_each_callers_value(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "app.py": ROUTE, "core/vector_store.py": STORE,
        "core/rag.py": "from core.vector_store import vector_db\n\n\ndef answer(q):\n"
                       "    return vector_db.search([0.0] * 8, k=15)\n\n\ndef more(q):\n"
                       "    return vector_db.search([0.0] * 8, 40)\n",
    })
    k = _site(root, "core/vector_store.py")[0].params["k"]
    assert not k.resolved and k.outcome == "unresolved" and k.source == "callers"
    assert "15 from answer" in k.expression and "40 from more" in k.expression


def test_a_caller_passing_an_unknown_expression_keeps_the_parameters_default(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "app.py": ROUTE, "core/vector_store.py": STORE,
        "core/rag.py": "from core.vector_store import vector_db\n\n\ndef answer(q, depth=None):\n"
                       "    return vector_db.search([0.0] * 8, k=depth)\n",
    })
    k = _site(root, "core/vector_store.py")[0].params["k"]
    assert (k.value, k.resolved, k.source) == (3, True, "default:k") and k.override == "parameter:k"


SEARCH_TS = '''import { SearchClient } from "@azure/search-documents";

const client = new SearchClient("https://x.search.windows.net", "idx", null as any);

export const similarity = async (text: string, k: number, filter?: string): Promise<string[]> => {
  const r = await client.search(text, { top: k, filter: filter });
  return [];
};

export const listThread = async (text?: string, filter?: string): Promise<string[]> => {
  const r = await client.search(text, { filter: filter });
  return [];
};
'''


def _ts_tree(tmp_path: Path, chat: str) -> Path:
    return _tree(tmp_path, {
        "src/app/api/chat/route.ts": 'import { answer } from "@/features/chat";\n\n'
                                     "export async function POST(req: Request) {\n  return answer(await req.text());\n}\n",
        "src/features/search.ts": SEARCH_TS,
        "src/features/chat.ts": chat,
    })


def test_a_ts_callers_top_and_identity_filter_are_the_sites_and_the_filter_is_trimming(tmp_path: Path) -> None:
    root = _ts_tree(tmp_path, 'import { similarity, listThread } from "./search";\nimport { userHashedId } from "./auth";\n\n'
                    "export const answer = async (q: string, thread: string): Promise<string> => {\n"
                    "  const docs = await similarity(q, 10, `user eq '${await userHashedId()}' and thread eq '${thread}'`);\n"
                    "  await listThread(undefined, `thread eq '${thread}'`);\n  return docs.join();\n};\n")
    scan = scan_path(root)
    sites = {s.function: s for s in scan.search_calls}
    sim = sites["similarity"]
    assert (sim.params["top"].value, sim.params["top"].resolved) == (10, True)
    assert "user eq '${await userHashedId()}'" in sim.params["filter"].value
    assert sim.site_class == "request"
    mechs = {(a.site, a.mechanism) for a in scan.acl_sites}
    assert (sim.location, "odata_filter") in mechs
    # every caller of listThread sends no query text: it lists a thread's documents (admin), no trimming there
    assert sites["listThread"].site_class == "admin"
    assert not any(site == sites["listThread"].location for site, _ in mechs)


def test_a_ts_filter_from_the_caller_on_a_non_identity_value_is_no_trimming(tmp_path: Path) -> None:
    root = _ts_tree(tmp_path, 'import { similarity } from "./search";\n\n'
                    "export const answer = async (q: string, cat: string): Promise<string> => {\n"
                    "  const docs = await similarity(q, 10, `category eq '${cat}'`);\n  return docs.join();\n};\n")
    scan = scan_path(root)
    sim = next(s for s in scan.search_calls if s.function == "similarity")
    assert sim.params["filter"].source == "callers"
    assert not any(a.site == sim.location for a in scan.acl_sites)
    # a query text from the caller's variable is no listing: the site stays on the request path
    assert sim.site_class == "request"


SEARCH_PY = '''from azure.search.documents import SearchClient

client = SearchClient("e", "groups", None)


def hybrid_search(query, user_id, active_group_id=None):
    return list(client.search(search_text=query, filter=f"group_id eq '{active_group_id}'", top=5))
'''


def _flask(group_expr: str) -> str:
    return ("from flask import Flask, request\n\nfrom functions_search import hybrid_search\nfrom groups import mine\n\n"
            "app = Flask(__name__)\n\n\n@app.route('/api/chat', methods=['POST'])\ndef chat_api():\n"
            "    data = request.get_json()\n    user_id = 'u'\n"
            f"    active_group_id = {group_expr}\n"
            "    search_args = {'query': data.get('message'), 'user_id': user_id, 'active_group_id': active_group_id}\n"
            "    return hybrid_search(**search_args)\n")


def test_a_group_id_the_caller_takes_from_the_request_is_ids_from_request_even_through_a_kwargs_dict(tmp_path):
    root = _tree(tmp_path, {"app.py": _flask("data.get('active_group_id')"), "functions_search.py": SEARCH_PY,
                            "groups.py": "def mine(user_id):\n    return 'g'\n"})
    hits = [f for f in scan_path(root).fail_open if f.kind == "ids_from_request"]
    assert len(hits) == 1 and hits[0].site == "functions_search.py:7"
    assert "request.get_json()" in hits[0].evidence and "chat_api (app.py:" in hits[0].evidence


def test_a_group_id_the_caller_looks_up_server_side_is_no_request_id(tmp_path):
    root = _tree(tmp_path, {"app.py": _flask("mine(user_id)"), "functions_search.py": SEARCH_PY,
                            "groups.py": "def mine(user_id):\n    return 'g'\n"})
    assert not [f for f in scan_path(root).fail_open if f.kind == "ids_from_request"]


def test_a_name_called_from_more_files_than_an_apps_wrapper_has_is_not_followed(tmp_path):
    # a library's generic method (thirteen modules calling `search`): no caller is taken for the app's
    files = {"app.py": ROUTE, "core/vector_store.py": STORE,
             "core/rag.py": "from core.vector_store import vector_db\n\n\ndef answer(q):\n"
                            "    return vector_db.search([0.0] * 8, k=15)\n"}
    for i in range(12):
        files[f"core/user{i}.py"] = ("from core.vector_store import vector_db\n\n\ndef f(q):\n"
                                     f"    return vector_db.search([0.0] * 8, k={20 + i})\n")
    k = _site(_tree(tmp_path, files), "core/vector_store.py")[0].params["k"]
    assert (k.value, k.source, k.override) == (3, "default:k", "parameter:k")
