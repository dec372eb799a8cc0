-- One translated language of a narrative; ignored if the narrative was regenerated meanwhile.
UPDATE event_translations t
   SET title = %(title)s, narrative = %(narrative)s, status = 0, model = %(model)s,
       attempts = t.attempts + %(attempts)s, error = NULL, updated_at = now()
  FROM events e
 WHERE t.event_id = %(event_id)s AND t.lang = %(lang)s AND t.status = 1
   AND e.id = t.event_id AND e.narrative_generated_at = %(generated_at)s
