-- New vectors, one row per (text hash, model); vectors arrive as pgvector text literals.
INSERT INTO embedding_cache (text_hash, model, embedding)
SELECT h, %(model)s, v::vector
  FROM unnest(%(hashes)s::text[], %(vectors)s::text[]) AS u(h, v)
ON CONFLICT (text_hash, model) DO NOTHING
