-- Stories to score in partition H: needs_score = 1 and last changed in H or earlier (earlier ones
-- are left over from a transient failure). Biggest first, so a capped run scores what matters.
-- Coverage (outlets and their languages) comes from llm_story_appearances.
WITH todo AS (
    SELECT s.id, s.item_count, s.score_attempts, s.first_published_at, s.latest_published_at,
           s.representative_item_id
      FROM stories s
     WHERE s.needs_score = 1 AND s.updated_partition <= %(hour)s
     ORDER BY s.item_count DESC, s.id
     LIMIT %(limit)s
)
SELECT t.id, t.item_count, t.score_attempts, t.first_published_at, t.latest_published_at,
       t.representative_item_id, a.article_count
  FROM todo t
  LEFT JOIN LATERAL (
        SELECT count(*) AS article_count FROM story_articles sa WHERE sa.story_id = t.id) a ON true
 ORDER BY t.item_count DESC, t.id
