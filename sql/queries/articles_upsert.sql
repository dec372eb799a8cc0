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
