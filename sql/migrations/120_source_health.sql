-- Each source's health (sources/health.py): the indexes its queries read by source and time, and
-- the alerts open now, so that a failing or quiet source raises one alert and one when it recovers.
CREATE INDEX IF NOT EXISTS feed_fetches_source_time_idx ON feed_fetches (source_id, fetched_at);
CREATE INDEX IF NOT EXISTS item_sources_source_seen_idx ON item_sources (source_id, first_seen_at);

CREATE TABLE IF NOT EXISTS source_alerts (
    source_id   text PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    state       text NOT NULL CHECK (state IN ('failing', 'quiet')),
    since       timestamptz,            -- the first failure of the streak, or the last item
    detail      text,                   -- the last error, or how long it has been quiet
    raised_at   timestamptz NOT NULL DEFAULT now()
);
