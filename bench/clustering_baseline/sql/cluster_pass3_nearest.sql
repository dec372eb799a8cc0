-- Pass 3: for a batch of H's leftover items, the nearest of H's new stories by cosine to the
-- centroid over ALL the story's pass-2 members (avg; cosine is scale-invariant). Groups arrive as
-- (group index, member id) arrays; ties -> lowest group index. MATERIALIZED: the centroids are
-- computed once, not once per item.
WITH centroids AS MATERIALIZED (
    SELECT u.g, avg(e.embedding) AS c
      FROM unnest(%(groups)s::int[], %(members)s::text[]) AS u(g, item_id)
      JOIN item_embeddings e ON e.item_id = u.item_id AND e.model = %(model)s
     GROUP BY u.g
)
SELECT q.item_id, n.g, n.sim
  FROM item_embeddings q
  JOIN LATERAL (
        SELECT c.g, 1 - (c.c <=> q.embedding) AS sim
          FROM centroids c
         ORDER BY c.c <=> q.embedding, c.g
         LIMIT 1
       ) n ON true
 WHERE q.model = %(model)s AND q.item_id = ANY(%(ids)s)
