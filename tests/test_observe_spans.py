"""OpenInference spans: exported by the real OpenTelemetry SDK to `ragdiag record --otlp`, and read from files."""

from __future__ import annotations

import json
import urllib.request

import pytest

from ragdiag.errors import InputDataError
from ragdiag.observe import spans as sp
from ragdiag.observe.otlp import OtlpReceiver
from ragdiag.observe.spans import load_spans

semconv = pytest.importorskip("openinference.semconv.trace")
otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
from openinference.semconv.trace import (  # noqa: E402
    DocumentAttributes,
    OpenInferenceSpanKindValues,
    SpanAttributes,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402


def test_attribute_names_are_openinferences():
    assert sp.SPAN_KIND == SpanAttributes.OPENINFERENCE_SPAN_KIND
    assert sp.INPUT_VALUE == SpanAttributes.INPUT_VALUE
    assert sp.OUTPUT_VALUE == SpanAttributes.OUTPUT_VALUE
    assert sp.DOCUMENTS == SpanAttributes.RETRIEVAL_DOCUMENTS
    assert sp.PROMPT_TOKENS == SpanAttributes.LLM_TOKEN_COUNT_PROMPT
    assert sp.COMPLETION_TOKENS == SpanAttributes.LLM_TOKEN_COUNT_COMPLETION
    assert sp.TOTAL_TOKENS == SpanAttributes.LLM_TOKEN_COUNT_TOTAL
    assert sp.MODEL_NAME == SpanAttributes.LLM_MODEL_NAME
    assert sp.TOOL_NAME == SpanAttributes.TOOL_NAME
    assert sp.USER_ID == SpanAttributes.USER_ID and sp.SESSION_ID == SpanAttributes.SESSION_ID
    assert DocumentAttributes.DOCUMENT_ID == "document.id" and DocumentAttributes.DOCUMENT_SCORE == "document.score"
    assert {k.value for k in OpenInferenceSpanKindValues} >= {"RETRIEVER", "LLM", "CHAIN", "TOOL", "AGENT"}
    assert set(sp.KINDS) <= {k.value for k in OpenInferenceSpanKindValues}


def _export(url: str, *, json_body: bool = False) -> str:
    """An agent trace: AGENT root, two RETRIEVER spans, one LLM span; returns the trace id (hex)."""
    provider = TracerProvider(resource=Resource.create({"service.name": "rag-app"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    tracer = provider.get_tracer("test")
    kind = SpanAttributes.OPENINFERENCE_SPAN_KIND
    with tracer.start_as_current_span("agent", attributes={kind: "AGENT", SpanAttributes.USER_ID: "anna",
                                                           SpanAttributes.SESSION_ID: "s1"}) as root:
        for i, q in enumerate(("notice period", "notice period framework")):
            docs = {f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{j}.{DocumentAttributes.DOCUMENT_ID}": f"d{i}{j}"
                    for j in range(3)}
            docs.update({f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{j}.{DocumentAttributes.DOCUMENT_SCORE}": 3.0 - j
                         for j in range(3)})
            with tracer.start_as_current_span("retrieve", attributes={kind: "RETRIEVER",
                                                                      SpanAttributes.INPUT_VALUE: q, **docs}):
                pass
        with tracer.start_as_current_span("llm", attributes={kind: "LLM", SpanAttributes.LLM_TOKEN_COUNT_PROMPT: 1234,
                                                             SpanAttributes.LLM_MODEL_NAME: "fake"}):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id


def test_otlp_protobuf_from_the_sdk_is_received_and_read(tmp_path):
    out = tmp_path / "traces.jsonl"
    with OtlpReceiver(out=out, port=0) as recv:
        trace_id = _export(recv.url)
        stats = recv.stats()
    assert stats["spans"] == 4 and stats["rejected"] == 0
    spans = load_spans(out)
    assert len(spans) == 4 and set(spans.traces()) == {trace_id}
    kinds = sorted(s.kind for s in spans)
    assert kinds == ["AGENT", "LLM", "RETRIEVER", "RETRIEVER"]
    ret = spans.of_kind("RETRIEVER")
    assert [d.id for d in ret[0].documents()] == ["d00", "d01", "d02"]
    assert [d.score for d in ret[1].documents()] == [3.0, 2.0, 1.0]
    assert ret[0].input_value == "notice period" and ret[0].service == "rag-app"
    assert spans.of_kind("LLM")[0].prompt_tokens == 1234
    agent = spans.of_kind("AGENT")[0]
    assert agent.user_id == "anna" and agent.session_id == "s1" and agent.parent_id is None
    assert all(s.parent_id == agent.span_id for s in ret)


def test_otlp_json_is_received_and_other_paths_refused(tmp_path):
    out = tmp_path / "traces.jsonl"
    doc = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "x"}}]},
                              "scopeSpans": [{"spans": [{
                                  "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "eee19b7ec3c1b174",
                                  "name": "search", "startTimeUnixNano": "1544712660000000000",
                                  "endTimeUnixNano": "1544712661000000000",
                                  "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "RETRIEVER"}},
                                                 {"key": "llm.token_count.prompt", "value": {"intValue": "17"}}]}]}]}]}
    with OtlpReceiver(out=out, port=0) as recv:
        req = urllib.request.Request(f"{recv.url}/v1/traces", data=json.dumps(doc).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        assert urllib.request.urlopen(req).status == 200
        bad = urllib.request.Request(f"{recv.url}/v1/metrics", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(bad)
        assert err.value.code == 404
    (span,) = load_spans(out)
    assert span.trace_id == "5b8efff798038103d269b633813fc60c" and span.kind == "RETRIEVER"
    assert span.prompt_tokens == 17 and span.duration_ms == 1000.0


def test_a_collector_file_export_is_read(tmp_path):
    """The Collector's file exporter writes one ExportTraceServiceRequest per line (OTLP JSON)."""
    line = {"resourceSpans": [{"scopeSpans": [{"scope": {"name": "openinference.instrumentation.langchain"},
                                               "spans": [{"traceId": "0af7651916cd43dd8448eb211c80319c",
                                                          "spanId": "b7ad6b7169203331", "parentSpanId": "",
                                                          "name": "VectorStoreRetriever", "kind": 1,
                                                          "startTimeUnixNano": "1", "endTimeUnixNano": "2",
                                                          "attributes": [
                                                              {"key": "openinference.span.kind",
                                                               "value": {"stringValue": "retriever"}},
                                                              {"key": "retrieval.documents.0.document.id",
                                                               "value": {"stringValue": "k1"}},
                                                              {"key": "tags", "value": {"arrayValue": {"values": [
                                                                  {"stringValue": "a"}, {"boolValue": True}]}}}]}]}]}]}
    path = tmp_path / "collector.jsonl"
    path.write_text(json.dumps(line) + "\n\n" + json.dumps(line) + "\n", encoding="utf-8")
    spans = load_spans(path)
    assert len(spans) == 2 and spans.spans[0].kind == "RETRIEVER" and spans.spans[0].parent_id is None
    assert spans.spans[0].documents()[0].id == "k1" and spans.spans[0].attr("tags") == ("a", True)


def test_a_file_that_is_not_otlp_names_its_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"resourceSpans": []}\n{"spans": []}\n', encoding="utf-8")
    with pytest.raises(InputDataError, match=r"x\.jsonl:2.*resourceSpans"):
        load_spans(path)
