-- Why each article is in its story (`newsdedup explain STORY_ID`), written by the clustering
-- transaction that admitted it, so a rerun of the hour rewrites exactly the same rows.
--
-- story_items already holds pass, similarity, gap and age; these add what admitted the member:
-- the neighbour (pass 2: the in-story item of its strongest edge) and the threshold then in force.
ALTER TABLE story_items ADD COLUMN IF NOT EXISTS via_item_id text;
ALTER TABLE story_items ADD COLUMN IF NOT EXISTS threshold real;

-- Pass-2 stories, one row per story and founding hour (one row, not one per edge: a row costs a
-- foreign-key check, and an hour founds hundreds of stories with thousands of edges):
--   edges       [[item_a, item_b, cosine, directions, kept, cut_group], ...] every KNN edge
--               (>= item_threshold) the hour saw that touches a member; item_a is the member;
--               kept = both ends in the story (what held it together), else the chaining guard
--               cut it and item_b is in cut group cut_group; directions 2 = mutual neighbours
--   cut_groups  [[cut_group, [item ids], founded story id or null], ...] the other modularity
--               communities of the story's UnionFind component: what the guard cut away
CREATE TABLE IF NOT EXISTS story_decisions (
    story_id        text NOT NULL REFERENCES stories(id) ON DELETE CASCADE,
    partition_hour  timestamptz NOT NULL,
    edges           jsonb NOT NULL,
    cut_groups      jsonb NOT NULL,
    PRIMARY KEY (story_id, partition_hour)
);
CREATE INDEX IF NOT EXISTS story_decisions_partition_idx ON story_decisions (partition_hour);
