"""acme_words: do the hits the questions retrieve carry enough words to answer from?

Each question is searched once through the audit's runner (cached, budgeted, failures
counted); every hit's content is counted in words. A hit below ``min_words`` is a warning
naming it; with no hit at all, nothing was observed and the check says ``skipped``, never
``pass``.
"""

from __future__ import annotations

from typing import Any

from ragdiag.extend import Check, SearchRequest, Verdict, column_values, figure_text, plt


class WordsPerHit(Check):
    id = "acme_words"
    needs = ("target", "questions")  # without them the check is skipped, saying what to supply
    figure_id = "acme_words"

    def evaluate(self, ctx: Any, spec: Any, v: Verdict) -> None:
        minimum = int(spec.threshold("min_words"))
        field = str(spec.extras.get("content_field", "content"))
        requests = [SearchRequest(search=case.question, top=5, select=("id", field))
                    for case in ctx.question_cases()]
        results = ctx.runner.run(requests, label="acme words")
        v.requests(results)  # failed searches count against the spec's max_failed_request_share
        rows = []
        for case, trace in zip(ctx.question_cases(), results, strict=True):
            for hit in getattr(trace, "hits", ()):
                words = len(str(hit.fields.get(field) or "").split())
                rows.append((case.id, hit.key, words))
                v.observed("hits")
                if words < minimum:
                    v.warn("few_words", key=hit.key, words=words, min=minimum)
        v.metric("hits_counted", len(rows))
        v.table("words", "t_words", ("case", "key", "words"), rows)
        v.nothing_observed("no_hits", questions=len(requests))
        v.passed("pass_words", hits=len(rows), min=minimum)

    def draw(self, finding: Any, lang: str = "en") -> Any:
        rows = column_values(finding, "words", "key", "words")
        if not rows:
            return None
        fig, ax = plt().subplots(figsize=(6, 3))
        ax.bar([r[0] for r in rows], [r[1] for r in rows])
        ax.set_title(figure_text(self.id, "fig_title", lang))
        return fig
