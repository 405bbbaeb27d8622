"""Search agent: documents, sections and evidence as tools for the chat model."""

from __future__ import annotations

import json
import os

from openai import AsyncAzureOpenAI

from ..identity import Identity
from ..retrieval import profiles
from ..retrieval.context import fit_to_budget
from ..settings import (
    CHAT_DEPLOYMENT,
    MAX_CHARS_PER_SOURCE,
    MAX_CONTEXT_TOKENS,
    MAX_SOURCES,
    OPENAI_API_VERSION,
    OPENAI_ENDPOINT,
    PROMPT_DIR,
)

MAX_TURNS = 6
AGENT_SYSTEM_PROMPT = (PROMPT_DIR / "chat_system.txt").read_text(encoding="utf-8")
TOOL_PROFILES = {"find_documents": "documents", "find_sections": "sections", "get_evidence": "fact"}
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {"question": {"type": "string"}, "keywords": {"type": "string"}},
        "required": ["question", "keywords"]}}}
    for name in TOOL_PROFILES
]


class SearchAgent:
    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self.llm = AsyncAzureOpenAI(azure_endpoint=OPENAI_ENDPOINT, api_key=os.environ.get("MUSTER_OPENAI_KEY"),
                                    api_version=OPENAI_API_VERSION)

    async def call_tool(self, name: str, question: str, keywords: str) -> list[dict]:
        hits = await profiles.asearch(TOOL_PROFILES[name], question, keywords, self.identity)
        return fit_to_budget(hits, max_tokens=MAX_CONTEXT_TOKENS // 3, max_sources=MAX_SOURCES,
                             max_chars_per_source=MAX_CHARS_PER_SOURCE)

    async def run(self, question: str) -> str:
        messages = [{"role": "system", "content": AGENT_SYSTEM_PROMPT}, {"role": "user", "content": question}]
        for _ in range(MAX_TURNS):
            response = await self.llm.chat.completions.create(model=CHAT_DEPLOYMENT, messages=messages,
                                                              tools=TOOLS)
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message)
            for call in message.tool_calls:
                hits = await self.call_tool(call.function.name, **json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(hits)})
        return "Ich konnte keine Antwort finden."
