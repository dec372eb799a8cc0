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
