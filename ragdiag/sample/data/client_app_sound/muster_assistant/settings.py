"""Configuration, read once at start-up."""

from __future__ import annotations

import os
from pathlib import Path

SEARCH_ENDPOINT = os.environ.get("MUSTER_SEARCH_ENDPOINT", "https://muster-search.search.windows.net")
INDEX_NAME = "muster"
SEMANTIC_CONFIGURATION = "default"
SCORING_PROFILE = "quality_boost"  # magnitude boost on confidence_score instead of a pre-filter

# What the answer step may receive: at most MAX_SOURCES sources, each cut to
# MAX_CHARS_PER_SOURCE characters, MAX_CONTEXT_TOKENS tokens in total.
MAX_CONTEXT_TOKENS = 6000
MAX_SOURCES = 8
MAX_CHARS_PER_SOURCE = 4000

OPENAI_ENDPOINT = os.environ.get("MUSTER_OPENAI_ENDPOINT", "https://muster-openai.openai.azure.com")
OPENAI_API_VERSION = "2024-10-21"
CHAT_DEPLOYMENT = "gpt-4o"

PROMPT_DIR = Path(__file__).parent / "prompts"
