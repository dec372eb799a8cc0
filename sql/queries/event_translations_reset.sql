-- A new narrative: every target language starts over (1 = to translate, 2 = skipped offline).
INSERT INTO event_translations (event_id, lang, status, attempts)
SELECT %(event_id)s, l, %(status)s, 0 FROM unnest(%(langs)s::text[]) AS l
ON CONFLICT (event_id, lang) DO UPDATE
   SET status = EXCLUDED.status, attempts = 0, error = NULL, title = NULL, narrative = NULL, model = NULL,
       updated_at = now()
