-- Recomputing history (later_partitions = reset): forget the duplicates decided by hours after H,
-- so H sees only what had arrived by H (as the first run did); the later hours must then be re-run.
-- Returns the anchors whose groups lost members.
DELETE FROM item_duplicates WHERE partition_hour > %(hour)s
RETURNING canonical_item_id
