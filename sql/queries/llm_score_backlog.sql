-- The story_scores check's counts for partition H: stories updated in H that need no score yet
-- have none (orphans), and stories updated in H still waiting for a score.
SELECT count(*) FILTER (WHERE s.needs_score = 0 AND sc.story_id IS NULL) AS orphans,
       count(*) FILTER (WHERE s.needs_score = 1) AS waiting
  FROM stories s
  LEFT JOIN story_scores sc ON sc.story_id = s.id
 WHERE s.updated_partition = %(hour)s;
