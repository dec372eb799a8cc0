-- Sync configured sources into `sources`: insert new ids, update changed ones,
-- never delete. A changed feed_url drops the stored validators (they belonged
-- to the old URL). Returns one row per inserted or changed source.
INSERT INTO sources AS s (id, name, feed_url, language, country, syndicator, enabled, replay_file)
SELECT * FROM unnest(%(ids)s::text[], %(names)s::text[], %(feed_urls)s::text[], %(languages)s::text[],
                     %(countries)s::text[], %(syndicators)s::boolean[], %(enabled)s::boolean[],
                     %(replay_files)s::text[])
ON CONFLICT (id) DO UPDATE
   SET name = EXCLUDED.name,
       feed_url = EXCLUDED.feed_url,
       language = EXCLUDED.language,
       country = EXCLUDED.country,
       syndicator = EXCLUDED.syndicator,
       enabled = EXCLUDED.enabled,
       replay_file = EXCLUDED.replay_file,
       etag = CASE WHEN s.feed_url IS DISTINCT FROM EXCLUDED.feed_url THEN NULL ELSE s.etag END,
       last_modified = CASE WHEN s.feed_url IS DISTINCT FROM EXCLUDED.feed_url THEN NULL ELSE s.last_modified END,
       disabled_at = CASE WHEN EXCLUDED.enabled THEN NULL
                          WHEN s.enabled THEN now()
                          ELSE s.disabled_at END,
       updated_at = now()
 WHERE (s.name, s.feed_url, s.language, s.country, s.syndicator, s.enabled, s.replay_file)
       IS DISTINCT FROM
       (EXCLUDED.name, EXCLUDED.feed_url, EXCLUDED.language, EXCLUDED.country, EXCLUDED.syndicator,
        EXCLUDED.enabled, EXCLUDED.replay_file)
RETURNING s.id, (xmax = 0) AS inserted
