-- The timelines of the given events (no vectors): for the asset checks and narratives.
SELECT es.event_id, es.story_id, es.timeline_position, s.first_published_at, s.latest_published_at,
       e.quiet_hours
  FROM event_stories es
  JOIN stories s ON s.id = es.story_id
  JOIN events e ON e.id = es.event_id
 WHERE es.event_id = ANY(%(event_ids)s)
 ORDER BY es.event_id, es.timeline_position NULLS LAST, es.story_id
