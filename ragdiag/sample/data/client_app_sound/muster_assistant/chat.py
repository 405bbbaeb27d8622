"""Chat path: retrieve through a profile, fit the context to its budget, answer, check citations."""

from __future__ import annotations

import os

from openai import AzureOpenAI

from .citations import validated_citations
from .identity import Identity
from .retrieval import profiles
from .retrieval.context import fit_to_budget
from .retrieval.keywords import write_keywords
from .settings import (
    CHAT_DEPLOYMENT,
    MAX_CHARS_PER_SOURCE,
    MAX_CONTEXT_TOKENS,
    MAX_SOURCES,
    OPENAI_API_VERSION,
    OPENAI_ENDPOINT,
    PROMPT_DIR,
)

CHAT_SYSTEM_PROMPT = (PROMPT_DIR / "chat_system.txt").read_text(encoding="utf-8")

llm = AzureOpenAI(azure_endpoint=OPENAI_ENDPOINT, api_key=os.environ.get("MUSTER_OPENAI_KEY"),
                  api_version=OPENAI_API_VERSION)


def answer_question(question: str, identity: Identity) -> dict:
    hits = profiles.search("fact", question=question, keywords=write_keywords(question), identity=identity)
    sources = fit_to_budget(hits, max_tokens=MAX_CONTEXT_TOKENS, max_sources=MAX_SOURCES,
                            max_chars_per_source=MAX_CHARS_PER_SOURCE)
    context = "\n\n".join(f"[{s['id']}] {s['title']}\n{s['content']}" for s in sources)
    response = llm.chat.completions.create(
        model=CHAT_DEPLOYMENT,
        messages=[
            {"role": "system", "content": CHAT_SYSTEM_PROMPT},
            {"role": "user", "content": f"Kontext:\n{context}\n\nFrage: {question}"},
        ],
    )
    answer = response.choices[0].message.content or ""
    citations, rejected = validated_citations(answer, [s["id"] for s in sources])
    return {"answer": answer, "citations": citations, "rejected_citations": rejected}
