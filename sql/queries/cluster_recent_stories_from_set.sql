UPDATE cluster_recent_state SET stories_from = %s WHERE model = %s
