-- Joins of a story to an event that the anchor check refused (stages/events/grouping.py rule 3,
-- shared/text/anchors.py), per partition hour, so `newsdedup explain` shows why a story is not in
-- the event its centroid was close to:
--   kinds           the anchors that conflicted ("magnitudes", "scores", "places", ...)
--   story_anchors   the story's anchors of those kinds (its members' union)
--   event_anchors   the event's (its stories' members' union)
-- A rerun of the hour deletes and rewrites its rows.
CREATE TABLE IF NOT EXISTS event_vetoes (
    partition_hour timestamptz NOT NULL,
    story_id       text NOT NULL,
    event_id       text NOT NULL,
    similarity     real NOT NULL,
    kinds          jsonb NOT NULL,
    story_anchors  jsonb NOT NULL,
    event_anchors  jsonb NOT NULL,
    PRIMARY KEY (partition_hour, story_id, event_id)
);
CREATE INDEX IF NOT EXISTS event_vetoes_story_idx ON event_vetoes (story_id);
CREATE INDEX IF NOT EXISTS event_vetoes_event_idx ON event_vetoes (event_id);
