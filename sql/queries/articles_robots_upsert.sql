-- Store robots.txt cache entries (one row per origin; the newest fetch wins).
INSERT INTO article_robots (origin, status, body, detail, fetched_at, expires_at, not_before)
SELECT * FROM unnest(%(origins)s::text[], %(statuses)s::text[], %(bodies)s::text[], %(details)s::text[],
                     %(fetched_ats)s::timestamptz[], %(expires_ats)s::timestamptz[], %(not_befores)s::timestamptz[])
ON CONFLICT (origin) DO UPDATE
   SET status = EXCLUDED.status, body = EXCLUDED.body, detail = EXCLUDED.detail,
       fetched_at = EXCLUDED.fetched_at, expires_at = EXCLUDED.expires_at, not_before = EXCLUDED.not_before
