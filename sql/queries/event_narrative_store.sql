-- A freshly generated narrative. needs_narrative stays 1 if the event gained stories meanwhile.
UPDATE events
   SET narrative = %(narrative)s,
       narrative_lang = %(lang)s,
       narrative_model = %(model)s,
       narrative_offline = %(offline)s,
       narrative_title = CASE WHEN %(offline)s THEN NULL ELSE coalesce(%(llm_title)s, narrative_title) END,
       narrative_generated_at = clock_timestamp(),
       narrative_partition = %(hour)s,
       narrative_story_count = %(story_count)s,
       needs_narrative = CASE WHEN story_count = %(story_count)s THEN 0 ELSE 1 END,
       narrative_attempts = 0,
       narrative_error = NULL,
       updated_at = now()
 WHERE id = %(event_id)s
