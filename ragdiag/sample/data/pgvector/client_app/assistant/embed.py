"""The question's embedding (sample client: the model call is left out)."""


def embed(question: str) -> str:
    raise NotImplementedError("the sample client's embedding call")
