-- Pass 1: a batch of new items against recent story centroids (KNN on the per-model HNSW index;
-- iterative scan keeps the time filters from silently dropping neighbours). Gates: cosine >=
-- story_threshold, |item.published_at - story.latest_published_at| <= max_gap_hours, story age at
-- the item's time (item.published_at - story.first_published_at) <= story_max_age_hours.
-- Only stories that existed before H (created_partition < H) are candidates. Best match per item,
-- ties broken by story id. {searchable}: `AND s.searchable` on the HNSW path (the partial index's
-- predicate, migration 035), nothing on the exact path that items published before the boundary
-- take (stages/clustering/store.py pass1_matches).
SELECT DISTINCT ON (q.item_id)
       q.item_id, n.story_id, n.sim, n.gap_hours, n.age_hours
  FROM item_embeddings q
  JOIN LATERAL (
        SELECT s.id AS story_id,
               1 - ({centroid} <=> {q_emb}) AS sim,
               abs(extract(epoch FROM q.published_at - s.latest_published_at)) / 3600.0 AS gap_hours,
               extract(epoch FROM q.published_at - s.first_published_at) / 3600.0 AS age_hours
          FROM stories s
         WHERE s.model = %(model)s {searchable}
           AND s.created_partition < %(h)s
           AND s.latest_published_at >= q.published_at - make_interval(secs => %(max_gap_s)s)
           AND s.latest_published_at <= q.published_at + make_interval(secs => %(max_gap_s)s)
           AND s.first_published_at >= q.published_at - make_interval(secs => %(max_age_s)s)
         ORDER BY {centroid} <=> {q_emb}
         LIMIT %(k)s
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)
   AND n.sim >= %(threshold)s
 ORDER BY q.item_id, n.sim DESC, n.story_id
