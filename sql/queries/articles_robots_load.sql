-- The cached robots.txt entries of the origins %(origins)s.
SELECT origin, status, body, detail, fetched_at, expires_at, not_before
  FROM article_robots
 WHERE origin = ANY (%(origins)s::text[])
