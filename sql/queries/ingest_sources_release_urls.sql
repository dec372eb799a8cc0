-- A source id that left the configuration keeps its row, but a new id may now
-- use its feed_url (a renamed source). feed_url is UNIQUE, so the retired row's
-- URL gets a '#retired-for=<new id>' suffix. Runs before the upsert.
UPDATE sources AS s
   SET feed_url = s.feed_url || '#retired-for=' || t.id,
       updated_at = now()
  FROM unnest(%(ids)s::text[], %(feed_urls)s::text[]) AS t(id, feed_url)
 WHERE s.feed_url = t.feed_url
   AND s.id <> t.id
   AND NOT (s.id = ANY(%(ids)s::text[]))
RETURNING s.id
