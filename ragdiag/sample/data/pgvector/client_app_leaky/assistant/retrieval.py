"""Retrieval for the Muster AG assistant (sample client, leaky variant): groups from the request."""

from flask import Flask, jsonify, request
import psycopg

from assistant.embed import embed

app = Flask(__name__)

RETRIEVAL_SQL = """
select c.id, c.document_id, c.content
from chunks c
join documents d on d.id = c.document_id
where d.allowed_groups && %(groups)s::text[]
  and d.valid_from <= now()
  and (d.valid_to is null or d.valid_to > now())
order by c.embedding <=> %(embedding)s
limit 30
"""


def retrieve(conn: psycopg.Connection, question: str, groups: list[str]) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(RETRIEVAL_SQL, {"embedding": embed(question), "groups": groups})
        return cur.fetchall()[:5]


@app.post("/ask")
def ask():
    body = request.get_json()
    groups = body["groups"]  # whatever the caller sends
    with psycopg.connect() as conn:
        chunks = retrieve(conn, body["question"], groups)
    return jsonify({"chunks": [c[0] for c in chunks]})
