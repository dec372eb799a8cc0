-- Pass 2: a batch of items against the window's still-unassigned canonical items: ingested in a
-- partition in [window_start, h_end) (never a later one, so a backfill sees what the hourly run
-- saw), |published gap| <= max_gap_hours, not in a story, not a duplicate. Returns edges with
-- cosine >= item_threshold; Python gets ids and similarities, never vectors.
SELECT q.item_id, n.item_id, n.sim
  FROM item_embeddings q
  JOIN LATERAL (
        SELECT c.item_id, 1 - ({c_emb} <=> {q_emb}) AS sim
          FROM item_embeddings c
         WHERE c.model = %(model)s
           AND c.partition_hour >= %(window_start)s AND c.partition_hour < %(h_end)s
           AND c.published_at >= q.published_at - make_interval(secs => %(max_gap_s)s)
           AND c.published_at <= q.published_at + make_interval(secs => %(max_gap_s)s)
           AND c.item_id <> q.item_id
           AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.item_id = c.item_id)
           AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = c.item_id)
         ORDER BY {c_emb} <=> {q_emb}
         LIMIT %(k)s
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)
   AND n.sim >= %(threshold)s
