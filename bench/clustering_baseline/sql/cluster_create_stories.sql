-- New pass-2 stories: deterministic id, founder's vector as a provisional centroid (the
-- aggregates are recomputed from the members right after, in the same transaction).
INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at,
                     latest_published_at, centroid, item_count, representative_item_id)
SELECT u.story_id, %(model)s, %(h)s, %(h)s, e.published_at, e.published_at, e.embedding, 0, u.founder
  FROM unnest(%(story_ids)s::text[], %(founders)s::text[]) AS u(story_id, founder)
  JOIN item_embeddings e ON e.item_id = u.founder AND e.model = %(model)s
ON CONFLICT (id) DO UPDATE SET updated_partition = EXCLUDED.updated_partition, updated_at = now()
