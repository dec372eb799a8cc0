-- Recomputing history (later_partitions = reset): remove the memberships written by partitions
-- after H, so H and the hours after it are rebuilt exactly as the first time, in time order.
-- Returns the stories they belonged to (whose aggregates must be recomputed) and the items freed.
DELETE FROM story_items si
 USING stories s
 WHERE si.partition_hour > %(h)s AND s.id = si.story_id AND s.model = %(model)s
RETURNING si.story_id, si.item_id
