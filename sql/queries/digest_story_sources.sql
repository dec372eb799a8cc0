-- One link per source per story (its own article, canonical before duplicate, earliest first),
-- sources ordered by when they reported it; duplicates count, so syndicators are credited.
SELECT story_id, source_name, url, lang, count(*) OVER (PARTITION BY story_id) AS total
  FROM (
        SELECT DISTINCT ON (sa.story_id, i.source_id)
               sa.story_id, i.source_id, src.name AS source_name, i.url, i.lang, i.published_at
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, i.source_id, sa.is_duplicate, i.published_at, i.id
       ) per_source
 ORDER BY story_id, published_at, source_name
