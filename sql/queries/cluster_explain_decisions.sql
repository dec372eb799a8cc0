SELECT partition_hour, edges, cut_groups, vetoes FROM story_decisions
WHERE story_id = %s ORDER BY partition_hour
