-- name: articles_candidates
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

-- name: articles_hour_fetched_live
-- Whether any feed of hour %(hour)s was fetched live (a replayed hour's links are never fetched).
SELECT EXISTS (SELECT 1 FROM feed_fetches WHERE partition_hour = %(hour)s AND mode = 'live')

-- name: articles_robots_load
-- The cached robots.txt entries of the origins %(origins)s.
SELECT origin, status, body, detail, fetched_at, expires_at, not_before
  FROM article_robots
 WHERE origin = ANY (%(origins)s::text[])

-- name: articles_robots_upsert
-- Store robots.txt cache entries (one row per origin; the newest fetch wins).
INSERT INTO article_robots (origin, status, body, detail, fetched_at, expires_at, not_before)
SELECT * FROM unnest(%(origins)s::text[], %(statuses)s::text[], %(bodies)s::text[], %(details)s::text[],
                     %(fetched_ats)s::timestamptz[], %(expires_ats)s::timestamptz[], %(not_befores)s::timestamptz[])
ON CONFLICT (origin) DO UPDATE
   SET status = EXCLUDED.status, body = EXCLUDED.body, detail = EXCLUDED.detail,
       fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at, not_before = EXCLUDED.not_before

-- name: articles_upsert
-- Store the hour's page outcomes. attempts adds this hour's (1 when the page was requested, 0 when
-- it was deferred); a row whose text was kept is never replaced by a later failure.
INSERT INTO article_texts (item_id, status, reason, detail, url, final_url, http_status, text_gzip, text_chars,
                           lead, word_count, language, published_at, updated_at, byline, canonical_url,
                           encoding, html_gzip, attempts, fetched_hour, fetched_at)
SELECT u.*, now()
  FROM unnest(%(item_ids)s::text[], %(statuses)s::text[], %(reasons)s::text[], %(details)s::text[],
              %(urls)s::text[], %(final_urls)s::text[], %(http_statuses)s::integer[], %(texts)s::bytea[],
              %(text_chars)s::integer[], %(leads)s::text[], %(word_counts)s::integer[], %(languages)s::text[],
              %(published_ats)s::timestamptz[], %(updated_ats)s::timestamptz[], %(bylines)s::text[],
              %(canonical_urls)s::text[], %(encodings)s::text[], %(htmls)s::bytea[], %(attempts)s::integer[],
              %(fetched_hours)s::timestamptz[]) AS u
ON CONFLICT (item_id) DO UPDATE
   SET status = EXCLUDED.status, reason = EXCLUDED.reason, detail = EXCLUDED.detail, url = EXCLUDED.url,
       final_url = EXCLUDED.final_url, http_status = EXCLUDED.http_status, text_gzip = EXCLUDED.text_gzip,
       text_chars = EXCLUDED.text_chars, lead = EXCLUDED.lead, word_count = EXCLUDED.word_count,
       language = EXCLUDED.language, published_at = EXCLUDED.published_at, updated_at = EXCLUDED.updated_at,
       byline = EXCLUDED.byline, canonical_url = EXCLUDED.canonical_url, encoding = EXCLUDED.encoding,
       html_gzip = EXCLUDED.html_gzip, attempts = article_texts.attempts + EXCLUDED.attempts,
       fetched_hour = EXCLUDED.fetched_hour, fetched_at = now()
 WHERE article_texts.status <> 'ok'
