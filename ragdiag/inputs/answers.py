"""The client's answers to the goldset: one JSON object per line, `{"id", "answer", "citations", "refused"}`.

What the client's system answered when run over the goldset (seed 002's structured output
`{answer, citations} | {refused, reason}`): ``id`` is the goldset case id, ``answer`` the text,
``citations`` the keys of the chunks it cites, ``refused`` true when it declined. The goldset
check turns them into the answer and refusal numbers; errors name the file and line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ragdiag.errors import InputDataError

__all__ = ["Answer", "Answers", "load_answers", "checked_citations"]


@dataclass(frozen=True)
class Answer:
    """One answer of the client's system to one goldset case."""

    id: str
    answer: str = ""
    citations: tuple[str, ...] = ()
    refused: bool = False
    line: int | None = None


@dataclass(frozen=True)
class Answers:
    by_id: dict[str, Answer]
    path: str | None = None

    def __len__(self) -> int:
        return len(self.by_id)

    def __iter__(self) -> Iterator[Answer]:
        return iter(self.by_id.values())

    def get(self, case_id: str) -> Answer | None:
        return self.by_id.get(case_id)


def checked_citations(answer: Answer, retrieved: set[str]) -> bool:
    """Seed 002's `check`: an answer stands only with citations, all of them among the retrieved chunks."""
    return not answer.refused and bool(answer.citations) and all(c in retrieved for c in answer.citations)


def load_answers(path: str | Path) -> Answers:
    """Read an answers JSONL file (errors with the file and line)."""
    from ragdiag.inputs.limits import loads_json, read_text

    p = Path(path)
    text = read_text(p, what="answers file")
    out: dict[str, Answer] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue

        def bad(msg: str, n: int = n) -> InputDataError:
            return InputDataError(f"{msg}; expected {{\"id\": ..., \"answer\": ..., \"citations\": [keys], "
                                  "\"refused\": true|false}", path=str(p), line=n)

        rec = loads_json(line, path=str(p), line=n, what="an answers line (one JSON object per line)")
        if not isinstance(rec, dict):
            raise bad("not a JSON object")
        cid = rec.get("id")
        if not isinstance(cid, str) or not cid:
            raise bad("'id' (the goldset case id) is missing or not a string")
        if cid in out:
            raise bad(f"case {cid!r} is answered twice (first at line {out[cid].line})")
        ans, cites, refused = rec.get("answer", ""), rec.get("citations", []), rec.get("refused", False)
        if ans is None:
            ans = ""
        if not isinstance(ans, str):
            raise bad("'answer' must be a string")
        if cites is None:
            cites = []
        if not isinstance(cites, list) or not all(isinstance(c, str) for c in cites):
            raise bad("'citations' must be a list of chunk keys (strings)")
        if not isinstance(refused, bool):
            raise bad("'refused' must be true or false")
        out[cid] = Answer(cid, ans, tuple(cites), refused, n)
    return Answers(out, str(p))
