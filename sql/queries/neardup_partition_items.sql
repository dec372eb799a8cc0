-- Items first ingested in hour H, with what the representative rules need.
SELECT i.id, i.title, coalesce(i.lang, s.language) AS lang, i.url, i.canonical_url,
       s.syndicator, i.published_at
  FROM items i
  JOIN sources s ON s.id = i.source_id
 WHERE i.partition_hour = %(hour)s
 ORDER BY i.id
