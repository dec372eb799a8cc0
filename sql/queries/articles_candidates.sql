-- Pages the article stage fetches in hour %(hour)s: canonical items (not a near/URL duplicate) of
-- hours %(since)s .. %(hour)s with an http(s) link, none of whose feeds or outlet is excluded, that
-- have no row yet, or were deferred, or failed for a passing reason in an earlier hour fewer than
-- %(max_attempts)s times. Newest hour first, then the most covered, then the newest published.
SELECT i.id, i.url, i.lang,
       array(SELECT DISTINCT s.source_id FROM item_sources s WHERE s.item_id = i.id ORDER BY 1) AS source_ids
  FROM items i
  LEFT JOIN article_texts a ON a.item_id = i.id
 WHERE i.partition_hour BETWEEN %(since)s AND %(hour)s
   AND i.url ~* '^https?://'
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.item_id = i.id)
   AND NOT coalesce(i.outlet = ANY (%(excluded_outlets)s::text[]), false)
   AND NOT EXISTS (SELECT 1 FROM item_sources s
                    WHERE s.item_id = i.id AND s.source_id = ANY (%(excluded_sources)s::text[]))
   AND (a.item_id IS NULL
        OR (a.fetched_hour < %(hour)s
            AND (a.status = 'deferred'
                 OR (a.status = 'failed' AND a.reason = ANY (%(passing)s::text[])
                     AND a.attempts < %(max_attempts)s))))
 ORDER BY i.partition_hour DESC,
          (SELECT count(DISTINCT s.source_id) FROM item_sources s WHERE s.item_id = i.id)
          + (SELECT count(*) FROM item_duplicates d WHERE d.canonical_item_id = i.id) DESC,
          i.published_at DESC, i.id
 LIMIT %(limit)s
