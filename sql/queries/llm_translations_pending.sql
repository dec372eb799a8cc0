-- Translation work for partition H: rows still at status 1 for stories scored in H or earlier.
SELECT t.story_id, t.lang, t.attempts, sc.headline, sc.summary, sc.pivot_lang, sc.scored_at
  FROM story_translations t
  JOIN story_scores sc ON sc.story_id = t.story_id
 WHERE t.status = 1 AND sc.partition_hour <= %(hour)s
 ORDER BY sc.significance DESC, t.story_id, t.lang
 LIMIT %(limit)s
