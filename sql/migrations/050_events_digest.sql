-- Events and digests: columns the events/digest stages need beyond 001_schema.sql.

-- The hour whose run closed the event: a rerun of that hour reopens it first (idempotency).
ALTER TABLE events ADD COLUMN IF NOT EXISTS closed_partition timestamptz;
-- The quiet period in force when the event was grouped (the asset check compares against it).
ALTER TABLE events ADD COLUMN IF NOT EXISTS quiet_hours real;
-- The partition hour of the last narrative generation: "at most once per interval" is measured
-- in partition time, so a backfill regenerates at the same points a live run would.
ALTER TABLE events ADD COLUMN IF NOT EXISTS narrative_partition timestamptz;
ALTER TABLE events ADD COLUMN IF NOT EXISTS narrative_error text;
CREATE INDEX IF NOT EXISTS events_status_idx ON events (status, last_published_at);
CREATE INDEX IF NOT EXISTS events_updated_partition_idx ON events (updated_partition);

-- Position of the story in its event's timeline (1 = earliest by first_published_at, story id).
ALTER TABLE event_stories ADD COLUMN IF NOT EXISTS timeline_position integer;
CREATE INDEX IF NOT EXISTS event_stories_partition_idx ON event_stories (partition_hour);

ALTER TABLE digests ADD COLUMN IF NOT EXISTS text_path text;
ALTER TABLE digests ADD COLUMN IF NOT EXISTS event_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE digests ADD COLUMN IF NOT EXISTS updated_at timestamptz NOT NULL DEFAULT now();

-- Who the message went to (the subscriber may change address later), the Message-ID we used,
-- and whether the last failure was permanent (SMTP 5xx: not retried).
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS email text;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS lang text;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS message_id text;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS permanent boolean NOT NULL DEFAULT false;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS outbox_path text;

-- The LLM's short event title (the digest prefers it to the top story's headline).
ALTER TABLE events ADD COLUMN IF NOT EXISTS narrative_title text;
