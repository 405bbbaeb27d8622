"""A worked ragdiag plugin: the `acme_words` check and the `acme` target kind."""
