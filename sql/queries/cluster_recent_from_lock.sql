SELECT recent_from FROM cluster_recent_state WHERE model = %s FOR UPDATE
