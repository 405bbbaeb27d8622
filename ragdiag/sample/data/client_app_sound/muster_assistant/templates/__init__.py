"""Deterministic retrieval templates: fact, definition, verification."""
