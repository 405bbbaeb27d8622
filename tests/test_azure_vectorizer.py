"""Text vector queries need an integrated vectorizer; client-supplied query vectors need none.

Against the emulator as the Azure index: with `vectorizer=False` its definition has no
vectorizer (as an index whose vectors are pushed by the client), so a `kind: "text"` query
is refused by the target before it is sent, and the goldset's `query_vector` goes out as
`kind: "vector"`.
"""

from __future__ import annotations

import pytest

from ragdiag.engine.context import AuditContext, with_query_vector
from ragdiag.engine.runner import Failure, Runner
from ragdiag.errors import InputDataError, TargetError
from ragdiag.inputs.goldset import load_goldset
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.emulator import Emulator
from tests.test_emulator import INDEX, KEY, build_tiny_target

pytest.importorskip("azure.search.documents")
from azure.core.credentials import AzureKeyCredential  # noqa: E402

from ragdiag.targets.azure import AzureTarget  # noqa: E402

TEXT = SearchRequest(vector_queries=(VectorQuery(fields=("vec",), text="alpha", k=5),), top=5)
VECTOR = SearchRequest(vector_queries=(VectorQuery(fields=("vec",), vector=(1.0, 0.0, 0.0), k=5),), top=5)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return build_tiny_target(tmp_path_factory.mktemp("vz") / "idx")


def _azure(emu):
    return AzureTarget(emu.url, INDEX, credential=AzureKeyCredential(KEY), api_key_env="RAGDIAG_TEST_KEY",
                       backoff_s=0.005)


def test_text_vector_query_without_vectorizer_is_refused_before_sending(local):
    with Emulator({INDEX: local}, api_key=KEY, vectorizer=False) as emu:
        t = _azure(emu)
        try:
            assert t.schema().field_vectorizer("vec") is None
            before = emu.stats()["search_requests"]
            with pytest.raises(TargetError) as err:
                t.search(TEXT)
            assert "vec" in str(err.value) and "no vectorizer" in str(err.value)
            assert "query_vector" in str(err.value)  # the fix is named
            assert emu.stats()["search_requests"] == before  # nothing was sent
            # the client's own vector needs no vectorizer
            assert t.search(VECTOR).keys
        finally:
            t.close()


def test_emulator_without_vectorizer_refuses_text_queries_like_azure(local):
    import json
    import urllib.error
    import urllib.request

    with Emulator({INDEX: local}, api_key=KEY, vectorizer=False) as emu:
        body = json.dumps({"vectorQueries": [{"kind": "text", "text": "alpha", "fields": "vec", "k": 5}]})
        req = urllib.request.Request(f"{emu.url}/indexes/{INDEX}/docs/search?api-version=2025-09-01",
                                     data=body.encode(), method="POST",
                                     headers={"api-key": KEY, "Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req)
        assert err.value.code == 400 and b"vectorizer" in err.value.read()


def test_with_a_vectorizer_text_queries_are_sent(local):
    with Emulator({INDEX: local}, api_key=KEY) as emu:
        t = _azure(emu)
        try:
            assert t.schema().field_vectorizer("vec").name == "ragdiag-emulator"
            assert t.search(TEXT).keys
        finally:
            t.close()


def test_azure_embedding_model_names_the_vectorizer_model(local):
    import dataclasses

    from ragdiag.model.schema import Vectorizer

    schema = local.schema()
    schema = dataclasses.replace(
        schema, vectorizers=(Vectorizer("oai", "azureOpenAI", "text-embedding-3-large"),),
        vector_profiles=tuple(dataclasses.replace(p, vectorizer="oai") for p in schema.vector_profiles))

    class Wrapped:
        def __getattr__(self, name):
            return getattr(local, name)

        def schema(self):
            return schema

    with Emulator({INDEX: Wrapped()}, api_key=KEY) as emu:
        t = _azure(emu)
        try:
            assert t.embedding_model is None  # the definition is not read for this
            t.schema()
            assert t.embedding_model == "text-embedding-3-large"
        finally:
            t.close()


GOLDSET = """\
- id: q1
  question: What is alpha?
  as_user: u
  expect_sources: [a]
  query_vector: [1.0, 0.0, 0.0]
- id: q2
  question: What is beta?
  as_user: u
  expect_sources: [b]
"""

POLICY = """
[policy]
name = "vec"
[routes]
fact = "fact"
[profiles.fact]
query_type = "simple"
keyword_text = "verbatim"
  [[profiles.fact.vector_queries]]
  fields = ["vec"]
  k = 5
"""


def test_goldset_query_vectors_are_sent_as_vector_queries(local, tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text(GOLDSET)
    gs = load_goldset(path)
    assert gs["q1"].query_vector == (1.0, 0.0, 0.0) and gs["q2"].query_vector is None
    with Emulator({INDEX: local}, api_key=KEY, vectorizer=False) as emu:
        t = _azure(emu)
        try:
            ctx = AuditContext(config=None, target=t, runner=Runner(t), policy=loads_policy(POLICY),
                               goldset=gs, identities={"u": Identity("u", ("all",))})
            run = ctx.run_gold(ctx.policy)
            by_case = {q.case.id: q for q in run.queries}
            assert by_case["q1"].requests[0].vector_queries[0].kind == "vector"
            assert by_case["q2"].requests[0].vector_queries[0].kind == "text"
            results = dict(zip(by_case, run.results, strict=True))
            assert results["q1"].keys[0] == "a"  # the supplied vector found it
            assert isinstance(results["q2"], Failure)  # text without a vectorizer: refused, not sent
            assert "no vectorizer" in results["q2"].reason
        finally:
            t.close()


def test_with_query_vector_replaces_only_text_vector_queries():
    req = SearchRequest(search="alpha", vector_queries=(
        VectorQuery(fields=("vec",), text="alpha", k=5, weight=2.0),
        VectorQuery(fields=("vec2",), vector=(0.0, 1.0), k=3)))
    out = with_query_vector(req, (1.0, 0.0, 0.0))
    assert out.search == "alpha"
    a, b = out.vector_queries
    assert (a.kind, a.vector, a.k, a.weight) == ("vector", (1.0, 0.0, 0.0), 5, 2.0)
    assert b == req.vector_queries[1]


def test_bad_query_vector_names_the_line(tmp_path):
    path = tmp_path / "gold.yaml"
    path.write_text("- id: q1\n  question: x\n  expect_sources: [a]\n  query_vector: [1, 'x']\n")
    with pytest.raises(InputDataError, match="'query_vector' must be a non-empty list of finite numbers") as err:
        load_goldset(path)
    assert err.value.line == 4


@pytest.mark.parametrize("vectorizer", [False, True])
def test_plan_counts_the_searches_refused_for_want_of_a_vectorizer(local, tmp_path, vectorizer):
    from ragdiag.plan import plan_audit

    path = tmp_path / "gold.yaml"
    path.write_text(GOLDSET)
    with Emulator({INDEX: local}, api_key=KEY, vectorizer=vectorizer) as emu:
        t = _azure(emu)
        try:
            ctx = AuditContext(config=None, target=t, runner=Runner(t), policy=loads_policy(POLICY),
                               goldset=load_goldset(path), identities={"u": Identity("u", ("all",))})
            _rows, summary = plan_audit(ctx, checks=["goldset"])
        finally:
            t.close()
    assert summary["searches"] > 0
    if vectorizer:
        assert summary["refused_without_vectorizer"] == 0 and summary["fields_without_vectorizer"] == []
    else:  # q2 asks as text (q1 brings its own vector)
        assert 0 < summary["refused_without_vectorizer"] < summary["searches"]
        assert summary["fields_without_vectorizer"] == ["vec"]
