"""The ``pgvector`` target: a client's PostgreSQL + pgvector retrieval, audited through its own SQL.

`sqltemplate` parses the client's query (parameters, WHERE clauses, LIMIT) for probes,
`connection` runs every statement read-only with a timeout, `mapping` names the columns,
`target` answers `SearchRequest`s, `server` starts the embedded PostgreSQL of the sample.
"""
