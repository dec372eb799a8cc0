-- Insert parsed items. An item first ingested in another hour is left as it
-- is (raw is immutable per hour; its partition stays the hour it was first
-- seen). A rerun of the same hour rewrites only the rows that hour owns, and
-- only when a value changed (e.g. after a parser fix), so reruns are idempotent.
INSERT INTO items AS i (id, canonical_url, url, guid, title, summary, content, author, lang, lang_origin,
                        published_at, date_flag, partition_hour, source_id, fetch_id, outlet)
SELECT * FROM unnest(%(ids)s::text[], %(canonical_urls)s::text[], %(urls)s::text[], %(guids)s::text[],
                     %(titles)s::text[], %(summaries)s::text[], %(contents)s::text[], %(authors)s::text[],
                     %(langs)s::text[], %(lang_origins)s::text[], %(published_ats)s::timestamptz[],
                     %(date_flags)s::text[], %(partition_hours)s::timestamptz[], %(source_ids)s::text[],
                     %(fetch_ids)s::bigint[], %(outlets)s::text[])
ON CONFLICT (id) DO UPDATE
   SET url = EXCLUDED.url, guid = EXCLUDED.guid, title = EXCLUDED.title, summary = EXCLUDED.summary,
       content = EXCLUDED.content, author = EXCLUDED.author, lang = EXCLUDED.lang,
       lang_origin = EXCLUDED.lang_origin, published_at = EXCLUDED.published_at, date_flag = EXCLUDED.date_flag,
       source_id = EXCLUDED.source_id, fetch_id = EXCLUDED.fetch_id, outlet = EXCLUDED.outlet
 WHERE i.partition_hour = EXCLUDED.partition_hour
   AND (i.url, i.guid, i.title, i.summary, i.content, i.author, i.lang, i.lang_origin, i.published_at,
        i.date_flag, i.source_id, i.fetch_id, i.outlet)
       IS DISTINCT FROM
       (EXCLUDED.url, EXCLUDED.guid, EXCLUDED.title, EXCLUDED.summary, EXCLUDED.content, EXCLUDED.author,
        EXCLUDED.lang, EXCLUDED.lang_origin, EXCLUDED.published_at, EXCLUDED.date_flag, EXCLUDED.source_id,
        EXCLUDED.fetch_id, EXCLUDED.outlet)
RETURNING i.id, (xmax = 0) AS inserted
