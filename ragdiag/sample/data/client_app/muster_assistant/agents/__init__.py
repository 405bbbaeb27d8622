"""The agentic chat path: the model calls search tools itself."""
