"""Search agent: documents, sections and evidence as tools for the chat model."""

from __future__ import annotations

import json

from azure.core.credentials import AzureKeyCredential
from azure.search.documents.aio import SearchClient
from azure.search.documents.models import VectorizableTextQuery
from openai import AsyncAzureOpenAI

from ..settings import (
    CHAT_DEPLOYMENT,
    INDEX_NAME,
    OPENAI_API_VERSION,
    OPENAI_ENDPOINT,
    PROMPT_DIR,
    SEARCH_ENDPOINT,
)

AGENT_TOP = 10
MAX_TURNS = 6
AGENT_SYSTEM_PROMPT = (PROMPT_DIR / "chat_system.txt").read_text(encoding="utf-8")

TOOLS = [
    {"type": "function", "function": {"name": "find_documents", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
    {"type": "function", "function": {"name": "find_sections", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}, "document_title": {"type": "string"}},
        "required": ["query", "document_title"]}}},
    {"type": "function", "function": {"name": "get_evidence", "parameters": {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}},
]


class SearchAgent:
    def __init__(self, search_key: str, openai_key: str, acl_filter: str) -> None:
        self.client = SearchClient(SEARCH_ENDPOINT, INDEX_NAME, AzureKeyCredential(search_key))
        self.llm = AsyncAzureOpenAI(azure_endpoint=OPENAI_ENDPOINT, api_key=openai_key,
                                    api_version=OPENAI_API_VERSION)
        self.acl_filter = acl_filter

    async def find_documents(self, query: str) -> list[dict]:
        results = await self.client.search(
            search_text=query,
            vector_queries=[VectorizableTextQuery(text=query, k_nearest_neighbors=100, fields="title_vector")],
            filter=f"{self.acl_filter} and level eq 'document'",
            top=AGENT_TOP,
            query_type="semantic",
            semantic_configuration_name="default",
        )
        return [r async for r in results]

    async def find_sections(self, query: str, document_title: str) -> list[dict]:
        results = await self.client.search(
            search_text=query,
            vector_queries=[VectorizableTextQuery(text=query, k_nearest_neighbors=50, fields="summary_vector")],
            filter=f"{self.acl_filter} and level eq 'section' and title eq '{document_title}'",
            top=AGENT_TOP,
            query_type="semantic",
            semantic_configuration_name="default",
        )
        return [r async for r in results]

    async def get_evidence(self, query: str) -> list[dict]:
        # taken over from the prototype; returns citable evidence blocks
        results = await self.client.search(
            search_text=query,
            filter="level eq 'evidence'",
            top=AGENT_TOP,
            query_type="semantic",
            semantic_configuration_name="default",
            select=["id", "title", "section_title", "content"],
        )
        return [r async for r in results]

    async def run(self, question: str) -> str:
        messages = [{"role": "system", "content": AGENT_SYSTEM_PROMPT}, {"role": "user", "content": question}]
        tools = {"find_documents": self.find_documents, "find_sections": self.find_sections,
                 "get_evidence": self.get_evidence}
        for _ in range(MAX_TURNS):
            response = await self.llm.chat.completions.create(model=CHAT_DEPLOYMENT, messages=messages,
                                                              tools=TOOLS)
            message = response.choices[0].message
            if not message.tool_calls:
                return message.content or ""
            messages.append(message)
            for call in message.tool_calls:
                hits = await tools[call.function.name](**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(hits)})
        return "Ich konnte keine Antwort finden."
