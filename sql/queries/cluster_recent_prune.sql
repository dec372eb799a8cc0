DELETE FROM cluster_recent_items WHERE model = %s AND partition_hour < %s
