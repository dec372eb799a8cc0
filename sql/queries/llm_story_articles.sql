-- Prompt material: per story the representative first, then the newest articles (at most 40 each;
-- stages/llm/scoring.py picks 12 distinct titles from these). page_text: the lead paragraph of the item's
-- extracted page (article_texts, stored plain), only while the page is ok and not pruned; NULL else.
SELECT story_id, item_id, title, summary, lang, source_name, published_at, is_representative, page_text
  FROM (
    SELECT sa.story_id, i.id AS item_id, i.title,
           left(coalesce(nullif(i.summary, ''), i.content, ''), 1500) AS summary,
           i.lang, coalesce(src.name, i.source_id) AS source_name, i.published_at,
           (i.id = s.representative_item_id) AS is_representative,
           left(nullif(art.lead, ''), 1500) AS page_text,
           row_number() OVER (PARTITION BY sa.story_id
                              ORDER BY (i.id = s.representative_item_id) DESC NULLS LAST,
                                       i.published_at DESC, i.id) AS rn
      FROM story_articles sa
      JOIN stories s ON s.id = sa.story_id
      JOIN items i ON i.id = sa.item_id
      LEFT JOIN sources src ON src.id = i.source_id
      LEFT JOIN article_texts art ON art.item_id = i.id AND art.status = 'ok' AND art.text_pruned_at IS NULL
     WHERE sa.story_id = ANY(%(story_ids)s)
  ) x
 WHERE rn <= 40
 ORDER BY story_id, rn
