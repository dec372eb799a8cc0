-- name: publish_archive_day_upsert
-- The front page's stories of one day in one language, as the hour just published shows them.
INSERT INTO publish_archive_days (output_dir, lang, day, stories_html, stories_hash, story_count)
VALUES (%(output_dir)s, %(lang)s, %(day)s, %(stories_html)s, %(stories_hash)s, %(story_count)s)
ON CONFLICT (output_dir, lang, day) DO UPDATE
   SET stories_html = EXCLUDED.stories_html, stories_hash = EXCLUDED.stories_hash,
       story_count = EXCLUDED.story_count
 WHERE publish_archive_days.stories_hash IS DISTINCT FROM EXCLUDED.stories_hash

-- name: publish_archive_days
-- Every archived day of one language in one output directory, oldest first, without its HTML.
SELECT day, stories_hash, story_count, page_hash
  FROM publish_archive_days
 WHERE output_dir = %(output_dir)s AND lang = %(lang)s
 ORDER BY day

-- name: publish_archive_page_hashes_set
-- Remember what the archived days' pages now show.
UPDATE publish_archive_days a
   SET page_hash = u.page_hash
  FROM unnest(%(days)s::date[], %(page_hashes)s::text[]) AS u(day, page_hash)
 WHERE a.output_dir = %(output_dir)s AND a.lang = %(lang)s AND a.day = u.day

-- name: publish_archive_stories
-- The stories' HTML of the archived days whose page is written again.
SELECT day, stories_html
  FROM publish_archive_days
 WHERE output_dir = %(output_dir)s AND lang = %(lang)s AND day = ANY(%(days)s)

-- name: publish_briefings
-- The briefings of the given stories, with the outlet (item_outlet(), as publish_story_sources
-- names it) of every article of the story, so a citation can point at its outlet's source line.
SELECT b.story_id, b.category, b.method, b.lang, b.briefing,
       (SELECT jsonb_object_agg(sa.item_id, item_outlet(i.outlet, i.url, i.source_id))
          FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = b.story_id) AS outlets
  FROM story_briefings b
 WHERE b.story_id = ANY(%(story_ids)s)

-- name: publish_candidates
-- Scored stories with an article in [%(since)s, %(until)s) (since NULL = no lower bound), with
-- the counts a feed shows and a hash of their article ids (changes when the story gains one).
-- Articles include duplicates, so every outlet that carried the story is counted; an outlet is
-- item_outlet() (migration 076), so an aggregator's copy of an article counts once with its
-- publisher.
SELECT s.id, sc.significance, es.event_id, s.first_published_at, s.latest_published_at,
       a.articles, a.sources, coalesce(a.langs, '{}'), a.articles_hash
  FROM stories s
  JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN event_stories es ON es.story_id = s.id
  CROSS JOIN LATERAL (
        SELECT count(*) AS articles, count(DISTINCT item_outlet(i.outlet, i.url, i.source_id)) AS sources,
               array_agg(DISTINCT i.lang ORDER BY i.lang) FILTER (WHERE i.lang IS NOT NULL AND i.lang <> 'und') AS langs,
               md5(string_agg(i.id, ',' ORDER BY i.id)) AS articles_hash
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = s.id
       ) a
 WHERE (%(since)s::timestamptz IS NULL OR s.latest_published_at >= %(since)s)
   AND s.first_published_at < %(until)s
   AND sc.significance >= %(min_significance)s
 ORDER BY sc.significance DESC, a.sources DESC, a.articles DESC, s.id

-- name: publish_entries_load
-- What earlier runs published for these stories in this language.
SELECT story_id, entry_id, published_at, updated_at, fingerprint, page_hash
  FROM publish_entries
 WHERE lang = %(lang)s AND story_id = ANY(%(story_ids)s)

-- name: publish_entries_upsert
-- Remember an entry's id and stamps; published_at, entry_id and first_partition never change.
INSERT INTO publish_entries (story_id, lang, entry_id, published_at, updated_at, fingerprint, page_hash,
                             article_count, first_partition, updated_partition)
SELECT * FROM unnest(%(story_ids)s::text[], %(langs)s::text[], %(entry_ids)s::text[], %(published)s::timestamptz[],
                     %(updated)s::timestamptz[], %(fingerprints)s::text[], %(page_hashes)s::text[],
                     %(article_counts)s::int[], %(partitions)s::timestamptz[], %(partitions)s::timestamptz[])
ON CONFLICT (story_id, lang) DO UPDATE
   SET updated_at = EXCLUDED.updated_at, fingerprint = EXCLUDED.fingerprint, page_hash = EXCLUDED.page_hash,
       article_count = EXCLUDED.article_count,
       updated_partition = CASE WHEN publish_entries.fingerprint IS DISTINCT FROM EXCLUDED.fingerprint
                                THEN EXCLUDED.updated_partition ELSE publish_entries.updated_partition END
 WHERE publish_entries.fingerprint IS DISTINCT FROM EXCLUDED.fingerprint
    OR publish_entries.page_hash IS DISTINCT FROM EXCLUDED.page_hash

-- name: publish_event_stories
-- Every scored story of the given events, in timeline order, with its number of outlets
-- (publisher hosts, as publish_candidates counts them).
SELECT es.event_id, es.story_id, s.first_published_at,
       (SELECT count(DISTINCT item_outlet(i.outlet, i.url, i.source_id))
          FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = s.id) AS sources
  FROM event_stories es
  JOIN stories s ON s.id = es.story_id
  JOIN story_scores sc ON sc.story_id = s.id
 WHERE es.event_id = ANY(%(event_ids)s)
 ORDER BY es.event_id, s.first_published_at, es.story_id

-- name: publish_feed_first
-- When each language's feed first published an entry (its feed id is minted from that date):
-- the first hour written, which a later story with an earlier first article cannot move.
SELECT lang, min(first_partition) FROM publish_entries GROUP BY lang

-- name: publish_lock
-- One writer per output directory at a time (session lock: the run commits several times).
SELECT pg_advisory_lock(hashtext('newsdedup.publish:' || %(output_dir)s))

-- name: publish_state_get
-- The newest hour already written into this output directory.
SELECT last_partition FROM publish_state WHERE output_dir = %(output_dir)s

-- name: publish_state_set
-- The newest hour written into this output directory (never moves back).
INSERT INTO publish_state (output_dir, last_partition, written_at)
VALUES (%(output_dir)s, %(partition)s, now())
ON CONFLICT (output_dir) DO UPDATE
   SET last_partition = greatest(publish_state.last_partition, EXCLUDED.last_partition), written_at = now()

-- name: publish_story_sources
-- Every outlet of the given stories with its own article (headline and time). An outlet is
-- item_outlet() (migration 076: the attributed outlet, else the link's publisher host, else the
-- feed), so an aggregator's copy of a Reuters article and Reuters' own item are one outlet: per
-- outlet the publisher's own item first (not a syndicator), canonical before duplicate, earliest;
-- with the feed's own outlet, so that an aggregator's copy is named by its publisher
-- (digest.render.outlet_name).
SELECT story_id, source_name, url, lang, title, published_at, syndicator, outlet, feed_outlet
  FROM (
        SELECT DISTINCT ON (sa.story_id, pub.host)
               sa.story_id, src.name AS source_name, i.url, i.lang, i.title, i.published_at, src.syndicator,
               pub.host AS outlet, item_outlet(NULL, src.feed_url, src.id) AS feed_outlet
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         CROSS JOIN LATERAL (
               SELECT item_outlet(i.outlet, i.url, i.source_id) AS host
              ) pub
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, pub.host, src.syndicator, sa.is_duplicate, i.published_at, i.id
       ) per_outlet
 ORDER BY story_id, published_at, source_name

-- name: publish_unlock
-- Releases publish_lock.
SELECT pg_advisory_unlock(hashtext('newsdedup.publish:' || %(output_dir)s))
