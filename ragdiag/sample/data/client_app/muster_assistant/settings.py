"""Configuration, read once at start-up."""

from __future__ import annotations

import os
from pathlib import Path

SEARCH_ENDPOINT = os.environ.get("MUSTER_SEARCH_ENDPOINT", "https://muster-search.search.windows.net")
SEARCH_API_VERSION = "2024-07-01"
INDEX_NAME = "muster"
SEMANTIC_CONFIG = "default"

TOP_K = 8
VECTOR_K = 20
MIN_CONFIDENCE = 0.85

OPENAI_ENDPOINT = os.environ.get("MUSTER_OPENAI_ENDPOINT", "https://muster-openai.openai.azure.com")
OPENAI_API_VERSION = "2024-10-21"
CHAT_DEPLOYMENT = "gpt-4o"
EMBEDDING_DEPLOYMENT = "text-embedding-3-large"

PROMPT_DIR = Path(__file__).parent / "prompts"
