-- Events left without stories after a rerun undid their memberships.
DELETE FROM events e
 WHERE e.id = ANY(%(event_ids)s)
   AND NOT EXISTS (SELECT 1 FROM event_stories es WHERE es.event_id = e.id)
RETURNING e.id
