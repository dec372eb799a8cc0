-- The outlet an item is attributed to: the registrable domain (Public Suffix List) of the host a
-- reader's browser opens for its link, after unwrapping an aggregator's link to the publisher
-- (shared/http/canonical_url.py: outlet_of). NULL for link-less items and for rows stored before this
-- column existed (a rerun of their hour fills it). Coverage counts (llm scoring, the source count
-- shown on the site and in the digest) count distinct outlets, not entries or feeds.
ALTER TABLE items ADD COLUMN IF NOT EXISTS outlet text;
CREATE INDEX IF NOT EXISTS items_outlet_idx ON items (outlet);
