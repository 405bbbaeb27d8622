"""A five-document world with a restricted document, for the leaks the goldset judges.

d1, d2 belong to `all`, d3 (Marie's salary) to `hr` in the sound index; in the leaky index d3
also carries `all`: one restricted document readable by the wrong group, a data-level leak no
probe of the security field can see. Identity `h` holds `all` and `hr`, `u` holds `all`.
The goldset asks the salary question as `h` (answerable: d3) and as `u` (expect: refused), and
a third case forbids `u` document d4 outright (`forbidden_sources`). Every profile is
vector-only, k = 50, top = 5, so each request returns every document its filter admits, ranked
d1, d2, d3, d4, d5 (the questions embed as [1, 0, 0], document i as [1, 0.1 i, 0]).
"""

from __future__ import annotations

import numpy as np

from ragdiag.engine.context import AuditContext
from ragdiag.engine.runner import Runner
from ragdiag.inputs.goldset import GoldCase, Goldset
from ragdiag.policy import Identity, loads_policy
from ragdiag.targets.local import LocalIndexSpec, LocalTarget
from tests.fakes import FakeEmbedder, KeyReranker, tiny_schema

SALARY_Q = "What does Marie earn?"
QUESTIONS = (SALARY_Q, "Which reviews are pending?", "What is d1 about?")  # all embedded as [1, 0, 0]
SOUND_GROUPS = {"d1": ["all"], "d2": ["all"], "d3": ["hr"], "d4": ["hr"], "d5": ["all"]}
LEAKY_GROUPS = {**SOUND_GROUPS, "d3": ["hr", "all"]}  # d3 wrongly readable by `all`
POLICY = """
[policy]
name = "trimmed"
security_field = "group_ids"
[routes]
default = "p"
[profiles.p]
query_type = "simple"
keyword_text = "none"
top = 5
  [[profiles.p.vector_queries]]
  fields = ["vec"]
  k = 50
  exhaustive = true
"""


def target(tmp_path, groups):
    recs, vecs = [], []
    for i, (key, g) in enumerate(groups.items()):
        recs.append({"key": key, "title": f"title {key}", "content": f"text of {key}", "category": "c",
                     "confidence_score": 0.9, "page": 1, "last_updated": "2026-01-01T00:00:00Z",
                     "is_table": False, "entity_keys": [], "group_ids": g})
        vecs.append([1.0, 0.1 * i, 0.0])
    return LocalTarget.build(recs, LocalIndexSpec("leak-world", tiny_schema("leak-world"), {},
                                                  now="2026-06-30T00:00:00Z"),
                             index_dir=tmp_path / "idx", embedder=FakeEmbedder(dict.fromkeys(QUESTIONS, [1.0, 0, 0])),
                             reranker=KeyReranker({}),
                             vectors={"vec": np.asarray(vecs, dtype=np.float32)}, progress=False)


def goldset(*, twins: bool = True, forbidden: bool = True) -> Goldset:
    cases = []
    if twins:
        cases += [GoldCase(id="salary-hr", question=SALARY_Q, as_user="h", expect_sources=(("d3", 1),)),
                  GoldCase(id="salary-u", question=SALARY_Q, as_user="u", expect_refused=True)]
    if forbidden:
        cases.append(GoldCase(id="d4-u", question="Which reviews are pending?", as_user="u", expect_refused=True,
                              forbidden_sources=("d4",)))
    cases.append(GoldCase(id="open", question="What is d1 about?", as_user="u", expect_sources=(("d1", 1),)))
    return Goldset(cases=tuple(cases))


def context(tmp_path, groups, gs=None, policy=POLICY) -> AuditContext:
    t = target(tmp_path, groups)
    return AuditContext(config=None, target=t, runner=Runner(t), policy=loads_policy(policy),
                        goldset=gs if gs is not None else goldset(),
                        identities={"u": Identity("u", ("all",)), "h": Identity("h", ("all", "hr"))})
