"""Query embeddings through Azure OpenAI."""

from __future__ import annotations

import os

from openai import AzureOpenAI

from .settings import EMBEDDING_DEPLOYMENT, OPENAI_API_VERSION, OPENAI_ENDPOINT

_client = AzureOpenAI(azure_endpoint=OPENAI_ENDPOINT, api_key=os.environ.get("MUSTER_OPENAI_KEY"),
                      api_version=OPENAI_API_VERSION)


def embed(text: str) -> list[float]:
    """The embedding of `text` (3072 dimensions)."""
    response = _client.embeddings.create(model=EMBEDDING_DEPLOYMENT, input=[text])
    return response.data[0].embedding
