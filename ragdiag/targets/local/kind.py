"""Target kind ``local``: a FAISS + BM25 hybrid built from your records and index schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.targets.registry import OptionReader


class LocalKind:
    name = "local"
    keys = ("records", "schema", "vector_sources", "now", "name", "reranker", "fields")

    def validate(self, options: OptionReader) -> dict[str, Any]:
        from ragdiag.chunks.fields import read_field_roles

        return {
            "records": options.path("records", required=True),
            "schema": options.path("schema", required=True),
            "vector_sources": options.mapping_of_lists("vector_sources"),
            "now": options.string("now"),
            "name": options.string("name"),
            "reranker": options.string("reranker"),
            "fields": read_field_roles(options),
        }

    def open(self, options: Mapping[str, Any], config: Any, *, log: Callable[[str], None] | None,
             progress: bool) -> Any:
        from ragdiag.encoders import load_reranker
        from ragdiag.model.schema import IndexSchema
        from ragdiag.sample.system import cache_dir, sample_embedder
        from ragdiag.targets.local import LocalIndexSpec, LocalTarget, default_index_dir

        schema = IndexSchema.load(options["schema"])
        name = options.get("name") or schema.name
        spec = LocalIndexSpec(name=name, schema=schema, vector_sources=options.get("vector_sources") or {},
                              now=options.get("now"))
        emb = sample_embedder()
        return LocalTarget.from_jsonl(options["records"], spec, index_dir=default_index_dir(cache_dir(), name),
                                      embedder=emb, reranker=load_reranker(options.get("reranker"), emb),
                                      progress=progress, log=log)

    def describe(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"records": str(options.get("records")), "schema": str(options.get("schema")),
                "name": options.get("name")}
