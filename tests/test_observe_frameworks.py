"""Real client frameworks through `ragdiag record` against `ragdiag serve`, instrumented with OpenInference.

LangChain's own Azure AI Search vector store (langchain-community `AzureSearch`) and a LangGraph
loop run as an application would, with LangChain's fake models, through the recording proxy
to the emulator on loopback; the OpenInference LangChain instrumentor exports their spans over
OTLP/HTTP (the real exporter) to ragdiag's receiver. The tests read what was sent, not what
the code says: the framework's defaults (k = 4, hybrid search) as sent, the loop's iterations
per trace, and the path that searched without the security clause, named by its trace.
"""

from __future__ import annotations

import json
import operator
import warnings
from typing import Annotated, TypedDict

import numpy as np
import pytest

from ragdiag.checks import resolve, run_check
from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.checklist import load_checklist
from ragdiag.model.schema import (
    STRING,
    STRING_COLLECTION,
    VECTOR,
    Field,
    IndexSchema,
    SemanticConfiguration,
    VectorSearchProfile,
)
from ragdiag.observe import load_observed
from ragdiag.observe.otlp import OtlpReceiver
from ragdiag.observe.proxy import RecordingProxy
from ragdiag.targets.emulator import Emulator
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker

pytest.importorskip("langchain_community")
pytest.importorskip("langgraph")
pytest.importorskip("openinference.instrumentation.langchain")
warnings.filterwarnings("ignore", category=DeprecationWarning)

from langchain_community.vectorstores.azuresearch import AzureSearch  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from openinference.instrumentation.langchain import LangChainInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402

KEY = "framework-test-key-41d9"
INDEX = "kb"
DIM = 8
SECURE = "group_ids/any(g: search.in(g, 'sales'))"
SPECS = load_checklist()
TEXTS = [f"document {i} on notice periods, contracts and renewal terms number {i}" for i in range(40)]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    emb = DeterministicFakeEmbedding(size=DIM)
    # LangChain's default field names: id, content, content_vector, metadata (a JSON string)
    schema = IndexSchema(name=INDEX, fields=(
        Field("id", STRING, key=True, filterable=True), Field("content", STRING, searchable=True),
        Field("metadata", STRING), Field("group_ids", STRING_COLLECTION, filterable=True, retrievable=False),
        Field("content_vector", VECTOR, dimensions=DIM, vector_profile="hnsw")),
        semantic_configurations=(SemanticConfiguration("default", None, ("content",)),),
        default_semantic_configuration="default", vector_profiles=(VectorSearchProfile("hnsw", "hnsw-1", m=8),))
    records = [{"id": f"d{i}", "content": t, "metadata": json.dumps({"source": f"contract-{i}.md"}),
                "group_ids": ["sales" if i % 2 else "hr"]} for i, t in enumerate(TEXTS)]
    target = LocalTarget.build(records, LocalIndexSpec(name=INDEX, schema=schema, vector_sources={},
                                                       now="2026-06-30T00:00:00Z"),
                               index_dir=tmp_path_factory.mktemp("fw") / "idx", reranker=KeyReranker({}),
                               embedder=FakeEmbedder({}, dim=DIM), progress=False,
                               vectors={"content_vector": np.asarray(emb.embed_documents(TEXTS), dtype=np.float32)})
    with Emulator({INDEX: target}, api_key=KEY) as emu:
        yield emu


@pytest.fixture()
def recorded(emulator, tmp_path):
    """The proxy, the OTLP receiver and an instrumented LangChain; yields (proxy, paths)."""
    traffic, traces = tmp_path / "traffic.jsonl", tmp_path / "traces.jsonl"
    with OtlpReceiver(out=traces, port=0) as recv, RecordingProxy(emulator.url, out=traffic) as proxy:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{recv.url}/v1/traces")))
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            yield proxy, traffic, traces
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
            proxy.flush()


def _store(url: str) -> AzureSearch:
    return AzureSearch(azure_search_endpoint=url, azure_search_key=KEY, index_name=INDEX,
                       embedding_function=DeterministicFakeEmbedding(size=DIM))


def _check(check_id: str, obs, **kw):
    ctx = AuditContext(config=None, target=None, runner=Runner(None), observed=obs, **kw)
    return run_check(resolve(SPECS[check_id]), ctx, SPECS[check_id])


def test_langchain_retriever_defaults_are_observed_as_sent(recorded):
    proxy, traffic, traces = recorded
    store = _store(proxy.url)
    docs = store.as_retriever().invoke(TEXTS[3])       # LangChain's defaults: search_type hybrid, k 4
    five = store.as_retriever(search_type="similarity", k=5).invoke(TEXTS[5])
    assert len(docs) == 4 and len(five) == 5
    proxy.flush()
    obs = load_observed(traffic=[traffic], traces=[traces])
    searches = obs.searches
    assert len(searches) == 2
    hybrid, similarity = searches[0], searches[1]
    assert "langchain" in hybrid.record.user_agent
    # the defaults, as the framework sent them (not as its source code reads)
    assert hybrid.request.search == TEXTS[3] and hybrid.request.top == 4
    assert [vq.k for vq in hybrid.request.vector_queries] == [4] and hybrid.request.vector_queries[0].kind == "vector"
    assert not similarity.request.has_text_leg and similarity.request.vector_queries[0].k == 5
    # the retriever spans carry the same documents the proxy saw come back
    retrievers = obs.retrievers()
    assert len(retrievers) == 2
    assert [d.id for d in retrievers[0].documents()] == [str(d.metadata["id"]) for d in docs] == list(hybrid.record.keys)
    assert retrievers[0].input_value == TEXTS[3]
    pool = _check("pool_size", obs)
    rows = {(r[1], r[3]) for r in pool.evidence_table("observed_pools").rows}
    assert rows == {("content_vector=4", 4), ("content_vector=5", 5)}
    assert pool.status == "pass" and "none uses the semantic ranker" in pool.headline
    routes = _check("route_counts", obs)
    assert {r[0] for r in routes.evidence_table("observed_routes").rows} == {
        f"{INDEX}: simple over keyword + content_vector", f"{INDEX}: simple over content_vector"}


class State(TypedDict):
    question: str
    query: str
    docs: Annotated[list, operator.add]
    rounds: int
    answer: str


def _graph(store: AzureSearch, grades: list[str]):
    """retrieve -> grade -> (rewrite -> retrieve)* -> generate: the rewrite path searches without the clause."""
    grader = GenericFakeChatModel(messages=iter([AIMessage(content=g) for g in grades]))
    writer = GenericFakeChatModel(messages=iter([AIMessage(content="The notice period is three months.",
                                                           usage_metadata={"input_tokens": 1800, "output_tokens": 9,
                                                                           "total_tokens": 1809})]))

    secured = store.as_retriever(search_type="similarity", k=4, search_kwargs={"filters": SECURE})
    loose = store.as_retriever(search_type="similarity", k=4)

    def retrieve(state: State) -> dict:
        # the first search trims with the identity's clause; the rewrite path forgot it
        docs = (secured if state["rounds"] == 0 else loose).invoke(state["query"])
        return {"docs": docs, "rounds": state["rounds"] + 1}

    def grade(state: State) -> str:
        verdict = grader.invoke(f"Do these answer '{state['question']}'? {len(state['docs'])} documents")
        return "generate" if verdict.content == "yes" or state["rounds"] >= 5 else "rewrite"

    def rewrite(state: State) -> dict:
        return {"query": f"{state['question']} (round {state['rounds']})"}

    def generate(state: State) -> dict:
        context = "\n".join(d.page_content for d in state["docs"][-4:])
        return {"answer": writer.invoke(f"{context}\n\n{state['question']}").content}

    g = StateGraph(State)
    g.add_node("retrieve", retrieve)
    g.add_node("rewrite", rewrite)
    g.add_node("generate", generate)
    g.add_edge(START, "retrieve")
    g.add_conditional_edges("retrieve", grade, {"rewrite": "rewrite", "generate": "generate"})
    g.add_edge("rewrite", "retrieve")
    g.add_edge("generate", END)
    return g.compile()


def test_a_langgraph_loop_is_counted_and_its_unsecured_path_found(recorded):
    proxy, traffic, traces = recorded
    app = _graph(_store(proxy.url), ["no", "no", "yes"])
    out = app.invoke({"question": "What is the notice period?", "query": "notice period", "docs": [], "rounds": 0,
                      "answer": ""})
    assert out["rounds"] == 3 and out["answer"].startswith("The notice period")
    proxy.flush()
    obs = load_observed(traffic=[traffic], traces=[traces])
    assert len(obs.searches) == 3
    (loop,) = [lp for lp in obs.loops() if lp.retrievals]
    assert loop.retrievals == 3 and loop.llm_calls == 4  # three grades and the answer
    calls = _check("call_sites", obs)
    assert calls.metrics["observed_max_retrievals_per_trace"] == 3
    assert "at most 3 retrievals per trace" in calls.headline
    # the security clause is on the first search only: found, and the trace that sent the others named
    acl = _check("acl_trimming", obs)
    assert acl.status == "fail", acl.headline
    assert "missing on 2 of 3 recorded requests" in acl.headline and f"trace {loop.trace_id}" in acl.headline
    # the prompt the model got, measured from its span, against a declared budget
    budget = _check("context_budgets", obs, budgets={"context_tokens": 1000})
    assert budget.metrics["observed_prompt_tokens_max"] == 1800
    assert budget.status == "fail" and "above the budget of 1,000" in budget.headline



def test_llamaindex_spans_are_read_and_nested_calls_counted_once(tmp_path):
    """LlamaIndex's own query engine (llama-index-core, MockEmbedding, MockLLM), instrumented by
    OpenInference: its RETRIEVER span carries the retrieved node ids, and its nested spans of one
    kind (retrieve -> _retrieve, predict -> complete) count as one call each. (Its Azure AI Search
    vector store cannot be installed beside azure-search-documents 12: every release pins <12.)"""
    pytest.importorskip("llama_index.core")
    pytest.importorskip("openinference.instrumentation.llama_index")
    from llama_index.core import Document, Settings, VectorStoreIndex
    from llama_index.core.embeddings import MockEmbedding
    from llama_index.core.llms import MockLLM
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    traces = tmp_path / "traces.jsonl"
    with OtlpReceiver(out=traces, port=0) as recv:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{recv.url}/v1/traces")))
        instrumentor = LlamaIndexInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            Settings.embed_model, Settings.llm = MockEmbedding(embed_dim=8), MockLLM(max_tokens=16)
            index = VectorStoreIndex.from_documents([Document(text=f"doc {i} on notice periods", doc_id=f"d{i}")
                                                     for i in range(10)])
            response = index.as_query_engine(similarity_top_k=3).query("What is the notice period?")
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
    obs = load_observed(traces=[traces])
    retrieved = [d.id for s in obs.retrievers() for d in s.documents()]
    assert retrieved == [n.node.node_id for n in response.source_nodes] and len(retrieved) == 3
    (loop,) = [lp for lp in obs.loops() if lp.retrievals]
    assert loop.retrievals == 1 and loop.llm_calls >= 1
    calls = _check("call_sites", obs)
    assert "at most 1 retrievals per trace" in calls.headline
