-- Stories without an event whose articles reach into the join gap before partition hour %(hour)s
-- and that are not this hour's candidates: they may join an event founded in this hour
-- (stages/events/grouping.py rule 5). Oldest first, as the rules process stories.
SELECT s.id, s.first_published_at, s.latest_published_at, sc.significance
  FROM stories s
  LEFT JOIN story_scores sc ON sc.story_id = s.id
 WHERE NOT EXISTS (SELECT 1 FROM event_stories es WHERE es.story_id = s.id)
   AND s.latest_published_at >= %(hour)s - make_interval(secs => %(gap_hours)s * 3600)
   AND s.first_published_at < %(hour)s + interval '1 hour'
   AND NOT (s.id = ANY(%(candidate_ids)s))
 ORDER BY s.first_published_at, s.id
