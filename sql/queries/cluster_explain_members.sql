-- `newsdedup explain`: every article of a story (duplicates follow their canonical item) with what
-- admitted it, in order of admission (partition, pass, then publication), whose vector it shares, and
-- what the article stage found on its page (status, reason, words, the page's first paragraph).
SELECT a.item_id, i.title, i.lang, i.source_id, i.published_at,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.pass END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.similarity END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.threshold END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.gap_hours END,
       CASE WHEN a.is_duplicate THEN NULL ELSE si.via_item_id END,
       CASE WHEN a.is_duplicate THEN a.canonical_item_id END,
       si.partition_hour,
       -- a canonical item whose embedded text an earlier item had shares that item's vector (one
       -- cache row): the first item with the text, unless that is this one
       (SELECT NULLIF(first.item_id, a.item_id)
          FROM (SELECT o.item_id
                  FROM item_embeddings e
                  JOIN item_embeddings o ON o.model = e.model AND o.text_hash = e.text_hash
                 WHERE NOT a.is_duplicate AND e.item_id = a.item_id
                   AND e.model = (SELECT m.model FROM embedding_models m WHERE m.active)
                 ORDER BY o.partition_hour, o.published_at NULLS LAST, o.item_id
                 LIMIT 1) first),
       art.status, art.reason, art.word_count, art.lead
  FROM story_articles a
  JOIN story_items si ON si.item_id = a.canonical_item_id
  JOIN items i ON i.id = a.item_id
  LEFT JOIN article_texts art ON art.item_id = a.item_id
 WHERE a.story_id = %(id)s
 ORDER BY si.partition_hour, si.pass, a.canonical_item_id, a.is_duplicate, i.published_at, a.item_id
