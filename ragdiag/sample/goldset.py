"""The sample goldset, built from the facts the generators planted.

Every planted fact names a needle (verbatim text of one block); after chunking,
the evidence chunk that first contains it is the answer (grade 3), a later chunk
that repeats it through the sentence overlap is grade 2, and its section and
document records are grade 1. Overview cases expect several documents about one
entity, comparison cases the chunks of two contracts. Refusal cases ask about
partners and policies that do not exist; restricted cases ask about salaries as
a sales user (refused) and as HR (answered).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from ragdiag.sample import Fact
from ragdiag.sample.schema import SAMPLE_IDENTITIES
from ragdiag.sample.vocab import MUSTER_KEY, UNKNOWN_PARTNERS, entity_table

SEED = 7707
QUOTAS = {"fact": 36, "definition": 34, "verification": 34, "table": 34, "exact_id": 20,
          "comparison": 18, "overview": 32}
RESTRICTED_PAIRS = 5
LOW_CONFIDENCE = (0.6, 0.85)
LOW_SHARE = 0.36  # share of fact cases whose answer chunk has a low extraction confidence
NON_ADMIN = ("lena.legal", "anna.sales", "felix.finance", "sam.support", "hanna.hr")
PREFERRED = {"CON": ("lena.legal", "anna.sales", "felix.finance"), "TIC": ("sam.support",),
             "HRR": ("hanna.hr",), "PRD": ("anna.sales", "sam.support")}
TYPE_ORDER = ("CON", "TIC", "PRD", "POL", "HBK", "HRR")

OVERVIEW_QUESTIONS = (
    "What do we know about {name}?", "Give me an overview of our relationship with {short}.",
    "Summarise everything we have on {name}.",
    "Which documents do we have about {short}, and what is our business with them?",
    "Background on {short}: contracts, tickets, products?",
    "I'm meeting {name} next week. What should I know about them?",
)
COMPARE_QUESTIONS = {
    "notice_days": ("Which current agreement can be terminated at shorter notice: the one with "
                    "{a} or the one with {b}?",
                    "Compare the notice periods of our current contracts with {a} and {b}"),
    "liability_cap": ("Is liability capped higher in the current {a} contract or in the "
                      "current {b} contract?",
                      "How do the liability caps in our current agreements with {a} and {b} "
                      "differ?"),
    "payment_days": ("Compare the payment terms in our current agreements with {a} and {b}",
                     "Are invoices due sooner under the current {a} contract or the current "
                     "{b} contract?"),
    "warranty_months": ("Which current contract gives the longer warranty, the one with {a} or "
                        "the one with {b}?",
                        "How do the warranty periods in our current contracts with {a} and {b} "
                        "compare?"),
}
REFUSALS = (
    ("fact", "What notice period applies to our framework agreement with {0}?"),
    ("fact", "What is the liability cap in the contract with {1}?"),
    ("overview", "What do we know about {2}?"),
    ("verification", "Is it true that our supply agreement with {3} expired in 2024?"),
    ("fact", "Which payment terms did we agree with {4}?"),
    ("comparison", "Compare the warranty periods in our contracts with {5} and {0}."),
    ("fact", "What does our policy on accepting cryptocurrency payments say?"),
    ("fact", "What is the dress code for visits to the Chicago office?"),
    ("fact", "Are employees allowed to bring their dogs to the Stuttgart office?"),
    ("fact", "How much does parking cost at the Leeds office per month?"),
    ("exact_id", "What does error code E-9917 mean on the MX-2231?"),
    ("exact_id", "What is the list price of SKU MX-9040?"),
)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _prefix(key: str) -> str:
    return key[:3]


class _Index:
    """The structured records, with the lookups the goldset needs."""

    def __init__(self, records: Iterable[dict[str, Any]]) -> None:
        self.by_key: dict[str, dict[str, Any]] = {}
        self.evidence: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in records:
            self.by_key[r["key"]] = r
            if r["level"] == "evidence":
                self.evidence[r["doc_id"]].append(r)
        for rs in self.evidence.values():
            rs.sort(key=lambda r: r["position"])

    def locate(self, doc_id: str, needle: str) -> list[tuple[str, int]]:
        """[(answer chunk, 3), (overlap copies, 2)...] of `needle` in `doc_id`."""
        n = _norm(needle)
        hits = [r["key"] for r in self.evidence[doc_id] if n in _norm(r["content"])]
        if not hits:
            raise ValueError(f"{doc_id}: planted text {needle!r} is in no evidence chunk")
        return [(hits[0], 3), *((k, 2) for k in hits[1:])]

    def sources(self, fact: Fact) -> list[tuple[str, int]]:
        chunks = self.locate(fact.doc_id, fact.needle)
        return [*chunks, (self.by_key[chunks[0][0]]["parent_id"], 1), (fact.doc_id, 1)]

    def groups(self, key: str) -> list[str]:
        return self.by_key[key]["group_ids"]

    def confidence(self, key: str) -> float:
        return self.by_key[key]["confidence_score"]


def _user(ix: _Index, keys: list[str], i: int) -> str:
    """An identity that may see every source, varied by `i`."""
    visible = [u for u in (*NON_ADMIN, "max.admin")
               if all(set(SAMPLE_IDENTITIES[u]) & set(ix.groups(k)) for k in keys)]
    if not visible:
        raise ValueError(f"no sample identity may see all of {', '.join(keys)}")
    if i % 11 == 10 and "max.admin" in visible:
        return "max.admin"
    pref = [u for u in PREFERRED.get(_prefix(keys[0]), NON_ADMIN) if u in visible]
    pool = pref or [u for u in visible if u != "max.admin"] or visible
    return pool[i % len(pool)]


def _case(cid: str, question: str, intent: str, user: str,
          sources: list[tuple[str, int]] | None, answer: Iterable[str] = ()) -> dict[str, Any]:
    case: dict[str, Any] = {"id": cid, "question": question, "intent": intent, "as_user": user}
    if sources is None:
        case["expect"] = "refused"
        return case
    seen: dict[str, int] = {}
    for k, g in sources:
        seen[k] = max(g, seen.get(k, 0))
    case["expect_sources"] = [{"key": k, "grade": g} for k, g in seen.items()]
    if answer:
        case["expect_answer_contains"] = list(answer)
    return case


def _round_robin(facts: list[Fact], n: int, rng: random.Random) -> list[Fact]:
    """`n` facts spread over document types (shuffled within each type), no repeated question."""
    groups: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        groups[_prefix(f.doc_id)].append(f)
    for g in groups.values():
        rng.shuffle(g)
    order = [t for t in TYPE_ORDER if t in groups]
    out: list[Fact] = []
    used_q: set[str] = set()
    used_needle: set[tuple[str, str]] = set()
    while len(out) < n and any(groups[t] for t in order):
        for t in order:
            while groups[t]:
                f = groups[t].pop()
                q, nd = _norm(f.question).casefold(), (f.doc_id, f.needle)
                if q not in used_q and nd not in used_needle:
                    used_q.add(q)
                    used_needle.add(nd)
                    out.append(f)
                    break
            if len(out) == n:
                break
    return out


def build_goldset(docs: list[dict[str, Any]], facts: list[Fact],
                  records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The goldset cases (a list of plain dicts, ready for YAML)."""
    rng = random.Random(SEED)
    ix = _Index(records)
    cases: list[dict[str, Any]] = []
    by_intent: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        if f.attr == "salary":
            continue
        if _prefix(f.doc_id) == "HRR" and f.intent == "fact":
            continue  # salary facts are kept for the restricted pairs
        by_intent[f.intent].append(f)

    def add(intent: str, chosen: list[Fact]) -> None:
        for i, f in enumerate(chosen, 1):
            src = ix.sources(f)
            keys = [k for k, _ in src]
            cases.append(_case(f"{intent}-{i:03d}", f.question, intent, _user(ix, keys, i), src,
                               f.answer))

    # fact: at least LOW_SHARE of the answer chunks come from poorly extracted pages
    low, high = [], []
    for f in by_intent["fact"]:
        conf = ix.confidence(ix.locate(f.doc_id, f.needle)[0][0])
        (low if LOW_CONFIDENCE[0] <= conf < LOW_CONFIDENCE[1] else high).append(f)
    n_low = math.ceil(QUOTAS["fact"] * LOW_SHARE)
    chosen = _round_robin(low, n_low, rng)
    rest = _round_robin([f for f in high if f.question not in {c.question for c in chosen}],
                        QUOTAS["fact"] - len(chosen), rng)
    merged = [f for pair in zip(chosen, rest[:len(chosen)], strict=False) for f in pair]
    add("fact", merged + rest[len(chosen):])
    for intent in ("definition", "verification", "table", "exact_id"):
        add(intent, _round_robin(by_intent[intent], QUOTAS[intent], rng))
    cases += _comparisons(ix, facts, rng)
    cases += _overviews(ix, docs, rng)
    cases += _refusals()
    cases += _restricted(ix, facts, rng)
    return cases


def _comparisons(ix: _Index, facts: list[Fact], rng: random.Random) -> list[dict[str, Any]]:
    names = entity_table()
    by_attr: dict[str, dict[str, Fact]] = defaultdict(dict)
    for f in facts:
        if f.attr in COMPARE_QUESTIONS and f.entity:
            by_attr[f.attr][f.entity] = f
    attrs = list(COMPARE_QUESTIONS)
    out: list[dict[str, Any]] = []
    used: set[frozenset[str]] = set()
    i = 0
    while len(out) < QUOTAS["comparison"]:
        attr = attrs[i % len(attrs)]
        ents = sorted(by_attr[attr])
        a, b = rng.sample(ents, 2)
        fa, fb = by_attr[attr][a], by_attr[attr][b]
        i += 1
        if frozenset((a, b)) in used or fa.value == fb.value:
            continue
        if attr == "liability_cap" and (fa.label or "")[:3] != (fb.label or "")[:3]:
            continue  # compare caps in one currency only
        used.add(frozenset((a, b)))
        src: list[tuple[str, int]] = []
        for f in (fa, fb):
            chunks = ix.locate(f.doc_id, f.needle)
            src += [*chunks, (ix.by_key[chunks[0][0]]["parent_id"], 1)]
        na, nb = names[a][1 if i % 2 and len(names[a]) > 1 else 0], names[b][0]
        q = COMPARE_QUESTIONS[attr][(len(out) // 4) % 2].format(a=na, b=nb)
        q = q if q.endswith("?") else q.rstrip(".") + "."
        keys = [k for k, _ in src]
        out.append(_case(f"comparison-{len(out) + 1:03d}", q, "comparison",
                         _user(ix, keys, len(out)), src, (fa.label or "", fb.label or "")))
    return out


def _overviews(ix: _Index, docs: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    names = entity_table()
    rank = {"CON": 0, "TIC": 1, "PRD": 2, "POL": 3, "HBK": 4}
    about: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in docs:
        for e in d["entity_keys"]:
            if e != MUSTER_KEY and _prefix(d["doc_id"]) in rank:
                about[e].append(d)
    ents = sorted(e for e, ds in about.items() if len(ds) >= 3)
    rng.shuffle(ents)
    out: list[dict[str, Any]] = []
    for e in ents[:QUOTAS["overview"]]:
        ds = sorted(about[e], key=lambda d: d["valid_from"] or "", reverse=True)
        ds.sort(key=lambda d: rank[_prefix(d["doc_id"])])  # contracts first, newest first
        picked = ds[:4]
        src = [(d["doc_id"], 3 if _prefix(d["doc_id"]) == "CON" else 2) for d in picked]
        first = ix.evidence[picked[0]["doc_id"]][0]["key"]
        src.append((first, 2))
        if len(picked) > 1:
            src.append((ix.evidence[picked[1]["doc_id"]][0]["key"], 1))
        n = len(out)
        name = names[e][0]
        short = names[e][1] if len(names[e]) > 1 else name
        q = OVERVIEW_QUESTIONS[n % len(OVERVIEW_QUESTIONS)].format(name=name, short=short)
        out.append(_case(f"overview-{n + 1:03d}", q, "overview",
                         _user(ix, [k for k, _ in src], n), src, (name,)))
    return out


def _refusals() -> list[dict[str, Any]]:
    users = (*NON_ADMIN, "max.admin")
    return [_case(f"refuse-{i:03d}", q.format(*UNKNOWN_PARTNERS), intent, users[i % len(users)],
                  None) for i, (intent, q) in enumerate(REFUSALS, 1)]


def _restricted(ix: _Index, facts: list[Fact], rng: random.Random) -> list[dict[str, Any]]:
    """Salary questions: refused for a sales user, answered for HR (worded a little apart)."""
    salary = sorted((f for f in facts if f.attr == "salary"), key=lambda f: f.doc_id)
    out: list[dict[str, Any]] = []
    for i, f in enumerate(rng.sample(salary, RESTRICTED_PAIRS), 1):
        name = f.label
        out.append(_case(f"restricted-{i:03d}", f"What is {name}'s annual base salary?",
                         "fact", "anna.sales", None))
        out.append(_case(f"restricted-{i:03d}-hr",
                         f"What annual base salary does {name} currently earn?", "fact",
                         "hanna.hr", ix.sources(f), f.answer))
    return out


__all__ = ["QUOTAS", "SEED", "build_goldset"]
