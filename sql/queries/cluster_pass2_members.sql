SELECT story_id, item_id FROM story_items WHERE partition_hour = %s AND pass = 2
