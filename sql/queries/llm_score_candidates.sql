-- Stories to score in partition H: needs_score = 1 and last changed in H or earlier (earlier ones
-- are left over from a transient failure). Biggest first, so a capped run scores what matters.
WITH todo AS (
    SELECT s.id, s.item_count, s.score_attempts, s.first_published_at, s.latest_published_at,
           s.representative_item_id
      FROM stories s
     WHERE s.needs_score = 1 AND s.updated_partition <= %(hour)s
     ORDER BY s.item_count DESC, s.id
     LIMIT %(limit)s
)
SELECT t.id, t.item_count, t.score_attempts, t.first_published_at, t.latest_published_at,
       t.representative_item_id, a.article_count, a.languages, sc.source_count
  FROM todo t
  LEFT JOIN LATERAL (
        SELECT count(*) AS article_count,
               coalesce(array_agg(DISTINCT i.lang ORDER BY i.lang) FILTER (WHERE i.lang IS NOT NULL), '{}') AS languages
          FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = t.id) a ON true
  LEFT JOIN LATERAL (
        SELECT count(*) AS source_count FROM (
            SELECT i.source_id FROM story_articles sa JOIN items i ON i.id = sa.item_id WHERE sa.story_id = t.id
            UNION
            SELECT src.source_id FROM story_articles sa JOIN item_sources src ON src.item_id = sa.item_id
             WHERE sa.story_id = t.id) u) sc ON true
 ORDER BY t.item_count DESC, t.id
