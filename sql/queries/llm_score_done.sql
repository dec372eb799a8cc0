UPDATE stories
   SET needs_score = 0, score_attempts = 0, scored_item_count = %(story_item_count)s, score_error = NULL
 WHERE id = %(story_id)s
