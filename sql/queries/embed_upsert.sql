-- One vector per canonical item, copied from the cache (Python never round-trips cached vectors).
-- Both columns get the raw vector. Models with centring on write through embed_upsert_centred.sql
-- instead (each row once, centred: what this statement followed by embed_centre_apply.sql stores).
INSERT INTO item_embeddings (item_id, model, text_hash, embedding, raw_embedding, partition_hour, published_at)
SELECT i.id, %(model)s, u.h, c.embedding, c.embedding, i.partition_hour, i.published_at
  FROM unnest(%(ids)s::text[], %(hashes)s::text[]) AS u(id, h)
  JOIN items i ON i.id = u.id
  JOIN embedding_cache c ON c.model = %(model)s AND c.text_hash = u.h
ON CONFLICT (item_id, model) DO UPDATE
   SET text_hash = EXCLUDED.text_hash, embedding = EXCLUDED.embedding, raw_embedding = EXCLUDED.raw_embedding,
       partition_hour = EXCLUDED.partition_hour, published_at = EXCLUDED.published_at
 WHERE item_embeddings.text_hash IS DISTINCT FROM EXCLUDED.text_hash
    OR item_embeddings.raw_embedding IS NULL
    OR item_embeddings.partition_hour IS DISTINCT FROM EXCLUDED.partition_hour
    OR item_embeddings.published_at IS DISTINCT FROM EXCLUDED.published_at
    -- centring off (again): the stored vector must be the raw one
    OR (NOT %(centred)s AND item_embeddings.embedding IS DISTINCT FROM EXCLUDED.embedding)
