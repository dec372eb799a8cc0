-- Groups left with no duplicate (after a rerun removed them) are not groups.
DELETE FROM duplicate_groups g
 WHERE g.anchor_item_id = ANY(%(anchors)s)
   AND NOT EXISTS (SELECT 1 FROM item_duplicates d WHERE d.canonical_item_id = g.anchor_item_id)
