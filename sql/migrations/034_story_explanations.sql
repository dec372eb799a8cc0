-- Why each article is in its story (`newsdedup explain STORY_ID`), written by the clustering
-- transaction that admitted it, so a rerun of the hour rewrites exactly the same rows.
--
-- story_items already holds pass, similarity, gap and age; these add what admitted the member:
-- the neighbour (pass 2: the in-story item of its strongest edge) and the threshold then in force.
ALTER TABLE story_items ADD COLUMN IF NOT EXISTS via_item_id text;
ALTER TABLE story_items ADD COLUMN IF NOT EXISTS threshold real;

-- Pass-2 stories: every KNN edge (>= item_threshold) the founding hour saw that touches a member.
-- kept = both ends in the story (the edges that held it together); not kept = the chaining guard
-- cut it (the far end is in cut group cut_group of story_cut_groups, or nowhere when it was not
-- a candidate). directions = 2 when each end was among the other's k nearest neighbours.
CREATE TABLE IF NOT EXISTS story_edges (
    story_id        text NOT NULL REFERENCES stories(id) ON DELETE CASCADE,
    partition_hour  timestamptz NOT NULL,
    item_a          text NOT NULL,          -- a member of the story
    item_b          text NOT NULL,          -- a member (kept) or the far end of a cut edge
    similarity      real NOT NULL,
    directions      smallint NOT NULL CHECK (directions IN (1, 2)),
    kept            boolean NOT NULL,
    cut_group       integer,
    PRIMARY KEY (story_id, partition_hour, item_a, item_b)
);
CREATE INDEX IF NOT EXISTS story_edges_partition_idx ON story_edges (partition_hour);

-- The other modularity communities of the story's UnionFind component: what the guard cut away.
CREATE TABLE IF NOT EXISTS story_cut_groups (
    story_id        text NOT NULL REFERENCES stories(id) ON DELETE CASCADE,
    partition_hour  timestamptz NOT NULL,
    cut_group       integer NOT NULL,
    item_ids        text[] NOT NULL,
    became_story_id text,                   -- the story that community founded this hour, if any
    PRIMARY KEY (story_id, partition_hour, cut_group)
);
CREATE INDEX IF NOT EXISTS story_cut_groups_partition_idx ON story_cut_groups (partition_hour);
