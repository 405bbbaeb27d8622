"""A sample client's answerer: deterministic and extractive, over the chunks its retrieval returned.

Stands in for the client's LLM in the pgvector sample (it is not ragdiag's judgement of
anything): for each goldset case it runs the sample policy's request through the target as the
case's identity, takes the `top` chunks the model would get, and answers with the sentence of
those chunks that shares the most content words with the question, citing its chunk; with
fewer than `MIN_OVERLAP` shared words it refuses ("no valid source"), as seed 002's prompt
asks. `python -m ragdiag.sample.pgvector_answerer OUT` writes `sample_data/pgvector/answers.jsonl`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["answer_case", "write_answers"]

MIN_OVERLAP = 3
_WORD = re.compile(r"[A-Za-zÄÖÜäöüß0-9][\w\-,.]*\w|\w")
_STOP = frozenset("""a an the of to in on for and or is are was were be by with what which who whom how when where
does do did at from as that this it its under about up into than then there their our your my me we you i
der die das und oder ist sind wie was wer den dem des ein eine mit von zu für im in auf""".split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _words(text: str) -> set[str]:
    return {w.casefold().strip(".,") for w in _WORD.findall(text)} - _STOP


def answer_case(question: str, chunks: list[tuple[str, str]]) -> dict[str, Any]:
    """{"answer", "citations", "refused"} from `chunks` ((key, content), in retrieval order)."""
    q = _words(question)
    best: tuple[int, int, str, str] | None = None
    for rank, (key, content) in enumerate(chunks):
        for sentence in _SENTENCE.split(content):
            score = len(q & _words(sentence))
            if score and (best is None or (score, -rank) > (best[0], -best[1])):
                best = (score, rank, key, sentence.strip())
    if best is None or best[0] < MIN_OVERLAP:
        return {"answer": "", "citations": [], "refused": True}
    return {"answer": best[3], "citations": [best[2]], "refused": False}


def write_answers(config_path: str | Path, out: str | Path) -> int:
    """Run the sample client over the config's goldset and write its answers (one JSON line each)."""
    from ragdiag.audit import open_audit

    ctx = open_audit(config_path, progress=False)
    run = ctx.run_gold(ctx.policy, label="sample client answers")
    lines = []
    for q, trace in run.traces():
        prof = ctx.policy.profiles[q.profile]
        chunks = [(h.key, str(h.fields.get("content") or "")) for h in trace.hits[:prof.top]]
        lines.append(json.dumps({"id": q.case.id, **answer_case(q.case.question, chunks)}, ensure_ascii=False))
    Path(out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


if __name__ == "__main__":  # pragma: no cover - the generator of the committed sample file
    print(write_answers(sys.argv[1] if len(sys.argv) > 1 else "sample_data/audit-pgvector.toml",
                        sys.argv[2] if len(sys.argv) > 2 else "sample_data/pgvector/answers.jsonl"))
