-- Cosine between waiting stories (no event, earlier hours) and this hour's candidate stories
-- without an event: what a waiting story's similarity to an event founded this hour is made of.
SELECT w.id, c.id, p.similarity
  FROM stories w
  JOIN stories c ON c.model = w.model
 CROSS JOIN LATERAL (
        SELECT CASE WHEN w.model = c.model THEN 1 - (w.centroid <=> c.centroid) END AS similarity
       ) p
 WHERE w.id = ANY(%(waiting_ids)s)
   AND c.id = ANY(%(story_ids)s)
   AND p.similarity >= %(threshold)s
 ORDER BY w.id, c.id
