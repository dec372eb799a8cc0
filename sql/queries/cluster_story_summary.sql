-- One row per story for the asset's markdown preview: size, languages and sources over every
-- article (duplicates included, via story_articles), the representative headline.
SELECT s.id, s.item_count,
       (SELECT count(*) FROM story_articles a WHERE a.story_id = s.id) AS articles,
       (SELECT string_agg(DISTINCT coalesce(i.lang, '?'), ',')
          FROM story_articles a JOIN items i ON i.id = a.item_id WHERE a.story_id = s.id) AS languages,
       (SELECT string_agg(DISTINCT i.source_id, ',')
          FROM story_articles a JOIN items i ON i.id = a.item_id WHERE a.story_id = s.id) AS sources,
       r.title AS headline, s.created_partition
  FROM stories s
  LEFT JOIN items r ON r.id = s.representative_item_id
 WHERE s.id = ANY(%(ids)s)
 ORDER BY s.item_count DESC, s.id
