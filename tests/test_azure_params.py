"""The plain search parameters, one table for both Azure transports (`ragdiag.targets.azure.params`)."""

from __future__ import annotations

import dataclasses

from ragdiag.model import SearchRequest
from ragdiag.targets.azure import params
from ragdiag.targets.azure.rawjson import build_body

EVERY = SearchRequest(search="alpha", top=7, skip=3, search_fields=("title", "content"), query_type="semantic",
                      search_mode="all", semantic_configuration="default", semantic_query="alpha?",
                      filter="page eq 1", scoring_profile="fresh", scoring_parameters=("tags-a,b",),
                      select=("content",))


def _unsent(name: str) -> None:
    raise AssertionError(f"{name} is not preview-only")


def test_every_plain_parameter_is_sent_under_its_rest_name_in_table_order():
    body = build_body(EVERY, "id", preview=False, unsent=_unsent)
    assert list(body) == ["search", "top", *[rest for _, rest, _, _ in params.PLAIN], "select"]
    assert body["searchFields"] == "title,content" and body["scoringParameters"] == ["tags-a,b"]
    assert body["select"] == "content,id"  # the key is added to identify the hits
    assert {sdk: value for _, sdk, _, value in params.plain(EVERY)} == {
        "skip": 3, "search_fields": ["title", "content"], "query_type": "semantic", "search_mode": "all",
        "semantic_configuration_name": "default", "semantic_query": "alpha?", "filter": "page eq 1",
        "scoring_profile": "fresh", "scoring_parameters": ["tags-a,b"]}


def test_defaults_and_unset_parameters_are_not_sent():
    bare = SearchRequest(search="alpha", top=7)
    assert list(params.plain(bare)) == [] and params.selected(bare, "id") is None
    assert build_body(bare, "id", preview=False, unsent=_unsent) == {"search": "alpha", "top": 7}
    # a parameter set to the service's default is the default: not sent either
    simple = dataclasses.replace(EVERY, query_type="simple", search_mode="any")
    assert {rest for rest, *_ in params.plain(simple)} == {rest for _, rest, _, _ in params.PLAIN} - {
        "queryType", "searchMode"}
    assert params.selected(dataclasses.replace(EVERY, select=("id", "content")), "id") == ["id", "content"]
