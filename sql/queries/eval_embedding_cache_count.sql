SELECT count(*) FROM embedding_cache WHERE model = %s
