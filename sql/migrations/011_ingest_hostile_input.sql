-- Hostile input: what parsing did with each archived fetch, and item URLs of any length.

-- Per fetch: parse outcome ('ok' | 'partial' | 'failed'), entries in the body,
-- entries skipped by reason and input repaired by kind (JSON objects of counts).
ALTER TABLE feed_fetches ADD COLUMN IF NOT EXISTS parse_status text;
ALTER TABLE feed_fetches ADD COLUMN IF NOT EXISTS entries_total integer;
ALTER TABLE feed_fetches ADD COLUMN IF NOT EXISTS skipped jsonb;
ALTER TABLE feed_fetches ADD COLUMN IF NOT EXISTS repairs jsonb;

-- A btree entry holds at most ~2.7 KB, so a UNIQUE constraint on the URL itself
-- fails the insert of a long one. Uniqueness is kept on its hash (the parser also
-- caps stored URLs, see ParseConfig.max_url_chars).
ALTER TABLE items DROP CONSTRAINT IF EXISTS items_canonical_url_key;
CREATE UNIQUE INDEX IF NOT EXISTS items_canonical_url_md5_key ON items (md5(canonical_url));
