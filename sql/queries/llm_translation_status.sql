-- Translation states of the stories scored in partition H, per language.
SELECT t.lang, t.status, count(*) AS n
  FROM story_translations t
  JOIN story_scores sc ON sc.story_id = t.story_id
 WHERE sc.partition_hour = %(hour)s
 GROUP BY t.lang, t.status
 ORDER BY t.lang, t.status
