"""A wrapper's request as its callers send it (`ragdiag.codescan.python_callers`), and the app's own wrapper
never taken for the library.

Both ways each: a REST wrapper whose body a caller builds with an explicit `top` reports that `top`
(callers that differ are kept apart, not averaged into one value); a method of the app's own class
named like LangChain's is not given LangChain's default; `**kwargs` that resolve to a dict carry their
keys, and an unknown receiver leaves the parameter unresolved instead of guessing.
"""

from __future__ import annotations

from ragdiag.codescan import scan_path
from tests.codescan_trees import tree

CLIENT = """
    import aiohttp

    class SearchGateway:
        def __init__(self, endpoint: str):
            self.endpoint = endpoint

        async def send(self, index: str, body: dict, *, user_token: str | None = None) -> dict:
            url = f"{self.endpoint}/indexes/{index}/docs/search?api-version=2024-07-01"
            headers = {"Content-Type": "application/json"}
            async with aiohttp.ClientSession() as session:
                async with session.post(url, headers=headers, json=body) as resp:
                    return await resp.json()

        async def answer_search(self, question: str) -> dict:
            body = {"search": question, "top": 5, "filter": "status eq 'published'"}
            return await self.send("kb", body)
    EXTRA
    """


def test_a_wrappers_body_is_read_where_its_caller_builds_it(tmp_path):
    root = tree(tmp_path, {"gateway.py": CLIENT.replace("EXTRA", "")})
    (site,) = scan_path(root).search_calls
    assert site.kind == "rest_search" and site.location == "gateway.py:12"
    top = site.params["top"]
    assert (top.value, top.outcome) == (5, "resolved") and "gateway.py:17" in top.provenance
    assert site.params["filter"].value == "status eq 'published'"


def test_callers_that_send_different_values_are_kept_apart(tmp_path):
    extra = ("        async def is_empty(self) -> bool:\n"
             "            return not (await self.send(\"kb\", {\"search\": \"*\", \"top\": 1}))[\"value\"]\n")
    (site,) = scan_path(tree(tmp_path, {"gateway.py": CLIENT.replace("    EXTRA\n", extra)})).search_calls
    top = site.params["top"]
    assert (top.outcome, top.source) == ("unresolved", "callers")
    assert "5 from SearchGateway.answer_search" in top.expression and "1 from SearchGateway.is_empty" in top.expression
    # the filter one caller sends and the other does not is not a single known filter either
    assert site.params["filter"].source == "callers" and "<unset>" in site.params["filter"].expression


def test_a_wrapper_no_caller_fills_stays_unknown(tmp_path):
    """Without a caller in the module the wrapper's URL is a parameter: no site is made up, a gap is said."""
    root = tree(tmp_path, {"gw.py": """
        import aiohttp

        async def post_search(url: str, body: dict) -> dict:
            async with aiohttp.ClientSession() as session:
                async with session.post(url, json=body) as resp:
                    return await resp.json()
        """})
    scan = scan_path(root)
    assert not scan.search_calls
    assert [(g.kind, g.location) for g in scan.gaps] == [("http_wrapper", "gw.py:6")]


OWN_RETRIEVER = """
    from langchain_community.vectorstores import FAISS

    class Knowledge:
        def __init__(self, store):
            self.store = store

        def as_retriever(self, k: int = 8):
            return self.store.as_retriever(search_kwargs={"k": k})


    def answer(kb: Knowledge, q: str):
        return kb.as_retriever(k=8).invoke(q)
    """


def test_the_apps_own_method_named_like_the_library_gets_no_library_default(tmp_path):
    scan = scan_path(tree(tmp_path, {"kb.py": OWN_RETRIEVER}))
    # one site: the library's as_retriever inside the wrapper, with the k the wrapper passes; the call of the
    # app's own method is no second site and is not given LangChain's k=4
    (site,) = [s for s in scan.search_calls if s.kind == "langchain"]
    assert site.location == "kb.py:9"
    k = site.params["k"]
    assert (k.value, k.outcome) == (8, "resolved") and not k.source.startswith("library_default")


def test_kwargs_dicts_carry_their_keys_and_an_unknown_receiver_is_not_guessed(tmp_path):
    scan = scan_path(tree(tmp_path, {"engine.py": """
        from llama_index.core import VectorStoreIndex

        def engine(index: VectorStoreIndex, doc_id: str):
            kwargs = {"similarity_top_k": 3, "filters": doc_id}
            return index.as_query_engine(**kwargs)
        """, "service.py": """
        def unknown(thing, q):
            return thing.as_retriever().invoke(q)
        """}))
    by = {s.function: s for s in scan.search_calls}
    assert by["engine"].params["k"].value == 3 and by["engine"].params["k"].outcome == "resolved"
    k = by["unknown"].params["k"]
    assert k.outcome == "unresolved" and "library default only if" in k.override


def test_langchain_js_default_k_only_on_a_store_the_code_built(tmp_path):
    scan = scan_path(tree(tmp_path, {"chat.ts": """
        import { PineconeStore } from "@langchain/pinecone";

        export async function built(index: any, embeddings: any, q: string) {
          const store = await PineconeStore.fromExistingIndex(embeddings, { pineconeIndex: index });
          return store.asRetriever().invoke(q);
        }

        export async function handedIn(store: any, q: string) {
          return store.asRetriever().invoke(q);
        }
        """}))
    by = {s.function: s for s in scan.search_calls}
    assert (by["built"].params["k"].value, by["built"].params["k"].outcome) == (4, "library_default")
    assert by["handedIn"].params["k"].outcome == "unresolved"


def test_a_configurations_empty_search_kwargs_leave_the_library_default_overridable(tmp_path):
    scan = scan_path(tree(tmp_path, {"retrieval.py": """
        from dataclasses import dataclass, field
        from langchain_community.vectorstores import Chroma

        @dataclass
        class Configuration:
            search_kwargs: dict = field(default_factory=dict)

        def make_retriever(configuration: Configuration, embeddings):
            store = Chroma(embedding_function=embeddings)
            return store.as_retriever(search_kwargs=configuration.search_kwargs)
        """}))
    (site,) = scan.search_calls
    k = site.params["k"]
    assert (k.value, k.outcome) == (4, "library_default") and "Configuration.search_kwargs" in k.override
