"""Retrieval policy: every search request is built in `profiles`."""
