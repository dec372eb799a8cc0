UPDATE item_embeddings SET embedding = raw_embedding WHERE model = %s
