-- Pairwise cosine between this hour's candidate stories (for events founded within the hour).
SELECT a.id, b.id, p.similarity
  FROM stories a
  JOIN stories b ON a.id < b.id AND b.model = a.model
 CROSS JOIN LATERAL (
        SELECT CASE WHEN a.model = b.model THEN 1 - (a.centroid <=> b.centroid) END AS similarity
       ) p
 WHERE a.id = ANY(%(story_ids)s)
   AND b.id = ANY(%(story_ids)s)
   AND p.similarity >= %(threshold)s
 ORDER BY a.id, b.id
