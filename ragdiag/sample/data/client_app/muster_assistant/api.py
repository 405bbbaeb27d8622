"""HTTP handlers (FastAPI)."""

from __future__ import annotations

from fastapi import FastAPI
from pydantic import BaseModel

from .chat import answer_question, kb
from .legacy.old_templates import legacy_definition_search
from .templates.definition import run_definition_template
from .templates.fact import run_fact_template
from .templates.verification import run_verification_template

app = FastAPI(title="Muster AG knowledge assistant")


class ChatRequest(BaseModel):
    question: str
    user_group: str


def acl_filter_for(request: ChatRequest) -> str:
    return f"group_ids/any(g: g eq '{request.user_group}')"


@app.post("/chat")
def chat(request: ChatRequest) -> dict:
    return answer_question(request.question, acl_filter_for(request))


@app.post("/templates/{name}")
def template(name: str, request: ChatRequest) -> dict:
    acl_filter = acl_filter_for(request)
    if name == "fact":
        return {"hits": run_fact_template(kb, request.question, acl_filter)}
    if name == "definition":
        return {"hits": run_definition_template(kb, request.question, acl_filter)}
    return run_verification_template(kb, request.question, acl_filter)


@app.post("/v1/definition")
def legacy_definition(request: ChatRequest) -> dict:
    return {"hits": legacy_definition_search(kb.client, request.question)}


@app.post("/agent")
async def agent(request: ChatRequest) -> dict:
    import os

    from .agents.search_agent import SearchAgent

    agent = SearchAgent(os.environ["MUSTER_SEARCH_KEY"], os.environ["MUSTER_OPENAI_KEY"], acl_filter_for(request))
    return {"answer": await agent.run(request.question)}


@app.get("/v1/overview")
def legacy_overview(term: str) -> dict:
    import os

    from .legacy.old_templates import legacy_overview_search

    return {"hits": legacy_overview_search(term, os.environ["MUSTER_SEARCH_KEY"])}
