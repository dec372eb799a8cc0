-- New pass-2 stories with their aggregates computed from the members passed in (the rules of
-- cluster_recompute.sql: centroid = avg of the `window` most recent members, ties by item id;
-- representative = the member nearest it, ties by item id), so each centroid enters the HNSW index
-- once. A story H founded before that later hours extended (same deterministic id) conflicts: its
-- row is kept, and the caller recomputes it from all its members. RETURNING: ids that conflicted.
WITH m AS MATERIALIZED (
    SELECT u.story_id, e.item_id, e.embedding, e.published_at,
           row_number() OVER (PARTITION BY u.story_id ORDER BY e.published_at DESC, e.item_id DESC) AS recency
      FROM unnest(%(member_story_ids)s::text[], %(member_ids)s::text[]) AS u(story_id, item_id)
      JOIN item_embeddings e ON e.item_id = u.item_id AND e.model = %(model)s
), agg AS MATERIALIZED (
    SELECT story_id, count(*) AS n, min(published_at) AS first_pub, max(published_at) AS latest_pub,
           avg(embedding) FILTER (WHERE recency <= %(window)s) AS centroid
      FROM m GROUP BY story_id
), representative AS (
    -- one pass over the members (a correlated subquery per story would scan them all per story)
    SELECT DISTINCT ON (m.story_id) m.story_id, m.item_id
      FROM m JOIN agg a ON a.story_id = m.story_id
     ORDER BY m.story_id, m.embedding <=> a.centroid, m.item_id
)
INSERT INTO stories (id, model, created_partition, updated_partition, first_published_at,
                     latest_published_at, centroid, item_count, representative_item_id, searchable)
SELECT a.story_id, %(model)s, %(h)s, %(h)s, a.first_pub, a.latest_pub, a.centroid, a.n, r.item_id,
       -- migration 035: searchable while the latest item is at or after the model's boundary
       a.latest_pub >= coalesce((SELECT b.stories_from FROM cluster_recent_state b WHERE b.model = %(model)s),
                                '-infinity')
  FROM agg a JOIN representative r ON r.story_id = a.story_id
 ORDER BY a.story_id
ON CONFLICT (id) DO UPDATE SET updated_partition = EXCLUDED.updated_partition, updated_at = now()
RETURNING id, (xmax <> 0) AS existed
