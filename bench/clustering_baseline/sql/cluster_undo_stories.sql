-- 2) stories created by H that no longer have any member. A story created by H that later
--    partitions attached items to keeps its row (same deterministic id if H recreates it), so
--    re-materialising H does not destroy what later hours built on it.
DELETE FROM stories s
 WHERE s.model = %(model)s AND s.created_partition = %(h)s
   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.story_id = s.id)
RETURNING s.id
