-- Cosine similarity of each candidate story centroid to the nearest open events' centroids
-- (event centroid = average of its stories' centroids). Exact scan: open events are few.
-- The time prefilter mirrors grouping.interval_gap_hours <= %(gap_hours)s; the CASE keeps
-- `<=>` away from vectors of another embedding model (different dimension).
SELECT s.id AS story_id, m.event_id, m.similarity
  FROM stories s
 CROSS JOIN LATERAL (
        SELECT e.id AS event_id,
               1 - (e.centroid <=> s.centroid) AS similarity
          FROM events e
         WHERE e.id = ANY(%(event_ids)s)
           AND e.model = s.model
           AND e.last_published_at >= s.first_published_at - make_interval(secs => %(gap_hours)s * 3600)
           AND e.first_published_at <= s.latest_published_at + make_interval(secs => %(gap_hours)s * 3600)
         ORDER BY CASE WHEN e.model = s.model THEN e.centroid <=> s.centroid END, e.id
         LIMIT %(k)s
       ) m
 WHERE s.id = ANY(%(story_ids)s)
   AND m.similarity >= %(threshold)s
 ORDER BY s.id, m.event_id
