-- Timeline order of each given event: 1 = earliest story (first_published_at, then id).
UPDATE event_stories es
   SET timeline_position = r.position
  FROM (SELECT es2.story_id,
               row_number() OVER (PARTITION BY es2.event_id ORDER BY s.first_published_at, s.id) AS position
          FROM event_stories es2
          JOIN stories s ON s.id = es2.story_id
         WHERE es2.event_id = ANY(%(event_ids)s)) r
 WHERE es.story_id = r.story_id
   AND es.timeline_position IS DISTINCT FROM r.position
