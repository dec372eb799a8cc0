-- Pairs of members of H's pass-2 stories with cosine >= item_threshold, or >= item_threshold minus
-- cross_language_margin (cross_threshold) when the two are in different known languages (ids
-- only), so Python can check each story is connected at the threshold. Stories are small; this is
-- a per-story self-join. (Pass 2 keeps a cross-language edge below item_threshold only where the
-- two items' anchors agree, shared/text/anchors.py joins_across_languages; this check only asks for
-- the cosine.)
SELECT a.story_id, a.item_id, b.item_id
  FROM story_items a
  JOIN story_items b ON b.story_id = a.story_id AND b.item_id > a.item_id AND b.partition_hour = %(h)s AND b.pass = 2
  JOIN item_embeddings ea ON ea.item_id = a.item_id AND ea.model = %(model)s
  JOIN item_embeddings eb ON eb.item_id = b.item_id AND eb.model = %(model)s
  JOIN items ia ON ia.id = a.item_id
  JOIN items ib ON ib.id = b.item_id
 WHERE a.partition_hour = %(h)s AND a.pass = 2
   AND 1 - (ea.embedding <=> eb.embedding) >= CASE
           WHEN lower(split_part(coalesce(ia.lang, ''), '-', 1)) <> ''
            AND lower(split_part(coalesce(ib.lang, ''), '-', 1)) <> ''
            AND lower(split_part(coalesce(ia.lang, ''), '-', 1)) <> lower(split_part(coalesce(ib.lang, ''), '-', 1))
           THEN %(cross_threshold)s ELSE %(threshold)s END - 1e-5
