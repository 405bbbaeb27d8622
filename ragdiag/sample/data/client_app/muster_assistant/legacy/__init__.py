"""Code paths from the first prototype, still wired to the /v1 endpoints."""
