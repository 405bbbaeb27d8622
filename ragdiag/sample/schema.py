"""The index schema of the embedded sample system (index name "muster").

Three record levels share one index (document, section, evidence); `level`
tells them apart. `group_ids` is the security field (filterable, not
retrievable). Two scoring profiles: `quality_boost` (functions, which survive
semantic reranking as boosts) and `legacy_title_weight` (text weights only,
whose effect the semantic reranker erases).
"""

from __future__ import annotations

from ragdiag.model.schema import (
    BOOLEAN,
    DATETIME,
    DOUBLE,
    INT32,
    STRING,
    STRING_COLLECTION,
    VECTOR,
    Field,
    IndexSchema,
    ScoringFunction,
    ScoringProfile,
    SemanticConfiguration,
    VectorSearchProfile,
)

VECTOR_DIMENSIONS = 384
SAMPLE_ANALYZER = "en.lucene"
VECTOR_PROFILE = "hnsw-cosine"

# Which text fields are embedded into which vector field (joined with " — ").
SAMPLE_VECTOR_SOURCES: dict[str, tuple[str, ...]] = {
    "content_vector": ("content",),
    "summary_vector": ("summary",),
    "title_vector": ("title", "section_title"),
}
VECTOR_SOURCE_SEPARATOR = " — "

# The sample system's users and their groups (the ACL side of the goldset).
SAMPLE_IDENTITIES: dict[str, list[str]] = {
    "anna.sales": ["all-staff", "sales"],
    "hanna.hr": ["all-staff", "hr"],
    "sam.support": ["all-staff", "support"],
    "lena.legal": ["all-staff", "legal"],
    "felix.finance": ["all-staff", "finance"],
    "max.admin": ["all-staff", "sales", "hr", "finance", "legal", "support"],
}


def sample_schema(name: str = "muster") -> IndexSchema:
    """The sample index definition."""
    # The corpus is mostly English (218 of 241 documents; 23 are German): the index analyses
    # every text field as English, as a real index built for the English majority would.
    def text(n: str) -> Field:
        return Field(n, STRING, searchable=True, retrievable=True, analyzer=SAMPLE_ANALYZER)

    def facet(n: str) -> Field:
        return Field(n, STRING, filterable=True, facetable=True)

    def int_(n: str) -> Field:
        return Field(n, INT32, filterable=True, sortable=True)

    def when(n: str) -> Field:
        return Field(n, DATETIME, filterable=True, sortable=True)

    def vec(n: str) -> Field:
        return Field(n, VECTOR, searchable=True, retrievable=False,
                     dimensions=VECTOR_DIMENSIONS, vector_profile=VECTOR_PROFILE)

    fields = (
        Field("key", STRING, key=True, filterable=True),
        facet("doc_id"),
        facet("parent_id"),
        facet("level"),
        facet("doc_type"),
        facet("language"),
        text("title"),
        text("section_title"),
        text("content"),
        text("summary"),
        int_("page"),
        int_("position"),
        Field("entity_keys", STRING_COLLECTION, filterable=True, searchable=True, analyzer=SAMPLE_ANALYZER),
        Field("confidence_score", DOUBLE, filterable=True, sortable=True),
        when("valid_from"),
        when("valid_to"),
        when("last_updated"),
        Field("is_table", BOOLEAN, filterable=True),
        Field("citable", BOOLEAN, filterable=True),
        Field("group_ids", STRING_COLLECTION, filterable=True, retrievable=False),
        vec("content_vector"),
        vec("summary_vector"),
        vec("title_vector"),
    )
    return IndexSchema(
        name=name,
        fields=fields,
        semantic_configurations=(
            SemanticConfiguration(
                name="default", title_field="title", content_fields=("content", "summary"),
                keywords_fields=("section_title",)),
            # A legacy configuration that prioritises headings as "content": the ranker never
            # reads the chunk text. The misconfigured sample policy uses it (a planted fault).
            SemanticConfiguration(
                name="headings", title_field="title", content_fields=("section_title",)),
        ),
        default_semantic_configuration="default",
        scoring_profiles=(
            ScoringProfile(
                name="quality_boost",
                functions=(
                    ScoringFunction(type="magnitude", field_name="confidence_score", boost=1.5,
                                    interpolation="linear", boosting_range_start=0.5,
                                    boosting_range_end=1.0),
                    ScoringFunction(type="freshness", field_name="last_updated", boost=1.3,
                                    interpolation="linear", boosting_duration="P730D"),
                    ScoringFunction(type="tag", field_name="entity_keys", boost=2.0,
                                    interpolation="linear", tags_parameter="entities"),
                ),
                function_aggregation="sum",
            ),
            ScoringProfile(name="legacy_title_weight",
                           text_weights={"title": 3.0, "section_title": 2.0}),
        ),
        default_scoring_profile=None,
        vector_profiles=(
            VectorSearchProfile(name=VECTOR_PROFILE, algorithm="hnsw-1", kind="hnsw",
                                metric="cosine", m=16, ef_construction=200, ef_search=128),
        ),
    )


__all__ = ["SAMPLE_ANALYZER", "SAMPLE_IDENTITIES", "SAMPLE_VECTOR_SOURCES", "VECTOR_DIMENSIONS",
           "VECTOR_SOURCE_SEPARATOR", "sample_schema"]
