"""The emulator speaks Azure AI Search's REST subset: checked with the real SDK and raw HTTP."""

from __future__ import annotations

import dataclasses
import http.client
import json
import math
import urllib.error
import urllib.request

import numpy as np
import pytest

from ragdiag.errors import ConfigError
from ragdiag.model import SearchRequest, VectorQuery
from ragdiag.model.schema import IndexSchema
from ragdiag.targets.emulator import IGNORED_BODY_KEYS, Emulator, Faults
from ragdiag.targets.emulator.server import EMULATOR_VECTORIZER
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

azure_sd = pytest.importorskip("azure.search.documents")
from azure.core.credentials import AzureKeyCredential  # noqa: E402
from azure.core.exceptions import HttpResponseError  # noqa: E402
from azure.search.documents import SearchClient  # noqa: E402
from azure.search.documents.indexes import SearchIndexClient  # noqa: E402
from azure.search.documents.models import VectorizableTextQuery, VectorizedQuery  # noqa: E402

KEY = "emu-test-key-7f3a9c"
INDEX = "tiny"


def emu_schema() -> IndexSchema:
    """tiny_schema with a sortable key and a native permission-filter field."""
    s = tiny_schema()
    fields = []
    for f in s.fields:
        if f.name == "key":
            f = dataclasses.replace(f, sortable=True)
        elif f.name == "group_ids":
            f = dataclasses.replace(f, permission_filter="groupIds")
        fields.append(f)
    return dataclasses.replace(s, fields=tuple(fields))


def _rec(key, content, **kw):
    base = {"key": key, "title": "", "content": content, "category": "common",
            "confidence_score": 0.9, "page": 1, "last_updated": "2026-01-01T00:00:00Z",
            "is_table": False, "entity_keys": [], "group_ids": ["all"]}
    base.update(kw)
    return base


def build_tiny_target(path, *, reranker="default") -> LocalTarget:
    """64 records: four hand-made ones plus a fan of 60 whose cosine to [1, 0, 0] falls with i."""
    records = [_rec("a", "alpha. Alpha is first."),
               _rec("b", "alpha with several other words in it", confidence_score=0.2),
               _rec("c", "gamma", title="alpha"), _rec("d", "beta")]
    vectors = [[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0, 1]]
    for i in range(60):
        theta = (i + 1) * (math.pi / 2) / 61
        records.append(_rec(f"r{i:02d}", "filler text", category="rare" if 30 <= i < 35 else "common",
                            confidence_score=round(i / 60, 3)))
        vectors.append([math.cos(theta), math.sin(theta), 0.0])
    if reranker == "default":
        reranker = KeyReranker({"b": 3.5, "a": 1.0})
    spec = LocalIndexSpec(name=INDEX, schema=emu_schema(), vector_sources={},
                          now="2026-06-30T00:00:00Z")
    return LocalTarget.build(records, spec, index_dir=path, reranker=reranker,
                             embedder=FakeEmbedder({"alpha": [1, 0, 0], "beta": [0, 0, 1]}),
                             vectors={"vec": np.asarray(vectors, dtype=np.float32)}, progress=False)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return build_tiny_target(tmp_path_factory.mktemp("emu") / "idx")


@pytest.fixture()
def emu(local):
    with Emulator({INDEX: local}, api_key=KEY) as e:
        yield e


@pytest.fixture()
def client(emu):
    return SearchClient(emu.url, INDEX, AzureKeyCredential(KEY))


def _http(url, method="GET", body=None, headers=None, key=KEY):
    data = json.dumps(body).encode() if body is not None else None
    h = {"Content-Type": "application/json", **(headers or {})}
    if key is not None:
        h["api-key"] = key
    req = urllib.request.Request(url, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _same(items, trace):
    assert [r["key"] for r in items] == list(trace.keys)
    for r, h in zip(items, trace.hits, strict=True):
        assert r["@search.score"] == pytest.approx(h.score)
        if h.reranker_score is None:
            assert r.get("@search.rerankerScore") is None
        else:
            assert r["@search.rerankerScore"] == pytest.approx(h.reranker_score)


# ---- round trips with the real SDK ------------------------------------------------------


def test_text_search_round_trip(client, local):
    items = list(client.search("alpha"))
    _same(items, local.search(SearchRequest(search="alpha")))
    assert {"a", "b", "c"} <= {r["key"] for r in items}


def test_vector_queries_both_kinds(client, local):
    raw = list(client.search(None, vector_queries=[VectorizedQuery(
        vector=[1, 0, 0], k_nearest_neighbors=5, fields="vec", exhaustive=True)]))
    _same(raw, local.search(SearchRequest(vector_queries=(
        VectorQuery(fields=("vec",), vector=(1, 0, 0), k=5, exhaustive=True),))))
    assert raw[0]["key"] == "a" and raw[0]["@search.score"] == pytest.approx(1.0)
    # kind text: the emulator embeds with the local embedder ("alpha" -> [1, 0, 0])
    text = list(client.search(None, vector_queries=[VectorizableTextQuery(
        text="alpha", k_nearest_neighbors=5, fields="vec", exhaustive=True)]))
    assert [r["key"] for r in text] == [r["key"] for r in raw]


def test_hybrid_weighted_rrf(client, local):
    items = list(client.search("alpha", top=5, vector_queries=[VectorizedQuery(
        vector=[0.8, 0.6, 0], k_nearest_neighbors=5, fields="vec", weight=2.0)]))
    _same(items, local.search(SearchRequest(search="alpha", top=5, vector_queries=(
        VectorQuery(fields=("vec",), vector=(0.8, 0.6, 0), k=5, weight=2.0),))))
    assert items[0]["key"] == "b"


def test_semantic_scores_captions_answers(client):
    results = client.search("alpha", query_type="semantic", semantic_configuration_name="default",
                            query_caption="extractive", query_answer="extractive",
                            query_answer_count=2, include_total_count=True, top=3)
    items = list(results)
    assert items[0]["key"] == "b" and items[0]["@search.rerankerScore"] == pytest.approx(3.5)
    assert items[1]["key"] == "a" and items[1]["@search.rerankerScore"] == pytest.approx(1.0)
    assert "@search.rerankerBoostedScore" not in items[0] or \
        items[0]["@search.rerankerBoostedScore"] is None  # no scoring profile: never boosted
    cap = items[0]["@search.captions"][0]
    assert cap["text"] == "alpha with several other words in it"
    assert "<em>alpha</em>" in cap["highlights"]
    assert results.get_count() == 3
    answers = results.get_answers()
    assert [a.key for a in answers] == ["b", "a"]
    assert answers[0].score == pytest.approx(3.5 / 4)


def test_scoring_profile_boosts_reranker_score(client, local):
    items = list(client.search("alpha", query_type="semantic", scoring_profile="conf", top=3))
    trace = local.search(SearchRequest(search="alpha", query_type="semantic",
                                       scoring_profile="conf", top=3))
    _same(items, trace)
    b = next(r for r in items if r["key"] == "b")
    assert b["@search.rerankerBoostedScore"] == pytest.approx(3.5 * 1.2)  # magnitude 0.2 -> 1.2


def test_count_select_and_paging(client):
    res = client.search("*", include_total_count=True, select=["content"], top=2, skip=1,
                        filter="category eq 'rare'")
    items = list(res)
    assert res.get_count() == 5
    assert len(items) == 2
    assert {k for k in items[0] if not k.startswith("@search.")} == {"content"}


def test_debug_subscores(client, local):
    items = list(client.search("alpha", top=3, debug="vector", scoring_profile="conf",
                               vector_queries=[VectorizedQuery(vector=[1, 0, 0],
                                                               k_nearest_neighbors=3, fields="vec")]))
    trace = local.search(SearchRequest(search="alpha", top=3, scoring_profile="conf",
                                       vector_queries=(VectorQuery(fields=("vec",), vector=(1, 0, 0),
                                                                   k=3),)))
    for r, h in zip(items, trace.hits, strict=True):
        sub = r["@search.documentDebugInfo"]["vectors"]["subscores"]
        if h.text_score is not None:
            assert sub["text"]["searchScore"] == pytest.approx(h.text_score)
        assert isinstance(sub["vectors"], list) and len(sub["vectors"]) == 1
        if "vec" in h.vector_similarities:
            cos = h.vector_similarities["vec"]
            assert sub["vectors"][0]["vec"]["vectorSimilarity"] == pytest.approx(cos)
            assert sub["vectors"][0]["vec"]["searchScore"] == pytest.approx(1 / (2 - cos))
        assert sub["documentBoost"] == pytest.approx(h.document_boost)


def test_filters_and_post_filter_shrinks(client):
    vq = [VectorizedQuery(vector=[1, 0, 0], k_nearest_neighbors=10, fields="vec")]
    pre = list(client.search(None, vector_queries=vq, filter="category eq 'rare'"))
    post = list(client.search(None, vector_queries=vq, filter="category eq 'rare'",
                              vector_filter_mode="postFilter"))
    assert {r["key"] for r in pre} == {f"r{i}" for i in range(30, 35)}
    assert post == []


def test_index_definition_round_trips(emu, local):
    ic = SearchIndexClient(emu.url, AzureKeyCredential(KEY))
    idx = ic.get_index(INDEX)
    assert idx.e_tag
    schema = IndexSchema.from_azure(idx.as_dict())
    assert schema == emu.served_schema(INDEX)
    # the local definition plus the emulator's integrated vectorizer on every vector profile
    assert without_vectorizers(schema) == local.schema().with_name(INDEX)
    assert {p.vectorizer for p in schema.vector_profiles} == {EMULATOR_VECTORIZER}
    assert schema.field_vectorizer("vec").kind == "customWebApi"
    assert [f.name for f in schema.security_fields] == ["group_ids"]
    assert [i.name for i in ic.list_indexes()] == [INDEX]


def without_vectorizers(schema):
    """A served definition less the emulator's vectorizer (what the local target defines)."""
    return dataclasses.replace(schema, vectorizers=(), vector_profiles=tuple(
        dataclasses.replace(p, vectorizer=None) for p in schema.vector_profiles))


def test_documents_and_count(client):
    assert client.get_document_count() == 64
    assert client.get_document("a", selected_fields=["content"]) == {"content": "alpha. Alpha is first."}
    with pytest.raises(HttpResponseError) as err:
        client.get_document("nope")
    assert err.value.status_code == 404


# ---- raw HTTP: both URL forms, error shapes --------------------------------------------


def test_raw_url_forms(emu, local):
    body = {"search": "alpha", "count": True, "top": 2, "semanticErrorHandling": "partial"}
    s1, _, b1 = _http(f"{emu.url}/indexes/{INDEX}/docs/search?api-version=2025-09-01", "POST", body)
    s2, _, b2 = _http(f"{emu.url}/indexes('{INDEX}')/docs/search.post.search?api-version=2025-09-01",
                      "POST", body)
    assert s1 == s2 == 200
    assert json.loads(b1) == json.loads(b2)
    assert [r["key"] for r in json.loads(b1)["value"]] == list(local.search(
        SearchRequest(search="alpha", top=2)).keys)
    status, headers, text = _http(f"{emu.url}/indexes/{INDEX}/docs/$count?api-version=x")
    assert status == 200 and text == b"64" and headers["Content-Type"].startswith("text/plain")
    status, _, doc = _http(f"{emu.url}/indexes('{INDEX}')/docs('b')?api-version=x")
    assert status == 200 and json.loads(doc)["key"] == "b" and "group_ids" not in json.loads(doc)
    status, _, d = _http(f"{emu.url}/indexes/{INDEX}?api-version=x")
    assert status == 200 and json.loads(d)["name"] == INDEX and "@odata.etag" in json.loads(d)


def test_errors_have_azure_shape(emu):
    status, _, body = _http(f"{emu.url}/indexes/{INDEX}/docs/nope")
    assert status == 404 and set(json.loads(body)["error"]) == {"code", "message"}
    status, _, body = _http(f"{emu.url}/indexes/missing/docs/search", "POST", {"search": "x"})
    assert status == 404 and "missing" in json.loads(body)["error"]["message"]
    status, _, body = _http(f"{emu.url}/indexes/{INDEX}/docs/search", "POST", {"serch": "typo"})
    assert status == 400 and "serch" in json.loads(body)["error"]["message"]
    status, _, body = _http(f"{emu.url}/indexes/{INDEX}/docs/search", "POST",
                            {"search": "x", "filter": "category eq"})
    assert status == 400 and json.loads(body)["error"]["code"] == "InvalidRequestParameter"
    ignored = {k: None for k in IGNORED_BODY_KEYS}
    ignored.update(search="alpha", sessionId="s1", minimumCoverage=80, scoringStatistics="global",
                   searchMode="all", highlight="content")
    assert _http(f"{emu.url}/indexes/{INDEX}/docs/search", "POST", ignored)[0] == 200


def test_auth(emu, local):
    url = f"{emu.url}/indexes/{INDEX}/docs/search"
    for key in (None, "wrong"):
        status, _, body = _http(url, "POST", {"search": "x"}, key=key)
        assert status == 403
        assert KEY not in body.decode()
    with Emulator({INDEX: local}, api_key=None, token="tok-123") as tok:
        ok = _http(f"{tok.url}/indexes/{INDEX}/docs/$count", key=None,
                   headers={"Authorization": "Bearer tok-123"})
        bad = _http(f"{tok.url}/indexes/{INDEX}/docs/$count", key=None,
                    headers={"Authorization": "Bearer other"})
        assert ok[0] == 200 and bad[0] == 403
    with pytest.raises(ConfigError):
        Emulator({INDEX: local}, api_key="")


def test_writes_are_refused_and_counted(emu, client):
    attempts = [("PUT", f"/indexes/{INDEX}"), ("DELETE", f"/indexes('{INDEX}')"),
                ("POST", "/indexes"), ("POST", f"/indexes/{INDEX}/docs/index"),
                ("POST", f"/indexes('{INDEX}')/docs/search.index"), ("POST", "/indexers"),
                ("PUT", "/datasources/ds"), ("MERGE", f"/indexes/{INDEX}"),
                ("DELETE", f"/indexes/{INDEX}/docs/a"), ("POST", "/synonymmaps")]
    for method, path in attempts:
        status, _, body = _http(f"{emu.url}{path}?api-version=2025-09-01", method, {"value": []})
        assert status == 403, (method, path)
        assert json.loads(body) == {"error": {"code": "Forbidden",
                                              "message": "ragdiag emulator is read-only"}}
    with pytest.raises(HttpResponseError) as err:
        client.upload_documents([{"key": "z", "content": "new"}])
    assert err.value.status_code == 403
    with pytest.raises(HttpResponseError):
        SearchIndexClient(emu.url, AzureKeyCredential(KEY)).delete_index(INDEX)
    stats = emu.stats()
    assert stats["write_requests"] == len(attempts) + 2
    assert client.get_document_count() == 64  # nothing changed
    status, _, body = _http(f"{emu.url}/ragdiag/stats", key=None)  # no auth needed
    assert status == 200 and json.loads(body)["write_requests"] == stats["write_requests"]
    assert KEY not in body.decode() and KEY not in repr(emu)


# ---- faults --------------------------------------------------------------------------------


def test_fault_kinds_are_deterministic(local):
    def run(faults):
        with Emulator({INDEX: local}, api_key=KEY, faults=faults) as e:
            out = []
            for _ in range(6):
                try:
                    out.append(_http(f"{e.url}/indexes/{INDEX}/docs/search", "POST",
                                     {"search": "alpha"})[0])
                except (http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError):
                    out.append("drop")
            return out, e.stats()["faults_injected"]

    f = Faults(rate_429=0.3, rate_503=0.2, rate_drop=0.2, retry_after_s=0.05, seed=11)
    first, counts = run(f)
    assert run(f)[0] == first
    assert sum(counts.values()) == sum(1 for s in first if s != 200)


def test_throttle_headers_and_malformed_body(local):
    with Emulator({INDEX: local}, api_key=KEY, faults=Faults(rate_429=1.0, retry_after_s=0.05)) as e:
        status, headers, body = _http(f"{e.url}/indexes/{INDEX}/docs/search", "POST", {"search": "a"})
        assert status == 429 and headers["Retry-After"] == "0.05" and headers["retry-after-ms"] == "50"
        assert json.loads(body)["error"]["code"] == "TooManyRequests"
        assert _http(f"{e.url}/indexes/{INDEX}/docs/$count")[0] == 200  # only searches are faulted
    with Emulator({INDEX: local}, api_key=KEY, faults=Faults(rate_malformed=1.0)) as e:
        status, _, body = _http(f"{e.url}/indexes/{INDEX}/docs/search", "POST", {"search": "alpha"})
        assert status == 200
        with pytest.raises(json.JSONDecodeError):
            json.loads(body)
        assert e.stats()["faults_injected"] == {"malformed": 1}
    with pytest.raises(ConfigError):
        Faults(rate_429=0.7, rate_503=0.7)


def test_semantic_partial_response(local):
    with Emulator({INDEX: local}, api_key=KEY, faults=Faults(rate_semantic_partial=1.0)) as e:
        status, _, body = _http(f"{e.url}/indexes/{INDEX}/docs/search", "POST",
                                {"search": "alpha", "queryType": "semantic", "captions": "extractive"})
        out = json.loads(body)
        assert status == 200
        assert out["@search.semanticPartialResponseType"] == "baseResults"
        assert out["@search.semanticPartialResponseReason"] == "capacityOverloaded"
        assert all("@search.rerankerScore" not in r for r in out["value"])


def test_get_search_answers_like_the_post(emu):
    """GET /docs?search=...&$top=... (Azure's Search Documents (GET); LangChain's AzureAISearchRetriever)."""
    base = f"{emu.url}/indexes/{INDEX}/docs?api-version=2023-11-01"
    req = urllib.request.Request(f"{base}&search=alpha&$top=2&$select=key", headers={"api-key": KEY})
    got = json.loads(urllib.request.urlopen(req).read())
    post = urllib.request.Request(f"{emu.url}/indexes/{INDEX}/docs/search?api-version=2023-11-01", method="POST",
                                  data=json.dumps({"search": "alpha", "top": 2, "select": "key"}).encode(),
                                  headers={"api-key": KEY, "Content-Type": "application/json"})
    assert got == json.loads(urllib.request.urlopen(post).read()) and len(got["value"]) == 2
    bad = urllib.request.Request(f"{base}&search=alpha&$top=two", headers={"api-key": KEY})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(bad)
    assert err.value.code == 400
