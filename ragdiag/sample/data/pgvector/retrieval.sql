-- Muster AG assistant (sample client): the retrieval query as seed 002 writes it.
-- :embedding = the question's embedding, :groups = the user's groups from the login, never from the question.
-- :now stands for now() so that the sample answers the same on every day (reference date 2026-06-30).
select c.id, c.document_id, c.content
from chunks c
join documents d on d.id = c.document_id
where d.allowed_groups && :groups::text[]
  and d.valid_from <= :now::timestamptz
  and (d.valid_to is null or d.valid_to > :now::timestamptz)
order by c.embedding <=> :embedding
limit 30;  -- a wider selection for reranking; only the best go to the model
