-- state -1: permanent (never retried until the story grows substantially: llm_mark_rescore.sql);
-- state 1: transient, stays queued with its attempts counted.
UPDATE stories
   SET needs_score = %(state)s,
       score_attempts = score_attempts + %(attempts)s,
       scored_item_count = CASE WHEN %(state)s = -1 THEN %(story_item_count)s ELSE scored_item_count END,
       score_error = %(error)s
 WHERE id = %(story_id)s AND needs_score = 1
