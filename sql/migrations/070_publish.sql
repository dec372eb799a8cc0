-- Story feeds and the static site: what each language's feed has published, so an entry keeps
-- its id and `published` stamp for good and its `updated` stamp moves only when what the entry
-- shows changed (new articles, a new score, a translation).
-- No foreign key to stories: a re-clustered hour deletes and rebuilds its stories with the same
-- ids, and the published entry must survive that.
CREATE TABLE IF NOT EXISTS publish_entries (
    story_id           text NOT NULL,
    lang               text NOT NULL,
    entry_id           text NOT NULL,          -- tag URI, minted once
    published_at       timestamptz NOT NULL,   -- first time the entry appeared in a feed
    updated_at         timestamptz NOT NULL,   -- last time its content changed
    fingerprint        text NOT NULL,          -- hash of what the entry shows
    page_hash          text,                   -- hash of what the story page shows (skip re-rendering)
    article_count      integer NOT NULL DEFAULT 0,
    first_partition    timestamptz NOT NULL,
    updated_partition  timestamptz NOT NULL,
    PRIMARY KEY (story_id, lang)
);
CREATE UNIQUE INDEX IF NOT EXISTS publish_entries_entry_id_idx ON publish_entries (entry_id);

-- The newest hour written into each output directory: an older hour re-run later (a backfill)
-- must not replace a subscriber's current feed with an older one.
CREATE TABLE IF NOT EXISTS publish_state (
    output_dir      text PRIMARY KEY,
    last_partition  timestamptz NOT NULL,
    written_at      timestamptz NOT NULL DEFAULT now()
);
