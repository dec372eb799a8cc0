-- One batch (2 languages) done. The scored_at guard drops a result whose source text was
-- replaced by a rescore while the call was in flight (the rows are pending again for the new text).
UPDATE story_translations t
   SET headline = v.headline, summary = v.summary, status = 0, attempts = t.attempts + %(attempts)s,
       model = %(model)s, error = NULL, updated_at = now()
  FROM unnest(%(langs)s::text[], %(headlines)s::text[], %(summaries)s::text[]) AS v(lang, headline, summary)
 WHERE t.story_id = %(story_id)s AND t.lang = v.lang AND t.status = 1
   AND EXISTS (SELECT 1 FROM story_scores sc WHERE sc.story_id = t.story_id AND sc.scored_at = %(scored_at)s)
