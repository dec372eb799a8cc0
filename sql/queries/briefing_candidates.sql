-- Stories of hour H (an article ingested in H, or scored in H) whose articles, or their pages'
-- status, changed since their briefing (or that have none): what to brief this hour.
WITH touched AS (
    SELECT DISTINCT sa.story_id
      FROM story_articles sa
      JOIN items i ON i.id = sa.item_id
     WHERE i.partition_hour = %(hour)s
    UNION
    SELECT story_id FROM story_scores WHERE partition_hour = %(hour)s
), material AS (
    SELECT t.story_id,
           md5(string_agg(sa.item_id || ':' || coalesce(a.status, '-'), ',' ORDER BY sa.item_id)) AS material
      FROM touched t
      JOIN story_articles sa ON sa.story_id = t.story_id
      LEFT JOIN article_texts a ON a.item_id = sa.item_id AND a.text_pruned_at IS NULL
     GROUP BY t.story_id
)
SELECT m.story_id, m.material
  FROM material m
  LEFT JOIN story_briefings b ON b.story_id = m.story_id
 WHERE b.material IS DISTINCT FROM m.material
 ORDER BY m.story_id
