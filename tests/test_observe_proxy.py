"""ragdiag record: the recording proxy, driven by the real Azure SDK against `ragdiag serve` on loopback."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from ragdiag.errors import ConfigError
from ragdiag.observe.proxy import REDACTED, RecordingProxy, classify
from ragdiag.observe.tls import generate_certificate
from ragdiag.observe.traffic import load_traffic
from ragdiag.targets.emulator import Emulator
from tests.test_emulator import INDEX, KEY, build_tiny_target

azure_sd = pytest.importorskip("azure.search.documents")
from azure.core.credentials import AccessToken, AzureKeyCredential  # noqa: E402
from azure.core.exceptions import HttpResponseError  # noqa: E402
from azure.search.documents import SearchClient  # noqa: E402
from azure.search.documents.indexes import SearchIndexClient  # noqa: E402
from azure.search.documents.models import VectorizedQuery  # noqa: E402

USER_TOKEN = "user-token-6b1d0e-secret"
BEARER = "bearer-token-93c2aa-secret"
SECURE = "group_ids/any(g: search.in(g, 'all'))"


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    return build_tiny_target(tmp_path_factory.mktemp("rec") / "idx")


@pytest.fixture()
def emu(local):
    with Emulator({INDEX: local}, api_key=KEY, token=BEARER) as e:
        yield e


def _records(path: Path):
    return list(load_traffic(path))


def test_reads_are_forwarded_and_recorded_as_sent(emu, tmp_path):
    out = tmp_path / "traffic.jsonl"
    with RecordingProxy(emu.url, out=out) as px:
        client = SearchClient(px.url, INDEX, AzureKeyCredential(KEY))
        hits = list(client.search("alpha", top=3, query_type="semantic", semantic_configuration_name="default",
                                  vector_queries=[VectorizedQuery(vector=[1, 0, 0], k_nearest_neighbors=7,
                                                                  fields="vec")],
                                  filter=SECURE, headers={"x-ms-query-source-authorization": USER_TOKEN}))
        plain = list(client.search("beta", top=2))
        assert client.get_document_count() == 64
        assert client.get_document("a")["key"] == "a"
        px.flush()
        stats = px.stats()
    assert stats["forwarded"] >= 4 and stats["refused_writes"] == 0 and stats["record_errors"] == 0
    recs = _records(out)
    search = [r for r in recs if r.operation == "search"]
    assert len(search) == 2
    first = search[0]
    assert first.index == INDEX and first.method == "POST" and first.status == 200
    assert first.api_version == "2026-04-01"  # the SDK 12.0 default
    assert first.permission_header is True and search[1].permission_header is False
    assert first.auth == "api-key" and first.user_agent.startswith("azsdk-python-search-documents")
    assert first.body["filter"] == SECURE and first.body["vectorQueries"][0]["k"] == 7
    req = first.request()
    assert req.is_semantic and req.vector_queries[0].k == 7 and req.top == 3
    # the response as the client saw it
    assert first.keys == tuple(h["key"] for h in hits)
    assert list(first.reranker_scores) == [h["@search.reranker_score"] for h in hits]
    assert first.response["scores"] == [h["@search.score"] for h in hits]
    assert search[1].keys == tuple(h["key"] for h in plain) and search[1].reranker_scores == ()
    ops = [r.operation for r in recs]
    assert "count" in ops and "lookup" in ops


def test_writes_are_refused_counted_and_never_reach_the_service(emu, tmp_path):
    out = tmp_path / "traffic.jsonl"
    with RecordingProxy(emu.url, out=out) as px:
        client = SearchClient(px.url, INDEX, AzureKeyCredential(KEY))
        with pytest.raises(HttpResponseError) as err:
            client.upload_documents([{"key": "zz", "content": "x"}])
        assert err.value.status_code == 403
        with pytest.raises(HttpResponseError):
            client.delete_documents([{"key": "a"}])
        with pytest.raises(HttpResponseError):
            SearchIndexClient(px.url, AzureKeyCredential(KEY)).delete_index(INDEX)
        host, port = px.url.removeprefix("http://").split(":")
        for method, path in (("PUT", f"/indexes/{INDEX}?api-version=2024-07-01"),
                             ("PATCH", f"/indexes/{INDEX}/docs/a"),
                             ("POST", f"/indexes/{INDEX}/docs/index?api-version=2024-07-01"),
                             ("POST", "/indexers/x/run?api-version=2024-07-01")):
            conn = http.client.HTTPConnection(host, int(port))
            conn.request(method, path, body=b"{}", headers={"api-key": KEY, "Content-Type": "application/json"})
            resp = conn.getresponse()
            assert resp.status == 403, (method, path)
            resp.read()
            conn.close()
        px.flush()
        stats = px.stats()
    assert stats["refused_writes"] == 7
    assert emu.stats()["write_requests"] == 0 and emu.stats()["requests"] == 0  # nothing reached it
    refused = [r for r in _records(out) if r.refused]
    assert len(refused) == 7 and {r.status for r in refused} == {403}
    assert all(r.body is None and r.operation == "write" for r in refused)
    assert local_count(emu) == 64


def local_count(emu) -> int:
    return emu.targets[INDEX].count()


def test_no_key_token_or_permission_value_reaches_the_file(emu, tmp_path):
    out = tmp_path / "traffic.jsonl"
    with RecordingProxy(emu.url, out=out) as px:
        client = SearchClient(px.url, INDEX, AzureKeyCredential(KEY))
        # a client that even puts its token into the search text and the filter
        list(client.search(f"alpha {USER_TOKEN}", filter=f"category eq '{USER_TOKEN}'",
                           headers={"x-ms-query-source-authorization": USER_TOKEN}))
        host, port = px.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port))
        conn.request("GET", f"/indexes/{INDEX}/docs?api-version=2024-07-01&search=alpha&$top=2&api-key={KEY}",
                     headers={"Authorization": f"Bearer {BEARER}"})
        assert conn.getresponse().status == 200
        conn.close()
        px.flush()
    text = out.read_text(encoding="utf-8")
    for secret in (KEY, USER_TOKEN, BEARER):
        assert secret not in text
    recs = _records(out)
    assert REDACTED in recs[0].body["search"] and recs[0].permission_header
    get = recs[1]
    assert get.operation == "search" and get.body == {"search": "alpha", "top": 2} and get.auth == "bearer"
    assert get.request().top == 2 and len(get.keys) == 2


def test_upstream_key_from_the_environment_replaces_the_clients(emu, tmp_path):
    out = tmp_path / "traffic.jsonl"
    with RecordingProxy(emu.url, out=out, api_key=KEY) as px:
        client = SearchClient(px.url, INDEX, AzureKeyCredential("dummy-client-key"))
        assert [h["key"] for h in client.search("beta", top=1)] == ["d"]
        px.flush()
    assert KEY not in out.read_text() and "dummy-client-key" not in out.read_text()


class _Token:
    def get_token(self, *scopes, **kw):
        return AccessToken(BEARER, int(time.time()) + 3600)


def test_tls_with_the_generated_certificate_and_a_bearer_credential(emu, tmp_path):
    cert, key = generate_certificate(tmp_path / "cert")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    out = tmp_path / "traffic.jsonl"
    with RecordingProxy(emu.url, out=out, tls=(cert, key)) as px:
        assert px.url.startswith("https://")
        # a token credential refuses http: over the proxy's https it works once the cert is trusted
        client = SearchClient(px.url, INDEX, _Token(), connection_verify=str(cert),
                              audience="https://search.azure.com")
        assert [h["key"] for h in client.search("beta", top=1)] == ["d"]
        untrusted = SearchClient(px.url, INDEX, _Token())
        with pytest.raises(Exception, match="(?i)certificate|ssl"):
            list(untrusted.search("beta", top=1))
        px.flush()
    recs = [r for r in _records(out) if r.operation == "search"]
    assert len(recs) == 1 and recs[0].auth == "bearer"
    assert BEARER not in out.read_text()


def test_an_upstream_that_does_not_answer_is_502_and_recorded(tmp_path):
    out = tmp_path / "traffic.jsonl"
    with RecordingProxy("http://127.0.0.1:9", out=out) as px:
        req = urllib.request.Request(f"{px.url}/indexes/x/docs/search?api-version=2024-07-01", method="POST",
                                     data=b'{"search": "a"}', headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 502
        px.flush()
        assert px.stats()["upstream_errors"] == 1
    rec = _records(out)[0]
    assert rec.status == 502 and rec.body == {"search": "a"} and rec.response is None


@pytest.mark.parametrize("method,path,expected", [
    ("POST", "/indexes('docs')/docs/search.post.search", ("search", "docs", True)),
    ("POST", "/indexes/docs/docs/search", ("search", "docs", True)),
    ("POST", "/indexes/docs/docs/suggest", ("suggest", "docs", True)),
    ("POST", "/indexes('docs')/docs/search.post.autocomplete", ("autocomplete", "docs", True)),
    ("GET", "/indexes/docs/docs", ("search", "docs", True)),
    ("GET", "/indexes('docs')/docs('k1')", ("lookup", "docs", True)),
    ("GET", "/indexes/docs/docs/k1", ("lookup", "docs", True)),
    ("GET", "/indexes/docs/docs/$count", ("count", "docs", True)),
    ("GET", "/indexes('docs')", ("index", "docs", True)),
    ("GET", "/indexes", ("list_indexes", None, True)),
    ("GET", "/servicestats", ("servicestats", None, True)),
    ("POST", "/indexes('docs')/docs/search.index", ("write", "docs", False)),
    ("POST", "/indexes/docs/docs/index", ("write", "docs", False)),
    ("POST", "/indexes", ("write", None, False)),
    ("PUT", "/indexes/docs", ("write", "docs", False)),
    ("DELETE", "/indexes('docs')", ("write", "docs", False)),
    ("POST", "/indexers/x/run", ("write", None, False)),
    ("MERGE", "/indexes/docs/docs/k1", ("write", "docs", False)),
])
def test_classify(method, path, expected):
    assert classify(method, path) == expected


def test_bad_upstreams_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="http"):
        RecordingProxy("ftp://x", out=tmp_path / "t.jsonl")
    with pytest.raises(ConfigError, match="query string"):
        RecordingProxy("https://x.search.windows.net?api-key=abc", out=tmp_path / "t.jsonl")


def test_the_record_command_records_and_stops_on_sigint(emu, tmp_path):
    out = tmp_path / "traffic.jsonl"
    env = {**os.environ, "UPSTREAM_KEY": KEY}
    # a suite started in the background (`nohup ... &`) ignores SIGINT, and a child inherits that:
    # the command under test gets Ctrl-C's default back, as in a terminal
    proc = subprocess.Popen([sys.executable, "-m", "ragdiag", "record", "--upstream", emu.url, "--listen",
                             "127.0.0.1:0", "--out", str(out), "--api-key-env", "UPSTREAM_KEY"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        client = SearchClient(url, INDEX, AzureKeyCredential("anything"))
        assert [h["key"] for h in client.search("beta", top=1)] == ["d"]
    finally:
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert '"forwarded": 1' in stdout and KEY not in line + stdout + stderr
    recs = _records(out)
    assert [r.operation for r in recs] == ["search"]
    assert json.loads(out.read_text().splitlines()[0])["body"]["search"] == "beta"
