-- One batch (2 languages) of a briefing's lines done. The version guard drops a result whose
-- briefing was replaced while the call was in flight (its rows are reset for the new one).
UPDATE briefing_translations t
   SET lines = v.lines::jsonb, status = 0, attempts = t.attempts + %(attempts)s, model = %(model)s,
       error = NULL, updated_at = now()
  FROM unnest(%(langs)s::text[], %(lines)s::text[]) AS v(lang, lines)
 WHERE t.story_id = %(story_id)s AND t.lang = v.lang AND t.status = 1
   AND t.material = %(material)s AND t.briefing_md5 = %(briefing_md5)s
   AND EXISTS (SELECT 1 FROM story_briefings b
                WHERE b.story_id = t.story_id AND b.material = t.material AND md5(b.briefing::text) = t.briefing_md5)
