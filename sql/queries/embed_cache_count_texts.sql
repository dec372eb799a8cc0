SELECT count(*) FROM embedding_cache WHERE model = %s AND text_hash = ANY(%s)
