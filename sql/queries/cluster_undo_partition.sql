-- Re-materialising partition H: remove H's own effects before redoing them (same transaction).
-- 1) memberships written by H (pass-1 attachments to older stories, pass-2 founders and members);
--    returns the stories they belonged to (whose aggregates must be recomputed) and the items freed.
DELETE FROM story_items si
 USING stories s
 WHERE si.partition_hour = %(h)s AND s.id = si.story_id AND s.model = %(model)s
RETURNING si.story_id, si.item_id
