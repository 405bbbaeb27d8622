"""Chat path: write a search query, retrieve, answer with citations."""

from __future__ import annotations

import os

from openai import AzureOpenAI

from .citations import attach_citations
from .knowledge_base import KnowledgeBase
from .settings import CHAT_DEPLOYMENT, OPENAI_API_VERSION, OPENAI_ENDPOINT, PROMPT_DIR

QUERY_WRITER_PROMPT = (PROMPT_DIR / "query_writer.txt").read_text(encoding="utf-8")
CHAT_SYSTEM_PROMPT = (PROMPT_DIR / "chat_system.txt").read_text(encoding="utf-8")

llm = AzureOpenAI(azure_endpoint=OPENAI_ENDPOINT, api_key=os.environ.get("MUSTER_OPENAI_KEY"),
                  api_version=OPENAI_API_VERSION)
kb = KnowledgeBase()


def write_search_query(question: str) -> str:
    """One query text for keyword search, vector search and the reranker."""
    response = llm.chat.completions.create(
        model=CHAT_DEPLOYMENT,
        messages=[{"role": "system", "content": QUERY_WRITER_PROMPT}, {"role": "user", "content": question}],
        temperature=0,
    )
    return (response.choices[0].message.content or question).strip()


def answer_question(question: str, acl_filter: str) -> dict:
    query = write_search_query(question)
    hits = kb.search_documents(query, acl_filter)
    context = "\n\n".join(f"[{h['id']}] {h['title']}\n{h['content']}" for h in hits)
    response = llm.chat.completions.create(
        model=CHAT_DEPLOYMENT,
        messages=[
            {"role": "system", "content": CHAT_SYSTEM_PROMPT},
            {"role": "user", "content": f"Kontext:\n{context}\n\nFrage: {question}"},
        ],
    )
    answer = response.choices[0].message.content or ""
    return {"answer": answer, "citations": attach_citations(answer, hits)}
