-- Readers' choices (stages/digest/editions.py): the languages they read besides `lang` (the digest's
-- language), in order of preference; the briefing categories and outlet countries they want
-- (empty = all); the local time and IANA time zone their edition is delivered at. The defaults
-- are what every reader had before: one language, everything, as soon as the day is complete.
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS also_reads text[] NOT NULL DEFAULT '{}';
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS categories text[] NOT NULL DEFAULT '{}';
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS countries text[] NOT NULL DEFAULT '{}';
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS delivery_time time NOT NULL DEFAULT '00:00';
ALTER TABLE subscribers ADD COLUMN IF NOT EXISTS time_zone text NOT NULL DEFAULT 'UTC';

-- One rendered digest per (day, language, edition): '' is the edition of every story in one
-- language; a reader's choices name another (stages/digest/editions.py: Edition.key).
ALTER TABLE digests ADD COLUMN IF NOT EXISTS edition text NOT NULL DEFAULT '';
ALTER TABLE digests DROP CONSTRAINT IF EXISTS digests_digest_date_lang_key;
CREATE UNIQUE INDEX IF NOT EXISTS digests_day_lang_edition_idx ON digests (digest_date, lang, edition);

-- When a delivery is due (the reader's local time on their local day after the UTC day; NULL: at
-- once) and that local day: a reader gets at most one edition per local day.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS due_at timestamptz;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS local_day date;
CREATE UNIQUE INDEX IF NOT EXISTS deliveries_subscriber_local_day_idx ON deliveries (subscriber_id, local_day);
CREATE INDEX IF NOT EXISTS deliveries_due_at_idx ON deliveries (due_at) WHERE status = 'pending';
