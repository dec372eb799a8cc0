-- A failed batch of a briefing's lines: -1 (permanent) or still 1 with its attempts counted.
UPDATE briefing_translations t
   SET status = %(status)s, attempts = t.attempts + %(attempts)s, model = %(model)s, error = %(error)s,
       updated_at = now()
 WHERE t.story_id = %(story_id)s AND t.lang = ANY(%(langs)s) AND t.status = 1
   AND t.material = %(material)s AND t.briefing_md5 = %(briefing_md5)s
