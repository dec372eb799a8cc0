-- ... and the stories those partitions created (now without members).
DELETE FROM stories s
 WHERE s.model = %(model)s AND s.created_partition > %(h)s
   AND NOT EXISTS (SELECT 1 FROM story_items si WHERE si.story_id = s.id)
RETURNING s.id
