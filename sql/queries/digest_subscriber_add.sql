-- Add or reactivate a subscriber (and update the language).
INSERT INTO subscribers (email, lang, active) VALUES (%(email)s, %(lang)s, true)
ON CONFLICT (email) DO UPDATE SET lang = EXCLUDED.lang, active = true
RETURNING id, (xmax = 0) AS inserted
