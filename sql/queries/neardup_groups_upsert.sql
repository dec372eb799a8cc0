INSERT INTO duplicate_groups (anchor_item_id, representative_item_id, member_count, updated_partition)
SELECT * FROM unnest(%(anchors)s::text[], %(representatives)s::text[], %(counts)s::int[], %(hours)s::timestamptz[])
ON CONFLICT (anchor_item_id) DO UPDATE
   SET representative_item_id = EXCLUDED.representative_item_id,
       member_count = EXCLUDED.member_count, updated_partition = EXCLUDED.updated_partition
