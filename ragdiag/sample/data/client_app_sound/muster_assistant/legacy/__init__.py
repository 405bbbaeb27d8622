"""Former prototype endpoints, now thin wrappers over the retrieval profiles."""
