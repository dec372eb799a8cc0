-- Offline: pending translations of stories scored in H or earlier are reported as skipped (2).
UPDATE story_translations t
   SET status = 2, error = %(reason)s, updated_at = now()
  FROM story_scores sc
 WHERE sc.story_id = t.story_id AND t.status = 1 AND sc.partition_hour <= %(hour)s
