"""Refusals: questions the corpus cannot answer, and questions asked without the right.

Out of corpus: questions on subjects the corpus does not hold, and questions shaped like the
corpus's own but about an invented company or code. Restricted: a fact from a document whose
groups an identity of the config does not hold, asked as that identity. Both are only
proposals: drafting keeps an out-of-corpus question only when search on the target finds no
passage supporting it (`sources.support` below `REFUSAL_SUPPORT`), and a restricted one only
when no passage the identity may read holds the answer.
"""

from __future__ import annotations

from collections.abc import Iterator

from ragdiag.drafting.case import Candidate
from ragdiag.drafting.rules.base import RuleContext
from ragdiag.drafting.rules.facts import facts_in

__all__ = ["out_of_corpus", "restricted", "invented_name"]

_OFF_TOPIC = {
    "en": ["What is on the canteen menu on Fridays?", "How do employees register a bicycle for the lease scheme?",
           "Which football club does the company sponsor?", "What is the guest Wi-Fi password in the Oslo branch?",
           "When is the summer party of the marketing team?", "Who won the internal chess tournament last year?",
           "What does the pet insurance for employees cover?", "How many solar panels are on the warehouse roof?",
           "What is the recipe for the cafeteria's lentil soup?", "Can I bring my dog to the Lisbon office?",
           "What is our policy on paying suppliers in cryptocurrency?", "Which yoga classes does the gym offer?"],
    "de": ["Was gibt es freitags in der Kantine?", "Wie melde ich ein Fahrrad für das Dienstradleasing an?",
           "Wann ist das Sommerfest des Marketingteams?", "Welchen Fußballverein sponsert die Firma?",
           "Darf ich meinen Hund mit ins Büro nehmen?", "Welche Yogakurse bietet das Fitnessstudio an?"],
}
_ENTITY = {
    "en": ["What notice period applies to our agreement with {name_as_is}?",
           "What is the liability cap in the contract with {name_as_is}?",
           "What do we know about {name_as_is}?", "Which payment terms did we agree with {name_as_is}?",
           "What does error code {code_as_is} mean?"],
    "de": ["Welche Kündigungsfrist gilt im Vertrag mit {name_as_is}?", "Was wissen wir über {name_as_is}?",
           "Was bedeutet der Fehlercode {code_as_is}?"],
}
_FIRST = ["Vel", "Tor", "Quin", "Bram", "Sel", "Dun", "Ost", "Kal", "Fen", "Lor", "Mirr", "Zan"]
_SECOND = ["vik", "dor", "mont", "wick", "stein", "holm", "ridge", "ar", "ova", "ith"]
_TRADE = ["Textil", "Logistics", "Chemie", "Robotics", "Ceramics", "Energie", "Foods", "Optics"]
_SUFFIX = ["GmbH", "Ltd", "S.A.", "Oy", "B.V.", "Inc.", "AG", "plc"]


def invented_name(rng) -> str:
    return f"{rng.choice(_FIRST)}{rng.choice(_SECOND)} {rng.choice(_TRADE)} {rng.choice(_SUFFIX)}"


def out_of_corpus(ctx: RuleContext) -> Iterator[Candidate]:
    languages = sorted(ctx.corpus.languages() & set(_OFF_TOPIC)) or ["en"]
    pool: list[tuple[str, str]] = [(lang, q) for lang in languages for q in _OFF_TOPIC[lang]]
    for _ in range(24):
        lang = ctx.rng.choice(languages)
        code = f"{ctx.rng.choice('EQXZ')}-{ctx.rng.randrange(9000, 9999)}"
        pool.append((lang, ctx.paraphraser.fill(_ENTITY[lang], lang, name_as_is=invented_name(ctx.rng),
                                                code_as_is=code)))
    ctx.rng.shuffle(pool)
    for lang, q in pool:
        yield Candidate(rule="refusal_out_of_corpus", question=q, passages=(), evidence="", language=lang,
                        refused=True)


def restricted(ctx: RuleContext) -> Iterator[Candidate]:
    """Facts from documents an identity may not read, asked as that identity."""
    if not ctx.identities:
        return
    for p in ctx.shuffled(ctx.corpus.citable(), "restricted"):
        if not p.groups:
            continue
        outsiders = sorted(name for name, groups in ctx.identities.items() if not set(groups) & set(p.groups))
        if not outsiders:
            continue
        who = outsiders[ctx.rng.randrange(len(outsiders))]
        for c in facts_in(p, ctx, rule="refusal_restricted"):
            yield Candidate(rule=c.rule, question=c.question, passages=c.passages, evidence=c.evidence,
                            answer=c.answer, language=c.language, refused=True, as_user=who)
            break
