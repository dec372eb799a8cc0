-- Pass 2: H's items against the window's still-unassigned canonical items: ingested in a
-- partition in [window_start, h_end) (never a later one, so a backfill sees what the hourly run
-- saw), |published gap| <= max_gap_hours, not in a story, not a duplicate. Returns edges with
-- cosine >= item_threshold and the neighbour's published time; Python gets ids, similarities and
-- times, never vectors. Both sides come from cluster_recent_items (migration 033), whose HNSW
-- graph spans the recent window only, however long the history in item_embeddings.
-- freed / attached: empty in the clustering transaction itself. A second connection reading the
-- snapshot the transaction started from (stages/clustering/store.py SnapshotReader) passes the items
-- whose memberships the transaction removed (undo) and those pass 1 attached, so it sees the
-- same "not in a story" as the transaction.
SELECT q.item_id, n.item_id, n.sim, n.published_at
  FROM cluster_recent_items q
  JOIN LATERAL (
        SELECT c.item_id, 1 - ({c_emb} <=> {q_emb}) AS sim, c.published_at
          FROM cluster_recent_items c
         WHERE c.model = %(model)s
           AND c.partition_hour >= %(window_start)s AND c.partition_hour < %(h_end)s
           AND c.published_at >= q.published_at - make_interval(secs => %(max_gap_s)s)
           AND c.published_at <= q.published_at + make_interval(secs => %(max_gap_s)s)
           AND c.item_id <> q.item_id
           AND (c.item_id = ANY(%(freed)s)
                OR NOT EXISTS (SELECT 1 FROM story_items si WHERE si.item_id = c.item_id))
           AND c.item_id <> ALL(%(attached)s)
           AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = c.item_id)
         ORDER BY {c_emb} <=> {q_emb}
         LIMIT %(k)s
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)
   AND n.sim >= %(threshold)s
