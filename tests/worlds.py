"""Constructed worlds whose causes are known by construction, for the funnel and the ablation.

`topic_world` builds twelve topics, each with one relevant document (`rel<i>`) and a few
distractors (`d<i>_<j>`), on a 16-dimensional vector field whose question vectors are the
topic axes, with a key-table reranker that ranks every relevant document first. Fields no rule
names carry the planted causes:

- ``zq_tier``: 2 on the relevant documents of topics 0-8, 1 everywhere else: a filter
  ``zq_tier eq 1`` removes 9 of the 12 relevant documents (75 %), ``zq_tier ge 0`` none;
- ``page``: distractors sit on pages 20-30, relevant documents on page 1: the scoring profile
  ``pageboost`` (magnitude on page, boost 10) multiplies every distractor in the pool (the
  vector leg's k = 50 brings every topic's) above the relevant documents, so it pushes each
  relevant document out of the top, whose reranker puts it first without the boost;
  ``flatboost`` boosts ``is_table``, false everywhere: a boost that changes nothing;
- the vector ranks: a relevant document is its question's nearest neighbour in topics 0-3 and
  the 2nd, 3rd or 4th nearest in topics 4-11, so a vector-only profile with ``k = 1`` loses
  it on 8 of the 12 questions.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.model.schema import BOOLEAN, INT32, VECTOR, Field, ScoringFunction, ScoringProfile
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

TOPICS = 12
DIM = 16
FILLER = "with enough further words in it to give a ranker something real to read and judge here"


def question(i: int) -> str:
    return f"what about topic{i}?"


def _axis(i: int, scale: float = 1.0, lean: int | None = None, amount: float = 0.0) -> list[float]:
    v = [0.0] * DIM
    v[i % DIM] = scale
    if lean is not None:
        v[lean % DIM] += amount
    return v


def world_schema(dims: int = DIM) -> object:
    base = tiny_schema("topics")
    fields = tuple(f for f in base.fields if f.name not in ("vec", "page", "is_table"))
    extra = (Field("page", INT32, filterable=True), Field("is_table", BOOLEAN, filterable=True),
             Field("zq_tier", INT32, filterable=True),
             Field("vec", VECTOR, dimensions=dims, vector_profile="hnsw"))
    profiles = base.scoring_profiles + (
        ScoringProfile("pageboost", functions=(ScoringFunction("magnitude", "page", boost=10.0,
                                                               boosting_range_start=1, boosting_range_end=30),)),
        ScoringProfile("flatboost", functions=(ScoringFunction("magnitude", "zq_tier", boost=1.0,
                                                               boosting_range_start=0, boosting_range_end=3),)),
    )
    return dataclasses.replace(base, fields=fields + extra, scoring_profiles=profiles)


def topic_world(tmp_path) -> LocalTarget:
    recs, vecs, scores = [], [], {}
    for i in range(TOPICS):
        n_distract = 2 + i % 4  # 2..5 distractors: the boost pushes the relevant one to rank 3..6
        near = 0 if i < 4 else 1 + (i % 3)  # how many distractors are nearer than the relevant one
        docs = [(f"rel{i}", 1, 2 if i < 9 else 1, 3.0)]
        docs += [(f"d{i}_{j}", 20 + j, 1, 1.0 + 0.1 * j) for j in range(n_distract)]
        for rank_pos, (key, page, tier, rr) in enumerate(docs):
            recs.append({"key": key, "title": key, "content": f"topic{i} {key} {FILLER}", "category": "c",
                         "confidence_score": 0.9, "page": page, "last_updated": "2026-01-01T00:00:00Z",
                         "is_table": False, "entity_keys": [], "group_ids": ["all"], "zq_tier": tier})
            scores[key] = rr
            if key.startswith("rel"):
                sim = 1.0 - 0.05 * near  # below `near` distractors
            else:
                j = rank_pos - 1
                sim = 0.99 - 0.05 * j if j < near else 0.7 - 0.05 * j
            vecs.append(_axis(i, sim, lean=TOPICS + i % (DIM - TOPICS), amount=float(np.sqrt(max(0.0, 1 - sim * sim)))))
    table = {question(i): _axis(i) for i in range(TOPICS)}
    emb = FakeEmbedder(table, dim=DIM)
    return LocalTarget.build(recs, LocalIndexSpec("topics", world_schema(), {}, now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "topics-idx", embedder=emb, reranker=KeyReranker(scores),
                             vectors={"vec": np.asarray(vecs, dtype=np.float32)}, progress=False)


GOLD = Goldset(cases=tuple(GoldCase(id=f"q{i}", question=question(i), intent="fact", as_user="u",
                                    expect_sources=((f"rel{i}", 2),)) for i in range(TOPICS)), path=None)


def policy_text(**keys: str) -> str:
    """One semantic hybrid profile `fact`, with `keys` (TOML values) added to it."""
    profile = {"query_type": '"semantic"', "semantic_configuration": '"default"', "semantic_text": '"verbatim"',
               "keyword_text": '"verbatim"', "top": "3"}
    profile.update({k: v for k, v in keys.items() if not k.startswith("vq_")})
    if profile["query_type"] != '"semantic"':
        profile.pop("semantic_configuration")
        profile.pop("semantic_text")
    vq_keys = {k[3:]: v for k, v in keys.items() if k.startswith("vq_")}
    lines = ["[policy]", 'name = "t"', "[routes]", 'fact = "fact"', "[profiles.fact]"]
    lines += [f"{k} = {v}" for k, v in profile.items()]
    lines += ["[[profiles.fact.vector_queries]]", 'fields = ["vec"]', f"k = {vq_keys.pop('k', '50')}"]
    lines += [f"{k} = {v}" for k, v in vq_keys.items()]
    return "\n".join(lines) + "\n"


def context(target, text: str, *, goldset=GOLD, budgets=None) -> AuditContext:
    return AuditContext(config=None, target=target, runner=Runner(target), policy=loads_policy(text),
                        goldset=goldset, identities={"u": Identity("u", ("all",))}, budgets=budgets or {})
