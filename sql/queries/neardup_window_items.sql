-- Items of the lookback window before H (all of them: titles feed the IDF; canonical
-- ones are match candidates), restricted to the languages present in H.
SELECT i.id, i.title, coalesce(i.lang, s.language) AS lang, i.url, i.canonical_url,
       s.syndicator, i.published_at, (d.item_id IS NULL) AS is_canonical
  FROM items i
  JOIN sources s ON s.id = i.source_id
  LEFT JOIN item_duplicates d ON d.item_id = i.id
 WHERE i.partition_hour >= %(window_start)s AND i.partition_hour < %(hour)s
   AND coalesce(i.lang, s.language) = ANY(%(langs)s)
 ORDER BY i.id
