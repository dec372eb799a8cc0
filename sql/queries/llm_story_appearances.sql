-- Every (article, source) pair of the given stories, for the coverage counts (stages/llm/scoring.py:
-- independent_outlets): the source that first carried the item and every other source that listed
-- it, whether that source is an aggregator, its declared language, and the item's outlet.
SELECT sa.story_id, ap.source_id, coalesce(src.syndicator, false) AS syndicator,
       coalesce(src.language, i.lang) AS language, i.outlet, i.published_at
  FROM story_articles sa
  JOIN items i ON i.id = sa.item_id
  CROSS JOIN LATERAL (SELECT i.source_id
                      UNION
                      SELECT s.source_id FROM item_sources s WHERE s.item_id = i.id) ap
  LEFT JOIN sources src ON src.id = ap.source_id
 WHERE sa.story_id = ANY(%(story_ids)s)
 ORDER BY sa.story_id, ap.source_id, i.published_at, i.id
