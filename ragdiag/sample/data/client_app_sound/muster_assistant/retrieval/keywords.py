"""Keywords for the keyword leg (the vector leg and the reranker get the full question)."""

from __future__ import annotations

import os

from openai import AzureOpenAI

from ..settings import CHAT_DEPLOYMENT, OPENAI_API_VERSION, OPENAI_ENDPOINT, PROMPT_DIR

KEYWORD_PROMPT = (PROMPT_DIR / "keyword_writer.txt").read_text(encoding="utf-8")

llm = AzureOpenAI(azure_endpoint=OPENAI_ENDPOINT, api_key=os.environ.get("MUSTER_OPENAI_KEY"),
                  api_version=OPENAI_API_VERSION)


def write_keywords(question: str) -> str:
    response = llm.chat.completions.create(
        model=CHAT_DEPLOYMENT,
        messages=[{"role": "system", "content": KEYWORD_PROMPT}, {"role": "user", "content": question}],
        temperature=0,
    )
    return (response.choices[0].message.content or question).strip()
