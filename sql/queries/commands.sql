-- name: db_migration_versions
-- The applied migrations' versions (`newsdedup doctor` and `status`).
SELECT version FROM schema_migrations ORDER BY version

-- name: demo_article_counts
-- The demo's line about article pages: rows by status, and the words kept.
SELECT count(*) FILTER (WHERE attempts > 0), count(*) FILTER (WHERE status = 'ok'),
       count(*) FILTER (WHERE status = 'failed'), coalesce(sum(word_count) FILTER (WHERE status = 'ok'), 0)
  FROM article_texts

-- name: demo_briefing_counts
-- The demo's line about briefings: stories briefed, with key points, with quotes, points and
-- quotes published, lines the checks dropped, with players, players named.
SELECT count(*),
       count(*) FILTER (WHERE jsonb_array_length(briefing -> 'points') > 0),
       count(*) FILTER (WHERE jsonb_array_length(briefing -> 'quotes') > 0),
       coalesce(sum(jsonb_array_length(briefing -> 'points')), 0),
       coalesce(sum(jsonb_array_length(briefing -> 'quotes')), 0),
       coalesce(sum((SELECT sum(value::int) FROM jsonb_each_text(dropped))), 0),
       count(*) FILTER (WHERE jsonb_array_length(coalesce(briefing -> 'players', '[]')) > 0),
       coalesce(sum(jsonb_array_length(coalesce(briefing -> 'players', '[]'))), 0)
  FROM story_briefings

-- name: demo_event_of_items
-- The event of each gold-labelled item's story, else the story (the demo's gold line for events).
SELECT sa.item_id, coalesce(es.event_id, sa.story_id)
  FROM story_articles sa
  LEFT JOIN event_stories es ON es.story_id = sa.story_id
 WHERE sa.item_id = ANY(%s)

-- name: demo_hour_counts
-- One demo hour's progress line: what each stage wrote for the hour %(h)s.
SELECT
  (SELECT count(*) FROM items WHERE partition_hour = %(h)s),
  (SELECT count(*) FROM item_duplicates WHERE partition_hour = %(h)s),
  (SELECT count(*) FROM item_embeddings WHERE partition_hour = %(h)s),
  (SELECT count(*) FROM story_items WHERE partition_hour = %(h)s AND pass <> 2),
  (SELECT count(*) FROM stories WHERE created_partition = %(h)s),
  (SELECT count(*) FROM feed_fetches WHERE partition_hour = %(h)s AND status = 'error')

-- name: demo_sample_deliveries
-- Where the demo's sample readers' editions of the day went.
SELECT d.email, d.status, d.due_at, d.local_day, d.outbox_path, g.edition, cardinality(g.story_ids)
  FROM deliveries d
  LEFT JOIN digests g ON g.id = d.digest_id
 WHERE d.digest_date = %(day)s AND d.email = ANY(%(emails)s)
 ORDER BY d.due_at, d.email

-- name: demo_sample_reader
-- One of the demo's sample readers (commands/demo_readers.py), subscribed from the start of the
-- sample day so that day's edition is theirs; run again, the same reader with the same choices.
INSERT INTO subscribers (email, lang, also_reads, categories, countries, delivery_time, time_zone, subscribed_at)
VALUES (%(email)s, %(lang)s, %(also_reads)s, %(categories)s, %(countries)s, %(delivery_time)s, %(time_zone)s,
        %(subscribed_at)s)
ON CONFLICT (email) DO UPDATE
   SET lang = EXCLUDED.lang, also_reads = EXCLUDED.also_reads, categories = EXCLUDED.categories,
       countries = EXCLUDED.countries, delivery_time = EXCLUDED.delivery_time, time_zone = EXCLUDED.time_zone,
       active = true, subscribed_at = least(subscribers.subscribed_at, EXCLUDED.subscribed_at)

-- name: demo_stories
-- The demo's story list: articles, outlets, languages and headline of every story.
SELECT s.id, count(*) AS articles,
       count(DISTINCT item_outlet(i.outlet, i.url, i.source_id)) AS sources,
       array_agg(DISTINCT i.lang ORDER BY i.lang) AS langs,
       -- The scored headline is in the pivot language when the story has such an article
       -- (or was rewritten by a model), so both lists of the demo read in one language.
       coalesce(nullif(sc.headline, ''),
                (SELECT title FROM items WHERE id = s.representative_item_id)) AS headline
  FROM stories s
  JOIN story_articles a ON a.story_id = s.id
  JOIN items i ON i.id = a.item_id
  LEFT JOIN story_scores sc ON sc.story_id = s.id
 GROUP BY s.id, sc.headline
 ORDER BY count(DISTINCT i.lang) DESC, count(*) DESC, s.id

-- name: demo_story_of_items
-- The story of each gold-labelled item (the demo's gold line).
SELECT item_id, story_id FROM story_articles WHERE item_id = ANY(%s)

-- name: digest_day_rendered
-- The rendered digests of a day, every language and edition, as delivery takes them.
SELECT id, subject, html, text_body FROM digests WHERE digest_date = %(day)s

-- name: digest_subscriber_add
-- Add or reactivate a subscriber with their choices (stages/digest/editions.py). A removed reader added
-- again starts a new subscription: a new subscription time and a new unsubscribe token (links in the
-- mails of the old subscription no longer work).
INSERT INTO subscribers (email, lang, also_reads, categories, countries, delivery_time, time_zone, active)
VALUES (%(email)s, %(lang)s, %(also_reads)s, %(categories)s, %(countries)s, %(delivery_time)s, %(time_zone)s, true)
ON CONFLICT (email) DO UPDATE
   SET lang = EXCLUDED.lang, also_reads = EXCLUDED.also_reads, categories = EXCLUDED.categories,
       countries = EXCLUDED.countries, delivery_time = EXCLUDED.delivery_time, time_zone = EXCLUDED.time_zone,
       active = true,
       subscribed_at = CASE WHEN subscribers.active THEN subscribers.subscribed_at ELSE now() END,
       unsubscribed_at = NULL,
       unsubscribe_token = CASE WHEN subscribers.active THEN subscribers.unsubscribe_token
                                ELSE EXCLUDED.unsubscribe_token END
RETURNING id, (xmax = 0) AS inserted

-- name: digest_subscriber_list
-- Subscribers for `newsdedup subscribers list` (inactive ones too on request), with their last delivery.
SELECT s.id, s.email, s.lang, s.active, s.created_at,
       (SELECT max(d.sent_at) FROM deliveries d WHERE d.subscriber_id = s.id) AS last_delivery,
       s.also_reads, s.categories, s.countries, s.delivery_time, s.time_zone
  FROM subscribers s
 WHERE s.active OR %(include_inactive)s
 ORDER BY s.email

-- name: digest_subscriber_remove
-- Deactivate a subscriber: the delivery log keeps its history.
UPDATE subscribers SET active = false, unsubscribed_at = now() WHERE email = %(email)s AND active RETURNING id

-- name: digest_subscriber_unsubscribe_token
-- Deactivate the subscriber whose unsubscribe link carries %(token)s. Idempotent (a one-click
-- unsubscribe may be posted twice): an already removed reader is returned with was_active false.
-- The token of a removed reader stays valid until the reader subscribes again.
WITH target AS (
    SELECT id, active FROM subscribers WHERE unsubscribe_token = %(token)s FOR UPDATE
), removed AS (
    UPDATE subscribers s SET active = false, unsubscribed_at = now()
      FROM target t WHERE s.id = t.id AND t.active
    RETURNING s.id
)
SELECT t.id, t.active AS was_active FROM target t

-- name: digest_subscriber_update
-- Change some of an active subscriber's choices; a NULL parameter leaves that choice as it is.
UPDATE subscribers
   SET lang = coalesce(%(lang)s, lang), also_reads = coalesce(%(also_reads)s, also_reads),
       categories = coalesce(%(categories)s, categories), countries = coalesce(%(countries)s, countries),
       delivery_time = coalesce(%(delivery_time)s, delivery_time), time_zone = coalesce(%(time_zone)s, time_zone)
 WHERE email = %(email)s AND active
RETURNING id, lang, also_reads, categories, countries, delivery_time, time_zone

-- name: event_vetoes_of
-- The joins the events stage refused for a story, or for an event (`newsdedup explain`).
SELECT partition_hour, story_id, event_id, similarity, kinds, story_anchors, event_anchors
  FROM event_vetoes
 WHERE story_id = %(id)s OR event_id = %(id)s
 ORDER BY partition_hour, story_id, event_id

-- name: ingest_fetches_since
-- How many sources of an hour were fetched (or re-read from the archive) since a moment: progress
-- of `newsdedup ingest`.
SELECT count(DISTINCT source_id)
  FROM feed_fetches
 WHERE partition_hour = %(hour)s AND fetched_at >= %(since)s

-- name: platform_hours
-- Hours each stage has reached, for `newsdedup db status`: fetched (the feed archive) and
-- clustered (items placed in stories), as partition keys in UTC.
SELECT 'fetched' AS stage, count(DISTINCT partition_hour),
       to_char(min(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00'),
       to_char(max(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00')
  FROM feed_fetches
UNION ALL
SELECT 'clustered', count(DISTINCT partition_hour),
       to_char(min(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00'),
       to_char(max(partition_hour) AT TIME ZONE 'UTC', 'YYYY-MM-DD-HH24:00')
  FROM story_items

-- name: platform_table_rows
-- The row count of one table of `newsdedup status` (its name filled by psycopg.sql).
SELECT count(*) FROM {}

-- name: reembed_hours
-- The first and last hour that hold items: the range a re-embedding's backfill covers.
SELECT min(partition_hour), max(partition_hour) FROM items

-- name: server_version_number
-- The server's version number (`newsdedup doctor`).
SHOW server_version

-- name: server_version_string
-- The server's version line (`newsdedup status`).
SELECT version()
