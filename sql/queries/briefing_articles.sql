-- The articles a briefing is built from: per story the representative first, then the newest (at
-- most 40), each with its page's main text (gzip) while the page is ok and not pruned, and its
-- outlet's country (none for an aggregator's item: the aggregator's country is not the publisher's).
SELECT story_id, item_id, source_name, lang, title, summary, text_gzip, country
  FROM (
    SELECT sa.story_id, i.id AS item_id, coalesce(src.name, i.source_id) AS source_name, i.lang, i.title,
           coalesce(nullif(i.summary, ''), i.content, '') AS summary,
           CASE WHEN art.status = 'ok' AND art.text_pruned_at IS NULL THEN art.text_gzip END AS text_gzip,
           CASE WHEN src.syndicator THEN NULL ELSE src.country END AS country,
           row_number() OVER (PARTITION BY sa.story_id
                              ORDER BY (i.id = s.representative_item_id) DESC NULLS LAST,
                                       i.published_at DESC, i.id) AS rn
      FROM story_articles sa
      JOIN stories s ON s.id = sa.story_id
      JOIN items i ON i.id = sa.item_id
      LEFT JOIN sources src ON src.id = i.source_id
      LEFT JOIN article_texts art ON art.item_id = i.id
     WHERE sa.story_id = ANY(%(story_ids)s)
  ) x
 WHERE rn <= 40
 ORDER BY story_id, rn
