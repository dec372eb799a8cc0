-- A failed translation batch: status 1 (retry later) or -1 (permanent), attempts counted.
UPDATE event_translations t
   SET status = %(status)s, attempts = t.attempts + %(attempts)s, error = %(error)s, updated_at = now()
  FROM events e
 WHERE t.event_id = %(event_id)s AND t.lang = ANY(%(langs)s) AND t.status = 1
   AND e.id = t.event_id AND e.narrative_generated_at = %(generated_at)s
