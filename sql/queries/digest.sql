-- name: briefing_translations_shown
-- The finished translations of the given stories' briefings, only those of the briefing's current
-- version (material and lines): what the site and the digest show in a reader's language.
SELECT t.story_id, t.lang, t.lines
  FROM briefing_translations t
  JOIN story_briefings b ON b.story_id = t.story_id AND b.material = t.material
                        AND md5(b.briefing::text) = t.briefing_md5
 WHERE t.story_id = ANY(%(story_ids)s) AND t.status = 0 AND t.lines IS NOT NULL

-- name: digest_active_recipients
-- Active subscribers (outbox-only delivery is refused while there are any, unless intended).
SELECT count(*) FROM subscribers WHERE active

-- name: digest_candidates
-- Scored stories first published on the day [%(start)s, %(end)s), with their event, main
-- region (most common source country over every article, duplicates included) and counts
-- (sources = outlets, item_outlet() of migration 076).
-- A story belongs to the day it broke, so consecutive digests never repeat a story.
SELECT s.id, sc.significance, es.event_id, r.region, coalesce(r.sources, 0), coalesce(r.articles, 0)
  FROM stories s
  JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN event_stories es ON es.story_id = s.id
  LEFT JOIN LATERAL (
        SELECT mode() WITHIN GROUP (ORDER BY src.country) AS region,
               count(DISTINCT item_outlet(i.outlet, i.url, i.source_id)) AS sources, count(*) AS articles
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = s.id
       ) r ON true
 WHERE s.first_published_at >= %(start)s AND s.first_published_at < %(end)s
 ORDER BY sc.significance DESC, s.id

-- name: digest_claim_gate_shared
-- Taken in the claim's own transaction before it reads: a claim in flight holds the gate shared
-- until it commits (claims of two runs share it), so a run counting what is left can wait for it.
-- Key (space, 0): 0 is never a run's token.
SELECT pg_advisory_xact_lock_shared(%(lock_space)s, 0)

-- name: digest_claim_gate_wait
-- Before counting what is left of the day: wait until no claim is in flight. A row another run is
-- claiming at this instant is locked but still reads 'pending'; counted then, it would look
-- outstanding though that run is about to send it. Held until the count's transaction commits.
SELECT pg_advisory_xact_lock(%(lock_space)s, 0)

-- name: digest_claim_lock
-- This run's claimant identity: a session advisory lock (space, token) held while it delivers. It
-- disappears with the session, so a crashed run's claims are recognisably dead.
SELECT pg_try_advisory_lock(%(lock_space)s, %(token)s)

-- name: digest_claim_unlock
-- Releases digest_claim_lock when the run is done delivering.
SELECT pg_advisory_unlock(%(lock_space)s, %(token)s)

-- name: digest_day_editions
-- The rendered digests of a day: which id each (language, edition) has.
SELECT lang, edition, id FROM digests WHERE digest_date = %(day)s

-- name: digest_days_due
-- The days with deliveries waiting for a local delivery time that has come (%(now)s), each with
-- the latest such time: a new one means new readers' editions fell due since the last run.
SELECT digest_date, max(due_at)
  FROM deliveries
 WHERE status = 'pending' AND due_at <= %(now)s
 GROUP BY digest_date
 ORDER BY digest_date

-- name: digest_deliveries_claim
-- Claim up to %(limit)s of the day's due deliveries for this run (token %(token)s): the rows become
-- 'sending' under a lease, so no other run picks them. Due = never tried, failed transiently with
-- attempts left, or 'sending' under a claim that is dead (its session no longer holds the advisory
-- lock (%(lock_space)s, token): the process crashed) or lapsed (claimed_until passed: stuck).
-- SKIP LOCKED: two runs claiming at once take disjoint rows instead of waiting on each other.
-- updated_at < %(pass_started)s: a row this pass already tried is not taken again in the same pass.
-- due_at: a reader's edition waits for their local delivery time (%(now)s: the run's clock).
WITH due AS (
    SELECT d.digest_date, d.subscriber_id,
           d.status = 'sending' AS reclaimed,
           (d.status = 'sending' AND d.handed_over_at IS NOT NULL) AS uncertain
      FROM deliveries d
      JOIN subscribers s ON s.id = d.subscriber_id
     WHERE d.digest_date = %(day)s
       AND s.active
       AND s.subscribed_at < %(day_end)s   -- not a reader who left and joined again after the day
       AND d.digest_id = ANY(%(digest_ids)s::bigint[])
       AND d.updated_at < %(pass_started)s
       AND (d.due_at IS NULL OR d.due_at <= %(now)s)
       AND (d.status = 'pending'
            OR (d.status = 'failed' AND NOT d.permanent AND d.attempts < %(max_attempts)s)
            OR (d.status = 'sending'
                AND (d.claimed_until IS NULL OR d.claimed_until < now()
                     OR NOT EXISTS (SELECT 1 FROM pg_locks l
                                     WHERE l.locktype = 'advisory'
                                       AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                                       AND l.classid = %(lock_space)s::oid
                                       AND l.objid = d.claim_token::oid
                                       AND l.objsubid = 2
                                       AND l.granted))))
     ORDER BY d.subscriber_id
     LIMIT %(limit)s
       FOR UPDATE OF d SKIP LOCKED
)
UPDATE deliveries d
   SET status = 'sending', claim_token = %(token)s,
       claimed_until = now() + make_interval(secs => %(lease_s)s),
       handed_over_at = NULL,
       uncertain_resends = d.uncertain_resends + due.uncertain::int,
       updated_at = now()
  FROM due, subscribers s
 WHERE d.digest_date = due.digest_date AND d.subscriber_id = due.subscriber_id AND s.id = d.subscriber_id
RETURNING d.subscriber_id, s.email, d.lang, d.digest_id, d.attempts, s.unsubscribe_token, due.reclaimed,
          due.uncertain

-- name: digest_deliveries_outstanding
-- Deliveries of the day that a later run still has to do (after this run released its claims):
-- pending, transient failures with attempts left, claims left by a dead or stuck run. Rows claimed by
-- a live run are that run's job. Final rows (sent, outbox, permanent or exhausted failures) never count.
-- Pending rows whose local delivery time has not come (%(now)s) are scheduled, not outstanding.
SELECT count(*) FILTER (WHERE d.status = 'pending' AND (d.due_at IS NULL OR d.due_at <= %(now)s)) AS pending,
       count(*) FILTER (WHERE d.status = 'failed') AS retryable_failed,
       count(*) FILTER (WHERE d.status = 'sending') AS abandoned,
       count(*) FILTER (WHERE d.status = 'pending' AND d.due_at > %(now)s) AS scheduled
  FROM deliveries d
  JOIN subscribers s ON s.id = d.subscriber_id
 WHERE d.digest_date = %(day)s
   AND s.active
   AND s.subscribed_at < %(day_end)s   -- not a reader who left and joined again after the day
   AND d.digest_id = ANY(%(digest_ids)s::bigint[])
   AND (d.status = 'pending'
        OR (d.status = 'failed' AND NOT d.permanent AND d.attempts < %(max_attempts)s)
        OR (d.status = 'sending'
            AND (d.claimed_until IS NULL OR d.claimed_until < now()
                 OR NOT EXISTS (SELECT 1 FROM pg_locks l
                                 WHERE l.locktype = 'advisory'
                                   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                                   AND l.classid = %(lock_space)s::oid
                                   AND l.objid = d.claim_token::oid
                                   AND l.objsubid = 2
                                   AND l.granted))))

-- name: digest_deliveries_seed
-- One delivery row per (day, active subscriber), created once: the row is the idempotency key,
-- so a retried or re-materialised partition never sends twice; a reader's local day gets at most
-- one (deliveries_subscriber_local_day_idx). The caller chose each reader's edition and when it is due.
INSERT INTO deliveries (digest_date, subscriber_id, digest_id, status, email, lang, due_at, local_day)
SELECT %(day)s, u.subscriber_id, u.digest_id, 'pending', u.email, u.lang, u.due_at, u.local_day
  FROM unnest(%(subscriber_ids)s::bigint[], %(digest_ids)s::bigint[], %(emails)s::text[], %(langs)s::text[],
              %(due_at)s::timestamptz[], %(local_days)s::date[])
       AS u(subscriber_id, digest_id, email, lang, due_at, local_day)
ON CONFLICT DO NOTHING

-- name: digest_delivery_counts
-- Delivery status counts for the day (asset metadata).
SELECT status, permanent, count(*) FROM deliveries WHERE digest_date = %(day)s GROUP BY status, permanent

-- name: digest_delivery_handover
-- Committed just before the message goes to the SMTP server, only while this run still holds the
-- claim (no row updated = the claim was taken over: do not send). Renews the lease for this row.
UPDATE deliveries
   SET handed_over_at = clock_timestamp(), email = %(email)s,
       claimed_until = now() + make_interval(secs => %(lease_s)s)
 WHERE digest_date = %(day)s AND subscriber_id = %(subscriber_id)s
   AND status = 'sending' AND claim_token = %(token)s
RETURNING subscriber_id

-- name: digest_delivery_result
-- The outcome of one delivery attempt, written and committed right after the SMTP transaction
-- (so a crash between two recipients cannot cause a resend of the first), and only while this run
-- holds the claim. %(counts)s = 0 when the server was never reached (a connection failure is not
-- the recipient's attempt and must not use up its retries).
UPDATE deliveries
   SET status = %(status)s, attempts = attempts + %(counts)s, error = %(error)s, permanent = %(permanent)s,
       message_id = coalesce(%(message_id)s, message_id), outbox_path = coalesce(%(outbox_path)s, outbox_path),
       email = %(email)s,
       sent_at = CASE WHEN %(status)s IN ('sent', 'outbox') THEN now() ELSE sent_at END,
       handed_over_at = CASE WHEN %(status)s IN ('sent', 'outbox') THEN handed_over_at END,
       claimed_until = NULL,
       updated_at = now()
 WHERE digest_date = %(day)s AND subscriber_id = %(subscriber_id)s
   AND status = 'sending' AND claim_token = %(token)s
RETURNING subscriber_id

-- name: digest_event_translations
-- Finished narrative translations (status 0) of the events of the selected stories.
SELECT event_id, lang, title, narrative
  FROM event_translations
 WHERE event_id = ANY(%(event_ids)s) AND status = 0

-- name: digest_previous_edition
-- The stories and events of the reader's previous edition: the same language and edition, the day before.
SELECT story_ids, event_ids FROM digests WHERE digest_date = %(day)s AND lang = %(lang)s AND edition = %(edition)s

-- name: digest_story_briefings
-- The briefings of the given stories (story_briefings), with what the digest's source line calls
-- each article's outlet (digest.render.outlet_name's inputs, as digest_story_sources gives
-- them), so a key point can name the outlets of the articles it cites.
SELECT b.story_id, b.category, b.method, b.briefing,
       (SELECT jsonb_object_agg(sa.item_id, jsonb_build_array(src.name, src.syndicator,
                                                               item_outlet(i.outlet, i.url, i.source_id),
                                                               item_outlet(NULL, src.feed_url, src.id)))
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = b.story_id) AS outlets
  FROM story_briefings b
 WHERE b.story_id = ANY(%(story_ids)s)

-- name: digest_story_details
-- What the digest shows for the selected stories (language-independent parts) and their events.
SELECT s.id, sc.significance, sc.headline, sc.summary, sc.pivot_lang,
       coalesce(i.title, sc.headline) AS original_title, i.lang AS original_lang, s.first_published_at,
       e.id AS event_id, coalesce(e.narrative_title, e.title) AS event_title, e.narrative, e.narrative_lang,
       coalesce(e.narrative_offline, false), e.story_count, e.first_published_at, e.last_published_at
  FROM stories s
  JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN items i ON i.id = s.representative_item_id
  LEFT JOIN event_stories es ON es.story_id = s.id
  LEFT JOIN events e ON e.id = es.event_id
 WHERE s.id = ANY(%(story_ids)s)

-- name: digest_story_native
-- Per story and language, the story's own best article in that language (canonical before
-- duplicate, original outlet before syndicator, earliest): what a reader of that language sees
-- when no translation exists yet (e.g. offline), instead of a headline in another language.
SELECT DISTINCT ON (sa.story_id, i.lang) sa.story_id, i.lang, i.title, i.summary
  FROM story_articles sa
  JOIN items i ON i.id = sa.item_id
  JOIN sources src ON src.id = i.source_id
 WHERE sa.story_id = ANY(%(story_ids)s) AND i.lang IS NOT NULL AND i.title <> ''
 ORDER BY sa.story_id, i.lang, sa.is_duplicate, src.syndicator, i.published_at, i.id

-- name: digest_story_news
-- What each of the given stories gained since %(since)s (the end of the day of the reader's previous
-- edition): its articles published since (duplicates aside), the outlets whose first article in it came
-- since (with what the digest names an outlet by: digest.render.outlet_name), and the stories of its
-- event first published since.
WITH per_outlet AS (
    SELECT DISTINCT ON (sa.story_id, item_outlet(i.outlet, i.url, i.source_id))
           sa.story_id, i.published_at AS first_at, src.name, src.syndicator,
           item_outlet(i.outlet, i.url, i.source_id) AS outlet, item_outlet(NULL, src.feed_url, src.id) AS feed_outlet
      FROM story_articles sa
      JOIN items i ON i.id = sa.item_id
      JOIN sources src ON src.id = i.source_id
     WHERE sa.story_id = ANY(%(story_ids)s)
     ORDER BY sa.story_id, item_outlet(i.outlet, i.url, i.source_id), i.published_at, src.syndicator, i.id
)
SELECT s.id,
       (SELECT count(*) FROM story_articles sa JOIN items i ON i.id = sa.item_id
         WHERE sa.story_id = s.id AND NOT sa.is_duplicate AND i.published_at >= %(since)s) AS new_articles,
       (SELECT coalesce(json_agg(json_build_array(p.name, p.syndicator, p.outlet, p.feed_outlet) ORDER BY p.first_at),
                        '[]'::json)
          FROM per_outlet p WHERE p.story_id = s.id AND p.first_at >= %(since)s) AS new_outlets,
       (SELECT count(*) FROM event_stories mine
          JOIN event_stories es ON es.event_id = mine.event_id AND es.story_id <> mine.story_id
          JOIN stories o ON o.id = es.story_id
         WHERE mine.story_id = s.id AND o.first_published_at >= %(since)s) AS new_event_stories
  FROM stories s
 WHERE s.id = ANY(%(story_ids)s)

-- name: digest_story_sources
-- One link per outlet per story (item_outlet(), migration 076: an aggregator's copy of a
-- publisher's article is that publisher's), the publisher's own item first, canonical before
-- duplicate, earliest; outlets ordered by when they reported it. With the feed's own outlet, so
-- that an aggregator's copy is named by its publisher (digest.render.outlet_name).
SELECT story_id, source_name, url, lang, count(*) OVER (PARTITION BY story_id) AS total, syndicator, outlet,
       feed_outlet
  FROM (
        SELECT DISTINCT ON (sa.story_id, item_outlet(i.outlet, i.url, i.source_id))
               sa.story_id, src.name AS source_name, i.url, i.lang, i.published_at, src.syndicator,
               item_outlet(i.outlet, i.url, i.source_id) AS outlet,
               item_outlet(NULL, src.feed_url, src.id) AS feed_outlet
          FROM story_articles sa
          JOIN items i ON i.id = sa.item_id
          JOIN sources src ON src.id = i.source_id
         WHERE sa.story_id = ANY(%(story_ids)s)
         ORDER BY sa.story_id, item_outlet(i.outlet, i.url, i.source_id), src.syndicator, sa.is_duplicate,
                  i.published_at, i.id
       ) per_outlet
 ORDER BY story_id, published_at, source_name

-- name: digest_story_translations
-- Finished story translations (status 0) of the selected stories.
SELECT story_id, lang, headline, summary
  FROM story_translations
 WHERE story_id = ANY(%(story_ids)s) AND status = 0 AND headline IS NOT NULL

-- name: digest_subscriber_editions
-- The editions active readers chose besides the plain one per language (stages/digest/editions.py):
-- each distinct combination of languages, categories and countries is rendered once.
SELECT DISTINCT lang, also_reads, categories, countries
  FROM subscribers
 WHERE active AND (also_reads <> '{}' OR categories <> '{}' OR countries <> '{}')
 ORDER BY 1, 2, 3, 4

-- name: digest_subscriber_langs
-- Languages active subscribers asked for (each gets a rendered digest).
SELECT DISTINCT lang FROM subscribers WHERE active ORDER BY lang

-- name: digest_subscribers_of_day
-- The readers a day goes to (subscribed by its end, %(day_end)s) with their choices.
SELECT id, email, lang, also_reads, categories, countries, delivery_time, time_zone
  FROM subscribers
 WHERE active AND subscribed_at < %(day_end)s
 ORDER BY id

-- name: digest_upsert
-- One rendered digest per (day, language, edition); a rerun replaces it and keeps its id (deliveries
-- point at it).
INSERT INTO digests (digest_date, lang, edition, subject, html, text_body, story_ids, event_ids, outbox_path,
                     text_path)
VALUES (%(day)s, %(lang)s, %(edition)s, %(subject)s, %(html)s, %(text)s, %(story_ids)s, %(event_ids)s,
        %(html_path)s, %(text_path)s)
ON CONFLICT (digest_date, lang, edition) DO UPDATE
   SET subject = EXCLUDED.subject, html = EXCLUDED.html, text_body = EXCLUDED.text_body,
       story_ids = EXCLUDED.story_ids, event_ids = EXCLUDED.event_ids,
       outbox_path = EXCLUDED.outbox_path, text_path = EXCLUDED.text_path, updated_at = now()
RETURNING id

-- name: server_clock
-- The server's clock now (clock_timestamp, not the transaction's start).
SELECT clock_timestamp()

-- name: story_categories
-- The briefing category of each of the given stories that has a briefing.
SELECT story_id, category FROM story_briefings WHERE story_id = ANY(%(story_ids)s)
