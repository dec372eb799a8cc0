-- Prompt material: per story the representative first, then the newest articles (at most 40 each;
-- llm/scoring.py picks 12 distinct titles from these).
SELECT story_id, item_id, title, summary, lang, source_name, published_at, is_representative
  FROM (
    SELECT sa.story_id, i.id AS item_id, i.title,
           left(coalesce(nullif(i.summary, ''), i.content, ''), 1500) AS summary,
           i.lang, coalesce(src.name, i.source_id) AS source_name, i.published_at,
           (i.id = s.representative_item_id) AS is_representative,
           row_number() OVER (PARTITION BY sa.story_id
                              ORDER BY (i.id = s.representative_item_id) DESC NULLS LAST,
                                       i.published_at DESC, i.id) AS rn
      FROM story_articles sa
      JOIN stories s ON s.id = sa.story_id
      JOIN items i ON i.id = sa.item_id
      LEFT JOIN sources src ON src.id = i.source_id
     WHERE sa.story_id = ANY(%(story_ids)s)
  ) x
 WHERE rn <= 40
 ORDER BY story_id, rn
