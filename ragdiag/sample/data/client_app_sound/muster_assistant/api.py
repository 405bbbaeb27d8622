"""HTTP handlers (FastAPI). The identity comes from the validated token, never from the body."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, FastAPI
from pydantic import BaseModel

from .chat import answer_question
from .identity import Identity, current_identity
from .legacy.old_templates import legacy_definition_search
from .templates.definition import run_definition_template
from .templates.fact import run_fact_template
from .templates.verification import run_verification_template

app = FastAPI(title="Muster AG knowledge assistant")
CurrentIdentity = Annotated[Identity, Depends(current_identity)]


class ChatRequest(BaseModel):
    question: str


@app.post("/chat")
def chat(request: ChatRequest, identity: CurrentIdentity) -> dict:
    return answer_question(request.question, identity)


@app.post("/templates/{name}")
def template(name: str, request: ChatRequest, identity: CurrentIdentity) -> dict:
    if name == "fact":
        return {"hits": run_fact_template(request.question, identity)}
    if name == "definition":
        return {"hits": run_definition_template(request.question, identity)}
    return run_verification_template(request.question, identity)


@app.post("/v1/definition")
def legacy_definition(request: ChatRequest, identity: CurrentIdentity) -> dict:
    return {"hits": legacy_definition_search(request.question, identity)}


@app.post("/agent")
async def agent(request: ChatRequest, identity: CurrentIdentity) -> dict:
    from .agents.search_agent import SearchAgent

    return {"answer": await SearchAgent(identity).run(request.question)}
