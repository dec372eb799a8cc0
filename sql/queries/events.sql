-- name: event_candidates
-- Stories new or changed in partition hour %(hour)s (they gained items in it, or the stories
-- stage updated them in it), with score and current event. No vectors leave the database.
SELECT s.id, s.model, s.first_published_at, s.latest_published_at, sc.significance, es.event_id
  FROM stories s
  LEFT JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN event_stories es ON es.story_id = s.id
 WHERE s.id IN (SELECT si.story_id FROM story_items si WHERE si.partition_hour = %(hour)s
                UNION
                SELECT s2.id FROM stories s2 WHERE s2.updated_partition = %(hour)s)
 ORDER BY s.first_published_at, s.id

-- name: event_close
-- Close events whose quiet period (or maximum span) has passed as of the end of hour %(hour)s.
UPDATE events
   SET status = 'closed', closed_at = %(now)s, closed_partition = %(hour)s, updated_at = now()
 WHERE id = ANY(%(event_ids)s) AND status = 'open'
RETURNING id

-- name: event_delete_orphans
-- Events left without stories after a rerun undid their memberships.
DELETE FROM events e
 WHERE e.id = ANY(%(event_ids)s)
   AND NOT EXISTS (SELECT 1 FROM event_stories es WHERE es.event_id = e.id)
RETURNING e.id

-- name: event_ids_existing
-- Which of these ids are events.
SELECT id FROM events WHERE id = ANY(%s)

-- name: event_insert_memberships
-- Memberships decided in partition hour %(hour)s. The primary key on story_id is the
-- invariant "a story belongs to at most one event".
INSERT INTO event_stories (story_id, event_id, similarity, partition_hour)
SELECT m.story_id, m.event_id, m.similarity, %(hour)s
  FROM unnest(%(story_ids)s::text[], %(event_ids)s::text[], %(similarities)s::real[])
       AS m(story_id, event_id, similarity)
ON CONFLICT (story_id) DO NOTHING

-- name: event_insert_new
-- New events founded in partition hour %(hour)s, one per founding story; aggregates are
-- recomputed right after by event_refresh. A rerun finds the same id and keeps the narrative.
INSERT INTO events (id, model, title, centroid, first_published_at, last_published_at,
                    created_partition, updated_partition, quiet_hours, story_count)
SELECT n.event_id, s.model, coalesce(sc.headline, i.title, s.id), s.centroid,
       s.first_published_at, s.latest_published_at, %(hour)s, %(hour)s, %(quiet_hours)s, 1
  FROM unnest(%(event_ids)s::text[], %(story_ids)s::text[]) AS n(event_id, story_id)
  JOIN stories s ON s.id = n.story_id
  LEFT JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN items i ON i.id = s.representative_item_id
ON CONFLICT (id) DO UPDATE
   SET status = 'open', closed_at = NULL, closed_partition = NULL,
       created_partition = LEAST(events.created_partition, EXCLUDED.created_partition),
       quiet_hours = EXCLUDED.quiet_hours, updated_at = now()

-- name: event_languages
-- The languages of the articles of these stories, and of these events' stories (the events
-- stage's cross-language threshold, stages/events/grouping.py rule 3).
SELECT si.story_id AS id, array_agg(DISTINCT i.lang) FILTER (WHERE i.lang IS NOT NULL)
  FROM story_items si
  JOIN items i ON i.id = si.item_id
 WHERE si.story_id = ANY(%(story_ids)s)
 GROUP BY si.story_id
UNION ALL
SELECT es.event_id AS id, array_agg(DISTINCT i.lang) FILTER (WHERE i.lang IS NOT NULL)
  FROM event_stories es
  JOIN story_items si ON si.story_id = es.story_id
  JOIN items i ON i.id = si.item_id
 WHERE es.event_id = ANY(%(event_ids)s)
 GROUP BY es.event_id

-- name: event_multi_membership
-- Stories listed in more than one event (the primary key forbids it; the check proves it).
SELECT story_id, count(DISTINCT event_id) AS events
  FROM event_stories GROUP BY story_id HAVING count(DISTINCT event_id) > 1
 ORDER BY story_id LIMIT 20

-- name: event_narrative_due
-- Events whose stories changed since their narrative (needs_narrative = 1), most significant
-- first; the interval rule is applied in Python (narrative.due_for_regeneration).
SELECT e.id, coalesce(e.narrative_title, e.title), e.needs_narrative, e.narrative_partition, e.narrative,
       e.narrative_attempts, coalesce(e.narrative_offline, false)
  FROM events e
 WHERE e.needs_narrative = 1
 ORDER BY e.significance DESC NULLS LAST, e.last_published_at DESC, e.id
 LIMIT %(limit)s

-- name: event_narrative_failed
-- An LLM narrative failure: 1 = retry on a later run, -1 = permanent (never retried automatically).
UPDATE events
   SET needs_narrative = %(status)s, narrative_attempts = %(attempts)s, narrative_error = %(error)s, updated_at = now()
 WHERE id = %(event_id)s

-- name: event_narrative_store
-- A freshly generated narrative. needs_narrative stays 1 if the event gained stories meanwhile.
UPDATE events
   SET narrative = %(narrative)s,
       narrative_lang = %(lang)s,
       narrative_model = %(model)s,
       narrative_offline = %(offline)s,
       narrative_title = CASE WHEN %(offline)s THEN NULL ELSE coalesce(%(llm_title)s, narrative_title) END,
       narrative_generated_at = clock_timestamp(),
       narrative_partition = %(hour)s,
       narrative_story_count = %(story_count)s,
       needs_narrative = CASE WHEN story_count = %(story_count)s THEN 0 ELSE 1 END,
       narrative_attempts = 0,
       narrative_error = NULL,
       updated_at = now()
 WHERE id = %(event_id)s

-- name: event_narrative_timeline
-- The stories of the given events in time order, with what a narrative needs (no vectors):
-- headline/summary (scored, else the representative's title), their language, significance,
-- number of distinct sources and the languages of every article (duplicates included).
SELECT es.event_id, s.id, s.first_published_at,
       coalesce(sc.headline, i.title) AS headline,
       coalesce(sc.summary, i.summary, '') AS summary,
       CASE WHEN sc.pivot_lang IS NULL OR sc.pivot_lang = 'und' THEN i.lang ELSE sc.pivot_lang END AS lang,
       sc.significance,
       a.sources, a.langs
  FROM event_stories es
  JOIN stories s ON s.id = es.story_id
  LEFT JOIN story_scores sc ON sc.story_id = s.id
  LEFT JOIN items i ON i.id = s.representative_item_id
  LEFT JOIN LATERAL (
        SELECT count(DISTINCT ai.source_id) AS sources,
               array_agg(DISTINCT ai.lang ORDER BY ai.lang) FILTER (WHERE ai.lang IS NOT NULL) AS langs
          FROM story_articles sa JOIN items ai ON ai.id = sa.item_id
         WHERE sa.story_id = s.id
       ) a ON true
 WHERE es.event_id = ANY(%(event_ids)s)
 ORDER BY es.event_id, s.first_published_at, s.id

-- name: event_open
-- Events open as of partition hour %(hour)s: created no later than it, not closed before it
-- (a rerun of an old hour does not see events founded or closed by later hours as such), and
-- with at least one story (an event emptied by a rerun is re-founded under the same id).
SELECT e.id, e.first_published_at, e.last_published_at
  FROM events e
 WHERE e.created_partition <= %(hour)s
   AND (e.status = 'open' OR e.closed_partition > %(hour)s)
   AND EXISTS (SELECT 1 FROM event_stories es WHERE es.event_id = e.id)
 ORDER BY e.id

-- name: event_refresh
-- Recompute the aggregates of the given events from their member stories, in SQL:
-- centroid = avg of story centroids, time window, count, significance (max), title (headline
-- of the most significant story), and flag the narrative when the story count changed.
WITH members AS (
    SELECT es.event_id, s.id AS story_id, s.centroid, s.first_published_at, s.latest_published_at,
           s.item_count, sc.significance, coalesce(sc.headline, i.title) AS headline
      FROM event_stories es
      JOIN stories s ON s.id = es.story_id
      LEFT JOIN story_scores sc ON sc.story_id = s.id
      LEFT JOIN items i ON i.id = s.representative_item_id
     WHERE es.event_id = ANY(%(event_ids)s)
), agg AS (
    SELECT event_id, avg(centroid) AS centroid, min(first_published_at) AS first_published_at,
           max(latest_published_at) AS last_published_at, count(*) AS story_count,
           max(significance) AS significance
      FROM members GROUP BY event_id
), top AS (
    SELECT DISTINCT ON (event_id) event_id, headline
      FROM members
     ORDER BY event_id, significance DESC NULLS LAST, item_count DESC, first_published_at, story_id
)
UPDATE events e
   SET centroid = agg.centroid,
       first_published_at = agg.first_published_at,
       last_published_at = agg.last_published_at,
       story_count = agg.story_count,
       significance = agg.significance,
       title = coalesce(top.headline, e.title),
       updated_partition = GREATEST(e.updated_partition, %(hour)s),
       needs_narrative = CASE WHEN e.needs_narrative = -1 THEN -1
                              WHEN agg.story_count <> e.narrative_story_count THEN 1
                              ELSE e.needs_narrative END,
       updated_at = now()
  FROM agg LEFT JOIN top USING (event_id)
 WHERE e.id = agg.event_id

-- name: event_reopen
-- Rerun of partition hour %(hour)s: reopen the events it closed (closing is re-decided).
UPDATE events
   SET status = 'open', closed_at = NULL, closed_partition = NULL, updated_at = now()
 WHERE closed_partition = %(hour)s
RETURNING id

-- name: event_stale
-- Events whose stored story_count no longer matches their memberships (a stories rerun
-- deleted member stories by cascade, or a rerun of this hour undid memberships): refreshed
-- before grouping, deleted if left without stories.
-- Also events with a member story that changed in this hour (its centroid moved): a first run and
-- a rerun of the hour must compare stories with the same event centroids.
SELECT e.id
  FROM events e
  LEFT JOIN (SELECT event_id, count(*) AS n FROM event_stories GROUP BY event_id) c ON c.event_id = e.id
 WHERE coalesce(c.n, 0) <> e.story_count
    OR EXISTS (SELECT 1 FROM event_stories es JOIN stories s ON s.id = es.story_id
                WHERE es.event_id = e.id AND s.updated_partition = %(hour)s)
 ORDER BY e.id

-- name: event_story_event_similarity
-- Cosine similarity of each candidate story centroid to the nearest open events' centroids
-- (event centroid = average of its stories' centroids). Exact scan: open events are few.
-- The time prefilter mirrors grouping.interval_gap_hours <= %(gap_hours)s; the CASE keeps
-- `<=>` away from vectors of another embedding model (different dimension).
SELECT s.id AS story_id, m.event_id, m.similarity
  FROM stories s
 CROSS JOIN LATERAL (
        SELECT e.id AS event_id,
               1 - (e.centroid <=> s.centroid) AS similarity
          FROM events e
         WHERE e.id = ANY(%(event_ids)s)
           AND e.model = s.model
           AND e.last_published_at >= s.first_published_at - make_interval(secs => %(gap_hours)s * 3600)
           AND e.first_published_at <= s.latest_published_at + make_interval(secs => %(gap_hours)s * 3600)
         ORDER BY CASE WHEN e.model = s.model THEN e.centroid <=> s.centroid END, e.id
         LIMIT %(k)s
       ) m
 WHERE s.id = ANY(%(story_ids)s)
   AND m.similarity >= %(threshold)s
 ORDER BY s.id, m.event_id

-- name: event_story_members
-- The stories of these events (their anchors are what a joining story is checked against).
SELECT event_id, story_id FROM event_stories WHERE event_id = ANY(%(event_ids)s) ORDER BY event_id, story_id

-- name: event_story_pairs
-- Pairwise cosine between this hour's candidate stories (for events founded within the hour).
SELECT a.id, b.id, p.similarity
  FROM stories a
  JOIN stories b ON a.id < b.id AND b.model = a.model
 CROSS JOIN LATERAL (
        SELECT CASE WHEN a.model = b.model THEN 1 - (a.centroid <=> b.centroid) END AS similarity
       ) p
 WHERE a.id = ANY(%(story_ids)s)
   AND b.id = ANY(%(story_ids)s)
   AND p.similarity >= %(threshold)s
 ORDER BY a.id, b.id

-- name: event_summary
-- One row per given event for the asset's metadata table: title, days covered, stories,
-- languages of every article (duplicates included, via story_articles).
SELECT e.id, coalesce(e.narrative_title, e.title) AS title, e.status, e.story_count, e.significance,
       e.first_published_at, e.last_published_at,
       (e.last_published_at::date - e.first_published_at::date) + 1 AS days,
       coalesce(l.langs, '{}') AS langs,
       e.narrative_offline
  FROM events e
  LEFT JOIN LATERAL (
        SELECT array_agg(DISTINCT coalesce(i.lang, '?') ORDER BY coalesce(i.lang, '?')) AS langs
          FROM event_stories es
          JOIN story_articles sa ON sa.story_id = es.story_id
          JOIN items i ON i.id = sa.item_id
         WHERE es.event_id = e.id
       ) l ON true
 WHERE e.id = ANY(%(event_ids)s)
 ORDER BY e.significance DESC NULLS LAST, e.story_count DESC, e.id
 LIMIT %(limit)s

-- name: event_timeline
-- The timelines of the given events (no vectors): for the asset checks and narratives.
SELECT es.event_id, es.story_id, es.timeline_position, s.first_published_at, s.latest_published_at,
       e.quiet_hours
  FROM event_stories es
  JOIN stories s ON s.id = es.story_id
  JOIN events e ON e.id = es.event_id
 WHERE es.event_id = ANY(%(event_ids)s)
 ORDER BY es.event_id, es.timeline_position NULLS LAST, es.story_id

-- name: event_timeline_positions
-- Timeline order of each given event: 1 = earliest story (first_published_at, then id).
UPDATE event_stories es
   SET timeline_position = r.position
  FROM (SELECT es2.story_id,
               row_number() OVER (PARTITION BY es2.event_id ORDER BY s.first_published_at, s.id) AS position
          FROM event_stories es2
          JOIN stories s ON s.id = es2.story_id
         WHERE es2.event_id = ANY(%(event_ids)s)) r
 WHERE es.story_id = r.story_id
   AND es.timeline_position IS DISTINCT FROM r.position

-- name: event_translation_failed
-- A failed translation batch: status 1 (retry later) or -1 (permanent), attempts counted.
UPDATE event_translations t
   SET status = %(status)s, attempts = t.attempts + %(attempts)s, error = %(error)s, updated_at = now()
  FROM events e
 WHERE t.event_id = %(event_id)s AND t.lang = ANY(%(langs)s) AND t.status = 1
   AND e.id = t.event_id AND e.narrative_generated_at = %(generated_at)s

-- name: event_translation_store
-- One translated language of a narrative; ignored if the narrative was regenerated meanwhile.
UPDATE event_translations t
   SET title = %(title)s, narrative = %(narrative)s, status = 0, model = %(model)s,
       attempts = t.attempts + %(attempts)s, error = NULL, updated_at = now()
  FROM events e
 WHERE t.event_id = %(event_id)s AND t.lang = %(lang)s AND t.status = 1
   AND e.id = t.event_id AND e.narrative_generated_at = %(generated_at)s

-- name: event_translations_pending
-- Narrative translations to do (status 1) for the most significant events with work pending.
WITH top AS (
    SELECT e.id
      FROM events e
     WHERE e.narrative IS NOT NULL
       AND NOT coalesce(e.narrative_offline, false)
       AND EXISTS (SELECT 1 FROM event_translations t WHERE t.event_id = e.id AND t.status = 1)
     ORDER BY e.significance DESC NULLS LAST, e.id
     LIMIT %(limit_events)s
)
SELECT t.event_id, t.lang, t.attempts, coalesce(e.narrative_title, e.title), e.narrative, e.narrative_lang,
       e.narrative_generated_at
  FROM event_translations t
  JOIN top ON top.id = t.event_id
  JOIN events e ON e.id = t.event_id
 WHERE t.status = 1
 ORDER BY e.significance DESC NULLS LAST, t.event_id, t.lang

-- name: event_translations_reset
-- A new narrative: every target language starts over (1 = to translate, 2 = skipped offline).
INSERT INTO event_translations (event_id, lang, status, attempts)
SELECT %(event_id)s, l, %(status)s, 0 FROM unnest(%(langs)s::text[]) AS l
ON CONFLICT (event_id, lang) DO UPDATE
   SET status = EXCLUDED.status, attempts = 0, error = NULL, title = NULL, narrative = NULL, model = NULL,
       updated_at = now()

-- name: event_undo_memberships
-- Rerun of partition hour %(hour)s: forget the memberships it wrote (they are recomputed).
DELETE FROM event_stories WHERE partition_hour = %(hour)s RETURNING event_id

-- name: event_vetoes_insert
-- The joins this hour's anchor check refused (stages/events/store.py), one row per (story, event).
INSERT INTO event_vetoes (partition_hour, story_id, event_id, similarity, kinds, story_anchors, event_anchors)
SELECT %(hour)s, v.story_id, v.event_id, v.similarity, v.kinds, v.story_anchors, v.event_anchors
  FROM jsonb_to_recordset(%(rows)s::jsonb)
       AS v(story_id text, event_id text, similarity real, kinds jsonb, story_anchors jsonb, event_anchors jsonb)
ON CONFLICT (partition_hour, story_id, event_id) DO UPDATE
   SET similarity = EXCLUDED.similarity, kinds = EXCLUDED.kinds,
       story_anchors = EXCLUDED.story_anchors, event_anchors = EXCLUDED.event_anchors

-- name: event_vetoes_undo
-- Undo a previous run of this hour: the joins its anchor check refused are decided again.
DELETE FROM event_vetoes WHERE partition_hour = %(hour)s

-- name: event_waiting_pairs
-- Cosine between waiting stories (no event, earlier hours) and this hour's candidate stories
-- without an event: what a waiting story's similarity to an event founded this hour is made of.
SELECT w.id, c.id, p.similarity
  FROM stories w
  JOIN stories c ON c.model = w.model
 CROSS JOIN LATERAL (
        SELECT CASE WHEN w.model = c.model THEN 1 - (w.centroid <=> c.centroid) END AS similarity
       ) p
 WHERE w.id = ANY(%(waiting_ids)s)
   AND c.id = ANY(%(story_ids)s)
   AND p.similarity >= %(threshold)s
 ORDER BY w.id, c.id

-- name: event_waiting_stories
-- Stories without an event whose articles reach into the join gap before partition hour %(hour)s
-- and that are not this hour's candidates: they may join an event founded in this hour
-- (stages/events/grouping.py rule 5). Oldest first, as the rules process stories.
SELECT s.id, s.first_published_at, s.latest_published_at, sc.significance
  FROM stories s
  LEFT JOIN story_scores sc ON sc.story_id = s.id
 WHERE NOT EXISTS (SELECT 1 FROM event_stories es WHERE es.story_id = s.id)
   AND s.latest_published_at >= %(hour)s - make_interval(secs => %(gap_hours)s * 3600)
   AND s.first_published_at < %(hour)s + interval '1 hour'
   AND NOT (s.id = ANY(%(candidate_ids)s))
 ORDER BY s.first_published_at, s.id
