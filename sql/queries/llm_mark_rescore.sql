-- Stories touched in partition H that must be (re)scored: grew "substantially" since their last
-- score or permanent failure (same rule as stages/llm/scoring.py: needs_rescore), or, when an endpoint is
-- configured, carry only an offline-heuristic score. New stories are already needs_score = 1.
UPDATE stories s
   SET needs_score = 1, score_attempts = 0, score_error = NULL
 WHERE s.updated_partition = %(hour)s
   AND s.needs_score IN (0, -1)
   AND (s.item_count - s.scored_item_count >= GREATEST(%(min_new)s, ceil(%(ratio)s * s.scored_item_count))
        OR (%(online)s AND s.needs_score = 0
            AND EXISTS (SELECT 1 FROM story_scores sc WHERE sc.story_id = s.id AND sc.offline)))
RETURNING s.id
