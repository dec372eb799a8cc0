-- A new headline/summary invalidates every translation of the story: one row per configured
-- language, status 1 (needs translation) or 2 (skipped, offline fallback).
INSERT INTO story_translations (story_id, lang, status, attempts, model, error, headline, summary, updated_at)
SELECT %(story_id)s, lang, %(status)s, 0, NULL, %(error)s, NULL, NULL, now()
  FROM unnest(%(langs)s::text[]) AS lang
ON CONFLICT (story_id, lang) DO UPDATE SET
    status = excluded.status, attempts = 0, model = NULL, error = excluded.error,
    headline = NULL, summary = NULL, updated_at = now()
