-- name: briefing_translation_fail
-- A failed batch of a briefing's lines: -1 (permanent) or still 1 with its attempts counted.
UPDATE briefing_translations t
   SET status = %(status)s, attempts = t.attempts + %(attempts)s, model = %(model)s, error = %(error)s,
       updated_at = now()
 WHERE t.story_id = %(story_id)s AND t.lang = ANY(%(langs)s) AND t.status = 1
   AND t.material = %(material)s AND t.briefing_md5 = %(briefing_md5)s

-- name: briefing_translation_save
-- One batch (2 languages) of a briefing's lines done. The version guard drops a result whose
-- briefing was replaced while the call was in flight (its rows are reset for the new one).
UPDATE briefing_translations t
   SET lines = v.lines::jsonb, status = 0, attempts = t.attempts + %(attempts)s, model = %(model)s,
       error = NULL, updated_at = now()
  FROM unnest(%(langs)s::text[], %(lines)s::text[]) AS v(lang, lines)
 WHERE t.story_id = %(story_id)s AND t.lang = v.lang AND t.status = 1
   AND t.material = %(material)s AND t.briefing_md5 = %(briefing_md5)s
   AND EXISTS (SELECT 1 FROM story_briefings b
                WHERE b.story_id = t.story_id AND b.material = t.material AND md5(b.briefing::text) = t.briefing_md5)

-- name: briefing_translation_status
-- Translation states of the briefings written in partition H (their current version), per status.
SELECT t.status, count(*) AS n
  FROM briefing_translations t
  JOIN story_briefings b ON b.story_id = t.story_id AND b.material = t.material
                        AND md5(b.briefing::text) = t.briefing_md5
 WHERE b.partition_hour = %(hour)s
 GROUP BY t.status
 ORDER BY t.status

-- name: briefing_translations_pending
-- Briefing translation work for partition H: rows still at status 1 whose briefing is still the
-- version they were made for (briefed in H or earlier), most significant stories first.
SELECT t.story_id, t.lang, t.attempts, b.briefing, b.lang, t.material, t.briefing_md5
  FROM briefing_translations t
  JOIN story_briefings b ON b.story_id = t.story_id AND b.material = t.material
                        AND md5(b.briefing::text) = t.briefing_md5
  LEFT JOIN story_scores sc ON sc.story_id = t.story_id
 WHERE t.status = 1 AND b.partition_hour <= %(hour)s
 ORDER BY sc.significance DESC NULLS LAST, t.story_id, t.lang
 LIMIT %(limit)s

-- name: briefing_translations_sync
-- The briefings written in (%(since)s, %(hour)s] get one row per published language other than
-- their own, for their current version: a new briefing, or a re-briefed story (new material or new
-- lines), resets its rows to %(status)s (1 needs translation online, 2 skipped offline) with no
-- lines, so an old translation is neither shown nor kept. Rows pending or skipped in the other mode
-- are switched to this one (offline: skipped; online again: translated). Done and failed rows of
-- the same version stay, and are not even locked: the anti-join leaves them out before the upsert.
INSERT INTO briefing_translations (story_id, lang, material, briefing_md5, lines, status, attempts, model, error,
                                   updated_at)
SELECT b.story_id, l.lang, b.material, md5(b.briefing::text), NULL, %(status)s, 0, NULL, %(error)s, now()
  FROM story_briefings b
 CROSS JOIN unnest(%(langs)s::text[]) AS l(lang)
 WHERE b.partition_hour > %(since)s AND b.partition_hour <= %(hour)s
   AND l.lang IS DISTINCT FROM b.lang
   AND NOT EXISTS (SELECT 1 FROM briefing_translations t
                    WHERE t.story_id = b.story_id AND t.lang = l.lang
                      AND t.material = b.material AND t.briefing_md5 = md5(b.briefing::text)
                      AND t.status IN (0, -1, %(status)s))
ON CONFLICT (story_id, lang) DO UPDATE SET
    material = excluded.material, briefing_md5 = excluded.briefing_md5, lines = NULL, status = excluded.status,
    attempts = 0, model = NULL, error = excluded.error, updated_at = now()

-- name: llm_hour_stored
-- The figures stored for partition H: stories whose score and briefing it wrote (what a rerun of
-- the hour that changes nothing reports, instead of zeros).
SELECT (SELECT count(*) FROM story_scores WHERE partition_hour = %(hour)s) AS scored,
       (SELECT count(*) FROM story_briefings WHERE partition_hour = %(hour)s) AS briefed

-- name: llm_mark_rescore
-- Stories touched in partition H that must be (re)scored: grew "substantially" since their last
-- score or permanent failure (same rule as stages/llm/scoring.py: needs_rescore), or, when an endpoint is
-- configured, carry only an offline-heuristic score. New stories are already needs_score = 1.
UPDATE stories s
   SET needs_score = 1, score_attempts = 0, score_error = NULL
 WHERE s.updated_partition = %(hour)s
   AND s.needs_score IN (0, -1)
   AND (s.item_count - s.scored_item_count >= GREATEST(%(min_new)s, ceil(%(ratio)s * s.scored_item_count))
        OR (%(online)s AND s.needs_score = 0
            AND EXISTS (SELECT 1 FROM story_scores sc WHERE sc.story_id = s.id AND sc.offline)))
RETURNING s.id

-- name: llm_partition_totals
-- Token and cost totals of a partition's LLM calls (all materialisations of it), per task;
-- reused answers (cached) are counted apart and cost nothing.
SELECT task, count(*) FILTER (WHERE NOT cached) AS calls,
       count(*) FILTER (WHERE NOT cached AND status <> 'ok') AS failed_calls,
       count(*) FILTER (WHERE cached) AS reused,
       coalesce(sum(tokens_in), 0) AS tokens_in, coalesce(sum(tokens_out), 0) AS tokens_out,
       coalesce(sum(cost_usd), 0) AS cost_usd
  FROM llm_calls
 WHERE partition_hour = %(hour)s AND task = ANY(%(tasks)s)
 GROUP BY task
 ORDER BY task

-- name: llm_record_call
-- One row per HTTP attempt, or per reused answer (cached = true, no tokens, no cost)
-- (newsdedup_dagster/shared/models/client.py: PostgresCallRecorder).
INSERT INTO llm_calls (task, model, story_id, event_id, partition_hour, attempt,
                       tokens_in, tokens_out, tokens_cached, cost_usd, latency_ms, status, error,
                       cached, cache_key)
VALUES (%(task)s, %(model)s, %(story_id)s, %(event_id)s, %(partition_hour)s, %(attempt)s,
        %(tokens_in)s, %(tokens_out)s, %(tokens_cached)s, %(cost_usd)s, %(latency_ms)s, %(status)s, %(error)s,
        %(cached)s, %(cache_key)s)

-- name: llm_result_get
-- A stored model answer (shared/models/cache.py); marks it used (for retention by last use).
UPDATE llm_results SET last_used_at = now()
 WHERE cache_key = %(key)s
RETURNING status, result, error, attempts, tokens_in, tokens_out, cost_usd

-- name: llm_result_put
-- Store a valid model answer under its key; the first answer for a key wins.
INSERT INTO llm_results (cache_key, task, model, prompt_version, target_langs, input_hash, status, result,
                         error, attempts, tokens_in, tokens_out, cost_usd)
VALUES (%(key)s, %(task)s, %(model)s, %(prompt_version)s, %(target_langs)s, %(input_hash)s, %(status)s, %(result)s,
        %(error)s, %(attempts)s, %(tokens_in)s, %(tokens_out)s, %(cost_usd)s)
ON CONFLICT (cache_key) DO NOTHING

-- name: llm_score_backlog
-- The story_scores check's counts for partition H: stories updated in H that need no score yet
-- have none (orphans), and stories updated in H still waiting for a score.
SELECT count(*) FILTER (WHERE s.needs_score = 0 AND sc.story_id IS NULL) AS orphans,
       count(*) FILTER (WHERE s.needs_score = 1) AS waiting
  FROM stories s
  LEFT JOIN story_scores sc ON sc.story_id = s.id
 WHERE s.updated_partition = %(hour)s;

-- name: llm_score_candidates
-- Stories to score in partition H: needs_score = 1 and last changed in H or earlier (earlier ones
-- are left over from a transient failure). Biggest first, so a capped run scores what matters.
-- Coverage (outlets and their languages) comes from llm_story_appearances.
WITH todo AS (
    SELECT s.id, s.item_count, s.score_attempts, s.first_published_at, s.latest_published_at,
           s.representative_item_id
      FROM stories s
     WHERE s.needs_score = 1 AND s.updated_partition <= %(hour)s
     ORDER BY s.item_count DESC, s.id
     LIMIT %(limit)s
)
SELECT t.id, t.item_count, t.score_attempts, t.first_published_at, t.latest_published_at,
       t.representative_item_id, a.article_count
  FROM todo t
  LEFT JOIN LATERAL (
        SELECT count(*) AS article_count FROM story_articles sa WHERE sa.story_id = t.id) a ON true
 ORDER BY t.item_count DESC, t.id

-- name: llm_score_done
-- A story scored: off the queue until llm_mark_rescore queues it again.
UPDATE stories
   SET needs_score = 0, score_attempts = 0, scored_item_count = %(story_item_count)s, score_error = NULL
 WHERE id = %(story_id)s

-- name: llm_score_fail
-- state -1: permanent (never retried until the story grows substantially: llm_mark_rescore);
-- state 1: transient, stays queued with its attempts counted.
UPDATE stories
   SET needs_score = %(state)s,
       score_attempts = score_attempts + %(attempts)s,
       scored_item_count = CASE WHEN %(state)s = -1 THEN %(story_item_count)s ELSE scored_item_count END,
       score_error = %(error)s
 WHERE id = %(story_id)s AND needs_score = 1

-- name: llm_score_save
-- A story's score, headline and summary; a rescore replaces them.
INSERT INTO story_scores (story_id, scale, impact, novelty, breadth, credibility, urgency, significance,
                          headline, summary, pivot_lang, model, offline, item_count, languages,
                          source_count, partition_hour, scored_at, model_significance)
VALUES (%(story_id)s, %(scale)s, %(impact)s, %(novelty)s, %(breadth)s, %(credibility)s, %(urgency)s,
        %(significance)s, %(headline)s, %(summary)s, %(pivot_lang)s, %(model)s, %(offline)s,
        %(article_count)s, %(languages)s, %(source_count)s, %(hour)s, clock_timestamp(), %(model_significance)s)
ON CONFLICT (story_id) DO UPDATE SET
    scale = excluded.scale, impact = excluded.impact, novelty = excluded.novelty,
    breadth = excluded.breadth, credibility = excluded.credibility, urgency = excluded.urgency,
    significance = excluded.significance, headline = excluded.headline, summary = excluded.summary,
    pivot_lang = excluded.pivot_lang, model = excluded.model, offline = excluded.offline,
    item_count = excluded.item_count, languages = excluded.languages,
    source_count = excluded.source_count, partition_hour = excluded.partition_hour,
    scored_at = excluded.scored_at, model_significance = excluded.model_significance

-- name: llm_story_appearances
-- Every (article, source) pair of the given stories, for the coverage counts (stages/llm/scoring.py:
-- independent_outlets): the source that first carried the item and every other source that listed
-- it, whether that source is an aggregator, its declared language, and the item's outlet.
SELECT sa.story_id, ap.source_id, coalesce(src.syndicator, false) AS syndicator,
       coalesce(src.language, i.lang) AS language, i.outlet, i.published_at
  FROM story_articles sa
  JOIN items i ON i.id = sa.item_id
  CROSS JOIN LATERAL (SELECT i.source_id
                      UNION
                      SELECT s.source_id FROM item_sources s WHERE s.item_id = i.id) ap
  LEFT JOIN sources src ON src.id = ap.source_id
 WHERE sa.story_id = ANY(%(story_ids)s)
 ORDER BY sa.story_id, ap.source_id, i.published_at, i.id

-- name: llm_story_articles
-- Prompt material: per story the representative first, then the newest articles (at most 40 each;
-- stages/llm/scoring.py picks 12 distinct titles from these). page_text: the lead paragraph of the item's
-- extracted page (article_texts, stored plain), only while the page is ok and not pruned; NULL else.
SELECT story_id, item_id, title, summary, lang, source_name, published_at, is_representative, page_text
  FROM (
    SELECT sa.story_id, i.id AS item_id, i.title,
           left(coalesce(nullif(i.summary, ''), i.content, ''), 1500) AS summary,
           i.lang, coalesce(src.name, i.source_id) AS source_name, i.published_at,
           (i.id = s.representative_item_id) AS is_representative,
           left(nullif(art.lead, ''), 1500) AS page_text,
           row_number() OVER (PARTITION BY sa.story_id
                              ORDER BY (i.id = s.representative_item_id) DESC NULLS LAST,
                                       i.published_at DESC, i.id) AS rn
      FROM story_articles sa
      JOIN stories s ON s.id = sa.story_id
      JOIN items i ON i.id = sa.item_id
      LEFT JOIN sources src ON src.id = i.source_id
      LEFT JOIN article_texts art ON art.item_id = i.id AND art.status = 'ok' AND art.text_pruned_at IS NULL
     WHERE sa.story_id = ANY(%(story_ids)s)
  ) x
 WHERE rn <= 40
 ORDER BY story_id, rn

-- name: llm_top_stories
-- Top stories by significance; with an hour, those changed or scored in that partition.
SELECT sc.story_id, sc.significance, sc.scale, sc.impact, sc.novelty, sc.breadth, sc.credibility,
       sc.urgency, sc.headline, sc.summary, sc.pivot_lang, sc.languages, sc.source_count,
       sc.item_count, sc.model, sc.offline, s.needs_score,
       (SELECT count(*) FROM story_translations t WHERE t.story_id = sc.story_id AND t.status = 0) AS translations_done
  FROM story_scores sc
  JOIN stories s ON s.id = sc.story_id
 WHERE %(hour)s::timestamptz IS NULL OR s.updated_partition = %(hour)s OR sc.partition_hour = %(hour)s
 ORDER BY sc.significance DESC, sc.item_count DESC, sc.story_id
 LIMIT %(limit)s

-- name: llm_translation_fail
-- Failed translations of a story's languages: -1 (permanent) or still 1 with their attempts counted; the
-- scored_at guard leaves rows a rescore reset since the call.
UPDATE story_translations t
   SET status = %(status)s, attempts = t.attempts + %(attempts)s, model = %(model)s,
       error = %(error)s, updated_at = now()
 WHERE t.story_id = %(story_id)s AND t.lang = ANY(%(langs)s) AND t.status = 1
   AND EXISTS (SELECT 1 FROM story_scores sc WHERE sc.story_id = t.story_id AND sc.scored_at = %(scored_at)s)

-- name: llm_translation_save
-- One batch (2 languages) done. The scored_at guard drops a result whose source text was
-- replaced by a rescore while the call was in flight (the rows are pending again for the new text).
UPDATE story_translations t
   SET headline = v.headline, summary = v.summary, status = 0, attempts = t.attempts + %(attempts)s,
       model = %(model)s, error = NULL, updated_at = now()
  FROM unnest(%(langs)s::text[], %(headlines)s::text[], %(summaries)s::text[]) AS v(lang, headline, summary)
 WHERE t.story_id = %(story_id)s AND t.lang = v.lang AND t.status = 1
   AND EXISTS (SELECT 1 FROM story_scores sc WHERE sc.story_id = t.story_id AND sc.scored_at = %(scored_at)s)

-- name: llm_translation_status
-- Translation states of the stories scored in partition H, per language.
SELECT t.lang, t.status, count(*) AS n
  FROM story_translations t
  JOIN story_scores sc ON sc.story_id = t.story_id
 WHERE sc.partition_hour = %(hour)s
 GROUP BY t.lang, t.status
 ORDER BY t.lang, t.status

-- name: llm_translations_missing
-- Translations missing for the stories scored in partition H: one per configured language other
-- than the story's pivot language that has no story_translations row.
SELECT count(*)
  FROM story_scores sc, unnest(%(langs)s::text[]) AS l(lang)
 WHERE sc.partition_hour = %(hour)s
   AND l.lang <> sc.pivot_lang
   AND NOT EXISTS (SELECT 1 FROM story_translations t WHERE t.story_id = sc.story_id AND t.lang = l.lang);

-- name: llm_translations_pending
-- Translation work for partition H: rows still at status 1 for stories scored in H or earlier.
SELECT t.story_id, t.lang, t.attempts, sc.headline, sc.summary, sc.pivot_lang, sc.scored_at
  FROM story_translations t
  JOIN story_scores sc ON sc.story_id = t.story_id
 WHERE t.status = 1 AND sc.partition_hour <= %(hour)s
 ORDER BY sc.significance DESC, t.story_id, t.lang
 LIMIT %(limit)s

-- name: llm_translations_reset
-- A new headline/summary invalidates every translation of the story: one row per configured
-- language, status 1 (needs translation) or 2 (skipped, offline fallback).
INSERT INTO story_translations (story_id, lang, status, attempts, model, error, headline, summary, updated_at)
SELECT %(story_id)s, lang, %(status)s, 0, NULL, %(error)s, NULL, NULL, now()
  FROM unnest(%(langs)s::text[]) AS lang
ON CONFLICT (story_id, lang) DO UPDATE SET
    status = excluded.status, attempts = 0, model = NULL, error = excluded.error,
    headline = NULL, summary = NULL, updated_at = now()

-- name: llm_translations_skip
-- Offline: pending translations of stories scored in H or earlier are reported as skipped (2).
UPDATE story_translations t
   SET status = 2, error = %(reason)s, updated_at = now()
  FROM story_scores sc
 WHERE sc.story_id = t.story_id AND t.status = 1 AND sc.partition_hour <= %(hour)s
