-- Stored source rows (configuration and conditional-GET validators) by id.
SELECT id, name, feed_url, language, country, syndicator, enabled, replay_file, etag, last_modified
  FROM sources
 WHERE id = ANY(%(ids)s::text[])
 ORDER BY id
