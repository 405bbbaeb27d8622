"""Target kind ``local``: a FAISS + BM25 hybrid built from your records and index schema."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragdiag.targets.registry import OptionReader


class LocalKind:
    name = "local"
    keys = ("records", "schema", "vector_sources", "now", "name", "reranker", "embedding_model", "fields")

    def validate(self, options: OptionReader) -> dict[str, Any]:
        from ragdiag.chunks.fields import read_field_roles
        from ragdiag.targets.local.index import INDEX_NAME

        name = options.string("name")
        if name is not None and not INDEX_NAME.match(name):
            # the name becomes a cache folder: Azure's alphabet only (the folder adds a hash)
            raise options.error(f"'name' must be an index name as Azure allows it (lowercase letters, "
                                f"digits and dashes, not starting or ending with a dash, at most 128 "
                                f"characters), got {name!r}", "name")
        return {
            "records": options.path("records", required=True),
            "schema": options.path("schema", required=True),
            "vector_sources": options.mapping_of_lists("vector_sources"),
            "now": options.string("now"),
            "name": name,
            "reranker": options.string("reranker"),
            # None: the bundled English MiniLM; see ragdiag.encoders.choice for the other forms
            "embedding_model": options.string("embedding_model"),
            "fields": read_field_roles(options),
        }

    def peek_schema(self, options: Mapping[str, Any]) -> Any:
        """The index schema file, read without building the index (inputs are checked first)."""
        from ragdiag.model.schema import IndexSchema

        return IndexSchema.load(options["schema"])

    def peek_records(self, options: Mapping[str, Any]) -> Any:
        """The records file's objects, read without building the index (goldset names are
        resolved against them before anything is embedded)."""
        from ragdiag.inputs import limits
        from ragdiag.inputs.records import iter_records

        path = options["records"]
        return iter_records(limits.read_text(path, what="records file"), path=str(path))

    def peek_embedding_dim(self, options: Mapping[str, Any]) -> int | None:
        """The dimension of the embedder `embedding_model` names, known before anything is
        embedded (a missing model or package is an error here, with its fix)."""
        from ragdiag.cache import cache_dir
        from ragdiag.encoders.choice import load_embedder

        return int(load_embedder(options.get("embedding_model"), cache_dir()).dim)

    def open(self, options: Mapping[str, Any], config: Any, *, log: Callable[[str], None] | None,
             progress: bool) -> Any:
        from ragdiag.cache import cache_dir
        from ragdiag.encoders import load_reranker
        from ragdiag.encoders.shared import shared_embedder
        from ragdiag.model.schema import IndexSchema
        from ragdiag.targets.local import LocalIndexSpec, LocalTarget, default_index_dir

        schema = IndexSchema.load(options["schema"])
        from ragdiag.inputs.validate import check_vector_sources

        check_vector_sources(config, schema, options.get("vector_sources"))  # before embedding anything
        name = options.get("name") or schema.name
        spec = LocalIndexSpec(name=name, schema=schema, vector_sources=options.get("vector_sources") or {},
                              now=options.get("now"))
        model = options.get("embedding_model")
        if model:
            from ragdiag.encoders.choice import load_embedder

            emb = load_embedder(model, cache_dir())
        else:
            emb = shared_embedder()
        target = LocalTarget.from_jsonl(options["records"], spec, index_dir=default_index_dir(cache_dir(), name),
                                        embedder=emb, reranker=load_reranker(options.get("reranker"), emb),
                                        progress=progress, log=log)
        # vectors that came with the records are only comparable with query text embedded by
        # the model that made them: an explicit embedding_model says that it is this one
        target.embedder_made_record_vectors = bool(model)
        return target

    def describe(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {"records": str(options.get("records")), "schema": str(options.get("schema")),
                "name": options.get("name"), "embedding_model": options.get("embedding_model")}
