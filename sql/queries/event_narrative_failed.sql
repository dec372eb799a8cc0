-- An LLM narrative failure: 1 = retry on a later run, -1 = permanent (never retried automatically).
UPDATE events
   SET needs_narrative = %(status)s, narrative_attempts = %(attempts)s, narrative_error = %(error)s, updated_at = now()
 WHERE id = %(event_id)s
