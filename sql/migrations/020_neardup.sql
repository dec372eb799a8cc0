-- Near-duplicate groups. item_duplicates.canonical_item_id is the group's ANCHOR: the
-- item that was embedded and clustered (the first canonical). The group's displayed
-- REPRESENTATIVE follows the representative rules (original outlet over syndicator,
-- direct link over opaque redirect, newest) and switches when a better member arrives;
-- it is recomputed from the members, so reruns give the same answer.
CREATE TABLE IF NOT EXISTS duplicate_groups (
    anchor_item_id          text PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
    representative_item_id  text NOT NULL REFERENCES items(id) ON DELETE CASCADE,
    member_count            integer NOT NULL,
    updated_partition       timestamptz NOT NULL
);
