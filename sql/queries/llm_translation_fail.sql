UPDATE story_translations t
   SET status = %(status)s, attempts = t.attempts + %(attempts)s, model = %(model)s,
       error = %(error)s, updated_at = now()
 WHERE t.story_id = %(story_id)s AND t.lang = ANY(%(langs)s) AND t.status = 1
   AND EXISTS (SELECT 1 FROM story_scores sc WHERE sc.story_id = t.story_id AND sc.scored_at = %(scored_at)s)
